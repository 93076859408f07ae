/* SPDX-License-Identifier: Apache-2.0 */
/* schedule_print.c: ir_print_schedule, the golden-file text of a schedule.
 *
 * Form (no pointers, stable): one "temp I DTYPE NELEM" line per temp, then per kernel its
 * ir_print_kernel text followed by one line
 *   run [4,5] in0+0[5,1] temp0+0[1,0] out0+0[5,1]
 * giving the iteration shape and, per buffer in order, its binding: kind and index, element offset,
 * strides per iteration dim.
 */
#include "passes/passes.h"

void ir_print_schedule(const Schedule *s, StrBuf *out) {
  if (!s) return;
  for (int32_t t = 0; t < s->ntemp; t++)
    sb_printf(out, "temp %d %s %lld\n", t, dtype_short_name((LoomDType)s->temps[t].dtype),
              (long long)s->temps[t].nelem);
  for (int32_t i = 0; i < s->nkernel; i++) {
    const SchedKernel *sk = &s->kernels[i];
    const KernelIr *k = sk->ir;
    ir_print_kernel(k, out);
    sb_printf(out, "  run [");
    for (int j = 0; j < k->ndim; j++) sb_printf(out, "%s%lld", j ? "," : "", (long long)sk->shape[j]);
    sb_printf(out, "]");
    for (int32_t b = 0; b < k->nbuf; b++) {
      const SchedBinding *sb = &sk->bind[b];
      const char *kind = sb->kind == SB_INPUT ? "in" : sb->kind == SB_TEMP ? "temp" : sb->kind == SB_INDEX ? "index" : "out";
      sb_printf(out, " %s%d%+lld[", kind, sb->index, (long long)sb->offset);
      for (int j = 0; j < k->ndim; j++) sb_printf(out, "%s%lld", j ? "," : "", (long long)sb->strides[j]);
      sb_printf(out, "]");
    }
    sb_printf(out, "\n");
  }
}
