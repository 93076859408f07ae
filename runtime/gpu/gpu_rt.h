/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_rt.h: private interface of the shared GPU device layer's files (runtime/gpu/): its state in the
 * context, the loaded kernels, the background tier-up, and the functions the files share. The driver
 * table and the layer's RtDevice hooks are gpu_driver.h.
 *
 *   gpu_device.c   lazy driver loading, devices, memory, copies, streams (the current stream per context,
 *                  device and thread), events, kernels pinned for plans
 *   gpu_kernels.c  the kernel table's values: entry groups compiled (or loaded from the disk cache) on
 *                  demand, tiers
 *   gpu_launch.c   launch shapes and the schedule runner
 *   gpu_pool.c     the caching pool (gpu_pool.h)
 */
#ifndef LOOM_RUNTIME_GPU_RT_H
#define LOOM_RUNTIME_GPU_RT_H

#include <pthread.h>
#include <sys/types.h>

#include "runtime/disk_cache.h"
#include "runtime/gpu/gpu_driver.h"

#define GPU_META_MAGIC 0x374b474du /* "MGK7": + wave, binary kind, code bytes (older entries are rewritten) */

/* What a payload of the disk cache starts with: how to launch the kernel, and which entries the binary
 * holds (names[i] for bit i of `entries`; the other names are ""). The binary (binary_bytes: a cubin, a
 * code object) follows; a tier-0 payload (a quick JIT, see "tiers" below) then holds the target's code
 * (code_bytes, NUL included: PTX text), so that the process that loads it can link the final binary in
 * the background. */
typedef struct GpuMeta {
  uint32_t magic, entries_all, entries;
  int32_t strategy, block, vec_lanes, vec_align, acc_size, nwords, cache_k, part_lanes, cache_lanes;
  int32_t tier;
  int32_t wave;   /* the target's wave: block sizes are multiples of it */
  int32_t binary; /* CgBinaryKind of the code */
  uint32_t binary_bytes, code_bytes;
  char names[CG_NENTRY][64];
} GpuMeta;

/* Entry indexes (bit positions of CG_ENTRY_*). */
enum { E_MAIN, E_VEC, E_PART, E_FINISH, E_CACHED, E_PARTV, E_CACHEDV, E_FINISHB, E_VECW, E_FLATV };

/* A kernel on one device. Its entries are compiled in groups, each a module of its own: a launch that
 * needs an entry not loaded yet compiles (or loads from the disk cache) the missing ones under the device
 * lock (RtState.device_lock); `loaded` (CG_ENTRY bits) is written with release order after the handles,
 * so a launcher that sees a bit set may use that handle without the lock. */
typedef struct GpuFn {
  char *key;                         /* the disk cache key of the kernel (a group's key adds its entries) */
  GpuMeta meta;                      /* launch facts; names of the loaded entries */
  uint32_t loaded;
  void *modules[2 * CG_NENTRY];      /* the driver's modules: one per group compiled, and its tier-up */
  int nmodules;
  void *fn[CG_NENTRY];               /* the driver's functions by entry index (atomic: a tier-up replaces one) */
  /* elementwise launch: best block size << 32 | resident blocks on the device (one atomic word: a tier-up
   * replaces both, after the handle; see tier_up); cfg_entry: the entry they come from */
  uint64_t elem_cfg;
  int cfg_entry;
  int elem_max_block[CG_NENTRY]; /* elementwise entries: the most threads each can launch with (atomic; a
                                  * tier-up only lowers it); the launch clamps its block to it */
  int cached_max_block;          /* the most threads the cached ROW entry can launch with (registers) */
  int cachedv_max_block;         /* the same for the vector cached entry */
  int partv_grid_max;            /* vector part entry: resident blocks of meta.block threads (SMs x occupancy) */
  int finishb_max_block;         /* the most threads the block finish entry can launch with (registers) */
  int main_max_block;            /* the same for a reduction's main entry */
  int col_part_resident;         /* COL part entry: resident blocks of 256 threads (SMs x occupancy) */
} GpuFn;

typedef struct GpuRt GpuRt;

/* One device (ordinal), set up on first use. */
typedef struct GpuDev {
  bool ready;
  int index;
  LoomContext *ctx;
  GpuRt *g;
  RtGpuDeviceInfo info;
  RtGpuPool *pool;
  CgTarget *target; /* the driver's target for the device's chip */
  RtCache *kernels; /* the kernel table: GpuFn values keyed by the target's description, never evicted */
} GpuDev;

/* A device's RtStream and RtEvent: the driver's handle and its device. */
typedef struct GpuStream {
  int32_t device;
  void *h;
  bool borrowed; /* h was made elsewhere (loom_stream_wrap): never destroyed here */
} GpuStream;
typedef struct GpuEvent {
  int32_t device;
  void *h;
} GpuEvent;

/* One thread's current stream of one device (loom_stream_use); a list under the device lock. */
typedef struct CurStream {
  struct CurStream *next;
  pthread_t tid;
  int device;
  GpuStream *s;
} CurStream;

/* ---- tiers ----
 * A new elementwise kernel is linked at JIT level 0 first (PTX: 2-5 ms less JIT on the H200's host; its
 * code can be up to 2x slower where it calls functions), loaded and used; one background thread per
 * runtime then links the same code at the final level and swaps the entries' function handles (the old
 * module stays loaded: launches in flight may use it). A tier-up waits until no kernel has been compiled
 * for TIER_IDLE_MS: the driver's JIT calls do not overlap well (run side by side, a burst of new kernels
 * compiled more slowly than without tiers on the H200). The disk cache gets the tier-0 binary with its
 * code at once and the final binary when the tier-up is done, so a process that exits early leaves an
 * entry the next one loads and tiers up in turn. Closing the device finishes the queue. Only a driver
 * with link and levels (RtGpuJit.tiers) has tiers. */
#define TIER_IDLE_MS 50.0
typedef struct TierJob {
  struct TierJob *next;
  GpuFn *f;
  int device;
  GpuMeta meta; /* tier 1; the entries of the group */
  char *key;    /* the group's disk-cache key */
  char *code;   /* the target's code, code_size bytes + a NUL */
  size_t code_size;
  int level;    /* the JIT level of the final code (the one in key) */
  char name[64];
} TierJob;

/* The layer's state of a context for one driver (RtState.devices[drv->kind].state). */
struct GpuRt {
  const RtGpuDriver *drv;
  void *handle; /* the driver instance (load) */
  LoomContext *ctx;
  CurStream *cur;
  int ndev;
  GpuDev *devs;
  DiskCache *disk;          /* set under device_lock; the tier-up thread reads it atomically */
  bool disk_tried;
  unsigned disk_generation; /* RtState.cache_generation of the settings disk was opened with */
  struct RetiredDisk *disk_retired; /* caches replaced by loom_set_cache, closed with the state (the tier-up
                                       thread may still be storing into one) */
  RtGpuJit jit;
  bool tiers;   /* jit.tiers, off once a tier thread could not start */
  bool tier_started, tier_stop, tier_abandon; /* abandon: at exit, the rest of the queue is dropped */
  pthread_t tier_thread;
  pid_t tier_pid; /* the process that started the thread (a fork's child has no such thread) */
  struct GpuRt *tier_next; /* the list of runtimes with a thread, for the exit handler */
  pthread_mutex_t tier_lock; /* guards the queue, tier_stop and last_compile_ms */
  pthread_cond_t tier_cv;
  double last_compile_ms;    /* when a compile (any kernel) last ended */
  TierJob *tier_head, *tier_tail;
};

/* ---- gpu_device.c --------------------------------------------------------------------------------------- */
/* The context's state for drv, the driver loaded on first use (a failure is remembered). */
LoomStatus rt_gpu_get(const RtGpuDriver *drv, LoomContext *ctx, GpuRt **out, Diag *d);
/* Device `index`, set up on first use (primary context retained, pool, target, kernel table). */
LoomStatus rt_gpu_device(const RtGpuDriver *drv, LoomContext *ctx, int index, GpuRt **gout, GpuDev **out, Diag *d);
/* The calling thread's current stream of a device (NULL: the default stream). */
GpuStream *rt_gpu_cur_stream(GpuRt *g, int device);
/* Whether dev's pool orders the blocks used on stream s itself (gpu_pool.h "Stream order"): a stream-ordered
 * pool, and s the default stream or one of Loom's. A borrowed stream (loom_stream_wrap: CuPy's or another
 * library's) may be destroyed by its owner at any time, so the pool never records on its handle: its blocks
 * count as the default stream's (gpu_device.c pool_cur_stream), and work on it is settled (synchronized,
 * while it is current and so alive) before pool blocks are freed, as with a stream-blind pool. */
bool rt_gpu_pool_orders(const GpuDev *dev, const GpuStream *s);

/* ---- gpu_kernels.c -------------------------------------------------------------------------------------- */
/* Creates dev->kernels (called while the device is set up). */
LoomStatus rt_gpu_kernels_create(GpuDev *dev, Diag *d);
/* Makes sure the entries `need` (CG_ENTRY bits) of f are loaded, compiling them on first need. */
LoomStatus rt_gpu_need_entries(LoomContext *ctx, GpuRt *g, GpuDev *dev, const GpuFn *f, const KernelIr *k,
                               uint32_t need, Diag *d);
/* Initializes g's tier state from g->jit. */
void rt_gpu_tiers_init(GpuRt *g);
/* Stops the tier-up thread of every runtime of this process: queued tier-ups are dropped (the first-tier
 * code stays in use and on disk), the running one finishes. A later tier-up starts the thread again. */
void rt_gpu_tiers_stop_all(void);
/* Finishes the tier-up queue (a fork's child has no thread to wait for) and frees the tier state. */
void rt_gpu_tiers_close(GpuRt *g);
/* Closes g's disk caches (the one in use and those loom_set_cache replaced); after the tier-up thread. */
void rt_gpu_disk_close(LoomContext *ctx, GpuRt *g);

#endif /* LOOM_RUNTIME_GPU_RT_H */
