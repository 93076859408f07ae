/* codegen.h: kernel IR -> machine code. The shared lowering (codegen/lower.c) turns a KernelIr into
 * an LLVM module; each target file (host.c; later nvptx.c, amdgpu.c) fills one CgTarget.
 * Only codegen/ includes llvm-c/; this header does not.
 *
 * Host calling convention of a compiled kernel (all pointers valid for the call):
 *   shape   : ndim sizes of the iteration space
 *   bufs    : nbuf base pointers (binding offset already applied)
 *   strides : nbuf * ndim strides in elements, buffer-major (strides[b * ndim + dim])
 *   run(lo, hi)
 *     nkeep == ndim (elementwise): computes linear points [lo, hi) of the whole space, row-major.
 *     nkeep <  ndim (reduction):   computes linear points [lo, hi) of O, every phase for each.
 *   partial(o, rlo, rhi, acc): only for kernels whose phases are exactly [REDUCE] or
 *     [REDUCE, FINAL]: folds phase 0 over linear points [rlo, rhi) of R at O point o and writes the
 *     accumulator to acc (acc_size bytes: the value in acc dtype, padded to 8 bytes, then for
 *     argmin/argmax an int64 index).
 *   finish(o, accs, nparts): combines nparts accumulators (acc_size bytes apart) in order, then runs
 *     the FINAL phase (if any) for o. Splitting R must give the same bits for the same split.
 */
#ifndef LOOM_CODEGEN_H
#define LOOM_CODEGEN_H

#include "ir/ir.h"

typedef void (*CgRunFn)(const int64_t *shape, void *const *bufs, const int64_t *strides, int64_t lo,
                        int64_t hi);
typedef void (*CgPartialFn)(const int64_t *shape, void *const *bufs, const int64_t *strides,
                            int64_t o, int64_t rlo, int64_t rhi, void *acc);
typedef void (*CgFinishFn)(const int64_t *shape, void *const *bufs, const int64_t *strides,
                           int64_t o, const void *accs, int64_t nparts);

typedef struct CgCompiled {
  CgRunFn run;
  CgPartialFn partial; /* NULL when the kernel cannot be split along R */
  CgFinishFn finish;
  int32_t acc_size;
  char *llvm_ir;       /* optimized LLVM IR text when asked for (ctx_alloc'ed), else NULL */
  void *impl;          /* target-owned */
} CgCompiled;

typedef struct CgTarget CgTarget;
struct CgTarget {
  const char *name; /* "host" */
  /* Compiles k. Thread-safe with respect to other compiles on the same target. */
  LoomStatus (*compile)(CgTarget *t, const KernelIr *k, bool want_llvm_ir, CgCompiled *out, Diag *d);
  void (*release)(CgTarget *t, CgCompiled *c); /* frees what compile made */
  void (*destroy)(CgTarget *t);
  LoomContext *ctx;
  void *state;
};

/* The host CPU target: LLVM ORC JIT for the host's own CPU and features, vectorized loops,
 * SLEEF vector math. */
LoomStatus cg_host_target_create(LoomContext *ctx, CgTarget **out, Diag *d);
/* "LLVM 19.1.7 host x86_64 <cpu> <features hash>": goes into cache keys. */
const char *cg_host_describe(CgTarget *t);

#endif /* LOOM_CODEGEN_H */
