/* SPDX-License-Identifier: Apache-2.0 */
/* bundle_loom.c: bundles inside libloom: the builder's entries (IR text, capture), loading bundles into a
 * context, and the hooks the kernel caches call before they compile (loom_aot.h).
 *
 * Per context (RtState.bundles): the loaded bundles in load order, the JIT switch, one symbol resolver
 * and the running capture. A host kernel is looked up by its key text (ir_print_kernel_key, the same
 * signature the caches use); the bundle's code for the best x86-64 level this CPU runs is checked
 * (CRC), mapped (runtime/bundle_hostimg.c) on first use and kept until the context goes. A GPU kernel
 * gets a cubin of its sm (or of a lower minor of the same major), else PTX for an sm it can JIT.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/bundle_build.h"

typedef struct LoadedBundle {
  struct LoadedBundle *next;
  char path[1024];
  uint8_t *bytes;
  RtBundle *b;
  RtHostImage **images; /* per code record, mapped on first use */
  uint8_t *checked;     /* per code record: blob CRC verified */
} LoadedBundle;

typedef struct RtBundles {
  pthread_mutex_t lock;
  LoadedBundle *list;
  bool no_jit;
  int cpu_level;
  RtSymbolResolver *resolver;
  LoomBundleBuilder *capture;
  int64_t used;
} RtBundles;

static RtBundles *state(LoomContext *ctx, Diag *d) {
  if (!ctx || !ctx->rt) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundles: the context has no runtime");
    return NULL;
  }
  RtBundles *s = __atomic_load_n(&ctx->rt->bundles, __ATOMIC_ACQUIRE);
  if (s) return s;
  pthread_mutex_lock(&ctx->rt->stats_lock); /* first use: made once */
  s = ctx->rt->bundles;
  if (!s) {
    s = ctx_calloc(ctx, 1, sizeof *s);
    if (s) {
      pthread_mutex_init(&s->lock, NULL);
      s->cpu_level = rt_host_cpu_level();
      __atomic_store_n(&ctx->rt->bundles, s, __ATOMIC_RELEASE);
    }
  }
  pthread_mutex_unlock(&ctx->rt->stats_lock);
  if (!s) diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle state");
  return s;
}

void rt_bundles_destroy(LoomContext *ctx) {
  RtBundles *s = ctx && ctx->rt ? ctx->rt->bundles : NULL;
  if (!s) return;
  for (LoadedBundle *l = s->list, *next; l; l = next) {
    next = l->next;
    for (int32_t i = 0; l->images && i < l->b->ncode; i++) rt_host_image_free(l->images[i]);
    ctx_free(ctx, l->images);
    ctx_free(ctx, l->checked);
    rt_bundle_free(l->b);
    ctx_free(ctx, l->bytes);
    ctx_free(ctx, l);
  }
  rt_symbol_resolver_free(s->resolver);
  pthread_mutex_destroy(&s->lock);
  ctx_free(ctx, s);
  ctx->rt->bundles = NULL;
}

/* ---- lookups ---------------------------------------------------------------------------------------- */
static char *key_of(LoomContext *ctx, const KernelIr *k, size_t *len) {
  StrBuf sb;
  sb_init(&sb, ctx);
  ir_print_kernel_key(k, &sb);
  *len = sb.len;
  return sb_take(&sb);
}

/* The best host code of kernel kr for this CPU (-1: none), and the best level it has at all. */
static int32_t pick_host(const RtBundle *b, const RtBundleKernel *kr, int cpu_level, uint32_t *have_level) {
  int32_t best = -1;
  uint32_t best_level = 0;
  *have_level = 0;
  for (uint32_t i = kr->code_first; i < kr->code_first + kr->ncode; i++) {
    const RtBundleTarget *t = &b->targets[b->codes[i].target];
    if (t->kind != RB_TARGET_HOST_X86_64) continue;
    if (t->arch > *have_level) *have_level = t->arch;
    if ((int)t->arch <= cpu_level && t->arch > best_level) {
      best = (int32_t)i;
      best_level = t->arch;
    }
  }
  return best;
}

static LoomStatus check_code(LoadedBundle *l, int32_t ci, Diag *d) {
  if (l->checked[ci]) return LOOM_OK;
  LoomStatus st = rt_bundle_code_check(l->b, &l->b->codes[ci], d);
  if (st == LOOM_OK) l->checked[ci] = 1;
  return st;
}

static LoomStatus no_jit_error(Diag *d, const KernelIr *k, const char *where) {
  return diag_error(d, LOOM_ERR_UNSUPPORTED,
                    "kernel %s (ndim %d, %d buffers, index %d) is not in the loaded bundles%s, and JIT compilation is "
                    "off (the bundles were loaded with jit off): add its signature to a bundle, or turn JIT back on",
                    k->name, k->ndim, k->nbuf, k->index_bits, where);
}

LoomStatus rt_bundles_find_host(LoomContext *ctx, const KernelIr *k, CgCompiled *out, bool *found, Diag *d) {
  *found = false;
  RtBundles *s = ctx && ctx->rt ? __atomic_load_n(&ctx->rt->bundles, __ATOMIC_ACQUIRE) : NULL;
  if (!s) return LOOM_OK;
  pthread_mutex_lock(&s->lock);
  if (!s->list) {
    bool no_jit = s->no_jit;
    pthread_mutex_unlock(&s->lock);
    return no_jit ? no_jit_error(d, k, "") : LOOM_OK;
  }
  size_t len = 0;
  char *key = key_of(ctx, k, &len);
  LoomStatus st = key ? LOOM_OK : diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel key");
  char other[600] = "";
  for (LoadedBundle *l = s->list; l && st == LOOM_OK && !*found; l = l->next) {
    const RtBundleKernel *kr = rt_bundle_find_key(l->b, key, len);
    if (!kr) continue;
    uint32_t have = 0;
    int32_t ci = pick_host(l->b, kr, s->cpu_level, &have);
    if (ci < 0) {
      if (have) {
        char missing[200];
        rt_host_cpu_missing((int)have, missing, sizeof missing);
        snprintf(other, sizeof other, " for this CPU (%.200s has it for %s; this CPU lacks %.200s)", l->path,
                 rt_host_level_name((int)have), missing);
      }
      continue;
    }
    if (!l->images[ci]) {
      if (!s->resolver) st = rt_symbol_resolver_create(ctx, &s->resolver, d);
      if (st == LOOM_OK) st = check_code(l, ci, d);
      if (st == LOOM_OK) st = rt_host_image_load(ctx, s->resolver, l->b->codes[ci].blob, l->b->codes[ci].blob_size, l->path,
                                                  &l->images[ci], d);
      if (st != LOOM_OK) break;
    }
    const RtBundleCode *c = &l->b->codes[ci];
    const RtHostImage *im = l->images[ci];
    memset(out, 0, sizeof *out);
    out->run = (CgRunFn)(uintptr_t)rt_host_image_symbol(im, c->facts[RB_HOST_RUN]);
    if (c->facts[RB_HOST_PARTIAL] != RB_NO_SYMBOL) {
      out->partial = (CgPartialFn)(uintptr_t)rt_host_image_symbol(im, c->facts[RB_HOST_PARTIAL]);
      out->finish = (CgFinishFn)(uintptr_t)rt_host_image_symbol(im, c->facts[RB_HOST_FINISH]);
      out->acc_size = (int32_t)c->facts[RB_HOST_ACC_SIZE];
    }
    if (c->facts[RB_HOST_COL_PHASES]) {
      out->colpart = (CgColFn)(uintptr_t)rt_host_image_symbol(im, c->facts[RB_HOST_COLPART]);
      out->colfinish = (CgColFn)(uintptr_t)rt_host_image_symbol(im, c->facts[RB_HOST_COLFINISH]);
      out->col_phases = c->facts[RB_HOST_COL_PHASES];
      out->acc_size = (int32_t)c->facts[RB_HOST_ACC_SIZE];
    }
    if (!out->run || (c->facts[RB_HOST_PARTIAL] != RB_NO_SYMBOL && (!out->partial || !out->finish)) ||
        (out->col_phases && (!out->colpart || !out->colfinish))) {
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: kernel %s: an entry point lies outside its code: corrupted",
                      l->path, kr->name);
      memset(out, 0, sizeof *out);
      break;
    }
    *found = true;
    s->used++;
  }
  if (st == LOOM_OK && !*found && s->no_jit) st = no_jit_error(d, k, other);
  pthread_mutex_unlock(&s->lock);
  ctx_free(ctx, key);
  return st;
}

/* The device's chip as a bundle's target arch: sm_90 -> 90, gfx90a -> 0x90a; 0 when unknown. */
static uint32_t device_arch(int binary, const char *arch) {
  const char *p = binary == CG_BINARY_PTX ? "sm_" : binary == CG_BINARY_AMDGPU ? "gfx" : NULL;
  if (!p || !arch || strncmp(arch, p, 3) || !arch[3]) return 0;
  char *end;
  unsigned long v = strtoul(arch + 3, &end, binary == CG_BINARY_PTX ? 10 : 16);
  return (*end && *end != ':') || v > 0xffff ? 0 : (uint32_t)v;
}

LoomStatus rt_bundles_find_gpu(LoomContext *ctx, const KernelIr *k, int binary, const char *arch, CgGpuKernel *gk,
                               const void **image, size_t *size, bool *found, Diag *d) {
  *found = false;
  int sm = binary == CG_BINARY_PTX ? (int)device_arch(binary, arch) : 0;
  uint32_t gfx = binary == CG_BINARY_AMDGPU ? device_arch(binary, arch) : 0;
  RtBundles *s = ctx && ctx->rt ? __atomic_load_n(&ctx->rt->bundles, __ATOMIC_ACQUIRE) : NULL;
  if (!s) return LOOM_OK;
  pthread_mutex_lock(&s->lock);
  size_t len = 0;
  char *key = s->list ? key_of(ctx, k, &len) : NULL;
  LoomStatus st = LOOM_OK;
  if (s->list && !key) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel key");
  for (LoadedBundle *l = s->list; l && key && st == LOOM_OK && !*found; l = l->next) {
    const RtBundleKernel *kr = rt_bundle_find_key(l->b, key, len);
    if (!kr) continue;
    int32_t best = -1, score = -1;
    for (uint32_t i = kr->code_first; i < kr->code_first + kr->ncode; i++) {
      const RtBundleTarget *t = &l->b->targets[l->b->codes[i].target];
      int32_t sc = -1; /* NVIDIA: exact cubin > same-major cubin > PTX, each preferring the newest arch; AMD: exact */
      if (sm <= 0 && gfx == 0) break;
      if (t->kind == RB_TARGET_AMDGPU && gfx && t->arch == gfx) sc = 3000;
      else if (sm <= 0) sc = -1;
      else if (t->kind == RB_TARGET_CUDA_CUBIN && (int)t->arch == sm) sc = 3000;
      else if (t->kind == RB_TARGET_CUDA_CUBIN && (int)t->arch / 10 == sm / 10 && (int)t->arch < sm) sc = 2000 + (int)t->arch;
      else if (t->kind == RB_TARGET_CUDA_PTX && (int)t->arch <= sm) sc = 1000 + (int)t->arch;
      if (sc > score) {
        score = sc;
        best = (int32_t)i;
      }
    }
    if (best < 0) continue;
    const RtBundleCode *c = &l->b->codes[best];
    st = check_code(l, best, d);
    if (st != LOOM_OK) break;
    if (l->b->targets[c->target].kind == RB_TARGET_CUDA_PTX && c->blob[c->blob_size - 1] != 0) {
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: the PTX of kernel %s is not NUL-terminated", l->path, kr->name);
      break;
    }
    memset(gk, 0, sizeof *gk);
    gk->strategy = (int32_t)c->facts[RB_GPU_STRATEGY];
    gk->block = (int32_t)c->facts[RB_GPU_BLOCK];
    gk->vec_lanes = (int32_t)c->facts[RB_GPU_VEC_LANES];
    gk->vec_align = (int32_t)c->facts[RB_GPU_VEC_ALIGN];
    gk->acc_size = (int32_t)c->facts[RB_GPU_ACC_SIZE];
    gk->nwords = (int32_t)c->facts[RB_GPU_NWORDS];
    gk->cache_k = (int32_t)c->facts[RB_GPU_CACHE_K];
    gk->part_lanes = (int32_t)c->facts[RB_GPU_PART_LANES];
    gk->cache_lanes = (int32_t)c->facts[RB_GPU_CACHE_LANES];
    gk->entries_all = c->facts[RB_GPU_ENTRIES_ALL];
    gk->entries = c->facts[RB_GPU_ENTRIES];
    gk->wave = (int32_t)c->facts[RB_GPU_WAVE];
    gk->split_reduce = c->facts[RB_GPU_SPLIT_REDUCE];
    gk->split_map = c->facts[RB_GPU_SPLIT_MAP];
    gk->kind = l->b->targets[c->target].kind == RB_TARGET_AMDGPU ? CG_BINARY_AMDGPU : CG_BINARY_PTX;
    for (int i = 0; i < CG_NENTRY; i++) snprintf(cg_gpu_entry_name(gk, i), 64, "%s", c->names[i]);
    *image = c->blob;
    *size = (size_t)c->blob_size;
    *found = true;
    s->used++;
  }
  if (st == LOOM_OK && !*found && s->no_jit) st = no_jit_error(d, k, " for this GPU");
  pthread_mutex_unlock(&s->lock);
  ctx_free(ctx, key);
  return st;
}

bool rt_bundles_active(LoomContext *ctx) {
  RtBundles *s = ctx && ctx->rt ? __atomic_load_n(&ctx->rt->bundles, __ATOMIC_ACQUIRE) : NULL;
  if (!s) return false;
  pthread_mutex_lock(&s->lock);
  bool on = s->list || s->no_jit || s->capture;
  pthread_mutex_unlock(&s->lock);
  return on;
}

/* ---- capture ---------------------------------------------------------------------------------------- */
void rt_bundles_capture(LoomContext *ctx, const KernelIr *k) {
  RtBundles *s = ctx && ctx->rt ? __atomic_load_n(&ctx->rt->bundles, __ATOMIC_ACQUIRE) : NULL;
  if (!s || !__atomic_load_n(&s->capture, __ATOMIC_ACQUIRE)) return;
  KernelIr generic; /* a kernel specialized on its sizes (a plan made before the capture began): its generic
                     * form, which runs at any size (same values) */
  if (k->row_extent || k->walk_cols || k->col_stride) {
    generic = *k;
    generic.row_extent = 0;
    generic.walk_cols = 0;
    generic.col_stride = 0;
    k = &generic;
  }
  pthread_mutex_lock(&s->lock);
  LoomBundleBuilder *b = s->capture;
  if (b) {
    pthread_mutex_lock(&b->lock);
    size_t len = 0;
    char *key = key_of(ctx, k, &len);
    bool seen = !key;
    for (int32_t i = b->cap_first; i < b->nentry && !seen; i++) seen = !strcmp(b->cap_keys[i - b->cap_first], key);
    char **keys = seen ? NULL : ctx_alloc(ctx, ((size_t)(b->nentry - b->cap_first) + 1) * sizeof *keys);
    if (keys) {
      char tmp[64];
      snprintf(tmp, sizeof tmp, "capture_%d", (int)(b->nentry - b->cap_first));
      Diag d = {.status = LOOM_OK};
      if (rt_bundle_builder_add(b, tmp, k, &d) == LOOM_OK) {
        if (b->nentry - 1 > b->cap_first) memcpy(keys, b->cap_keys, (size_t)(b->nentry - 1 - b->cap_first) * sizeof *keys);
        keys[b->nentry - 1 - b->cap_first] = key;
        key = NULL;
        ctx_free(ctx, b->cap_keys);
        b->cap_keys = keys;
      } else {
        ctx_free(ctx, keys);
      }
    }
    ctx_free(ctx, key);
    pthread_mutex_unlock(&b->lock);
  }
  pthread_mutex_unlock(&s->lock);
}

LoomStatus rt_bundles_set_capture(LoomContext *ctx, LoomBundleBuilder *b, Diag *d) {
  RtBundles *s = state(ctx, d);
  if (!s) return d->status;
  pthread_mutex_lock(&s->lock);
  LoomStatus st = LOOM_OK;
  if (b && s->capture && s->capture != b)
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle capture: another builder is capturing on this context");
  else __atomic_store_n(&s->capture, b, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&s->lock);
  return st;
}

/* ---- public API: the builder ------------------------------------------------------------------------- */
LOOM_API LoomStatus loom_bundle_builder_create(LoomContext *ctx, LoomBundleBuilder **out) {
  if (!ctx || !out) return LOOM_ERR_INVALID_ARGUMENT;
  *out = NULL;
  LoomBundleBuilder *b = ctx_calloc(ctx, 1, sizeof *b);
  if (!b) return LOOM_ERR_OUT_OF_MEMORY;
  b->ctx = ctx;
  arena_init(&b->arena, ctx);
  pthread_mutex_init(&b->lock, NULL);
  *out = b;
  return LOOM_OK;
}

static void free_cap_keys(LoomBundleBuilder *b) {
  for (int32_t i = b->cap_first; b->cap_keys && i < b->nentry; i++) ctx_free(b->ctx, b->cap_keys[i - b->cap_first]);
  ctx_free(b->ctx, b->cap_keys);
  b->cap_keys = NULL;
}

LOOM_API void loom_bundle_builder_destroy(LoomBundleBuilder *b) {
  if (!b) return;
  if (b->capturing) {
    Diag d = {.status = LOOM_OK};
    rt_bundles_set_capture(b->ctx, NULL, &d);
  }
  free_cap_keys(b);
  rt_fuse_writer_free(b->fuse);
  ctx_free(b->ctx, b->entries);
  arena_free_all(&b->arena);
  pthread_mutex_destroy(&b->lock);
  ctx_free(b->ctx, b);
}

LOOM_API int32_t loom_bundle_builder_count(const LoomBundleBuilder *b) { return b ? b->nentry : 0; }

/* Whether a (trimmed) line belongs to a kernel block: "buf ...", "%N = ...", "phase ...". */
static bool kernel_body_line(const char *p) {
  return !strncmp(p, "buf ", 4) || !strncmp(p, "phase ", 6) || (p[0] == '%' && p[1] >= '0' && p[1] <= '9');
}

LOOM_API LoomStatus loom_bundle_builder_add_ir(LoomBundleBuilder *b, const char *text, const char *name, const char *what) {
  if (!b) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  what = what ? what : "kernel IR text";
  if (!text || b->capturing) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "add_ir: %s", text ? "a capture is running" : "text is NULL");
    return ctx_report(b->ctx, &d);
  }
  /* split into kernel blocks: a "kernel" line and its body lines; anything else (comments, schedule
   * "run"/"temp" lines, graph IR) is skipped */
  StrBuf blocks[1];
  sb_init(blocks, b->ctx);
  int32_t nk = 0, first = b->nentry;
  int first_line[4096];
  int line = 0;
  bool in = false;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    line++;
    const char *q = p;
    while (q < p + n && (*q == ' ' || *q == '\t')) q++;
    if (!strncmp(q, "kernel ", 7)) {
      if (nk == 4096) break;
      first_line[nk++] = line;
      sb_printf(blocks, "%s%.*s\n", nk > 1 ? "\x01" : "", (int)(p + n - q), q);
      in = true;
    } else if (in && kernel_body_line(q)) {
      sb_printf(blocks, "  %.*s\n", (int)(p + n - q), q);
    } else if (q < p + n) {
      in = false;
    }
    p = e ? e + 1 : p + n;
  }
  char *all = sb_take(blocks);
  LoomStatus st = all ? LOOM_OK : diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel IR text");
  if (st == LOOM_OK && nk == 0) st = diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "%s: no \"kernel\" block in the text", what);
  char *cur = all;
  for (int32_t i = 0; st == LOOM_OK && i < nk; i++) {
    char *next = strchr(cur, '\x01');
    if (next) *next = 0;
    Arena a;
    arena_init(&a, b->ctx);
    KernelIr *k = NULL;
    Diag pd = {.status = LOOM_OK};
    st = ir_parse_kernel(&a, cur, &k, &pd);
    if (st != LOOM_OK) {
      diag_error(&d, st, "%s: kernel at line %d: %s%s", what, first_line[i], pd.msg,
                 strstr(cur, "user ") ? " (user-kernel snippets cannot be read back from text; bundle them by capture)" : "");
    } else {
      char nm[80];
      if (name) snprintf(nm, sizeof nm, nk > 1 ? "%s_%d" : "%s", name, (int)i);
      else snprintf(nm, sizeof nm, "%s", k->name[0] ? k->name : "kernel");
      st = rt_bundle_builder_add(b, nm, k, &d);
    }
    arena_free_all(&a);
    cur = next ? next + 1 : cur + strlen(cur);
  }
  ctx_free(b->ctx, all);
  if (st != LOOM_OK) {
    b->nentry = first; /* all or nothing */
    return ctx_report(b->ctx, &d);
  }
  return LOOM_OK;
}

LOOM_API LoomStatus loom_bundle_builder_capture_begin(LoomBundleBuilder *b, const char *name) {
  if (!b) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  LoomStatus st = LOOM_OK;
  if (b->capturing) st = diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "capture_begin: a capture is running already");
  else if (!rt_bundle_c_identifier(name))
    st = diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "capture_begin: entry name '%.80s' is not a C identifier", name ? name : "(null)");
  if (st == LOOM_OK) st = rt_bundles_set_capture(b->ctx, b, &d);
  if (st != LOOM_OK) return ctx_report(b->ctx, &d);
  snprintf(b->cap_name, sizeof b->cap_name, "%s", name);
  b->cap_first = b->nentry;
  b->capturing = true;
  return LOOM_OK;
}

LOOM_API LoomStatus loom_bundle_builder_capture_end(LoomBundleBuilder *b, int32_t *nkernels) {
  if (!b) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!b->capturing) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "capture_end: no capture is running");
    return ctx_report(b->ctx, &d);
  }
  rt_bundles_set_capture(b->ctx, NULL, &d);
  pthread_mutex_lock(&b->lock);
  b->capturing = false;
  int32_t n = b->nentry - b->cap_first;
  LoomStatus st = LOOM_OK;
  if (n == 0) st = diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "capture of '%s': no kernel ran on the host (pass host arrays)", b->cap_name);
  for (int32_t i = 0; st == LOOM_OK && i < n; i++) {
    char nm[80];
    snprintf(nm, sizeof nm, n > 1 ? "%s_%d" : "%s", b->cap_name, (int)i);
    if (!rt_bundle_c_identifier(nm)) st = diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "capture: entry name '%s' is too long", nm);
    for (int32_t j = 0; st == LOOM_OK && j < b->cap_first; j++)
      if (!strcmp(b->entries[j].name, nm))
        st = diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "capture: entry name '%s' is used twice; give each signature its own name", nm);
    if (st == LOOM_OK) snprintf(b->entries[b->cap_first + i].name, sizeof b->entries[0].name, "%.63s", nm);
  }
  free_cap_keys(b);
  if (st != LOOM_OK) b->nentry = b->cap_first;
  pthread_mutex_unlock(&b->lock);
  if (nkernels) *nkernels = st == LOOM_OK ? n : 0;
  return st == LOOM_OK ? LOOM_OK : ctx_report(b->ctx, &d);
}

/* ---- public API: loading ------------------------------------------------------------------------------ */
static LoomStatus read_all(LoomContext *ctx, const char *path, uint8_t **out, size_t *size, Diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cannot open bundle %s: %s", path, strerror(errno));
  uint8_t *p = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap) {
      size_t nc = cap ? 2 * cap : 65536;
      uint8_t *q = ctx_alloc(ctx, nc);
      if (!q) {
        fclose(f);
        ctx_free(ctx, p);
        return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory reading bundle %s", path);
      }
      if (n) memcpy(q, p, n);
      ctx_free(ctx, p);
      p = q;
      cap = nc;
    }
    size_t got = fread(p + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  bool err = ferror(f);
  fclose(f);
  if (err) {
    ctx_free(ctx, p);
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cannot read bundle %s", path);
  }
  *out = p;
  *size = n;
  return LOOM_OK;
}

LOOM_API LoomStatus loom_bundle_load(LoomContext *ctx, const char *path, int jit) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!path) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_bundle_load: path is NULL");
    return ctx_report(ctx, &d);
  }
  RtBundles *s = state(ctx, &d);
  if (!s) return ctx_report(ctx, &d);
  uint8_t *bytes = NULL;
  size_t size = 0;
  LoomStatus st = read_all(ctx, path, &bytes, &size, &d);
  LoadedBundle *l = st == LOOM_OK ? ctx_calloc(ctx, 1, sizeof *l) : NULL;
  if (st == LOOM_OK && !l) st = diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle");
  if (st == LOOM_OK) {
    snprintf(l->path, sizeof l->path, "%s", path);
    l->bytes = bytes;
    bytes = NULL;
    st = rt_bundle_parse(ctx, l->bytes, size, path, &l->b, &d);
  }
  if (st == LOOM_OK) {
    l->images = ctx_calloc(ctx, (size_t)l->b->ncode + 1, sizeof *l->images);
    l->checked = ctx_calloc(ctx, (size_t)l->b->ncode + 1, 1);
    if (!l->images || !l->checked) st = diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle");
  }
  if (st == LOOM_OK) { /* a bundle with host code must have some for this CPU */
    uint32_t have = 0;
    bool usable = false;
    for (int32_t i = 0; i < l->b->ntarget; i++)
      if (l->b->targets[i].kind == RB_TARGET_HOST_X86_64) {
        if (l->b->targets[i].arch > have) have = l->b->targets[i].arch;
        usable |= (int)l->b->targets[i].arch <= s->cpu_level;
      }
    if (have && !usable) {
      char missing[200];
      rt_host_cpu_missing(s->cpu_level < 1 ? 1 : (int)have, missing, sizeof missing);
      st = diag_error(&d, LOOM_ERR_UNSUPPORTED,
                      "bundle %s has host code for %s at best, which this CPU cannot run (%s%s); rebuild it with "
                      "--target host (x86-64 baseline)", path, rt_host_level_name((int)have),
                      s->cpu_level < 1 ? "not an x86-64 CPU" : "missing ", s->cpu_level < 1 ? "" : missing);
    }
  }
  if (st != LOOM_OK) {
    if (l) {
      rt_bundle_free(l->b);
      ctx_free(ctx, l->images);
      ctx_free(ctx, l->checked);
      ctx_free(ctx, l->bytes);
      ctx_free(ctx, l);
    }
    ctx_free(ctx, bytes);
    return ctx_report(ctx, &d);
  }
  pthread_mutex_lock(&s->lock);
  LoadedBundle **tail = &s->list;
  while (*tail) tail = &(*tail)->next;
  *tail = l;
  s->no_jit = !jit;
  pthread_mutex_unlock(&s->lock);
  return LOOM_OK;
}

const RtFuseRecord *rt_bundles_find_fuse(LoomContext *ctx, const char *identity, int32_t nargs, const RtFuseArg *args) {
  RtBundles *s = ctx && ctx->rt ? __atomic_load_n(&ctx->rt->bundles, __ATOMIC_ACQUIRE) : NULL;
  if (!s) return NULL;
  const RtFuseRecord *r = NULL;
  pthread_mutex_lock(&s->lock);
  for (LoadedBundle *l = s->list; l && !r; l = l->next) r = rt_bundle_find_fuse(l->b, identity, nargs, args);
  pthread_mutex_unlock(&s->lock);
  return r;
}

LOOM_API int32_t loom_bundle_fuse_count(LoomContext *ctx) {
  RtBundles *s = ctx && ctx->rt ? __atomic_load_n(&ctx->rt->bundles, __ATOMIC_ACQUIRE) : NULL;
  int32_t n = 0;
  if (!s) return 0;
  pthread_mutex_lock(&s->lock);
  for (LoadedBundle *l = s->list; l; l = l->next) n += l->b->nfuse;
  pthread_mutex_unlock(&s->lock);
  return n;
}

LOOM_API LoomStatus loom_bundle_set_jit(LoomContext *ctx, int jit) {
  Diag d = {.status = LOOM_OK};
  RtBundles *s = state(ctx, &d);
  if (!s) return ctx ? ctx_report(ctx, &d) : LOOM_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&s->lock);
  s->no_jit = !jit;
  pthread_mutex_unlock(&s->lock);
  return LOOM_OK;
}

LOOM_API LoomStatus loom_bundle_stats(LoomContext *ctx, int32_t *bundles, int64_t *kernels_used) {
  Diag d = {.status = LOOM_OK};
  RtBundles *s = state(ctx, &d);
  if (!s) return ctx ? ctx_report(ctx, &d) : LOOM_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&s->lock);
  int32_t n = 0;
  for (LoadedBundle *l = s->list; l; l = l->next) n++;
  if (bundles) *bundles = n;
  if (kernels_used) *kernels_used = s->used;
  pthread_mutex_unlock(&s->lock);
  return LOOM_OK;
}
