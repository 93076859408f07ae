/* test_random.c: loom_iota and the counter-based generator (LOOM_OP_RANDOM_BITS, RANDOM_BITS_HI).
 *
 * The reference is a Philox4x32-10 written here from the published algorithm (Salmon et al., SC'11)
 * and checked first against Random123's known-answer vectors (tests/kat_vectors of the Random123
 * distribution: counter, key, expected output). Kernels are then compared with it bit for bit: the
 * all-zero known answer straight through a kernel, and every element of arrays whose counters come
 * from iotas and their views (contiguous, 2-d, permuted, reversed, broadcast, sliced), in elementwise
 * and reduction kernels, fused with other ops, on 32- and 64-bit index kernels. iota itself is
 * checked against arange. Modes: no argument: the host; --ptx: the PTX of random kernels (elementwise
 * scalar and vector entries, a row reduction) assembled by ptxas when the CUDA toolkit is there (no GPU
 * needed); --gpu: the same graphs on the GPU, bit for bit the host's (exit 77 without a GPU).
 */
#include <unistd.h>

#include "tests/c/test_common.h"

/* ---- the reference ------------------------------------------------------------------------------- */
static void philox_ref(const uint32_t ctr_in[4], const uint32_t key_in[2], uint32_t out[4]) {
  uint32_t c[4] = {ctr_in[0], ctr_in[1], ctr_in[2], ctr_in[3]}, k0 = key_in[0], k1 = key_in[1];
  for (int round = 0; round < 10; round++) {
    if (round) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1, n3 = (uint32_t)p0;
    c[0] = n0, c[1] = n1, c[2] = n2, c[3] = n3;
  }
  memcpy(out, c, sizeof c);
}

/* RANDOM_BITS (hi = 0) or RANDOM_BITS_HI (hi = 1) of (key, counter) as ops_public.def defines them. */
static uint64_t bits_ref(uint64_t key, uint64_t counter, int hi) {
  uint32_t c[4] = {(uint32_t)counter, (uint32_t)(counter >> 32), 0, 0}, k[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
  uint32_t o[4];
  philox_ref(c, k, o);
  return hi ? (uint64_t)o[2] | (uint64_t)o[3] << 32 : (uint64_t)o[0] | (uint64_t)o[1] << 32;
}

static void test_known_answers(void) {
  static const uint32_t kat[3][10] = {
      {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
  };
  for (int v = 0; v < 3; v++) {
    uint32_t o[4];
    philox_ref(&kat[v][0], &kat[v][4], o);
    CHECK(!memcmp(o, &kat[v][6], sizeof o), "reference Philox4x32-10 known answer %d: %08x %08x %08x %08x", v, o[0],
          o[1], o[2], o[3]);
  }
}

/* ---- graphs -------------------------------------------------------------------------------------- */
static LoomDeviceKind g_dev = LOOM_DEVICE_HOST;

/* A uint64 input holding v (a 0-d array on the device under test; freed by free_input). */
static LoomArray u64_input(uint64_t v) {
  LoomArray h = {.dtype = LOOM_UINT64, .ndim = 0};
  h.data = malloc(8);
  memcpy(h.data, &v, 8);
  if (g_dev == LOOM_DEVICE_HOST) return h;
  LoomArray d = h;
  d.data = NULL;
  d.device = g_dev;
  CHECK_OK(loom_array_alloc(tc_ctx, &d));
  CHECK_OK(loom_array_copy(tc_ctx, &d, &h));
  free(h.data);
  return d;
}

static void free_input(LoomArray *a) {
  if (a->device == LOOM_DEVICE_HOST) free(a->data);
  else loom_array_free(tc_ctx, a);
}

/* Evaluates y into a new host array (copied back from the device). */
static bool eval_host(LoomGraph *g, LoomNode y, LoomArray *out) {
  memset(out, 0, sizeof *out);
  if (!CHECK_OK(loom_eval(g, 1, &y, out))) return false;
  if (out->device == LOOM_DEVICE_HOST) return true;
  LoomArray h = *out;
  h.device = LOOM_DEVICE_HOST;
  h.device_index = 0;
  h.data = NULL;
  CHECK_OK(loom_array_alloc(tc_ctx, &h));
  CHECK_OK(loom_array_copy(tc_ctx, &h, out));
  loom_array_free(tc_ctx, out);
  *out = h;
  return true;
}

static int64_t elem_offset(const LoomArray *a, int64_t flat) {
  int64_t off = 0;
  for (int d = a->ndim - 1; d >= 0; d--) {
    int64_t n = a->shape[d] ? a->shape[d] : 1;
    off += (flat % n) * a->strides[d];
    flat /= n;
  }
  return off;
}

static int64_t numel_of(const LoomArray *a) {
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
  return n;
}

/* The random bits of `counters` (int64 node) under key input k and counter base input c. */
static LoomStatus build_bits(LoomGraph *g, LoomNode counters, LoomNode key, LoomNode base, int hi, LoomNode *out) {
  LoomNode cu, ctr;
  LoomStatus st = loom_cast(g, counters, LOOM_UINT64, &cu);
  if (!st) st = loom_binary(g, LOOM_OP_ADD, cu, base, &ctr);
  if (!st) st = loom_binary(g, hi ? LOOM_OP_RANDOM_BITS_HI : LOOM_OP_RANDOM_BITS, key, ctr, out);
  return st;
}

/* Checks that out[i] == bits_ref(key, base + counter(i)) where counter(i) is given by ctr_of. */
typedef int64_t (*CounterOf)(int64_t flat, const void *arg);
static void check_bits(const char *what, const LoomArray *out, uint64_t key, uint64_t base, int hi, CounterOf ctr_of,
                       const void *arg) {
  int64_t n = numel_of(out), bad = 0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t got = ((const uint64_t *)out->data)[elem_offset(out, i)];
    uint64_t want = bits_ref(key, base + (uint64_t)ctr_of(i, arg), hi);
    if (got != want && bad++ < 3)
      fprintf(stderr, "  %s [%lld]: %016llx, expected %016llx\n", what, (long long)i, (unsigned long long)got,
              (unsigned long long)want);
  }
  CHECK(bad == 0, "%s: %lld of %lld values differ from the reference Philox", what, (long long)bad, (long long)n);
}

static int64_t ctr_identity(int64_t flat, const void *arg) { (void)arg; return flat; }

typedef struct PermArg { int64_t rows, cols; } PermArg;
/* a (cols, rows) array that is the transpose of an iota of (rows, cols) */
static int64_t ctr_transposed(int64_t flat, const void *arg) {
  const PermArg *p = arg;
  int64_t i = flat / p->rows, j = flat % p->rows; /* out[i, j] = iota[j, i] */
  return j * p->cols + i;
}
static int64_t ctr_reversed(int64_t flat, const void *arg) { return *(const int64_t *)arg - 1 - flat; }
static int64_t ctr_bcast_rows(int64_t flat, const void *arg) { return flat % *(const int64_t *)arg; }

static void test_iota(void) {
  LoomGraph *g = NULL;
  CHECK_OK(loom_graph_create(tc_ctx, &g));
  const int64_t shapes[][4] = {{1, 0, 0, 0}, {1, 1000, 0, 0}, {2, 7, 9, 0}, {3, 2, 0, 5}, {0, 0, 0, 0}};
  for (int s = 0; s < 5; s++) {
    LoomNode y;
    int nd = (int)shapes[s][0];
    int64_t sh[3] = {shapes[s][1], shapes[s][2], shapes[s][3]};
    if (!CHECK_OK(loom_iota(g, nd, sh, &y))) continue;
    LoomArray o;
    if (!eval_host(g, y, &o)) continue;
    CHECK(o.dtype == LOOM_INT64 && o.ndim == nd, "iota: dtype and rank");
    int64_t n = numel_of(&o), bad = 0;
    for (int64_t i = 0; i < n; i++) bad += ((const int64_t *)o.data)[elem_offset(&o, i)] != i;
    CHECK(bad == 0, "iota of rank %d: %lld values are not their index", nd, (long long)bad);
    loom_array_free(tc_ctx, &o);
  }
  /* a view: iota(5, 4).T[::-1] * 2 + 1, fused */
  int64_t sh[2] = {5, 4}, start[2] = {LOOM_SLICE_NONE, LOOM_SLICE_NONE}, stop[2] = {LOOM_SLICE_NONE, LOOM_SLICE_NONE},
          step[2] = {-1, 1};
  LoomNode io, t, sl, two, one, m, y;
  CHECK_OK(loom_iota(g, 2, sh, &io));
  CHECK_OK(loom_permute(g, io, NULL, &t));
  CHECK_OK(loom_slice(g, t, start, stop, step, &sl));
  CHECK_OK(loom_weak_int(g, 2, &two));
  CHECK_OK(loom_weak_int(g, 1, &one));
  CHECK_OK(loom_binary(g, LOOM_OP_MUL, sl, two, &m));
  CHECK_OK(loom_binary(g, LOOM_OP_ADD, m, one, &y));
  LoomArray o;
  if (eval_host(g, y, &o)) {
    int bad = 0;
    for (int64_t i = 0; i < 4; i++)
      for (int64_t j = 0; j < 5; j++) bad += ((const int64_t *)o.data)[elem_offset(&o, i * 5 + j)] != (j * 4 + (3 - i)) * 2 + 1;
    CHECK(bad == 0, "iota(5, 4).T[::-1] * 2 + 1: %d values differ", bad);
    loom_array_free(tc_ctx, &o);
  }
  /* errors */
  int64_t neg[1] = {-3};
  LoomNode z;
  CHECK_STATUS(loom_iota(g, 1, neg, &z), LOOM_ERR_SHAPE);
  CHECK_STATUS(loom_iota(g, LOOM_MAX_RANK + 1, sh, &z), LOOM_ERR_SHAPE);
  CHECK_STATUS(loom_iota(g, 1, sh, NULL), LOOM_ERR_INVALID_ARGUMENT);
  loom_graph_destroy(g);
}

static void test_bits(void) {
  const uint64_t keys[] = {0, 0xffffffffffffffffull, 0x299f31d0a4093822ull, 42};
  const uint64_t bases[] = {0, 0xffffffffffffff00ull, 1ull << 32, 12345};
  for (int kv = 0; kv < 4; kv++) {
    LoomGraph *g = NULL;
    CHECK_OK(loom_graph_create(tc_ctx, &g));
    LoomArray ka = u64_input(keys[kv]), ca = u64_input(bases[kv]);
    LoomNode k, c;
    CHECK_OK(loom_input(g, &ka, &k));
    CHECK_OK(loom_input(g, &ca, &c));
    char what[96];
    for (int hi = 0; hi < 2; hi++) {
      /* contiguous 1-d (host: vectorized loop; GPU: the vector entries), odd size */
      int64_t n1[1] = {1003};
      LoomNode io, y;
      LoomArray o;
      CHECK_OK(loom_iota(g, 1, n1, &io));
      if (CHECK_OK(build_bits(g, io, k, c, hi, &y)) && eval_host(g, y, &o)) {
        snprintf(what, sizeof what, "bits%s key %d, 1-d", hi ? "_hi" : "", kv);
        check_bits(what, &o, keys[kv], bases[kv], hi, ctr_identity, NULL);
        loom_array_free(tc_ctx, &o);
      }
      /* 2-d, transposed view of the counters */
      int64_t n2[2] = {37, 29};
      PermArg pa = {37, 29};
      LoomNode t;
      CHECK_OK(loom_iota(g, 2, n2, &io));
      CHECK_OK(loom_permute(g, io, NULL, &t));
      if (CHECK_OK(build_bits(g, t, k, c, hi, &y)) && eval_host(g, y, &o)) {
        snprintf(what, sizeof what, "bits%s key %d, transposed 2-d", hi ? "_hi" : "", kv);
        check_bits(what, &o, keys[kv], bases[kv], hi, ctr_transposed, &pa);
        loom_array_free(tc_ctx, &o);
      }
      /* reversed (a view with an offset and a negative stride) */
      int64_t nr = 517, st0[1] = {LOOM_SLICE_NONE}, sp0[1] = {LOOM_SLICE_NONE}, sm1[1] = {-1};
      int64_t nrs[1] = {nr};
      LoomNode rv;
      CHECK_OK(loom_iota(g, 1, nrs, &io));
      CHECK_OK(loom_slice(g, io, st0, sp0, sm1, &rv));
      if (CHECK_OK(build_bits(g, rv, k, c, hi, &y)) && eval_host(g, y, &o)) {
        snprintf(what, sizeof what, "bits%s key %d, reversed", hi ? "_hi" : "", kv);
        check_bits(what, &o, keys[kv], bases[kv], hi, ctr_reversed, &nr);
        loom_array_free(tc_ctx, &o);
      }
      /* broadcast: 6 rows of the same 100 draws */
      int64_t nb[1] = {100}, bsh[2] = {6, 100}, cols = 100;
      LoomNode b;
      CHECK_OK(loom_iota(g, 1, nb, &io));
      CHECK_OK(loom_broadcast_to(g, io, 2, bsh, &b));
      if (CHECK_OK(build_bits(g, b, k, c, hi, &y)) && eval_host(g, y, &o)) {
        snprintf(what, sizeof what, "bits%s key %d, broadcast rows", hi ? "_hi" : "", kv);
        check_bits(what, &o, keys[kv], bases[kv], hi, ctr_bcast_rows, &cols);
        loom_array_free(tc_ctx, &o);
      }
    }
    /* a reduction kernel: sum over axis 0 of (bits >> 40) of a (50, 33) block (the counters walk R
     * outermost), and over all of it (a split full reduction) */
    for (int axis = 0; axis < 2; axis++) {
      int64_t sh[2] = {50, 33};
      LoomNode io, y, s40, sh40, r;
      CHECK_OK(loom_iota(g, 2, sh, &io));
      CHECK_OK(build_bits(g, io, k, c, 0, &y));
      CHECK_OK(loom_const_u64(g, 40, LOOM_UINT64, &s40));
      CHECK_OK(loom_binary(g, LOOM_OP_RIGHT_SHIFT, y, s40, &sh40));
      int32_t ax = 0;
      CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, sh40, axis == 0 ? 1 : 0, axis == 0 ? &ax : NULL, 0, &r));
      LoomArray o;
      if (eval_host(g, r, &o)) {
        int bad = 0;
        for (int64_t j = 0; j < (axis == 0 ? 33 : 1); j++) {
          uint64_t want = 0;
          for (int64_t i = 0; i < 50; i++)
            for (int64_t jj = 0; jj < 33; jj++)
              if (axis == 1 || jj == j) want += bits_ref(keys[kv], bases[kv] + (uint64_t)(i * 33 + jj), 0) >> 40;
          bad += ((const uint64_t *)o.data)[elem_offset(&o, j)] != want;
        }
        CHECK(bad == 0, "key %d: sum of random bits over %s: %d sums differ", kv, axis == 0 ? "axis 0" : "all", bad);
        loom_array_free(tc_ctx, &o);
      }
    }
    free_input(&ka);
    free_input(&ca);
    loom_graph_destroy(g);
  }
  /* the all-zero known answer straight through a kernel: key 0, counter 0 */
  LoomGraph *g = NULL;
  CHECK_OK(loom_graph_create(tc_ctx, &g));
  LoomArray ka = u64_input(0);
  LoomNode k, zero, io, lo, hi;
  CHECK_OK(loom_input(g, &ka, &k));
  CHECK_OK(loom_const_u64(g, 0, LOOM_UINT64, &zero));
  int64_t one[1] = {1};
  CHECK_OK(loom_iota(g, 1, one, &io));
  CHECK_OK(build_bits(g, io, k, zero, 0, &lo));
  CHECK_OK(build_bits(g, io, k, zero, 1, &hi));
  LoomArray o;
  if (eval_host(g, lo, &o)) {
    CHECK(((uint64_t *)o.data)[0] == 0xe169c58d6627e8d5ull, "kernel: Philox known answer (zeros), words 0 and 1");
    loom_array_free(tc_ctx, &o);
  }
  if (eval_host(g, hi, &o)) {
    CHECK(((uint64_t *)o.data)[0] == 0x9b00dbd8bc57ac4cull, "kernel: Philox known answer (zeros), words 2 and 3");
    loom_array_free(tc_ctx, &o);
  }
  /* dtype errors: key and counter must be uint64 */
  LoomNode i64, f, y;
  CHECK_OK(loom_cast(g, io, LOOM_INT32, &i64));
  CHECK_OK(loom_const_f64(g, 1.5, LOOM_FLOAT64, &f));
  CHECK_STATUS(loom_binary(g, LOOM_OP_RANDOM_BITS, k, io, &y), LOOM_ERR_DTYPE);
  CHECK_STATUS(loom_binary(g, LOOM_OP_RANDOM_BITS, i64, k, &y), LOOM_ERR_DTYPE);
  CHECK_STATUS(loom_binary(g, LOOM_OP_RANDOM_BITS_HI, f, k, &y), LOOM_ERR_DTYPE);
  CHECK_STATUS(loom_unary(g, LOOM_OP_RANDOM_BITS, k, &y), LOOM_ERR_INVALID_ARGUMENT);
  free_input(&ka);
  loom_graph_destroy(g);
}

/* A dropout-shaped expression is one kernel: where(u > p, x / (1 - p), 0) with u from the bits. */
static void test_one_kernel(void) {
  LoomGraph *g = NULL;
  CHECK_OK(loom_graph_create(tc_ctx, &g));
  int64_t n = 4096;
  LoomArray xa = {.dtype = LOOM_FLOAT32, .ndim = 1, .shape = {n}, .strides = {1}};
  xa.data = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) ((float *)xa.data)[i] = (float)i;
  LoomArray ka = u64_input(7), ca = u64_input(0);
  if (g_dev != LOOM_DEVICE_HOST) {
    LoomArray d = xa;
    d.data = NULL;
    d.device = g_dev;
    CHECK_OK(loom_array_alloc(tc_ctx, &d));
    CHECK_OK(loom_array_copy(tc_ctx, &d, &xa));
    free(xa.data);
    xa = d;
  }
  LoomNode x, k, c, io, bits, s, u, f, p, keep, scaled, zero, y;
  CHECK_OK(loom_input(g, &xa, &x));
  CHECK_OK(loom_input(g, &ka, &k));
  CHECK_OK(loom_input(g, &ca, &c));
  CHECK_OK(loom_iota(g, 1, xa.shape, &io));
  CHECK_OK(build_bits(g, io, k, c, 0, &bits));
  CHECK_OK(loom_const_u64(g, 40, LOOM_UINT64, &s));
  CHECK_OK(loom_binary(g, LOOM_OP_RIGHT_SHIFT, bits, s, &u));
  CHECK_OK(loom_cast(g, u, LOOM_FLOAT32, &f));
  CHECK_OK(loom_const_f64(g, 0.25 * 16777216.0, LOOM_FLOAT32, &p));
  CHECK_OK(loom_binary(g, LOOM_OP_GT, f, p, &keep));
  CHECK_OK(loom_const_f64(g, 1.0 / 0.75, LOOM_FLOAT32, &scaled));
  CHECK_OK(loom_binary(g, LOOM_OP_MUL, x, scaled, &scaled));
  CHECK_OK(loom_weak_float(g, 0.0, &zero));
  CHECK_OK(loom_where(g, keep, scaled, zero, &y));
  LoomArray o;
  char *sched = NULL;
  if (CHECK_OK(loom_dump(g, LOOM_DUMP_KERNELS, 1, &y, &sched))) { /* one kernel; it stores only y */
    int nk = 0, nstore = 0;
    for (const char *q = sched; (q = strstr(q, "kernel ")); q++) nk++;
    for (const char *q = sched; (q = strstr(q, "store buf")); q++) nstore++;
    CHECK(nk == 1 && nstore == 1 && !strstr(sched, "temp"), "dropout: %d kernels, %d stores:\n%s", nk, nstore, sched);
    loom_free_string(tc_ctx, sched);
  }
  if (eval_host(g, y, &o)) {
    LoomStats stats;
    CHECK_OK(loom_get_stats(tc_ctx, &stats));
    CHECK(stats.last_eval_kernels == 1, "dropout: %llu kernels (want 1)", (unsigned long long)stats.last_eval_kernels);
    int bad = 0, kept = 0;
    for (int64_t i = 0; i < n; i++) {
      bool want_keep = (double)(bits_ref(7, (uint64_t)i, 0) >> 40) > 0.25 * 16777216.0;
      float want = want_keep ? (float)i * (float)(1.0 / 0.75) : 0.0f;
      kept += want_keep;
      bad += ((float *)o.data)[i] != want;
    }
    CHECK(bad == 0, "dropout: %d values differ", bad);
    CHECK(kept > n * 0.7 && kept < n * 0.8, "dropout keeps %d of %lld", kept, (long long)n);
    loom_array_free(tc_ctx, &o);
  }
  free_input(&xa);
  free_input(&ka);
  free_input(&ca);
  loom_graph_destroy(g);
}

/* ---- PTX without a GPU ------------------------------------------------------------------------------ */
static void check_ptx(LoomGraph *g, LoomNode y, const char *what) {
  char *text = NULL;
  LoomStatus st = loom_dump(g, LOOM_DUMP_PTX, 1, &y, &text);
  if (st == LOOM_ERR_UNSUPPORTED) {
    printf("test_random --ptx: %s: no NVPTX backend or libdevice here\n", what);
    return;
  }
  if (!CHECK(st == LOOM_OK && text && strstr(text, ".entry"), "%s: PTX: %s", what, loom_last_error(tc_ctx))) return;
  CHECK(strstr(text, "mul.wide.u32") || strstr(text, "mul.hi.u32"), "%s: the Philox multiply is a 32x32->64 one", what);
  const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  char ptxas[512] = "";
  for (int i = 0; i < 3 && !ptxas[0]; i++) {
    if (!homes[i] || !*homes[i]) continue;
    snprintf(ptxas, sizeof ptxas, "%s/bin/ptxas", homes[i]);
    if (access(ptxas, X_OK) != 0) ptxas[0] = 0;
  }
  for (char *k = ptxas[0] ? strstr(text, "// kernel ") : NULL; k;) {
    char *next = strstr(k + 1, "\n// kernel ");
    size_t len = next ? (size_t)(next + 1 - k) : strlen(k);
    char path[] = "/tmp/loom_rng_ptx_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) break;
    FILE *f = fdopen(fd, "w");
    fwrite(k, 1, len, f);
    fclose(f);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s -arch=sm_90 -O3 %s -o /dev/null 2>&1", ptxas, path);
    CHECK(system(cmd) == 0, "%s: ptxas rejects the PTX (%s)", what, path);
    unlink(path);
    k = next ? next + 1 : NULL;
  }
  loom_free_string(tc_ctx, text);
}

static void test_ptx(void) {
  LoomGraph *g = NULL;
  CHECK_OK(loom_graph_create(tc_ctx, &g));
  LoomArray ka = {.data = (void *)64, .dtype = LOOM_UINT64, .ndim = 0};
  LoomArray xa = {.data = (void *)64, .dtype = LOOM_FLOAT32, .ndim = 2, .shape = {64, 1024}, .strides = {1024, 1}};
  LoomNode k, x, io, bits, f, y, r;
  CHECK_OK(loom_input(g, &ka, &k));
  CHECK_OK(loom_input(g, &xa, &x));
  CHECK_OK(loom_iota(g, 2, xa.shape, &io));
  CHECK_OK(build_bits(g, io, k, k, 1, &bits));
  CHECK_OK(loom_cast(g, bits, LOOM_FLOAT32, &f));
  CHECK_OK(loom_binary(g, LOOM_OP_MUL, f, x, &y));
  check_ptx(g, y, "random * x (elementwise)");
  int32_t ax = 1;
  CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, y, 1, &ax, 0, &r));
  check_ptx(g, r, "row sums of random * x");
  loom_graph_destroy(g);
}

int main(int argc, char **argv) {
  if (!tc_init()) return 1;
  if (argc == 2 && !strcmp(argv[1], "--ptx")) {
    test_ptx();
    return tc_finish();
  }
  if (argc == 2 && !strcmp(argv[1], "--gpu")) {
    int32_t ndev = 0;
    if (loom_device_count(tc_ctx, LOOM_DEVICE_CUDA, &ndev) != LOOM_OK || ndev == 0) {
      printf("test_random --gpu: skipped (no CUDA driver or device)\n");
      loom_context_destroy(tc_ctx);
      return 77;
    }
    g_dev = LOOM_DEVICE_CUDA; /* the same checks against the same reference: the GPU's bits are the host's */
  } else {
    test_known_answers();
    test_iota();
  }
  test_bits();
  test_one_kernel();
  return tc_finish();
}
