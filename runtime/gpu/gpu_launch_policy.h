/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_launch_policy.h: the launch policy of GPU kernels, compiler-free: which entry of a kernel runs with
 * which grid and block, split reductions and their partials (runtime/gpu/gpu_launch_policy.c). Shared by
 * libloom (runtime/gpu/gpu_launch.c: entries compiled on first need) and libloomrt
 * (runtime/loomrt/loomrt_gpu.c: every entry loaded from a bundle), so that both launch a kernel alike and
 * its results have the same bits. The caller says what the kernel is and how to load, size and launch an
 * entry through the callbacks of an RtGpuLauncher. */
#ifndef LOOM_RUNTIME_GPU_LAUNCH_POLICY_H
#define LOOM_RUNTIME_GPU_LAUNCH_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "codegen/codegen.h"
#include "runtime/gpu/gpu_pool.h"

/* An entry is named by its index: bit i of an entry set (CG_ENTRY_*) is entry i (gpu_rt.h's E_*). */
/* What RtGpuLauncher.limit reports; each is known once the entry is loaded. */
enum {
  RT_LIM_ELEM_BLOCK, /* an elementwise entry's block size (a multiple of the wave) */
  RT_LIM_ELEM_GRID,  /* its grid cap (resident blocks of that size) */
  RT_LIM_CACHED_BLOCK, RT_LIM_CACHEDV_BLOCK, /* the most threads the cached-row entries launch with */
  RT_LIM_PARTV_GRID,                         /* the vector part entry's grid cap */
  RT_LIM_FINISHB_BLOCK,                      /* the most threads the block finish entry launches with */
  RT_LIM_MAIN_BLOCK,                         /* the most threads a reduction's main entry launches with */
  RT_LIM_COL_PART_RESIDENT                   /* a COL part entry's resident blocks of 256 threads on the device
                                              * (SMs x occupancy; 0: unknown) */
};

typedef struct RtGpuLauncher {
  /* the kernel's signature */
  int ndim, nkeep, nbuf;
  const KBuffer *bufs;          /* layouts and dtypes */
  bool scan;                    /* one KP_SCAN phase (codegen/lower_scan.c) */
  uint32_t split_reduce, split_map; /* the phase split of a multi-phase kernel (cg_gpu_phase_split), 0: none */
  /* its code's launch facts (CgGpuKernel / a bundle's RB_GPU_*) */
  uint32_t strategy, block, vec_lanes, vec_align, acc_size, cache_k, cache_lanes, part_lanes;
  uint32_t entries; /* entry set of the code */
  int wave;         /* 32 or 64 */
  bool vecw_when_vec_loaded; /* whole vectors take VECW even when VEC is loaded (false: VEC then, so that
                              * no second entry is compiled for them) */
  RtGpuPool *pool;  /* the device's: split-reduction partials */
  void *user;
  uint32_t (*loaded)(void *user);                                   /* the entries loaded now */
  LoomStatus (*need)(void *user, uint32_t mask, Diag *d);           /* load these entries (may compile) */
  int (*limit)(void *user, int what, int entry);                    /* RT_LIM_* of a loaded entry */
  LoomStatus (*launch)(void *user, int entry, uint32_t grid, uint32_t block, uint64_t *words, Diag *d);
  LoomStatus (*settle)(void *user, Diag *d); /* the stream is done with the partials (before they are freed) */
} RtGpuLauncher;

/* Launches the kernel on its parameter words (codegen.h: shape, bases, strides, CG_GPU_EXTRA words, the
 * scalar parameters; the extra words are filled here) for no kept points and nr reduced points each. */
LoomStatus rt_gpu_launch_policy(const RtGpuLauncher *L, uint64_t *words, int64_t no, int64_t nr, Diag *d);

#endif /* LOOM_RUNTIME_GPU_LAUNCH_POLICY_H */
