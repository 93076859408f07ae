/* SPDX-License-Identifier: Apache-2.0 */
/* app.c: a user's program against the public API only: mean(exp(a) * b, axis=1) of a 3 x 1000 float64
 * matrix, compared with a plain double loop, and the library's version with the header's.
 * Prints "consumer ok <version>" and exits 0, or says what differed and exits 1. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <loom/loom.h>

enum { ROWS = 3, COLS = 1000 };

int main(void) {
  if (strcmp(loom_version(), LOOM_VERSION_STRING) != 0 || loom_version_number() != LOOM_VERSION_NUMBER) {
    fprintf(stderr, "consumer: library %s (%d), header %s (%d)\n", loom_version(), loom_version_number(),
            LOOM_VERSION_STRING, LOOM_VERSION_NUMBER);
    return 1;
  }
  static double a[ROWS * COLS], b[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++) {
    a[i] = sin(0.01 * i);
    b[i] = 1.0 + (i % 7);
  }
  LoomContext *ctx = NULL;
  LoomGraph *g = NULL;
  if (loom_context_create(&ctx) != LOOM_OK || loom_graph_create(ctx, &g) != LOOM_OK) {
    fprintf(stderr, "consumer: cannot create a context or graph\n");
    return 1;
  }
  LoomArray A = {.data = a, .dtype = LOOM_FLOAT64, .ndim = 2, .shape = {ROWS, COLS}, .strides = {COLS, 1}};
  LoomArray B = A;
  B.data = b;
  LoomNode na, nb, ne, ny, nm;
  int32_t axis = 1;
  LoomArray out = {0};
  LoomStatus st = loom_input(g, &A, &na);
  if (st == LOOM_OK) st = loom_input(g, &B, &nb);
  if (st == LOOM_OK) st = loom_unary(g, LOOM_OP_EXP, na, &ne);
  if (st == LOOM_OK) st = loom_binary(g, LOOM_OP_MUL, ne, nb, &ny);
  if (st == LOOM_OK) st = loom_reduce(g, LOOM_REDUCE_MEAN, ny, 1, &axis, 0, &nm);
  if (st == LOOM_OK) st = loom_eval(g, 1, &nm, &out);
  if (st != LOOM_OK) {
    fprintf(stderr, "consumer: %s: %s\n", loom_status_name(st), loom_last_error(ctx));
    return 1;
  }
  int bad = out.ndim != 1 || out.shape[0] != ROWS || out.dtype != LOOM_FLOAT64;
  for (int r = 0; r < ROWS && !bad; r++) {
    double ref = 0;
    for (int c = 0; c < COLS; c++) ref += exp(a[r * COLS + c]) * b[r * COLS + c];
    ref /= COLS;
    double got = ((const double *)out.data)[r * out.strides[0]];
    if (fabs(got - ref) > 1e-12 * fabs(ref)) {
      fprintf(stderr, "consumer: row %d: loom %.17g, reference %.17g\n", r, got, ref);
      bad = 1;
    }
  }
  loom_array_free(ctx, &out);
  loom_graph_destroy(g);
  loom_context_destroy(ctx);
  if (!bad) printf("consumer ok %s\n", loom_version());
  return bad;
}
