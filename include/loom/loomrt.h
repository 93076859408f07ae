/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt.h: libloomrt, the runtime for ahead-of-time kernel bundles. It loads bundles that loomc or
 * `python -m loom.aot` made and launches their kernels on the host CPU or an NVIDIA GPU with no LLVM and
 * no compiler in the process: libc, pthreads, libm, and at run time (dlopen) SLEEF for host vector math
 * and the CUDA driver for GPUs. It links nothing else (check with ldd).
 *
 * Model. A LoomrtRuntime owns the host worker threads, the loaded code and the GPU state. A bundle holds
 * entries: C names of kernels, each compiled for 32- and 64-bit indexing and several targets; a launch
 * picks the index width from its sizes (as libloom does) and the code for the stream's device: on the
 * host the best x86-64 level this CPU runs (CPUID: baseline, AVX2, AVX-512), on a GPU a cubin for its
 * sm (or PTX it JIT-compiles). Code is checked (CRC-32C) and loaded on the first launch of each kernel
 * and stays loaded until the bundle is closed.
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
  int32_t layout[64][LOOM_MAX_RANK]; /* 0 any stride, 1 zero stride, 2 unit stride */
  int32_t index_widths; /* bit 0: 32-bit code, bit 1: 64-bit code */
} LoomrtEntryInfo;
LOOMRT_API LoomStatus loomrt_entry_info(LoomrtBundle *b, const char *entry, LoomrtEntryInfo *out);

/* ---- streams --------------------------------------------------------------------------------------- */
/* The host stream: launches run on the runtime's threads and have finished when the call returns. */
LOOMRT_API LoomrtStream *loomrt_host_stream(LoomrtRuntime *rt);
LOOMRT_API LoomrtRuntime *loomrt_stream_runtime(const LoomrtStream *s);
/* Number of CUDA devices (0 without a driver or GPU: then CUDA calls fail with LOOM_ERR_UNSUPPORTED). */
LOOMRT_API int32_t loomrt_cuda_device_count(LoomrtRuntime *rt);
/* A CUDA stream of a device; launches on it are asynchronous. */
LOOMRT_API LoomStatus loomrt_cuda_stream_create(LoomrtRuntime *rt, int32_t device, LoomrtStream **out);
LOOMRT_API void loomrt_stream_destroy(LoomrtStream *s); /* pending work completes; the host stream is ignored */
LOOMRT_API LoomStatus loomrt_stream_synchronize(LoomrtStream *s);
LOOMRT_API void *loomrt_stream_handle(LoomrtStream *s); /* the CUstream, or NULL */
/* Device memory from the runtime's caching pool, and synchronous copies (kind 0: host to device,
 * 1: device to host). */
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
/* The same for an embedded bundle of the stream's runtime (what loomc --emit-c's functions call). */
LOOMRT_API LoomStatus loomrt_launch_embedded(LoomrtStream *s, const LoomrtEmbedded *e, const char *entry, int32_t ndim,
                                             const int64_t *shape, int32_t nbuf, void *const *bufs,
                                             const int64_t *strides);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_LOOMRT_H */
