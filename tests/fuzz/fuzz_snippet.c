/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_snippet.c: libFuzzer target for the snippet front end (frontend/snippet*.c, ir/snippet.c).
 *
 * Approach: the input is split at the first two 0x01 bytes into (params, preamble, operation); the
 * params part is used as both the in_params list (before a ';') and out_params (after it). Each piece
 * is compiled as an ElementwiseKernel with T bound to float32, and the operation alone also as a
 * ReductionKernel map/reduce/post expression, so every parser entry point sees random text. Any
 * crash, leak (ASan), UB (UBSan) or hang (libFuzzer's -timeout) is a bug; errors are fine. A
 * successful compile is printed and verified (the verifier must accept what the front end makes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/snippet.h"

static char *piece(const uint8_t *data, size_t n) {
  char *s = malloc(n + 1);
  if (!s) return NULL;
  memcpy(s, data, n);
  s[n] = 0;
  return s;
}

static void check_module(LoomContext *ctx, SnModule *m) {
  Diag d = {0};
  if (ir_snippet_verify(m, &d) != LOOM_OK) __builtin_trap();
  StrBuf b;
  sb_init(&b, ctx);
  ir_snippet_print(m, &b);
  sb_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  size_t cut[2] = {size, size};
  int nc = 0;
  for (size_t k = 0; k < size && nc < 2; k++)
    if (data[k] == 1) cut[nc++] = k;
  char *params = piece(data, cut[0]);
  char *pre = piece(data + (cut[0] < size ? cut[0] + 1 : size), cut[0] < size ? cut[1] - cut[0] - 1 : 0);
  char *op = piece(data + (cut[1] < size ? cut[1] + 1 : size), cut[1] < size ? size - cut[1] - 1 : 0);
  if (!params || !pre || !op) goto done;
  char *semi = strchr(params, ';');
  const char *outs = "float32 zz";
  if (semi) {
    *semi = 0;
    outs = semi + 1;
  }
  LoomContext ctx = {0};
  ctx.alloc = *ir_default_allocator();
  Arena a;
  arena_init(&a, &ctx);
  Diag d = {0};
  FeParamList in, out;
  const char *names[] = {"T", "U"};
  LoomDType dts[] = {LOOM_FLOAT32, LOOM_INT64};
  if (fe_parse_params(&a, "fz", "in_params", params, &in, &d) == LOOM_OK &&
      fe_parse_params(&a, "fz", "out_params", outs, &out, &d) == LOOM_OK) {
    SnModule *m = NULL;
    FeElementwiseSpec s = {"fz", in, out, op, pre, {2, names, dts}};
    if (fe_snippet_elementwise(&a, &s, &m, &d) == LOOM_OK) check_module(&ctx, m);
    d = (Diag){0};
    FeReductionSpec r = {"fz", in, out, op, "a + b", op, "0", NULL, pre, {2, names, dts}};
    if (fe_snippet_reduction(&a, &r, &m, &d) == LOOM_OK) check_module(&ctx, m);
  }
  /* the operation with fixed params, so random bodies get deep into the parser */
  d = (Diag){0};
  if (fe_parse_params(&a, "fz", "in_params", "float32 x, raw T y, int32 k", &in, &d) == LOOM_OK &&
      fe_parse_params(&a, "fz", "out_params", "float32 z, raw U w", &out, &d) == LOOM_OK) {
    SnModule *m = NULL;
    FeElementwiseSpec s = {"fz", in, out, op, pre, {2, names, dts}};
    if (fe_snippet_elementwise(&a, &s, &m, &d) == LOOM_OK) check_module(&ctx, m);
  }
  arena_free_all(&a);
done:
  free(params);
  free(pre);
  free(op);
  return 0;
}
