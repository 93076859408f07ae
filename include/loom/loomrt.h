/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt.h: libloomrt, the runtime for ahead-of-time kernel bundles. It loads bundles that loomc or
 * `python -m loom.aot` made and launches their kernels on the host CPU, an NVIDIA GPU or an AMD GPU with
 * no LLVM and no compiler in the process: libc, pthreads, libm, and at run time (dlopen) SLEEF for host vector math
 * and the GPU drivers (libcuda, libamdhip64). It links nothing else (check with ldd).
 *
 * Model. A LoomrtRuntime owns the host worker threads, the loaded code and the GPU state. A bundle holds
 * entries: C names of kernels, each compiled for 32- and 64-bit indexing and several targets; a launch
 * picks the index width from its sizes (as libloom does) and the code for the stream's device: on the
 * host the best x86-64 level this CPU runs (CPUID: baseline, AVX2, AVX-512), on an NVIDIA GPU a cubin for
 * its sm (or PTX it JIT-compiles), on an AMD GPU the code object of its gfx. Code is checked (CRC-32C)
 * and loaded on the first launch of each kernel and stays loaded until the bundle is closed.
 *
 * A kernel runs over an iteration space of ndim dims (shape[0..ndim)): the first nkeep dims are kept
 * and the others reduced (nkeep == ndim: elementwise). Every buffer has one stride (in ELEMENTS, may be
 * negative) per iteration dim: strides[b * ndim + i]. Each buffer was compiled for a layout class per dim
 * (unit stride, zero stride, or any stride): a launch whose strides contradict them is refused (the
 * typed functions loomc --emit-c writes pass the fixed ones for you). Outputs must not overlap inputs.
 *
 * Errors. Every call that can fail returns a LoomStatus (loom/loom.h; only the types of that header are
 * used, libloom is not needed) and keeps a message for the calling thread: loomrt_last_error(rt). A bad
 * bundle (truncated, corrupted, another format version, no code for this CPU or GPU) is an error with a
 * message saying which; nothing aborts.
 *
 * Threads. A runtime and its bundles may be used from several threads at once; a stream must not be used
 * from two threads at the same time.
 */
#ifndef LOOM_LOOMRT_H
#define LOOM_LOOMRT_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LOOMRT_API __attribute__((visibility("default")))
#else
#define LOOMRT_API
#endif

typedef struct LoomrtRuntime LoomrtRuntime;
typedef struct LoomrtBundle LoomrtBundle;
typedef struct LoomrtStream LoomrtStream;

/* A bundle compiled into a program (loomc --emit-c writes one). */
typedef struct LoomrtEmbedded {
  const unsigned char *data;
  size_t size;
  const char *name;
} LoomrtEmbedded;

typedef struct LoomrtOptions {
  int32_t num_threads; /* host worker threads; 0: LOOM_NUM_THREADS, else all online CPUs */
} LoomrtOptions;

LOOMRT_API LoomStatus loomrt_create(const LoomrtOptions *options, LoomrtRuntime **out);
/* Closes every bundle still open and releases the GPUs' state. */
LOOMRT_API void loomrt_destroy(LoomrtRuntime *rt);
/* The message of the calling thread's last failed call on rt ("" if none). */
LOOMRT_API const char *loomrt_last_error(LoomrtRuntime *rt);
LOOMRT_API const char *loomrt_version(void);
/* The x86-64 level host code runs at on this CPU: 1 (baseline), 3 (AVX2), 4 (AVX-512); 0 elsewhere.
 * LOOM_AOT_HOST_LEVEL caps it. */
LOOMRT_API int32_t loomrt_host_level(void);

/* ---- bundles ------------------------------------------------------------------------------------- */
LOOMRT_API LoomStatus loomrt_bundle_open(LoomrtRuntime *rt, const char *path, LoomrtBundle **out);
/* The bytes are used in place: they must outlive the bundle. */
LOOMRT_API LoomStatus loomrt_bundle_open_memory(LoomrtRuntime *rt, const void *data, size_t size, LoomrtBundle **out);
/* The runtime's bundle for an embedded one: opened on the first call, then the same (it closes with rt). */
LOOMRT_API LoomStatus loomrt_bundle_embedded(LoomrtRuntime *rt, const LoomrtEmbedded *e, LoomrtBundle **out);
LOOMRT_API void loomrt_bundle_close(LoomrtBundle *b); /* not for embedded bundles; NULL ok */
LOOMRT_API int32_t loomrt_bundle_entry_count(const LoomrtBundle *b);
LOOMRT_API const char *loomrt_bundle_entry_name(const LoomrtBundle *b, int32_t i); /* sorted by name */

typedef struct LoomrtEntryInfo {
  int32_t ndim, nkeep, nbuf;
  LoomDType dtype[64];  /* per buffer (the first 64) */
  int32_t is_output[64];
  int32_t layout[64][LOOM_MAX_RANK]; /* 0 any stride, 1 zero, 2 unit, 3 stride -1, 4 / 5 / 6 strides 2 / 3 / 4 */
  int32_t index_widths; /* bit 0: 32-bit code, bit 1: 64-bit code */
  int32_t nparam;       /* scalar parameters (Python scalars and constants of the expression) */
  LoomDType param_dtype[64]; /* per parameter (the first 64): bool, an integer, float32 or float64 */
} LoomrtEntryInfo;
LOOMRT_API LoomStatus loomrt_entry_info(LoomrtBundle *b, const char *entry, LoomrtEntryInfo *out);

/* ---- streams --------------------------------------------------------------------------------------- */
/* The host stream: launches run on the runtime's threads and have finished when the call returns. */
LOOMRT_API LoomrtStream *loomrt_host_stream(LoomrtRuntime *rt);
LOOMRT_API LoomrtRuntime *loomrt_stream_runtime(const LoomrtStream *s);
/* GPU streams and memory, for kind LOOM_DEVICE_CUDA (NVIDIA, libcuda) or LOOM_DEVICE_HIP (AMD,
 * libamdhip64; $LOOM_HIP_LIBRARY names another). The drivers are loaded on first use.
 * Number of devices of a kind (0 without its driver or a device: then the calls below fail with
 * LOOM_ERR_UNSUPPORTED, and loomrt_last_error says why); LOOM_DEVICE_HOST: 1. */
LOOMRT_API int32_t loomrt_device_count(LoomrtRuntime *rt, LoomDeviceKind kind);
/* A stream of a GPU; launches on it are asynchronous. */
LOOMRT_API LoomStatus loomrt_stream_create(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, LoomrtStream **out);
LOOMRT_API void loomrt_stream_destroy(LoomrtStream *s); /* pending work completes; the host stream is ignored */
LOOMRT_API LoomStatus loomrt_stream_synchronize(LoomrtStream *s);
LOOMRT_API void *loomrt_stream_handle(LoomrtStream *s); /* the CUstream / hipStream_t, or NULL */
LOOMRT_API LoomDeviceKind loomrt_stream_kind(const LoomrtStream *s);
/* Device memory from the runtime's caching pool (one per device), and synchronous copies (dir 0: host to
 * device, 1: device to host) after the device's pending work. */
LOOMRT_API LoomStatus loomrt_alloc(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, size_t bytes, void **out);
LOOMRT_API LoomStatus loomrt_free(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, void *ptr);
LOOMRT_API LoomStatus loomrt_copy(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, void *dst, const void *src,
                                  size_t bytes, int32_t dir);
/* The same for CUDA (kind LOOM_DEVICE_CUDA). */
LOOMRT_API int32_t loomrt_cuda_device_count(LoomrtRuntime *rt);
LOOMRT_API LoomStatus loomrt_cuda_stream_create(LoomrtRuntime *rt, int32_t device, LoomrtStream **out);
LOOMRT_API LoomStatus loomrt_cuda_alloc(LoomrtRuntime *rt, int32_t device, size_t bytes, void **out);
LOOMRT_API LoomStatus loomrt_cuda_free(LoomrtRuntime *rt, int32_t device, void *ptr);
LOOMRT_API LoomStatus loomrt_cuda_copy(LoomrtRuntime *rt, int32_t device, void *dst, const void *src, size_t bytes,
                                       int32_t kind);

/* ---- launching ------------------------------------------------------------------------------------ */
/* Runs entry `entry` of b on stream s over shape[0..ndim) with nbuf buffers (host or device pointers,
 * the stream's) and nbuf * ndim strides in elements. An empty space runs nothing (a reduction over an
 * empty R still writes its identities). */
LOOMRT_API LoomStatus loomrt_launch(LoomrtBundle *b, const char *entry, LoomrtStream *s, int32_t ndim,
                                    const int64_t *shape, int32_t nbuf, void *const *bufs, const int64_t *strides);
/* loomrt_launch for a kernel with scalar parameters (LoomrtEntryInfo.nparam > 0: the scalars of the
 * expression it was compiled from, e.g. the 2.0 of `2.0 * x + y`, are parameters of the kernel, not
 * constants in its code): params[p] points at parameter p's value, of LoomrtEntryInfo.param_dtype[p]
 * (bool: one byte, 0 or 1). loomrt_launch refuses such a kernel with a message naming this call. */
LOOMRT_API LoomStatus loomrt_launch_params(LoomrtBundle *b, const char *entry, LoomrtStream *s, int32_t ndim,
                                           const int64_t *shape, int32_t nbuf, void *const *bufs, const int64_t *strides,
                                           int32_t nparam, const void *const *params);
/* The same for an embedded bundle of the stream's runtime (what loomc --emit-c's functions call). */
LOOMRT_API LoomStatus loomrt_launch_embedded(LoomrtStream *s, const LoomrtEmbedded *e, const char *entry, int32_t ndim,
                                             const int64_t *shape, int32_t nbuf, void *const *bufs,
                                             const int64_t *strides);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_LOOMRT_H */
