/* SPDX-License-Identifier: Apache-2.0 */
/* loom.h: the public C API of Loom, a JIT kernel-fusion compiler for array expressions.
 *
 * Model. A LoomContext owns compiled kernels, the thread pool and the last error. A LoomGraph is a
 * lazy expression graph: each builder call appends (or finds, when structurally equal) one node and
 * returns its handle (LoomNode). Shapes and dtypes are inferred at once, so a shape error is reported
 * by the call that caused it. loom_eval() fuses the requested nodes into as few kernels as possible,
 * compiles them (or finds them in the kernel cache) and runs them.
 *
 * Arrays. A LoomArray describes memory the caller owns: data pointer, dtype, shape and strides.
 * Strides are counted in ELEMENTS (not bytes) and may be zero or negative. A graph keeps the
 * LoomArray descriptors of its inputs, not copies of the data: the data must stay alive and unchanged
 * until the last loom_eval() of that graph returns.
 *
 * Errors. Every function that can fail returns a LoomStatus; on failure the message is kept on the
 * context and returned by loom_last_error(). No function aborts or exits on any input. A failed call
 * leaves the graph unchanged.
 *
 * Threads. A context may be used from several threads at once for loom_eval() of distinct graphs;
 * one graph must not be built or evaluated from two threads at the same time.
 */
#ifndef LOOM_H
#define LOOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LOOM_API __attribute__((visibility("default")))
#else
#define LOOM_API
#endif

/* The version of this header; loom_version() gives the library's. One place for C, CMake and Python
 * (CMakeLists.txt and pyproject.toml read these lines): keep the string equal to the numbers. While
 * MAJOR is 0 every MINOR release may change the ABI (the soname is libloom.so.MAJOR.MINOR). */
#define LOOM_VERSION_MAJOR 0
#define LOOM_VERSION_MINOR 1
#define LOOM_VERSION_PATCH 0
#define LOOM_VERSION_STRING "0.1.0"
#define LOOM_VERSION_NUMBER (LOOM_VERSION_MAJOR * 10000 + LOOM_VERSION_MINOR * 100 + LOOM_VERSION_PATCH)
#define LOOM_MAX_RANK 16

typedef enum LoomStatus {
  LOOM_OK = 0,
  LOOM_ERR_INVALID_ARGUMENT, /* a null pointer, an unknown op, a bad node handle, a bad value */
  LOOM_ERR_SHAPE,            /* shapes that do not broadcast, a bad reshape, a bad out shape */
  LOOM_ERR_DTYPE,            /* an op not defined for a dtype, a bad cast target */
  LOOM_ERR_AXIS,             /* an axis out of range or repeated */
  LOOM_ERR_OUT_OF_MEMORY,    /* an allocation failed (the message names the size) */
  LOOM_ERR_UNSUPPORTED,      /* valid input that this version cannot do (the message says what) */
  LOOM_ERR_BACKEND,          /* the compiler or a device failed */
  LOOM_ERR_INTERNAL,         /* a broken invariant inside Loom: a bug, please report it */
  LOOM_ERR_LINALG            /* a matrix the operation is not defined for (singular, not positive
                                definite) or a decomposition that did not converge: NumPy's LinAlgError */
} LoomStatus;

/* The numbering is part of cache keys: new dtypes are appended, never renumbered.
 * LOOM_BFLOAT16: Google's brain float (1 sign, 8 exponent, 7 mantissa bits; ml_dtypes.bfloat16 in
 *   Python), a storage type computed in float32 and rounded to nearest even when stored, like float16.
 * LOOM_COMPLEX64 / LOOM_COMPLEX128: a pair (real, imaginary) of float32 / float64 in that order (C99
 *   float _Complex / double _Complex, NumPy's complex64 / complex128); sizes 8 and 16 bytes, aligned
 *   as their parts (4 and 8 bytes). Strides stay in elements of the array's own dtype. */
typedef enum LoomDType {
  LOOM_BOOL = 0,
  LOOM_INT8, LOOM_INT16, LOOM_INT32, LOOM_INT64,
  LOOM_UINT8, LOOM_UINT16, LOOM_UINT32, LOOM_UINT64,
  LOOM_FLOAT16, LOOM_FLOAT32, LOOM_FLOAT64,
  LOOM_BFLOAT16, LOOM_COMPLEX64, LOOM_COMPLEX128,
  LOOM_DTYPE_COUNT
} LoomDType;

typedef enum LoomDeviceKind { LOOM_DEVICE_HOST = 0, LOOM_DEVICE_CUDA, LOOM_DEVICE_HIP } LoomDeviceKind;

typedef struct LoomArray {
  void *data;                      /* first element (already offset); may be NULL when size is 0 */
  LoomDType dtype;
  int32_t ndim;                    /* 0 .. LOOM_MAX_RANK */
  int64_t shape[LOOM_MAX_RANK];
  int64_t strides[LOOM_MAX_RANK];  /* in elements */
  LoomDeviceKind device;           /* LOOM_DEVICE_HOST or LOOM_DEVICE_CUDA (data is a device address) */
  int32_t device_index;
} LoomArray;

/* Elementwise and reduction operators. The numbering is stable (part of cache keys). */
typedef enum LoomOp {
#define LOOM_OP(name, kind, arity, rule, doc) LOOM_OP_##name,
#include "loom/ops_public.def"
#undef LOOM_OP
  LOOM_OP_COUNT
} LoomOp;

typedef int32_t LoomNode; /* a node of one graph; negative values are never valid nodes */

typedef struct LoomContext LoomContext;
typedef struct LoomGraph LoomGraph;

/* A pluggable allocator for all host memory Loom allocates (tests inject failures through it).
 * alloc must return memory aligned to at least 64 bytes, or NULL. */
typedef struct LoomAllocator {
  void *(*alloc)(void *user, size_t size);
  void (*free)(void *user, void *ptr);
  void *user;
} LoomAllocator;

typedef struct LoomContextOptions {
  const LoomAllocator *allocator; /* NULL: the default 64-byte aligned allocator */
  int32_t num_threads;            /* 0: LOOM_NUM_THREADS, else all online cores */
} LoomContextOptions;

/* ---- version ---------------------------------------------------------------------------------- */
/* The version of the library linked at run time, "MAJOR.MINOR.PATCH"; compare loom_version_number()
 * with LOOM_VERSION_NUMBER to detect a program built against another header. */
LOOM_API const char *loom_version(void);
LOOM_API int loom_version_number(void);

/* ---- context ---------------------------------------------------------------------------------- */
LOOM_API LoomStatus loom_context_create(LoomContext **out);
LOOM_API LoomStatus loom_context_create_ex(const LoomContextOptions *options, LoomContext **out);
LOOM_API void loom_context_destroy(LoomContext *ctx);
/* Stops the background threads of every context of the process (the GPU tier-up: queued recompiles at
 * the final JIT level are dropped, kernels keep their first-tier code, the one running finishes). Call it
 * before exit() when contexts are not destroyed: exit would otherwise tear down the driver's libraries
 * under a running compile. Later work starts the threads again as needed. */
LOOM_API void loom_stop_background_work(void);
/* The message of the last failed call on this context made by the calling thread ("" if none). */
LOOM_API const char *loom_last_error(LoomContext *ctx);
LOOM_API const char *loom_status_name(LoomStatus status);
LOOM_API const char *loom_dtype_name(LoomDType dtype); /* "float32", ...; NULL if out of range */
LOOM_API size_t loom_dtype_size(LoomDType dtype);      /* 0 if out of range */
LOOM_API const char *loom_op_name(LoomOp op);

typedef struct LoomStats {
  uint64_t kernels_launched;  /* kernels run by loom_eval since the context was created */
  uint64_t kernels_compiled;  /* compilations (cache misses) */
  uint64_t cache_hits;
  double compile_ms;          /* total time spent compiling */
  uint64_t last_eval_kernels; /* kernels run by the last loom_eval on this context */
  uint64_t temp_bytes_peak;   /* peak bytes of temporaries allocated by one loom_eval */
  uint64_t library_calls;     /* calls of a vendor library (BLAS, cuBLASLt, LAPACK, cuSOLVER) made by
                                 loom_eval's call kernels and loom_linalg, counted per schedule item */
  uint64_t plans_made;        /* runs of the pass pipeline by loom_eval: an expression evaluated again on
                                 the same nodes and layouts reuses its kept plan and adds none, and so does
                                 one of a structure already planned on new arrays of the same layouts or
                                 with other values of its constants (the context's plan cache,
                                 LOOM_PLAN_CACHE; a constant a pass folded or baked is matched by value) */
  uint64_t copies_to_host;    /* copies from a GPU's memory to host memory (a read-back: .get(), a host
                                 fallback, a scalar asked of a device array), synchronous or enqueued */
  uint64_t bytes_to_host;     /* their bytes */
  uint64_t copies_to_device;  /* copies from host memory to a GPU's memory (uploads), and their bytes */
  uint64_t bytes_to_device;
} LoomStats;
LOOM_API LoomStatus loom_get_stats(LoomContext *ctx, LoomStats *out);

/* What a context runs with (Python's loom.show_config / loom.config). Strings are NUL-terminated and
 * truncated to their arrays. */
typedef struct LoomConfigInfo {
  int32_t num_threads;      /* threads of the host pool, caller included */
  uint32_t dump_flags;      /* dumps in effect: 1 graph, 2 kernels, 4 llvm, 8 time (LOOM_DUMP's words) */
  uint64_t cache_max_bytes; /* bound of the disk cache of GPU binaries */
  char host_target[160];    /* the host code generator: "LLVM 19.1.7 host <triple> <cpu> <hash>[ sleef]" */
  char cache_dir[1024];     /* folder of the disk cache ("" when disabled or unusable) */
  char cache_error[1024];   /* why the disk cache cannot be used ("" when it can) */
} LoomConfigInfo;
LOOM_API LoomStatus loom_get_config(LoomContext *ctx, LoomConfigInfo *out);
/* Sets the dumps (LOOM_DUMP's words: "graph,kernels,llvm,time"; "" for none) from the next loom_eval
 * on; call it while no evaluation runs on ctx. An unknown word is LOOM_ERR_INVALID_ARGUMENT and
 * changes nothing. */
LOOM_API LoomStatus loom_set_dump(LoomContext *ctx, const char *words);
/* Where the dumps go (LOOM_DUMP / loom_set_dump's output, and LOOM_DUMP=time's timings): sink(user,
 * text, len) gets each piece of text as it is made (NUL-terminated too), from the thread that made it
 * (an evaluating thread, or a GPU device's background compiler thread): it must be thread-safe and
 * must not call back into ctx. NULL restores the default, the process's stderr. To write to a FILE *,
 * pass a sink that fwrite()s to it. */
typedef void (*LoomDumpSink)(void *user, const char *text, size_t len);
LOOM_API LoomStatus loom_set_dump_sink(LoomContext *ctx, LoomDumpSink sink, void *user);
/* Resizes the host thread pool to num_threads threads (the calling thread included; 1..1024; 0: the
 * default, LOOM_NUM_THREADS or all online cores). Evaluations running meanwhile finish correctly with
 * either size. LOOM_ERR_INVALID_ARGUMENT out of range; LOOM_ERR_BACKEND when the system refused some
 * threads (the pool keeps those it has: loom_get_config tells how many). */
LOOM_API LoomStatus loom_set_num_threads(LoomContext *ctx, int32_t num_threads);
/* The disk cache of GPU binaries from now on: dir NULL follows the environment (LOOM_CACHE_DIR, else
 * $XDG_CACHE_HOME/loom, else ~/.cache/loom), "" turns it off; max_bytes 0 is LOOM_CACHE_MAX_BYTES or
 * 1 GiB. The folder is created (mode 0700) and checked first: a folder that cannot be made or is not
 * the user's is an error that keeps the settings in effect. Devices reopen their cache at their next
 * compile; kernels already loaded stay. */
LOOM_API LoomStatus loom_set_cache(LoomContext *ctx, const char *dir, uint64_t max_bytes);
/* The optimization level (0..4) of the GPU driver's JIT (CUDA's ptxas) for elementwise kernels compiled
 * from now on; -1: the default (LOOM_CUDA_JIT_LEVEL, else 1). Kernels already loaded keep their code;
 * the level is part of the disk cache's key. AMD code objects are final (no driver JIT): no effect there.
 * loom_get_jit_level reads the setting (-1 when it is the default). */
LOOM_API LoomStatus loom_set_jit_level(LoomContext *ctx, int32_t level);
LOOM_API LoomStatus loom_get_jit_level(LoomContext *ctx, int32_t *level);

/* ---- graph building ----------------------------------------------------------------------------- */
LOOM_API LoomStatus loom_graph_create(LoomContext *ctx, LoomGraph **out);
LOOM_API void loom_graph_destroy(LoomGraph *g);

/* An input array (descriptor copied; data not copied). LOOM_ERR_INVALID_ARGUMENT for a host array whose
 * device_index is not 0, a negative device_index, or shape and strides that span more than 2^62 bytes
 * (strides count elements); LOOM_ERR_UNSUPPORTED for an unknown device kind. A stride of 0 makes any
 * length fine (a broadcast input takes no memory). */
LOOM_API LoomStatus loom_input(LoomGraph *g, const LoomArray *array, LoomNode *out);
/* A 0-d constant of a given dtype ("strong"). The value is converted to dtype as NumPy would
 * (out-of-range integer values are an error). */
LOOM_API LoomStatus loom_const_f64(LoomGraph *g, double value, LoomDType dtype, LoomNode *out);
LOOM_API LoomStatus loom_const_i64(LoomGraph *g, int64_t value, LoomDType dtype, LoomNode *out);
LOOM_API LoomStatus loom_const_u64(LoomGraph *g, uint64_t value, LoomDType dtype, LoomNode *out);
/* Python scalars under NEP 50 ("weak"): they take the dtype of the array they meet, by kind. */
LOOM_API LoomStatus loom_weak_float(LoomGraph *g, double value, LoomNode *out);
LOOM_API LoomStatus loom_weak_int(LoomGraph *g, int64_t value, LoomNode *out);
/* A Python int in [0, 2**64): values above INT64_MAX are weak too (they fit uint64 arrays, are an
 * error with other integer dtypes, and decide comparisons with any integer array). */
LOOM_API LoomStatus loom_weak_uint(LoomGraph *g, uint64_t value, LoomNode *out);
LOOM_API LoomStatus loom_weak_bool(LoomGraph *g, int value, LoomNode *out);
/* Complex constants: a strong one of a complex dtype (re, im rounded to its parts' precision; a real
 * or integer dtype is LOOM_ERR_DTYPE), and a Python complex under NEP 50: complex128 by default, it
 * takes the precision of a float or complex array it meets (float32 * 1j -> complex64, float16 and
 * bfloat16 -> complex64, float64 -> complex128; ints and bool -> complex128). */
LOOM_API LoomStatus loom_const_complex(LoomGraph *g, double re, double im, LoomDType dtype, LoomNode *out);
LOOM_API LoomStatus loom_weak_complex(LoomGraph *g, double re, double im, LoomNode *out);

/* An int64 array of `shape` whose elements are their own row-major linear indices 0 .. n-1 (NumPy's
 * arange(n).reshape(shape)). It has no memory: the kernels that read it (or any view of it) compute
 * each element from the point's coordinates. With LOOM_OP_RANDOM_BITS it numbers the random draws. */
LOOM_API LoomStatus loom_iota(LoomGraph *g, int32_t ndim, const int64_t *shape, LoomNode *out);

LOOM_API LoomStatus loom_unary(LoomGraph *g, LoomOp op, LoomNode x, LoomNode *out);
LOOM_API LoomStatus loom_binary(LoomGraph *g, LoomOp op, LoomNode a, LoomNode b, LoomNode *out);
LOOM_API LoomStatus loom_where(LoomGraph *g, LoomNode cond, LoomNode a, LoomNode b, LoomNode *out);
/* clip(x, lo, hi) = minimum(maximum(x, lo), hi) as NumPy 2's np.clip: for an integer x a Python int
 * bound at or past x's dtype limit on its side is dropped; with both bounds the dtype is the
 * three-operand promotion (Python scalars by NEP 50). lo or hi may be negative (= none). */
LOOM_API LoomStatus loom_clip(LoomGraph *g, LoomNode x, LoomNode lo, LoomNode hi, LoomNode *out);
LOOM_API LoomStatus loom_cast(LoomGraph *g, LoomNode x, LoomDType dtype, LoomNode *out);

/* Movement ops: views, never copies. Axes may be negative (counted from the end). */
LOOM_API LoomStatus loom_broadcast_to(LoomGraph *g, LoomNode x, int32_t ndim, const int64_t *shape,
                                      LoomNode *out);
/* One entry of shape may be -1 (inferred). */
LOOM_API LoomStatus loom_reshape(LoomGraph *g, LoomNode x, int32_t ndim, const int64_t *shape,
                                 LoomNode *out);
/* perm == NULL reverses the axes. */
LOOM_API LoomStatus loom_permute(LoomGraph *g, LoomNode x, const int32_t *perm, LoomNode *out);
/* Per axis, Python slice semantics after normalization: start, stop and step as given to
 * slice.indices() (step != 0). Pass LOOM_SLICE_NONE for an omitted start or stop. */
#define LOOM_SLICE_NONE INT64_MIN
LOOM_API LoomStatus loom_slice(LoomGraph *g, LoomNode x, const int64_t *start, const int64_t *stop,
                               const int64_t *step, LoomNode *out);
LOOM_API LoomStatus loom_expand_dims(LoomGraph *g, LoomNode x, int32_t axis, LoomNode *out);
/* naxes == 0: squeeze every axis of size 1. Squeezing an axis whose size is not 1 is an error. */
LOOM_API LoomStatus loom_squeeze(LoomGraph *g, LoomNode x, int32_t naxes, const int32_t *axes,
                                 LoomNode *out);

typedef enum LoomReduceOp {
  LOOM_REDUCE_SUM = 0, LOOM_REDUCE_PROD, LOOM_REDUCE_MIN, LOOM_REDUCE_MAX, LOOM_REDUCE_MEAN,
  LOOM_REDUCE_ANY, LOOM_REDUCE_ALL, LOOM_REDUCE_ARGMIN, LOOM_REDUCE_ARGMAX, LOOM_REDUCE_COUNT
} LoomReduceOp;
/* naxes == 0 with axes == NULL: all axes. argmin/argmax take exactly one axis or all axes (then the
 * index is into the flattened array). Result dtypes follow NumPy: sum/prod of bool and signed ints
 * give int64, of unsigned ints uint64; mean of ints gives float64; argmin/argmax give int64. float16
 * results are rounded to float16 (accumulation in float32). */
LOOM_API LoomStatus loom_reduce(LoomGraph *g, LoomReduceOp op, LoomNode x, int32_t naxes,
                                const int32_t *axes, int keepdims, LoomNode *out);
/* Like loom_reduce with an explicit accumulator/result dtype (NumPy's dtype= argument); mean with an
 * integer or bool dtype sums in it, divides in float64 and casts back, as NumPy does. */
LOOM_API LoomStatus loom_reduce_dtype(LoomGraph *g, LoomReduceOp op, LoomNode x, int32_t naxes,
                                      const int32_t *axes, int keepdims, LoomDType dtype,
                                      LoomNode *out);

/* Inclusive scan along one axis (NumPy's cumsum / cumprod, and maximum/minimum.accumulate): op SUM,
 * PROD, MIN or MAX; axis may be negative; x must be at least 1-d (flatten a 0-d array first, as
 * numpy.cumsum does). dtype LOOM_DTYPE_COUNT: NumPy's default (sum/prod of bool and signed ints give
 * int64, of unsigned ints uint64; min/max keep x's dtype); else the accumulator and result dtype.
 * Integer overflow wraps; float16 / bfloat16 round every partial result as NumPy's accumulate does (on
 * the host: bit-identical to NumPy's sequential order; GPUs scan blocks in a tree order, so float
 * results differ by rounding); min/max propagate NaN. A lazy graph node like any other: the
 * elementwise expression it scans is computed in the scan kernel's loads and an elementwise consumer
 * read at the same points in its stores. */
LOOM_API LoomStatus loom_scan(LoomGraph *g, LoomReduceOp op, LoomNode x, int32_t axis, LoomDType dtype,
                              LoomNode *out);

/* ---- gathers and scatters: reads and writes at computed positions, inside fused kernels ----------------
 * loom_gather: out[p] = data[p with p[axis] replaced by idx[p]] (numpy.take_along_axis): idx has data's
 * rank and broadcasts with data on every other axis (ints or bool, any width); axis may be negative.
 * mode 0 "raise": a negative index counts from the end; the range is NOT checked here (a kernel cannot
 * raise): check it first (loom's Python package reads the index's min and max, one small reduction, and
 * raises IndexError as NumPy does); an index still out of range is clamped, never read outside the array.
 * mode 1 "wrap": modulo the extent; mode 2 "clip": clamped to [0, extent - 1] (negative -> 0, as NumPy).
 * The index's producers and the gather's consumers fuse into one kernel.
 * loom_scatter: base with base.flat[idx[p]] = values[p] (row-major flat index into base; values broadcast
 * to idx's shape and cast to base's dtype); indices outside [0, base.size) write nothing (apply modes and
 * negative indices first; -1 is "skip"). op 0 sets: where an index repeats, one of its values is kept
 * (which one is unspecified: threads race), op 1 adds every value (numpy.add.at; ints, float32, float64),
 * op 2 sets as op 0 into an unspecified base (only its shape and dtype count: the elements no index writes
 * are undefined, and no kernel writes base; a stream compaction's output, read only where written).
 * Realized by a kernel writing base into the result (none for op 2) and a kernel over idx's shape writing
 * the values; a result that is an output must be C-contiguous. */
LOOM_API LoomStatus loom_gather(LoomGraph *g, LoomNode data, LoomNode idx, int32_t axis, int32_t mode, LoomNode *out);
LOOM_API LoomStatus loom_scatter(LoomGraph *g, LoomNode base, LoomNode idx, LoomNode values, int32_t op,
                                 LoomNode *out);

/* ---- linear algebra ------------------------------------------------------------------------------------
 * Matrix products are graph nodes: lazy, fused with their elementwise neighbours, and run as one call of
 * the device's BLAS (loaded at run time: a host BLAS such as OpenBLAS, cuBLASLt on NVIDIA; a missing
 * library is LOOM_ERR_UNSUPPORTED naming what to install). An elementwise epilogue the library applies
 * itself (scaling, a bias vector, an added matrix, ReLU) is folded into the call. */
/* NumPy's matmul (a @ b): 0-d operands are an error; a 1-d a is a row, a 1-d b a column (the added dim
 * is dropped); the batch dims (all but the last two) broadcast; the dtype is the operands' promotion.
 * Float16 accumulates in float32. Integer and bool products (no BLAS, as in NumPy) wrap on overflow. */
LOOM_API LoomStatus loom_matmul(LoomGraph *g, LoomNode a, LoomNode b, LoomNode *out);
/* TF32 tensor cores for float32 products on NVIDIA (off by default, as PyTorch's allow_tf32; env
 * LOOM_ALLOW_TF32=1); returns the previous setting. No effect on other dtypes and devices. */
LOOM_API int loom_set_allow_tf32(LoomContext *ctx, int allow);

/* Decompositions and solvers, run at once on the device of their inputs (LAPACK on the host, cuSOLVER
 * on NVIDIA) over the batch of matrices in the leading dims. Matrices are column-major and packed: an
 * m x n matrix of a batch is an array of shape [..., m, n] with strides [..., 1, m] and each matrix
 * right after the previous one (NumPy's swapaxes(ascontiguousarray(swapaxes(x, -1, -2)), -1, -2)). Outputs
 * (out[0..nout), descriptors overwritten) are allocated on that device in the same layout (vectors
 * C-contiguous): free them with loom_array_free. float32, float64, complex64 and complex128 (singular values
 * and eigenvalues are real: float32 / float64; Q unitary, eigh Hermitian). A problem the operation is not
 * defined for is LOOM_ERR_LINALG with NumPy's message ("Singular matrix", "Matrix is not positive
 * definite", ...), naming the matrix of the batch. */
typedef enum LoomLinalgOp {
  LOOM_LINALG_LU = 0,   /* a (n x n) -> lu (n x n), piv (int32 [..., n], LAPACK's 1-based row swaps): getrf;
                           a singular matrix is no error (a zero on lu's diagonal): det, slogdet */
  LOOM_LINALG_SOLVE,    /* a (n x n), b (n x k) -> x (n x k), a x = b: gesv */
  LOOM_LINALG_CHOLESKY, /* a (n x n) -> l: the factor of a's lower (LOOM_LINALG_UPPER: upper) triangle, in
                           that triangle; the other triangle keeps a's values */
  LOOM_LINALG_QR,       /* a (m x n) -> r (m x n, R in its upper triangle), q (m x min(m, n); m x m with
                           LOOM_LINALG_COMPLETE; none with LOOM_LINALG_VALUES_ONLY): geqrf, orgqr */
  LOOM_LINALG_SVD,      /* a (m x n) -> s (min(m, n)), u (m x k), vh (k x n), k = min(m, n); u m x m and vh
                           n x n with LOOM_LINALG_COMPLETE; s only with LOOM_LINALG_VALUES_ONLY: gesdd */
  LOOM_LINALG_EIGH,     /* a (n x n) -> w (n, ascending), v (n x n, eigenvectors in columns; none with
                           LOOM_LINALG_VALUES_ONLY), from a's lower (LOOM_LINALG_UPPER: upper) triangle: syevd */
  LOOM_LINALG_COUNT
} LoomLinalgOp;
/* LOOM_LINALG_ANY_VH_LAYOUT (svd): the caller reads out[2]'s strides, so vh may come back row-major (strides
 * [..., n, 1]) where the library computes V rather than vh (cuSOLVER's Jacobi gesvdj, real dtypes): no
 * transpose is made. Without it every output has the column-major layout above. */
enum { LOOM_LINALG_UPPER = 1, LOOM_LINALG_COMPLETE = 2, LOOM_LINALG_VALUES_ONLY = 4, LOOM_LINALG_ANY_VH_LAYOUT = 8 };
LOOM_API LoomStatus loom_linalg(LoomContext *ctx, LoomLinalgOp op, int32_t flags, int32_t nin, const LoomArray *in,
                                int32_t nout, LoomArray *out);

/* Batched FFTs over the last `rank` (1..3) dims of a C-contiguous array, run at once on the array's device
 * through the vendor's FFT library (cuFFT on NVIDIA, loaded at run time like cuBLASLt). Unnormalized:
 * forward y_k = sum_j x_j exp(-2 pi i jk / n), inverse with exp(+2 pi i jk / n), no 1/n. The other dims are
 * the batch. *out is allocated on that device, C-contiguous (free it with loom_array_free).
 *   LOOM_FFT_C2C_FORWARD / _INVERSE: complex64 or complex128 -> the same dtype and shape
 *   LOOM_FFT_R2C: float32 / float64 -> complex64 / complex128, last dim n -> n / 2 + 1
 *   LOOM_FFT_C2R: complex -> float, last dim n_last / 2 + 1 -> n_last (the input is not modified: a
 *     library that overwrites a complex-to-real input, as cuFFT does, transforms a copy)
 *   LOOM_FFT_C2R_SCRATCH: LOOM_FFT_C2R on an input the caller no longer needs: the library may overwrite
 *     it, and no copy is made
 * The host has no FFT library in libloom: LOOM_ERR_UNSUPPORTED (loom's Python package transforms host
 * arrays with NumPy's pocketfft). */
typedef enum LoomFftKind {
  LOOM_FFT_C2C_FORWARD = 0,
  LOOM_FFT_C2C_INVERSE,
  LOOM_FFT_R2C,
  LOOM_FFT_C2R,
  LOOM_FFT_C2R_SCRATCH,
  LOOM_FFT_KIND_COUNT
} LoomFftKind;
LOOM_API LoomStatus loom_fft(LoomContext *ctx, LoomFftKind kind, int32_t rank, int64_t n_last, const LoomArray *in,
                             LoomArray *out);

/* ---- sorting on a GPU ----------------------------------------------------------------------------------
 * loom_sort sorts every row (the last axis) of keys, a C-contiguous CUDA or HIP array of a real dtype, by
 * a stable radix sort on its device: NumPy's order (NaN last, -0.0 == 0.0; equal keys keep their order;
 * LOOM_SORT_DESCENDING: the reverse order with equal keys still in order, NaN first). values (NULL, or
 * 4- or 8-byte elements of the keys' shape and device) move with their keys; LOOM_SORT_INDEX instead
 * gives each key's int64 position in its row (argsort). The outputs are allocated C-contiguous on the
 * device (sorted_values only with values or LOOM_SORT_INDEX; free with loom_array_free). Rows of 2^30
 * keys or more, host arrays and complex keys are LOOM_ERR_UNSUPPORTED / LOOM_ERR_DTYPE. Asynchronous
 * like loom_eval. loom_take_rows gathers rows: out[..., i] = src[..., index[..., i]] (int64 index of
 * src's leading dimensions, negative from the row's end; one out of bounds is LOOM_ERR_INVALID_ARGUMENT,
 * read back at the call); out has index's shape. */
#define LOOM_SORT_DESCENDING 1
#define LOOM_SORT_INDEX 2
LOOM_API LoomStatus loom_sort(LoomContext *ctx, const LoomArray *keys, const LoomArray *values, int32_t flags,
                              LoomArray *sorted_keys, LoomArray *sorted_values);
LOOM_API LoomStatus loom_take_rows(LoomContext *ctx, const LoomArray *src, const LoomArray *index, LoomArray *out);

LOOM_API LoomStatus loom_node_info(LoomGraph *g, LoomNode node, LoomDType *dtype, int32_t *ndim,
                                   int64_t *shape /* LOOM_MAX_RANK entries, may be NULL */);

/* ---- graph reuse ------------------------------------------------------------------------------------ */
/* Points the input read by node `input` (a node made by loom_input) at another array of the same
 * dtype, shape and device; data and strides may differ. Every node built on that input reads the new
 * array from the next loom_eval on (loom_input shares one input between equal descriptors, so their
 * nodes move together). How the Python @loom.fuse reuses a traced graph without rebuilding it. */
LOOM_API LoomStatus loom_input_rebind(LoomGraph *g, LoomNode input, const LoomArray *array);
/* Rebinds n inputs in one call: inputs[i] to *arrays[i], each as loom_input_rebind would. On the first
 * invalid pair it stops and reports that pair's error (earlier pairs stay rebound). The per-call path
 * of the Python @loom.fuse (several arguments, no per-input error setup). */
LOOM_API LoomStatus loom_input_rebind_many(LoomGraph *g, int32_t n, const LoomNode *inputs,
                                           const LoomArray *const *arrays);
/* `value` holds the value of `node`, an array of its dtype and shape (what loom_eval made for it): later
 * evaluations may read it instead of computing the node again, nodes built on it too. It is a cache: a
 * value other than the node's own makes results undefined (either may be read).
 * The caller keeps `value`'s memory alive, and unchanged (or calls loom_node_unbind before a write) while
 * the graph may still evaluate something that reads it. How the Python package reuses a pending array it evaluated (e.g. for a view) in the arrays
 * built on it. The graph's kept plans stay: one made before the bind computes the node from its sources,
 * whose values the bound array holds (a plan made while it is bound is dropped by loom_node_unbind). */
LOOM_API LoomStatus loom_node_bind(LoomGraph *g, LoomNode node, const LoomArray *value);
/* *out = 1 when one of users[0..n) is `node` or is built on it (reads its value through its sources),
 * else 0: whether binding `node` can help anything still to be evaluated. A forward scan of the nodes
 * between `node` and the largest user (nodes only refer to earlier ones). */
LOOM_API LoomStatus loom_node_reaches(LoomGraph *g, LoomNode node, int32_t n, const LoomNode *users, int32_t *out);
/* *out = 1 when b[0..nb), evaluated after a[0..na) with a's values kept, would compute again a node that
 * evaluating a computes (an elementwise op, cast, reduction, copy, matrix product, gather, scatter or scan
 * that both are built on, reached from b through nodes not in a; not an input, constant or view), else 0:
 * whether evaluating the two sets together saves work. */
LOOM_API LoomStatus loom_nodes_share(LoomGraph *g, int32_t na, const LoomNode *a, int32_t nb, const LoomNode *b,
                                     int32_t *out);
/* Undoes loom_node_bind: the node computes its value from its sources again (nothing if it is not bound),
 * e.g. before `value`'s memory is written while the graph may still evaluate something built on it. */
LOOM_API LoomStatus loom_node_unbind(LoomGraph *g, LoomNode node);
/* The number of nodes in a graph (0 for NULL): callers use it to bound graphs that grow in loops. */
LOOM_API int32_t loom_graph_node_count(const LoomGraph *g);

/* ---- evaluation ----------------------------------------------------------------------------------- */
/* Evaluates n nodes. For each i: if outs[i].data is NULL, a new C-contiguous array is allocated with
 * the context's allocator (release it with loom_array_free) and outs[i] is filled in; otherwise outs[i]
 * must have the node's dtype and shape and is written (any strides; it may alias inputs and other
 * outputs: those are evaluated into temporaries and copied in order, the later output winning).
 * A given output must have distinct elements: a stride 0 on an axis longer than 1 or strides that
 * reach one element twice are LOOM_ERR_INVALID_ARGUMENT (layouts of more than 2^20 elements that a
 * simple test cannot prove distinct: LOOM_ERR_UNSUPPORTED). A kernel of more than 2^50 points (only
 * reachable by reducing stride-0 inputs) is LOOM_ERR_UNSUPPORTED; min, max, any, all, argmin and
 * argmax skip stride-0 reduced axes, so those run at any size. The number of nodes and outputs is
 * limited only by memory (README, "Limits"). */
LOOM_API LoomStatus loom_eval(LoomGraph *g, int32_t n, const LoomNode *nodes, LoomArray *outs);
LOOM_API void loom_array_free(LoomContext *ctx, LoomArray *array);

/* ---- devices ------------------------------------------------------------------------------------------
 * CUDA arrays (device LOOM_DEVICE_CUDA, device_index = the GPU) are evaluated on that GPU: every
 * input and given output of one loom_eval must be on one device (else LOOM_ERR_INVALID_ARGUMENT naming
 * both); outputs with data NULL are allocated on it from Loom's caching pool. The driver is loaded on
 * first use: machines without one get LOOM_ERR_UNSUPPORTED ("no CUDA driver ...") only when they use
 * a CUDA array. Work on a GPU is ordered on one stream per device: loom_eval returns once it is
 * enqueued; later Loom calls see the results, the host after loom_device_synchronize or
 * loom_array_copy (synchronous). */
/* Number of devices of a kind: 1 for the host; for CUDA 0 when there is no driver or GPU. */
LOOM_API LoomStatus loom_device_count(LoomContext *ctx, LoomDeviceKind kind, int32_t *count);
/* Allocates a C-contiguous array for array->dtype, ndim, shape, device and device_index (strides and
 * data are written). Release it with loom_array_free. */
LOOM_API LoomStatus loom_array_alloc(LoomContext *ctx, LoomArray *array);
/* Copies src into dst: same dtype and shape, both C-contiguous, any devices (host <-> CUDA, within
 * one GPU). Synchronous: when it returns the data is in dst. */
LOOM_API LoomStatus loom_array_copy(LoomContext *ctx, LoomArray *dst, const LoomArray *src);
/* Waits until all work Loom enqueued on the device is done (a no-op for the host). */
LOOM_API LoomStatus loom_device_synchronize(LoomContext *ctx, LoomDeviceKind kind, int32_t index);

/* ---- streams and events (CUDA; on the host they exist and complete at once) --------------------------
 * A stream orders work on one device. loom_stream_use makes s the calling thread's current stream of
 * its device for this context (NULL with kind/index: back to Loom's default stream of that device);
 * loom_eval, loom_array_copy and loom_device_synchronize then use it. handle is the driver's own
 * object (a CUstream), for interoperability (CuPy's ExternalStream, torch.cuda.ExternalStream). */
typedef struct LoomStream LoomStream;
typedef struct LoomEvent LoomEvent;
LOOM_API LoomStatus loom_stream_create(LoomContext *ctx, LoomDeviceKind kind, int32_t index,
                                       LoomStream **out);
/* Pending work still completes; using a destroyed stream is an error the caller must avoid. */
LOOM_API void loom_stream_destroy(LoomContext *ctx, LoomStream *s);
LOOM_API LoomStatus loom_stream_synchronize(LoomContext *ctx, LoomStream *s);
LOOM_API LoomStatus loom_stream_use(LoomContext *ctx, LoomDeviceKind kind, int32_t index, LoomStream *s);
LOOM_API void *loom_stream_handle(LoomStream *s);
/* A LoomStream over a driver stream made elsewhere (a CUstream / hipStream_t of CuPy, PyTorch, ...; 0 is
 * the legacy default stream, 2 CUDA's per-thread one) on a device of kind: loom_stream_use makes Loom's
 * kernels and copies run on it. loom_stream_destroy frees only Loom's record, never the handle, which
 * must outlive every use. On the host it orders nothing, as a created one. */
LOOM_API LoomStatus loom_stream_wrap(LoomContext *ctx, LoomDeviceKind kind, int32_t index, void *handle,
                                     LoomStream **out);
LOOM_API LoomStatus loom_event_create(LoomContext *ctx, LoomDeviceKind kind, int32_t index,
                                      LoomEvent **out);
LOOM_API void loom_event_destroy(LoomContext *ctx, LoomEvent *e);
/* s NULL: the calling thread's current stream of the event's device. */
LOOM_API LoomStatus loom_event_record(LoomContext *ctx, LoomEvent *e, LoomStream *s);
LOOM_API LoomStatus loom_event_synchronize(LoomContext *ctx, LoomEvent *e);
/* Milliseconds between two recorded and completed events of one device. */
LOOM_API LoomStatus loom_event_elapsed_ms(LoomContext *ctx, LoomEvent *start, LoomEvent *end,
                                          float *ms);

typedef struct LoomPoolStats {
  uint64_t used_bytes;  /* handed out and not freed */
  uint64_t total_bytes; /* used plus cached */
} LoomPoolStats;
/* Memory pool figures of a device (the host pool for LOOM_DEVICE_HOST). */
LOOM_API LoomStatus loom_pool_stats(LoomContext *ctx, LoomDeviceKind kind, int32_t index,
                                    LoomPoolStats *out);
/* Frees the cached (unused) blocks of a device's pool. */
LOOM_API LoomStatus loom_pool_free_all_blocks(LoomContext *ctx, LoomDeviceKind kind, int32_t index);
/* The most bytes a device's pool may hold (used plus cached; 0: no limit, the default). An allocation
 * that needs a new block past it gives the cached blocks back first and then fails with
 * LOOM_ERR_OUT_OF_MEMORY naming the limit. Lowering it frees nothing at once. (CuPy's
 * MemoryPool.set_limit.) */
LOOM_API LoomStatus loom_pool_set_limit(LoomContext *ctx, LoomDeviceKind kind, int32_t index, uint64_t limit);
LOOM_API LoomStatus loom_pool_get_limit(LoomContext *ctx, LoomDeviceKind kind, int32_t index, uint64_t *limit);
/* The number of cached (free) blocks a device's pool keeps for reuse (CuPy's MemoryPool.n_free_blocks). */
LOOM_API LoomStatus loom_pool_cached_blocks(LoomContext *ctx, LoomDeviceKind kind, int32_t index, uint64_t *count);
/* Copies n bytes from src (memory of device sk, si) to dst (of dk, di): host <-> a GPU, within a GPU or
 * between two GPUs of one kind. async 0: done when it returns (on stream s when given, else ordered after
 * the calling thread's current stream), as loom_array_copy. async 1: enqueued on s (NULL: the current
 * stream) and returned from at once; host memory must stay valid and unchanged until s is synchronized
 * (page-locked host memory makes the copy truly asynchronous). s must belong to the GPU side's device. */
LOOM_API LoomStatus loom_memcpy(LoomContext *ctx, void *dst, LoomDeviceKind dk, int32_t di, const void *src,
                                LoomDeviceKind sk, int32_t si, size_t n, LoomStream *s, int async);
/* Writes value (0-255) into n bytes from dst (memory of device kind, index), enqueued on s (NULL: the calling
 * thread's current stream of the device) as loom_eval is: later Loom work on that stream sees it; the host
 * after a synchronization. On the host it is done when it returns. All-zero bytes are 0 of every dtype. */
LOOM_API LoomStatus loom_memset(LoomContext *ctx, void *dst, LoomDeviceKind kind, int32_t index, int value, size_t n,
                                LoomStream *s);

/* ---- introspection --------------------------------------------------------------------------------- */
typedef enum LoomDumpKind {
  LOOM_DUMP_GRAPH = 0, /* the graph IR of the requested nodes */
  LOOM_DUMP_KERNELS,   /* the kernel IR of each fused kernel */
  LOOM_DUMP_LLVM,      /* the optimized LLVM IR of each kernel */
  LOOM_DUMP_PTX,       /* the PTX of each kernel for sm_90 (the H200), compiled without a GPU */
  LOOM_DUMP_AMDGPU,    /* the AMDGPU assembly of each kernel's code object for gfx942 (MI300; $LOOM_DUMP_AMDGPU_CHIP
                        * picks another chip, $LOOM_DUMP_AMDGPU_DIR keeps the code objects), compiled without a GPU */
  LOOM_DUMP_TIME       /* compile times in ms, one line each: "# time NAME MS ms" per pass of the pipeline (fold,
                        * fuse, ...), then per kernel "# time kernel NAME host MS ms" (a fresh compile to machine code: the
                        * kernel cache is not asked) and, where this build has the targets, "# time kernel NAME
                        * sm_90 MS ms (phases)" and "# time kernel NAME gfx942 MS ms (phases)" */
} LoomDumpKind;
/* Writes a NUL-terminated text (free it with loom_free_string) describing how the nodes would be
 * evaluated; nothing is run. */
LOOM_API LoomStatus loom_dump(LoomGraph *g, LoomDumpKind kind, int32_t n, const LoomNode *nodes,
                              char **text);
/* The GPU architectures loom_dump_for compiles for; NULL or "" picks loom_dump's. */
typedef struct LoomDumpTargets {
  const char *ptx_arch;    /* LOOM_DUMP_PTX and LOOM_DUMP_TIME: "sm_80", ... (sm_30 .. sm_90; newer: sm_90's PTX) */
  const char *amdgpu_chip; /* LOOM_DUMP_AMDGPU and LOOM_DUMP_TIME: "gfx90a", ... (codegen's chip table) */
} LoomDumpTargets;
/* loom_dump with the GPU architectures chosen (targets may be NULL); an arch Loom does not know is
 * LOOM_ERR_INVALID_ARGUMENT and the message lists the known ones. */
LOOM_API LoomStatus loom_dump_for(LoomGraph *g, LoomDumpKind kind, const LoomDumpTargets *targets, int32_t n,
                                  const LoomNode *nodes, char **text);
LOOM_API void loom_free_string(LoomContext *ctx, char *text);

/* ---- user kernels: CuPy's ElementwiseKernel and ReductionKernel -------------------------------------
 * Snippets are CuPy's C subset (frontend/snippet.h), compiled by loom's own front end into kernel IR,
 * so they run on every loom backend. Parameter lists use CuPy's syntax ("float32 x, raw T y"); type
 * placeholders (one capital letter) are bound per call from the dtypes of the given outputs first,
 * then of the inputs; a call compiles one instantiation per binding (cached on the kernel) and the
 * kernel code per layout (the context's kernel cache). Errors in a snippet name the kernel, the part
 * ("map_expr", ...), the line and column, with the source line and a caret.
 * Arrays: non-raw arguments broadcast together (NumPy rules); raw ones are passed whole and must be
 * C-contiguous, indexed by flat position (an out-of-range index reads 0 and drops stores). All arrays
 * of one call must be on one device. */
typedef struct LoomUserKernel LoomUserKernel;
/* name: a C identifier ("kernel" if NULL); preamble may be NULL; reduce_dims: merge contiguous dims
 * (CuPy's reduce_dims; it changes nothing observable but speed). */
LOOM_API LoomStatus loom_elementwise_kernel_create(LoomContext *ctx, const char *in_params,
                                                   const char *out_params, const char *operation,
                                                   const char *name, const char *preamble,
                                                   int reduce_dims, LoomUserKernel **out);
/* The same with CuPy's loop_prep and after_loop (NULL or "" = none; loom_elementwise_kernel_create is
 * this with both NULL). loop_prep runs once per worker before the worker's points and after_loop once
 * after them, where a worker is a GPU thread of the grid-stride loop (the scalar and the vector entry
 * alike) or, on the host, one task of the host loop nest (one range of points); which points a worker
 * gets, and how many workers there are, is unspecified (as in CuPy); a worker may get no point (its
 * regions still run); a call over zero points runs nothing. Variables declared at the top level of
 * loop_prep are the worker's state: zero-initialized when declared without a value, visible (and, if
 * not const, writable) in operation and after_loop, and they keep their values from point to point of
 * the same worker (operation may shadow them with a parameter or a declaration of the same name).
 * loop_prep and after_loop see the raw parameters, _ind.size() (and n) and the preamble's functions;
 * `i` and the non-raw (per-point) parameters are not available there (a snippet error naming the part
 * "loop_prep" / "after_loop", line, column and caret). Such a kernel is one kernel of its own (user
 * kernels are never fused) and runs on the elementwise strategy with its per-worker regions. */
#define LOOM_HAVE_LOOP_PREP 1
LOOM_API LoomStatus loom_elementwise_kernel_create_ex(LoomContext *ctx, const char *in_params,
    const char *out_params, const char *operation, const char *name, const char *preamble,
    const char *loop_prep, const char *after_loop, int reduce_dims, LoomUserKernel **out);
/* identity is required (an expression of the reduce type); reduce_type NULL: the first out param's
 * type. reduce_expr must be associative (CuPy assumes it too): loom splits and reorders the fold. */
LOOM_API LoomStatus loom_reduction_kernel_create(LoomContext *ctx, const char *in_params,
                                                 const char *out_params, const char *map_expr,
                                                 const char *reduce_expr, const char *post_map_expr,
                                                 const char *identity, const char *name,
                                                 const char *reduce_type, const char *preamble,
                                                 int reduce_dims, LoomUserKernel **out);
LOOM_API void loom_user_kernel_destroy(LoomUserKernel *k);
/* Numbers of in and out params; *is_reduction 1 for a ReductionKernel (any pointer may be NULL). */
LOOM_API LoomStatus loom_user_kernel_info(const LoomUserKernel *k, int32_t *nin, int32_t *nout,
                                          int *is_reduction);
/* Runs an elementwise kernel: in[nin] (nin = its in params), out[nout] (nout = its out params; an
 * entry with data NULL is allocated, C-contiguous, on the inputs' device: free it with
 * loom_array_free; a raw out not given is allocated the same way). size: -1, or the number of points
 * when every argument is raw or every non-raw one is 0-d (those broadcast over the size points). */
LOOM_API LoomStatus loom_elementwise_kernel_call(LoomUserKernel *k, int32_t nin, const LoomArray *in,
                                                 int32_t nout, LoomArray *out, int64_t size);
/* Runs a reduction kernel over axes (naxes 0 with axes NULL: all axes; negative axes count from the
 * end) of the broadcast inputs; out entries as above (a given out must have the result's shape). */
LOOM_API LoomStatus loom_reduction_kernel_call(LoomUserKernel *k, int32_t nin, const LoomArray *in,
                                               int32_t nout, LoomArray *out, int32_t naxes,
                                               const int32_t *axes, int keepdims);
/* Introspection of one call's kernel: writes a NUL-terminated text (free it with loom_free_string) for
 * the call that loom_elementwise_kernel_call (naxes, axes, keepdims ignored) or loom_reduction_kernel_call
 * (size ignored) would make with these arguments; nothing is run and nothing allocated on a device.
 * Only descriptors are read: an in entry's data may be NULL (never dereferenced); an out entry with
 * data NULL stands for an output loom would allocate. kind: LOOM_DUMP_KERNELS (loom's kernel IR),
 * LOOM_DUMP_LLVM (the optimized LLVM IR for the host CPU), LOOM_DUMP_PTX (PTX for sm_90, the H200's;
 * compiled without a GPU; LOOM_ERR_UNSUPPORTED when this LLVM has no NVPTX backend, or when the kernel
 * calls math functions and libdevice is not found), LOOM_DUMP_AMDGPU (the AMDGPU assembly for gfx942, as
 * loom_dump's). A call over zero points has no kernel: the text says so. */
LOOM_API LoomStatus loom_user_kernel_dump(LoomUserKernel *k, LoomDumpKind kind, int32_t nin, const LoomArray *in,
                                          int32_t nout, const LoomArray *out, int64_t size, int32_t naxes,
                                          const int32_t *axes, int keepdims, char **text);

/* ---- raw kernels: CuPy's RawModule and RawKernel ---------------------------------------------------
 * Whole CUDA kernels given as PTX, LLVM IR (text or bitcode, nvptx64), a cubin (or fatbin), or CUDA
 * C++ source (compiled by clang-19's CUDA front end, found on PATH, to LLVM IR, then loom's NVPTX path
 * to PTX). Creating a module needs no GPU: the code is parsed (CUDA C++ and LLVM IR compiled to PTX)
 * and each kernel's parameter list read (a cubin's only when loaded, through cuFuncGetParamInfo when
 * the driver has it; else arguments are unchecked). The module is linked (cuLink) and loaded per
 * device on the first launch there. Launch arguments are checked against the parameter list: their
 * count, pointer versus scalar, and scalar width and kind (integer vs floating); a mismatch is
 * LOOM_ERR_INVALID_ARGUMENT naming the argument. PTX does not tell a pointer from a 64-bit integer
 * (.u64 without .ptr): such a parameter takes either. Without a CUDA driver, launching returns
 * LOOM_ERR_UNSUPPORTED "no CUDA driver ...".
 * AMD GPUs take whole kernels as AMDGPU code objects (LOOM_RAW_HSACO) and as LLVM IR for amdgcn-amd-amdhsa
 * (text or bitcode; entries are functions of the amdgpu_kernel calling convention; __ocml_* / __ockl_*
 * calls are linked from ROCm's device libraries): the IR is compiled at creation for gfx942 (or the chip
 * of an option "--offload-arch=gfxNNN" / "-arch=gfxNNN") and again for a device of another chip at its
 * first launch there. Their arrays are LOOM_DEVICE_HIP arrays; without an AMD GPU a launch returns
 * LOOM_ERR_UNSUPPORTED "no AMD device ...". */
typedef enum LoomRawFormat {
  LOOM_RAW_AUTO = 0, /* sniffed: an AMDGPU ELF (e_machine 224) -> HSACO, another ELF or fatbin magic -> CUBIN,
                        'BC' magic -> LLVM_BITCODE, text with ".entry"/".target" -> PTX, with "define " -> LLVM_IR,
                        else CUDA; LLVM IR (text or bitcode) whose triple is amdgcn goes to the AMD device */
  LOOM_RAW_PTX, LOOM_RAW_LLVM_IR, LOOM_RAW_LLVM_BITCODE, LOOM_RAW_CUBIN, LOOM_RAW_CUDA,
  LOOM_RAW_HSACO /* an AMDGPU code object (HIP's hipModuleLoadData input; "hsaco"): its kernels and their
                    explicit arguments come from its metadata (ROCm comgr); it loads on devices of its chip */
} LoomRawFormat;
typedef struct LoomRawModule LoomRawModule;
typedef struct LoomRawFunction LoomRawFunction; /* owned by its module */
/* options (may be NULL when noptions is 0), as CuPy/NVRTC spell them: "-arch=sm_XX",
 * "--gpu-architecture=sm_XX" or "--cuda-gpu-arch=sm_XX" pick the sm LLVM IR and CUDA C++ are compiled
 * for (default: sm_90, which newer GPUs JIT); "-D...", "-U...", "-I...", "-std=..." go to clang for CUDA
 * C++; other options ("--use_fast_math", ...) are accepted and ignored. "-loom-name-expression=EXPR" (CuPy's
 * name_expressions) has CUDA C++ compiled by NVRTC with EXPR instantiated (a template instance such as
 * "my_sqrt<int>"); the PTX then begins with comment lines "// loom-name-expression: <lowered name> EXPR", and
 * with NVRTC the compiler's warnings as "// loom-compile-log: <line>". code is copied. */
LOOM_API LoomStatus loom_raw_module_create(LoomContext *ctx, const void *code, size_t size, LoomRawFormat format,
                                           const char *const *options, int32_t noptions, LoomRawModule **out);
LOOM_API void loom_raw_module_destroy(LoomRawModule *m); /* NULL ok; its functions go with it */
LOOM_API LoomRawFormat loom_raw_module_format(const LoomRawModule *m);
/* The PTX of the module (NUL-terminated, free with loom_free_string); LOOM_ERR_UNSUPPORTED for a cubin. */
LOOM_API LoomStatus loom_raw_module_ptx(LoomRawModule *m, char **text);
/* The module's kernel names, one per line (free with loom_free_string); "" for a cubin. */
LOOM_API LoomStatus loom_raw_module_kernels(LoomRawModule *m, char **text);
/* name: the entry's (mangled or extern "C") name; a C++ name without its mangling finds the one
 * non-template overload "_Z<len><name>...". An unknown name is LOOM_ERR_INVALID_ARGUMENT listing the
 * kernels (a cubin's names are only checked at the first launch). */
LOOM_API LoomStatus loom_raw_module_get_function(LoomRawModule *m, const char *name, LoomRawFunction **out);

typedef enum LoomRawParamKind {
  LOOM_RAW_PARAM_POINTER = 0,    /* a device address: pass an array */
  LOOM_RAW_PARAM_INT,            /* an integer scalar of `size` bytes */
  LOOM_RAW_PARAM_FLOAT,          /* a floating scalar of `size` bytes */
  LOOM_RAW_PARAM_INT_OR_POINTER, /* 8 bytes: an array or a 64-bit integer */
  LOOM_RAW_PARAM_ANY             /* only the size is known: any argument of that size */
} LoomRawParamKind;
/* The parameter list: *nparams = -1 when it is not known (a cubin not loaded yet). Up to cap
 * entries of kinds and sizes are written (either may be NULL). */
LOOM_API LoomStatus loom_raw_function_params(LoomRawFunction *f, int32_t *nparams, LoomRawParamKind *kinds,
                                             int32_t *sizes, int32_t cap);
LOOM_API const char *loom_raw_function_name(const LoomRawFunction *f);

/* BYTES: a by-value parameter given as its bytes (a C struct, e.g. a NumPy structured scalar): `nbytes`
 * bytes at `bytes` are the parameter's, copied at the launch; a known parameter list needs a non-pointer
 * parameter of exactly nbytes bytes. */
typedef enum LoomRawArgKind { LOOM_RAW_ARG_ARRAY = 0, LOOM_RAW_ARG_SCALAR, LOOM_RAW_ARG_BYTES } LoomRawArgKind;
typedef struct LoomRawArg {
  LoomRawArgKind kind;
  LoomDType dtype;         /* SCALAR: the scalar's type (its size is what the kernel receives) */
  const LoomArray *array;  /* ARRAY: a CUDA array; its data address is passed */
  union {
    int64_t i;  /* bool and signed integers */
    uint64_t u; /* unsigned integers */
    double f;   /* float16, float32, float64, bfloat16 (converted to dtype) */
    double c[2]; /* complex64, complex128: real and imaginary parts (converted to dtype); the kernel receives
                    8 or 16 bytes (cuFloatComplex, cuDoubleComplex) */
  } value;
  const void *bytes; /* BYTES: the parameter's bytes */
  size_t nbytes;     /* BYTES: their count (>= 1) */
} LoomRawArg;
/* Launches f on grid x block (all >= 1) with shared_mem bytes of dynamic shared memory on stream s
 * (NULL: the calling thread's current stream of the device). The device is the arrays' (all on one;
 * device 0 without array arguments). Asynchronous like loom_eval. */
LOOM_API LoomStatus loom_raw_function_launch(LoomRawFunction *f, const uint32_t grid[3], const uint32_t block[3],
                                             uint32_t shared_mem, LoomStream *s, int32_t nargs,
                                             const LoomRawArg *args);
/* The driver's handle of f on CUDA device `device` (a CUfunction; loads the module there first), for the
 * driver's own queries (cuFuncGetAttribute). Without a driver: LOOM_ERR_UNSUPPORTED as a launch. */
LOOM_API LoomStatus loom_raw_function_handle(LoomRawFunction *f, int32_t device, void **handle);
/* The device address and size in bytes of the module's global variable `name` (__device__ or __constant__;
 * an extern "C" name or the mangled one) on device `device`, loading the module there first (CuPy's
 * RawModule.get_global). An unknown name is LOOM_ERR_INVALID_ARGUMENT; no driver: LOOM_ERR_UNSUPPORTED. */
LOOM_API LoomStatus loom_raw_module_global(LoomRawModule *m, const char *name, int32_t device, void **ptr,
                                           size_t *bytes);
/* Like loom_raw_function_launch on a driver stream (a CUstream, e.g. another library's; NULL: the
 * legacy default stream). device: -1 for the arrays' device (else 0); otherwise it must be theirs. */
LOOM_API LoomStatus loom_raw_function_launch_on(LoomRawFunction *f, const uint32_t grid[3],
                                                const uint32_t block[3], uint32_t shared_mem, void *cuda_stream,
                                                int32_t device, int32_t nargs, const LoomRawArg *args);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_H */
