/* SPDX-License-Identifier: Apache-2.0 */
/* test_settings.c: a context's settings changed at run time (issue 17): loom_set_num_threads (the host
 * pool grows and shrinks, also while other threads evaluate), loom_set_cache (folder and bound, checked
 * before they replace the settings in effect) and loom_set_dump_sink (dumps to a callback instead of
 * stderr). Results are compared with sums computed here in long double; thread counts with the threads
 * the process has (/proc/self/task). scripts/test.sh runs it under ASan/UBSan and TSan too.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test_common.h"

/* Threads of this process now (Linux: /proc/self/task); -1 where that cannot be read. */
/* The process's threads once they settle at want (up to ~2 s: a thread told to exit may still be listed
 * for a moment under a sanitizer's slower teardown); the last count otherwise. */
static int process_threads(void);
static int threads_settled(int want) {
  int n = process_threads();
  for (int i = 0; i < 200 && n != want && n > 0; i++) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
    n = process_threads();
  }
  return n;
}

static int process_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

/* sum over rows of x*x + 1 for an r x c float64 matrix, evaluated on ctx (a reduction large enough to
 * be split over the pool); whether it equals a long double reference. Touches no CHECK tallies (other
 * threads call it). */
static bool row_sums_right(LoomContext *ctx, int64_t r, int64_t c, const char *what) {
  double *x = malloc((size_t)(r * c) * sizeof *x);
  if (!x) return false;
  for (int64_t i = 0; i < r * c; i++) x[i] = (double)((i * 37) % 1001) / 100.0 - 5.0;
  LoomGraph *g = NULL;
  bool ok = false;
  if (loom_graph_create(ctx, &g) == LOOM_OK) {
    LoomArray in = {.data = x, .dtype = LOOM_FLOAT64, .ndim = 2, .shape = {r, c}, .strides = {c, 1}};
    LoomNode a, sq, one, y, s;
    int32_t axis = 1;
    LoomStatus st = loom_input(g, &in, &a);
    if (!st) st = loom_binary(g, LOOM_OP_MUL, a, a, &sq);
    if (!st) st = loom_weak_float(g, 1.0, &one);
    if (!st) st = loom_binary(g, LOOM_OP_ADD, sq, one, &y);
    if (!st) st = loom_reduce(g, LOOM_REDUCE_SUM, y, 1, &axis, 0, &s);
    LoomArray out;
    memset(&out, 0, sizeof out);
    if (!st) st = loom_eval(g, 1, &s, &out);
    if (st == LOOM_OK) {
      int bad = 0;
      for (int64_t i = 0; i < r; i++) {
        long double want = 0;
        for (int64_t j = 0; j < c; j++) want += (long double)x[i * c + j] * x[i * c + j] + 1.0L;
        bad += !tc_close_rel(((double *)out.data)[i], (double)want, 1e-12, 0);
      }
      ok = bad == 0;
      loom_array_free(ctx, &out);
    }
    loom_graph_destroy(g);
    if (st != LOOM_OK) fprintf(stderr, "%s: %s\n", what, loom_last_error(ctx));
  }
  free(x);
  return ok;
}

static bool check_row_sums(LoomContext *ctx, int64_t r, int64_t c, const char *what) {
  return CHECK(row_sums_right(ctx, r, c, what), "%s: row sums differ from the reference", what);
}

static int32_t config_threads(LoomContext *ctx) {
  LoomConfigInfo c;
  return loom_get_config(ctx, &c) == LOOM_OK ? c.num_threads : -1;
}

/* ---- threads ----------------------------------------------------------------------------------------- */
typedef struct {
  LoomContext *ctx;
  _Atomic int stop, rounds;
  int failures; /* read after the join */
} Evaluator;

static void *evaluate_until_stopped(void *arg) {
  Evaluator *e = arg;
  while (!e->stop) {
    e->failures += !row_sums_right(e->ctx, 64, 4096, "evaluation during resizes");
    e->rounds++;
  }
  return NULL;
}

static void test_num_threads(void) {
  LoomContext *ctx = tc_ctx;
  check_row_sums(ctx, 300, 5000, "default threads"); /* first: the compiler's own start-up is done */
  /* thread counts are read right after each setting, before anything else can start threads */
  CHECK_OK(loom_set_num_threads(ctx, 1));
  int with1 = process_threads();
  CHECK(config_threads(ctx) == 1, "num_threads %d after setting 1", config_threads(ctx));
  CHECK_OK(loom_set_num_threads(ctx, 6));
  int with6 = with1 > 0 ? threads_settled(with1 + 5) : process_threads();
  CHECK(config_threads(ctx) == 6, "num_threads %d after setting 6", config_threads(ctx));
  CHECK_OK(loom_set_num_threads(ctx, 3));
  int with3 = with1 > 0 ? threads_settled(with1 + 2) : process_threads();
  if (with1 > 0) {
    CHECK(with6 - with1 == 5, "6 threads: the process has %d more threads than with 1, want 5", with6 - with1);
    CHECK(with3 - with1 == 2, "3 threads: %d more threads than with 1, want 2", with3 - with1);
  }
  int sizes[] = {1, 6, 3};
  for (int i = 0; i < 3; i++) {
    char what[32];
    snprintf(what, sizeof what, "%d thread(s)", sizes[i]);
    CHECK_OK(loom_set_num_threads(ctx, sizes[i]));
    check_row_sums(ctx, 300, 5000, what);
  }
  /* out of range: a clear error that names the range, the pool unchanged */
  CHECK_STATUS(loom_set_num_threads(ctx, -1), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(ctx), "1 to 1024") != NULL, "message: %s", loom_last_error(ctx));
  CHECK_STATUS(loom_set_num_threads(ctx, 1025), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(config_threads(ctx) == 3, "a refused setting changed the pool to %d", config_threads(ctx));
  CHECK_STATUS(loom_set_num_threads(NULL, 2), LOOM_ERR_INVALID_ARGUMENT);
  /* 0: the default (LOOM_NUM_THREADS, else the online cores) */
  CHECK_OK(loom_set_num_threads(ctx, 0));
  const char *env = getenv("LOOM_NUM_THREADS");
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int32_t want = env && atoi(env) > 0 ? atoi(env) : (int32_t)(cores < 1 ? 1 : cores > 1024 ? 1024 : cores);
  CHECK(config_threads(ctx) == want, "default: %d threads, want %d", config_threads(ctx), want);

  /* resizes while another thread evaluates: every result right, no hang */
  Evaluator e = {.ctx = ctx};
  pthread_t t;
  if (pthread_create(&t, NULL, evaluate_until_stopped, &e) == 0) {
    for (int i = 0; i < 40; i++) CHECK_OK(loom_set_num_threads(ctx, 1 + (i * 7) % 9));
    while (e.rounds < 2) usleep(1000);
    e.stop = 1;
    pthread_join(t, NULL);
    CHECK(e.failures == 0, "%d evaluations during resizes were wrong", e.failures);
  }
  CHECK_OK(loom_set_num_threads(ctx, 0));
}

/* ---- the disk cache ------------------------------------------------------------------------------------ */
static void test_cache(void) {
  LoomContext *ctx = tc_ctx;
  char tmpl[] = "/tmp/loom-settings-XXXXXX";
  char *root = mkdtemp(tmpl);
  if (!CHECK(root != NULL, "mkdtemp")) return;
  char dir[512], file[512], under_file[600];
  snprintf(dir, sizeof dir, "%s/cache", root);
  snprintf(file, sizeof file, "%s/a-file", root);
  snprintf(under_file, sizeof under_file, "%s/sub", file);
  FILE *f = fopen(file, "w");
  if (f) fclose(f);

  CHECK_OK(loom_set_cache(ctx, dir, 5u << 20));
  LoomConfigInfo c;
  CHECK_OK(loom_get_config(ctx, &c));
  CHECK(strcmp(c.cache_dir, dir) == 0, "cache_dir '%s', want '%s'", c.cache_dir, dir);
  CHECK(c.cache_max_bytes == 5u << 20, "cache_max_bytes %llu", (unsigned long long)c.cache_max_bytes);
  struct stat sb;
  CHECK(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) && (sb.st_mode & 0777) == 0700, "the folder is made, mode 0700");

  /* a folder that cannot be made (under a regular file): an error naming it; the settings stay */
  CHECK(loom_set_cache(ctx, under_file, 0) != LOOM_OK, "a folder under a file was accepted");
  CHECK(strstr(loom_last_error(ctx), "loom_set_cache") != NULL && strstr(loom_last_error(ctx), "kept") != NULL,
        "message: %s", loom_last_error(ctx));
  CHECK_OK(loom_get_config(ctx, &c));
  CHECK(strcmp(c.cache_dir, dir) == 0 && c.cache_max_bytes == 5u << 20, "a refused setting changed the cache");

  CHECK_OK(loom_set_cache(ctx, "", 0)); /* off */
  CHECK_OK(loom_get_config(ctx, &c));
  CHECK(c.cache_dir[0] == 0 && c.cache_error[0] == 0, "off: cache_dir '%s' error '%s'", c.cache_dir, c.cache_error);
  CHECK_OK(loom_set_cache(ctx, NULL, 0)); /* back to the environment's */
  CHECK_STATUS(loom_set_cache(NULL, dir, 0), LOOM_ERR_INVALID_ARGUMENT);
  check_row_sums(ctx, 10, 100, "after cache settings");
  rmdir(dir);
  unlink(file);
  rmdir(root);
}

/* ---- the dump sink --------------------------------------------------------------------------------------- */
typedef struct {
  char text[1 << 16];
  size_t len;
  int calls;
} Collected;

static void collect(void *user, const char *text, size_t len) {
  Collected *c = user;
  c->calls++;
  CHECK(text[len] == 0, "the sink's text is NUL-terminated");
  size_t room = sizeof c->text - 1 - c->len;
  size_t n = len < room ? len : room;
  memcpy(c->text + c->len, text, n);
  c->len += n;
  c->text[c->len] = 0;
}

static void test_dump_sink(void) {
  LoomContext *ctx = tc_ctx;
  static Collected got;
  CHECK_OK(loom_set_dump_sink(ctx, collect, &got));
  CHECK_OK(loom_set_dump(ctx, "kernels,llvm,time"));
  check_row_sums(ctx, 7, 33, "dumped evaluation");
  CHECK(got.calls > 0 && strstr(got.text, "\nkernel k") != NULL, "kernel IR reached the sink (%d calls)",
        got.calls);
  CHECK(strstr(got.text, "define") != NULL, "LLVM IR reached the sink");
  CHECK(strstr(got.text, "# time eval") != NULL, "timings reached the sink");
  CHECK_OK(loom_set_dump(ctx, ""));
  int calls = got.calls;
  check_row_sums(ctx, 7, 33, "undumped evaluation");
  CHECK(got.calls == calls, "no dumps once they are off");
  CHECK_OK(loom_set_dump_sink(ctx, NULL, NULL)); /* stderr again */
  CHECK_STATUS(loom_set_dump_sink(NULL, collect, NULL), LOOM_ERR_INVALID_ARGUMENT);
}

/* ---- the GPU JIT level -------------------------------------------------------------------------------- */
static void test_jit_level(void) {
  LoomContext *ctx = tc_ctx;
  int32_t level = 7;
  CHECK_OK(loom_get_jit_level(ctx, &level));
  CHECK(level == -1, "the default reads as -1, not %d", level);
  for (int32_t want = 0; want <= 4; want++) {
    CHECK_OK(loom_set_jit_level(ctx, want));
    CHECK_OK(loom_get_jit_level(ctx, &level));
    CHECK(level == want, "jit level %d after setting %d", level, want);
  }
  CHECK_STATUS(loom_set_jit_level(ctx, 5), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(ctx), "0 to 4") != NULL, "message: %s", loom_last_error(ctx));
  CHECK_STATUS(loom_set_jit_level(ctx, -2), LOOM_ERR_INVALID_ARGUMENT);
  CHECK_OK(loom_get_jit_level(ctx, &level));
  CHECK(level == 4, "a refused level changed the setting to %d", level);
  CHECK_STATUS(loom_get_jit_level(ctx, NULL), LOOM_ERR_INVALID_ARGUMENT);
  CHECK_OK(loom_set_jit_level(ctx, -1));
  check_row_sums(ctx, 9, 70, "after jit levels"); /* host kernels: no driver JIT, unaffected */
}

int main(void) {
  if (!tc_init()) return 1;
  test_jit_level();
  test_num_threads();
  test_cache();
  test_dump_sink();
  return tc_finish();
}
