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
