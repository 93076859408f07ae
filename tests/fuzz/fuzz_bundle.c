/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_bundle: libFuzzer target for the bundle loader (runtime/bundle_format.c, bundle_hostimg.c): the
 * code that reads untrusted bundle files in libloom and libloomrt.
 *
 * Each input is tried twice: as it is (checksums and all), and with every checksum recomputed first
 * (when the header and section table lie inside the input), so that mutations reach the structural
 * checks behind the CRCs instead of stopping at them. A bundle that parses has every entry and key
 * looked up, every blob checked, and every host image checked and loaded (mapped, imports resolved,
 * relocations written; never executed), and every @loom.fuse record of a FUSE section (format 1.2) rebuilt
 * into a graph for arrays of a few sizes (rt_fuse_replay: the code libloom runs on a call).
 * Anything but a clean error is a bug: ASan and UBSan report it.
 * Seeds: real bundles loomc made at build time (tests/fuzz/CMakeLists.txt).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/bundle.h"
#include "runtime/bundle_fuse.h"

static LoomContext *ctx(void) {
  static LoomContext c;
  if (!c.alloc.alloc) c.alloc = *ir_default_allocator();
  return &c;
}

/* Rebuilds record f for arrays whose sizes are all `size` (0, 1, 3) and scalars of value `v` (ints: `i`). */
static void replay_fuse(const RtFuseRecord *f, int64_t size, double v, int64_t i) {
  IrGraph g;
  Diag d = {.status = LOOM_OK};
  if (ir_graph_init(&g, ctx(), &d) != LOOM_OK) return;
  LoomFuseArg args[RF_MAX_ARGS];
  bool ok = true;
  for (int32_t j = 0; j < f->nargs && ok; j++) {
    const RtFuseArg *a = &f->args[j];
    args[j] = (LoomFuseArg){.kind = a->kind, .dtype = a->dtype, .ndim = a->ndim, .i = i, .re = v, .im = -v};
    if (a->kind != RF_ARRAY) continue;
    LoomArray arr = {.data = (void *)(uintptr_t)(64 * (j + 1)), .dtype = (LoomDType)a->dtype, .ndim = a->ndim};
    for (int k = 0; k < a->ndim; k++) arr.shape[k] = size, arr.strides[k] = 1;
    ok = ir_input(&g, &arr, &args[j].node, &d) == LOOM_OK;
  }
  int32_t *map = malloc(sizeof(int32_t) * (size_t)f->nnode);
  if (ok && map) (void)rt_fuse_replay(&g, f, args, map, &d);
  free(map);
  ir_graph_free(&g);
}

static void exercise(const uint8_t *data, size_t size) {
  RtBundle *b = NULL;
  Diag d = {.status = LOOM_OK};
  if (rt_bundle_parse(ctx(), data, size, "fuzz", &b, &d) != LOOM_OK) return;
  for (int32_t i = 0; i < b->nentry; i++) (void)rt_bundle_find_entry(b, b->entries[i].name);
  for (int32_t i = 0; i < b->nkernel; i++) (void)rt_bundle_find_key(b, b->kernels[i].key, b->kernels[i].keylen);
  for (int32_t i = 0; i < b->nfuse; i++) {
    const RtFuseRecord *f = &b->fuse[i];
    (void)rt_bundle_find_fuse(b, f->identity, f->nargs, f->args);
    replay_fuse(f, 3, 2.5, 2);
    replay_fuse(f, 1, -300.0, -300);
    replay_fuse(f, 0, 1e300, INT64_MIN);
  }
  /* one resolver for the whole run (it dlopens SLEEF: per input, that cost most of each execution) */
  static RtSymbolResolver *r;
  static bool tried;
  if (!tried) {
    tried = true;
    Diag rd = {.status = LOOM_OK};
    rt_symbol_resolver_create(ctx(), &r, &rd);
  }
  for (int32_t i = 0; i < b->ncode; i++) {
    Diag cd = {.status = LOOM_OK};
    const RtBundleCode *c = &b->codes[i];
    if (rt_bundle_code_check(b, c, &cd) != LOOM_OK) continue;
    if (b->targets[c->target].kind != RB_TARGET_HOST_X86_64) continue;
    if (rt_host_image_check(c->blob, (size_t)c->blob_size, "fuzz", &cd) != LOOM_OK) continue;
    RtHostImage *im = NULL;
    if (r && rt_host_image_load(ctx(), r, c->blob, (size_t)c->blob_size, "fuzz", &im, &cd) == LOOM_OK) {
      (void)rt_host_image_symbol(im, c->facts[RB_HOST_RUN]);
      rt_host_image_free(im);
    }
  }
  rt_bundle_free(b);
}

/* Recomputes the CRCs a mutation broke, touching only bytes inside the buffer. */
static void fix_crcs(uint8_t *p, size_t n) {
  if (n < RB_HEADER_SIZE || memcmp(p, RB_MAGIC, 8) != 0) return;
  uint64_t toff = rb_get64(p + 24);
  uint32_t ns = rb_get32(p + 32);
  if (ns > 64 || toff > n || (uint64_t)ns * RB_SECTION_ENTRY > n - toff) return;
  const uint8_t *code = NULL, *blobs = NULL;
  uint64_t csize = 0, bsize = 0;
  for (uint32_t i = 0; i < ns; i++) {
    const uint8_t *e = p + toff + (size_t)i * RB_SECTION_ENTRY;
    uint64_t off = rb_get64(e + 8), size = rb_get64(e + 16);
    if (off > n || size > n - off) continue;
    if (rb_get32(e) == RB_SEC_CODE) code = p + off, csize = size;
    if (rb_get32(e) == RB_SEC_BLOBS) blobs = p + off, bsize = size;
  }
  for (uint64_t i = 0; code && blobs && i < csize / RB_REC_CODE; i++) {
    uint8_t *rec = (uint8_t *)code + RB_REC_CODE * i;
    uint64_t off = rb_get64(rec + 8), size = rb_get64(rec + 16);
    if (off <= bsize && size <= bsize - off) rb_put32(rec + 24, rt_crc32c(0, blobs + off, (size_t)size));
  }
  for (uint32_t i = 0; i < ns; i++) {
    uint8_t *e = p + toff + (size_t)i * RB_SECTION_ENTRY;
    uint64_t off = rb_get64(e + 8), size = rb_get64(e + 16);
    if (off <= n && size <= n - off && !(rb_get32(e + 4) & RB_SECF_PER_RECORD_CRC))
      rb_put32(e + 24, rt_crc32c(0, p + off, (size_t)size));
  }
  rb_put32(p + 36, rt_crc32c(0, p + toff, (size_t)ns * RB_SECTION_ENTRY));
  rb_put64(p + 16, n);
  rb_put32(p + 60, rt_crc32c(0, p, 60));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  exercise(data, size);
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
  fix_crcs(copy, size);
  exercise(copy, size);
  free(copy);
  return 0;
}
