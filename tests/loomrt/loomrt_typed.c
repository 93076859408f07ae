/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt_typed: the typed C functions `loomc --emit-c` wrote for tests/loomrt/kernels.loom (built into
 * this program with the bundle embedded), called like any C function; linked only against libloomrt.
 * Results are checked against loops written here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loomrt_kernels.h"
#include "tests/c/mock_hip.h"


int main(void) {
  LoomrtRuntime *rt;
  if (loomrt_create(NULL, &rt) != LOOM_OK) return 1;
  LoomrtStream *s = loomrt_host_stream(rt);
  LoomrtBundle *b = NULL;
  CHECK(loomrt_bundle_embedded(rt, &loomrt_kernels_bundle, &b) == LOOM_OK && loomrt_bundle_entry_count(b) == 14,
        "embedded bundle: %s", loomrt_last_error(rt));
  enum { N = 4099 };
  static float x[N], y[N], o[N];
  for (int i = 0; i < N; i++) x[i] = (float)i * 0.5f, y[i] = (float)(N - i);
  CHECK(axpb_f32(s, x, y, o, N) == LOOM_OK, "axpb_f32: %s", loomrt_last_error(rt));
  int bad = 0;
  for (int i = 0; i < N; i++) {
    volatile float t = 2.5f * x[i];
    bad += o[i] != t + y[i];
  }
  CHECK(bad == 0, "axpb_f32: %d wrong", bad);
  /* rowsum over a (7, 300) view of every other column of a (7, 600) array: in0_s0 = 600 */
  static float m[7 * 600], r[7];
  for (int i = 0; i < 7 * 600; i++) m[i] = (float)(i % 17) - 8;
  static float sub[7 * 300];
  for (int i = 0; i < 7; i++) memcpy(sub + i * 300, m + i * 600, 300 * sizeof *m);
  CHECK(rowsum_f32(s, m, r, 7, 300, 600) == LOOM_OK, "rowsum_f32: %s", loomrt_last_error(rt));
  for (int i = 0; i < 7; i++) {
    double want = 0;
    for (int j = 0; j < 300; j++) want += sub[i * 300 + j];
    CHECK(fabs(r[i] - want) <= 1e-4, "rowsum_f32 row %d: %g vs %g", i, r[i], want);
  }
  /* colmax over a (5, 3) float64 array: the kernel keeps the 3 columns (n0) and reduces the 5 rows (n1) */
  double a[15] = {1, -2, 3, 4, 5, -6, -7, 8, 9, 0, 0, 0, 2, 2, 2}, cm[3];
  CHECK(colmax_f64(s, a, cm, 3, 5, 3) == LOOM_OK && cm[0] == 4 && cm[1] == 8 && cm[2] == 9, "colmax_f64: %g %g %g", cm[0], cm[1],
        cm[2]);
  /* scalar parameters by value: scale_shift_f32(stream, in0, out0, p0, p1, n0) */
  CHECK(scale_shift_f32(s, x, o, -0.5f, 3.0f, N) == LOOM_OK, "scale_shift_f32: %s", loomrt_last_error(rt));
  bad = 0;
  for (int i = 0; i < N; i++) {
    volatile float t = x[i] * -0.5f;
    bad += o[i] != t + 3.0f;
  }
  CHECK(bad == 0, "scale_shift_f32: %d wrong", bad);
  loomrt_destroy(rt);
  if (check_failed) return 1;
  printf("loomrt_typed: the generated functions match their references\n");
  return 0;
}
