/* SPDX-License-Identifier: Apache-2.0 */
/* test_codegen.c: the host codegen against plain C references.
 *
 * Builds KernelIr structs by hand (static arrays in a KB builder), compiles them with the host
 * target and compares the results with loops written here in C: elementwise float64 math with
 * contiguous, broadcast and strided inputs, every integer division/shift/power edge case, float
 * floordiv/mod (npy_divmod), float16 round trips, inner/outer/full (partial+finish) sums, argmax
 * with NaN and ties, every reduce op over an outer axis (the block strategy: odd sizes, blocks
 * crossing rows, NaN, ties, empty R, two REDUCE phases), and a softmax kernel. Prints compile time and the bandwidth of one kernel.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/cg_gpu.h"
#include "codegen/codegen.h"

static int g_pass, g_fail;
#define CHECK(cond, ...)                                         \
  do {                                                           \
    if (cond) g_pass++;                                          \
    else {                                                       \
      g_fail++;                                                  \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                \
      printf(__VA_ARGS__);                                       \
      printf("\n");                                              \
    }                                                            \
  } while (0)

static void *t_alloc(void *u, size_t n) { (void)u; return aligned_alloc(64, (n + 63) / 64 * 64 + 64); }
static void t_free(void *u, void *p) { (void)u; free(p); }

/* ---- kernel builder ------------------------------------------------------------------------------ */
typedef struct KB {
  KernelIr k;
  KBuffer bufs[8];
  KInstr ins[96];
  KPhase ph[4];
  KStore st[8];
} KB;

static void kb_init(KB *b, int ndim, int nkeep) {
  memset(b, 0, sizeof *b);
  snprintf(b->k.name, sizeof b->k.name, "test");
  b->k.ndim = ndim;
  b->k.nkeep = nkeep;
  b->k.index_bits = 64;
  b->k.bufs = b->bufs;
  b->k.instrs = b->ins;
  b->k.phases = b->ph;
  b->k.stores = b->st;
}
/* layout string: one char per dim, '1' KL_ONE, '0' KL_ZERO, 'a' KL_ANY */
static int kb_buf(KB *b, LoomDType t, int out, const char *lay) {
  KBuffer *x = &b->bufs[b->k.nbuf];
  x->dtype = (uint8_t)t;
  x->is_output = (uint8_t)out;
  for (int d = 0; lay[d]; d++) x->layout[d] = lay[d] == '1' ? KL_ONE : lay[d] == '0' ? KL_ZERO : KL_ANY;
  return b->k.nbuf++;
}
static int kb_ins(KB *b, KInstrKind kind, LoomDType t, int op, int s0, int s1, int s2) {
  KInstr *x = &b->ins[b->k.ninstr];
  x->kind = (uint8_t)kind;
  x->dtype = (uint8_t)t;
  x->op = (uint16_t)op;
  x->src[0] = s0, x->src[1] = s1, x->src[2] = s2;
  x->buf = -1;
  x->phase = -1;
  return b->k.ninstr++;
}
static int kb_load(KB *b, int buf, LoomDType t) {
  int i = kb_ins(b, KI_LOAD, t, 0, -1, -1, -1);
  b->ins[i].buf = buf;
  return i;
}
static int kb_constf(KB *b, LoomDType t, double v) {
  int i = kb_ins(b, KI_CONST, t, 0, -1, -1, -1);
  b->ins[i].value.f = v;
  return i;
}
static int kb_un(KB *b, LoomOp op, LoomDType t, int a) { return kb_ins(b, KI_ELEM, t, op, a, -1, -1); }
static int kb_bin(KB *b, LoomOp op, LoomDType t, int a, int c) { return kb_ins(b, KI_ELEM, t, op, a, c, -1); }
static int kb_cast(KB *b, int a, LoomDType t) { return kb_ins(b, KI_CAST, t, 0, a, -1, -1); }
static int kb_acc(KB *b, int phase, LoomDType t) {
  int i = kb_ins(b, KI_ACC, t, 0, -1, -1, -1);
  b->ins[i].phase = phase;
  return i;
}
static int kb_reduce(KB *b, LoomReduceOp op, LoomDType acc, int value) {
  KPhase *p = &b->ph[b->k.nphase];
  p->kind = KP_REDUCE;
  p->reduce_op = (uint8_t)op;
  p->acc_dtype = (uint8_t)acc;
  p->value = value;
  return b->k.nphase++;
}
static void kb_store(KB *b, KPhaseKind kind, int buf, int value) {
  KPhase *p = b->k.nphase ? &b->ph[b->k.nphase - 1] : NULL;
  if (!p || p->kind != kind) {
    p = &b->ph[b->k.nphase++];
    p->kind = (uint8_t)kind;
    p->store_begin = b->k.nstore;
    p->nstores = 0;
  }
  b->st[b->k.nstore].buf = buf;
  b->st[b->k.nstore].value = value;
  b->k.nstore++;
  p->nstores++;
}

static CgTarget *g_t;

static bool compile(KB *b, CgCompiled *c, bool ir) {
  Diag d = {0};
  CgCompileOptions opt = {.want_llvm_ir = ir, .entries = CG_ENTRY_ALL};
  LoomStatus st = g_t->compile(g_t, &b->k, &opt, c, &d);
  CHECK(st == LOOM_OK, "compile: %s", d.msg);
  return st == LOOM_OK;
}


static double ulp_diff(double a, double b) {
  if (isnan(a) && isnan(b)) return 0;
  if (a == b) return 0;
  double u = fabs(nextafter(b, INFINITY) - b);
  return fabs(a - b) / (u > 0 ? u : 1e-300);
}

/* ---- elementwise float64 --------------------------------------------------------------------------- */
static void test_elementwise(void) {
  enum { N = 1003 };
  static double a[N], b[N * 3], o[N];
  for (int i = 0; i < N; i++) a[i] = sin(i * 0.37) * 5;
  for (int i = 0; i < N * 3; i++) b[i] = cos(i * 0.11) * 3;
  /* o = a + b (contiguous), then exp(a) * b[stride 3] */
  KB kb;
  kb_init(&kb, 1, 1);
  int ba = kb_buf(&kb, LOOM_FLOAT64, 0, "1"), bb = kb_buf(&kb, LOOM_FLOAT64, 0, "1"), bo = kb_buf(&kb, LOOM_FLOAT64, 1, "1");
  int s = kb_bin(&kb, LOOM_OP_ADD, LOOM_FLOAT64, kb_load(&kb, ba, LOOM_FLOAT64), kb_load(&kb, bb, LOOM_FLOAT64));
  kb_store(&kb, KP_MAP, bo, s);
  CgCompiled cc;
  if (compile(&kb, &cc, false)) {
    int64_t shape[1] = {N}, strides[3] = {1, 1, 1};
    void *bufs[3] = {a, b, o};
    cc.run(shape, bufs, strides, 0, 500);
    cc.run(shape, bufs, strides, 500, N);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += o[i] != a[i] + b[i];
    CHECK(bad == 0, "add f64: %d wrong", bad);
    g_t->release(g_t, &cc);
  }
  kb_init(&kb, 1, 1);
  ba = kb_buf(&kb, LOOM_FLOAT64, 0, "1"), bb = kb_buf(&kb, LOOM_FLOAT64, 0, "a"), bo = kb_buf(&kb, LOOM_FLOAT64, 1, "1");
  int e = kb_un(&kb, LOOM_OP_EXP, LOOM_FLOAT64, kb_load(&kb, ba, LOOM_FLOAT64));
  s = kb_bin(&kb, LOOM_OP_MUL, LOOM_FLOAT64, e, kb_load(&kb, bb, LOOM_FLOAT64));
  kb_store(&kb, KP_MAP, bo, s);
  if (compile(&kb, &cc, false)) {
    int64_t shape[1] = {N}, strides[3] = {1, 3, 1};
    void *bufs[3] = {a, b, o};
    cc.run(shape, bufs, strides, 0, N);
    double worst = 0;
    for (int i = 0; i < N; i++) {
      double u = ulp_diff(o[i], exp(a[i]) * b[3 * i]);
      if (u > worst) worst = u;
    }
    CHECK(worst <= 4, "exp(a)*b strided: worst %.1f ulp", worst);
    g_t->release(g_t, &cc);
  }
  /* 2-D broadcast: o[i,j] = a[i,j] - r[j] + col[i], with a row range that starts mid-row */
  enum { R = 37, C = 29 };
  static double m[R * C], row[C], col[R], mo[R * C];
  for (int i = 0; i < R * C; i++) m[i] = i * 0.5, mo[i] = -1;
  for (int j = 0; j < C; j++) row[j] = j * 3.0;
  for (int i = 0; i < R; i++) col[i] = i * 1000.0;
  kb_init(&kb, 2, 2);
  int bm = kb_buf(&kb, LOOM_FLOAT64, 0, "a1"), br = kb_buf(&kb, LOOM_FLOAT64, 0, "01");
  int bc = kb_buf(&kb, LOOM_FLOAT64, 0, "a0");
  bo = kb_buf(&kb, LOOM_FLOAT64, 1, "a1");
  int x = kb_bin(&kb, LOOM_OP_SUB, LOOM_FLOAT64, kb_load(&kb, bm, LOOM_FLOAT64), kb_load(&kb, br, LOOM_FLOAT64));
  x = kb_bin(&kb, LOOM_OP_ADD, LOOM_FLOAT64, x, kb_load(&kb, bc, LOOM_FLOAT64));
  kb_store(&kb, KP_MAP, bo, x);
  if (compile(&kb, &cc, false)) {
    int64_t shape[2] = {R, C}, strides[8] = {C, 1, 0, 1, 1, 0, C, 1};
    void *bufs[4] = {m, row, col, mo};
    cc.run(shape, bufs, strides, 0, 45);
    cc.run(shape, bufs, strides, 45, 46);
    cc.run(shape, bufs, strides, 46, R * C);
    int bad = 0;
    for (int i = 0; i < R; i++)
      for (int j = 0; j < C; j++) bad += mo[i * C + j] != m[i * C + j] - row[j] + col[i];
    CHECK(bad == 0, "2-D broadcast: %d wrong", bad);
    g_t->release(g_t, &cc);
  }
}

/* ---- integer edge cases ---------------------------------------------------------------------------- */
typedef struct IntCase { LoomDType t; int bits; bool sign; } IntCase;

static int64_t wrap_s(int64_t v, int bits) {
  if (bits == 64) return v;
  uint64_t m = (1ull << bits) - 1;
  uint64_t u = (uint64_t)v & m;
  if (u >> (bits - 1)) u |= ~m;
  return (int64_t)u;
}
static uint64_t wrap_u(uint64_t v, int bits) { return bits == 64 ? v : v & ((1ull << bits) - 1); }

static int64_t ref_int(LoomOp op, int64_t a, int64_t b, int bits, bool sign) {
  if (sign) {
    int64_t mn = bits == 64 ? INT64_MIN : -(1ll << (bits - 1));
    switch (op) {
    case LOOM_OP_FLOORDIV: {
      if (b == 0) return 0;
      if (b == -1) return a == mn ? mn : -a;
      int64_t q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
      return q;
    }
    case LOOM_OP_MOD: {
      if (b == 0 || b == -1) return 0;
      int64_t r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    case LOOM_OP_LEFT_SHIFT: return (b < 0 || b >= bits) ? 0 : wrap_s((int64_t)((uint64_t)a << b), bits);
    case LOOM_OP_RIGHT_SHIFT: return (b < 0 || b >= bits) ? (a < 0 ? -1 : 0) : a >> b;
    case LOOM_OP_POW: {
      if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
      uint64_t r = 1, x = (uint64_t)a;
      for (int64_t e = b; e; e >>= 1) { if (e & 1) r *= x; x *= x; }
      return wrap_s((int64_t)r, bits);
    }
    default: return 0;
    }
  }
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (op) {
  case LOOM_OP_FLOORDIV: return ub ? (int64_t)(ua / ub) : 0;
  case LOOM_OP_MOD: return ub ? (int64_t)(ua % ub) : 0;
  case LOOM_OP_LEFT_SHIFT: return ub >= (uint64_t)bits ? 0 : (int64_t)wrap_u(ua << ub, bits);
  case LOOM_OP_RIGHT_SHIFT: return ub >= (uint64_t)bits ? 0 : (int64_t)(ua >> ub);
  case LOOM_OP_POW: {
    uint64_t r = 1, x = ua;
    for (uint64_t e = ub; e; e >>= 1) { if (e & 1) r *= x; x *= x; }
    return (int64_t)wrap_u(r, bits);
  }
  default: return 0;
  }
}

static int64_t get_int(const void *p, int i, int bits, bool sign) {
  switch (bits) {
  case 8: return sign ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
  case 16: return sign ? ((const int16_t *)p)[i] : ((const uint16_t *)p)[i];
  case 32: return sign ? ((const int32_t *)p)[i] : (int64_t)((const uint32_t *)p)[i];
  default: return ((const int64_t *)p)[i];
  }
}
static void set_int(void *p, int i, int bits, int64_t v) {
  switch (bits) {
  case 8: ((int8_t *)p)[i] = (int8_t)v; break;
  case 16: ((int16_t *)p)[i] = (int16_t)v; break;
  case 32: ((int32_t *)p)[i] = (int32_t)v; break;
  default: ((int64_t *)p)[i] = v; break;
  }
}

static void test_int_ops(void) {
  static const IntCase cases[] = {{LOOM_INT8, 8, true},   {LOOM_INT16, 16, true}, {LOOM_INT32, 32, true},
                                  {LOOM_INT64, 64, true}, {LOOM_UINT8, 8, false}, {LOOM_UINT16, 16, false},
                                  {LOOM_UINT32, 32, false}, {LOOM_UINT64, 64, false}};
  static const LoomOp ops[] = {LOOM_OP_FLOORDIV, LOOM_OP_MOD, LOOM_OP_LEFT_SHIFT, LOOM_OP_RIGHT_SHIFT, LOOM_OP_POW};
  static const int64_t seeds[] = {0, 1, -1, 2, -2, 3, -3, 7, -7, 63, 64, 65, 100, -100, INT64_MAX, INT64_MIN, 5, -8, 31, 33};
  enum { NS = sizeof seeds / sizeof seeds[0], NP = NS * NS };
  static int64_t A[NP], B[NP], O[NP];
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const IntCase *ic = &cases[c];
    int64_t mn = ic->sign ? (ic->bits == 64 ? INT64_MIN : -(1ll << (ic->bits - 1))) : 0;
    int64_t mx = ic->sign ? (ic->bits == 64 ? INT64_MAX : (1ll << (ic->bits - 1)) - 1) : -1;
    for (int i = 0; i < NS; i++)
      for (int j = 0; j < NS; j++) {
        int64_t x = seeds[i] == INT64_MIN ? mn : seeds[i] == INT64_MAX ? mx : seeds[i];
        int64_t y = seeds[j] == INT64_MIN ? mn : seeds[j] == INT64_MAX ? mx : seeds[j];
        set_int(A, i * NS + j, ic->bits, x);
        set_int(B, i * NS + j, ic->bits, y);
      }
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
      KB kb;
      kb_init(&kb, 1, 1);
      int ba = kb_buf(&kb, ic->t, 0, "1"), bb = kb_buf(&kb, ic->t, 0, "1"), bo = kb_buf(&kb, ic->t, 1, "1");
      kb_store(&kb, KP_MAP, bo, kb_bin(&kb, ops[o], ic->t, kb_load(&kb, ba, ic->t), kb_load(&kb, bb, ic->t)));
      CgCompiled cc;
      if (!compile(&kb, &cc, false)) continue;
      int64_t shape[1] = {NP}, strides[3] = {1, 1, 1};
      void *bufs[3] = {A, B, O};
      cc.run(shape, bufs, strides, 0, NP);
      int bad = 0;
      for (int i = 0; i < NP; i++) {
        int64_t x = get_int(A, i, ic->bits, ic->sign), y = get_int(B, i, ic->bits, ic->sign);
        int64_t wbuf = 0; /* the reference, wrapped to the dtype */
        set_int(&wbuf, 0, ic->bits, ref_int(ops[o], x, y, ic->bits, ic->sign));
        int64_t want = get_int(&wbuf, 0, ic->bits, ic->sign);
        int64_t got = get_int(O, i, ic->bits, ic->sign);
        if (got != want) {
          if (bad < 3) printf("  %s op %d: %lld, %lld -> %lld, want %lld\n", loom_dtype_name(ic->t), (int)ops[o],
                              (long long)x, (long long)y, (long long)got, (long long)want);
          bad++;
        }
      }
      CHECK(bad == 0, "%s op %d: %d wrong", loom_dtype_name(ic->t), (int)ops[o], bad);
      g_t->release(g_t, &cc);
    }
  }
}

/* npy_divmod */
static double ref_fdivmod(double a, double b, double *modulus) {
  double mod = fmod(a, b);
  if (!b) { *modulus = mod; return a / b; }
  double div = (a - mod) / b;
  if (mod) { if ((b < 0) != (mod < 0)) { mod += b; div -= 1.0; } }
  else mod = copysign(0.0, b);
  double fd;
  if (div) { fd = floor(div); if (div - fd > 0.5) fd += 1.0; }
  else fd = copysign(0.0, a / b);
  *modulus = mod;
  return fd;
}

static void test_float_divmod(void) {
  static const double v[] = {0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0, 0.1, 1e300, -1e-300, INFINITY, -INFINITY, NAN, 3.0};
  enum { NV = sizeof v / sizeof v[0], NP = NV * NV };
  static double A[NP], B[NP], Q[NP], M[NP];
  for (int i = 0; i < NV; i++)
    for (int j = 0; j < NV; j++) A[i * NV + j] = v[i], B[i * NV + j] = v[j];
  KB kb;
  kb_init(&kb, 1, 1);
  int ba = kb_buf(&kb, LOOM_FLOAT64, 0, "1"), bb = kb_buf(&kb, LOOM_FLOAT64, 0, "1");
  int bq = kb_buf(&kb, LOOM_FLOAT64, 1, "1"), bm = kb_buf(&kb, LOOM_FLOAT64, 1, "1");
  int la = kb_load(&kb, ba, LOOM_FLOAT64), lb = kb_load(&kb, bb, LOOM_FLOAT64);
  kb_store(&kb, KP_MAP, bq, kb_bin(&kb, LOOM_OP_FLOORDIV, LOOM_FLOAT64, la, lb));
  kb_store(&kb, KP_MAP, bm, kb_bin(&kb, LOOM_OP_MOD, LOOM_FLOAT64, la, lb));
  CgCompiled cc;
  if (!compile(&kb, &cc, false)) return;
  int64_t shape[1] = {NP}, strides[4] = {1, 1, 1, 1};
  void *bufs[4] = {A, B, Q, M};
  cc.run(shape, bufs, strides, 0, NP);
  int bad = 0;
  for (int i = 0; i < NP; i++) {
    double m, q = ref_fdivmod(A[i], B[i], &m);
    bool okq = (isnan(q) && isnan(Q[i])) || (q == Q[i] && signbit(q) == signbit(Q[i]));
    bool okm = (isnan(m) && isnan(M[i])) || (m == M[i] && signbit(m) == signbit(M[i]));
    if (!okq || !okm) {
      if (bad < 4) printf("  divmod(%g, %g) = %g, %g; want %g, %g\n", A[i], B[i], Q[i], M[i], q, m);
      bad++;
    }
  }
  CHECK(bad == 0, "float floordiv/mod: %d wrong", bad);
  g_t->release(g_t, &cc);
}

/* ---- casts and float16 ------------------------------------------------------------------------------ */
static void test_float16(void) {
  enum { N = 4096 };
  static uint16_t h[N], ho[N];
  static float f[N];
  static _Float16 hf[N];
  for (int i = 0; i < N; i++) h[i] = (uint16_t)(i * 16 + 3);
  for (int i = 0; i < N; i++) f[i] = (float)((i - N / 2) * 0.013 + 1e-5 * i);
  /* f16 -> f32 -> (x * 1) -> f16: bit exact for non-NaN */
  KB kb;
  kb_init(&kb, 1, 1);
  int bh = kb_buf(&kb, LOOM_FLOAT16, 0, "1"), bo = kb_buf(&kb, LOOM_FLOAT16, 1, "1");
  int x = kb_load(&kb, bh, LOOM_FLOAT32);
  kb_store(&kb, KP_MAP, bo, kb_bin(&kb, LOOM_OP_MUL, LOOM_FLOAT32, x, kb_constf(&kb, LOOM_FLOAT32, 1.0)));
  CgCompiled cc;
  if (compile(&kb, &cc, false)) {
    int64_t shape[1] = {N}, strides[2] = {1, 1};
    void *bufs[2] = {h, ho};
    cc.run(shape, bufs, strides, 0, N);
    int bad = 0;
    for (int i = 0; i < N; i++) {
      bool nan = (h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff);
      if (!nan && ho[i] != h[i]) bad++;
    }
    CHECK(bad == 0, "float16 round trip: %d wrong", bad);
    g_t->release(g_t, &cc);
  }
  /* f32 -> f16 rounding matches the C compiler's _Float16 conversion */
  kb_init(&kb, 1, 1);
  int bf = kb_buf(&kb, LOOM_FLOAT32, 0, "1");
  bo = kb_buf(&kb, LOOM_FLOAT16, 1, "1");
  kb_store(&kb, KP_MAP, bo, kb_load(&kb, bf, LOOM_FLOAT32));
  if (compile(&kb, &cc, false)) {
    int64_t shape[1] = {N}, strides[2] = {1, 1};
    void *bufs[2] = {f, hf};
    cc.run(shape, bufs, strides, 0, N);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += hf[i] != (_Float16)f[i];
    CHECK(bad == 0, "float32 -> float16: %d wrong", bad);
    g_t->release(g_t, &cc);
  }
  /* saturating float -> int8, NaN -> 0; bool of NaN is true */
  static const double fv[] = {NAN, 1e9, -1e9, 127.9, -128.9, 3.5, -0.0};
  enum { NF = sizeof fv / sizeof fv[0] };
  double in[NF];
  int8_t oi[NF];
  uint8_t ob[NF];
  memcpy(in, fv, sizeof in);
  kb_init(&kb, 1, 1);
  int bi = kb_buf(&kb, LOOM_FLOAT64, 0, "1"), b8 = kb_buf(&kb, LOOM_INT8, 1, "1"), bb = kb_buf(&kb, LOOM_BOOL, 1, "1");
  x = kb_load(&kb, bi, LOOM_FLOAT64);
  kb_store(&kb, KP_MAP, b8, kb_cast(&kb, x, LOOM_INT8));
  kb_store(&kb, KP_MAP, bb, kb_cast(&kb, x, LOOM_BOOL));
  if (compile(&kb, &cc, false)) {
    int64_t shape[1] = {NF}, strides[3] = {1, 1, 1};
    void *bufs[3] = {in, oi, ob};
    cc.run(shape, bufs, strides, 0, NF);
    static const int8_t wi[NF] = {0, 127, -128, 127, -128, 3, 0};
    static const uint8_t wb[NF] = {1, 1, 1, 1, 1, 1, 0};
    CHECK(memcmp(oi, wi, NF) == 0 && memcmp(ob, wb, NF) == 0, "saturating casts / bool of NaN");
    g_t->release(g_t, &cc);
  }
}

/* ---- reductions ------------------------------------------------------------------------------------- */
static void test_sums(void) {
  enum { O = 7, R = 1001 };
  static double x[O * R], out[O], outT[R];
  for (int i = 0; i < O * R; i++) x[i] = sin(i * 0.1) + 1.0 / (1 + i % 13);
  /* inner-axis sum: dims [O, R], x strides [R, 1] */
  KB kb;
  kb_init(&kb, 2, 1);
  int bx = kb_buf(&kb, LOOM_FLOAT64, 0, "a1"), bo = kb_buf(&kb, LOOM_FLOAT64, 1, "10");
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT64, kb_load(&kb, bx, LOOM_FLOAT64));
  kb_store(&kb, KP_FINAL, bo, kb_acc(&kb, 0, LOOM_FLOAT64));
  CgCompiled cc;
  if (compile(&kb, &cc, false)) {
    int64_t shape[2] = {O, R}, strides[4] = {R, 1, 1, 0};
    void *bufs[2] = {x, out};
    cc.run(shape, bufs, strides, 0, O);
    double worst = 0;
    for (int o = 0; o < O; o++) {
      double s = 0;
      for (int r = 0; r < R; r++) s += x[o * R + r];
      worst = fmax(worst, fabs(out[o] - s) / fabs(s));
    }
    CHECK(worst < 1e-13, "inner sum: rel err %g", worst);
    CHECK(cc.partial != NULL && cc.acc_size == 8, "inner sum has partial/finish");
    g_t->release(g_t, &cc);
  }
  /* outer-axis sum over axis 0 of x viewed as [O rows, R cols]: dims [R (kept), O (reduced)] */
  kb_init(&kb, 2, 1);
  bx = kb_buf(&kb, LOOM_FLOAT64, 0, "1a");
  bo = kb_buf(&kb, LOOM_FLOAT64, 1, "10");
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT64, kb_load(&kb, bx, LOOM_FLOAT64));
  kb_store(&kb, KP_FINAL, bo, kb_acc(&kb, 0, LOOM_FLOAT64));
  if (compile(&kb, &cc, false)) {
    int64_t shape[2] = {R, O}, strides[4] = {1, R, 1, 0};
    void *bufs[2] = {x, outT};
    cc.run(shape, bufs, strides, 0, 500);
    cc.run(shape, bufs, strides, 500, R);
    double worst = 0;
    for (int r = 0; r < R; r++) {
      double s = 0;
      for (int o = 0; o < O; o++) s += x[o * R + r];
      worst = fmax(worst, fabs(outT[r] - s) / fmax(fabs(s), 1e-300));
    }
    CHECK(worst < 1e-13, "outer sum: rel err %g", worst);
    g_t->release(g_t, &cc);
  }
  /* full sum via partial + finish (ndim 1, nkeep 0) of float32 accumulated in float32, with a
   * FINAL phase that stores acc * 2 */
  enum { N = 100003 };
  static float xf[N];
  float res[2] = {0, 0};
  for (int i = 0; i < N; i++) xf[i] = (float)(1.0 / (1 + i % 101));
  kb_init(&kb, 1, 0);
  bx = kb_buf(&kb, LOOM_FLOAT32, 0, "1");
  bo = kb_buf(&kb, LOOM_FLOAT32, 1, "0");
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT32, kb_load(&kb, bx, LOOM_FLOAT32));
  kb_store(&kb, KP_FINAL, bo, kb_bin(&kb, LOOM_OP_MUL, LOOM_FLOAT32, kb_acc(&kb, 0, LOOM_FLOAT32), kb_constf(&kb, LOOM_FLOAT32, 2.0)));
  if (compile(&kb, &cc, false) && cc.partial && cc.finish) {
    int64_t shape[1] = {N}, strides[2] = {1, 0};
    void *bufs[2] = {xf, &res[0]};
    double ref = 0;
    for (int i = 0; i < N; i++) ref += xf[i];
    uint8_t accs[4 * 8];
    int64_t cuts[5] = {0, 30000, 60001, 90000, N};
    for (int p = 0; p < 4; p++) cc.partial(shape, bufs, strides, 0, cuts[p], cuts[p + 1], accs + 8 * p);
    cc.finish(shape, bufs, strides, 0, accs, 4);
    float split1 = res[0];
    for (int p = 0; p < 4; p++) cc.partial(shape, bufs, strides, 0, cuts[p], cuts[p + 1], accs + 8 * p);
    cc.finish(shape, bufs, strides, 0, accs, 4);
    CHECK(memcmp(&split1, &res[0], 4) == 0, "partial+finish deterministic");
    CHECK(fabs(split1 - 2 * ref) / (2 * ref) < 1e-5, "full sum partial+finish: %.9g vs %.9g", split1, 2 * ref);
    cc.run(shape, bufs, strides, 0, 1);
    CHECK(fabs(res[0] - 2 * ref) / (2 * ref) < 1e-5, "full sum run: %.9g vs %.9g", res[0], 2 * ref);
    /* empty R: identity */
    int64_t zshape[1] = {0};
    cc.run(zshape, bufs, strides, 0, 1);
    CHECK(res[0] == 0.0f, "empty sum gives 0");
    g_t->release(g_t, &cc);
  }
}

static void test_argmax(void) {
  enum { N = 64 };
  static double x[N];
  int64_t out = -1;
  KB kb;
  kb_init(&kb, 1, 0);
  int bx = kb_buf(&kb, LOOM_FLOAT64, 0, "1"), bo = kb_buf(&kb, LOOM_INT64, 1, "0");
  kb_reduce(&kb, LOOM_REDUCE_ARGMAX, LOOM_INT64, kb_load(&kb, bx, LOOM_FLOAT64));
  kb_store(&kb, KP_FINAL, bo, kb_acc(&kb, 0, LOOM_INT64));
  CgCompiled cc;
  if (!compile(&kb, &cc, false)) return;
  int64_t shape[1] = {N}, strides[2] = {1, 0};
  void *bufs[2] = {x, &out};
  uint8_t accs[3 * 16];
  int64_t cuts[4] = {0, 20, 40, N};
  /* ties: max 5 at 10, 30, 50 -> 10 */
  for (int i = 0; i < N; i++) x[i] = i % 7;
  x[10] = x[30] = x[50] = 9;
  cc.run(shape, bufs, strides, 0, 1);
  CHECK(out == 10, "argmax ties run: %lld", (long long)out);
  for (int p = 0; p < 3; p++) cc.partial(shape, bufs, strides, 0, cuts[p], cuts[p + 1], accs + 16 * p);
  cc.finish(shape, bufs, strides, 0, accs, 3);
  CHECK(out == 10, "argmax ties split: %lld", (long long)out);
  /* NaN at 45 and 52 -> 45 */
  x[45] = NAN, x[52] = NAN;
  cc.run(shape, bufs, strides, 0, 1);
  CHECK(out == 45, "argmax NaN run: %lld", (long long)out);
  for (int p = 0; p < 3; p++) cc.partial(shape, bufs, strides, 0, cuts[p], cuts[p + 1], accs + 16 * p);
  cc.finish(shape, bufs, strides, 0, accs, 3);
  CHECK(out == 45, "argmax NaN split: %lld", (long long)out);
  /* all -inf -> 0; split parts too */
  for (int i = 0; i < N; i++) x[i] = -INFINITY;
  for (int p = 0; p < 3; p++) cc.partial(shape, bufs, strides, 0, cuts[p], cuts[p + 1], accs + 16 * p);
  cc.finish(shape, bufs, strides, 0, accs, 3);
  CHECK(out == 0, "argmax all -inf: %lld", (long long)out);
  g_t->release(g_t, &cc);
}


/* ---- vector arg-reductions (lower_host_red.c) ----------------------------------------------------
 * argmin / argmax of float32, float64 and int8 over ranges long enough for the vector path, with
 * ties across lanes and blocks, NaN at many places, all-identity inputs, and split parts whose cuts
 * are not multiples of the lanes; the reference is a plain first-extreme loop. */
static int64_t ref_arg(bool max, const double *x, int64_t lo, int64_t hi) {
  int64_t best = lo;
  for (int64_t i = lo; i < hi; i++) {
    double v = x[i], c = x[best];
    if (isnan(c)) break;
    if (isnan(v) || (max ? v > c : v < c)) best = i;
  }
  return best;
}

static void test_argmax_vector(void) {
  enum { N = 5000 };
  static double xd[N];
  static float xf[N];
  static int8_t xi[N];
  LoomDType types[3] = {LOOM_FLOAT64, LOOM_FLOAT32, LOOM_INT8};
  void *data[3] = {xd, xf, xi};
  for (int ti = 0; ti < 3; ti++)
    for (int op = 0; op < 2; op++) {
      bool max = op == 0;
      LoomDType t = types[ti], ct = ti == 2 ? LOOM_INT8 : t;
      KB kb;
      kb_init(&kb, 1, 0);
      int bx = kb_buf(&kb, t, 0, "a"), bo = kb_buf(&kb, LOOM_INT64, 1, "0");
      kb_reduce(&kb, max ? LOOM_REDUCE_ARGMAX : LOOM_REDUCE_ARGMIN, LOOM_INT64, kb_load(&kb, bx, ct));
      kb_store(&kb, KP_FINAL, bo, kb_acc(&kb, 0, LOOM_INT64));
      CgCompiled cc;
      if (!compile(&kb, &cc, ti == 1 && op == 0)) continue;
      if (cc.llvm_ir) /* the fold is vector code, not a scalar chain */
        CHECK(strstr(cc.llvm_ir, "fcmp ogt <") || strstr(cc.llvm_ir, "fcmp olt <"), "argmax f32: no vector compare in the IR");
      for (int scen = 0; scen < 7; scen++) {
        for (int i = 0; i < N; i++) {
          double v = (double)((i * 7919) % 61) - 30;
          if (scen == 1) v = (double)(i % 5);                      /* ties everywhere */
          if (scen == 2) v = max ? -INFINITY : INFINITY;           /* all identity */
          if (scen == 3) v = (double)((i * 37) % 101);
          if (scen == 4) v = (double)(i % 3 == 0 ? 40 : -40);
          if (scen == 5) v = (double)i;                            /* increasing */
          if (scen == 6) v = (double)(N - i);                      /* decreasing */
          xd[i] = v;
        }
        if (scen == 3) xd[4097] = NAN, xd[4500] = NAN, xd[100] = -NAN;
        if (scen == 4) xd[63] = NAN;
        if (ti == 2)
          for (int i = 0; i < N; i++) xd[i] = isnan(xd[i]) ? 0 : isinf(xd[i]) ? (max ? -128 : 127) : fmax(-128, fmin(127, xd[i]));
        for (int i = 0; i < N; i++) {
          xf[i] = (float)xd[i];
          xi[i] = (int8_t)xd[i];
        }
        /* whole ranges of several lengths, forwards and with stride -1 (reversed view) */
        int64_t lens[5] = {64, 65, 2048, 2049, N};
        for (int li = 0; li < 5; li++)
          for (int rev = 0; rev < 2; rev++) {
            int64_t n = lens[li], out = -1;
            size_t isz = loom_dtype_size(t);
            int64_t shape[1] = {n}, strides[2] = {rev ? -1 : 1, 0};
            void *bufs[2] = {rev ? (char *)data[ti] + (size_t)(n - 1) * isz : data[ti], &out};
            cc.run(shape, bufs, strides, 0, 1);
            static double tmp[N];
            for (int64_t i = 0; i < n; i++) tmp[i] = xd[rev ? n - 1 - i : i];
            int64_t want = ref_arg(max, tmp, 0, n);
            CHECK(out == want, "arg%s %s scen %d n %lld rev %d: %lld, want %lld", max ? "max" : "min",
                  loom_dtype_name(t), scen, (long long)n, rev, (long long)out, (long long)want);
          }
        /* split into parts at uneven cuts, then finish */
        int64_t cuts[5] = {0, 70, 2111, 2200, N}, out = -1;
        uint8_t accs[4 * 16];
        int64_t shape[1] = {N}, strides[2] = {1, 0};
        void *bufs[2] = {data[ti], &out};
        for (int p = 0; p < 4; p++) cc.partial(shape, bufs, strides, 0, cuts[p], cuts[p + 1], accs + 16 * p);
        cc.finish(shape, bufs, strides, 0, accs, 4);
        int64_t want = ref_arg(max, xd, 0, N);
        CHECK(out == want, "arg%s %s scen %d split: %lld, want %lld", max ? "max" : "min", loom_dtype_name(t), scen,
              (long long)out, (long long)want);
      }
      g_t->release(g_t, &cc);
    }
}

/* ---- vector math: no scalar math call in a vector loop body -------------------------------------- */
static void test_vector_math_in_loops(void) {
  KB kb; /* mish: x * tanh(log1p(exp(x))), float32 */
  kb_init(&kb, 1, 1);
  int bx = kb_buf(&kb, LOOM_FLOAT32, 0, "1"), bo = kb_buf(&kb, LOOM_FLOAT32, 1, "1");
  int x = kb_load(&kb, bx, LOOM_FLOAT32);
  int t = kb_un(&kb, LOOM_OP_TANH, LOOM_FLOAT32, kb_un(&kb, LOOM_OP_LOG1P, LOOM_FLOAT32, kb_un(&kb, LOOM_OP_EXP, LOOM_FLOAT32, x)));
  kb_store(&kb, KP_MAP, bo, kb_bin(&kb, LOOM_OP_MUL, LOOM_FLOAT32, x, t));
  CgCompiled cc;
  if (!compile(&kb, &cc, true)) return;
  const char *ir = cc.llvm_ir ? cc.llvm_ir : "";
  bool sleef = strstr(g_t->describe(g_t), " sleef") != NULL;
  const char *body = strstr(ir, "\nvector.body:");
  CHECK(!sleef || body, "mish: the loop was not vectorized");
  if (body) {
    const char *end = strstr(body + 1, "\n\n");
    const char *next = body + 1;
    /* the vector body ends at the next block label */
    for (const char *p = strchr(body + 1, '\n'); p && (!end || p < end); p = strchr(p + 1, '\n'))
      if (p[1] && p[1] != ' ' && p[1] != '\n') { end = p; break; }
    size_t n = end ? (size_t)(end - next) : strlen(next);
    char *blk = malloc(n + 1);
    if (blk) {
      memcpy(blk, next, n);
      blk[n] = 0;
      CHECK(strstr(blk, "call float @") == NULL, "mish: a scalar math call in the vector body:\n%s", blk);
      /* exp, log1p and tanh are Loom's own inline code on the host (math_exp.c, math_log1p.c, math_tanh.c);
       * with LOOM_HOST_POLY_*=0 they are SLEEF's vector calls: either way vector math, no scalar call */
      CHECK(strstr(blk, "@_ZGV") != NULL || strstr(blk, " x float>") != NULL, "mish: no vector math in the vector body");
      if (strstr(g_t->describe(g_t), "vw512")) CHECK(strstr(blk, "<16 x float>") != NULL, "mish: not 512-bit vectors");
      free(blk);
    }
  }
  CHECK(strstr(ir, "nobuiltin") == NULL || !sleef, "mish: a math call is still marked nobuiltin");
  /* and the values: within 4 ulp of float64 math rounded to float32, tails included */
  enum { N = 1000 + 13 };
  static float xs[N], os[N];
  for (int i = 0; i < N; i++) xs[i] = (float)(i - 500) * 0.013f;
  int64_t shape[1] = {N}, strides[2] = {1, 1};
  void *bufs[2] = {xs, os};
  cc.run(shape, bufs, strides, 0, N);
  double worst = 0;
  for (int i = 0; i < N; i++) {
    double w = (double)xs[i] * tanh(log1p(exp((double)xs[i])));
    double u = fabs(nextafterf((float)w, INFINITY) - (float)w);
    worst = fmax(worst, fabs(os[i] - w) / (u > 0 ? u : 1e-30));
  }
  CHECK(worst <= 8, "mish float32: worst %.1f ulp", worst);
  g_t->release(g_t, &cc);
}

/* ---- outer-axis reductions (the reduced axis is outer in memory: column sums and friends) --------
 * x is an [R][A][C] float64 array; the kernel reduces axis 0: dims [A, C, R] (nkeep 2) or, when
 * A == 0, dims [C, R] (nkeep 1) over an [R][C] array. run() is called over several O ranges whose
 * ends cross blocks and rows of the last O dim. Results are compared with float64 loops in R order. */
static double ref_fold(LoomReduceOp op, const double *x, int n, int stride, int64_t *arg) {
  double acc = op == LOOM_REDUCE_PROD || op == LOOM_REDUCE_ALL ? 1 : op == LOOM_REDUCE_MIN ? INFINITY
             : op == LOOM_REDUCE_MAX ? -INFINITY : 0;
  *arg = 0;
  for (int r = 0; r < n; r++) {
    double v = x[(size_t)r * (size_t)stride];
    switch (op) {
    case LOOM_REDUCE_SUM: acc += v; break;
    case LOOM_REDUCE_PROD: acc *= v; break;
    case LOOM_REDUCE_MIN: acc = isnan(acc) || isnan(v) ? NAN : fmin(acc, v); break;
    case LOOM_REDUCE_MAX: acc = isnan(acc) || isnan(v) ? NAN : fmax(acc, v); break;
    case LOOM_REDUCE_ANY: acc = acc != 0 || v != 0; break;
    case LOOM_REDUCE_ALL: acc = acc != 0 && v != 0; break;
    case LOOM_REDUCE_ARGMIN: case LOOM_REDUCE_ARGMAX:
      if (r == 0 || (!isnan(acc) && (isnan(v) || (op == LOOM_REDUCE_ARGMAX ? v > acc : v < acc)))) acc = v, *arg = r;
      break;
    default: break;
    }
  }
  return acc;
}

static bool same_double(double a, double b, double rel) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (a == b) return true;
  return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

static void outer_case(LoomReduceOp op, int A, int C, int R, const double *x) {
  bool arg = op == LOOM_REDUCE_ARGMIN || op == LOOM_REDUCE_ARGMAX;
  bool logic = op == LOOM_REDUCE_ANY || op == LOOM_REDUCE_ALL;
  LoomDType acc_t = arg ? LOOM_INT64 : logic ? LOOM_BOOL : LOOM_FLOAT64;
  int a1 = A > 0 ? A : 1, no = a1 * C;
  KB kb;
  kb_init(&kb, A > 0 ? 3 : 2, A > 0 ? 2 : 1);
  int bx = kb_buf(&kb, LOOM_FLOAT64, 0, A > 0 ? "a1a" : "1a");
  int bo = kb_buf(&kb, acc_t, 1, A > 0 ? "a10" : "10");
  int v = kb_load(&kb, bx, LOOM_FLOAT64);
  if (logic) v = kb_cast(&kb, v, LOOM_BOOL);
  kb_reduce(&kb, op, acc_t, v);
  kb_store(&kb, KP_FINAL, bo, kb_acc(&kb, 0, acc_t));
  CgCompiled cc;
  if (!compile(&kb, &cc, true)) return;
  CHECK(cc.llvm_ir && strstr(cc.llvm_ir, "outer.block"), "%s over axis 0 uses the outer strategy",
        reduce_op_name(op));
  double *out = calloc((size_t)no + 1, sizeof(double)); /* int64 / bool outputs fit too */
  int64_t shape[3], strides[6];
  if (A > 0) {
    int64_t sh[3] = {A, C, R}, st[6] = {C, 1, (int64_t)A * C, C, 1, 0};
    memcpy(shape, sh, sizeof sh), memcpy(strides, st, sizeof st);
  } else {
    int64_t sh[2] = {C, R}, st[4] = {1, C, 1, 0};
    memcpy(shape, sh, sizeof sh), memcpy(strides, st, sizeof st);
  }
  void *bufs[2] = {(void *)x, out};
  int64_t cut1 = no / 3 + 1, cut2 = no - 5 > cut1 ? no - 5 : no;
  cc.run(shape, bufs, strides, 0, cut1);
  cc.run(shape, bufs, strides, cut1, cut2);
  cc.run(shape, bufs, strides, cut2, no);
  int bad = 0, first = -1;
  for (int o = 0; o < no; o++) {
    int64_t ai;
    double want = ref_fold(op, x + o, R, no, &ai);
    bool ok;
    if (arg) ok = ((int64_t *)out)[o] == ai;
    else if (logic) ok = ((uint8_t *)out)[o] == (want != 0);
    else ok = same_double(out[o], want, op == LOOM_REDUCE_SUM || op == LOOM_REDUCE_PROD ? 1e-12 : 0);
    if (!ok && bad++ == 0) first = o;
  }
  CHECK(bad == 0, "outer %s A=%d C=%d R=%d: %d wrong, first at o=%d", reduce_op_name(op), A, C, R, bad, first);
  free(out);
  g_t->release(g_t, &cc);
}

static void test_outer_reductions(void) {
  enum { R = 37, C = 1103, A = 3, C2 = 301 };
  double *x = malloc(sizeof(double) * R * C), *y = malloc(sizeof(double) * R * C);
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) {
      x[r * C + c] = (double)((r * 7 + c * 3) % 11) - 5.0 + (c % 5 == 0 ? 0.25 * r : 0); /* many ties */
      y[r * C + c] = 1.0 + 0.01 * sin(r * 0.3 + c);
    }
  for (int c = 0; c < C; c += 17) x[((c * 5) % R) * C + c] = NAN;  /* NaN in some columns */
  for (int c = 1; c < C; c += 13) x[((c * 3) % R) * C + c] = NAN;  /* sometimes two */
  for (int c = 2; c < C; c += 19) x[((c * 7) % R) * C + c] = INFINITY;
  for (int c = 3; c < C; c += 23)
    for (int r = 0; r < R; r++) x[r * C + c] = c % 2 ? 0.0 : 1.0; /* all-zero and all-one columns */
  for (int c = 4; c < C; c += 29)
    for (int r = 0; r < R; r++) x[r * C + c] = c % 2 ? INFINITY : -INFINITY; /* all the identity */
  LoomReduceOp ops[] = {LOOM_REDUCE_SUM, LOOM_REDUCE_MIN, LOOM_REDUCE_MAX, LOOM_REDUCE_ANY,
                        LOOM_REDUCE_ALL, LOOM_REDUCE_ARGMIN, LOOM_REDUCE_ARGMAX};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    outer_case(ops[i], 0, C, R, x);     /* [R][C]: 3 balanced blocks per full range */
    outer_case(ops[i], A, C2, R, x);    /* [R][A][C2]: blocks end at rows of C2 */
    outer_case(ops[i], 0, 5, R, x);     /* a tiny row */
  }
  outer_case(LOOM_REDUCE_PROD, 0, C, R, y);
  outer_case(LOOM_REDUCE_PROD, A, C2, R, y);
  outer_case(LOOM_REDUCE_SUM, 0, C, 0, x); /* empty R: identities */
  outer_case(LOOM_REDUCE_PROD, A, C2, 0, x);
  outer_case(LOOM_REDUCE_ALL, 0, C, 0, x);
  outer_case(LOOM_REDUCE_MAX, 0, C, 1, x);

  /* logsumexp over axis 0 (two REDUCE phases, the second reading the first, then FINAL), times a
   * per-column weight w (KL_ZERO along R), float32 output */
  {
    KB kb;
    kb_init(&kb, 2, 1);
    int bx = kb_buf(&kb, LOOM_FLOAT64, 0, "1a"), bw = kb_buf(&kb, LOOM_FLOAT64, 0, "10");
    int bo = kb_buf(&kb, LOOM_FLOAT32, 1, "10");
    int l = kb_load(&kb, bx, LOOM_FLOAT64);
    kb_reduce(&kb, LOOM_REDUCE_MAX, LOOM_FLOAT64, l);
    int mx = kb_acc(&kb, 0, LOOM_FLOAT64);
    int e = kb_un(&kb, LOOM_OP_EXP, LOOM_FLOAT64, kb_bin(&kb, LOOM_OP_SUB, LOOM_FLOAT64, l, mx));
    kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT64, e);
    int lse = kb_bin(&kb, LOOM_OP_ADD, LOOM_FLOAT64, kb_un(&kb, LOOM_OP_LOG, LOOM_FLOAT64, kb_acc(&kb, 1, LOOM_FLOAT64)), mx);
    int res = kb_bin(&kb, LOOM_OP_MUL, LOOM_FLOAT64, lse, kb_load(&kb, bw, LOOM_FLOAT64));
    kb_store(&kb, KP_FINAL, bo, kb_cast(&kb, res, LOOM_FLOAT32));
    CgCompiled cc;
    if (compile(&kb, &cc, true)) {
      CHECK(cc.llvm_ir && strstr(cc.llvm_ir, "outer.block"), "logsumexp over axis 0 uses the outer strategy");
      CHECK(cc.partial == NULL, "two-phase kernel has no partial");
      static double w[C];
      static float out[C];
      for (int c = 0; c < C; c++) w[c] = 1.0 + c % 3;
      int64_t shape[2] = {C, R}, strides[6] = {1, C, 1, 0, 1, 0};
      void *bufs[3] = {y, w, out};
      cc.run(shape, bufs, strides, 0, 700);
      cc.run(shape, bufs, strides, 700, C);
      double worst = 0;
      for (int c = 0; c < C; c++) {
        double m = -INFINITY, s = 0;
        for (int r = 0; r < R; r++) m = fmax(m, y[r * C + c]);
        for (int r = 0; r < R; r++) s += exp(y[r * C + c] - m);
        float want = (float)((log(s) + m) * w[c]);
        worst = fmax(worst, fabs(out[c] - want) / fabs(want));
      }
      CHECK(worst < 1e-6, "outer logsumexp: rel err %g", worst);
      g_t->release(g_t, &cc);
    }
  }
  /* softmax over axis 0 has a MAP phase: the outer strategy walks it by blocks (lower_host_outer_map.c) */
  {
    KB kb;
    kb_init(&kb, 2, 1);
    int bx = kb_buf(&kb, LOOM_FLOAT64, 0, "1a"), by = kb_buf(&kb, LOOM_FLOAT64, 1, "1a");
    int l = kb_load(&kb, bx, LOOM_FLOAT64);
    kb_reduce(&kb, LOOM_REDUCE_MAX, LOOM_FLOAT64, l);
    int e = kb_un(&kb, LOOM_OP_EXP, LOOM_FLOAT64, kb_bin(&kb, LOOM_OP_SUB, LOOM_FLOAT64, l, kb_acc(&kb, 0, LOOM_FLOAT64)));
    kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT64, e);
    kb_store(&kb, KP_MAP, by, kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT64, e, kb_acc(&kb, 1, LOOM_FLOAT64)));
    CgCompiled cc;
    if (compile(&kb, &cc, true)) {
      CHECK(cc.llvm_ir && strstr(cc.llvm_ir, "outer.block"), "softmax over axis 0 uses the outer strategy");
      double *z = malloc(sizeof(double) * R * C);
      int64_t shape[2] = {C, R}, strides[4] = {1, C, 1, C};
      void *bufs[2] = {y, z};
      cc.run(shape, bufs, strides, 0, C);
      double worst = 0;
      for (int c = 0; c < C; c++) {
        double m = -INFINITY, s = 0;
        for (int r = 0; r < R; r++) m = fmax(m, y[r * C + c]);
        for (int r = 0; r < R; r++) s += exp(y[r * C + c] - m);
        for (int r = 0; r < R; r++) worst = fmax(worst, fabs(z[r * C + c] - exp(y[r * C + c] - m) / s));
      }
      CHECK(worst < 1e-14, "outer softmax: max abs err %g", worst);
      free(z);
      g_t->release(g_t, &cc);
    }
  }
  free(x);
  free(y);
}

static void test_softmax(void) {
  enum { O = 5, R = 300 };
  static double x[O * R], y[O * R];
  for (int i = 0; i < O * R; i++) x[i] = sin(i * 0.7) * 10;
  KB kb;
  kb_init(&kb, 2, 1);
  int bx = kb_buf(&kb, LOOM_FLOAT64, 0, "a1"), by = kb_buf(&kb, LOOM_FLOAT64, 1, "a1");
  int l = kb_load(&kb, bx, LOOM_FLOAT64);
  kb_reduce(&kb, LOOM_REDUCE_MAX, LOOM_FLOAT64, l);
  int m = kb_acc(&kb, 0, LOOM_FLOAT64);
  int e = kb_un(&kb, LOOM_OP_EXP, LOOM_FLOAT64, kb_bin(&kb, LOOM_OP_SUB, LOOM_FLOAT64, l, m));
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT64, e);
  int s = kb_acc(&kb, 1, LOOM_FLOAT64);
  kb_store(&kb, KP_MAP, by, kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT64, e, s));
  CgCompiled cc;
  if (!compile(&kb, &cc, false)) return;
  CHECK(cc.partial == NULL, "softmax has no partial");
  int64_t shape[2] = {O, R}, strides[4] = {R, 1, R, 1};
  void *bufs[2] = {x, y};
  cc.run(shape, bufs, strides, 0, O);
  double worst = 0;
  for (int o = 0; o < O; o++) {
    double mx = -INFINITY, sum = 0;
    for (int r = 0; r < R; r++) mx = fmax(mx, x[o * R + r]);
    for (int r = 0; r < R; r++) sum += exp(x[o * R + r] - mx);
    for (int r = 0; r < R; r++) worst = fmax(worst, fabs(y[o * R + r] - exp(x[o * R + r] - mx) / sum));
  }
  CHECK(worst < 1e-14, "softmax: max abs err %g", worst);
  g_t->release(g_t, &cc);
}

/* ---- vector math, compile time, bandwidth -------------------------------------------------------- */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void build_bench(KB *kb) {
  kb_init(kb, 1, 1);
  int b[5];
  for (int i = 0; i < 4; i++) b[i] = kb_buf(kb, LOOM_FLOAT64, 0, "1");
  b[4] = kb_buf(kb, LOOM_FLOAT64, 1, "1");
  int l[4];
  for (int i = 0; i < 4; i++) l[i] = kb_load(kb, b[i], LOOM_FLOAT64);
  int ab = kb_bin(kb, LOOM_OP_MUL, LOOM_FLOAT64, l[0], l[1]);
  int es = kb_bin(kb, LOOM_OP_MUL, LOOM_FLOAT64, kb_un(kb, LOOM_OP_EXP, LOOM_FLOAT64, l[2]), kb_un(kb, LOOM_OP_SIN, LOOM_FLOAT64, l[3]));
  kb_store(kb, KP_MAP, b[4], kb_bin(kb, LOOM_OP_ADD, LOOM_FLOAT64, ab, es));
}

static void test_vector_math_and_perf(void) {
  KB kb;
  build_bench(&kb);
  CgCompiled cc;
  if (!compile(&kb, &cc, true)) return;
  bool vec = cc.llvm_ir && (strstr(cc.llvm_ir, "call <8 x double> @_ZGVeN8v_exp") ||
                            strstr(cc.llvm_ir, "call <4 x double> @_ZGVdN4v_exp") ||
                            strstr(cc.llvm_ir, "call <2 x double> @_ZGVbN2v_exp"));
  CHECK(vec, "optimized IR calls a SLEEF vector exp (target %s)", g_t->describe(g_t));
  if (getenv("LOOM_TEST_PRINT_IR") && cc.llvm_ir) puts(cc.llvm_ir);
  enum { N = 10000000 };
  double *a[5];
  for (int i = 0; i < 5; i++) a[i] = aligned_alloc(64, sizeof(double) * N);
  if (a[0] && a[1] && a[2] && a[3] && a[4]) {
    for (int64_t i = 0; i < N; i++) {
      a[0][i] = i * 1e-7;
      a[1][i] = 2.0 - i * 1e-7;
      a[2][i] = (i % 1000) * 1e-3;
      a[3][i] = (i % 777) * 0.01;
    }
    int64_t shape[1] = {N}, strides[5] = {1, 1, 1, 1, 1};
    void *bufs[5] = {a[0], a[1], a[2], a[3], a[4]};
    cc.run(shape, bufs, strides, 0, N);
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
      double t0 = now_ms();
      cc.run(shape, bufs, strides, 0, N);
      best = fmin(best, now_ms() - t0);
    }
    double worst = 0;
    for (int64_t i = 0; i < N; i += 997)
    { /* error relative to the larger term (the sum may cancel) */
      double t1 = a[0][i] * a[1][i], t2 = exp(a[2][i]) * sin(a[3][i]);
      double scale = fmax(fabs(t1), fabs(t2));
      worst = fmax(worst, fabs(a[4][i] - (t1 + t2)) / (scale * 0x1p-52));
    }
    CHECK(worst <= 8, "a*b + exp(c)*sin(d): worst %.1f ulp of the larger term", worst);
    printf("perf: a*b + exp(c)*sin(d), float64, 1e7 elements, 1 thread: %.2f ms, %.2f GB/s\n", best,
           5.0 * 8 * N / (best * 1e6));
  }
  for (int i = 0; i < 5; i++) free(a[i]);
  g_t->release(g_t, &cc);
  /* compile time of a small fused kernel */
  double t0 = now_ms();
  int reps = 10;
  for (int i = 0; i < reps; i++) {
    build_bench(&kb);
    if (!compile(&kb, &cc, false)) return;
    g_t->release(g_t, &cc);
  }
  printf("perf: compile time of a small fused kernel (5 buffers, exp+sin): %.2f ms\n", (now_ms() - t0) / reps);
  kb_init(&kb, 2, 1);
  int bx = kb_buf(&kb, LOOM_FLOAT64, 0, "a1"), bo = kb_buf(&kb, LOOM_FLOAT64, 1, "10");
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT64, kb_load(&kb, bx, LOOM_FLOAT64));
  kb_store(&kb, KP_FINAL, bo, kb_acc(&kb, 0, LOOM_FLOAT64));
  if (compile(&kb, &cc, true)) {
    CHECK(cc.llvm_ir && strstr(cc.llvm_ir, "fadd reassoc <"), "row sum is vectorized (reassoc vector fadd)");
    if (getenv("LOOM_TEST_PRINT_IR") && cc.llvm_ir) puts(cc.llvm_ir);
    g_t->release(g_t, &cc);
  }
  t0 = now_ms();
  for (int i = 0; i < reps; i++) {
    if (!compile(&kb, &cc, false)) return;
    g_t->release(g_t, &cc);
  }
  printf("perf: compile time of a row-sum kernel (run+partial+finish): %.2f ms\n", (now_ms() - t0) / reps);
}

/* Every op on every compute dtype compiles or is a clean LOOM_ERR_DTYPE (never an internal error). */
static void test_all_ops_compile(void) {
  int ok = 0, dtype_err = 0, other = 0;
  for (int op = 0; op < LOOM_OP_COUNT; op++) {
    for (int t = 0; t < LOOM_DTYPE_COUNT; t++) {
      if (dtype_compute((LoomDType)t) != (LoomDType)t) continue; /* storage dtypes: float16, bfloat16 */
      LoomDType rt = ir_elem_value_dtype((LoomOp)op, (LoomDType)t);
      KB kb;
      kb_init(&kb, 1, 1);
      int ba = kb_buf(&kb, (LoomDType)t, 0, "1"), bc = kb_buf(&kb, LOOM_BOOL, 0, "1");
      int bo = kb_buf(&kb, rt, 1, "1");
      int a = kb_load(&kb, ba, (LoomDType)t), c = kb_load(&kb, bc, LOOM_BOOL);
      int v = op == LOOM_OP_WHERE ? kb_ins(&kb, KI_ELEM, rt, op, c, a, a)
              : op_info((LoomOp)op)->arity == 1 ? kb_un(&kb, (LoomOp)op, rt, a) : kb_bin(&kb, (LoomOp)op, rt, a, a);
      kb_store(&kb, KP_MAP, bo, v);
      CgCompiled cc;
      Diag d = {0};
      LoomStatus st = g_t->compile(g_t, &kb.k, NULL, &cc, &d);
      if (st == LOOM_OK) {
        ok++;
        g_t->release(g_t, &cc);
      } else if (st == LOOM_ERR_DTYPE) {
        dtype_err++;
      } else {
        other++;
        printf("  op %d dtype %s: %s\n", op, loom_dtype_name((LoomDType)t), d.msg);
      }
    }
  }
  CHECK(other == 0, "every op/dtype compiles or is a dtype error (%d ok, %d dtype errors, %d other)", ok, dtype_err, other);
}

/* A few NaN-sensitive float ops against NumPy's scalar definitions. */
static void test_float_ops(void) {
  static const double v[] = {NAN, -1.5, -0.0, 0.0, 2.5, 3.5, -2.5, INFINITY};
  enum { NV = sizeof v / sizeof v[0], NP = NV * NV };
  static double A[NP], B[NP], O[6][NP];
  for (int i = 0; i < NV; i++)
    for (int j = 0; j < NV; j++) A[i * NV + j] = v[i], B[i * NV + j] = v[j];
  static const LoomOp ops[6] = {LOOM_OP_MAXIMUM, LOOM_OP_MINIMUM, LOOM_OP_FMAX, LOOM_OP_FMIN, LOOM_OP_SIGN, LOOM_OP_RINT};
  KB kb;
  kb_init(&kb, 1, 1);
  int ba = kb_buf(&kb, LOOM_FLOAT64, 0, "1"), bb = kb_buf(&kb, LOOM_FLOAT64, 0, "1");
  int la = kb_load(&kb, ba, LOOM_FLOAT64), lb = kb_load(&kb, bb, LOOM_FLOAT64);
  for (int k = 0; k < 6; k++) {
    int bo = kb_buf(&kb, LOOM_FLOAT64, 1, "1");
    kb_store(&kb, KP_MAP, bo, k < 4 ? kb_bin(&kb, ops[k], LOOM_FLOAT64, la, lb) : kb_un(&kb, ops[k], LOOM_FLOAT64, la));
  }
  CgCompiled cc;
  if (!compile(&kb, &cc, false)) return;
  int64_t shape[1] = {NP}, strides[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  void *bufs[8] = {A, B, O[0], O[1], O[2], O[3], O[4], O[5]};
  cc.run(shape, bufs, strides, 0, NP);
  int bad = 0;
  for (int i = 0; i < NP; i++) {
    double a = A[i], b = B[i], want[6];
    /* NumPy's float loops: a tie (-0.0, 0.0) gives the second operand */
    want[0] = (a > b || isnan(a)) ? a : b;
    want[1] = (a < b || isnan(a)) ? a : b;
    want[2] = (a > b || isnan(b)) ? a : b;
    want[3] = (a < b || isnan(b)) ? a : b;
    want[4] = a > 0 ? 1.0 : a < 0 ? -1.0 : a == 0 ? 0.0 : a;
    want[5] = nearbyint(a);
    for (int k = 0; k < 6; k++) {
      bool same = (isnan(want[k]) && isnan(O[k][i])) || (want[k] == O[k][i] && signbit(want[k]) == signbit(O[k][i]));
      if (!same && bad++ < 4) printf("  op %d (%g, %g) = %g, want %g\n", (int)ops[k], a, b, O[k][i], want[k]);
    }
  }
  CHECK(bad == 0, "maximum/minimum/fmax/fmin/sign/rint: %d wrong", bad);
  g_t->release(g_t, &cc);
}

static void test_errors(void) {
  KB kb;
  kb_init(&kb, 1, 1);
  int ba = kb_buf(&kb, LOOM_FLOAT64, 0, "1");
  int l = kb_load(&kb, ba, LOOM_FLOAT64);
  kb_store(&kb, KP_MAP, ba, kb_bin(&kb, LOOM_OP_ADD, LOOM_FLOAT64, l, 7)); /* forward reference */
  CgCompiled cc;
  Diag d = {0};
  LoomStatus st = g_t->compile(g_t, &kb.k, NULL, &cc, &d);
  CHECK(st == LOOM_ERR_INTERNAL && strstr(d.msg, "instruction"), "bad IR is rejected: %s", d.msg);
  kb_init(&kb, 1, 1);
  ba = kb_buf(&kb, LOOM_FLOAT64, 0, "1");
  l = kb_load(&kb, ba, LOOM_FLOAT64);
  kb_store(&kb, KP_MAP, ba, kb_bin(&kb, LOOM_OP_BITWISE_AND, LOOM_FLOAT64, l, l));
  memset(&d, 0, sizeof d);
  st = g_t->compile(g_t, &kb.k, NULL, &cc, &d);
  CHECK(st == LOOM_ERR_DTYPE, "bitwise_and of float64 is a dtype error: %s", d.msg);
}

/* ---- the GPU seam --------------------------------------------------------------------------------------
 * The shared GPU lowering driven by a made-up target's hooks (cg_gpu.h): what the lowering emits for
 * launch indices, shuffles, barriers, kernel marking, address spaces and math names must be exactly what
 * the hooks give, with the wave size's shuffle masks, and nothing of another target. */
static LLVMValueRef fake_call(CgMath *m, const char *name, LLVMTypeRef ret, LLVMTypeRef *pt, unsigned n,
                              LLVMValueRef *args) {
  LLVMValueRef fn = LLVMGetNamedFunction(m->m, name);
  LLVMTypeRef fty = LLVMFunctionType(ret, pt, n, 0);
  if (!fn) fn = LLVMAddFunction(m->m, name, fty);
  return LLVMBuildCall2(m->b, fty, fn, args, n, "");
}
static LLVMValueRef fake_index(CgMath *m, CgGpuIndex which) {
  static const char *const names[4] = {"fake.tid", "fake.ntid", "fake.bid", "fake.nbid"};
  return fake_call(m, names[which], LLVMInt32TypeInContext(m->c), NULL, 0, NULL);
}
static LLVMValueRef fake_shuffle(CgMath *m, LLVMValueRef v, int mask) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c), pt[2] = {i32, i32};
  LLVMValueRef a[2] = {v, LLVMConstInt(i32, (unsigned)mask, 0)};
  return fake_call(m, "fake.shfl", i32, pt, 2, a);
}
static void fake_barrier(CgMath *m) { fake_call(m, "fake.barrier", LLVMVoidTypeInContext(m->c), NULL, 0, NULL); }
static void fake_mark(CgMath *m, LLVMValueRef fn, int max_block, bool fit) {
  (void)fit;
  char v[16];
  snprintf(v, sizeof v, "1,%d", max_block);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateStringAttribute(m->c, "fake-kernel", 11, v, (unsigned)strlen(v)));
}
static void fake_math_name(char *buf, size_t cap, const char *base, LoomDType t) {
  snprintf(buf, cap, "__fake_%s_f%d", base, t == LOOM_FLOAT32 ? 32 : 64);
}

/* The lowered module of kb for a target of wave `wave` (NULL on error), printed. */
static char *lower_fake(KB *kb, int wave, CgGpuKernel *gk) {
  CgGpuHooks h = {.wave = wave, .as_global = 1, .as_shared = 3, .as_param = 4, .as_private = 0,
                  .param_attr = "byref", .shared_poison = true, .index = fake_index, .shuffle_xor = fake_shuffle,
                  .barrier = fake_barrier, .mark_kernel = fake_mark, .math_name = fake_math_name};
  LoomContext ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.alloc.alloc = t_alloc;
  ctx.alloc.free = t_free;
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("fake", c);
  Diag d = {0};
  LoomStatus st = cg_lower_gpu(&ctx, c, mod, &kb->k, "fk", &h, 2 * wave, gk, &d);
  CHECK(st == LOOM_OK, "fake GPU target (wave %d): %s", wave, d.msg);
  char *text = NULL;
  if (st == LOOM_OK) {
    char *t = LLVMPrintModuleToString(mod);
    text = strdup(t);
    LLVMDisposeMessage(t);
  }
  LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  return text;
}

/* Whether text calls name with the constant c as its last argument. */
static bool calls_with(const char *text, const char *name, int c) {
  char pat[64];
  snprintf(pat, sizeof pat, ", i32 %d)", c);
  for (const char *p = text; (p = strstr(p, name)); p++) {
    const char *eol = strchr(p, '\n');
    const char *q = strstr(p, pat);
    if (q && (!eol || q < eol)) return true;
  }
  return false;
}

static void test_gpu_seam(void) {
  for (int wave = 32; wave <= 64; wave *= 2) {
    /* a row sum of float64 (a 64-bit value moves as two shuffles) and its split entries */
    KB kb;
    kb_init(&kb, 2, 1);
    int bx = kb_buf(&kb, LOOM_FLOAT64, 0, "a1"), bo = kb_buf(&kb, LOOM_FLOAT64, 1, "10");
    kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT64, kb_load(&kb, bx, LOOM_FLOAT64));
    kb_store(&kb, KP_FINAL, bo, kb_acc(&kb, 0, LOOM_FLOAT64));
    CgGpuKernel gk;
    char *text = lower_fake(&kb, wave, &gk);
    if (!text) continue;
    CHECK(gk.strategy == CG_GPU_ROW && gk.wave == wave && gk.block == 2 * wave && gk.part[0] && gk.finishb[0],
          "row sum: strategy %d wave %d block %d", gk.strategy, gk.wave, gk.block);
    bool masks = true;
    for (int m = 1; m < wave; m *= 2) masks = masks && calls_with(text, "@fake.shfl(", m);
    CHECK(masks && !calls_with(text, "@fake.shfl(", wave), "wave %d: shuffle masks 1 .. %d, none of %d", wave, wave / 2,
          wave);
    CHECK(strstr(text, "@fake.tid()") && strstr(text, "@fake.ntid()") && strstr(text, "@fake.bid()") &&
              strstr(text, "@fake.nbid()") && strstr(text, "@fake.barrier()"),
          "launch indices and barriers come from the hooks");
    CHECK(strstr(text, "addrspace(3) global [32 x i64] poison") != NULL, "shared slots: the hooks' space, poison");
    CHECK(strstr(text, "ptr addrspace(4) byref([") != NULL && strstr(text, "\"fake-kernel\"=\"1,1024\"") != NULL,
          "entries: parameter block by the hooks' attribute and space, marked as kernels");
    CHECK(strstr(text, "nvvm") == NULL && strstr(text, "__nv_") == NULL, "nothing of another target");
    free(text);
    /* an elementwise exp of float32 and float64: the hooks' math names, the vector entries */
    kb_init(&kb, 1, 1);
    int a = kb_buf(&kb, LOOM_FLOAT32, 0, "1"), b = kb_buf(&kb, LOOM_FLOAT64, 0, "1");
    int o1 = kb_buf(&kb, LOOM_FLOAT32, 1, "1"), o2 = kb_buf(&kb, LOOM_FLOAT64, 1, "1");
    kb_store(&kb, KP_MAP, o1, kb_un(&kb, LOOM_OP_EXP, LOOM_FLOAT32, kb_load(&kb, a, LOOM_FLOAT32)));
    kb_store(&kb, KP_MAP, o2, kb_un(&kb, LOOM_OP_EXP, LOOM_FLOAT64, kb_load(&kb, b, LOOM_FLOAT64)));
    text = lower_fake(&kb, wave, &gk);
    if (!text) continue;
    CHECK(gk.strategy == CG_GPU_ELEMENTWISE && gk.vec_lanes == 2 && gk.vec[0] && gk.vecw[0],
          "elementwise: strategy %d lanes %d", gk.strategy, gk.vec_lanes);
    CHECK(strstr(text, "@__fake_exp_f32(") && strstr(text, "@__fake_exp_f64("), "math names from the hooks");
    CHECK(strstr(text, "ptr addrspace(1)") != NULL, "buffers in the hooks' global space");
    free(text);
  }
}

/* The NVIDIA target through the CgTarget interface: describe(), the binary kind, the entry set of a
 * compile (entries 0 only describes; no GPU is needed). */
static void test_nvptx_target(void) {
  LoomContext ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.alloc.alloc = t_alloc;
  ctx.alloc.free = t_free;
  CgTarget *t = NULL;
  Diag d = {0};
  if (cg_nvptx_target_create(&ctx, 9, 0, &t, &d) != LOOM_OK) {
    printf("  (no NVPTX backend: %s)\n", d.msg);
    return;
  }
  CHECK(t->binary == CG_BINARY_PTX && strstr(t->describe(t), "nvptx sm_90") != NULL, "nvptx: %s", t->describe(t));
  KB kb;
  kb_init(&kb, 2, 1);
  int bx = kb_buf(&kb, LOOM_FLOAT32, 0, "a1"), bo = kb_buf(&kb, LOOM_FLOAT32, 1, "10");
  kb_reduce(&kb, LOOM_REDUCE_MAX, LOOM_FLOAT32, kb_load(&kb, bx, LOOM_FLOAT32));
  kb_store(&kb, KP_FINAL, bo, kb_acc(&kb, 0, LOOM_FLOAT32));
  CgCompiled cc;
  CgCompileOptions describe_only = {.entries = 0};
  CHECK(t->compile(t, &kb.k, &describe_only, &cc, &d) == LOOM_OK && cc.kind == CG_BINARY_PTX && cc.gpu &&
            !cc.gpu->code && cc.gpu->entries == 0 && (cc.gpu->entries_all & CG_ENTRY_PART) && cc.gpu->wave == 32,
        "describe only: %s", d.msg);
  t->release(t, &cc);
  CgCompileOptions part = {.entries = CG_ENTRY_PART};
  if (t->compile(t, &kb.k, &part, &cc, &d) == LOOM_OK) {
    CHECK(cc.gpu->code && cc.gpu->code_size == strlen(cc.gpu->code) && cc.gpu->entries == CG_ENTRY_PART &&
              cc.gpu->part[0] && !cc.gpu->main[0] && strstr(cc.gpu->code, cc.gpu->part),
          "the part entry alone");
    t->release(t, &cc);
  } else {
    CHECK(false, "part entry: %s", d.msg);
  }
  t->destroy(t);
}

int main(void) {
  LoomContext ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.alloc.alloc = t_alloc;
  ctx.alloc.free = t_free;
  Diag d = {0};
  if (cg_host_target_create(&ctx, &g_t, &d) != LOOM_OK) {
    printf("cannot create the host target: %s\n0 passed, 1 failed\n", d.msg);
    return 1;
  }
  printf("target: %s\n", g_t->describe(g_t));
  test_elementwise();
  test_int_ops();
  test_float_divmod();
  test_float16();
  test_sums();
  test_argmax();
  test_argmax_vector();
  test_vector_math_in_loops();
  test_outer_reductions();
  test_softmax();
  test_errors();
  test_float_ops();
  test_all_ops_compile();
  test_vector_math_and_perf();
  test_gpu_seam();
  test_nvptx_target();
  g_t->destroy(g_t);
  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
