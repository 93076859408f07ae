/* hip_rt.h: private interface of the AMD (HIP) device's files (runtime/hip/).
 *
 *   hip_device.c   the AMD device: the shared GPU layer's driver table filled from the HIP layer's calls,
 *                  and device.h's table (the layer's hooks, AMDGPU assembly dumps, raw modules)
 *   hip_raw.c      raw modules (RawModule / RawKernel): AMDGPU code objects, LLVM IR for amdgcn
 *   hip.c          the HIP layer (hip.h): libamdhip64 loaded at run time
 *   hip_blas.c     RtLinalg of AMD: matrix products through hipBLASLt (loaded at run time)
 *   hip_fft.c      FFTs through hipFFT (loaded at run time)
 * Entry groups, the kernel table, the disk cache, launch shapes, pools, streams and events are the
 * shared GPU layer's (runtime/gpu/).
 */
#ifndef LOOM_RUNTIME_HIP_RT_H
#define LOOM_RUNTIME_HIP_RT_H

#include "runtime/device.h"
#include "runtime/gpu/gpu_driver.h"
#include "runtime/gpu/gpu_libs.h"

/* ---- hip_device.c ------------------------------------------------------------------------------------- */
/* The AMD device's driver table (tests run the shared layer's checks against it over a mock runtime). */
const RtGpuDriver *rt_hip_driver(void);

/* ---- hip_blas.c, hip_fft.c: the vendor libraries (linalg.h's RtLinalg over runtime/gpu/gpu_libs.h) ---- */
extern const RtLinalg rt_hip_linalg;
extern const GpuBlasVendor rt_hip_lt; /* hipBLASLt's table; its state keeps hipFFT's in a slot */
/* Load the library as a product would and resolve what loom uses, with no device: path gets the file found;
 * LOOM_ERR_UNSUPPORTED with what to install when it is missing or lacks a function. */
LoomStatus rt_hipblaslt_probe(char *path, size_t size, Diag *d);
LoomStatus rt_hipfft_probe(char *path, size_t size, Diag *d);
extern const char *const rt_hipblaslt_symbols[]; /* NULL-terminated */
/* RtLinalg.fft of AMD (hipFFT) and the release of its state. */
LoomStatus rt_hip_fft(LoomContext *ctx, int index, const RtFft *f, Diag *d);
void rt_hip_fft_close(LoomContext *ctx, void *state);

/* ---- hip_raw.c: raw modules (device.h's raw_* hooks) --------------------------------------------------- */
#define RT_AMD_RAW_FORMATS (1u << LOOM_RAW_LLVM_IR | 1u << LOOM_RAW_LLVM_BITCODE | 1u << LOOM_RAW_HSACO)
LoomRawFormat rt_amd_raw_sniff(const void *code, size_t size);
LoomStatus rt_amd_raw_create(LoomContext *ctx, const void *code, size_t size, LoomRawFormat format,
                             const char *const *options, int32_t noptions, RtRawModule **out, CgRawEntry **entries,
                             int32_t *nentries, Diag *d);
void rt_amd_raw_destroy(LoomContext *ctx, RtRawModule *m);
const char *rt_amd_raw_text(const RtRawModule *m);
LoomStatus rt_amd_raw_load(LoomContext *ctx, RtRawModule *m, int device, const char *name, void **fn,
                           CgRawParam **params, int32_t *nparams, Diag *d);
LoomStatus rt_amd_raw_launch(LoomContext *ctx, RtRawModule *m, void *fn, int device, const uint32_t grid[3],
                             const uint32_t block[3], uint32_t shared_mem, void *stream, void **params, const char *name,
                             Diag *d);

#endif /* LOOM_RUNTIME_HIP_RT_H */
