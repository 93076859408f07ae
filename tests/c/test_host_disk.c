/* test_host_disk.c: host kernels in the kernel disk cache (runtime/host_disk.c).
 *
 * Each round runs the same programs in a fresh context on one cache folder and compares every result with
 * a double-precision loop written here: SLEEF math (exp, sin, tanh, erf), a float16 expression, a row
 * reduction over a long inner axis (the split partial / finish entries), a column reduction (the
 * outer strategy's colpart / colfinish entries), a reduction over everything, and an integer expression.
 *   1. empty folder: every kernel is compiled (as an image) and stored;
 *   2. a new context on the same folder: nothing is compiled, the kernels come from disk (cache hits),
 *      and the results are bitwise those of round 1;
 *   3. every entry corrupted in place: the checksum catches each, the kernels are compiled again, right;
 *   4. LOOM_HOST_DISK_CACHE=0: the JIT compiles, the folder gains nothing, results are bitwise round 1's;
 *   5. an entry's header damaged behind a valid checksum cannot be made here (the checksum covers it), so
 *      the image and entry-point checks are covered by the loader's own tests (test_bundle_format).
 * The entries name the host-image format and Loom's build in their key text (checked in the files).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loom/loom.h"

static int n_passed, n_failed;
#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    if (cond) {                                                                   \
      n_passed++;                                                                 \
    } else {                                                                      \
      n_failed++;                                                                 \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);             \
      fprintf(stderr, __VA_ARGS__);                                               \
      fprintf(stderr, "\n");                                                      \
    }                                                                             \
  } while (0)

enum { N = 3000, ROWS = 64, COLS = 2500, NPROG = 6 };
static float xs[N], ys[N];
static float mat[ROWS * COLS];
static int32_t is[N];

typedef struct Results {
  float elem[N];        /* exp(x) * sin(y) + tanh(x) - erf(y) */
  uint16_t half[N];     /* float16: (h * h + h) */
  float rows[ROWS];     /* sum over the long inner axis */
  float cols[COLS];     /* max over the rows */
  double all;           /* sum of x * y in float64 */
  int32_t ints[N];      /* (i * 7 + 3) ^ (i >> 2) */
} Results;

static LoomArray arr(void *data, LoomDType t, int nd, int64_t d0, int64_t d1) {
  LoomArray a = {.data = data, .dtype = t, .ndim = nd, .shape = {d0, d1}, .strides = {nd == 2 ? d1 : 1, 1}};
  return a;
}

static float half_to_float(uint16_t h) {
  uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023u, bits;
  if (e == 0) {
    float v = ldexpf((float)m, -24);
    return s ? -v : v;
  }
  bits = e == 31 ? s | 0x7f800000u | m << 13 : s | (e + 112) << 23 | m << 13;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Runs the six programs in ctx into r; false on any error. */
static bool run_all(LoomContext *ctx, Results *r, const uint16_t *hin) {
  bool ok = true;
  for (int p = 0; p < NPROG && ok; p++) {
    LoomGraph *g = NULL;
    LoomStatus st = loom_graph_create(ctx, &g);
    LoomNode a, b, t1, t2, t3, t4, y;
    LoomArray out;
    if (p == 0) {
      LoomArray ax = arr(xs, LOOM_FLOAT32, 1, N, 0), ay = arr(ys, LOOM_FLOAT32, 1, N, 0);
      st = st ? st : loom_input(g, &ax, &a);
      st = st ? st : loom_input(g, &ay, &b);
      st = st ? st : loom_unary(g, LOOM_OP_EXP, a, &t1);
      st = st ? st : loom_unary(g, LOOM_OP_SIN, b, &t2);
      st = st ? st : loom_binary(g, LOOM_OP_MUL, t1, t2, &t3);
      st = st ? st : loom_unary(g, LOOM_OP_TANH, a, &t4);
      st = st ? st : loom_binary(g, LOOM_OP_ADD, t3, t4, &t3);
      st = st ? st : loom_unary(g, LOOM_OP_ERF, b, &t4);
      st = st ? st : loom_binary(g, LOOM_OP_SUB, t3, t4, &y);
      out = arr(r->elem, LOOM_FLOAT32, 1, N, 0);
    } else if (p == 1) {
      LoomArray ah = arr((void *)hin, LOOM_FLOAT16, 1, N, 0);
      st = st ? st : loom_input(g, &ah, &a);
      st = st ? st : loom_binary(g, LOOM_OP_MUL, a, a, &t1);
      st = st ? st : loom_binary(g, LOOM_OP_ADD, t1, a, &y);
      out = arr(r->half, LOOM_FLOAT16, 1, N, 0);
    } else if (p == 2 || p == 3) {
      LoomArray am = arr(mat, LOOM_FLOAT32, 2, ROWS, COLS);
      int32_t axis = p == 2 ? 1 : 0;
      st = st ? st : loom_input(g, &am, &a);
      st = st ? st : loom_reduce(g, p == 2 ? LOOM_REDUCE_SUM : LOOM_REDUCE_MAX, a, 1, &axis, 0, &y);
      out = p == 2 ? arr(r->rows, LOOM_FLOAT32, 1, ROWS, 0) : arr(r->cols, LOOM_FLOAT32, 1, COLS, 0);
    } else if (p == 4) {
      LoomArray ax = arr(xs, LOOM_FLOAT32, 1, N, 0), ay = arr(ys, LOOM_FLOAT32, 1, N, 0);
      st = st ? st : loom_input(g, &ax, &a);
      st = st ? st : loom_input(g, &ay, &b);
      st = st ? st : loom_cast(g, a, LOOM_FLOAT64, &t1);
      st = st ? st : loom_binary(g, LOOM_OP_MUL, t1, b, &t2);
      st = st ? st : loom_reduce(g, LOOM_REDUCE_SUM, t2, 0, NULL, 0, &y);
      out = arr(&r->all, LOOM_FLOAT64, 0, 0, 0);
    } else {
      LoomArray ai = arr(is, LOOM_INT32, 1, N, 0);
      st = st ? st : loom_input(g, &ai, &a);
      st = st ? st : loom_const_i64(g, 7, LOOM_INT32, &t1);
      st = st ? st : loom_binary(g, LOOM_OP_MUL, a, t1, &t2);
      st = st ? st : loom_const_i64(g, 3, LOOM_INT32, &t1);
      st = st ? st : loom_binary(g, LOOM_OP_ADD, t2, t1, &t3);
      st = st ? st : loom_const_i64(g, 2, LOOM_INT32, &t1);
      st = st ? st : loom_binary(g, LOOM_OP_RIGHT_SHIFT, a, t1, &t4);
      st = st ? st : loom_binary(g, LOOM_OP_BITWISE_XOR, t3, t4, &y);
      out = arr(r->ints, LOOM_INT32, 1, N, 0);
    }
    st = st ? st : loom_eval(g, 1, &y, &out);
    if (st) fprintf(stderr, "program %d: %s\n", p, loom_last_error(ctx));
    ok = st == LOOM_OK;
    loom_graph_destroy(g);
  }
  return ok;
}

/* Every result against a double loop: float32 math within a few ulps of the exact value. */
static void check_reference(const Results *r, const uint16_t *hin, const char *round) {
  int bad = 0;
  for (int i = 0; i < N; i++) {
    double x = xs[i], y = ys[i];
    double want = exp(x) * sin(y) + tanh(x) - erf(y);
    if (!(fabs(r->elem[i] - want) <= 1e-5 * (fabs(exp(x) * sin(y)) + 2))) bad++;
    float h = half_to_float(hin[i]);
    double hw = (double)h * h + h;
    /* two float16 roundings (h * h, then + h), each within 2^-11 of its result */
    if (!(fabs(half_to_float(r->half[i]) - hw) <= 1e-3 * ((double)h * h + fabs(h)) + 1e-7)) bad++;
    int32_t iv = is[i];
    if (r->ints[i] != (int32_t)(((uint32_t)iv * 7u + 3u) ^ (uint32_t)(iv >> 2))) bad++;
  }
  CHECK(bad == 0, "%s: %d elementwise results differ from the double loop", round, bad);
  bad = 0;
  for (int i = 0; i < ROWS; i++) {
    double s = 0, a = 0;
    for (int j = 0; j < COLS; j++) s += mat[i * COLS + j], a += fabs(mat[i * COLS + j]);
    if (!(fabs(r->rows[i] - s) <= 1e-5 * a)) bad++;
  }
  for (int j = 0; j < COLS; j++) {
    float m = -INFINITY;
    for (int i = 0; i < ROWS; i++) m = fmaxf(m, mat[i * COLS + j]);
    if (r->cols[j] != m) bad++;
  }
  double all = 0, mag = 0;
  for (int i = 0; i < N; i++) all += (double)xs[i] * (double)ys[i], mag += fabs((double)xs[i] * ys[i]);
  if (!(fabs(r->all - all) <= 1e-12 * mag)) bad++;
  CHECK(bad == 0, "%s: %d reductions differ from the double loop", round, bad);
}

typedef struct Folder {
  int files;
  bool names_format; /* every entry's key text names the host-image format */
} Folder;

static void scan(const char *dir, Folder *f, bool corrupt) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (stat(path, &sb) != 0) continue;
    if (S_ISDIR(sb.st_mode)) {
      scan(path, f, corrupt);
      continue;
    }
    FILE *fp = fopen(path, corrupt ? "r+b" : "rb");
    if (!fp) continue;
    char *buf = malloc((size_t)sb.st_size + 1);
    size_t n = buf ? fread(buf, 1, (size_t)sb.st_size, fp) : 0;
    if (buf) {
      buf[n] = 0;
      f->files++;
      if (!memmem(buf, n, "host-image", 10)) f->names_format = false;
      if (corrupt && n > 64) { /* flip a byte near the end: inside the image, covered by the checksum */
        fseek(fp, (long)n - 40, SEEK_SET);
        fputc(buf[n - 40] ^ 0x5a, fp);
      }
    }
    free(buf);
    fclose(fp);
  }
  closedir(d);
}

static LoomContext *open_ctx(const char *dir) {
  LoomContext *ctx = NULL;
  if (loom_context_create(&ctx) != LOOM_OK) return NULL;
  if (loom_set_cache(ctx, dir, 0) != LOOM_OK) {
    fprintf(stderr, "loom_set_cache: %s\n", loom_last_error(ctx));
    loom_context_destroy(ctx);
    return NULL;
  }
  return ctx;
}

int main(void) {
  unsetenv("LOOM_HOST_DISK_CACHE");
  char dir[] = "/tmp/loom_host_disk_XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  static uint16_t hin[N];
  srand(12345);
  for (int i = 0; i < N; i++) {
    xs[i] = (float)(rand() % 2000 - 1000) / 250.0f;
    ys[i] = (float)(rand() % 2000 - 1000) / 300.0f;
    is[i] = rand() - RAND_MAX / 2;
    hin[i] = (uint16_t)(0x3000 + rand() % 0x1800) | (uint16_t)((rand() & 1) << 15); /* |h| in [0.125, 8) */
  }
  for (int i = 0; i < ROWS * COLS; i++) mat[i] = (float)(rand() % 20001 - 10000) / 1000.0f + 100.0f;

  static Results r1, r2, r3, r4;
  LoomStats s;
  /* 1. empty folder */
  LoomContext *ctx = open_ctx(dir);
  CHECK(ctx != NULL, "context");
  if (!ctx) return 1;
  CHECK(run_all(ctx, &r1, hin), "round 1 ran");
  loom_get_stats(ctx, &s);
  uint64_t compiled1 = s.kernels_compiled;
  CHECK(compiled1 >= NPROG, "round 1 compiled %llu kernels", (unsigned long long)compiled1);
  loom_context_destroy(ctx);
  check_reference(&r1, hin, "round 1");
  Folder f = {0, true};
  scan(dir, &f, false);
  CHECK(f.files >= NPROG && (uint64_t)f.files <= compiled1, "round 1 stored %d entries for %llu kernels", f.files,
        (unsigned long long)compiled1);
  CHECK(f.names_format, "an entry's key does not name the host-image format");

  /* 2. a new context: everything from disk */
  ctx = open_ctx(dir);
  CHECK(ctx && run_all(ctx, &r2, hin), "round 2 ran");
  if (ctx) {
    loom_get_stats(ctx, &s);
    CHECK(s.kernels_compiled == 0 && s.cache_hits >= NPROG, "round 2: %llu compiled, %llu hits (want 0, >= %d)",
          (unsigned long long)s.kernels_compiled, (unsigned long long)s.cache_hits, NPROG);
    loom_context_destroy(ctx);
  }
  CHECK(memcmp(&r1, &r2, sizeof r1) == 0, "round 2's results differ from round 1's");

  /* 3. corrupted entries are misses: compiled again */
  Folder fc = {0, true};
  scan(dir, &fc, true);
  ctx = open_ctx(dir);
  CHECK(ctx && run_all(ctx, &r3, hin), "round 3 ran");
  if (ctx) {
    loom_get_stats(ctx, &s);
    CHECK(s.kernels_compiled == compiled1, "round 3 (corrupted entries): %llu compiled, want %llu",
          (unsigned long long)s.kernels_compiled, (unsigned long long)compiled1);
    loom_context_destroy(ctx);
  }
  check_reference(&r3, hin, "round 3");
  CHECK(memcmp(&r1, &r3, sizeof r1) == 0, "round 3's results differ from round 1's");

  /* 4. the host part off: the JIT, nothing stored */
  setenv("LOOM_HOST_DISK_CACHE", "0", 1);
  Folder before = {0, true}, after = {0, true};
  scan(dir, &before, false);
  char dir2[] = "/tmp/loom_host_disk_XXXXXX";
  CHECK(mkdtemp(dir2) != NULL, "mkdtemp");
  ctx = open_ctx(dir2);
  CHECK(ctx && run_all(ctx, &r4, hin), "round 4 ran");
  if (ctx) {
    loom_get_stats(ctx, &s);
    CHECK(s.kernels_compiled == compiled1, "round 4 (off): %llu compiled, want %llu",
          (unsigned long long)s.kernels_compiled, (unsigned long long)compiled1);
    loom_context_destroy(ctx);
  }
  scan(dir2, &after, false);
  CHECK(after.files == 0, "round 4 (off) stored %d entries", after.files);
  check_reference(&r4, hin, "round 4");
  CHECK(memcmp(&r1, &r4, sizeof r1) == 0, "the JIT's results differ from the disk images' (same CPU, same code)");
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, dir2);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", dir);
  printf("test_host_disk: %d passed, %d failed\n", n_passed, n_failed);
  return n_failed ? 1 : 0;
}
