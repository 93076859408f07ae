/* SPDX-License-Identifier: Apache-2.0 */
/* test_onehot.c: passes/onehot.c through the public API: sum(where(L[:, None] == s + t * iota(C), v, 0), axis)
 * over rows (axis 1) and columns (axis 0) with labels in and out of range, checked against a loop here (the
 * sum of the one matching element, or 0), and the kernels must read v by a gather instead of comparing all C.
 * Runs under ASan/UBSan in CI; values for every dtype and shape are tests/python/test_onehot_gather.py's. */
#include "test_common.h"

#define AT "axis %d s %lld t %lld", axis, (long long)s, (long long)t /* CHECK's message: the case */

enum { R = 37, C = 11 };

static LoomArray array(void *data, LoomDType t, int ndim, const int64_t *shape, const int64_t *strides) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = t;
  a.ndim = ndim;
  for (int i = 0; i < ndim; i++) a.shape[i] = shape[i], a.strides[i] = strides[i];
  return a;
}

/* The one-hot pick along `axis` (1: v is [R, C], labels [R]; 0: v is [C, R], labels [R]) with the index
 * s + t * i; checks values and that the kernels gather. */
static void check_pick(int axis, int64_t s, int64_t t) {
  LoomContext *ctx = tc_ctx;
  static float v[R * C];
  static int32_t lab[R];
  for (int i = 0; i < R * C; i++) v[i] = (float)((i * 7919) % 1000) / 8.0f - 60.0f;
  v[3] = -0.0f;
  for (int r = 0; r < R; r++) { /* in range at every step, between steps, below, above, extremes */
    int k = r % 15;
    lab[r] = k < C ? (int32_t)(s + t * k) : k == 11 ? (int32_t)(s + t * C) : k == 12 ? (int32_t)(s - t)
           : k == 13 ? INT32_MIN : (int32_t)(s + 1);
  }
  LoomGraph *g;
  CHECK(loom_graph_create(ctx, &g) == LOOM_OK, AT);
  int64_t vshape[2] = {axis == 1 ? R : C, axis == 1 ? C : R}, vstr[2] = {vshape[1], 1};
  int64_t lshape[2] = {axis == 1 ? R : 1, axis == 1 ? 1 : R}, lstr[2] = {1, 1};
  int64_t ishape[2] = {axis == 1 ? 1 : C, axis == 1 ? C : 1}, n = C;
  LoomArray va = array(v, LOOM_FLOAT32, 2, vshape, vstr), la = array(lab, LOOM_INT32, 2, lshape, lstr);
  LoomNode nv, nl, io, ks, kt, idx, eq, zero, w, r;
  CHECK(loom_input(g, &va, &nv) == LOOM_OK && loom_input(g, &la, &nl) == LOOM_OK, AT);
  CHECK(loom_iota(g, 1, &n, &io) == LOOM_OK && loom_reshape(g, io, 2, ishape, &io) == LOOM_OK, AT);
  CHECK(loom_const_i64(g, t, LOOM_INT64, &kt) == LOOM_OK && loom_binary(g, LOOM_OP_MUL, io, kt, &idx) == LOOM_OK, AT);
  CHECK(loom_const_i64(g, s, LOOM_INT64, &ks) == LOOM_OK && loom_binary(g, LOOM_OP_ADD, idx, ks, &idx) == LOOM_OK, AT);
  CHECK(loom_binary(g, LOOM_OP_EQ, nl, idx, &eq) == LOOM_OK, AT);
  CHECK(loom_const_f64(g, 0.0, LOOM_FLOAT32, &zero) == LOOM_OK && loom_where(g, eq, nv, zero, &w) == LOOM_OK, AT);
  int32_t ax = axis;
  CHECK(loom_reduce(g, LOOM_REDUCE_SUM, w, 1, &ax, 0, &r) == LOOM_OK, AT);
  char *text = NULL;
  CHECK(loom_dump(g, LOOM_DUMP_KERNELS, 1, &r, &text) == LOOM_OK && text && strstr(text, "gather"), AT);
  loom_free_string(ctx, text);
  LoomArray out;
  memset(&out, 0, sizeof out);
  CHECK(loom_eval(g, 1, &r, &out) == LOOM_OK && out.ndim == 1 && out.shape[0] == R, AT);
  int bad = 0;
  for (int i = 0; i < R && out.data; i++) {
    float want = 0.0f;
    for (int j = 0; j < C; j++)
      if ((int64_t)lab[i] == s + t * j) want = v[axis == 1 ? i * C + j : j * R + i] + 0.0f;
    float got = ((const float *)out.data)[i];
    if (memcmp(&got, &want, sizeof got) != 0) { /* same bits: -0 became +0 */
      if (bad++ < 3) fprintf(stderr, "axis %d s %lld t %lld row %d: got %a want %a\n", axis, (long long)s, (long long)t, i,
                             (double)got, (double)want);
    }
  }
  CHECK(bad == 0, AT);
  loom_array_free(ctx, &out);
  loom_graph_destroy(g);
}

int main(void) {
  if (!tc_init()) return 1;
  for (int axis = 0; axis < 2; axis++) {
    check_pick(axis, 0, 1);
    check_pick(axis, 5, 3);
    check_pick(axis, 40, -4);
  }
  return tc_finish();
}
