/* SPDX-License-Identifier: Apache-2.0 */
/* loom_aot.h: ahead-of-time kernel bundles in libloom: building them (what `loomc` and
 * `python -m loom.aot` call) and loading them into a context so that their kernels are never compiled.
 * Running a bundle WITHOUT libloom (no LLVM, no compiler): include/loom/loomrt.h and libloomrt.
 *
 * A bundle maps kernel signatures (the kernel IR key: structure, dtypes, rank, layout classes, index
 * width; sizes stay run-time parameters) to code per target: host x86-64 at three psABI levels
 * (baseline, AVX2 = x86-64-v3, AVX-512 = x86-64-v4; the loader picks by CPUID), NVIDIA cubins per
 * sm_XX (with the toolkit's ptxas at build time) and PTX for newer GPUs, AMD code objects per gfx
 * (gfx90a, gfx942, gfx1100, ...; loaded by libloom's AMD device for exactly that chip). Each kernel is
 * reachable by a C name (an "entry").
 */
#ifndef LOOM_AOT_H
#define LOOM_AOT_H

#include "loom/loom.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LoomBundleBuilder LoomBundleBuilder;

LOOM_API LoomStatus loom_bundle_builder_create(LoomContext *ctx, LoomBundleBuilder **out);
LOOM_API void loom_bundle_builder_destroy(LoomBundleBuilder *b);
/* Adds the kernels of kernel IR text (one or more "kernel ..." blocks, as LOOM_DUMP_KERNELS prints
 * them and ir/parse.c reads them; user-kernel snippets cannot be read back from text: add those by
 * capture). Each kernel becomes an entry named `name` (a C identifier; with several kernels name_0,
 * name_1, ...), or, when name is NULL, after the kernel's own name in the text. `what` names the input
 * in messages (a file name; may be NULL). */
LOOM_API LoomStatus loom_bundle_builder_add_ir(LoomBundleBuilder *b, const char *text, const char *name,
                                               const char *what);
/* Capture: between begin and end, every kernel the builder's context runs on the host is added (once
 * per kernel) as an entry named `name` (name_0, name_1, ... when several). Run the computation on small
 * host arrays of the signature's dtypes, ranks and layouts: the kernels do not depend on the sizes
 * (index widths are added for both 32 and 64 bits). One capture at a time per context. */
LOOM_API LoomStatus loom_bundle_builder_capture_begin(LoomBundleBuilder *b, const char *name);
LOOM_API LoomStatus loom_bundle_builder_capture_end(LoomBundleBuilder *b, int32_t *nkernels);
/* Number of entries so far. */
LOOM_API int32_t loom_bundle_builder_count(const LoomBundleBuilder *b);

typedef struct LoomBundleOptions {
  /* Comma-separated: host (x86-64), host-avx2 (x86-64-v3), host-avx512 (x86-64-v4), host-all, sm_XX
   * (a cubin; needs ptxas), ptx (PTX for the newest sm listed, else sm_90), ptx_sm_XX, gfxNNN (AMD),
   * all (the three host levels, sm_80 and sm_90 cubins when ptxas is found, and PTX). NULL: host-all. */
  const char *targets;
  int32_t jobs;          /* parallel compiles; 0: the number of CPUs */
  int32_t progress;      /* progress on stderr: -1 when stderr is a terminal, 0 off, 1 on */
  int32_t summary;       /* 1: a table (entry, kernel, targets, bytes) on stderr at the end */
  int32_t no_sleef;      /* 1: host code calls scalar libm instead of SLEEF's vector functions */
  int32_t index_widths;  /* 0 or 3: 32- and 64-bit indexing; 1: 32 only; 2: 64 only */
  const char *ptxas;     /* NULL: $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, then PATH */
  const char *producer;  /* recorded in the bundle ("loomc"); NULL: "libloom" */
} LoomBundleOptions;
/* Compiles every entry for every target and writes the bundle to path (atomically: a temporary file
 * renamed). */
LOOM_API LoomStatus loom_bundle_builder_write(LoomBundleBuilder *b, const LoomBundleOptions *options,
                                              const char *path);
/* Writes c_path and h_path: the bundle at bundle_path embedded as bytes, and one typed C function per
 * entry, `LoomStatus <entry>(LoomrtStream *s, <one pointer per buffer>, <sizes>, <strides of strided
 * buffers>)`, calling libloomrt. prefix names the embedded bundle (`<prefix>_bundle`) and the header
 * guard; a C identifier. */
LOOM_API LoomStatus loom_bundle_emit_c(LoomContext *ctx, const char *bundle_path, const char *c_path,
                                       const char *h_path, const char *prefix);
/* A text description of a bundle file (targets, entries, kernels, sizes); free with loom_free_string.
 * Also checks every blob's checksum. */
LOOM_API LoomStatus loom_bundle_describe(LoomContext *ctx, const char *path, char **text);

/* ---- @loom.fuse signatures without tracing (bundle format 1.2, section FUSE) ----------------------------
 * A bundled @loom.fuse signature carries the graph its trace built, in a size-free form (no sizes: they
 * come back from the call's arrays through the graph constructors' broadcasting and reduction rules), so
 * that a call with any sizes is rebuilt in C without running the Python function. An argument of such a
 * signature: */
enum { LOOM_FUSE_ARRAY = 0, LOOM_FUSE_BOOL = 1, LOOM_FUSE_INT = 2, LOOM_FUSE_FLOAT = 3, LOOM_FUSE_COMPLEX = 4 };
typedef struct LoomFuseArg {
  int32_t kind;    /* LOOM_FUSE_*: an array, or a Python scalar (a NEP 50 weak value) */
  int32_t dtype;   /* arrays: LoomDType */
  int32_t ndim;    /* arrays */
  LoomNode node;   /* arrays: the argument's input node (its placeholder) in the graph */
  int64_t i;       /* bool (0 / 1) and int */
  double re, im;   /* float (re) and complex */
} LoomFuseArg;
/* Adds a @loom.fuse signature to the bundle from two traces of the function: trace A (graph ga, its
 * arguments args_a, output nodes outs_a: the results, then the new values of the nwrite arguments
 * write_args the function updates in place) and trace B, made with other sizes (every size > 1 changed)
 * and other scalar values. The record is A's graph with sizes dropped and each constant that is a scalar
 * argument's value bound to it; it is kept only if rebuilding it with B's arrays and scalars gives B's
 * graph exactly. LOOM_ERR_UNSUPPORTED (loom_last_error says why) when the graph depends on the sizes or
 * values in a way the record cannot express (a literal shape: a reshape other than adding or dropping
 * axes of size 1, a slice other than whole axes (forward or reversed), broadcast_to; a constant
 * computed from a size or a scalar; an array that is not an argument): such a signature still runs from
 * the bundle's kernels, after a trace. name: for messages and describe; identity: what a call must match
 * (the Python side: module, qualified name, a digest of the code). A second record with the same
 * identity and argument kinds, dtypes and ranks is ignored. */
LOOM_API LoomStatus loom_bundle_builder_add_fuse(LoomBundleBuilder *b, const char *name, const char *identity,
                                                 int32_t nargs, LoomGraph *ga, const LoomFuseArg *args_a,
                                                 const LoomNode *outs_a, LoomGraph *gb, const LoomFuseArg *args_b,
                                                 const LoomNode *outs_b, int32_t nout, int32_t nwrite,
                                                 const int32_t *write_args, int is_tuple);
/* Rebuilds a call from the loaded bundles: when one has a record for identity and the arguments' kinds,
 * dtypes and ranks, adds its nodes to g (whose array arguments' placeholders are args[j].node) and sets
 * *found = 1, the output nodes outs[0, *nout) (cap at least 256), *nwrite and write_args[0, *nwrite) (as
 * loom_bundle_builder_add_fuse takes them) and *is_tuple. *found = 0 when no bundle has the signature.
 * An error (the call's sizes do not broadcast, a Python int out of an integer dtype's range, ...) leaves
 * the added nodes unused: the caller traces the function instead, which reports the error as usual. */
LOOM_API LoomStatus loom_bundle_fuse_build(LoomGraph *g, const char *identity, int32_t nargs, const LoomFuseArg *args,
                                           LoomNode *outs, int32_t cap, int32_t *nout, int32_t *nwrite,
                                           int32_t *write_args, int *is_tuple, int *found);
/* Whether a loaded bundle has a record for identity and the arguments' kinds, dtypes and ranks (their
 * nodes are not read): 1 or 0. What a caller asks before it makes a graph for loom_bundle_fuse_build. */
LOOM_API int loom_bundle_fuse_find(LoomContext *ctx, const char *identity, int32_t nargs, const LoomFuseArg *args);
/* Number of @loom.fuse records in the bundles loaded into ctx (0: no call needs to ask). */
LOOM_API int32_t loom_bundle_fuse_count(LoomContext *ctx);

/* Loads a bundle into ctx: from now on a host kernel whose signature is in a loaded bundle runs the
 * bundle's code for this CPU and is never compiled (loom_get_stats counts it as a cache hit, not a
 * compile). jit != 0: kernels outside the bundles JIT-compile as before; jit == 0 (production mode):
 * they fail with LOOM_ERR_UNSUPPORTED naming the kernel. The file is read once; several bundles may be
 * loaded (the first that has a kernel wins). */
LOOM_API LoomStatus loom_bundle_load(LoomContext *ctx, const char *path, int jit);
/* Turns JIT compilation of kernels outside the loaded bundles on or off. */
LOOM_API LoomStatus loom_bundle_set_jit(LoomContext *ctx, int jit);
/* Number of bundles loaded into ctx, and of their kernels used so far (may be NULL). */
LOOM_API LoomStatus loom_bundle_stats(LoomContext *ctx, int32_t *bundles, int64_t *kernels_used);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_AOT_H */
