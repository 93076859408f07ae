/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_sort.h: the device radix sort (runtime/gpu/gpu_sort.c): loom_sort and loom_take_rows (loom.h) on
 * CUDA and HIP arrays, through the library kernels of codegen/gpu_radix.c compiled once per context,
 * device kind, key dtype and value width (raw modules, kept in RtState.sort). */
#ifndef LOOM_RUNTIME_GPU_SORT_H
#define LOOM_RUNTIME_GPU_SORT_H

#include "runtime/runtime.h"

/* Frees the context's compiled sort kernels (with the context, before its devices close). */
void rt_sort_destroy(LoomContext *ctx, RtState *rt);

#endif /* LOOM_RUNTIME_GPU_SORT_H */
