/* SPDX-License-Identifier: Apache-2.0 */
/* host_col_strides.h: the column split of host reductions whose walk the strides pick at run time
 * (codegen/lower_host.c run_by_strides: x[:, ::2].mean(0)). Shared by the lowering, which sets the flag
 * and emits the query, and the launcher (runtime/host_launch.c), which asks before planning.
 * (An extension of codegen.h's CgCompiled.col_phases contract, kept here until it moves beside CG_COL_ROWS.)
 *
 * CG_COL_BY_STRIDES in col_phases (never with CG_COL_ROWS; such kernels have at most 30 phases, and every
 * kernel whose col_phases lacks CG_COL_ROWS has at most 30, so bit 30 is never a phase's): colpart also
 * answers a query. Called with a->nparts == 0 it reads only the strides and a->parts, and stores to
 * *(int64_t *)a->parts 1 where the strides pick the outer walk (the column split suits them: the kept
 * axis strides less than the reduced one in the deciding buffer, as run() decides), else 0. The launcher
 * plans the column split only on a 1; colpart itself takes the outer walk for any strides (correct for
 * every view, slow where the reduced axis strides less). */
#ifndef LOOM_CODEGEN_HOST_COL_STRIDES_H
#define LOOM_CODEGEN_HOST_COL_STRIDES_H

#include "codegen/codegen.h"

#define CG_COL_BY_STRIDES (1u << 30)

/* The phase bits of col_phases (without the CG_COL_ROWS and CG_COL_BY_STRIDES flags). */
static inline uint32_t cg_col_phase_bits(uint32_t col_phases) {
  if (col_phases & CG_COL_ROWS) return col_phases & ~CG_COL_ROWS;
  return col_phases & ~CG_COL_BY_STRIDES;
}

#endif /* LOOM_CODEGEN_HOST_COL_STRIDES_H */
