/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt_internal.h: what runtime/loomrt/loomrt.c (bundles, host launches), loomrt_gpu.c (GPU launches)
 * and loomrt_drivers.c (the CUDA and HIP driver tables) share inside libloomrt. */
#ifndef LOOM_LOOMRT_INTERNAL_H
#define LOOM_LOOMRT_INTERNAL_H

#include <pthread.h>

#include "loom/loomrt.h"
#include "runtime/bundle.h"
#include "runtime/runtime.h"

typedef struct RtrtGpu RtrtGpu; /* loomrt_gpu.c: one GPU driver's state */
typedef struct RtrtGpuCode RtrtGpuCode;
typedef struct RtGpuDriver RtGpuDriver;

enum { RTRT_CUDA = 0, RTRT_HIP = 1, RTRT_NVENDOR = 2 }; /* slots of the per-vendor arrays */

struct LoomrtStream {
  LoomrtRuntime *rt;
  LoomDeviceKind kind; /* LOOM_DEVICE_HOST: the runtime's host stream */
  int32_t device;
  void *h; /* the driver's stream */
};

struct LoomrtRuntime {
  LoomContext ctx; /* allocator and per-thread last error (ir/context.c); ctx.rt stays NULL */
  RtPool *pool;
  int cpu_level;
  pthread_mutex_t lock; /* resolver, embedded list, GPU state creation */
  RtSymbolResolver *resolver;
  LoomrtBundle *embedded; /* bundles opened from LoomrtEmbedded, closed with the runtime */
  LoomrtStream host;
  RtrtGpu *gpu[RTRT_NVENDOR];
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
  RtrtGpuCode **gpu[RTRT_NVENDOR]; /* per vendor: kernel record x device (loomrt_gpu.c) */
  int32_t gpu_ndev[RTRT_NVENDOR];
};

/* Checks a code record's CRC once (bundle lock held). */
LoomStatus rtrt_check_code(LoomrtBundle *b, int32_t code, Diag *d);

/* ---- GPUs (loomrt_gpu.c over the driver tables of loomrt_drivers.c) ------------------------------------
 * One vendor-neutral path for CUDA and HIP: the drivers, devices and caching pools (runtime/gpu/gpu_pool.c),
 * streams, copies, code loading per (kernel record, device) and the launch policy over loaded entries.
 * kind: LOOM_DEVICE_CUDA or LOOM_DEVICE_HIP (anything else is LOOM_ERR_INVALID_ARGUMENT). */
const RtGpuDriver *rtrt_driver(LoomDeviceKind kind); /* loomrt_drivers.c; NULL for another kind */
int32_t rtrt_gpu_device_count(LoomrtRuntime *rt, LoomDeviceKind kind);
LoomStatus rtrt_gpu_stream_create(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, void **out, Diag *d);
void rtrt_gpu_stream_destroy(LoomrtStream *s);
LoomStatus rtrt_gpu_stream_synchronize(LoomrtStream *s, Diag *d);
LoomStatus rtrt_gpu_alloc(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, size_t bytes, void **out, Diag *d);
LoomStatus rtrt_gpu_free(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, void *ptr, Diag *d);
LoomStatus rtrt_gpu_copy(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, void *dst, const void *src, size_t bytes,
                         int32_t dir, Diag *d);
/* Launches kernel record `kernel` of b on the stream's device (loading its code on first use). */
LoomStatus rtrt_gpu_launch(LoomrtBundle *b, int32_t kernel, LoomrtStream *s, const int64_t *shape, void *const *bufs,
                           const int64_t *strides, int64_t no, int64_t nr, Diag *d);
void rtrt_gpu_bundle_free(LoomrtBundle *b);
void rtrt_gpu_destroy(LoomrtRuntime *rt);

#endif /* LOOM_LOOMRT_INTERNAL_H */
