/* SPDX-License-Identifier: Apache-2.0 */
/* loomc: the ahead-of-time kernel bundler. Reads kernel IR text (what LOOM_DUMP=kernels and
 * loom_dump(LOOM_DUMP_KERNELS) print; ir/parse.c's format), compiles every kernel for every target and
 * writes one bundle (runtime/bundle.h), optionally with a C source/header pair that embeds it and
 * declares one typed function per kernel for libloomrt. Python functions (@loom.fuse, ElementwiseKernel,
 * ReductionKernel) are bundled by `python -m loom.aot`, which traces them and calls the same builder.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "loom/loom_aot.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: loomc [options] FILE.loom... -o BUNDLE\n"
          "       loomc --describe BUNDLE\n"
          "Compiles the kernels of kernel IR files into one bundle (load it with libloomrt or loom_bundle_load).\n"
          "  -o, --output BUNDLE    the bundle to write\n"
          "  -t, --target LIST      comma-separated: host (x86-64), host-avx2 (x86-64-v3), host-avx512 (x86-64-v4),\n"
          "                         host-all, sm_XX (cubin, needs ptxas), ptx (PTX for the newest sm, else sm_90),\n"
          "                         ptx_sm_XX, gfxNNN (an AMD code object, e.g. gfx942), all (every host level,\n"
          "                         sm_80 + sm_90 cubins with ptxas, PTX, gfx90a + gfx942 + gfx1100 with AMDGPU);\n"
          "                         default host-all\n"
          "  -j, --jobs N           parallel compiles (default: the number of CPUs)\n"
          "  -n, --name NAME        entry name for the kernels of the next FILE (NAME, or NAME_0, NAME_1, ...;\n"
          "                         default: the kernel names in the file)\n"
          "      --emit-c PATH      also write PATH.c and PATH.h (typed C functions over libloomrt)\n"
          "      --index W          32, 64 or both (default): index widths to compile\n"
          "      --no-sleef         scalar libm calls instead of SLEEF's vector math in host code\n"
          "      --ptxas PATH       ptxas to use for cubins\n"
          "      --progress, --no-progress   progress on stderr (default: when stderr is a terminal)\n"
          "  -q, --quiet            no summary table\n"
          "      --describe BUNDLE  print what a bundle holds and check every checksum\n"
          "  -h, --help, --version\n");
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *p = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  if (p) p[n] = 0;
  fclose(f);
  return p;
}

/* The C identifier of an --emit-c path's base name ("out/my-kernels" -> "my_kernels"). */
static void prefix_of(const char *path, char *buf, size_t cap) {
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  size_t n = 0;
  if (!((base[0] >= 'a' && base[0] <= 'z') || (base[0] >= 'A' && base[0] <= 'Z') || base[0] == '_')) buf[n++] = '_';
  for (; *base && n + 1 < cap && n < 60; base++) {
    char c = *base;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    buf[n++] = ok ? c : '_';
  }
  buf[n] = 0;
}

static int fail(LoomContext *ctx, const char *what) {
  fprintf(stderr, "loomc: %s%s%s\n", what, ctx ? ": " : "", ctx ? loom_last_error(ctx) : "");
  return 1;
}

int main(int argc, char **argv) {
  LoomBundleOptions opt = {.progress = -1, .summary = 1, .producer = "loomc"};
  const char *out = NULL, *emit = NULL, *describe = NULL;
  const char **inputs = calloc((size_t)argc + 1, sizeof *inputs), **names = calloc((size_t)argc + 1, sizeof *names);
  int ninput = 0;
  const char *next_name = NULL;
  if (!inputs || !names) return 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKE(opt_var)                                                  \
  do {                                                                 \
    if (!val) {                                                        \
      fprintf(stderr, "loomc: %s needs a value\n", a);                \
      return 2;                                                        \
    }                                                                  \
    opt_var = val;                                                     \
    i++;                                                               \
  } while (0)
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--version")) {
      printf("loomc (loom %s)\n", LOOM_VERSION_STRING);
      return 0;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) TAKE(out);
    else if (!strcmp(a, "-t") || !strcmp(a, "--target")) TAKE(opt.targets);
    else if (!strcmp(a, "-n") || !strcmp(a, "--name")) TAKE(next_name);
    else if (!strcmp(a, "--emit-c")) TAKE(emit);
    else if (!strcmp(a, "--ptxas")) TAKE(opt.ptxas);
    else if (!strcmp(a, "--describe")) TAKE(describe);
    else if (!strcmp(a, "-j") || !strcmp(a, "--jobs") || !strncmp(a, "-j", 2)) {
      const char *v = a[1] == 'j' && a[2] ? a + 2 : NULL;
      if (!v) TAKE(v);
      char *end;
      long j = strtol(v, &end, 10);
      if (*end || j < 1 || j > 256) {
        fprintf(stderr, "loomc: -j takes 1 to 256, not '%s'\n", v);
        return 2;
      }
      opt.jobs = (int32_t)j;
    } else if (!strcmp(a, "--index")) {
      const char *v;
      TAKE(v);
      opt.index_widths = !strcmp(v, "32") ? 1 : !strcmp(v, "64") ? 2 : !strcmp(v, "both") ? 3 : -1;
      if (opt.index_widths < 0) {
        fprintf(stderr, "loomc: --index takes 32, 64 or both\n");
        return 2;
      }
    } else if (!strcmp(a, "--no-sleef")) opt.no_sleef = 1;
    else if (!strcmp(a, "--progress")) opt.progress = 1;
    else if (!strcmp(a, "--no-progress")) opt.progress = 0;
    else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) opt.summary = 0;
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "loomc: unknown option %s\n", a);
      usage(stderr);
      return 2;
    } else {
      inputs[ninput] = a;
      names[ninput++] = next_name;
      next_name = NULL;
    }
#undef TAKE
  }
  LoomContext *ctx = NULL;
  if (loom_context_create(&ctx) != LOOM_OK) return fail(NULL, "cannot create a loom context");
  int rc = 0;
  if (describe) {
    char *text = NULL;
    if (loom_bundle_describe(ctx, describe, &text) != LOOM_OK) rc = fail(ctx, "describe");
    else fputs(text, stdout);
    loom_free_string(ctx, text);
    loom_context_destroy(ctx);
    free(inputs);
    free(names);
    return rc;
  }
  if (!out || ninput == 0) {
    usage(stderr);
    loom_context_destroy(ctx);
    free(inputs);
    free(names);
    return 2;
  }
  LoomBundleBuilder *b = NULL;
  if (loom_bundle_builder_create(ctx, &b) != LOOM_OK) rc = fail(ctx, "cannot create a bundle builder");
  for (int i = 0; rc == 0 && i < ninput; i++) {
    char *text = read_text(inputs[i]);
    if (!text) {
      fprintf(stderr, "loomc: cannot read %s\n", inputs[i]);
      rc = 1;
      break;
    }
    if (loom_bundle_builder_add_ir(b, text, names[i], inputs[i]) != LOOM_OK) rc = fail(ctx, "bad input");
    free(text);
  }
  if (rc == 0 && loom_bundle_builder_write(b, &opt, out) != LOOM_OK) rc = fail(ctx, "bundling failed");
  if (rc == 0 && emit) {
    char prefix[64];
    size_t n = strlen(emit) + 3;
    char *cp = malloc(n), *hp = malloc(n);
    prefix_of(emit, prefix, sizeof prefix);
    if (!cp || !hp) rc = 1;
    else {
      snprintf(cp, n, "%s.c", emit);
      snprintf(hp, n, "%s.h", emit);
      if (loom_bundle_emit_c(ctx, out, cp, hp, prefix) != LOOM_OK) rc = fail(ctx, "--emit-c failed");
      else if (opt.summary) fprintf(stderr, "loomc: wrote %s and %s (embedded bundle %s_bundle)\n", cp, hp, prefix);
    }
    free(cp);
    free(hp);
  }
  loom_bundle_builder_destroy(b);
  loom_context_destroy(ctx);
  free(inputs);
  free(names);
  return rc;
}
