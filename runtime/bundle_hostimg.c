/* SPDX-License-Identifier: Apache-2.0 */
/* bundle_hostimg.c: loading host images (codegen/cg_aot.h's layout) with no LLVM, and CPU detection.
 *
 * Approach: codegen/host_object.c resolved every PC-relative reference when it linked the image, so
 * loading is: check the blob's structure (every size, count, offset and name, against the blob's length
 * and the image's regions, before anything is mapped), mmap the image read-write, copy the three
 * regions in, resolve the imports (runtime helpers, SLEEF's vector and scalar libraries, libm, then the
 * process), write the 64-bit
 * relocations, then mprotect text read-execute, rodata + GOT read-only, data read-write. x86-64
 * keeps instruction fetch coherent with stores, so no cache flush is needed.
 *
 * CPU levels (x86-64 psABI): cpuid for the instruction sets and xgetbv for the OS saving the AVX and
 * AVX-512 registers. LOOM_AOT_HOST_LEVEL (1, 2, 3 or 4) caps the level a process uses (tests run every
 * variant on one machine).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "codegen/cg_aot.h"
#include "runtime/bundle.h"

/* ---- CPU levels ------------------------------------------------------------------------------------ */
typedef struct CpuFeature {
  const char *name;
  int level;
  int leaf; /* 1: cpuid(1).ecx, 7: cpuid(7,0).ebx, 8: cpuid(0x80000001).ecx, 0: xcr0 */
  int bit;
} CpuFeature;

static const CpuFeature cpu_features[] = {
    {"CX16", 2, 1, 13},   {"LAHF", 2, 8, 0},      {"POPCNT", 2, 1, 23},   {"SSE3", 2, 1, 0},
    {"SSE4.1", 2, 1, 19}, {"SSE4.2", 2, 1, 20},   {"SSSE3", 2, 1, 9},     {"AVX", 3, 1, 28},
    {"AVX2", 3, 7, 5},    {"BMI1", 3, 7, 3},      {"BMI2", 3, 7, 8},      {"F16C", 3, 1, 29},
    {"FMA", 3, 1, 12},    {"LZCNT", 3, 8, 5},     {"MOVBE", 3, 1, 22},    {"OSXSAVE", 3, 1, 27},
    {"OS YMM state", 3, 0, 2}, {"AVX512F", 4, 7, 16}, {"AVX512BW", 4, 7, 30}, {"AVX512CD", 4, 7, 28},
    {"AVX512DQ", 4, 7, 17}, {"AVX512VL", 4, 7, 31}, {"OS ZMM state", 4, 0, 6}, {"OS opmask state", 4, 0, 5},
    {"OS ZMM high state", 4, 0, 7}};

#if defined(__x86_64__)
static void cpu_words(uint32_t w[9]) {
  unsigned a, b, c, d;
  memset(w, 0, 9 * sizeof *w);
  if (__get_cpuid(1, &a, &b, &c, &d)) w[1] = c;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) w[7] = b;
  if (__get_cpuid(0x80000001u, &a, &b, &c, &d)) w[8] = c;
  if (w[1] & (1u << 27)) { /* OSXSAVE: xgetbv is allowed */
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    w[0] = lo;
  }
}
#endif

static bool has_bit(const uint32_t w[9], const CpuFeature *f) {
  if (f->leaf == 0 && f->bit == 2) return (w[0] & 6u) == 6u; /* SSE and AVX state */
  return (w[f->leaf] >> f->bit) & 1u;
}

void rt_host_cpu_missing(int want, char *buf, size_t cap) {
  buf[0] = 0;
#if defined(__x86_64__)
  uint32_t w[9];
  cpu_words(w);
  size_t n = 0;
  for (size_t i = 0; i < sizeof cpu_features / sizeof *cpu_features; i++)
    if (cpu_features[i].level <= want && !has_bit(w, &cpu_features[i]) && n < cap)
      n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", cpu_features[i].name);
#else
  snprintf(buf, cap, "an x86-64 CPU");
  (void)want;
#endif
}

int rt_host_cpu_level(void) {
#if defined(__x86_64__)
  uint32_t w[9];
  cpu_words(w);
  int level = 4;
  for (size_t i = 0; i < sizeof cpu_features / sizeof *cpu_features; i++)
    if (!has_bit(w, &cpu_features[i]) && cpu_features[i].level <= level) level = cpu_features[i].level - 1;
  const char *cap = getenv("LOOM_AOT_HOST_LEVEL");
  if (cap && *cap >= '1' && *cap <= '4' && cap[1] == 0 && *cap - '0' < level) level = *cap - '0';
  return level < 1 ? 1 : level;
#else
  return 0;
#endif
}

const char *rt_host_level_name(int level) {
  return level >= 4 ? "x86-64-v4 (AVX-512)" : level == 3 ? "x86-64-v3 (AVX2)" : level == 2 ? "x86-64-v2" : "x86-64";
}

/* ---- symbols --------------------------------------------------------------------------------------- */
/* Helpers LLVM calls for half-precision conversions and integer powers where the CPU has no
 * instruction (compiler-rt / libgcc names and ABIs: _Float16 travels in an SSE register). Defined here
 * so that bundled code does not depend on which of those libraries a process happens to load. */
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu, bits;
  if (exp == 0x1f) bits = sign | 0x7f800000u | man << 13; /* inf, NaN (payload kept) */
  else if (exp) bits = sign | (exp + 112) << 23 | man << 13;
  else if (!man) bits = sign;
  else { /* subnormal: normalize */
    int e = -1;
    do {
      man <<= 1;
      e++;
    } while (!(man & 0x400u));
    bits = sign | (uint32_t)(112 - e) << 23 | (man & 0x3ffu) << 13;
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* Rounds a double (exact for every float) to the nearest half, ties to even. */
static uint16_t double_to_half(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  uint16_t sign = (uint16_t)((b >> 48) & 0x8000u);
  int e = (int)((b >> 52) & 0x7ff);
  uint64_t m = b & 0xfffffffffffffull;
  if (e == 0x7ff) return (uint16_t)(sign | 0x7c00u | (m ? 0x200u | (uint16_t)(m >> 42) : 0u));
  int he = e - 1023 + 15;
  if (he >= 31) return (uint16_t)(sign | 0x7c00u);
  uint64_t full = m | (1ull << 52); /* 53 bits */
  int shift = he >= 1 ? 42 : 42 + 1 - he; /* bits dropped below the half's mantissa */
  if (e == 0 || shift > 53 + 1) return sign; /* zero or below half of the smallest subnormal */
  uint64_t q = full >> shift, rem = full & ((1ull << shift) - 1), halfway = 1ull << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) q++;
  /* q holds the implicit bit when normal; carries propagate into the exponent naturally */
  uint32_t bits = he >= 1 ? (uint32_t)((uint32_t)(he - 1) << 10) + (uint32_t)q : (uint32_t)q;
  if (bits >= 0x7c00u) return (uint16_t)(sign | 0x7c00u);
  return (uint16_t)(sign | bits);
}

#if defined(__x86_64__) && defined(__FLT16_MAX__)
static float rt_extendhfsf2(_Float16 h) {
  uint16_t u;
  memcpy(&u, &h, sizeof u);
  return half_to_float(u);
}
static _Float16 rt_truncsfhf2(float f) {
  uint16_t u = double_to_half((double)f);
  _Float16 h;
  memcpy(&h, &u, sizeof h);
  return h;
}
static _Float16 rt_truncdfhf2(double x) {
  uint16_t u = double_to_half(x);
  _Float16 h;
  memcpy(&h, &u, sizeof h);
  return h;
}
#define RT_HAVE_HALF_HELPERS 1
#endif
static double rt_powidf2(double a, int b) {
  bool recip = b < 0;
  double r = 1;
  for (unsigned n = recip ? 0u - (unsigned)b : (unsigned)b; n; n >>= 1, a *= a)
    if (n & 1) r *= a;
  return recip ? 1 / r : r;
}
static float rt_powisf2(float a, int b) {
  bool recip = b < 0;
  float r = 1;
  for (unsigned n = recip ? 0u - (unsigned)b : (unsigned)b; n; n >>= 1, a *= a)
    if (n & 1) r *= a;
  return recip ? 1 / r : r;
}

typedef struct Builtin {
  const char *name;
  void *addr;
} Builtin;

struct RtSymbolResolver {
  LoomContext *ctx;
  pthread_mutex_t lock;
  bool tried_sleef, tried_sleef_scalar, tried_libm; /* dlopen'ed on the first import that needs them */
  void *sleef, *sleef_scalar, *libm;
};

#ifndef LOOM_SLEEF_LIB
#define LOOM_SLEEF_LIB "libsleefgnuabi.so.3"
#endif
#ifndef LOOM_SLEEF_SCALAR_LIB
#define LOOM_SLEEF_SCALAR_LIB "libsleef.so.3"
#endif

LoomStatus rt_symbol_resolver_create(LoomContext *ctx, RtSymbolResolver **out, Diag *d) {
  RtSymbolResolver *r = ctx_calloc(ctx, 1, sizeof *r);
  if (!r) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: symbol resolver");
  r->ctx = ctx;
  pthread_mutex_init(&r->lock, NULL);
  *out = r;
  return LOOM_OK;
}

void rt_symbol_resolver_free(RtSymbolResolver *r) {
  if (!r) return;
  if (r->sleef) dlclose(r->sleef);
  if (r->sleef_scalar) dlclose(r->sleef_scalar);
  if (r->libm) dlclose(r->libm);
  pthread_mutex_destroy(&r->lock);
  ctx_free(r->ctx, r);
}

static void *resolve(RtSymbolResolver *r, const char *name, bool *sleef_missing) {
  const Builtin builtins[] = {
#ifdef RT_HAVE_HALF_HELPERS
      {"__extendhfsf2", (void *)rt_extendhfsf2}, {"__truncsfhf2", (void *)rt_truncsfhf2},
      {"__truncdfhf2", (void *)rt_truncdfhf2},
#endif
      {"__powidf2", (void *)rt_powidf2}, {"__powisf2", (void *)rt_powisf2},
      {"memcpy", (void *)memcpy}, {"memmove", (void *)memmove}, {"memset", (void *)memset}};
  for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
    if (!strcmp(builtins[i].name, name)) return builtins[i].addr;
  pthread_mutex_lock(&r->lock);
  void *p = NULL;
  if (!strncmp(name, "_ZGV", 4)) { /* SLEEF's GNU vector ABI names */
    if (!r->tried_sleef) {
      r->tried_sleef = true;
      r->sleef = dlopen(LOOM_SLEEF_LIB, RTLD_NOW | RTLD_LOCAL);
      if (!r->sleef) r->sleef = dlopen("libsleefgnuabi.so.3", RTLD_NOW | RTLD_LOCAL);
    }
    *sleef_missing = !r->sleef;
    p = r->sleef ? dlsym(r->sleef, name) : NULL;
  } else if (!strncmp(name, "Sleef_", 6)) { /* SLEEF's scalar functions (the vector calls' scalar tails) */
    if (!r->tried_sleef_scalar) {
      r->tried_sleef_scalar = true;
      r->sleef_scalar = dlopen(LOOM_SLEEF_SCALAR_LIB, RTLD_NOW | RTLD_LOCAL);
      if (!r->sleef_scalar) r->sleef_scalar = dlopen("libsleef.so.3", RTLD_NOW | RTLD_LOCAL);
    }
    *sleef_missing = !r->sleef_scalar;
    p = r->sleef_scalar ? dlsym(r->sleef_scalar, name) : NULL;
  } else {
    if (!r->tried_libm) {
      r->tried_libm = true;
      r->libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    }
    p = r->libm ? dlsym(r->libm, name) : NULL;
    if (!p) p = dlsym(RTLD_DEFAULT, name);
  }
  pthread_mutex_unlock(&r->lock);
  return p;
}

/* ---- the image ------------------------------------------------------------------------------------- */
typedef struct ImageView {
  uint32_t text, ro, data, bss, nimport, nreloc, strtab;
  CgHostLayout lay;
  const uint8_t *imports, *relocs, *strs, *code;
} ImageView;

static LoomStatus img_bad(Diag *d, const char *what, const char *msg) {
  return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: host code: %s: corrupted", what, msg);
}

static bool name_ok(const char *s, size_t max) {
  size_t n = 0;
  for (; n < max && s[n]; n++)
    if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_' ||
          s[n] == '.' || s[n] == '$'))
      return false;
  return n > 0 && n < max;
}

static LoomStatus view_image(const uint8_t *blob, size_t size, const char *what, ImageView *v, Diag *d) {
  if (size < CG_HOST_IMAGE_HEADER) return img_bad(d, what, "shorter than its header");
  if (rb_get32(blob) != CG_HOST_IMAGE_MAGIC) return img_bad(d, what, "bad magic");
  if (rb_get32(blob + 4) != CG_HOST_IMAGE_VERSION)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: host image version %u; this loom loads version %d", what,
                      rb_get32(blob + 4), CG_HOST_IMAGE_VERSION);
  v->text = rb_get32(blob + 8);
  v->ro = rb_get32(blob + 12);
  v->data = rb_get32(blob + 16);
  v->bss = rb_get32(blob + 20);
  v->nimport = rb_get32(blob + 24);
  v->nreloc = rb_get32(blob + 28);
  v->strtab = rb_get32(blob + 32);
  uint64_t max = CG_HOST_IMAGE_MAX;
  if (!v->text || v->text > max || v->ro > max || v->data > max || v->bss > max ||
      (uint64_t)v->text + v->ro + v->data + v->bss + 3ull * CG_HOST_PAGE > max)
    return img_bad(d, what, "region sizes out of range");
  if (v->nimport > (1u << 16) || v->nreloc > (1u << 24) || v->strtab > (1u << 24)) return img_bad(d, what, "table sizes out of range");
  uint64_t want = (uint64_t)CG_HOST_IMAGE_HEADER + 4ull * v->nimport + (uint64_t)CG_HOST_RELOC * v->nreloc + v->strtab + v->text +
                  v->ro + v->data;
  if (want != size) return img_bad(d, what, "its sizes do not add up to the blob's length");
  v->lay = cg_host_layout(v->text, v->ro, v->data, v->bss);
  v->imports = blob + CG_HOST_IMAGE_HEADER;
  v->relocs = v->imports + 4ull * v->nimport;
  v->strs = v->relocs + (size_t)CG_HOST_RELOC * v->nreloc;
  v->code = v->strs + v->strtab;
  if (v->nimport && (v->strtab == 0 || v->strs[v->strtab - 1] != 0)) return img_bad(d, what, "import names not terminated");
  for (uint32_t i = 0; i < v->nimport; i++) {
    uint32_t off = rb_get32(v->imports + 4ull * i);
    if (off >= v->strtab || !name_ok((const char *)v->strs + off, v->strtab - off)) return img_bad(d, what, "an import name is invalid");
  }
  for (uint32_t i = 0; i < v->nreloc; i++) {
    const uint8_t *p = v->relocs + (size_t)CG_HOST_RELOC * i;
    uint32_t off = rb_get32(p), imp = rb_get32(p + 4);
    uint64_t addend = rb_get64(p + 8);
    if ((uint64_t)off + 8 > v->lay.image_size) return img_bad(d, what, "a relocation lies outside the image");
    if (imp != CG_RELOC_BASE && imp >= v->nimport) return img_bad(d, what, "a relocation names an import out of range");
    if (imp == CG_RELOC_BASE && addend > v->lay.image_size) return img_bad(d, what, "a relocation points outside the image");
  }
  return LOOM_OK;
}

LoomStatus rt_host_image_check(const uint8_t *blob, size_t size, const char *what, Diag *d) {
  ImageView v;
  return view_image(blob, size, what ? what : "(memory)", &v, d);
}

LoomStatus rt_host_image_load(LoomContext *ctx, RtSymbolResolver *r, const uint8_t *blob, size_t size, const char *what,
                              RtHostImage **out, Diag *d) {
  *out = NULL;
  what = what ? what : "(memory)";
  ImageView v;
  LoomStatus st = view_image(blob, size, what, &v, d);
  if (st != LOOM_OK) return st;
  void **addr = ctx_alloc(ctx, ((size_t)v.nimport + 1) * sizeof *addr);
  if (!addr) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: %u imports", v.nimport);
  for (uint32_t i = 0; i < v.nimport; i++) {
    const char *name = (const char *)v.strs + rb_get32(v.imports + 4ull * i);
    bool sleef_missing = false;
    addr[i] = resolve(r, name, &sleef_missing);
    if (!addr[i]) {
      ctx_free(ctx, addr);
      if (sleef_missing)
        return diag_error(d, LOOM_ERR_UNSUPPORTED,
                          "bundle %s: host code calls SLEEF's %s, but %s is not installed (Debian: libsleef3; or build "
                          "the bundle with loomc --no-sleef)", what, name,
                          strncmp(name, "Sleef_", 6) ? LOOM_SLEEF_LIB : LOOM_SLEEF_SCALAR_LIB);
      return diag_error(d, LOOM_ERR_UNSUPPORTED, "bundle %s: host code needs symbol '%s', which this process does not have",
                        what, name);
    }
  }
  RtHostImage *im = ctx_calloc(ctx, 1, sizeof *im);
  void *base = MAP_FAILED;
  if (im) base = mmap(NULL, v.lay.image_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (!im || base == MAP_FAILED) {
    ctx_free(ctx, addr);
    ctx_free(ctx, im);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "bundle %s: cannot map %u bytes of host code", what, v.lay.image_size);
  }
  uint8_t *b = base;
  memcpy(b, v.code, v.text);
  if (v.ro) memcpy(b + v.lay.ro_start, v.code + v.text, v.ro);
  if (v.data) memcpy(b + v.lay.data_start, v.code + v.text + v.ro, v.data);
  for (uint32_t i = 0; i < v.nreloc; i++) {
    const uint8_t *p = v.relocs + (size_t)CG_HOST_RELOC * i;
    uint32_t off = rb_get32(p), imp = rb_get32(p + 4);
    uint64_t val = (imp == CG_RELOC_BASE ? (uint64_t)(uintptr_t)b : (uint64_t)(uintptr_t)addr[imp]) + rb_get64(p + 8);
    rb_put64(b + off, val);
  }
  ctx_free(ctx, addr);
  if (mprotect(b, v.lay.ro_start, PROT_READ | PROT_EXEC) != 0 ||
      (v.lay.data_start > v.lay.ro_start && mprotect(b + v.lay.ro_start, v.lay.data_start - v.lay.ro_start, PROT_READ) != 0)) {
    munmap(base, v.lay.image_size);
    ctx_free(ctx, im);
    return diag_error(d, LOOM_ERR_UNSUPPORTED,
                      "bundle %s: the system refused to make loaded code executable (mprotect; a W^X policy?)", what);
  }
  im->ctx = ctx;
  im->base = b;
  im->map_size = v.lay.image_size;
  im->text_end = v.text;
  *out = im;
  return LOOM_OK;
}

void *rt_host_image_symbol(const RtHostImage *im, uint32_t off) {
  return im && off < im->text_end ? im->base + off : NULL;
}

void rt_host_image_free(RtHostImage *im) {
  if (!im) return;
  munmap(im->base, im->map_size);
  ctx_free(im->ctx, im);
}
