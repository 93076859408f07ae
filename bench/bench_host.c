/* SPDX-License-Identifier: Apache-2.0 */
/* bench_host.c: Loom's host-backend performance targets, measured through the public API.
 *
 *  (a) fused out = exp(a) * b + sin(c) * d over 10^7 float64: GB/s = 5 * 8 * 10^7 bytes / median of
 *      20 timed runs (after a warm-up), against a copy of the same byte count (read + written) made
 *      by one memcpy thread per core, measured in the same run; target ratio >= 0.8. The same
 *      expression as unfused single-threaded C steps with temporaries is shown for context.
 *  (b) extra memory during the fused evaluation beyond inputs and output: Loom's temp_bytes_peak and
 *      the getrusage max-RSS growth around a first evaluation; target < 1 MB.
 *  (c) compile time of a new small fused kernel: median over 20 distinct expressions, each a cache
 *      miss, of (first loom_eval time - warm loom_eval time); target < 20 ms.
 *  (d) row sums and column sums of a 4000 x 2500 float64 matrix against copy bandwidth.
 * Prints a markdown table and writes JSON to <results dir>/<date>-host.json (default bench/results).
 * Usage: bench_host [results_dir]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loom/loom.h"

#define RUNS 20

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static long maxrss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static LoomArray arr(double *data, int ndim, int64_t d0, int64_t d1) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = LOOM_FLOAT64;
  a.ndim = ndim;
  a.shape[0] = d0;
  a.strides[0] = ndim == 2 ? d1 : 1;
  if (ndim == 2) {
    a.shape[1] = d1;
    a.strides[1] = 1;
  }
  return a;
}

/* ---- copy bandwidth: one thread per core, each memcpy'ing its share ------------------------------- */
typedef struct CopyJob {
  char *dst;
  const char *src;
  size_t n;
} CopyJob;
static void *copy_worker(void *p) {
  CopyJob *j = p;
  memcpy(j->dst, j->src, j->n);
  return NULL;
}
/* Seconds to copy n bytes (n read + n written) with nthreads threads; median of RUNS. */
static double copy_time(char *dst, const char *src, size_t n, int nthreads) {
  double t[RUNS];
  CopyJob jobs[64];
  pthread_t th[64];
  if (nthreads > 64) nthreads = 64;
  for (int r = -1; r < RUNS; r++) {
    double t0 = now_s();
    size_t per = n / (size_t)nthreads;
    for (int k = 0; k < nthreads; k++) {
      jobs[k].dst = dst + per * (size_t)k;
      jobs[k].src = src + per * (size_t)k;
      jobs[k].n = k == nthreads - 1 ? n - per * (size_t)k : per;
      if (k > 0 && pthread_create(&th[k], NULL, copy_worker, &jobs[k]) != 0) copy_worker(&jobs[k]), th[k] = 0;
    }
    copy_worker(&jobs[0]);
    for (int k = 1; k < nthreads; k++)
      if (th[k]) pthread_join(th[k], NULL);
    if (r >= 0) t[r] = now_s() - t0;
  }
  return median(t, RUNS);
}

/* Times loom_eval of one node into out: median of RUNS after one warm-up. */
static LoomStatus time_eval(LoomGraph *g, LoomNode n, LoomArray *out, double *median_s) {
  double t[RUNS];
  LoomStatus st = loom_eval(g, 1, &n, out);
  for (int r = 0; r < RUNS && st == LOOM_OK; r++) {
    double t0 = now_s();
    st = loom_eval(g, 1, &n, out);
    t[r] = now_s() - t0;
  }
  if (st == LOOM_OK) *median_s = median(t, RUNS);
  return st;
}

static void machine_info(char *cpu, size_t cap) {
  snprintf(cpu, cap, "unknown");
  FILE *f = popen("lscpu 2>/dev/null", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Model name:", 11) == 0) {
      char *p = line + 11;
      while (*p == ' ' || *p == '\t') p++;
      p[strcspn(p, "\n")] = 0;
      for (char *q = p; *q; q++)
        if (*q == '"' || *q == '\\') *q = ' ';
      size_t len = strlen(p) < cap - 1 ? strlen(p) : cap - 1;
      memcpy(cpu, p, len);
      cpu[len] = 0;
    }
  }
  pclose(f);
}

#define FAIL(what)                                                                                 \
  do {                                                                                             \
    fprintf(stderr, "bench_host: %s failed: %s\n", what, ctx ? loom_last_error(ctx) : "");       \
    goto done;                                                                                     \
  } while (0)

int main(int argc, char **argv) {
  const char *results_dir = argc > 1 ? argv[1] : "bench/results";
  const int64_t n = 10000000, R = 4000, C = 2500;
  int ncores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (ncores < 1) ncores = 1;
  int rc = 1;
  LoomContext *ctx = NULL;
  LoomGraph *g = NULL, *g2 = NULL;
  double *a = NULL, *b = NULL, *c = NULL, *d = NULL, *out = NULL, *tmp[4] = {0}, *m = NULL;
  double *rows = NULL, *cols = NULL;
  char *csrc = NULL, *cdst = NULL;

  size_t bytes = sizeof(double) * (size_t)n;
  a = malloc(bytes), b = malloc(bytes), c = malloc(bytes), d = malloc(bytes), out = malloc(bytes);
  for (int k = 0; k < 4; k++) tmp[k] = malloc(bytes);
  m = malloc(sizeof(double) * (size_t)(R * C));
  rows = malloc(sizeof(double) * (size_t)R);
  cols = malloc(sizeof(double) * (size_t)C);
  size_t copy_bytes = 5 * bytes / 2; /* read + written = 5 * 8 * 10^7 bytes */
  csrc = malloc(copy_bytes);
  cdst = malloc(copy_bytes);
  if (!a || !b || !c || !d || !out || !tmp[0] || !tmp[1] || !tmp[2] || !tmp[3] || !m || !rows || !cols ||
      !csrc || !cdst) {
    fprintf(stderr, "bench_host: out of memory\n");
    goto done;
  }
  for (int64_t i = 0; i < n; i++) {
    double u = (double)((i * 2654435761u) % 1000003) / 1000003.0;
    a[i] = u - 0.5, b[i] = 1.0 + u, c[i] = 3.0 * u, d[i] = 0.5 - u, out[i] = 0;
  }
  for (int64_t i = 0; i < R * C; i++) m[i] = (double)(i % 977) * 0.001;
  memset(csrc, 1, copy_bytes);
  memset(cdst, 0, copy_bytes);

  if (loom_context_create(&ctx) != LOOM_OK) FAIL("loom_context_create");
  if (loom_graph_create(ctx, &g) != LOOM_OK) FAIL("loom_graph_create");

  /* (a) fused expression */
  LoomArray aa = arr(a, 1, n, 0), ba = arr(b, 1, n, 0), ca = arr(c, 1, n, 0), da = arr(d, 1, n, 0);
  LoomArray oa = arr(out, 1, n, 0);
  LoomNode an, bn, cn, dn, ea, eb, sc, sd, y;
  if (loom_input(g, &aa, &an) || loom_input(g, &ba, &bn) || loom_input(g, &ca, &cn) ||
      loom_input(g, &da, &dn) || loom_unary(g, LOOM_OP_EXP, an, &ea) ||
      loom_binary(g, LOOM_OP_MUL, ea, bn, &eb) || loom_unary(g, LOOM_OP_SIN, cn, &sc) ||
      loom_binary(g, LOOM_OP_MUL, sc, dn, &sd) || loom_binary(g, LOOM_OP_ADD, eb, sd, &y))
    FAIL("building exp(a) * b + sin(c) * d");
  /* (b) memory of an evaluation, not of the compiler: the kernel is compiled first by the same
   * expression on 4096 elements (sizes are kernel parameters, so the 10^7 evaluation below is a
   * cache hit), then max RSS is read around the first 10^7 evaluation. */
  {
    LoomGraph *gw = NULL;
    LoomArray aw = arr(a, 1, 4096, 0), bw = arr(b, 1, 4096, 0), cw = arr(c, 1, 4096, 0),
              dw = arr(d, 1, 4096, 0), ow = arr(out, 1, 4096, 0);
    LoomNode w[9];
    if (loom_graph_create(ctx, &gw) || loom_input(gw, &aw, &w[0]) || loom_input(gw, &bw, &w[1]) ||
        loom_input(gw, &cw, &w[2]) || loom_input(gw, &dw, &w[3]) ||
        loom_unary(gw, LOOM_OP_EXP, w[0], &w[4]) || loom_binary(gw, LOOM_OP_MUL, w[4], w[1], &w[5]) ||
        loom_unary(gw, LOOM_OP_SIN, w[2], &w[6]) || loom_binary(gw, LOOM_OP_MUL, w[6], w[3], &w[7]) ||
        loom_binary(gw, LOOM_OP_ADD, w[5], w[7], &w[8]) || loom_eval(gw, 1, &w[8], &ow))
      FAIL("warm-up compile on 4096 elements");
    loom_graph_destroy(gw);
  }
  long rss0 = maxrss_kb();
  if (loom_eval(g, 1, &y, &oa) != LOOM_OK) FAIL("loom_eval (fused)");
  long rss_delta_kb = maxrss_kb() - rss0;
  LoomStats st;
  loom_get_stats(ctx, &st);
  uint64_t temp_peak = st.temp_bytes_peak;
  uint64_t fused_kernels = st.last_eval_kernels;
  double t_fused;
  if (time_eval(g, y, &oa, &t_fused) != LOOM_OK) FAIL("loom_eval (fused, timed)");
  double max_err = 0;
  for (int64_t i = 0; i < n; i += 997) {
    double want = exp(a[i]) * b[i] + sin(c[i]) * d[i];
    double e = fabs(out[i] - want) / fmax(fabs(want), 1.0);
    max_err = e > max_err || isnan(e) ? e : max_err;
  }
  double t_copy = copy_time(cdst, csrc, copy_bytes, ncores);
  double fused_gbs = 5.0 * (double)bytes / t_fused / 1e9, copy_gbs = 2.0 * (double)copy_bytes / t_copy / 1e9;

  /* unfused C with temporaries, single thread */
  double tu[5];
  for (int r = 0; r < 5; r++) {
    double t0 = now_s();
    for (int64_t i = 0; i < n; i++) tmp[0][i] = exp(a[i]);
    for (int64_t i = 0; i < n; i++) tmp[1][i] = tmp[0][i] * b[i];
    for (int64_t i = 0; i < n; i++) tmp[2][i] = sin(c[i]);
    for (int64_t i = 0; i < n; i++) tmp[3][i] = tmp[2][i] * d[i];
    for (int64_t i = 0; i < n; i++) out[i] = tmp[1][i] + tmp[3][i];
    tu[r] = now_s() - t0;
  }
  double t_unfused = median(tu, 5);

  /* (c) compile time of new small kernels: 20 distinct op pairs, each a cache miss */
  static const LoomOp u1[] = {LOOM_OP_EXP, LOOM_OP_LOG1P, LOOM_OP_SIN, LOOM_OP_COS, LOOM_OP_TANH,
                              LOOM_OP_SQRT, LOOM_OP_ATAN, LOOM_OP_EXPM1, LOOM_OP_CBRT, LOOM_OP_SINH};
  static const LoomOp b1[] = {LOOM_OP_ADD, LOOM_OP_MUL};
  double compile_ms[RUNS];
  int ncompile = 0;
  double small[1000];
  for (int i = 0; i < 1000; i++) small[i] = i * 1e-3;
  LoomArray sa = arr(small, 1, 1000, 0);
  for (int k = 0; k < RUNS; k++) {
    LoomGraph *gk = NULL;
    LoomNode xn, u, v, w, one;
    double res[1000];
    LoomArray ra = arr(res, 1, 1000, 0);
    if (loom_graph_create(ctx, &gk) != LOOM_OK) FAIL("loom_graph_create (compile)");
    LoomStats s0, s1;
    loom_get_stats(ctx, &s0);
    LoomStatus e1 = LOOM_OK;
    if ((e1 = loom_input(gk, &sa, &xn)) || (e1 = loom_unary(gk, u1[k % 10], xn, &u)) ||
        (e1 = loom_weak_float(gk, 1.5, &one)) || (e1 = loom_binary(gk, b1[k / 10], u, one, &v)) ||
        (e1 = loom_unary(gk, u1[(k + 3) % 10], v, &w))) {
      loom_graph_destroy(gk);
      FAIL("building a small expression");
    }
    double t0 = now_s();
    e1 = loom_eval(gk, 1, &w, &ra);
    double t_first = now_s() - t0;
    double tw[5];
    for (int r = 0; r < 5 && e1 == LOOM_OK; r++) {
      t0 = now_s();
      e1 = loom_eval(gk, 1, &w, &ra);
      tw[r] = now_s() - t0;
    }
    loom_get_stats(ctx, &s1);
    loom_graph_destroy(gk);
    if (e1 != LOOM_OK) FAIL("loom_eval (compile)");
    if (s1.kernels_compiled == s0.kernels_compiled) continue; /* not a miss: not counted */
    compile_ms[ncompile++] = (t_first - median(tw, 5)) * 1e3;
  }
  double compile_med = ncompile ? median(compile_ms, ncompile) : NAN;

  /* (d) row and column sums of 4000 x 2500 */
  if (loom_graph_create(ctx, &g2) != LOOM_OK) FAIL("loom_graph_create (reductions)");
  LoomArray ma = arr(m, 2, R, C), rsa = arr(rows, 1, R, 0), csa = arr(cols, 1, C, 0);
  LoomNode mn, rs, cs;
  int32_t ax1 = 1, ax0 = 0;
  if (loom_input(g2, &ma, &mn) || loom_reduce(g2, LOOM_REDUCE_SUM, mn, 1, &ax1, 0, &rs) ||
      loom_reduce(g2, LOOM_REDUCE_SUM, mn, 1, &ax0, 0, &cs))
    FAIL("building row/column sums");
  double t_rows, t_cols;
  if (time_eval(g2, rs, &rsa, &t_rows) != LOOM_OK) FAIL("loom_eval (row sums)");
  if (time_eval(g2, cs, &csa, &t_cols) != LOOM_OK) FAIL("loom_eval (column sums)");
  double red_bytes = 8.0 * (double)(R * C);
  double rows_gbs = (red_bytes + 8.0 * R) / t_rows / 1e9, cols_gbs = (red_bytes + 8.0 * C) / t_cols / 1e9;
  double rerr = 0;
  for (int64_t r = 0; r < R; r += 37) {
    double s = 0;
    for (int64_t k = 0; k < C; k++) s += m[r * C + k];
    rerr = fmax(rerr, fabs(rows[r] - s) / fmax(fabs(s), 1e-300));
  }

  /* report */
  double extra_mb = (double)temp_peak / 1e6 + (rss_delta_kb > 0 ? (double)rss_delta_kb / 1e3 : 0.0);
  char cpu[256];
  machine_info(cpu, sizeof cpu);
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  double mem_gb = pages > 0 && psize > 0 ? (double)pages * (double)psize / 1073741824.0 : 0;
  time_t now = time(NULL);
  struct tm tmv;
  localtime_r(&now, &tmv);
  char date[32], stamp[40];
  strftime(date, sizeof date, "%Y-%m-%d", &tmv);
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", &tmv);

  printf("## Loom host benchmark (%s, %d cores, %.1f GiB, %s)\n\n", cpu, ncores, mem_gb, date);
  printf("| measurement | value | target | ok |\n| --- | --- | --- | --- |\n");
  printf("| (a) fused exp(a)*b + sin(c)*d, 10^7 f64 | %.2f GB/s (%.2f ms, %llu kernel(s)) | | |\n",
         fused_gbs, t_fused * 1e3, (unsigned long long)fused_kernels);
  printf("| (a) copy, same bytes, %d threads | %.2f GB/s (%.2f ms) | | |\n", ncores, copy_gbs, t_copy * 1e3);
  printf("| (a) fused / copy | %.2f | >= 0.8 | %s |\n", fused_gbs / copy_gbs, fused_gbs / copy_gbs >= 0.8 ? "yes" : "NO");
  printf("| (a) unfused C with temporaries, 1 thread | %.2f ms (%.1fx the fused time) | | |\n",
         t_unfused * 1e3, t_unfused / t_fused);
  printf("| (a) max relative error (sampled) | %.2g | | |\n", max_err);
  printf("| (b) extra memory: temp_bytes_peak + max-RSS growth | %.3f MB (%llu B + %ld KiB) | < 1 MB | %s |\n",
         extra_mb, (unsigned long long)temp_peak, rss_delta_kb, extra_mb < 1.0 ? "yes" : "NO");
  printf("| (c) compile time of a new small kernel, median of %d | %.2f ms | < 20 ms | %s |\n", ncompile,
         compile_med, compile_med < 20 ? "yes" : "NO");
  printf("| (d) row sums 4000x2500 | %.2f GB/s (%.2f ms), %.2f of copy | | |\n", rows_gbs, t_rows * 1e3,
         rows_gbs / copy_gbs);
  printf("| (d) column sums 4000x2500 | %.2f GB/s (%.2f ms), %.2f of copy | | |\n", cols_gbs, t_cols * 1e3,
         cols_gbs / copy_gbs);
  printf("| (d) row-sum max relative error (sampled) | %.2g | | |\n", rerr);

  mkdir(results_dir, 0755); /* may exist */
  char path[1024];
  snprintf(path, sizeof path, "%s/%s-host.json", results_dir, date);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "bench_host: cannot write %s: %s\n", path, strerror(errno));
    goto done;
  }
  char command[1024] = "";
  for (int i = 0; i < argc; i++) {
    size_t len = strlen(command);
    snprintf(command + len, sizeof command - len, "%s%s", i ? " " : "", argv[i]);
  }
  for (char *q = command; *q; q++)
    if (*q == '"' || *q == '\\') *q = ' ';
  fprintf(f, "{\n  \"date\": \"%s\",\n  \"command\": \"%s\",\n", stamp, command);
  fprintf(f, "  \"machine\": {\"cpu\": \"%s\", \"cores\": %d, \"memory_gib\": %.2f},\n", cpu, ncores, mem_gb);
  fprintf(f, "  \"loom_version\": \"%s\",\n", LOOM_VERSION_STRING);
  fprintf(f, "  \"fused\": {\"expr\": \"exp(a)*b + sin(c)*d\", \"n\": %lld, \"median_ms\": %.4f, \"gbs\": %.4f, "
             "\"kernels\": %llu, \"max_rel_err\": %.3g},\n",
          (long long)n, t_fused * 1e3, fused_gbs, (unsigned long long)fused_kernels, max_err);
  fprintf(f, "  \"copy\": {\"bytes\": %zu, \"threads\": %d, \"median_ms\": %.4f, \"gbs\": %.4f},\n",
          2 * copy_bytes, ncores, t_copy * 1e3, copy_gbs);
  fprintf(f, "  \"fused_over_copy\": %.4f,\n  \"unfused_c_ms\": %.4f,\n", fused_gbs / copy_gbs, t_unfused * 1e3);
  fprintf(f, "  \"extra_memory\": {\"temp_bytes_peak\": %llu, \"maxrss_delta_kib\": %ld, \"total_mb\": %.4f},\n",
          (unsigned long long)temp_peak, rss_delta_kb, extra_mb);
  fprintf(f, "  \"compile\": {\"samples\": %d, \"median_ms\": %.4f},\n", ncompile, compile_med);
  fprintf(f, "  \"row_sum\": {\"shape\": [4000, 2500], \"median_ms\": %.4f, \"gbs\": %.4f, \"of_copy\": %.4f},\n",
          t_rows * 1e3, rows_gbs, rows_gbs / copy_gbs);
  fprintf(f, "  \"col_sum\": {\"shape\": [4000, 2500], \"median_ms\": %.4f, \"gbs\": %.4f, \"of_copy\": %.4f}\n}\n",
          t_cols * 1e3, cols_gbs, cols_gbs / copy_gbs);
  fclose(f);
  printf("\nwrote %s\n", path);
  rc = max_err < 1e-12 && rerr < 1e-12 ? 0 : 1;
  if (rc) fprintf(stderr, "bench_host: WRONG RESULT\n");
done:
  if (g) loom_graph_destroy(g);
  if (g2) loom_graph_destroy(g2);
  if (ctx) loom_context_destroy(ctx);
  free(a), free(b), free(c), free(d), free(out), free(m), free(rows), free(cols), free(csrc), free(cdst);
  for (int k = 0; k < 4; k++) free(tmp[k]);
  return rc;
}
