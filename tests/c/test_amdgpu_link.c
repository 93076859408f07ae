/* test_amdgpu_link.c: the AMD target's settings and tool chain without an AMD GPU: the chip table and
 * what target creation refuses; code object v4 beside v5; both ways of linking (comgr where it knows the
 * chip, ld.lld forced) giving code objects that pass the same structural checks (amdgpu_check.h: ELF,
 * descriptors, comgr's metadata equal to llvm-readelf's, registers and LDS within the chip's limits); a
 * dump target's assembly and kept code object; float32 division and square root lowered to LLVM's
 * correctly rounded sequences; RawModule code (LLVM IR for amdgcn with ocml and ockl
 * calls compiled for gfx90a, gfx942 and gfx1100; entries from the IR and from the code object's metadata,
 * hidden arguments after the explicit ones; bad IR refused). test_amdgpu.c checks the kernels themselves.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "amdgpu_check.h"
#include "ir/ir.h"
#include "passes/passes.h"

static int g_pass, g_fail;
#define CHECK(cond, ...) check_((cond), __FILE__, __LINE__, __VA_ARGS__)
static bool check_(bool ok, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool check_(bool ok, const char *file, int line, const char *fmt, ...) {
  if (ok) {
    g_pass++;
    return true;
  }
  g_fail++;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%d: FAIL: ", file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return false;
}

static LoomContext g_ctx;

static char *read_text(const char *path) {
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

/* Every structural check of one compiled kernel's code object (its entries: Loom's parameter block). */
static void check_co(const char *what, const char *chipname, int cov, const CgGpuKernel *gk, const char *linker) {
  CgAmdChip chip;
  cg_amdgpu_chip(chipname, &chip);
  char why[512] = "";
  int nk = 0;
  bool ok = amd_check_code_object(&g_ctx, gk->code, gk->code_size, &chip, cov, true, &nk, why, sizeof why);
  CHECK(ok && nk > 0, "%s (%s, linked by %s): %s", what, chipname, linker, why);
  printf("%s: %s, %d kernels, %zu bytes, linked by %s\n", what, chipname, nk, gk->code_size, linker);
}

static void test_chips(void) {
  CgAmdChip c;
  CHECK(cg_amdgpu_chip("gfx90a", &c) && c.wave == 64 && c.mach == 0x3f && c.isa_version == 9010, "gfx90a facts");
  CHECK(cg_amdgpu_chip("gfx942:sramecc+:xnack-", &c) && c.wave == 64 && c.mach == 0x4c && c.isa_version == 9402,
        "gfx942 with a HIP feature suffix");
  CHECK(cg_amdgpu_chip("gfx1100", &c) && c.wave == 32 && c.mach == 0x41 && c.isa_version == 11000, "gfx1100 facts");
  CHECK(!cg_amdgpu_chip("gfx9000", &c) && !cg_amdgpu_chip("gfx94", &c) && !cg_amdgpu_chip("", &c) &&
            !cg_amdgpu_chip(NULL, &c),
        "unknown chips");
  CgTarget *t = NULL;
  Diag d = {.status = LOOM_OK};
  CHECK(cg_amdgpu_target_create(&g_ctx, "gfx9000", 0, &t, &d) == LOOM_ERR_UNSUPPORTED && !t && strstr(d.msg, "gfx942"),
        "an unknown chip is refused, naming the known ones: %s", d.msg);
  d.status = LOOM_OK;
  CHECK(cg_amdgpu_target_create(&g_ctx, "gfx942", 3, &t, &d) == LOOM_ERR_INVALID_ARGUMENT && !t,
        "code object v3 is refused: %s", d.msg);
  CgAmdMeta meta;
  d.status = LOOM_OK;
  static const char junk[128] = "not a code object";
  CHECK(cg_amdgpu_read_metadata(&g_ctx, junk, sizeof junk, &meta, &d) == LOOM_ERR_INVALID_ARGUMENT,
        "metadata of junk: %s", d.msg);
}

/* Code object v4 beside v5, and both link paths for gfx90a (comgr knows it; ld.lld forced). */
/* float32 division and square root: LLVM's own fdiv / llvm.sqrt (no fast-math, no !fpmath) must lower to
 * the correctly rounded sequences (the host's IEEE results): the division through v_div_scale /
 * v_div_fmas / v_div_fixup, the square root through v_sqrt with the residual correction and its class test,
 * never a bare v_rcp or v_sqrt. On gfx942 and gfx1100, from a dump target's assembly. */
static void test_fdiv_sqrt(void) {
  static const char graph[] = "%0 = input 0 f32 [1000] strides [1]\n%1 = input 1 f32 [1000] strides [1]\n"
                              "%2 = truediv f32 [1000] %0 %1\n%3 = sqrt f32 [1000] %2\noutput %3\n";
  char *text = strdup(graph);
  IrGraph g;
  Diag d = {.status = LOOM_OK};
  Arena arena;
  arena_init(&arena, &g_ctx);
  int32_t roots[4], nroots = 0;
  LoomArray outs[4];
  memset(outs, 0, sizeof outs);
  ir_graph_init(&g, &g_ctx, &d);
  IrModule m;
  memset(&m, 0, sizeof m);
  if (CHECK(ir_parse_graph(&g, text, &nroots, roots, 4, &d) == LOOM_OK, "parse: %s", d.msg)) {
    const IrNode *n = &g.nodes[roots[0]];
    outs[0].dtype = (LoomDType)n->dtype;
    outs[0].ndim = n->ndim;
    memcpy(outs[0].shape, n->shape, sizeof outs[0].shape);
    pass_contiguous_strides(n->ndim, n->shape, outs[0].strides);
    m.graph = &g, m.arena = &arena, m.nroots = 1, m.roots = roots, m.outs = outs;
  }
  if (m.graph && CHECK(pass_run_pipeline(&m, &d) == LOOM_OK, "pipeline: %s", d.msg)) {
    static const char *const chips[2] = {"gfx942", "gfx1100"};
    for (int c = 0; c < 2; c++) {
      CgTarget *t = NULL;
      CgCompiled cc;
      if (!CHECK(cg_amdgpu_target_create(&g_ctx, chips[c], 0, &t, &d) == LOOM_OK, "%s: %s", chips[c], d.msg)) continue;
      cg_amdgpu_target_set_dump(t, NULL);
      if (CHECK(t->compile(t, m.schedule->kernels[0].ir, NULL, &cc, &d) == LOOM_OK, "compile: %s", d.msg)) {
        const char *a = cc.gpu->code;
        CHECK(strstr(a, "v_div_scale_f32") && strstr(a, "v_div_fmas_f32") && strstr(a, "v_div_fixup_f32") &&
                  strstr(a, "v_sqrt_f32") && strstr(a, "v_cmp_class_f32") && !strstr(a, "v_rsq_f32"),
              "%s: the correctly rounded division and square root", chips[c]);
        t->release(t, &cc);
      }
      t->destroy(t);
    }
  }
  ir_graph_free(&g);
  arena_free_all(&arena);
  free(text);
}

static void test_versions_and_linkers(void) {
  static const char graph[] = "%0 = input 0 f32 [64,300] strides [300,1]\n%1 = reduce sum f32 [64] %0 axes [1]\n"
                              "output %1\n";
  char *text = strdup(graph);
  IrGraph g;
  Diag d = {.status = LOOM_OK};
  Arena arena;
  arena_init(&arena, &g_ctx);
  int32_t roots[4], nroots = 0;
  LoomArray outs[4];
  memset(outs, 0, sizeof outs);
  ir_graph_init(&g, &g_ctx, &d);
  IrModule m;
  memset(&m, 0, sizeof m);
  if (!CHECK(ir_parse_graph(&g, text, &nroots, roots, 4, &d) == LOOM_OK, "parse: %s", d.msg)) goto done;
  const IrNode *n = &g.nodes[roots[0]];
  outs[0].dtype = (LoomDType)n->dtype;
  outs[0].ndim = n->ndim;
  memcpy(outs[0].shape, n->shape, sizeof outs[0].shape);
  pass_contiguous_strides(n->ndim, n->shape, outs[0].strides);
  m.graph = &g, m.arena = &arena, m.nroots = 1, m.roots = roots, m.outs = outs;
  if (!CHECK(pass_run_pipeline(&m, &d) == LOOM_OK, "pipeline: %s", d.msg)) goto done;
  const KernelIr *k = m.schedule->kernels[0].ir;
  static const char *const chips[2] = {"gfx90a", "gfx942"};
  for (int c = 0; c < 2; c++) {
    CgTarget *t = NULL;
    if (!CHECK(cg_amdgpu_target_create(&g_ctx, chips[c], 4, &t, &d) == LOOM_OK, "v4 target: %s", d.msg)) continue;
    CgCompiled cc;
    if (CHECK(t->compile(t, k, NULL, &cc, &d) == LOOM_OK, "v4 compile %s: %s", chips[c], d.msg)) {
      check_co("row sum, code object v4", chips[c], 4, cc.gpu, cg_amdgpu_linker(t, NULL));
      t->release(t, &cc);
    }
    t->destroy(t);
  }
  /* both linkers for gfx90a (comgr only when this comgr knows gfx90a) */
  char version[32], why[512];
  bool comgr = cg_amdgpu_comgr_available(version, sizeof version, why, sizeof why);
  printf("comgr: %s\n", comgr ? version : why);
  const char *paths[2] = {"lld", "comgr"};
  CgTarget *t90a = NULL;
  if (!CHECK(cg_amdgpu_target_create(&g_ctx, "gfx90a", 5, &t90a, &d) == LOOM_OK, "gfx90a: %s", d.msg)) goto done;
  for (int p = 0; p < (comgr ? 2 : 1); p++) {
    setenv("LOOM_AMDGPU_LINKER", paths[p], 1);
    CgCompiled cc;
    d.status = LOOM_OK;
    LoomStatus st = t90a->compile(t90a, k, NULL, &cc, &d);
    if (p == 1 && st == LOOM_ERR_UNSUPPORTED) { /* a comgr that does not know gfx90a */
      printf("comgr does not link gfx90a here: %s\n", d.msg);
      continue;
    }
    if (!CHECK(st == LOOM_OK, "LOOM_AMDGPU_LINKER=%s: %s", paths[p], d.msg)) continue;
    const char *used = cg_amdgpu_linker(t90a, NULL);
    CHECK(!strcmp(used, p == 0 ? "ld.lld" : "comgr"), "LOOM_AMDGPU_LINKER=%s used %s", paths[p], used);
    check_co("row sum, a forced linker", "gfx90a", 5, cc.gpu, used);
    t90a->release(t90a, &cc);
  }
  /* a dump target: the assembly text, and the code object kept in a folder */
  unsetenv("LOOM_AMDGPU_LINKER");
  char dir[] = "/tmp/loom_amd_dump_XXXXXX";
  CgTarget *dt = NULL;
  if (CHECK(mkdtemp(dir) && cg_amdgpu_target_create(&g_ctx, "gfx942", 0, &dt, &d) == LOOM_OK, "dump target: %s", d.msg)) {
    cg_amdgpu_target_set_dump(dt, dir);
    CgCompiled cc;
    if (CHECK(dt->compile(dt, k, NULL, &cc, &d) == LOOM_OK, "dump compile: %s", d.msg)) {
      const char *text = cc.gpu->code;
      CHECK(text && cc.gpu->code_size == strlen(text) && strstr(text, ".amdhsa_kernel ") &&
                strstr(text, "amdhsa.kernels") && strstr(text, "s_barrier") && strstr(text, "ds_bpermute_b32"),
            "dump text: %.200s", text ? text : "(null)");
      char cmd[300];
      snprintf(cmd, sizeof cmd, "ls %s/*.gfx942.co", dir);
      char *ls = amd_run(cmd);
      size_t n = 0;
      char *co = NULL;
      if (CHECK(ls && strstr(ls, ".gfx942.co"), "dump folder: %s", ls ? ls : "(empty)")) {
        ls[strcspn(ls, "\n")] = 0;
        co = read_text(ls);
        FILE *f = fopen(ls, "rb");
        if (f) {
          fseek(f, 0, SEEK_END);
          n = (size_t)ftell(f);
          fclose(f);
        }
        AmdElfFacts ef;
        CHECK(co && amd_elf_read(co, n, &ef) && ef.machine == EM_AMDGPU && (ef.flags & 0xffu) == 0x4c && ef.nkd > 0,
              "the dumped code object %s", ls);
        unlink(ls);
      }
      free(co);
      free(ls);
      dt->release(dt, &cc);
    }
    dt->destroy(dt);
    rmdir(dir);
  }
  setenv("LOOM_AMDGPU_LINKER", "bogus", 1);
  CgCompiled cc;
  d.status = LOOM_OK;
  CHECK(t90a->compile(t90a, k, NULL, &cc, &d) == LOOM_ERR_INVALID_ARGUMENT && strstr(d.msg, "comgr, lld"),
        "a bad LOOM_AMDGPU_LINKER is refused: %s", d.msg);
  unsetenv("LOOM_AMDGPU_LINKER");
  t90a->destroy(t90a);
done:
  ir_graph_free(&g);
  arena_free_all(&arena);
  free(text);
}

/* RawModule code: LLVM IR for amdgcn with ocml and ockl calls, and the entries of code objects. */
static const char raw_ir[] =
    "target triple = \"amdgcn-amd-amdhsa\"\n"
    "declare float @__ocml_exp_f32(float)\n"
    "declare i64 @__ockl_get_local_size(i32)\n"
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "define float @helper(float %x) {\n  %e = call float @__ocml_exp_f32(float %x)\n  ret float %e\n}\n"
    "define amdgpu_kernel void @vexp(ptr addrspace(1) %out, ptr addrspace(1) %in, i32 %n, float %scale) {\n"
    "entry:\n  %tid = call i32 @llvm.amdgcn.workitem.id.x()\n  %ls = call i64 @__ockl_get_local_size(i32 0)\n"
    "  %c = icmp slt i32 %tid, %n\n  br i1 %c, label %body, label %done\n"
    "body:\n  %p = getelementptr float, ptr addrspace(1) %in, i32 %tid\n  %v = load float, ptr addrspace(1) %p\n"
    "  %e = call float @helper(float %v)\n  %m = fmul float %e, %scale\n  %l = trunc i64 %ls to i32\n"
    "  %f = sitofp i32 %l to float\n  %r = fadd float %m, %f\n"
    "  %q = getelementptr float, ptr addrspace(1) %out, i32 %tid\n  store float %r, ptr addrspace(1) %q\n"
    "  br label %done\ndone:\n  ret void\n}\n"
    "define amdgpu_kernel void @fill(ptr addrspace(1) %out, i64 %v) {\n"
    "  store i64 %v, ptr addrspace(1) %out\n  ret void\n}\n";

static void test_raw(void) {
  static const char *const chips[] = {"gfx90a", "gfx942", "gfx1100"};
  for (int c = 0; c < 3; c++) {
    char *co = NULL;
    size_t size = 0;
    CgRawEntry *es = NULL;
    int32_t n = 0;
    Diag d = {.status = LOOM_OK};
    if (!CHECK(cg_amdgpu_compile_llvm(&g_ctx, raw_ir, strlen(raw_ir), false, chips[c], &co, &size, &es, &n, &d) == LOOM_OK,
               "raw IR for %s: %s", chips[c], d.msg))
      continue;
    CHECK(n == 2 && !strcmp(es[0].name, "vexp") && es[0].nparams == 4 && es[0].params[0].kind == CG_RAW_POINTER &&
              es[0].params[1].kind == CG_RAW_POINTER && es[0].params[2].kind == CG_RAW_INT && es[0].params[2].size == 4 &&
              es[0].params[3].kind == CG_RAW_FLOAT && es[0].params[3].size == 4 && !strcmp(es[1].name, "fill") &&
              es[1].nparams == 2 && es[1].params[1].kind == CG_RAW_INT && es[1].params[1].size == 8,
          "raw IR entries for %s", chips[c]);
    AmdElfFacts f;
    CgAmdChip chip;
    cg_amdgpu_chip(chips[c], &chip);
    CHECK(amd_elf_read(co, size, &f) && f.machine == EM_AMDGPU && (f.flags & 0xffu) == chip.mach && f.nundef == 0 &&
              f.nkd == 2 && amd_elf_has_kernel(co, size, "vexp") && amd_elf_has_kernel(co, size, "fill") &&
              !amd_elf_has_kernel(co, size, "helper"),
          "raw code object for %s: machine %u flags 0x%x, %d undefined (%s), %d descriptors", chips[c], f.machine, f.flags,
          f.nundef, f.undef, f.nkd);
    /* the entries again, from the code object's metadata: explicit arguments at their offsets, the
     * hidden ones (ockl's local size reads the implicit arguments in code object v5) after them */
    CgRawEntry *me = NULL;
    int32_t mn = 0;
    CgAmdMeta meta;
    if (CHECK(cg_amdgpu_code_object_entries(&g_ctx, co, size, &me, &mn, &d) == LOOM_OK &&
                  cg_amdgpu_read_metadata(&g_ctx, co, size, &meta, &d) == LOOM_OK,
              "raw code object metadata (%s): %s", chips[c], d.msg)) {
      const CgRawEntry *v = NULL;
      for (int32_t i = 0; i < mn; i++)
        if (!strcmp(me[i].name, "vexp")) v = &me[i];
      CHECK(mn == 2 && v && v->nparams == 4 && v->params[0].kind == CG_RAW_POINTER && v->params[1].kind == CG_RAW_POINTER &&
                v->params[2].kind == CG_RAW_ANY && v->params[2].size == 4 && v->params[3].size == 4,
            "entries from the metadata (%s)", chips[c]);
      for (int32_t i = 0; i < meta.nkernels; i++) {
        const CgAmdKernelMeta *k = &meta.kernels[i];
        if (strcmp(k->name, "vexp")) continue;
        int hidden = 0;
        for (int32_t j = 0; j < k->nargs; j++) hidden += !strncmp(k->args[j].kind, "hidden_", 7);
        CHECK(k->nargs >= 4 && k->args[0].offset == 0 && k->args[1].offset == 8 && k->args[2].offset == 16 &&
                  k->args[3].offset == 20 && !strcmp(k->args[0].kind, "global_buffer") && k->args[0].address_space == 1 &&
                  hidden > 0 && k->kernarg_size > 24,
              "vexp (%s): %d args, offsets %u %u %u %u, %d hidden, kernarg %u", chips[c], k->nargs,
              k->nargs > 0 ? k->args[0].offset : 0, k->nargs > 1 ? k->args[1].offset : 0,
              k->nargs > 2 ? k->args[2].offset : 0, k->nargs > 3 ? k->args[3].offset : 0, hidden, k->kernarg_size);
        printf("raw vexp (%s): kernarg %u bytes, %d hidden arguments\n", chips[c], k->kernarg_size, hidden);
      }
      cg_amdgpu_meta_free(&g_ctx, &meta);
    }
    cg_raw_entries_free(&g_ctx, me, mn);
    cg_raw_entries_free(&g_ctx, es, n);
    ctx_free(&g_ctx, co);
  }
  /* errors */
  static const char nv_ir[] = "target triple = \"nvptx64-nvidia-cuda\"\ndefine void @k() {\n  ret void\n}\n";
  static const char none_ir[] = "define void @k() {\n  ret void\n}\n";
  const char *bad[3] = {nv_ir, none_ir, "this is not LLVM IR"};
  const char *want[3] = {"nvptx64", "defines no kernel", "does not parse"};
  for (int i = 0; i < 3; i++) {
    char *co = NULL;
    size_t size = 0;
    CgRawEntry *es = NULL;
    int32_t n = 0;
    Diag d = {.status = LOOM_OK};
    CHECK(cg_amdgpu_compile_llvm(&g_ctx, bad[i], strlen(bad[i]), false, "gfx942", &co, &size, &es, &n, &d) ==
                  LOOM_ERR_INVALID_ARGUMENT && strstr(d.msg, want[i]) && !co && !es,
          "bad raw IR %d: %s", i, d.msg);
  }
  Diag d = {.status = LOOM_OK};
  CgRawEntry *es = NULL;
  int32_t n = 0;
  CHECK(cg_amdgpu_code_object_entries(&g_ctx, raw_ir, sizeof raw_ir, &es, &n, &d) == LOOM_ERR_INVALID_ARGUMENT && !es,
        "entries of text that is no code object: %s", d.msg);
}


int main(void) {
  g_ctx.alloc = *ir_default_allocator();
  CgTarget *t = NULL;
  Diag d = {.status = LOOM_OK};
  if (cg_amdgpu_target_create(&g_ctx, "gfx942", 0, &t, &d) != LOOM_OK) {
    printf("test_amdgpu_link: %s: skipped\n", d.msg);
    return 77;
  }
  t->destroy(t);
  char why[2048];
  if (!cg_amdgpu_toolchain_available(&g_ctx, why, sizeof why)) { /* a machine without ROCm's device libraries */
    printf("test_amdgpu_link: %s: skipped\n", why);
    return 77;
  }
  test_chips();
  test_fdiv_sqrt();
  test_versions_and_linkers();
  test_raw();
  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
