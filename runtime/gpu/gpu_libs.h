/* gpu_libs.h: the GPU devices' vendor math libraries (linalg.h's RtLinalg), written once over small vendor
 * tables: matrix products through a "Lt"-style BLAS (cuBLASLt, hipBLASLt: gpu_blas.c) and FFTs (cuFFT,
 * hipFFT: gpu_fft.c). A vendor's file (runtime/cuda/cuda_blas.c, cuda_fft.c; runtime/hip/hip_blas.c,
 * hip_fft.c) only says where its library is (vendor_lib.h's RtVendorLib), which names its functions
 * have and which values its enums take; the plans, descriptors, algorithm and plan caches, handles,
 * workspaces and streams are the layer's.
 *
 * State. A device kind's library state lives in RtState.linalg[kind] (made on first use under
 * device_lock, released with the context by rt_gpu_libs_close): the BLAS library (loaded then,
 * successfully or not), its handle per device (made with the device current), its algorithm cache, and
 * one slot per further library (GpuLibSlot: FFT, solver), each filled by that library's binding on its
 * first use and released by the vendor's slot_close. One mutex guards handles, cache and slots.
 */
#ifndef LOOM_RUNTIME_GPU_LIBS_H
#define LOOM_RUNTIME_GPU_LIBS_H

#include <pthread.h>

#include "runtime/gpu/gpu_driver.h"
#include "runtime/vendor_lib.h"

typedef enum GpuLibSlot { GPU_LIB_FFT, GPU_LIB_SOLVER, GPU_LIB_COUNT } GpuLibSlot;

/* ---- matrix products (gpu_blas.c) ------------------------------------------------------------------------ */
/* The Lt API both vendors share (cublasLt<Name> / hipblasLt<Name>, same arguments): field, the name's
 * suffix, prototype (handles, descriptors, layouts and preferences as void *). A vendor's symbol list
 * names these in this order, then optionally <prefix>GetVersion (size_t (void)) and "?"-prefixed (optional)
 * <prefix>GetStatusName (const char *(int)): GpuLtFns' last two fields. */
#define GPU_LT_FUNCS(X)                                                                                          \
  X(create, "Create", (void **))                                                                                 \
  X(destroy, "Destroy", (void *))                                                                                \
  X(desc_create, "MatmulDescCreate", (void **, int, int))                                                        \
  X(desc_destroy, "MatmulDescDestroy", (void *))                                                                 \
  X(desc_set, "MatmulDescSetAttribute", (void *, int, const void *, size_t))                                     \
  X(layout_create, "MatrixLayoutCreate", (void **, int, uint64_t, uint64_t, int64_t))                            \
  X(layout_destroy, "MatrixLayoutDestroy", (void *))                                                             \
  X(layout_set, "MatrixLayoutSetAttribute", (void *, int, const void *, size_t))                                 \
  X(pref_create, "MatmulPreferenceCreate", (void **))                                                            \
  X(pref_destroy, "MatmulPreferenceDestroy", (void *))                                                           \
  X(pref_set, "MatmulPreferenceSetAttribute", (void *, int, const void *, size_t))                               \
  X(heuristic, "MatmulAlgoGetHeuristic", (void *, void *, void *, void *, void *, void *, void *, int, void *, int *)) \
  X(matmul, "Matmul",                                                                                            \
    (void *, void *, const void *, const void *, void *, const void *, void *, const void *, const void *, void *,  \
     void *, void *, const void *, void *, size_t, void *))

typedef struct GpuLtFns {
#define GPU_LT_FIELD(field, suffix, args) int(*field) args;
  GPU_LT_FUNCS(GPU_LT_FIELD)
#undef GPU_LT_FIELD
  size_t (*get_version)(void);          /* NULL: the vendor lists none */
  const char *(*status_name)(int);      /* NULL: none */
} GpuLtFns;

#define GPU_LT_ALGO_MAX 64       /* bytes of the largest vendor algorithm struct */
#define GPU_LT_HEURISTIC_MAX 256 /* bytes of the largest heuristic result */

typedef struct GpuBlasVendor {
  RtVendorLib lib;        /* the library: where it is, its symbols (GPU_LT_FUNCS' order), what is too old */
  const char *prefix;     /* "cublasLt": the functions' names in messages */
  const char *device;     /* "CUDA": "<call> on CUDA device 0 failed" */
  const RtGpuDriver *(*driver)(void); /* the device's driver table (its kind, current device, pool) */
  /* The algorithm struct's size (<= GPU_LT_ALGO_MAX); the heuristic result's size (<= GPU_LT_HEURISTIC_MAX:
   * the stride of the array the heuristic fills) and its workspace's offset (the result starts with the
   * algorithm; the workspace size_t is followed by the result's int state, 0: usable). */
  size_t algo_size, heuristic_size, heuristic_workspace;
  /* The enums' values. compute_32f_tf32 < 0: no TF32 (allow_tf32 changes nothing); pref_min_alignment_a
   * < 0: no alignment preferences (else the A, B, C, D attributes are consecutive from it). */
  int r_16f, r_16bf, r_32f, r_64f, c_32f, c_64f; /* data types (c_: complex64, complex128; also their scales) */
  int compute_32f, compute_32f_tf32, compute_64f;
  int op_n, op_t;
  int desc_transa, desc_transb, desc_epilogue, desc_bias_pointer;
  int layout_batch_count, layout_batch_offset;
  int pref_max_workspace, pref_min_alignment_a;
  int epilogue_default, epilogue_relu, epilogue_gelu, epilogue_bias; /* RELU|BIAS, GELU|BIAS: or'ed */
  int status_alloc_failed, status_not_supported;
  /* Releases a further library's state (NULL: the kind has no such library). */
  void (*slot_close[GPU_LIB_COUNT])(LoomContext *ctx, void *state);
} GpuBlasVendor;

/* RtLinalg.gemm of v's device kind. */
LoomStatus rt_gpu_gemm(LoomContext *ctx, const GpuBlasVendor *v, int index, const RtGemm *g, Diag *d);
/* The products of v's kind whose algorithm was chosen by timing, the timed runs, and the choices taken from
 * the disk cache instead (gpu_blas.c "Selection by timing"), since the context's first product; for tests. */
void rt_gpu_blas_tune_stats(LoomContext *ctx, const GpuBlasVendor *v, unsigned long long *problems,
                            unsigned long long *runs, unsigned long long *disk_hits);
/* RtLinalg.close of v's device kind: the further libraries' states, the handles, the library. */
void rt_gpu_libs_close(LoomContext *ctx, const GpuBlasVendor *v);
/* The BLAS library's version (GpuLtFns.get_version) for RtVendorLib.version. */
long long rt_gpu_lt_version(const void *fns);
/* Loads the BLAS library as a product would and resolves every function, with no device: path gets the
 * library found (and its version where the vendor has one); the product's LOOM_ERR_UNSUPPORTED and
 * message when it is missing or lacks a function. */
LoomStatus rt_gpu_blas_probe(const GpuBlasVendor *v, char *path, size_t size, Diag *d);

/* A further library's binding state: slot `which` of v's kind, made on first use as `size` zeroed bytes
 * starting with an RtLoadedLib, whose library `lib` is loaded into the functions at byte `fns_offset`.
 * Returns with *lock held and *out set, or with an error (no memory; the library missing, with its
 * message) and the lock released. */
LoomStatus rt_gpu_lib_state(LoomContext *ctx, const GpuBlasVendor *v, GpuLibSlot which, const RtVendorLib *lib,
                            size_t size, size_t fns_offset, RtLoadedLib **out, pthread_mutex_t **lock, Diag *d);
/* Releases a state made by rt_gpu_lib_state (its library closed). */
void rt_gpu_lib_state_free(LoomContext *ctx, RtLoadedLib *state);

/* ---- FFTs (gpu_fft.c) --------------------------------------------------------------------------------------- */
/* A plan handle (cuFFT's int, hipFFT's pointer), as the vendor's calls map it. */
typedef uintptr_t GpuFftPlan;
typedef enum GpuFftType { GPU_FFT_C2C, GPU_FFT_Z2Z, GPU_FFT_R2C, GPU_FFT_D2Z, GPU_FFT_C2R, GPU_FFT_Z2D } GpuFftType;

/* The FFT API both vendors share (cufft<Name> / hipfft<Name>, same arguments but for the plan handle's type
 * H): field, the name's suffix, prototype. A vendor declares its struct of function pointers and its
 * symbol list from it. */
#define GPU_FFT_FUNCS(X, H)                                                                                      \
  X(create, "Create", (H *))                                                                                     \
  X(destroy, "Destroy", (H))                                                                                     \
  X(get_version, "GetVersion", (int *))                                                                          \
  X(set_stream, "SetStream", (H, void *))                                                                        \
  X(make_plan_many64, "MakePlanMany64", (H, int, long long *, long long *, long long, long long, long long *,     \
                                         long long, long long, int, long long, size_t *))                        \
  X(exec_c2c, "ExecC2C", (H, void *, void *, int))                                                               \
  X(exec_z2z, "ExecZ2Z", (H, void *, void *, int))                                                               \
  X(exec_r2c, "ExecR2C", (H, void *, void *))                                                                    \
  X(exec_d2z, "ExecD2Z", (H, void *, void *))                                                                    \
  X(exec_c2r, "ExecC2R", (H, void *, void *))                                                                    \
  X(exec_z2d, "ExecZ2D", (H, void *, void *))

/* A vendor's FFT calls over its resolved functions (fns: the vendor's struct), each returning the library's
 * status (0: success). exec runs a plan of type t (inverse: the C2C / Z2Z direction). */
typedef struct GpuFftVendor {
  RtVendorLib lib;
  size_t fns_size;               /* of the vendor's struct of function pointers */
  const char *device;            /* "CUDA": messages */
  const char *status_type;       /* "cufftResult": messages */
  const char *prefix;            /* "cufft": the calls' names in messages */
  int status_alloc_failed;
  const GpuBlasVendor *libs;     /* whose state keeps this one's (slot GPU_LIB_FFT) */
  int (*create)(const void *fns, GpuFftPlan *out);
  int (*destroy)(const void *fns, GpuFftPlan p);
  int (*set_stream)(const void *fns, GpuFftPlan p, void *stream);
  /* basic layout over n[0..rank), `batch` transforms; *work: the plan's workspace bytes */
  int (*make_plan)(const void *fns, GpuFftPlan p, int rank, long long *n, GpuFftType t, long long batch,
                   size_t *work);
  int (*exec)(const void *fns, GpuFftPlan p, GpuFftType t, void *in, void *out, bool inverse);
} GpuFftVendor;

/* RtLinalg.fft of v's device kind; the release of its state (v->libs' slot_close[GPU_LIB_FFT] calls it). */
LoomStatus rt_gpu_fft(LoomContext *ctx, const GpuFftVendor *v, int index, const RtFft *f, Diag *d);
void rt_gpu_fft_close(LoomContext *ctx, const GpuFftVendor *v, void *state);

#endif /* LOOM_RUNTIME_GPU_LIBS_H */
