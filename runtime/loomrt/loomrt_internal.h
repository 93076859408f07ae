/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt_internal.h: what runtime/loomrt/loomrt.c (bundles, host launches) and loomrt_cuda.c (the GPU
 * adapter) share inside libloomrt. */
#ifndef LOOM_LOOMRT_INTERNAL_H
#define LOOM_LOOMRT_INTERNAL_H

#include <pthread.h>

#include "loom/loomrt.h"
#include "runtime/bundle.h"
#include "runtime/runtime.h"

typedef struct RtrtCuda RtrtCuda; /* loomrt_cuda.c */
typedef struct RtrtGpuCode RtrtGpuCode;

struct LoomrtStream {
  LoomrtRuntime *rt;
  int32_t device; /* -1: the host */
  struct RtCuStream *cs;
};

struct LoomrtRuntime {
  LoomContext ctx; /* allocator and per-thread last error (ir/context.c); ctx.rt stays NULL */
  RtPool *pool;
  int cpu_level;
  pthread_mutex_t lock; /* resolver, embedded list, GPU state creation */
  RtSymbolResolver *resolver;
  LoomrtBundle *embedded; /* bundles opened from LoomrtEmbedded, closed with the runtime */
  LoomrtStream host;
  RtrtCuda *cuda;
};

struct LoomrtBundle {
  LoomrtRuntime *rt;
  LoomrtBundle *next_embedded;
  const void *embedded_key;
  uint8_t *owned; /* file bytes (NULL when the caller owns them) */
  RtBundle *b;
  char what[256];
  pthread_mutex_t lock;  /* lazy loading */
  RtHostImage **images;  /* per code record */
  uint8_t *checked;      /* per code record: CRC verified */
  RtrtGpuCode **gpu;     /* per kernel record x device (loomrt_cuda.c) */
  int32_t gpu_ndev;
};

/* Checks a code record's CRC once (bundle lock held). */
LoomStatus rtrt_check_code(LoomrtBundle *b, int32_t code, Diag *d);

/* ---- the CUDA adapter (loomrt_cuda.c) ----------------------------------------------------------------
 * TODO(device.h): this adapter drives runtime/cuda/cuda.h (the driver layer and pool libloom uses)
 * directly and carries a copy of the launch policy of runtime/gpu/gpu_launch.c; it moves onto the CUDA
 * device of runtime/device.h once that launcher can run without the compiler (see loomrt_cuda.c). */
int32_t rtrt_cuda_device_count(LoomrtRuntime *rt);
LoomStatus rtrt_cuda_stream_create(LoomrtRuntime *rt, int32_t device, struct RtCuStream **out, Diag *d);
void rtrt_cuda_stream_destroy(LoomrtRuntime *rt, struct RtCuStream *s);
LoomStatus rtrt_cuda_stream_synchronize(LoomrtRuntime *rt, struct RtCuStream *s, Diag *d);
void *rtrt_cuda_stream_handle(struct RtCuStream *s);
LoomStatus rtrt_cuda_alloc(LoomrtRuntime *rt, int32_t device, size_t bytes, void **out, Diag *d);
LoomStatus rtrt_cuda_free(LoomrtRuntime *rt, int32_t device, void *ptr, Diag *d);
LoomStatus rtrt_cuda_copy(LoomrtRuntime *rt, int32_t device, void *dst, const void *src, size_t bytes, int32_t kind, Diag *d);
/* Launches kernel record `kernel` of b on the stream's device (loading its code on first use). */
LoomStatus rtrt_cuda_launch(LoomrtBundle *b, int32_t kernel, LoomrtStream *s, const int64_t *shape, void *const *bufs,
                            const int64_t *strides, int64_t no, int64_t nr, Diag *d);
void rtrt_cuda_bundle_free(LoomrtBundle *b);
void rtrt_cuda_destroy(LoomrtRuntime *rt);

#endif /* LOOM_LOOMRT_INTERNAL_H */
