/* hip_rt.h: private interface of the AMD (HIP) device's files (runtime/hip/): its state in the context, the
 * loaded kernels, and the functions the files share.
 *
 *   hip_device.c   the RtDevice table: lazy runtime loading, devices, memory, copies, streams, events, dumps
 *   hip_kernels.c  the kernel table's values: entry groups compiled (or loaded from the disk cache) on demand
 *   hip_launch.c   launch shapes and the schedule runner
 *   hip_raw.c      raw modules (RawModule / RawKernel): AMDGPU code objects, LLVM IR for amdgcn
 *   hip.c          the HIP runtime layer (hip.h)
 * The caching device memory pool is runtime/cuda/cuda_pool.c's (rt_cuda_pool_*): it is device-neutral (it
 * allocates through an RtDevAllocator), only its name and folder say CUDA.
 */
#ifndef LOOM_RUNTIME_HIP_RT_H
#define LOOM_RUNTIME_HIP_RT_H

#include <pthread.h>

#include "runtime/cuda/cuda.h" /* the caching pool (RtCuPool, RtDevAllocator): device-neutral */
#include "runtime/device.h"
#include "runtime/disk_cache.h"
#include "runtime/hip/hip.h"

#define HIP_META_MAGIC 0x31414d47u /* "GMA1" */

/* What a code-object payload of the disk cache starts with: how to launch the kernel and which entries
 * the code object holds (names[i] for bit i of `entries`); the code object (co_bytes) follows. The
 * kernarg layout is not kept: hipModuleLaunchKernel reads it from the code object's metadata. */
typedef struct HipMeta {
  uint32_t magic, entries_all, entries;
  int32_t strategy, block, vec_lanes, vec_align, acc_size, nwords, cache_k, part_lanes, cache_lanes, wave;
  uint32_t co_bytes;
  char names[CG_NENTRY][64];
} HipMeta;

/* Entry indexes (bit positions of CG_ENTRY_*). */
enum { HE_MAIN, HE_VEC, HE_PART, HE_FINISH, HE_CACHED, HE_PARTV, HE_CACHEDV, HE_FINISHB, HE_VECW };

/* A kernel on one device, its entries compiled in groups (a code object each) as launches need them; groups
 * are added under the device lock, and `loaded` (CG_ENTRY bits) is written with release order after the
 * handles, so a launcher that sees a bit set uses that handle without the lock. */
typedef struct HipFn {
  char *key; /* the disk cache key of the kernel (a group's key adds its entries) */
  HipMeta meta;
  uint32_t loaded;
  RtHipModule *modules[CG_NENTRY];
  int nmodules;
  RtHipKernel kern[CG_NENTRY];
  int max_block[CG_NENTRY]; /* the most threads each entry launches with (a multiple of the wave) */
  uint32_t elem_block;      /* elementwise: the block size with the most resident threads per CU */
  int64_t elem_grid_max;    /* elementwise: resident blocks of that size on the device */
  int partv_grid_max;       /* vector part entry: resident blocks of meta.block threads */
} HipFn;

typedef struct HipRt HipRt;

/* One device, set up on first use. */
typedef struct HipDev {
  bool ready;
  int index;
  LoomContext *ctx;
  HipRt *g;
  RtHipDeviceInfo info;
  RtCuPool *pool;
  CgTarget *target; /* AMDGPU for the device's chip */
  RtCache *kernels; /* HipFn values keyed by the target's description, never evicted */
} HipDev;

/* One thread's current stream of one device (loom_stream_use); a list under the device lock. */
typedef struct HipCurStream {
  struct HipCurStream *next;
  pthread_t tid;
  int device;
  RtHipStream *s;
} HipCurStream;

/* The HIP state of a context (RtState.devices[LOOM_DEVICE_HIP].state). */
struct HipRt {
  HipCurStream *cur;
  RtHip *hip;
  int ndev;
  HipDev *devs;
  DiskCache *disk;
  bool disk_tried;
};

/* ---- hip_device.c ------------------------------------------------------------------------------------- */
LoomStatus rt_amd_get(LoomContext *ctx, HipRt **out, Diag *d);
LoomStatus rt_amd_device(LoomContext *ctx, int index, HipRt **gout, HipDev **out, Diag *d);
RtHipStream *rt_amd_current_stream(LoomContext *ctx, int device);

/* ---- hip_kernels.c ------------------------------------------------------------------------------------ */
LoomStatus rt_amd_kernels_create(HipDev *dev, Diag *d);
/* Makes sure the entries `need` (CG_ENTRY bits) of f are loaded, compiling them on first need. */
LoomStatus rt_amd_need_entries(LoomContext *ctx, HipRt *g, HipDev *dev, const HipFn *f, const KernelIr *k,
                               uint32_t need, Diag *d);
/* The block size of k with the most resident threads per CU (a multiple of the wave, <= max_block) and
 * the resident blocks of it per CU. */
LoomStatus rt_amd_best_block(RtHip *h, const RtHipKernel *k, int wave, int max_block, int *block, int *per_cu, Diag *d);

/* ---- hip_launch.c ------------------------------------------------------------------------------------- */
LoomStatus rt_amd_run_schedule(LoomContext *ctx, int index, const RtRun *run, Diag *d);

/* ---- hip_raw.c ---------------------------------------------------------------------------------------- */
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
