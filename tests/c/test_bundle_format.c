/* SPDX-License-Identifier: Apache-2.0 */
/* test_bundle_format: the bundle file format and the host-image loader against damaged input.
 *
 * A real bundle is built in-process (the builder, from kernel IR text) and then damaged: cut at every
 * length, every single bit flipped in turn, trailing bytes, another format version, an unknown target
 * kind, another calling convention, host images whose inner fields lie (with every checksum made right
 * again, so the structural checks are what must catch them), a missing symbol, code for a CPU level
 * this process does not run. Each must give its specific message; none may load. The undamaged bundle
 * must round-trip: its records, keys and entries read back as written.
 */
#include <unistd.h>

#include "codegen/cg_aot.h"
#include "loom/loom_aot.h"
#include "runtime/bundle.h"
#include "test_common.h"

static const char *KERNELS =
    "kernel twice_plus ndim 1 keep 1 index 32\n"
    "  buf 0 in f32 [1]\n  buf 1 in f32 [1]\n  buf 2 out f32 [1]\n"
    "  %0 = load f32 buf 0\n  %1 = param f32 0\n  %2 = mul f32 %0 %1\n  %3 = load f32 buf 1\n"
    "  %4 = add f32 %2 %3\n  phase map store buf 2 %4\n"
    "kernel expsum ndim 2 keep 1 index 32\n"
    "  buf 0 in f64 [s,1]\n  buf 1 out f64 [1,0]\n"
    "  %0 = load f64 buf 0\n  %1 = exp f64 %0\n  %2 = acc f64 phase 0\n"
    "  phase reduce sum f64 %1\n  phase final store buf 1 %2\n";

static char dir[256];

/* Builds a bundle of KERNELS for targets into dir/name; returns its bytes (malloc'ed). */
static uint8_t *build(const char *name, const char *targets, size_t *size) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  LoomBundleBuilder *b = NULL;
  LoomBundleOptions opt = {.targets = targets, .jobs = 2, .progress = 0};
  if (!CHECK_OK(loom_bundle_builder_create(tc_ctx, &b)) || !CHECK_OK(loom_bundle_builder_add_ir(b, KERNELS, NULL, "test")) ||
      !CHECK_OK(loom_bundle_builder_write(b, &opt, path))) {
    loom_bundle_builder_destroy(b);
    return NULL;
  }
  loom_bundle_builder_destroy(b);
  FILE *f = fopen(path, "rb");
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc(*size);
  CHECK(fread(p, 1, *size, f) == *size, "read %s", path);
  fclose(f);
  return p;
}

static LoomStatus parse(const uint8_t *p, size_t n, RtBundle **b, Diag *d) {
  d->status = LOOM_OK;
  d->msg[0] = 0;
  return rt_bundle_parse(tc_ctx, p, n, "t", b, d);
}

/* ---- fixing checksums after a deliberate change ---------------------------------------------------- */
static const uint8_t *section(const uint8_t *p, uint32_t kind, uint64_t *size) {
  uint64_t toff = rb_get64(p + 24);
  uint32_t n = rb_get32(p + 32);
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *e = p + toff + 32 * i;
    if (rb_get32(e) == kind) {
      *size = rb_get64(e + 16);
      return p + rb_get64(e + 8);
    }
  }
  return NULL;
}

static void fix_crcs(uint8_t *p) {
  uint64_t csize, bsize;
  uint8_t *code = (uint8_t *)section(p, RB_SEC_CODE, &csize), *blobs = (uint8_t *)section(p, RB_SEC_BLOBS, &bsize);
  for (uint64_t i = 0; i < csize / RB_REC_CODE; i++) {
    uint8_t *rec = code + RB_REC_CODE * i;
    rb_put32(rec + 24, rt_crc32c(0, blobs + rb_get64(rec + 8), (size_t)rb_get64(rec + 16)));
  }
  uint64_t toff = rb_get64(p + 24);
  uint32_t n = rb_get32(p + 32);
  for (uint32_t i = 0; i < n; i++) {
    uint8_t *e = p + toff + 32 * i;
    if (!(rb_get32(e + 4) & RB_SECF_PER_RECORD_CRC)) rb_put32(e + 24, rt_crc32c(0, p + rb_get64(e + 8), (size_t)rb_get64(e + 16)));
  }
  rb_put32(p + 36, rt_crc32c(0, p + toff, 32 * (size_t)n));
  rb_put32(p + 60, rt_crc32c(0, p, 60));
}

/* The first host image blob of the bundle that imports symbols (and its code record). */
static uint8_t *first_host_blob(uint8_t *p, uint8_t **rec_out, size_t *blob_size) {
  uint64_t csize, bsize, tsize;
  uint8_t *code = (uint8_t *)section(p, RB_SEC_CODE, &csize), *blobs = (uint8_t *)section(p, RB_SEC_BLOBS, &bsize);
  const uint8_t *targets = section(p, RB_SEC_TARGETS, &tsize);
  for (uint64_t i = 0; i < csize / RB_REC_CODE; i++) {
    uint8_t *rec = code + RB_REC_CODE * i;
    if (rb_get32(targets + RB_REC_TARGET * rb_get32(rec + 4)) != RB_TARGET_HOST_X86_64) continue;
    if (rb_get32(blobs + rb_get64(rec + 8) + 24) == 0) continue; /* no imports */
    *rec_out = rec;
    *blob_size = (size_t)rb_get64(rec + 16);
    return blobs + rb_get64(rec + 8);
  }
  return NULL;
}

/* Loads every host code of a parsed bundle (as the loaders do); the first error. */
static LoomStatus load_all(const RtBundle *b, Diag *d) {
  RtSymbolResolver *r = NULL;
  LoomStatus st = rt_symbol_resolver_create(tc_ctx, &r, d);
  for (int32_t i = 0; st == LOOM_OK && i < b->ncode; i++) {
    st = rt_bundle_code_check(b, &b->codes[i], d);
    if (st == LOOM_OK && b->targets[b->codes[i].target].kind == RB_TARGET_HOST_X86_64) {
      RtHostImage *im = NULL;
      st = rt_host_image_load(tc_ctx, r, b->codes[i].blob, (size_t)b->codes[i].blob_size, "t", &im, d);
      rt_host_image_free(im);
    }
  }
  rt_symbol_resolver_free(r);
  return st;
}

/* ---- tests ------------------------------------------------------------------------------------------ */
static void test_round_trip(const uint8_t *p, size_t n) {
  RtBundle *b = NULL;
  Diag d;
  if (!CHECK(parse(p, n, &b, &d) == LOOM_OK, "parse: %s", d.msg)) return;
  CHECK(b->major == RB_MAJOR && b->ntarget == 3 && b->nkernel == 4 && b->nentry == 2 && b->ncode == 12,
        "counts: %d targets %d kernels %d entries %d codes", b->ntarget, b->nkernel, b->nentry, b->ncode);
  CHECK(!strcmp(b->producer, "libloom") && !strcmp(b->loom_version, LOOM_VERSION_STRING), "meta %s %s", b->producer,
        b->loom_version);
  const RtBundleEntry *e = rt_bundle_find_entry(b, "expsum");
  if (CHECK(e && e->kernel[0] >= 0 && e->kernel[1] >= 0, "entry expsum")) {
    const RtBundleKernel *k32 = &b->kernels[e->kernel[0]], *k64 = &b->kernels[e->kernel[1]];
    CHECK(k32->index_bits == 32 && k64->index_bits == 64 && k32->ndim == 2 && k32->nkeep == 1 && k32->nbuf == 2 &&
              k32->bufs[0].dtype == LOOM_FLOAT64 && k32->bufs[0].layout[0] == KL_ANY && k32->bufs[1].is_output &&
              k32->bufs[1].layout[1] == KL_ZERO && k32->ncode == 3,
          "expsum's records");
    CHECK(rt_bundle_find_key(b, k64->key, k64->keylen) == k64 && strstr(k64->key, "index 64"), "key lookup");
    CHECK(!rt_bundle_find_key(b, k64->key, k64->keylen - 1), "a prefix of a key is not a key");
    for (uint32_t c = k32->code_first; c < k32->code_first + k32->ncode; c++)
      CHECK(b->codes[c].facts[RB_HOST_PARTIAL] != RB_NO_SYMBOL && b->codes[c].facts[RB_HOST_ACC_SIZE] == 8,
            "expsum splits along R with 8-byte accumulators");
  }
  CHECK(!rt_bundle_find_entry(b, "nope") && rt_bundle_find_entry(b, "twice_plus"), "entry lookup");
  const RtBundleEntry *tp = rt_bundle_find_entry(b, "twice_plus");
  if (tp && tp->kernel[0] >= 0) {
    const RtBundleKernel *k = &b->kernels[tp->kernel[0]];
    CHECK(k->nparam == 1 && k->params[0].dtype == LOOM_FLOAT32 && k->params[0].is_output == RB_BUF_PARAM && k->nbuf == 3,
          "twice_plus's scalar parameter record: %d parameters", k->nparam);
  }
  Diag ld = {.status = LOOM_OK};
  CHECK(load_all(b, &ld) == LOOM_OK, "every host image loads: %s", ld.msg);
  rt_bundle_free(b);
}

static void test_truncated(const uint8_t *p, size_t n) {
  long loaded = 0, unclear = 0;
  for (size_t len = 0; len < n; len++) {
    RtBundle *b = NULL;
    Diag d;
    LoomStatus st = parse(len ? p : NULL, len, &b, &d);
    if (st == LOOM_OK) {
      loaded++;
      rt_bundle_free(b);
    } else if (len > 0 && !strstr(d.msg, "truncated")) {
      if (unclear++ < 3) fprintf(stderr, "  cut at %zu: %s\n", len, d.msg);
    }
  }
  CHECK(loaded == 0, "%ld truncated bundles parsed", loaded);
  CHECK(unclear == 0, "%ld truncations without the word 'truncated'", unclear);
  uint8_t *longer = malloc(n + 8);
  memcpy(longer, p, n);
  memset(longer + n, 0, 8);
  RtBundle *b = NULL;
  Diag d;
  CHECK(parse(longer, n + 8, &b, &d) == LOOM_ERR_INVALID_ARGUMENT && strstr(d.msg, "8 bytes after the end"), "trailing: %s",
        d.msg);
  free(longer);
}

static void test_bit_flips(const uint8_t *p, size_t n) {
  uint8_t *q = malloc(n);
  memcpy(q, p, n);
  long undetected = 0, at_parse = 0, at_load = 0;
  for (size_t bit = 0; bit < 8 * n; bit++) {
    q[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    RtBundle *b = NULL;
    Diag d;
    if (parse(q, n, &b, &d) != LOOM_OK) {
      at_parse++;
    } else {
      Diag ld = {.status = LOOM_OK};
      if (load_all(b, &ld) != LOOM_OK) at_load++;
      else if (undetected++ < 3) fprintf(stderr, "  bit %zu flipped: undetected\n", bit);
      rt_bundle_free(b);
    }
    q[bit / 8] ^= (uint8_t)(1u << (bit % 8));
  }
  CHECK(undetected == 0, "%ld of %zu single-bit flips loaded", undetected, 8 * n);
  printf("bit flips: %zu, caught when the bundle is opened %ld, when its code is checked %ld\n", 8 * n, at_parse, at_load);
  free(q);
}

static void test_version_and_targets(const uint8_t *p, size_t n) {
  uint8_t *q = malloc(n);
  RtBundle *b = NULL;
  Diag d;
  memcpy(q, p, n);
  rb_put16(q + 8, 2); /* major 2, header CRC left stale: the version is named first */
  char want[64];
  snprintf(want, sizeof want, "format version 2.%d; this loom reads version 1.x", RB_MINOR);
  CHECK(parse(q, n, &b, &d) == LOOM_ERR_INVALID_ARGUMENT && strstr(d.msg, want), "major 2: %s", d.msg);
  memcpy(q, p, n);
  rb_put16(q + 10, 7); /* a newer minor version: readable (sections may be added; records are fixed) */
  fix_crcs(q);
  CHECK(parse(q, n, &b, &d) == LOOM_OK && b->minor == 7, "minor 7: %s", d.msg);
  rt_bundle_free(b);
  b = NULL;
  memcpy(q, p, n);
  memcpy(q, "LOOMBUNX", 8);
  CHECK(parse(q, n, &b, &d) == LOOM_ERR_INVALID_ARGUMENT && strstr(d.msg, "not a loom bundle"), "magic: %s", d.msg);
  uint64_t tsize;
  memcpy(q, p, n);
  uint8_t *t = (uint8_t *)section(q, RB_SEC_TARGETS, &tsize);
  rb_put32(t, 9);
  fix_crcs(q);
  CHECK(parse(q, n, &b, &d) == LOOM_ERR_INVALID_ARGUMENT && strstr(d.msg, "unknown kind 9"), "target kind: %s", d.msg);
  memcpy(q, p, n);
  t = (uint8_t *)section(q, RB_SEC_TARGETS, &tsize);
  rb_put32(t + 8, RB_HOST_ABI + 1);
  fix_crcs(q);
  CHECK(parse(q, n, &b, &d) == LOOM_ERR_INVALID_ARGUMENT && strstr(d.msg, "calling convention 3; this loom runs version 2"),
        "ABI: %s", d.msg);
  /* a scalar parameter record (BUFFERS, is_output 2) of a complex dtype, or turned into a buffer: refused */
  for (int how = 0; how < 2; how++) {
    memcpy(q, p, n);
    uint64_t bsize;
    uint8_t *br = (uint8_t *)section(q, RB_SEC_BUFFERS, &bsize), *pr = NULL;
    for (uint64_t o = 0; o + RB_REC_BUFFER <= bsize && !pr; o += RB_REC_BUFFER)
      if (br[o + 1] == RB_BUF_PARAM) pr = br + o;
    if (!CHECK(pr != NULL, "no parameter record")) break;
    if (how == 0) pr[0] = LOOM_COMPLEX64;
    else pr[1] = 0;
    fix_crcs(q);
    CHECK(parse(q, n, &b, &d) == LOOM_ERR_INVALID_ARGUMENT && strstr(d.msg, "is not a"), "parameter record %d: %s", how,
          d.msg);
  }
  free(q);
}

/* A host image whose inner fields lie, with every checksum right: the structural checks catch it. */
static void image_case(const uint8_t *p, size_t n, const char *what, void (*damage)(uint8_t *blob, size_t size), const char *want) {
  uint8_t *q = malloc(n), *rec;
  memcpy(q, p, n);
  size_t bs = 0;
  uint8_t *blob = first_host_blob(q, &rec, &bs);
  damage(blob, bs);
  fix_crcs(q);
  RtBundle *b = NULL;
  Diag d;
  LoomStatus st = parse(q, n, &b, &d);
  if (st == LOOM_OK) st = load_all(b, &d);
  CHECK(st != LOOM_OK && strstr(d.msg, want), "%s: got '%s', want '%s'", what, d.msg, want);
  rt_bundle_free(b);
  free(q);
}
static void dmg_magic(uint8_t *b, size_t n) { b[0] ^= 1; (void)n; }
static void dmg_version(uint8_t *b, size_t n) { rb_put32(b + 4, 9); (void)n; }
static void dmg_text(uint8_t *b, size_t n) { rb_put32(b + 8, rb_get32(b + 8) + 16); (void)n; }
static void dmg_reloc(uint8_t *b, size_t n) { /* the first relocation points past the image */
  if (rb_get32(b + 28)) rb_put32(b + CG_HOST_IMAGE_HEADER + 4 * rb_get32(b + 24), 0x7ffffff0u);
  else dmg_magic(b, n);
}
static void dmg_import(uint8_t *b, size_t n) { /* the first import renamed to a symbol no library has */
  uint32_t ni = rb_get32(b + 24), nr = rb_get32(b + 28);
  if (!ni) {
    dmg_magic(b, n);
    return;
  }
  char *name = (char *)b + CG_HOST_IMAGE_HEADER + 4 * ni + CG_HOST_RELOC * nr + rb_get32(b + CG_HOST_IMAGE_HEADER);
  for (char *c = name; *c; c++) *c = 'q';
}
static void dmg_import_name(uint8_t *b, size_t n) {
  uint32_t ni = rb_get32(b + 24), nr = rb_get32(b + 28);
  if (ni) b[CG_HOST_IMAGE_HEADER + 4 * ni + CG_HOST_RELOC * nr + rb_get32(b + CG_HOST_IMAGE_HEADER)] = '/';
  else dmg_magic(b, n);
}

static void test_images(const uint8_t *p, size_t n) {
  image_case(p, n, "image magic", dmg_magic, "host code: bad magic");
  image_case(p, n, "image version", dmg_version, "host image version 9");
  image_case(p, n, "image sizes", dmg_text, "do not add up");
  image_case(p, n, "relocation", dmg_reloc, "a relocation lies outside the image");
  image_case(p, n, "import", dmg_import, "needs symbol 'qqq");
  image_case(p, n, "import name", dmg_import_name, "an import name is invalid");
}

/* Code for a CPU level above this process's: libloom refuses the bundle, naming what is missing. */
static void test_wrong_cpu(void) {
  size_t n = 0;
  uint8_t *p = build("avx512.lbun", "host-avx512", &n);
  if (!p) return;
  free(p);
  char path[512];
  snprintf(path, sizeof path, "%s/avx512.lbun", dir);
  setenv("LOOM_AOT_HOST_LEVEL", "3", 1);
  LoomContext *ctx = NULL;
  if (CHECK_OK(loom_context_create(&ctx))) {
    CHECK_STATUS(loom_bundle_load(ctx, path, 1), LOOM_ERR_UNSUPPORTED);
    CHECK(strstr(loom_last_error(ctx), "x86-64-v4 (AVX-512) at best, which this CPU cannot run"), "wrong CPU: %s",
          loom_last_error(ctx));
    loom_context_destroy(ctx);
  }
  unsetenv("LOOM_AOT_HOST_LEVEL");
}

static void test_crc(void) {
  /* CRC-32C check value (RFC 3720 / iSCSI): "123456789" -> 0xE3069283 */
  CHECK(rt_crc32c(0, "123456789", 9) == 0xe3069283u, "crc32c check value: %08x", rt_crc32c(0, "123456789", 9));
  uint8_t buf[1000];
  for (int i = 0; i < 1000; i++) buf[i] = (uint8_t)(i * 7);
  CHECK(rt_crc32c(rt_crc32c(0, buf, 333), buf + 333, 667) == rt_crc32c(0, buf, 1000), "crc32c in pieces");
}

int main(void) {
  if (!tc_init()) return 1;
  snprintf(dir, sizeof dir, "%s/loom-test-bundle-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(dir)) return 1;
  test_crc();
  size_t n = 0;
  uint8_t *p = build("host.lbun", "host-all", &n);
  if (p) {
    test_round_trip(p, n);
    test_truncated(p, n);
    test_version_and_targets(p, n);
    test_images(p, n);
    free(p);
  }
  size_t n1 = 0;
  uint8_t *p1 = build("small.lbun", "host", &n1); /* one level: every bit flipped in turn */
  if (p1) test_bit_flips(p1, n1);
  free(p1);
  test_wrong_cpu();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return tc_finish();
}
