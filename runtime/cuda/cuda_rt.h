/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_rt.h: private interface of the CUDA device's files (runtime/cuda/).
 *
 *   cuda_device.c   the CUDA device: the shared GPU layer's driver table filled from the driver layer's
 *                   hooks, and device.h's table (the layer's hooks, PTX dumps, raw modules)
 *   cuda_raw.c      raw modules (RawModule / RawKernel): PTX, LLVM IR, CUDA C++ (clang-19 or NVRTC), cubins
 *   cuda_nvrtc.c    CUDA C++ -> PTX through NVRTC (libnvrtc, dlopen'ed)
 *   cuda.c, cuda_code.c   the driver layer (cuda.h; its hooks in cuda_driver.h)
 * Entry groups, the kernel table, the disk cache, tiers, launch shapes, pools, streams and events are
 * the shared GPU layer's (runtime/gpu/).
 */
#ifndef LOOM_RUNTIME_CUDA_RT_H
#define LOOM_RUNTIME_CUDA_RT_H

#include "runtime/cuda/cuda.h"
#include "runtime/device.h"

/* ---- cuda_raw.c: raw modules (device.h's raw_* hooks) --------------------------------------------------- */
#define RT_CU_RAW_FORMATS                                                                                          \
  (1u << LOOM_RAW_PTX | 1u << LOOM_RAW_LLVM_IR | 1u << LOOM_RAW_LLVM_BITCODE | 1u << LOOM_RAW_CUBIN | 1u << LOOM_RAW_CUDA)
LoomRawFormat rt_cu_raw_sniff(const void *code, size_t size);
LoomStatus rt_cu_raw_create(LoomContext *ctx, const void *code, size_t size, LoomRawFormat format,
                            const char *const *options, int32_t noptions, RtRawModule **out, CgRawEntry **entries,
                            int32_t *nentries, Diag *d);
void rt_cu_raw_destroy(LoomContext *ctx, RtRawModule *m);
const char *rt_cu_raw_text(const RtRawModule *m);
LoomStatus rt_cu_raw_load(LoomContext *ctx, RtRawModule *m, int device, const char *name, void **fn,
                          CgRawParam **params, int32_t *nparams, Diag *d);
LoomStatus rt_cu_raw_launch(LoomContext *ctx, RtRawModule *m, void *fn, int dev, const uint32_t grid[3],
                            const uint32_t block[3], uint32_t shared_mem, void *stream, void **params, const char *name,
                            Diag *d);
LoomStatus rt_cu_raw_global(LoomContext *ctx, RtRawModule *m, int device, const char *name, void **ptr, size_t *bytes,
                            Diag *d);

/* ---- cuda_nvrtc.c: CUDA C++ -> PTX through NVRTC ------------------------------------------------------- */
/* Whether libnvrtc could be loaded (once per process). */
bool rt_cu_nvrtc_available(void);
/* NVRTC's version (nvrtcVersion); false (0.0) without libnvrtc. */
bool rt_cu_nvrtc_version(int *major, int *minor);
/* An option "-loom-name-expression=EXPR": a name expression (a template instance to compile and name). */
#define RT_CU_NAME_EXPRESSION_OPTION "-loom-name-expression="
bool rt_cu_is_name_expression_option(const char *o);
/* Puts log (a compiler's messages) in front of *ptx as "// loom-compile-log: " lines (cuda_nvrtc.c's header). */
LoomStatus rt_cu_prepend_log(LoomContext *ctx, const char *log, char **ptx, Diag *d);
/* src (n bytes) compiled for compute_<sm> with options (those is_arch names and name expressions left out);
 * *ptx ctx_alloc'ed: NVRTC's PTX behind a header of comment lines (cuda_nvrtc.c: the compile log, the lowered
 * names of the name expressions). */
LoomStatus rt_cu_nvrtc_compile(LoomContext *ctx, const char *src, size_t n, int sm, const char *const *options,
                               int32_t noptions, bool (*is_arch)(const char *), char **ptx, Diag *d);

#endif /* LOOM_RUNTIME_CUDA_RT_H */
