/* SPDX-License-Identifier: Apache-2.0 */
/* host_launch.h: how one compiled host kernel is run over its iteration space (runtime/host_launch.c).
 * Shared by libloom's schedule runner (eval.c) and libloomrt's bundle launcher, so a bundled kernel
 * is cut into the same tasks and reduction parts as a JIT-compiled one and gives the same bits.
 * Only a thread pool (runtime/pool.c) and ctx_alloc are needed: no LLVM. */
#ifndef LOOM_RUNTIME_HOST_LAUNCH_H
#define LOOM_RUNTIME_HOST_LAUNCH_H

#include "codegen/codegen.h"
#include "runtime/runtime.h"

/* How a host kernel's points are cut into tasks: the cost model of host launches (host_launch.c, where
 * every rule and constant is), from the kernel's split entries, the sizes and the thread count. */
typedef struct RtHostKernelInfo {
  bool elementwise;    /* nkeep == ndim: no is every point */
  bool can_split;      /* partial/finish exist */
  bool can_split_cols; /* colpart/colfinish exist */
  bool cols_are_rows;  /* ... and split inner R per O point (col_phases has CG_COL_ROWS) */
} RtHostKernelInfo;
enum { RT_HOST_SERIAL, RT_HOST_RANGES, RT_HOST_SPLIT_R, RT_HOST_SPLIT_COLS };
typedef struct RtHostPlan {
  int strategy;    /* RT_HOST_* */
  int64_t ntasks;  /* RANGES: ranges of the points (elementwise) or of O; SPLIT_*: O ranges of the finish */
  int64_t nparts;  /* SPLIT_*: parts of R (from the sizes only) */
  int64_t ochunks; /* SPLIT_COLS: O ranges per part */
} RtHostPlan;
RtHostPlan rt_host_plan(const RtHostKernelInfo *k, int64_t no, int64_t nr, int64_t threads);
/* The plan rt_host_launch follows for compiled kernel k on these operands (rt_host_plan with k's split
 * entries; a kernel that walks by strides asks its colpart whether the column split suits them). */
RtHostPlan rt_host_kernel_plan(const CgCompiled *k, bool elementwise, const int64_t *shape, void *const *bufs,
                               const int64_t *strides, int64_t no, int64_t nr, int64_t threads);

/* Runs k over shape: elementwise (no = all points, nr unused) or a reduction (no O points x nr R
 * points), on pool's threads; bufs and strides as codegen.h's calling convention. name: messages. */
LoomStatus rt_host_launch(LoomContext *ctx, RtPool *pool, const CgCompiled *k, bool elementwise, const char *name,
                          const int64_t *shape, void *const *bufs, const int64_t *strides, int64_t no, int64_t nr,
                          Diag *d);

#endif /* LOOM_RUNTIME_HOST_LAUNCH_H */
