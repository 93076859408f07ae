/* SPDX-License-Identifier: Apache-2.0 */
/* test_dump_for.c: loom_dump_for (the GPU architecture of a dump) and LOOM_DUMP_TIME (compile times),
 * through the public C API, no GPU needed (issue 17):
 *  - LOOM_DUMP_TIME: one "# time NAME MS ms" line per pass of passes/pipeline.c's table and one
 *    "# time kernel NAME host MS ms" per kernel of LOOM_DUMP_KERNELS's schedule, with MS > 0; the GPU
 *    targets' lines, where this build has them, name the architecture asked for, and their phases add
 *    up to the total;
 *  - LOOM_DUMP_PTX for sm_80 says ".target sm_80"; LOOM_DUMP_AMDGPU for gfx1100 targets gfx1100;
 *  - an architecture Loom does not know is LOOM_ERR_INVALID_ARGUMENT with a message naming the form
 *    or the known chips; an unknown kind names LOOM_DUMP_TIME among the kinds.
 */
#include <stdlib.h>

#include "test_common.h"

static const char *const passes[] = {"fold", "onehot", "push_views", "fuse", "lower", "collapse"};

/* The schedule's kernel names, from LOOM_DUMP_KERNELS ("kernel NAME ..." at a line's start). */
static int kernel_names(const char *kir, char names[][64], int cap) {
  int n = 0;
  for (const char *p = kir; p && *p && n < cap; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (strncmp(p, "kernel ", 7) == 0) sscanf(p + 7, "%63s", names[n++]);
  return n;
}

/* The ms of the line that starts with `head` (-1 where there is none). */
static double line_ms(const char *text, const char *head) {
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    size_t n = strlen(head);
    double ms;
    if (strncmp(p, head, n) == 0 && sscanf(p + n, " %lf ms", &ms) == 1) return ms;
  }
  return -1;
}

/* A GPU target's time line of kernel `name` for `arch`: total > 0 and its 4 phases summing to it. Returns
 * false (checking nothing) where the text has no line for this target (this build lacks it). */
static bool gpu_line_right(const char *text, const char *name, const char *arch) {
  char head[160];
  snprintf(head, sizeof head, "# time kernel %s %s ", name, arch);
  const char *p = strstr(text, head);
  if (!p) return false;
  double total, ph[4];
  const char *paren = strchr(p, '(');
  int got = sscanf(p + strlen(head), "%lf ms", &total);
  int phases = paren ? sscanf(paren, "(%*s %lf %*s %lf %*s %lf %*s %*s %lf", &ph[0], &ph[1], &ph[2], &ph[3]) : 0;
  if (phases != 4) /* "code object" is two words, "ptx" one */
    phases = paren ? sscanf(paren, "(%*s %lf %*s %lf %*s %lf %*s %lf", &ph[0], &ph[1], &ph[2], &ph[3]) : 0;
  CHECK(got == 1 && total > 0, "%s: the total of %s's line is positive", arch, name);
  if (CHECK(phases == 4, "%s: four phases in %.80s", arch, p))
    CHECK(fabs(ph[0] + ph[1] + ph[2] + ph[3] - total) <= 0.004, "%s: the phases add up to %.3f", arch, total);
  return true;
}

int main(void) {
  if (!tc_init()) return 1;
  enum { N = 1000 };
  float *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; i++) x[i] = (float)i / N;
  LoomGraph *g = NULL;
  CHECK_OK(loom_graph_create(tc_ctx, &g));
  LoomArray in = {.data = x, .dtype = LOOM_FLOAT32, .ndim = 1, .shape = {N}, .strides = {1}};
  LoomNode a, sq, e, s, y;
  int32_t axis = 0;
  CHECK_OK(loom_input(g, &in, &a));
  CHECK_OK(loom_binary(g, LOOM_OP_MUL, a, a, &sq));
  CHECK_OK(loom_unary(g, LOOM_OP_EXP, sq, &e));
  CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, a, 1, &axis, 0, &s));
  CHECK_OK(loom_binary(g, LOOM_OP_ADD, e, s, &y));

  char *kir = NULL, *times = NULL, names[8][64];
  CHECK_OK(loom_dump(g, LOOM_DUMP_KERNELS, 1, &y, &kir));
  int nk = kernel_names(kir, names, 8);
  CHECK(nk >= 1, "the schedule has kernels");
  LoomDumpTargets t = {.ptx_arch = "sm_80", .amdgpu_chip = "gfx90a"};
  if (CHECK_OK(loom_dump_for(g, LOOM_DUMP_TIME, &t, 1, &y, &times))) {
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
      char head[64];
      snprintf(head, sizeof head, "# time %s", passes[i]);
      CHECK(line_ms(times, head) >= 0, "a time for pass %s", passes[i]);
    }
    for (int k = 0; k < nk; k++) {
      char head[600];
      snprintf(head, sizeof head, "# time kernel %s host", names[k]);
      CHECK(line_ms(times, head) > 0, "a positive host compile time for %s", names[k]);
      bool ptx = gpu_line_right(times, names[k], "sm_80"), amd = gpu_line_right(times, names[k], "gfx90a");
      printf("kernel %s: host %.3f ms%s%s\n", names[k], line_ms(times, head), ptx ? ", PTX" : "", amd ? ", AMDGPU" : "");
    }
    CHECK(strstr(times, "sm_90") == NULL && strstr(times, "gfx942") == NULL, "only the archs asked for");
  }
  loom_free_string(tc_ctx, times);
  loom_free_string(tc_ctx, kir);

  char *text = NULL;
  LoomStatus st = loom_dump_for(g, LOOM_DUMP_PTX, &t, 1, &y, &text);
  if (st == LOOM_OK) CHECK(strstr(text, ".target sm_80") && strstr(text, "(sm_80)"), "PTX for sm_80");
  else CHECK(st == LOOM_ERR_UNSUPPORTED, "PTX: OK or unsupported here: %s", loom_last_error(tc_ctx));
  loom_free_string(tc_ctx, text);
  t.amdgpu_chip = "gfx1100";
  st = loom_dump_for(g, LOOM_DUMP_AMDGPU, &t, 1, &y, &text);
  if (st == LOOM_OK)
    CHECK(strstr(text, "amdgcn-amd-amdhsa--gfx1100") && strstr(text, "(gfx1100,"), "AMDGPU assembly for gfx1100");
  else CHECK(st == LOOM_ERR_UNSUPPORTED, "AMDGPU: OK or unsupported here: %s", loom_last_error(tc_ctx));
  loom_free_string(tc_ctx, text);

  t = (LoomDumpTargets){.ptx_arch = "80"};
  if (loom_dump_for(g, LOOM_DUMP_PTX, &t, 1, &y, &text) != LOOM_ERR_UNSUPPORTED) /* a build without NVPTX */
    CHECK(strstr(loom_last_error(tc_ctx), "sm_<major><minor>") != NULL, "bad PTX arch: %s", loom_last_error(tc_ctx));
  CHECK(text == NULL, "no text on error");
  t = (LoomDumpTargets){.amdgpu_chip = "gfx999"};
  CHECK_STATUS(loom_dump_for(g, LOOM_DUMP_AMDGPU, &t, 1, &y, &text), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(tc_ctx), "gfx999") && strstr(loom_last_error(tc_ctx), "gfx942"),
        "bad chip: %s", loom_last_error(tc_ctx));
  CHECK_STATUS(loom_dump_for(g, (LoomDumpKind)99, NULL, 1, &y, &text), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(tc_ctx), "LOOM_DUMP_TIME") != NULL, "unknown kind: %s", loom_last_error(tc_ctx));
  loom_graph_destroy(g);
  free(x);
  return tc_finish();
}
