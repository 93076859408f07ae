/* test_matmul_fuse.c: products inside larger graphs on the host: epilogues folded into the library call
 * (no kernel left) or computed by an elementwise kernel around it, products as roots read by other
 * kernels, strided and repeated outputs, chains of products, transposed reads of a product, and
 * re-evaluation with rebound inputs. Every value is compared with a float64 reference computed here. */
#include "tests/c/matmul_ref.h"

static LoomStats stats(void) {
  LoomStats s;
  loom_get_stats(tc_ctx, &s);
  return s;
}

typedef enum { E_BIAS, E_C, E_RELU, E_RELU_LEFT, E_SCALE2, E_DIV4, E_DIV3, E_BIAS_COL, E_TIMES_X, E_SUB } Step;

/* Applies the steps to the product value p at (i, j) of an m x n result. */
static double apply(const Step *steps, int ns, double p, int64_t i, int64_t j, const LoomArray *bias,
                    const LoomArray *c, const LoomArray *bcol, int64_t n) {
  for (int s = 0; s < ns; s++) switch (steps[s]) {
    case E_BIAS: p += tc_get_f(bias, j); break;
    case E_C: p += tc_get_f(c, i * n + j); break;
    case E_RELU: p = (p >= 0 || isnan(p)) ? p : 0; break;
    case E_RELU_LEFT: p = (0 >= p && !isnan(p)) ? 0 : p; break;
    case E_SCALE2: p *= 2; break;
    case E_DIV4: p /= 4; break;
    case E_DIV3: p /= 3; break;
    case E_BIAS_COL: p += tc_get_f(bcol, i); break;
    case E_TIMES_X: p *= p; break;
    case E_SUB: p -= tc_get_f(bias, j); break;
    }
  return p;
}

/* Builds steps over node p. */
static LoomNode build(LoomGraph *g, const Step *steps, int ns, LoomNode p, LoomNode nbias, LoomNode nc, LoomNode ncol,
                      LoomDType t) {
  LoomNode x = p, k;
  for (int s = 0; s < ns; s++) switch (steps[s]) {
    case E_BIAS: loom_binary(g, LOOM_OP_ADD, nbias, x, &x); break; /* bias first: either order folds */
    case E_C: loom_binary(g, LOOM_OP_ADD, x, nc, &x); break;
    case E_RELU: loom_weak_float(g, 0, &k), loom_binary(g, LOOM_OP_MAXIMUM, x, k, &x); break;
    case E_RELU_LEFT: loom_const_f64(g, 0, t, &k), loom_binary(g, LOOM_OP_MAXIMUM, k, x, &x); break;
    case E_SCALE2: loom_weak_float(g, 2, &k), loom_binary(g, LOOM_OP_MUL, k, x, &x); break;
    case E_DIV4: loom_weak_float(g, 4, &k), loom_binary(g, LOOM_OP_TRUEDIV, x, k, &x); break;
    case E_DIV3: loom_weak_float(g, 3, &k), loom_binary(g, LOOM_OP_TRUEDIV, x, k, &x); break;
    case E_BIAS_COL: loom_binary(g, LOOM_OP_ADD, x, ncol, &x); break;
    case E_TIMES_X: loom_binary(g, LOOM_OP_MUL, x, x, &x); break;
    case E_SUB: loom_binary(g, LOOM_OP_SUB, x, nbias, &x); break;
    }
  return x;
}

static void epilogue(const char *what, LoomDType t, int batch, const Step *steps, int ns, int kernels) {
  int64_t m = 6, k = 8, n = 5;
  int64_t ash[3] = {batch, m, k};
  LoomArray a = batch ? tc_new(t, 3, ash) : tc_new2(t, m, k), w = tc_new2(t, k, n), bias = tc_new1(t, n);
  LoomArray c = tc_new2(t, m, n), bcol = tc_new2(t, m, 1);
  fill(&a, false), fill(&w, false), fill(&bias, false), fill(&c, false), fill(&bcol, false);
  tc_set_f(&a, 3, NAN); /* row 0 of the product is NaN: ReLU keeps it (NumPy's maximum) */
  LoomGraph *g;
  loom_graph_create(tc_ctx, &g);
  LoomNode na, nw, nb, nc, ncol, p;
  loom_input(g, &a, &na), loom_input(g, &w, &nw), loom_input(g, &bias, &nb), loom_input(g, &c, &nc);
  loom_input(g, &bcol, &ncol);
  loom_matmul(g, na, nw, &p);
  LoomNode r = build(g, steps, ns, p, nb, nc, ncol, t);
  LoomArray out = {0};
  uint64_t calls0 = stats().library_calls;
  if (CHECK(loom_eval(g, 1, &r, &out) == LOOM_OK, "%s: %s", what, loom_last_error(tc_ctx))) {
    LoomStats s = stats();
    CHECK((int)s.last_eval_kernels == kernels, "%s: %d kernels, want %d", what, (int)s.last_eval_kernels, kernels);
    CHECK(s.library_calls - calls0 == 1, "%s: one library call", what);
    Ref ref = reference(&a, &w, t);
    int64_t nb_ = batch ? batch : 1, bad = 0;
    for (int64_t b = 0; b < nb_; b++)
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n && bad < 3; j++) {
          int64_t o = (b * m + i) * n + j;
          double want = apply(steps, ns, ref.val[o], i, j, &bias, &c, &bcol, n), got = tc_get_f(&out, o);
          double tol = tol_of(t) * (ref.mag[o] + fabs(want) + 4) * 4;
          bool ok = isnan(want) ? isnan(got) : fabs(got - want) <= tol;
          if (!ok) bad++;
          CHECK(ok, "%s: [%lld,%lld,%lld] is %.9g, want %.9g", what, (long long)b, (long long)i, (long long)j, got, want);
        }
    free_ref(&ref);
    loom_array_free(tc_ctx, &out);
  }
  if (kernels == 0) { /* the call itself shows the epilogue */
    char *txt = NULL;
    if (loom_dump(g, LOOM_DUMP_KERNELS, 1, &r, &txt) == LOOM_OK) {
      CHECK(strstr(txt, "call matmul") != NULL, "%s: the schedule prints the call:\n%s", what, txt);
      loom_free_string(tc_ctx, txt);
    }
  }
  loom_graph_destroy(g);
  tc_free(&a), tc_free(&w), tc_free(&bias), tc_free(&c), tc_free(&bcol);
}

static void test_epilogues(void) {
  LoomDType ts[3] = {LOOM_FLOAT64, LOOM_FLOAT32, LOOM_FLOAT16};
  for (int ti = 0; ti < 3; ti++) {
    LoomDType t = ts[ti];
    epilogue("relu(p + bias)", t, 0, (Step[]){E_BIAS, E_RELU}, 2, 0);
    epilogue("maximum(0, 2 p + bias)", t, 0, (Step[]){E_SCALE2, E_BIAS, E_RELU_LEFT}, 3, 0);
    epilogue("p / 4 + c + bias", t, 0, (Step[]){E_DIV4, E_C, E_BIAS}, 3, 0);
    epilogue("batched relu(p + bias)", t, 4, (Step[]){E_BIAS, E_RELU}, 2, 0);
    epilogue("p / 3 is not exact as a scale", t, 0, (Step[]){E_DIV3}, 1, 1);
    epilogue("p + column bias", t, 0, (Step[]){E_BIAS_COL}, 1, 1);
    epilogue("p * p", t, 0, (Step[]){E_TIMES_X}, 1, 1);
    epilogue("relu(p) + bias: the add after the activation", t, 0, (Step[]){E_RELU, E_BIAS}, 2, 1);
    epilogue("p - bias", t, 0, (Step[]){E_SUB}, 1, 1);
    epilogue("2 (p + bias): scale after the add", t, 0, (Step[]){E_BIAS, E_SCALE2}, 2, 1);
  }
}

/* Roots: the product as a root read by another kernel; a strided and a repeated output; chains. */
static void test_roots(void) {
  LoomDType t = LOOM_FLOAT64;
  int64_t m = 7, k = 6, n = 5;
  LoomArray a = tc_new2(t, m, k), w = tc_new2(t, k, n), bias = tc_new1(t, n), w2 = tc_new2(t, n, 3);
  fill(&a, false), fill(&w, false), fill(&bias, false), fill(&w2, false);
  LoomGraph *g;
  loom_graph_create(tc_ctx, &g);
  LoomNode na, nw, nb, nw2, p, s, r, z;
  loom_input(g, &a, &na), loom_input(g, &w, &nw), loom_input(g, &bias, &nb), loom_input(g, &w2, &nw2);
  loom_matmul(g, na, nw, &p);
  loom_binary(g, LOOM_OP_ADD, p, nb, &s);
  loom_weak_float(g, 0, &z);
  loom_binary(g, LOOM_OP_MAXIMUM, s, z, &r);
  Ref ref = reference(&a, &w, t);
  /* p and relu(p + bias) together: the call stores p into its output, a kernel reads it there */
  LoomNode roots[2] = {p, r};
  LoomArray outs[2] = {{0}, {0}};
  if (CHECK(loom_eval(g, 2, roots, outs) == LOOM_OK, "p, relu(p + b): %s", loom_last_error(tc_ctx))) {
    CHECK(stats().last_eval_kernels == 1, "one kernel for the epilogue");
    for (int64_t i = 0; i < m * n; i++) {
      double pb = ref.val[i] + tc_get_f(&bias, i % n);
      CHECK(fabs(tc_get_f(&outs[0], i) - ref.val[i]) < 1e-12, "p[%lld]", (long long)i);
      CHECK(fabs(tc_get_f(&outs[1], i) - (pb > 0 ? pb : 0)) < 1e-12, "relu[%lld]", (long long)i);
    }
    loom_array_free(tc_ctx, &outs[0]), loom_array_free(tc_ctx, &outs[1]);
  }
  /* a column-major given output: the product goes through a copy */
  LoomArray fo = tc_new2(t, m, n);
  fo.strides[0] = 1, fo.strides[1] = m;
  if (CHECK(loom_eval(g, 1, &p, &fo) == LOOM_OK, "strided out: %s", loom_last_error(tc_ctx)))
    for (int64_t i = 0; i < m * n; i++) CHECK(fabs(tc_get_f(&fo, i) - ref.val[i]) < 1e-12, "strided out[%lld]", (long long)i);
  /* the same product twice among the roots */
  LoomNode twice[2] = {p, p};
  if (CHECK(loom_eval(g, 2, twice, outs) == LOOM_OK, "p twice: %s", loom_last_error(tc_ctx))) {
    for (int64_t i = 0; i < m * n; i++)
      CHECK(tc_get_f(&outs[0], i) == tc_get_f(&outs[1], i) && fabs(tc_get_f(&outs[1], i) - ref.val[i]) < 1e-12,
            "p twice [%lld]", (long long)i);
    loom_array_free(tc_ctx, &outs[0]), loom_array_free(tc_ctx, &outs[1]);
  }
  /* a chain: relu(a w + b) w2, and p^T p (a transposed read of a product) */
  LoomNode q, pt, ptp;
  loom_matmul(g, r, nw2, &q);
  loom_permute(g, p, NULL, &pt);
  loom_matmul(g, pt, p, &ptp);
  LoomNode two[2] = {q, ptp};
  uint64_t c0 = stats().library_calls;
  if (CHECK(loom_eval(g, 2, two, outs) == LOOM_OK, "chain: %s", loom_last_error(tc_ctx))) {
    /* p has two readers (the epilogue and p^T p): stored, and the epilogue is a kernel of its own */
    CHECK(stats().last_eval_kernels == 1 && stats().library_calls - c0 == 3, "chain: 1 kernel, 3 calls (%d, %d)",
          (int)stats().last_eval_kernels, (int)(stats().library_calls - c0));
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < 3; j++) {
        double v = 0;
        for (int64_t h = 0; h < n; h++) {
          double x = ref.val[i * n + h] + tc_get_f(&bias, h);
          v += (x > 0 ? x : 0) * tc_get_f(&w2, h * 3 + j);
        }
        CHECK(fabs(tc_get_f(&outs[0], i * 3 + j) - v) < 1e-12, "chain [%lld,%lld]", (long long)i, (long long)j);
      }
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double v = 0;
        for (int64_t h = 0; h < m; h++) v += ref.val[h * n + i] * ref.val[h * n + j];
        CHECK(fabs(tc_get_f(&outs[1], i * n + j) - v) < 1e-12, "p^T p [%lld,%lld]", (long long)i, (long long)j);
      }
    loom_array_free(tc_ctx, &outs[0]), loom_array_free(tc_ctx, &outs[1]);
  }
  /* the cached plan with a rebound input */
  LoomArray a2 = tc_new2(t, m, k);
  fill(&a2, false);
  LoomArray o2 = {0};
  CHECK(loom_input_rebind(g, na, &a2) == LOOM_OK, "rebind");
  if (CHECK(loom_eval(g, 1, &r, &o2) == LOOM_OK, "rebound: %s", loom_last_error(tc_ctx))) {
    Ref r2 = reference(&a2, &w, t);
    for (int64_t i = 0; i < m * n; i++) {
      double pb = r2.val[i] + tc_get_f(&bias, i % n);
      CHECK(fabs(tc_get_f(&o2, i) - (pb > 0 ? pb : 0)) < 1e-12, "rebound [%lld]", (long long)i);
    }
    free_ref(&r2);
    loom_array_free(tc_ctx, &o2);
  }
  free_ref(&ref);
  loom_graph_destroy(g);
  tc_free(&a), tc_free(&w), tc_free(&bias), tc_free(&w2), tc_free(&fo), tc_free(&a2);
}

int main(void) {
  if (!tc_init()) return 1;
  test_epilogues();
  test_roots();
  return tc_finish();
}
