/* SPDX-License-Identifier: Apache-2.0 */
/* test_snippet.c: the snippet front end (frontend/snippet*.c) and the typed snippet IR (ir/snippet.c).
 *
 * Approach: compile CuPy's user-guide kernels and compare the printed IR with text written by hand;
 * check conversions, desugaring and errors on small snippets; then run every file of
 * tests/snippets/ok (must compile and verify) and tests/snippets/err (the first line of the error
 * must equal the file's "// expect:" line). A snippet file's header comments give its parameters:
 *   // in: <in_params>    // out: <out_params>    // bind: T=float32,U=int64
 *   // preamble: <one-line preamble>    // expect: <first line of the error message>
 *   // loop_prep: <one-line loop_prep>    // after_loop: <one-line after_loop>
 * The folder is found from __FILE__ (cmake passes absolute source paths) or argv[1].
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/snippet.h"

static int passed, failed;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (cond) passed++;                                    \
    else {                                                 \
      failed++;                                            \
      fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
    }                                                      \
  } while (0)

static LoomContext *ctx;

typedef struct Result {
  LoomStatus status;
  char text[16384]; /* printed IR or the error message */
} Result;

static void bind_parse(const char *spec, int *n, const char **names, LoomDType *dts, char store[][16]) {
  *n = 0;
  while (spec && *spec && *n < 8) {
    const char *eq = strchr(spec, '=');
    if (!eq) break;
    size_t nl = (size_t)(eq - spec);
    if (nl > 15) nl = 15;
    memcpy(store[*n], spec, nl);
    store[*n][nl] = 0;
    const char *v = eq + 1, *end = strchr(v, ',');
    size_t vl = end ? (size_t)(end - v) : strlen(v);
    for (int t = 0; t < LOOM_DTYPE_COUNT; t++)
      if (strlen(loom_dtype_name((LoomDType)t)) == vl && !strncmp(loom_dtype_name((LoomDType)t), v, vl)) dts[*n] = (LoomDType)t;
    names[*n] = store[*n];
    (*n)++;
    spec = end ? end + 1 : NULL;
  }
}

static void finish(Result *r, LoomStatus st, SnModule *m, Diag *d) {
  r->status = st;
  if (st) {
    snprintf(r->text, sizeof r->text, "%s", d->msg);
    return;
  }
  StrBuf b;
  sb_init(&b, ctx);
  ir_snippet_print(m, &b);
  char *t = sb_take(&b);
  snprintf(r->text, sizeof r->text, "%s", t ? t : "(oom)");
  ctx_free(ctx, t);
}

static void ew_ex(Result *r, const char *name, const char *in, const char *out, const char *op, const char *preamble,
                  const char *bind, const char *loop_prep, const char *after_loop) {
  Arena a;
  arena_init(&a, ctx);
  Diag d = {0};
  FeParamList pi, po;
  const char *names[8];
  LoomDType dts[8];
  char store[8][16];
  int nb;
  bind_parse(bind, &nb, names, dts, store);
  LoomStatus st = fe_parse_params(&a, name, "in_params", in, &pi, &d);
  if (!st) st = fe_parse_params(&a, name, "out_params", out, &po, &d);
  SnModule *m = NULL;
  if (!st) {
    FeElementwiseSpec s = {name, pi, po, op, preamble, {nb, names, dts}};
    st = fe_snippet_elementwise_ex(&a, &s, loop_prep, after_loop, &m, &d);
  }
  finish(r, st, m, &d);
  arena_free_all(&a);
}

static void ew(Result *r, const char *name, const char *in, const char *out, const char *op, const char *preamble,
               const char *bind) {
  ew_ex(r, name, in, out, op, preamble, bind, NULL, NULL);
}

static Result R;

static void expect_ir(const char *name, const char *in, const char *out, const char *op, const char *bind,
                      const char *want, int line) {
  ew(&R, name, in, out, op, NULL, bind);
  if (R.status || strcmp(R.text, want))
    fprintf(stderr, "test_snippet.c:%d: got:\n%s\nwant:\n%s\n", line, R.text, want);
  CHECK(R.status == LOOM_OK && !strcmp(R.text, want), "IR of %s (line %d)", name, line);
}

static void expect_err(const char *op, const char *in, const char *out, LoomStatus st, const char *want, int line) {
  ew(&R, "k", in, out, op, NULL, "T=float32");
  CHECK(R.status == st && strstr(R.text, want), "line %d: snippet '%s': got status %d message:\n%s\nwant '%s'", line,
        op, R.status, R.text, want);
}

static void test_cupy_examples(void) {
  expect_ir("squared_diff", "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "",
            "snippet squared_diff\n"
            "func @squared_diff kernel(%0:x in f32, %1:y in f32, %2:z out f32, %3:i special i64, "
            "%4:_ind.size() special i64) -> void\n"
            "{\n"
            "  (assign f32 %2:z (mul f32 (sub f32 %0:x %1:y) (sub f32 %0:x %1:y)))\n"
            "}\n",
            __LINE__);
  /* generic: T bound to float64, and to int8 (integer promotion: computed in int, stored back) */
  expect_ir("squared_diff_generic", "T x, T y", "T z", "z = (x - y) * (x - y)", "T=float64",
            "snippet squared_diff_generic\n"
            "func @squared_diff_generic kernel(%0:x in f64, %1:y in f64, %2:z out f64, %3:i special i64, "
            "%4:_ind.size() special i64) -> void\n"
            "{\n"
            "  (assign f64 %2:z (mul f64 (sub f64 %0:x %1:y) (sub f64 %0:x %1:y)))\n"
            "}\n",
            __LINE__);
  expect_ir("sqd", "T x, T y", "T z", "z = (x - y) * (x - y)", "T=int8",
            "snippet sqd\n"
            "func @sqd kernel(%0:x in i8, %1:y in i8, %2:z out i8, %3:i special i64, %4:_ind.size() special i64) -> void\n"
            "{\n"
            "  (assign i8 %2:z (cast i8 (mul i32 (sub i32 (cast i32 %0:x) (cast i32 %1:y)) "
            "(sub i32 (cast i32 %0:x) (cast i32 %1:y)))))\n"
            "}\n",
            __LINE__);
  expect_ir("reversed_add", "raw T x, T y", "T z", "z = x[_ind.size() - i - 1] + y", "T=float32",
            "snippet reversed_add\n"
            "func @reversed_add kernel(%0:x raw_in f32, %1:y in f32, %2:z out f32, %3:i special i64, "
            "%4:_ind.size() special i64) -> void\n"
            "{\n"
            "  (assign f32 %2:z (add f32 (load f32 %0:x (sub i64 (sub i64 %4:_ind.size() %3:i) (const i64 1))) %1:y))\n"
            "}\n",
            __LINE__);
  /* the L2 norm ReductionKernel */
  Arena a;
  arena_init(&a, ctx);
  Diag d = {0};
  FeParamList pi, po;
  const char *names[] = {"T"};
  LoomDType dts[] = {LOOM_FLOAT32};
  LoomStatus st = fe_parse_params(&a, "l2norm", "in_params", "T x", &pi, &d);
  if (!st) st = fe_parse_params(&a, "l2norm", "out_params", "T y", &po, &d);
  SnModule *m = NULL;
  if (!st) {
    FeReductionSpec s = {"l2norm", pi, po, "x * x", "a + b", "y = sqrt(a)", "0", NULL, NULL, {1, names, dts}};
    st = fe_snippet_reduction(&a, &s, &m, &d);
  }
  finish(&R, st, m, &d);
  const char *want =
      "snippet l2norm\n"
      "func @map map(%0:x in f32) -> f32\n"
      "{\n"
      "  return (mul f32 %0:x %0:x)\n"
      "}\n"
      "func @reduce reduce(%0:a param f32, %1:b param f32) -> f32\n"
      "{\n"
      "  return (add f32 %0:a %1:b)\n"
      "}\n"
      "func @post post(%0:a param f32, %1:y out f32) -> void\n"
      "{\n"
      "  (assign f32 %1:y (sqrt f32 %0:a))\n"
      "}\n"
      "func @identity identity() -> f32\n"
      "{\n"
      "  return (const f32 0)\n"
      "}\n";
  if (st || strcmp(R.text, want)) fprintf(stderr, "got:\n%s\n", R.text);
  CHECK(st == LOOM_OK && !strcmp(R.text, want), "l2norm reduction IR");
  CHECK(m && m->map == 0 && m->reduce == 1 && m->post == 2 && m->identity == 3 && m->reduce_dtype == LOOM_FLOAT32,
        "l2norm function indices");
  arena_free_all(&a);
}

static void test_typing(void) {
  /* int op float -> float; float op double -> double; unsigned rules; literal types */
  expect_ir("t1", "int32 a, float32 b", "float64 z", "z = a + b + 1.0", "",
            "snippet t1\n"
            "func @t1 kernel(%0:a in i32, %1:b in f32, %2:z out f64, %3:i special i64, %4:_ind.size() special i64) -> void\n"
            "{\n"
            "  (assign f64 %2:z (add f64 (cast f64 (add f32 (cast f32 %0:a) %1:b)) (const f64 1)))\n"
            "}\n",
            __LINE__);
  expect_ir("t2", "int32 a, uint32 b, int64 c", "bool z", "z = a < b && c < b", "",
            "snippet t2\n"
            "func @t2 kernel(%0:a in i32, %1:b in u32, %2:c in i64, %3:z out b1, %4:i special i64, %5:_ind.size() special i64) -> void\n"
            "{\n"
            "  (assign b1 %3:z (and b1 (lt b1 (cast u32 %0:a) %1:b) (lt b1 %2:c (cast i64 %1:b))))\n"
            "}\n",
            __LINE__);
  expect_ir("t3", "int32 a", "int32 z", "z = a / 2 + a % 3 + -a + ~a + (a << 1u) + 0xFFFFFFFF", "",
            "snippet t3\n"
            "func @t3 kernel(%0:a in i32, %1:z out i32, %2:i special i64, %3:_ind.size() special i64) -> void\n"
            "{\n"
            "  (assign i32 %1:z (cast i32 (add u32 (cast u32 (add i32 (add i32 (add i32 (add i32 (div i32 %0:a (const i32 2)) "
            "(rem i32 %0:a (const i32 3))) (neg i32 %0:a)) (bitwise_not i32 %0:a)) (left_shift i32 %0:a (const i32 1)))) "
            "(const u32 4294967295))))\n"
            "}\n",
            __LINE__);
  /* C++ overloads: sqrt(int) is double, sqrtf is float, min on floats is fmin, abs on ints stays int */
  expect_ir("t4", "int32 a, float32 b", "float32 z", "z = sqrt(a) + sqrtf(a) + min(b, 1) + abs(a)", "",
            "snippet t4\n"
            "func @t4 kernel(%0:a in i32, %1:b in f32, %2:z out f32, %3:i special i64, %4:_ind.size() special i64) -> void\n"
            "{\n"
            "  (assign f32 %2:z (cast f32 (add f64 (add f64 (add f64 (sqrt f64 (cast f64 %0:a)) (cast f64 (sqrt f32 (cast f32 %0:a)))) "
            "(cast f64 (fmin f32 %1:b (const f32 1)))) (cast f64 (abs i32 %0:a)))))\n"
            "}\n",
            __LINE__);
  /* compound assignment on a computed raw index evaluates the index once */
  expect_ir("t5", "int64 k", "raw float32 y", "y[k + i] += 2", "",
            "snippet t5\n"
            "func @t5 kernel(%0:k in i64, %1:y raw_out f32, %2:i special i64, %3:_ind.size() special i64) -> void\n"
            "{\n"
            "  (comma f32 (assign i64 %4:tmp (add i64 %0:k %2:i)) (store f32 %1:y %4:tmp (add f32 (load f32 %1:y %4:tmp) (const f32 2))))\n"
            "}\n",
            __LINE__);
}

static void test_errors(void) {
  expect_err("z = x + yy;", "float32 x", "float32 z", LOOM_ERR_INVALID_ARGUMENT,
             "k:1:9: error: undeclared identifier 'yy'\nz = x + yy;\n        ^", __LINE__);
  expect_err("z = erf(x);", "float32 x", "float32 z", LOOM_ERR_UNSUPPORTED, "'erf' is not supported", __LINE__);
  expect_err("z = x\n  + ;", "float32 x", "float32 z", LOOM_ERR_INVALID_ARGUMENT,
             "k:2:5: error: expected an expression before ';'\n  + ;\n    ^", __LINE__);
  expect_err("i = 0;", "float32 x", "float32 z", LOOM_ERR_INVALID_ARGUMENT, "cannot assign to 'i'", __LINE__);
  expect_err("const int c = 1; c = 2; z = c;", "float32 x", "float32 z", LOOM_ERR_INVALID_ARGUMENT,
             "cannot assign to const variable 'c'", __LINE__);
  expect_err("z = x[0];", "raw float32 x", "float32 z", LOOM_OK, "snippet k", __LINE__);
  expect_err("x[0] = 1;", "raw float32 x", "float32 z", LOOM_ERR_INVALID_ARGUMENT,
             "cannot write to raw input parameter 'x'", __LINE__);
  expect_err("return;", "float32 x", "float32 z", LOOM_ERR_INVALID_ARGUMENT, "return is not allowed here", __LINE__);
  expect_err("z = x[1.5];", "raw float32 x", "float32 z", LOOM_ERR_INVALID_ARGUMENT, "array subscript is not an integer",
             __LINE__);
  expect_err("{ z = x;", "float32 x", "float32 z", LOOM_ERR_INVALID_ARGUMENT, "expected '}' before end of input", __LINE__);
  expect_err("float t[4];", "float32 x", "float32 z", LOOM_ERR_UNSUPPORTED, "local arrays are not supported", __LINE__);
  expect_err("z = x", "float32 x", "float32 x", LOOM_ERR_INVALID_ARGUMENT, "is both an input and an output", __LINE__);
  /* nesting bounds: deep parentheses and long chains give errors, not crashes */
  char deep[4096];
  size_t n = 0;
  n += (size_t)snprintf(deep, sizeof deep, "z = ");
  for (int k = 0; k < 1000; k++) deep[n++] = '(';
  deep[n++] = 'x';
  for (int k = 0; k < 1000; k++) deep[n++] = ')';
  deep[n] = 0;
  expect_err(deep, "float32 x", "float32 z", LOOM_ERR_INVALID_ARGUMENT, "nested too deeply", __LINE__);
  n = (size_t)snprintf(deep, sizeof deep, "z = x");
  for (int k = 0; k < 600; k++) n += (size_t)snprintf(deep + n, sizeof deep - n, "+x");
  expect_err(deep, "float32 x", "float32 z", LOOM_ERR_INVALID_ARGUMENT, "expression too complex", __LINE__);
  /* parameter lists */
  Arena a;
  arena_init(&a, ctx);
  Diag d = {0};
  FeParamList l;
  CHECK(fe_parse_params(&a, "k", "in_params", "float32 x, raw T y, T z", &l, &d) == LOOM_OK && l.n == 3 &&
            !l.params[0].raw && l.params[0].dtype == LOOM_FLOAT32 && l.params[1].raw && l.params[1].placeholder &&
            !strcmp(l.params[1].type_name, "T") && !strcmp(l.params[2].name, "z"),
        "param list: %s", d.msg);
  d = (Diag){0};
  CHECK(fe_parse_params(&a, "k", "in_params", "   ", &l, &d) == LOOM_OK && l.n == 0, "empty param list");
  CHECK(fe_parse_params(&a, "k", "in_params", "float x, int y", &l, &d) == LOOM_OK && l.params[0].dtype == LOOM_FLOAT64 &&
            l.params[1].dtype == LOOM_INT64,
        "numpy names in params (float = float64, int = int64)");
  d = (Diag){0};
  CHECK(fe_parse_params(&a, "k", "in_params", "float32 x, float32 x", &l, &d) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(d.msg, "k(in_params):1:20: error: duplicate parameter name 'x'"),
        "duplicate param: %s", d.msg);
  d = (Diag){0};
  CHECK(fe_parse_params(&a, "k", "in_params", "float32", &l, &d) == LOOM_ERR_INVALID_ARGUMENT, "type only: %s", d.msg);
  arena_free_all(&a);
}

/* loop_prep / after_loop: the state lives in the prep function ($N), the regions take the raw params
 * and _ind.size(); the operation reads and writes the state; a param shadows a state name. */
static void test_loop_prep(void) {
  ew_ex(&R, "lp", "float32 x", "float32 y, raw int32 r", "s += x; y = s * k", NULL, "",
        "float s; const float k = r[0] + n; float x = 1;", "r[0] = s + x");
  const char *want =
      "snippet lp\n"
      "func @loop_prep prep(%0:r raw_out i32, %1:_ind.size() special i64) -> void\n"
      "{\n"
      "  decl $2:s f32\n"
      "  decl $3:k f32 const = (cast f32 (add i64 (cast i64 (load i32 %0:r (const i64 0))) %1:_ind.size()))\n"
      "  decl $4:x f32 = (const f32 1)\n"
      "}\n"
      "func @lp kernel(%0:x in f32, %1:y out f32, %2:r raw_out i32, %3:i special i64, %4:_ind.size() special i64) -> void\n"
      "{\n"
      "  (assign f32 $2:s (add f32 $2:s %0:x))\n"
      "  (assign f32 %1:y (mul f32 $2:s $3:k))\n"
      "}\n"
      "func @after_loop after(%0:r raw_out i32, %1:_ind.size() special i64) -> void\n"
      "{\n"
      "  (store i32 %0:r (const i64 0) (cast i32 (add f32 $2:s $4:x)))\n"
      "}\n";
  if (R.status || strcmp(R.text, want)) fprintf(stderr, "test_snippet.c: loop_prep IR: got:\n%s\nwant:\n%s\n", R.text, want);
  CHECK(R.status == LOOM_OK && !strcmp(R.text, want), "IR of a kernel with loop_prep / after_loop");
  /* only after_loop: no state, the region still sees n */
  ew_ex(&R, "al", "float32 x", "float32 y, raw int64 r", "y = x", NULL, "", NULL, "r[0] = n");
  CHECK(R.status == LOOM_OK && strstr(R.text, "func @after_loop after(%0:r raw_out i64, %1:_ind.size() special i64)") &&
            !strstr(R.text, "prep("),
        "after_loop alone: %s", R.text);
}

/* ---- the folders ---------------------------------------------------------------------------------- */
static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static void directive(const char *src, const char *key, char *out, size_t cap) {
  out[0] = 0;
  char pat[32];
  snprintf(pat, sizeof pat, "// %s:", key);
  const char *p = strstr(src, pat);
  if (!p) return;
  p += strlen(pat);
  while (*p == ' ') p++;
  size_t k = 0;
  while (p[k] && p[k] != '\n' && k + 1 < cap) {
    out[k] = p[k];
    k++;
  }
  out[k] = 0;
}

static int run_folder(const char *dir, bool expect_ok) {
  DIR *dd = opendir(dir);
  if (!dd) {
    CHECK(0, "cannot open %s", dir);
    return 0;
  }
  int count = 0;
  struct dirent *e;
  while ((e = readdir(dd))) {
    size_t l = strlen(e->d_name);
    if (l < 4 || strcmp(e->d_name + l - 3, ".cu")) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    char *src = read_all(path);
    if (!src) {
      CHECK(0, "cannot read %s", path);
      continue;
    }
    char in[512], out[512], bind[128], pre[2048], want[1024], lp[1024], al[1024];
    directive(src, "in", in, sizeof in);
    directive(src, "out", out, sizeof out);
    directive(src, "bind", bind, sizeof bind);
    directive(src, "preamble", pre, sizeof pre);
    directive(src, "expect", want, sizeof want);
    directive(src, "loop_prep", lp, sizeof lp);
    directive(src, "after_loop", al, sizeof al);
    ew_ex(&R, expect_ok ? "ok_kernel" : "err_kernel", in, out, src, pre[0] ? pre : NULL, bind, lp, al);
    if (expect_ok) {
      CHECK(R.status == LOOM_OK, "%s: %s", path, R.text);
    } else {
      char *nl = strchr(R.text, '\n');
      if (nl) *nl = 0;
      CHECK(R.status != LOOM_OK && !strcmp(R.text, want), "%s:\n  got:  %s\n  want: %s", path, R.text, want);
    }
    free(src);
    count++;
  }
  closedir(dd);
  return count;
}

int main(int argc, char **argv) {
  if (loom_context_create(&ctx) != LOOM_OK) return 1;
  test_cupy_examples();
  test_typing();
  test_errors();
  test_loop_prep();
  char base[4096];
  if (argc > 1) {
    snprintf(base, sizeof base, "%s", argv[1]);
  } else {
    snprintf(base, sizeof base, "%s", __FILE__);
    char *s = strstr(base, "/c/test_snippet.c");
    if (s) strcpy(s, "/snippets");
    else snprintf(base, sizeof base, "tests/snippets");
  }
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/ok", base);
  int nok = run_folder(dir, true);
  snprintf(dir, sizeof dir, "%s/err", base);
  int nerr = run_folder(dir, false);
  CHECK(nok >= 5 && nerr >= 15, "snippet folders: %d ok, %d err files", nok, nerr);
  loom_context_destroy(ctx);
  printf("test_snippet: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
