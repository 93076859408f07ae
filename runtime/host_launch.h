/* SPDX-License-Identifier: Apache-2.0 */
/* host_launch.h: how one compiled host kernel is run over its iteration space (runtime/host_launch.c).
 * Shared by libloom's schedule runner (eval.c) and libloomrt's bundle launcher, so a bundled kernel
 * is cut into the same tasks and reduction parts as a JIT-compiled one and gives the same bits.
 * Only a thread pool (runtime/pool.c) and ctx_alloc are needed: no LLVM. */
#ifndef LOOM_RUNTIME_HOST_LAUNCH_H
#define LOOM_RUNTIME_HOST_LAUNCH_H

#include "codegen/codegen.h"
#include "runtime/runtime.h"

/* Runs k over shape: elementwise (no = all points, nr unused) or a reduction (no O points x nr R
 * points), on pool's threads; bufs and strides as codegen.h's calling convention. name: messages. */
LoomStatus rt_host_launch(LoomContext *ctx, RtPool *pool, const CgCompiled *k, bool elementwise, const char *name,
                          const int64_t *shape, void *const *bufs, const int64_t *strides, int64_t no, int64_t nr,
                          Diag *d);

#endif /* LOOM_RUNTIME_HOST_LAUNCH_H */
