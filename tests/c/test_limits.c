/* test_limits.c: the size limits of the C API, as tested numbers (README "Limits").
 *
 * Approach: each case builds a graph at a size the README states, evaluates it and compares every
 * value with a reference computed here in plain C:
 *   deep:  chains of LIMITS_DEEP (10^5) elementwise ops (float64 and wrapping int32), 10^4 movement ops
 *          and 300 dependent reductions, each built and evaluated in a thread with a 256 KiB stack
 *          (the passes must not recurse per node);
 *   wide:  5,000 outputs in one loom_eval, and one sum of 1,000 inputs, within a time bound
 *          (the pipeline must not be quadratic; kernels are split at a buffer budget);
 *   huge:  reductions over stride-0 inputs of 2^61+1 and INT64_MAX elements: min/max/any/all skip the
 *          repeated values, sum is refused with a clear error, and nothing overflows (UBSan build);
 *   snippets: the deepest ElementwiseKernel snippets the front end accepts (98 nested parentheses,
 *          expression height 254) run in the small thread; one past is a clean error.
 * LOOM_LIMITS_SCALE=k (default 1) multiplies the deep and wide sizes (for a long run by hand).
 */
#include <pthread.h>
#include <time.h>

#include "test_common.h"

enum { LIMITS_DEEP = 100000, LIMITS_OUTPUTS = 5000, LIMITS_INPUTS = 1000, SMALL_STACK = 256 * 1024 };

static long scale = 1;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Runs fn(arg) on a thread with a stack of `bytes`. */
static void on_small_stack(void *(*fn)(void *), void *arg, size_t bytes) {
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, bytes);
  pthread_t t;
  if (!CHECK(pthread_create(&t, &at, fn, arg) == 0, "pthread_create with a %zu-byte stack", bytes)) return;
  pthread_join(t, NULL);
  pthread_attr_destroy(&at);
}

/* ---- deep: a 10^5-op float64 chain and a wrapping int32 chain --------------------------------------- */
static void *deep_chain(void *arg) {
  (void)arg;
  long n = LIMITS_DEEP * scale;
  enum { LEN = 257 };
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return NULL;
  LoomArray x = tc_new1(LOOM_FLOAT64, LEN), xi = tc_new1(LOOM_INT32, LEN);
  double ref[LEN];
  int32_t refi[LEN];
  for (int i = 0; i < LEN; i++) {
    ref[i] = (double)(i % 17) - 8.0;
    tc_set_f(&x, i, ref[i]);
    refi[i] = i * 7919 - 1000;
    tc_set_i(&xi, i, refi[i]);
  }
  LoomNode a, b;
  bool ok = CHECK_OK(loom_input(g, &x, &a)) && CHECK_OK(loom_input(g, &xi, &b));
  double t0 = now_s();
  for (long k = 0; ok && k < n; k++) {
    /* float64: a bounded orbit (x*0.5 + c, |x| - c, max(x, -c)) so values stay O(1) */
    double c = (double)(k % 5) * 0.25 + 0.5;
    LoomNode kc, ki;
    int op = (int)(k % 4);
    ok = CHECK_OK(loom_weak_float(g, c, &kc));
    if (op == 0) ok = ok && CHECK_OK(loom_binary(g, LOOM_OP_MUL, a, kc, &a));
    else if (op == 1) ok = ok && CHECK_OK(loom_binary(g, LOOM_OP_ADD, a, kc, &a));
    else if (op == 2) {
      ok = ok && CHECK_OK(loom_unary(g, LOOM_OP_ABS, a, &a)) && CHECK_OK(loom_binary(g, LOOM_OP_SUB, a, kc, &a));
    } else {
      LoomNode nc;
      ok = ok && CHECK_OK(loom_weak_float(g, -c, &nc)) && CHECK_OK(loom_binary(g, LOOM_OP_MAXIMUM, a, nc, &a));
    }
    /* int32 (wrapping): x*3 + k, x ^ k */
    int32_t kv = (int32_t)((k % 10) * 2654435761u >> 7); /* period 20 with the float ops: kernels repeat */
    ok = ok && CHECK_OK(loom_weak_int(g, kv, &ki));
    if (k % 2 == 0) {
      LoomNode three;
      ok = ok && CHECK_OK(loom_weak_int(g, 3, &three)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, b, three, &b)) &&
           CHECK_OK(loom_binary(g, LOOM_OP_ADD, b, ki, &b));
    } else {
      ok = ok && CHECK_OK(loom_binary(g, LOOM_OP_BITWISE_XOR, b, ki, &b));
    }
    for (int i = 0; i < LEN; i++) {
      if (op == 0) ref[i] *= c;
      else if (op == 1) ref[i] += c;
      else if (op == 2) ref[i] = fabs(ref[i]) - c;
      else ref[i] = ref[i] > -c ? ref[i] : -c;
      refi[i] = k % 2 == 0 ? (int32_t)((uint32_t)refi[i] * 3u + (uint32_t)kv) : refi[i] ^ kv;
    }
  }
  double t1 = now_s();
  LoomNode roots[2] = {a, b};
  LoomArray outs[2];
  memset(outs, 0, sizeof outs);
  if (ok && CHECK_OK(loom_eval(g, 2, roots, outs))) {
    double t2 = now_s();
    LoomStats st;
    loom_get_stats(tc_ctx, &st);
    printf("deep: %ld-op chains (float64 and int32), %d nodes, 256 KiB stack: build %.2f s, eval %.2f s, %llu "
           "kernels (%llu compiled so far)\n", n, loom_graph_node_count(g), t1 - t0, t2 - t1,
           (unsigned long long)st.last_eval_kernels, (unsigned long long)st.kernels_compiled);
    int bad = 0;
    for (int i = 0; i < LEN; i++) {
      bad += !tc_close_rel(tc_get_f(&outs[0], i), ref[i], 1e-12, 1e-12);
      bad += tc_get_i(&outs[1], i) != refi[i];
    }
    CHECK(bad == 0, "deep chain: %d wrong values (e.g. [3] %.17g want %.17g; int %lld want %d)", bad,
          tc_get_f(&outs[0], 3), ref[3], (long long)tc_get_i(&outs[1], 3), refi[3]);
    loom_array_free(tc_ctx, &outs[0]);
    loom_array_free(tc_ctx, &outs[1]);
  }
  tc_free(&x);
  tc_free(&xi);
  loom_graph_destroy(g);
  return NULL;
}

/* ---- deep: 10^4 movement ops (transpose, reversing slices, reshapes) over one input -------------- */
static void *deep_views(void *arg) {
  (void)arg;
  enum { R = 6, C = 10 };
  long n = 10000 * scale;
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return NULL;
  LoomArray x = tc_new2(LOOM_INT32, R, C);
  for (int i = 0; i < R * C; i++) tc_set_i(&x, i, i);
  /* the reference: the flat index of x each element of the view reads, with its shape */
  int idx[R * C], tmp[R * C], rows = R, cols = C;
  for (int i = 0; i < R * C; i++) idx[i] = i;
  LoomNode v;
  bool ok = CHECK_OK(loom_input(g, &x, &v));
  for (long k = 0; ok && k < n; k++) {
    int op = (int)(k % 3);
    if (op == 0) { /* transpose */
      ok = CHECK_OK(loom_permute(g, v, NULL, &v));
      for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) tmp[j * rows + i] = idx[i * cols + j];
      int t = rows;
      rows = cols;
      cols = t;
    } else if (op == 1) { /* reverse both axes */
      int64_t step[2] = {-1, -1};
      ok = CHECK_OK(loom_slice(g, v, NULL, NULL, step, &v));
      for (int i = 0; i < rows * cols; i++) tmp[i] = idx[rows * cols - 1 - i];
    } else { /* reshape to (cols, rows) in row-major order */
      int64_t sh[2] = {cols, rows};
      ok = CHECK_OK(loom_reshape(g, v, 2, sh, &v));
      memcpy(tmp, idx, sizeof tmp);
      int t = rows;
      rows = cols;
      cols = t;
    }
    memcpy(idx, tmp, sizeof idx);
  }
  LoomNode one, y;
  ok = ok && CHECK_OK(loom_weak_int(g, 1, &one)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, v, one, &y));
  LoomArray out;
  if (ok && CHECK_OK(tc_eval1(g, y, &out))) {
    int bad = 0;
    for (int i = 0; i < R * C; i++) bad += tc_get_i(&out, i) != idx[i] + 1;
    CHECK(bad == 0 && out.shape[0] == rows, "deep views: %d wrong values after %ld movement ops", bad, n);
    printf("deep: %ld movement ops over one input, 256 KiB stack: ok\n", n);
    loom_array_free(tc_ctx, &out);
  }
  tc_free(&x);
  loom_graph_destroy(g);
  return NULL;
}

/* ---- deep: 300 dependent reductions: v <- v - max(v) / 2 ---------------------------------------- */
static void *deep_reductions(void *arg) {
  (void)arg;
  enum { LEN = 100, N = 300 };
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return NULL;
  LoomArray x = tc_new1(LOOM_FLOAT64, LEN);
  double ref[LEN];
  for (int i = 0; i < LEN; i++) tc_set_f(&x, i, ref[i] = (double)((i * 37) % 101) - 50.0);
  LoomNode v, m, half;
  bool ok = CHECK_OK(loom_input(g, &x, &v)) && CHECK_OK(loom_weak_float(g, 0.5, &half));
  for (int k = 0; ok && k < N; k++) {
    LoomNode mh;
    ok = CHECK_OK(loom_reduce(g, LOOM_REDUCE_MAX, v, 0, NULL, 0, &m)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, m, half, &mh)) &&
         CHECK_OK(loom_binary(g, LOOM_OP_SUB, v, mh, &v));
    double mx = ref[0];
    for (int i = 1; i < LEN; i++) mx = ref[i] > mx ? ref[i] : mx;
    for (int i = 0; i < LEN; i++) ref[i] -= mx * 0.5;
  }
  LoomArray out;
  if (ok && CHECK_OK(tc_eval1(g, v, &out))) {
    int bad = 0;
    for (int i = 0; i < LEN; i++) bad += !tc_close_rel(tc_get_f(&out, i), ref[i], 1e-12, 1e-9);
    CHECK(bad == 0, "deep reductions: %d wrong values", bad);
    loom_array_free(tc_ctx, &out);
  }
  tc_free(&x);
  loom_graph_destroy(g);
  return NULL;
}

/* ---- deep snippets: the front end's limits (98 nested parentheses: 200 nested rules; expression
 * height 256), at the limit in the small thread, and a clean error one past it ------------------------ */
static void snippet_case(const char *what, int n, bool parens, bool want_ok) {
  char *op = malloc(16 * (size_t)n + 64);
  size_t k = (size_t)sprintf(op, "y = ");
  if (parens) {
    for (int i = 0; i < n; i++) k += (size_t)sprintf(op + k, "(x + ");
    k += (size_t)sprintf(op + k, "1");
    for (int i = 0; i < n; i++) op[k++] = ')';
  } else {
    k += (size_t)sprintf(op + k, "x");
    for (int i = 0; i < n; i++) k += (size_t)sprintf(op + k, " + 1");
  }
  sprintf(op + k, ";");
  LoomUserKernel *uk = NULL;
  LoomStatus st = loom_elementwise_kernel_create(tc_ctx, "float64 x", "float64 y", op, "deep", NULL, 1, &uk);
  free(op);
  if (!want_ok) {
    CHECK(st == LOOM_ERR_INVALID_ARGUMENT && (strstr(loom_last_error(tc_ctx), "nested") ||
                                              strstr(loom_last_error(tc_ctx), "too complex")),
          "%s %d: %s (%s)", what, n, loom_status_name(st), loom_last_error(tc_ctx));
    loom_user_kernel_destroy(uk);
    return;
  }
  if (!CHECK(st == LOOM_OK, "%s %d: %s", what, n, loom_last_error(tc_ctx))) return;
  LoomArray x = tc_new1(LOOM_FLOAT64, 5), y = {0};
  for (int i = 0; i < 5; i++) tc_set_f(&x, i, i);
  if (CHECK_OK(loom_elementwise_kernel_call(uk, 1, &x, 1, &y, -1))) {
    int bad = 0;
    for (int i = 0; i < 5; i++) bad += tc_get_f(&y, i) != (parens ? 1.0 + n * (double)i : (double)i + n);
    CHECK(bad == 0, "%s %d: %d wrong values", what, n, bad);
    loom_array_free(tc_ctx, &y);
  }
  tc_free(&x);
  loom_user_kernel_destroy(uk);
}

static void *deep_snippet(void *arg) {
  (void)arg;
  snippet_case("nested parentheses", 98, true, true);
  snippet_case("nested parentheses", 99, true, false);
  snippet_case("nested parentheses", 3000, true, false);
  snippet_case("expression height", 254, false, true);
  snippet_case("expression height", 255, false, false);
  printf("deep: snippets nested 98 parentheses / 254 operators deep run in a 256 KiB stack\n");
  return NULL;
}

/* ---- wide: 5,000 outputs a + i in one evaluation ------------------------------------------------------- */
static void wide_outputs(void) {
  long n = LIMITS_OUTPUTS * scale;
  enum { LEN = 1000 };
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray x = tc_new1(LOOM_FLOAT64, LEN);
  for (int i = 0; i < LEN; i++) tc_set_f(&x, i, i * 0.5);
  LoomNode a, *roots = calloc((size_t)n, sizeof *roots);
  LoomArray *outs = calloc((size_t)n, sizeof *outs);
  bool ok = CHECK_OK(loom_input(g, &x, &a));
  for (long i = 0; ok && i < n; i++) {
    LoomNode c;
    ok = CHECK_OK(loom_weak_float(g, (double)i, &c)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, a, c, &roots[i]));
  }
  LoomStats s0, s1;
  loom_get_stats(tc_ctx, &s0);
  double t0 = now_s();
  if (ok && CHECK_OK(loom_eval(g, (int32_t)n, roots, outs))) {
    double t = now_s() - t0;
    loom_get_stats(tc_ctx, &s1);
    double compile = (s1.compile_ms - s0.compile_ms) * 1e-3;
    printf("wide: %ld outputs in one loom_eval: %.2f s (%.2f s of it compiling %llu kernels), %llu kernels run\n", n,
           t, compile, (unsigned long long)(s1.kernels_compiled - s0.kernels_compiled),
           (unsigned long long)s1.last_eval_kernels);
    /* quadratic passes took minutes here; compiles are ~1-3 ms per output on a loaded 2-core box */
    CHECK(t < 120.0 && t - compile < 5.0, "wide outputs: %.2f s (%.2f s outside compiles)", t, t - compile);
    CHECK(s1.last_eval_kernels >= (uint64_t)(n / 64) && s1.last_eval_kernels <= (uint64_t)(n / 16),
          "wide outputs: %llu kernels for %ld outputs (buffer budget 64)", (unsigned long long)s1.last_eval_kernels, n);
    int bad = 0;
    for (long i = 0; i < n; i++)
      for (int j = 0; j < LEN; j += 97) bad += tc_get_f(&outs[i], j) != j * 0.5 + (double)i;
    CHECK(bad == 0, "wide outputs: %d wrong values", bad);
    for (long i = 0; i < n; i++) loom_array_free(tc_ctx, &outs[i]);
    /* the second evaluation reuses the plan: no passes, no compiles */
    t0 = now_s();
    CHECK_OK(loom_eval(g, (int32_t)n, roots, outs));
    printf("wide: the same %ld outputs again (cached plan): %.3f s\n", n, now_s() - t0);
    for (long i = 0; i < n; i++) loom_array_free(tc_ctx, &outs[i]);
  }
  free(roots);
  free(outs);
  tc_free(&x);
  loom_graph_destroy(g);
}

/* ---- wide: one sum of 1,000 inputs ------------------------------------------------------------------ */
static void wide_inputs(void) {
  long n = LIMITS_INPUTS * scale;
  enum { LEN = 300 };
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray *in = calloc((size_t)n, sizeof *in);
  LoomNode acc = -1;
  bool ok = true;
  for (long i = 0; ok && i < n; i++) {
    in[i] = tc_new1(LOOM_INT64, LEN);
    for (int j = 0; j < LEN; j++) tc_set_i(&in[i], j, (I128)(i * 1000 + j));
    LoomNode a;
    ok = CHECK_OK(loom_input(g, &in[i], &a));
    if (ok) ok = acc < 0 ? (acc = a, true) : CHECK_OK(loom_binary(g, LOOM_OP_ADD, acc, a, &acc));
  }
  double t0 = now_s();
  LoomArray out;
  if (ok && CHECK_OK(tc_eval1(g, acc, &out))) {
    double t = now_s() - t0;
    LoomStats s;
    loom_get_stats(tc_ctx, &s);
    printf("wide: a sum of %ld inputs: %.2f s, %llu kernels\n", n, t, (unsigned long long)s.last_eval_kernels);
    CHECK(t < 60.0, "wide inputs: %.2f s", t);
    int bad = 0;
    for (int j = 0; j < LEN; j++) bad += tc_get_i(&out, j) != (I128)1000 * (n * (n - 1) / 2) + (I128)n * j;
    CHECK(bad == 0, "wide inputs: %d wrong values", bad);
    loom_array_free(tc_ctx, &out);
  }
  for (long i = 0; i < n; i++) tc_free(&in[i]);
  free(in);
  loom_graph_destroy(g);
}

/* ---- huge: stride-0 inputs far larger than memory ------------------------------------------------------ */
static void huge_broadcast(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  double v = -2.5;
  int64_t sizes[2] = {(INT64_C(1) << 61) + 1, INT64_MAX};
  for (int s = 0; s < 2; s++) {
    LoomArray x = {.data = &v, .dtype = LOOM_FLOAT64, .ndim = 1, .shape = {sizes[s]}, .strides = {0}};
    LoomNode a, r;
    if (!CHECK_OK(loom_input(g, &x, &a))) continue;
    LoomReduceOp fast[4] = {LOOM_REDUCE_MAX, LOOM_REDUCE_MIN, LOOM_REDUCE_ARGMIN, LOOM_REDUCE_ANY};
    for (int k = 0; k < 4; k++) {
      LoomArray out;
      double t0 = now_s();
      if (CHECK_OK(loom_reduce(g, fast[k], a, 0, NULL, 0, &r)) && CHECK_OK(tc_eval1(g, r, &out))) {
        double want = fast[k] == LOOM_REDUCE_ARGMIN ? 0.0 : fast[k] == LOOM_REDUCE_ANY ? 1.0 : v;
        CHECK(tc_get_f(&out, 0) == want && now_s() - t0 < 10.0, "%d over %lld stride-0 elements: %g", (int)fast[k],
              (long long)sizes[s], tc_get_f(&out, 0));
        loom_array_free(tc_ctx, &out);
      }
    }
    LoomArray out;
    if (CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, a, 0, NULL, 0, &r))) {
      CHECK_STATUS(tc_eval1(g, r, &out), LOOM_ERR_UNSUPPORTED);
      CHECK(strstr(loom_last_error(tc_ctx), "2^50") != NULL, "message: %s", loom_last_error(tc_ctx));
    }
  }
  /* 2-d: a row-wise max keeps the rows, drops the repeated columns */
  double row[3] = {1.0, -7.0, 4.0};
  LoomArray x2 = {.data = row, .dtype = LOOM_FLOAT64, .ndim = 2, .shape = {3, INT64_C(1) << 55}, .strides = {1, 0}};
  LoomNode a2, r2;
  int32_t ax = 1;
  LoomArray out;
  if (CHECK_OK(loom_input(g, &x2, &a2)) && CHECK_OK(loom_reduce(g, LOOM_REDUCE_MAX, a2, 1, &ax, 0, &r2)) &&
      CHECK_OK(tc_eval1(g, r2, &out))) {
    CHECK(tc_get_f(&out, 0) == 1.0 && tc_get_f(&out, 1) == -7.0 && tc_get_f(&out, 2) == 4.0, "row max of a broadcast");
    loom_array_free(tc_ctx, &out);
  }
  loom_graph_destroy(g);
}

int main(void) {
  const char *sc = getenv("LOOM_LIMITS_SCALE");
  if (sc && atol(sc) > 0) scale = atol(sc);
  if (!tc_init()) return 1;
  on_small_stack(deep_chain, NULL, SMALL_STACK);
  on_small_stack(deep_views, NULL, SMALL_STACK);
  on_small_stack(deep_reductions, NULL, SMALL_STACK);
  on_small_stack(deep_snippet, NULL, SMALL_STACK);
  huge_broadcast();
  wide_inputs();
  wide_outputs();
  return tc_finish();
}
