/* nt_probe: y[i] = x[i] * 2 with ordinary vs streaming (_mm512_stream_ps) stores (and staged: Loom's way), back-to-back calls on the
   same buffers (as the suite calls a kernel), 1 and 2 threads. Prints the median and min ms per call and GB/s
   of must-move bytes (read N + write N).
   Build: cc -O2 -mavx512f -fopenmp bench/nt_probe.c -o /tmp/nt_probe ; run: /tmp/nt_probe [rounds] */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static void scale_plain(const float *x, float *y, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i += 16)
        _mm512_store_ps(y + i, _mm512_mul_ps(_mm512_load_ps(x + i), _mm512_set1_ps(2.0f)));
}

static void scale_stream(const float *x, float *y, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i += 16)
        _mm512_stream_ps(y + i, _mm512_mul_ps(_mm512_load_ps(x + i), _mm512_set1_ps(2.0f)));
    _mm_sfence();
}

static size_t staged_chunk = 4096; /* points per staged chunk (argv[2]) */
/* the Loom mechanism: each chunk of staged_chunk points computed into a 16 KiB stack buffer, then streamed out */
static void scale_staged(const float *x, float *y, size_t lo, size_t hi) {
  float buf[4096] __attribute__((aligned(64)));
  const size_t C = staged_chunk;
  for (size_t c = lo; c < hi; c += C) {
    size_t e = c + C < hi ? c + C : hi;
    for (size_t i = c; i < e; i += 16)
      _mm512_store_ps(buf + (i - c), _mm512_mul_ps(_mm512_load_ps(x + i), _mm512_set1_ps(2.0f)));
    for (size_t i = c; i < e; i += 16) _mm512_stream_ps(y + i, _mm512_load_ps(buf + (i - c)));
  }
  _mm_sfence();
}

static double run(int stream, int threads, const float *x, float *y, size_t n) {
    double t0 = now_ms();
#pragma omp parallel num_threads(threads)
    {
        int k = omp_get_thread_num(), p = omp_get_num_threads();
        size_t per = (n / p) & ~(size_t)15, lo = per * k, hi = k == p - 1 ? n : lo + per;
        if (stream == 2) scale_staged(x, y, lo, hi); else if (stream) scale_stream(x, y, lo, hi); else scale_plain(x, y, lo, hi);
    }
    return now_ms() - t0;
}

static int cmp(const void *a, const void *b) {
    double d = *(const double *)a - *(const double *)b;
    return (d > 0) - (d < 0);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 31;
    if (argc > 2) staged_chunk = (size_t)atoi(argv[2]) & ~(size_t)15;
    if (staged_chunk < 16 || staged_chunk > 4096) staged_chunk = 4096;
    size_t sizes_mb[] = {4, 8, 12, 16, 24, 32, 48, 64};
    printf("| MB per array | threads | plain ms (min) | stream ms (min) | staged ms (min) | plain GB/s | stream GB/s | "
           "plain/stream | plain/staged |\n");
    printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (size_t s = 0; s < sizeof sizes_mb / sizeof *sizes_mb; s++) {
        size_t n = sizes_mb[s] << 18; /* floats */
        float *x = aligned_alloc(64, n * 4), *y = aligned_alloc(64, n * 4);
        for (size_t i = 0; i < n; i++) x[i] = (float)i, y[i] = 0;
        for (int threads = 1; threads <= 2; threads++) {
            double tp[rounds], ts[rounds], tg[rounds];
            for (int w = 0; w < 3; w++) run(0, threads, x, y, n), run(1, threads, x, y, n);
            /* alternate blocks of 5 back-to-back calls, so each side sees its own steady state */
            for (int r = 0; r < rounds; r++) {
                double a = 1e30, b = 1e30;
                for (int c = 0; c < 5; c++) { double t = run(0, threads, x, y, n); a = t < a ? t : a; }
                tp[r] = a;
                for (int c = 0; c < 5; c++) { double t = run(1, threads, x, y, n); b = t < b ? t : b; }
                ts[r] = b;
                b = 1e30;
                for (int c = 0; c < 5; c++) { double t = run(2, threads, x, y, n); b = t < b ? t : b; }
                tg[r] = b;
            }
            qsort(tp, rounds, sizeof *tp, cmp);
            qsort(ts, rounds, sizeof *ts, cmp);
            qsort(tg, rounds, sizeof *tg, cmp);
            double mp = tp[rounds / 2], ms = ts[rounds / 2], bytes = 2.0 * n * 4;
            printf("| %zu | %d | %.3f (%.3f) | %.3f (%.3f) | %.3f (%.3f) | %.1f | %.1f | %.2f | %.2f |\n", sizes_mb[s],
                   threads, mp, tp[0], ms, ts[0], tg[rounds / 2], tg[0], bytes / mp / 1e6, bytes / ms / 1e6, mp / ms,
                   mp / tg[rounds / 2]);
            fflush(stdout);
        }
        free(x), free(y);
    }
    return 0;
}
