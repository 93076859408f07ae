/* SPDX-License-Identifier: Apache-2.0 */
/* device.h: the device interface of the runtime (like TVM's DeviceAPI or Halide's
 * halide_device_interface_t): one table of functions per device kind. The host (runtime/host_device.c)
 * fills one; each GPU vendor's folder (runtime/cuda/, runtime/hip/) fills one whose generic hooks are the
 * shared GPU layer's (runtime/gpu/gpu_driver.h: pools, streams, events, copies, the kernel table, disk
 * cache, tiers, launch shapes over a small driver table the vendor fills) and adds its own dumps and raw
 * modules. Generic code (api.c, eval.c, eval_plan.c, eval_dump.c, user_kernel.c, raw_kernel.c) reaches a device
 * only through its table, found by rt_device(kind): the one place where a LoomDeviceKind becomes a table
 * (device.c).
 *
 * Conventions. `index` is the device's ordinal within its kind (the host has only 0). Every function
 * that can fail returns a LoomStatus and writes d. A device kind's state lives in the context
 * (RtState.devices[kind]), is created on first use by open() and destroyed by close() with the context;
 * open() failing (no driver, no device) is remembered and reported again with the same message.
 * Kernels, streams and events are the device's own types behind the opaque handles below.
 *
 * The host needs no driver: its open() always succeeds, its copies are memmove, its work is done when
 * the call returns (streams are no-ops, events read the monotonic clock), and its kernels are the
 * kernel cache's compiled host functions (runtime/cache.c).
 */
#ifndef LOOM_RUNTIME_DEVICE_H
#define LOOM_RUNTIME_DEVICE_H

#include "runtime/linalg.h"
#include "runtime/runtime.h"

typedef struct RtKernel RtKernel; /* a kernel prepared for one device (its compiled, loaded code) */
typedef struct RtStream RtStream; /* a stream of one device; NULL: the device's default stream */
typedef struct RtEvent RtEvent;   /* an event of one device */
typedef struct RtRawModule RtRawModule; /* a device's raw module (loom_raw_*): its code, loaded per device */

/* Pool figures of one device (loom_pool_stats shows used and total). */
typedef struct RtPoolStats {
  uint64_t used_bytes;      /* class-rounded bytes of blocks handed out and not freed */
  uint64_t cached_bytes;    /* bytes of free blocks kept for reuse */
  uint64_t cached_blocks;   /* how many free blocks are kept */
  uint64_t total_bytes;     /* used + cached */
  uint64_t peak_bytes;      /* the most total_bytes has been (0: not tracked) */
  uint64_t allocs, reuses;  /* requests, and those served from a cached block (0: not tracked) */
} RtPoolStats;

/* One schedule to run on a device (every array of it on that device). */
typedef struct RtRun {
  const IrGraph *graph;            /* its inputs are the schedule's SB_INPUT arrays */
  const Schedule *schedule;
  const RtKernel *const *pinned;   /* pinned[k]: schedule kernel k prepared already, or NULL (prepared here) */
  void *const *out_data;           /* base pointers of the outputs (SB_OUTPUT) */
  int32_t nouts;
  uint64_t extra_temp_bytes;       /* the caller's temporaries, added to the temp_bytes_peak statistic */
  const int32_t *input_map;        /* schedule input index -> graph input index (a shared plan); NULL: same */
  int32_t ninput_map;
} RtRun;

/* *base: the address of the graph input a schedule binds as input `index` (through map, nmap entries,
 * when not NULL); false when there is no such input. */
static inline bool rt_schedule_input(const IrGraph *g, const int32_t *map, int32_t nmap, int32_t index, void **base) {
  if (map) index = index >= 0 && index < nmap ? map[index] : -1;
  if (index < 0 || index >= g->ninputs) return false;
  *base = g->inputs[index].data;
  return true;
}

/* What RtDevice.dump_code writes (loom_dump's PTX, AMDGPU and time kinds). */
typedef struct RtDumpRequest {
  const char *arch; /* "sm_80" / "gfx90a"; NULL or "": the kind's reference (sm_90; gfx942 or $LOOM_DUMP_AMDGPU_CHIP) */
  bool code;        /* each kernel's code */
  bool times;       /* each kernel's compile time */
} RtDumpRequest;

typedef struct RtDevice RtDevice;
struct RtDevice {
  const char *name;   /* "host", "cuda", "hip": messages and labels ("cuda:0") */
  LoomDeviceKind kind;
  int32_t binary;     /* CgBinaryKind of its kernels (loom_dump's PTX is the CG_BINARY_PTX device's) */

  /* ---- the device kind --------------------------------------------------------------------------- */
  LoomStatus (*open)(LoomContext *ctx, Diag *d); /* loads the driver (LOOM_ERR_UNSUPPORTED without one) */
  int (*count)(LoomContext *ctx);                /* devices of this kind (0 without a driver) */
  void (*close)(LoomContext *ctx);               /* with the context: everything the kind holds */
  void (*stop_background)(void); /* process-wide: stops the kind's background threads (NULL: it has none) */
  LoomStatus (*synchronize)(LoomContext *ctx, int index, Diag *d); /* waits for all work on the device */

  /* ---- memory: the device's caching pool ------------------------------------------------------------ */
  LoomStatus (*alloc)(LoomContext *ctx, int index, size_t size, void **out, Diag *d); /* size 0: NULL */
  /* size: what alloc was given (the host's pool needs it); a pointer the pool did not hand out is an error */
  LoomStatus (*free)(LoomContext *ctx, int index, void *ptr, size_t size, Diag *d);
  LoomStatus (*pool_stats)(LoomContext *ctx, int index, RtPoolStats *out, Diag *d);
  LoomStatus (*pool_trim)(LoomContext *ctx, int index, Diag *d); /* gives every cached block back */
  /* Sets the pool's limit when set (*limit bytes of used + cached; 0: none), then writes the limit in force
   * to *limit. Past it, alloc gives the cached blocks back, then fails with LOOM_ERR_OUT_OF_MEMORY. */
  LoomStatus (*pool_limit)(LoomContext *ctx, int index, bool set, uint64_t *limit, Diag *d);

  /* ---- copies: n bytes between memory of this kind (devices di, si) and the host's, or within the
   * kind (peer copies between two of its devices); synchronous for the caller, ordered after the work
   * on the calling thread's current stream. */
  LoomStatus (*copy)(LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src, LoomDeviceKind sk,
                     int si, size_t n, Diag *d);
  /* The same copy enqueued on stream s (NULL: the calling thread's current stream of the device) and
   * returned from at once: host memory must stay valid (and unwritten) until s is synchronized. A copy the
   * driver cannot order on one stream (between two GPUs) is synchronous. */
  LoomStatus (*copy_async)(LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src,
                           LoomDeviceKind sk, int si, size_t n, RtStream *s, Diag *d);
  /* n bytes of value from dst (memory of this kind, device index), enqueued as copy_async is. */
  LoomStatus (*fill_bytes)(LoomContext *ctx, void *dst, int index, uint8_t value, size_t n, RtStream *s, Diag *d);

  /* ---- streams and events (loom_stream_*, loom_event_*) ----------------------------------------------
   * The current stream is kept per context, device and calling thread; run_schedule and copy use it. */
  LoomStatus (*stream_create)(LoomContext *ctx, int index, RtStream **out, Diag *d);
  void (*stream_destroy)(LoomContext *ctx, RtStream *s); /* also unsets it wherever it is current */
  LoomStatus (*stream_synchronize)(LoomContext *ctx, RtStream *s, Diag *d);
  LoomStatus (*stream_use)(LoomContext *ctx, int index, RtStream *s, Diag *d); /* NULL: the default */
  RtStream *(*current_stream)(LoomContext *ctx, int index);
  void *(*stream_handle)(RtStream *s); /* the driver's own stream handle; NULL: default */
  /* A stream over the driver's stream `handle`, made elsewhere (CuPy's ExternalStream): used as
   * stream_create's are, but stream_destroy frees only loom's record and never the borrowed handle. */
  LoomStatus (*stream_wrap)(LoomContext *ctx, int index, void *handle, RtStream **out, Diag *d);
  LoomStatus (*event_create)(LoomContext *ctx, int index, RtEvent **out, Diag *d);
  void (*event_destroy)(LoomContext *ctx, RtEvent *e);
  /* s NULL: the calling thread's current stream of the event's device */
  LoomStatus (*event_record)(LoomContext *ctx, int index, RtEvent *e, RtStream *s, Diag *d);
  LoomStatus (*event_synchronize)(LoomContext *ctx, RtEvent *e, Diag *d);
  LoomStatus (*event_elapsed)(LoomContext *ctx, RtEvent *start, RtEvent *end, float *ms, Diag *d);

  /* ---- kernels ------------------------------------------------------------------------------------------ */
  /* The kernel for k on the device, compiled (or loaded from a cache) and pinned until unpin: what a
   * plan or a user kernel keeps. npoints: the point count of the launch to come, or -1 (a device may
   * use it to pick which entries to compile first). */
  LoomStatus (*prepare)(LoomContext *ctx, int index, const KernelIr *k, int64_t npoints, const RtKernel **out,
                        Diag *d);
  void (*unpin)(LoomContext *ctx, int index, const RtKernel *k);
  /* Optional (NULL: none): replaces kernels of a fresh schedule by copies specialized on their launch
   * sizes (allocated in a) before they are prepared; the host's kernels over a short last dim
   * (KernelIr.row_extent, codegen/lower_host_rows.c). The copies compute the same values. */
  LoomStatus (*specialize)(LoomContext *ctx, Arena *a, Schedule *s, Diag *d);
  /* Runs a schedule: temporaries from the pool, every kernel launched in order on the current stream
   * (the host: parallel over its thread pool), the statistics counted (kernels_launched,
   * last_eval_kernels, temp_bytes_peak). */
  LoomStatus (*run_schedule)(LoomContext *ctx, int index, const RtRun *run, Diag *d);

  /* ---- the evaluator's temporaries ------------------------------------------------------------------ */
  /* Writes the C-contiguous array tmp into out (any strides), both on the device; NULL: the evaluator
   * runs a copy kernel instead. */
  LoomStatus (*write_strided)(LoomContext *ctx, const LoomArray *tmp, LoomArray *out, Diag *d);
  /* Called before pool blocks used by work just enqueued go back to the pool when that work may run on
   * a user stream: a stream-blind pool needs the stream finished first; a stream-ordered one (the GPU
   * layer's, with a driver that has fence_create and event_query: gpu_pool.h) returns at once; NULL:
   * nothing to wait for. */
  void (*settle)(LoomContext *ctx, int index);

  /* ---- introspection ------------------------------------------------------------------------------------ */
  /* Compiles kernels k[0..n) for rq->arch (NULL or "": the kind's reference architecture) without a
   * device and appends, per kernel, its code ("// kernel NAME (sm_90)" then the PTX) when rq->code and
   * its compile time ("# time kernel NAME <arch> T ms (phases)") when rq->times; an arch the kind does
   * not know is LOOM_ERR_INVALID_ARGUMENT. NULL when the kind has no such text. */
  LoomStatus (*dump_code)(LoomContext *ctx, const RtDumpRequest *rq, int32_t n, const KernelIr *const *k, StrBuf *sb,
                          Diag *d);

  /* ---- raw modules (RawModule / RawKernel, runtime/raw_kernel.c): whole kernels in the kind's own
   * formats; NULL / 0 when the kind takes none ------------------------------------------------------- */
  uint32_t raw_formats; /* bit (1 << f) per LoomRawFormat it takes */
  /* The format of code when it is one of the kind's (else LOOM_RAW_AUTO). */
  LoomRawFormat (*raw_sniff)(const void *code, size_t size);
  /* A module from code in `format`, compiled to the kind's loadable form where needed without touching
   * a device; *entries (ctx_alloc'ed, cg_raw_entries_free) lists its kernels with their parameters, or
   * *nentries is -1 when a binary's kernels are known only once it is loaded. Errors name the code's
   * problem (LOOM_ERR_INVALID_ARGUMENT) or a missing tool (LOOM_ERR_UNSUPPORTED). */
  LoomStatus (*raw_create)(LoomContext *ctx, const void *code, size_t size, LoomRawFormat format,
                           const char *const *options, int32_t noptions, RtRawModule **out, CgRawEntry **entries,
                           int32_t *nentries, Diag *d);
  void (*raw_destroy)(LoomContext *ctx, RtRawModule *m);
  const char *(*raw_text)(const RtRawModule *m); /* its text form (PTX), NULL for a binary */
  /* Loads kernel `name` on device `index` (the module on first use there; the caller serializes calls on
   * one module): *fn is its handle. When *nparams is -1 on entry and the loaded code tells the
   * parameters' sizes, *params (ctx_alloc'ed) and *nparams get them. */
  LoomStatus (*raw_load)(LoomContext *ctx, RtRawModule *m, int index, const char *name, void **fn,
                         CgRawParam **params, int32_t *nparams, Diag *d);
  /* Launches fn on device index: stream is the driver's own (NULL: the device's default), params[i]
   * points at argument i (name: messages). */
  LoomStatus (*raw_launch)(LoomContext *ctx, RtRawModule *m, void *fn, int index, const uint32_t grid[3],
                           const uint32_t block[3], uint32_t shared_mem, void *stream, void **params,
                           const char *name, Diag *d);
  /* The device address and size of the module's global variable `name` (a __device__ or __constant__ one)
   * on device index, loading the module there first; NULL when the kind has no globals to give. */
  LoomStatus (*raw_global)(LoomContext *ctx, RtRawModule *m, int index, const char *name, void **ptr,
                           size_t *bytes, Diag *d);

  /* ---- vendor math libraries (linalg.h): matrix products of call kernels (run_schedule hands a kernel
   * with KernelIr.call to rt_run_call, which calls gemm) and loom_linalg's decompositions; NULL when
   * the kind has none (a call kernel there is LOOM_ERR_UNSUPPORTED) --------------------------------- */
  const RtLinalg *linalg;
};

/* ---- device.c ------------------------------------------------------------------------------------------- */
/* The table of a device kind; NULL for a kind this build has no device for (or not a LoomDeviceKind). */
const RtDevice *rt_device(LoomDeviceKind kind);
/* The device whose kernels are binaries of this CgBinaryKind; NULL when none. */
const RtDevice *rt_device_for_binary(int32_t binary);
/* For a specialize hook: sk's kernel replaced by a copy allocated in a (the caller then sets its specialization
 * fields); NULL after an out-of-memory error in d. */
KernelIr *rt_specialize_copy(Arena *a, SchedKernel *sk, Diag *d);
/* The device that takes raw modules of `format` (LOOM_RAW_AUTO: the first whose raw_sniff recognizes
 * code; *format is set); NULL when none. */
const RtDevice *rt_device_for_raw(LoomRawFormat *format, const void *code, size_t size);
/* "host, cuda" into buf: the kinds this build has (messages). */
const char *rt_device_kinds(char *buf, size_t cap);
/* "cuda:0" into buf. */
const char *rt_device_label(char *buf, size_t cap, LoomDeviceKind kind, int32_t index);
/* ---- api.c, shared with the other public-API files -------------------------------------------------- */
/* A LoomStream: the device's own stream (NULL on the host) with the device it belongs to. */
struct LoomStream {
  const RtDevice *dev;
  int32_t index;
  RtStream *s;
};
/* The table of kind for the public call fn after checking kind and index (an available kind, the host's
 * index 0, no negative index; devices check theirs on use); NULL with d written. */
const RtDevice *rt_api_device(LoomContext *ctx, LoomDeviceKind kind, int32_t index, const char *fn, Diag *d);
/* The device kind's state slot of the context (RtState.devices[kind]). */
RtDeviceSlot *rt_device_slot(LoomContext *ctx, LoomDeviceKind kind);

#endif /* LOOM_RUNTIME_DEVICE_H */
