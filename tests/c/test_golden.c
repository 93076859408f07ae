/* SPDX-License-Identifier: Apache-2.0 */
/* test_golden.c: golden tests of the pass pipeline (graph text -> schedule text).
 *
 * Usage: test_golden DIR. Each .loom file of DIR holds a graph in ir_print_graph's text form (lines
 * starting with '#' before it are comments), then a line "# expect kernels: N", then a section
 * "# after lower" with the expected ir_print_schedule text. For each file: parse, run
 * pass_run_pipeline with C-contiguous outputs of the roots' shapes and dtypes, check the kernel
 * count (the primary check), then compare the schedule text with the section. With
 * LOOM_UPDATE_GOLDEN=1 the section is rewritten instead of compared (review the diff by hand).
 * Prints "N passed, N failed" and exits nonzero on any failure.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/passes.h"

#define MAX_ROOTS 64
#define EXPECT_TAG "# expect kernels:"
#define AFTER_TAG "# after lower\n"

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

/* Returns 1 on pass, 0 on failure (with a message on stderr). */
static int run_one(const char *path, bool update) {
  char *text = read_file(path);
  if (!text) {
    fprintf(stderr, "FAIL %s: cannot read\n", path);
    return 0;
  }
  int ok = 0;
  char *expect = strstr(text, EXPECT_TAG);
  if (!expect) {
    fprintf(stderr, "FAIL %s: no '%s' line\n", path, EXPECT_TAG);
    free(text);
    return 0;
  }
  int want = atoi(expect + strlen(EXPECT_TAG));
  char *after = strstr(expect, AFTER_TAG);
  char *expect_end = strchr(expect, '\n');
  size_t head_len = expect_end ? (size_t)(expect_end + 1 - text) : strlen(text);

  /* the graph: the text before the counts line, comment lines blanked */
  char *graph = malloc((size_t)(expect - text) + 1);
  if (!graph) {
    free(text);
    return 0;
  }
  memcpy(graph, text, (size_t)(expect - text));
  graph[expect - text] = 0;
  for (char *line = graph; line && *line;) {
    char *nl = strchr(line, '\n');
    if (*line == '#')
      for (char *c = line; c < (nl ? nl : line + strlen(line)); c++) *c = ' ';
    line = nl ? nl + 1 : NULL;
  }

  LoomContext ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.alloc = *ir_default_allocator();
  IrGraph g;
  Diag d;
  memset(&d, 0, sizeof d);
  Arena arena;
  arena_init(&arena, &ctx);
  StrBuf sb;
  sb_init(&sb, &ctx);
  int32_t roots[MAX_ROOTS], nroots = 0;
  LoomArray outs[MAX_ROOTS];
  if (ir_graph_init(&g, &ctx, &d) != LOOM_OK) {
    fprintf(stderr, "FAIL %s: %s\n", path, d.msg);
    goto done_nograph;
  }
  if (ir_parse_graph(&g, graph, &nroots, roots, MAX_ROOTS, &d) != LOOM_OK) {
    fprintf(stderr, "FAIL %s: parse: %s\n", path, d.msg);
    goto done;
  }
  memset(outs, 0, sizeof outs);
  for (int32_t i = 0; i < nroots; i++) {
    const IrNode *n = &g.nodes[roots[i]];
    outs[i].dtype = (LoomDType)n->dtype;
    outs[i].ndim = n->ndim;
    memcpy(outs[i].shape, n->shape, sizeof outs[i].shape);
    pass_contiguous_strides(n->ndim, n->shape, outs[i].strides);
  }
  IrModule m;
  memset(&m, 0, sizeof m);
  m.graph = &g;
  m.arena = &arena;
  m.nroots = nroots;
  m.roots = roots;
  m.outs = outs;
  if (pass_run_pipeline(&m, &d) != LOOM_OK) {
    fprintf(stderr, "FAIL %s: pipeline: %s: %s\n", path, loom_status_name(d.status), d.msg);
    goto done;
  }
  ir_print_schedule(m.schedule, &sb);
  char *got = sb_take(&sb);
  if (!got) {
    fprintf(stderr, "FAIL %s: out of memory printing\n", path);
    goto done;
  }
  if (m.schedule->nkernel != want) {
    fprintf(stderr, "FAIL %s: expected %d kernels, got %d:\n%s", path, want, m.schedule->nkernel, got);
  } else if (update) {
    FILE *f = fopen(path, "wb");
    if (f) {
      fwrite(text, 1, head_len, f);
      fputs(AFTER_TAG, f);
      fputs(got, f);
      fclose(f);
      ok = 1;
    } else {
      fprintf(stderr, "FAIL %s: cannot rewrite\n", path);
    }
  } else if (!after || after[strlen(AFTER_TAG)] == 0) {
    fprintf(stderr, "note %s: no '# after lower' section recorded (LOOM_UPDATE_GOLDEN=1 writes it)\n", path);
    ok = 1;
  } else if (strcmp(after + strlen(AFTER_TAG), got) != 0) {
    fprintf(stderr, "FAIL %s: schedule differs; expected:\n%s--- got:\n%s", path,
            after + strlen(AFTER_TAG), got);
  } else {
    ok = 1;
  }
  ctx_free(&ctx, got);
done:
  ir_graph_free(&g);
done_nograph:
  sb_free(&sb);
  arena_free_all(&arena);
  free(graph);
  free(text);
  return ok;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const char *env = getenv("LOOM_UPDATE_GOLDEN");
  bool update = env && strcmp(env, "1") == 0;
  size_t alen = strlen(argv[1]);
  if (alen > 5 && strcmp(argv[1] + alen - 5, ".loom") == 0) { /* one golden file */
    bool ok = run_one(argv[1], update);
    printf("%d passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
    return ok ? 0 : 1;
  }
  DIR *dir = opendir(argv[1]);
  if (!dir) {
    fprintf(stderr, "cannot open %s\n", argv[1]);
    return 2;
  }
  char *names[1024];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir)) && n < 1024) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".loom") == 0) names[n++] = strdup(e->d_name);
  }
  closedir(dir);
  qsort(names, (size_t)n, sizeof names[0], cmp_names);
  int passed = 0, failed = 0;
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
    if (run_one(path, update)) passed++;
    else failed++;
    free(names[i]);
  }
  if (n == 0) {
    fprintf(stderr, "no .loom files in %s\n", argv[1]);
    failed++;
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
