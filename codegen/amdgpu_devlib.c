/* amdgpu_devlib.c: ROCm's device libraries (ocml: math; ockl: kernel helpers that raw LLVM IR may call)
 * linked into AMD modules lazily, the way nvptx.c links libdevice.
 *
 * The bitcode is found in $LOOM_ROCM_DEVICE_LIBS, else $ROCM_PATH/amdgcn/bitcode, /opt/rocm/amdgcn/bitcode,
 * /opt/rocm/lib/llvm/lib/clang/<version>/lib/amdgcn/bitcode (ROCm 6.3+), Debian's
 * /usr/lib/<multiarch>/amdgcn/bitcode (package rocm-device-libs), and read once. A module that calls
 * __ocml_* / __ockl_* functions gets them through a LAZY parse of the library (only the functions
 * referenced, and what they call, are materialized: every definition is linkonce_odr); the linked set
 * is kept as bitcode per set of names, so the next kernel with the same calls parses a few kilobytes.
 *
 * The libraries read control constants (__oclc_ISA_version, __oclc_wavefrontsize64, __oclc_ABI_version,
 * __oclc_daz_opt, __oclc_finite_only_opt, __oclc_unsafe_math_opt, __oclc_correctly_rounded_sqrt32),
 * which clang links in from oclc_*.bc files. Loom defines them in the module instead, as the same
 * address space 4 constants, from the chip's facts: Debian's package has no oclc_isa_version file for
 * gfx942 or gfx1100 (it predates them), and a constant needs no file. Values: the chip's ISA version
 * and wave size, the code object's ABI version (400 / 500), denormals kept (daz 0: NumPy's results),
 * no finite-only or unsafe math, correctly rounded float32 sqrt. After inlining they fold away.
 * A constant the library reads that Loom does not know is an error that names it.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Linker.h>

#include "codegen/amdgpu.h"

#define AMD_LDSETS 64 /* function sets kept as bitcode */

enum { LIB_OCML = 0, LIB_OCKL = 1, NLIB = 2 };
static const char *const lib_file[NLIB] = {"ocml.bc", "ockl.bc"};
static const char *const lib_prefix[NLIB] = {AMD_OCML_PREFIX, AMD_OCKL_PREFIX};

struct AmdDevLibs {
  LoomContext *ctx;
  char dir[1024];
  char *bytes[NLIB];
  size_t size[NLIB];
  struct {
    char *names; /* sorted, '\n'-separated */
    char *bc;
    size_t size;
  } sets[AMD_LDSETS];
  int nsets, next;
};

AmdDevLibs *cg_amd_devlibs_new(LoomContext *ctx) {
  AmdDevLibs *dl = ctx_calloc(ctx, 1, sizeof *dl);
  if (dl) dl->ctx = ctx;
  return dl;
}

void cg_amd_devlibs_free(AmdDevLibs *dl) {
  if (!dl) return;
  for (int i = 0; i < NLIB; i++) ctx_free(dl->ctx, dl->bytes[i]);
  for (int i = 0; i < dl->nsets; i++) {
    ctx_free(dl->ctx, dl->sets[i].names);
    ctx_free(dl->ctx, dl->sets[i].bc);
  }
  ctx_free(dl->ctx, dl);
}

const char *cg_amd_devlibs_dir(const AmdDevLibs *dl) { return dl ? dl->dir : ""; }

static bool has_ocml(const char *dir) {
  char path[1200];
  snprintf(path, sizeof path, "%s/ocml.bc", dir);
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

/* Appends dir to tried; true (and dl->dir set) when it holds ocml.bc. */
static bool try_dir(AmdDevLibs *dl, const char *dir, char *tried, size_t cap) {
  if (!dir || !*dir) return false;
  if (has_ocml(dir)) {
    snprintf(dl->dir, sizeof dl->dir, "%s", dir);
    return true;
  }
  size_t tl = strlen(tried);
  if (tl + strlen(dir) + 3 < cap) snprintf(tried + tl, cap - tl, "%s%s", tl ? ", " : "", dir);
  return false;
}

/* Tries <root>/<entry>/<tail> for every entry of root (clang's versioned folders, multiarch folders). */
static bool try_subdirs(AmdDevLibs *dl, const char *root, const char *tail, char *tried, size_t cap) {
  DIR *dir = opendir(root);
  if (!dir) return false;
  bool found = false;
  for (struct dirent *e; !found && (e = readdir(dir));) {
    if (e->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", root, e->d_name, tail);
    found = has_ocml(path) && try_dir(dl, path, tried, cap);
  }
  closedir(dir);
  if (!found) {
    size_t tl = strlen(tried);
    if (tl + strlen(root) + strlen(tail) + 8 < cap) snprintf(tried + tl, cap - tl, "%s%s/*/%s", tl ? ", " : "", root, tail);
  }
  return found;
}

static LoomStatus find_dir(AmdDevLibs *dl, Diag *d) {
  if (dl->dir[0]) return LOOM_OK;
  char tried[2048] = "", buf[1024];
  const char *env = getenv("LOOM_ROCM_DEVICE_LIBS");
  if (env && *env) {
    if (try_dir(dl, env, tried, sizeof tried)) return LOOM_OK;
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "LOOM_ROCM_DEVICE_LIBS=%s holds no ocml.bc: point it at the folder of "
                      "ROCm's device library bitcode (ocml.bc, ockl.bc)", env);
  }
  const char *rocm = getenv("ROCM_PATH");
  if (rocm && *rocm) {
    snprintf(buf, sizeof buf, "%s/amdgcn/bitcode", rocm);
    if (try_dir(dl, buf, tried, sizeof tried)) return LOOM_OK;
  }
  if (try_dir(dl, "/opt/rocm/amdgcn/bitcode", tried, sizeof tried) ||
      try_subdirs(dl, "/opt/rocm/lib/llvm/lib/clang", "lib/amdgcn/bitcode", tried, sizeof tried) ||
      try_subdirs(dl, "/usr/lib", "amdgcn/bitcode", tried, sizeof tried) ||
      try_dir(dl, "/usr/lib/amdgcn/bitcode", tried, sizeof tried))
    return LOOM_OK;
  return diag_error(d, LOOM_ERR_UNSUPPORTED,
                    "ROCm device libraries (ocml.bc) not found (tried %s): install rocm-device-libs (Debian) or ROCm, "
                    "or set LOOM_ROCM_DEVICE_LIBS to the folder holding ocml.bc", tried);
}

LoomStatus cg_amd_devlibs_locate(AmdDevLibs *dl, Diag *d) { return find_dir(dl, d); }

static LoomStatus read_lib(AmdDevLibs *dl, int lib, Diag *d) {
  if (dl->bytes[lib]) return LOOM_OK;
  LoomStatus st = find_dir(dl, d);
  if (st != LOOM_OK) return st;
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dl->dir, lib_file[lib]);
  FILE *f = fopen(path, "rb");
  if (!f) return diag_error(d, LOOM_ERR_UNSUPPORTED, "ROCm device library %s not found", path);
  long len = -1;
  if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
  char *b = len > 0 && fseek(f, 0, SEEK_SET) == 0 ? ctx_alloc(dl->ctx, (size_t)len) : NULL;
  bool ok = b && fread(b, 1, (size_t)len, f) == (size_t)len;
  fclose(f);
  if (!ok) {
    ctx_free(dl->ctx, b);
    return diag_error(d, LOOM_ERR_BACKEND, "cannot read the ROCm device library %s", path);
  }
  dl->bytes[lib] = b;
  dl->size[lib] = (size_t)len;
  return LOOM_OK;
}

/* Which library declaration f belongs to (-1: none). */
static int lib_of(LLVMValueRef f) {
  size_t n = 0;
  const char *name = LLVMGetValueName2(f, &n);
  if (!LLVMIsDeclaration(f) || n <= 7) return -1;
  for (int l = 0; l < NLIB; l++)
    if (!strncmp(name, lib_prefix[l], 7)) return l;
  return -1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* The sorted names of the library functions mod declares ('\n'-separated; NULL when none, *oom on
 * failure) and which libraries they come from (bits). */
static char *lib_names(LoomContext *ctx, LLVMModuleRef mod, unsigned *libs, bool *oom) {
  const char *names[512];
  int n = 0;
  size_t len = 0;
  *oom = false;
  *libs = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f && n < 512; f = LLVMGetNextFunction(f)) {
    int l = lib_of(f);
    if (l < 0) continue;
    size_t k = 0;
    names[n++] = LLVMGetValueName2(f, &k);
    len += k + 1;
    *libs |= 1u << l;
  }
  if (!n) return NULL;
  qsort(names, (size_t)n, sizeof names[0], cmp_str);
  char *out = ctx_alloc(ctx, len + 1), *p = out;
  if (!out) {
    *oom = true;
    return NULL;
  }
  for (int i = 0; i < n; i++) p += sprintf(p, "%s\n", names[i]);
  return out;
}

/* A module holding the library functions mod declares and what they call (lazy parses of the
 * libraries in `libs`), in context c. */
static LoomStatus build_part(AmdDevLibs *dl, LLVMContextRef c, LLVMModuleRef mod, unsigned libs, LLVMModuleRef *out,
                             Diag *d) {
  LLVMModuleRef part = LLVMModuleCreateWithNameInContext("rocm device libs part", c);
  LLVMSetTarget(part, AMDGPU_TRIPLE);
  LLVMSetDataLayout(part, LLVMGetDataLayoutStr(mod));
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    size_t k = 0;
    if (lib_of(f) >= 0) LLVMAddFunction(part, LLVMGetValueName2(f, &k), LLVMGlobalGetValueType(f));
  }
  for (int l = 0; l < NLIB; l++) {
    if (!(libs & (1u << l))) continue;
    LoomStatus st = read_lib(dl, l, d);
    if (st != LOOM_OK) {
      LLVMDisposeModule(part);
      return st;
    }
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange(dl->bytes[l], dl->size[l], lib_file[l], 0);
    LLVMModuleRef lib = NULL;
    if (LLVMGetBitcodeModuleInContext2(c, mb, &lib)) { /* the lazy module owns mb on success */
      LLVMDisposeMemoryBuffer(mb);
      LLVMDisposeModule(part);
      return diag_error(d, LOOM_ERR_BACKEND, "cannot parse the ROCm device library %s/%s (bitcode of a newer "
                        "LLVM than Loom's?): set LOOM_ROCM_DEVICE_LIBS to device libraries built by LLVM 19 or older",
                        dl->dir, lib_file[l]);
    }
    LLVMSetTarget(lib, AMDGPU_TRIPLE);
    LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(mod));
    for (LLVMValueRef f = LLVMGetFirstFunction(lib); f; f = LLVMGetNextFunction(f))
      if (LLVMGetLinkage(f) == LLVMExternalLinkage && !LLVMIsDeclaration(f)) LLVMSetLinkage(f, LLVMLinkOnceODRLinkage);
    if (LLVMLinkModules2(part, lib)) { /* destroys lib */
      LLVMDisposeModule(part);
      return diag_error(d, LOOM_ERR_BACKEND, "linking the ROCm device library %s/%s failed", dl->dir, lib_file[l]);
    }
  }
  *out = part;
  return LOOM_OK;
}

/* Defines the __oclc_* constants mod declares; an unknown one is an error. */
static LoomStatus define_controls(LLVMModuleRef mod, const CgAmdChip *chip, int cov, Diag *d) {
  static const char *const names[] = {"__oclc_ISA_version",    "__oclc_wavefrontsize64", "__oclc_ABI_version",
                                      "__oclc_daz_opt",        "__oclc_finite_only_opt", "__oclc_unsafe_math_opt",
                                      "__oclc_correctly_rounded_sqrt32"};
  const long long values[] = {chip->isa_version, chip->wave == 64, cov * 100, 0, 0, 0, 1};
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g)) {
    size_t n = 0;
    const char *name = LLVMGetValueName2(g, &n);
    if (n < 7 || strncmp(name, "__oclc_", 7) || !LLVMIsDeclaration(g)) continue;
    int which = -1;
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]) && which < 0; i++)
      if (!strcmp(name, names[i])) which = i;
    LLVMTypeRef t = LLVMGlobalGetValueType(g);
    if (which < 0 || LLVMGetTypeKind(t) != LLVMIntegerTypeKind)
      return diag_error(d, LOOM_ERR_UNSUPPORTED, "the ROCm device libraries read %s, a control constant Loom does not "
                        "define (newer device libraries?): set LOOM_ROCM_DEVICE_LIBS to another version", name);
    LLVMSetInitializer(g, LLVMConstInt(t, (unsigned long long)values[which], 0));
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMInternalLinkage);
  }
  return LOOM_OK;
}

LoomStatus cg_amd_devlibs_link(AmdDevLibs *dl, LLVMContextRef c, LLVMModuleRef mod, const CgAmdChip *chip, int cov,
                               Diag *d) {
  bool oom = false;
  unsigned libs = 0;
  char *names = lib_names(dl->ctx, mod, &libs, &oom);
  if (!names) {
    if (oom) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory linking the ROCm device libraries");
    return define_controls(mod, chip, cov, d); /* raw IR may read them directly */
  }
  LLVMModuleRef part = NULL;
  for (int i = 0; i < dl->nsets && !part; i++) {
    if (strcmp(dl->sets[i].names, names)) continue;
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange(dl->sets[i].bc, dl->sets[i].size, "part", 0);
    if (LLVMParseBitcodeInContext2(c, mb, &part)) part = NULL; /* rebuilt below */
    LLVMDisposeMemoryBuffer(mb);
  }
  if (!part) {
    LoomStatus st = build_part(dl, c, mod, libs, &part, d);
    if (st != LOOM_OK) {
      ctx_free(dl->ctx, names);
      return st;
    }
    LLVMMemoryBufferRef buf = LLVMWriteBitcodeToMemoryBuffer(part);
    char *bc = buf ? ctx_alloc(dl->ctx, LLVMGetBufferSize(buf)) : NULL;
    if (bc) { /* keep it (the oldest set makes room); without memory the next kernel parses again */
      memcpy(bc, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
      int slot = dl->nsets < AMD_LDSETS ? dl->nsets++ : dl->next++ % AMD_LDSETS;
      ctx_free(dl->ctx, dl->sets[slot].names);
      ctx_free(dl->ctx, dl->sets[slot].bc);
      dl->sets[slot].names = names;
      dl->sets[slot].bc = bc;
      dl->sets[slot].size = LLVMGetBufferSize(buf);
      names = NULL;
    }
    if (buf) LLVMDisposeMemoryBuffer(buf);
  }
  ctx_free(dl->ctx, names);
  if (LLVMLinkModules2(mod, part)) /* destroys part */
    return diag_error(d, LOOM_ERR_BACKEND, "linking the ROCm device libraries (%s) failed", dl->dir);
  return define_controls(mod, chip, cov, d);
}
