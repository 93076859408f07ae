/* cuda_rt.h: private interface of the CUDA device's files (runtime/cuda/): its state in the context,
 * the loaded kernels, the background tier-up, and the functions the files share.
 *
 *   cuda_device.c   the RtDevice table: lazy driver loading, devices, memory, copies, streams, events
 *   cuda_kernels.c  the kernel table's values: entry groups compiled (or loaded from the disk cache)
 *                   on demand, tiers
 *   cuda_launch.c   launch shapes and the schedule runner
 *   cuda_raw.c      raw modules (RawModule / RawKernel): PTX, LLVM IR, CUDA C++ (clang-19), cubins
 *   cuda.c, cuda_pool.c   the driver layer and the caching pool (cuda.h)
 */
#ifndef LOOM_RUNTIME_CUDA_RT_H
#define LOOM_RUNTIME_CUDA_RT_H

#include <pthread.h>
#include <sys/types.h>

#include "runtime/cuda/cuda.h"
#include "runtime/device.h"
#include "runtime/disk_cache.h"

#define GPU_META_MAGIC 0x364b474du /* "MGK6": entry names by CG_ENTRY bit, vecw, tiers (older entries are rewritten) */

/* What a cubin payload of the disk cache starts with: how to launch the kernel, and which entries the
 * cubin holds (names[i] for bit i of `entries`; the other names are ""). The cubin (cubin_bytes)
 * follows; a tier-0 payload (a quick JIT, see "tiers" below) then holds the NUL-terminated PTX, so
 * that the process that loads it can compile the final code in the background. */
typedef struct GpuMeta {
  uint32_t magic, entries_all, entries;
  int32_t strategy, block, vec_lanes, vec_align, acc_size, nwords, cache_k, part_lanes, cache_lanes;
  int32_t tier;
  uint32_t cubin_bytes;
  char names[CG_NENTRY][64];
} GpuMeta;

/* Entry indexes (bit positions of CG_ENTRY_*). */
enum { E_MAIN, E_VEC, E_PART, E_FINISH, E_CACHED, E_PARTV, E_CACHEDV, E_FINISHB, E_VECW };

/* A kernel on one device. Its entries are compiled in groups, each a module of its own: a launch
 * that needs an entry not loaded yet compiles (or loads from the disk cache) the missing ones under
 * the device lock (RtState.device_lock); `loaded` (CG_ENTRY bits) is written with release order after the handles, so a launcher
 * that sees a bit set may use that handle without the lock. */
typedef struct CuFn {
  char *key;                      /* the disk cache key of the kernel (a group's key adds its entries) */
  GpuMeta meta;                   /* launch facts; names of the loaded entries */
  uint32_t loaded;
  RtCuModule *modules[2 * CG_NENTRY]; /* one per group compiled, and its tier-up */
  int nmodules;
  RtCuKernel kern[CG_NENTRY];     /* by entry index (handle: atomic, a tier-up replaces it; see kern_at) */
  /* elementwise launch: best block size << 32 | resident blocks on the device (one atomic word: a
   * tier-up replaces both, after the handle; see tier_up); cfg_entry: the entry they come from */
  uint64_t elem_cfg;
  int cfg_entry;
  int elem_max_block[CG_NENTRY]; /* elementwise entries: the most threads each can launch with (atomic;
                                  * a tier-up only lowers it); the launch clamps its block to it */
  int cached_max_block;          /* the most threads the cached ROW entry can launch with (registers) */
  int cachedv_max_block;         /* the same for the vector cached entry */
  int partv_grid_max;            /* vector part entry: resident blocks of meta.block threads (SMs x occupancy) */
} CuFn;

typedef struct CuRt CuRt;

/* One device (ordinal), set up on first use. */
typedef struct CuDev {
  bool ready;
  int index;
  LoomContext *ctx;
  CuRt *g;
  RtCuDeviceInfo info;
  RtCuPool *pool;
  CgTarget *target; /* NVPTX for the device's compute capability */
  RtCache *kernels; /* the kernel table: CuFn values keyed by the target's description, never evicted */
} CuDev;

/* One thread's current stream of one device (loom_stream_use); a list under the device lock. */
typedef struct CurStream {
  struct CurStream *next;
  pthread_t tid;
  int device;
  RtCuStream *s;
} CurStream;

/* ---- tiers ----
 * A new elementwise kernel is JIT-compiled at level 0 first (2-5 ms less JIT on the H200's host; its
 * code can be up to 2x slower where it calls functions), loaded and used; one background thread per
 * runtime then compiles the same PTX at the final level and swaps the entries' function handles
 * (the old module stays loaded: launches in flight may use it). A tier-up waits until no kernel has
 * been compiled for TIER_IDLE_MS: the driver's JIT calls do not overlap well (run side by side, a
 * burst of new kernels compiled more slowly than without tiers on the H200). The disk cache gets the
 * tier-0 cubin with its PTX at once and the final cubin when the tier-up is done, so a process that
 * exits early leaves an entry the next one loads and tiers up in turn. Closing the device finishes
 * the queue. */
#define TIER_IDLE_MS 50.0
typedef struct TierJob {
  struct TierJob *next;
  CuFn *f;
  int device;
  GpuMeta meta; /* tier 1; the entries of the group */
  char *key;    /* the group's disk-cache key */
  char *ptx;
  int sm_count;
  char name[64];
} TierJob;

/* The CUDA state of a context (RtState.devices[LOOM_DEVICE_CUDA].state). */
struct CuRt {
  CurStream *cur;
  RtCuda *cu;
  int ndev;
  CuDev *devs;
  DiskCache *disk;
  bool disk_tried;
  int jit_level_elementwise; /* LOOM_CUDA_JIT_LEVEL, 0 .. 4 */
  bool tiers;                /* LOOM_CUDA_JIT_TIERS (default 1) and a final level above 0 */
  bool tier_started, tier_stop, tier_abandon; /* abandon: at exit, the rest of the queue is dropped */
  pthread_t tier_thread;
  pid_t tier_pid; /* the process that started the thread (a fork's child has no such thread) */
  struct CuRt *tier_next; /* the list of runtimes with a thread, for the exit handler */
  pthread_mutex_t tier_lock; /* guards the queue, tier_stop and last_compile_ms */
  pthread_cond_t tier_cv;
  double last_compile_ms;    /* when a compile (any kernel) last ended */
  TierJob *tier_head, *tier_tail;
};

/* ---- cuda_device.c ---------------------------------------------------------------------------------- */
/* The context's CUDA state, the driver loaded on first use (a failure is remembered). */
LoomStatus rt_cu_get(LoomContext *ctx, CuRt **out, Diag *d);
/* Device `index`, set up on first use (primary context retained, pool, target, kernel table). */
LoomStatus rt_cu_device(LoomContext *ctx, int index, CuRt **gout, CuDev **out, Diag *d);
/* The calling thread's current stream of a device (NULL: the legacy default stream). */
RtCuStream *rt_cu_current_stream(LoomContext *ctx, int device);

/* ---- cuda_kernels.c ----------------------------------------------------------------------------------- */
/* Creates dev->kernels (called while the device is set up). */
LoomStatus rt_cu_kernels_create(CuDev *dev, Diag *d);
/* Makes sure the entries `need` (CG_ENTRY bits) of f are loaded, compiling them on first need. */
LoomStatus rt_cu_need_entries(LoomContext *ctx, CuRt *g, CuDev *dev, const CuFn *f, const KernelIr *k, uint32_t need,
                              Diag *d);
/* Reads LOOM_CUDA_JIT_LEVEL / LOOM_CUDA_JIT_TIERS into g and initializes its tier state. */
void rt_cu_tiers_init(CuRt *g);
/* Finishes the tier-up queue (a fork's child has no thread to wait for) and frees the tier state. */
void rt_cu_tiers_close(CuRt *g);

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

/* ---- cuda_launch.c ------------------------------------------------------------------------------------ */
LoomStatus rt_cu_run_schedule(LoomContext *ctx, int index, const RtRun *run, Diag *d);

#endif /* LOOM_RUNTIME_CUDA_RT_H */
