/* SPDX-License-Identifier: Apache-2.0 */
/* bundle_build.h: libloom's side of AOT bundles (runtime/bundle_build.c, bundle_loom.c, bundle_emit_c.c):
 * the builder behind loom_aot.h, the per-context state of loaded bundles, and the two hooks the host
 * runtime calls (the kernel cache before it compiles, the schedule runner for captures). */
#ifndef LOOM_RUNTIME_BUNDLE_BUILD_H
#define LOOM_RUNTIME_BUNDLE_BUILD_H

#include <pthread.h>

#include "loom/loom_aot.h"
#include "runtime/bundle.h"
#include "runtime/bundle_fuse.h"
#include "runtime/runtime.h"

typedef struct BuildEntry {
  char name[64];
  KernelIr *ir; /* in the builder's arena */
} BuildEntry;

struct LoomBundleBuilder {
  LoomContext *ctx;
  Arena arena;
  pthread_mutex_t lock; /* capture may be fed from several threads of one evaluation */
  BuildEntry *entries;
  int32_t nentry, capentry;
  bool capturing;
  char cap_name[64];
  int32_t cap_first; /* entries [cap_first, nentry) belong to the running capture */
  char **cap_keys;   /* their keys, for deduplication */
  RtFuseWriter *fuse; /* @loom.fuse signatures (loom_bundle_builder_add_fuse), made on first use */
};

/* A C identifier of at most 63 characters. */
bool rt_bundle_c_identifier(const char *s);
/* Appends an entry (the kernel is cloned into the builder's arena). */
LoomStatus rt_bundle_builder_add(LoomBundleBuilder *b, const char *name, const KernelIr *k, Diag *d);

/* ---- per-context state (bundle_loom.c) ---------------------------------------------------------------- */
void rt_bundles_destroy(LoomContext *ctx);
/* The cache's hook before compiling k: *found is set when a loaded bundle has k's key and this CPU's
 * code for it; then *out holds its entry points (impl NULL: nothing to release). When no bundle has it
 * and JIT compilation is off, returns LOOM_ERR_UNSUPPORTED naming the kernel. */
LoomStatus rt_bundles_find_host(LoomContext *ctx, const KernelIr *k, CgCompiled *out, bool *found, Diag *d);
/* The GPU runtime's hook before compiling k for a device whose binaries are of kind `binary` (CgBinaryKind)
 * and whose chip is `arch` (RtGpuDeviceInfo.arch: "sm_90"; "gfx942:sramecc+:xnack-"). *found when a
 * loaded bundle has code for it: NVIDIA, a cubin for that sm (or else PTX for an sm <= it); AMD, a code
 * object for exactly that gfx. *image (cubin, NUL-terminated PTX, code object) lives as long as the
 * bundle, *gk gets the launch facts and entry names. Another binary kind finds nothing.
 * LOOM_ERR_UNSUPPORTED when not found and JIT off. */
LoomStatus rt_bundles_find_gpu(LoomContext *ctx, const KernelIr *k, int binary, const char *arch, CgGpuKernel *gk,
                               const void **image, size_t *size, bool *found, Diag *d);
/* The schedule runner's hook: adds k to the running capture of ctx (a no-op without one). */
void rt_bundles_capture(LoomContext *ctx, const KernelIr *k);
/* Whether bundles are in play on ctx: loaded, capturing, or JIT turned off. */
bool rt_bundles_active(LoomContext *ctx);
LoomStatus rt_bundles_set_capture(LoomContext *ctx, LoomBundleBuilder *b, Diag *d);

/* The first loaded bundle's FUSE record for identity and args, or NULL (records live as long as ctx). */
const RtFuseRecord *rt_bundles_find_fuse(LoomContext *ctx, const char *identity, int32_t nargs, const RtFuseArg *args);

#endif /* LOOM_RUNTIME_BUNDLE_BUILD_H */
