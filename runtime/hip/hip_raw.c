/* hip_raw.c: raw modules (RawModule / RawKernel, runtime/raw_kernel.c) on AMD devices: AMDGPU code objects
 * and LLVM IR for amdgcn (device.h's raw_* hooks).
 *
 * A code object keeps its bytes; its kernels and their explicit arguments come from its metadata (comgr:
 * codegen/amdgpu_raw.c) when the module is created, so arguments are checked without a GPU; it loads on a
 * device whose chip matches its e_flags (a mismatch is an error naming both chips). LLVM IR is compiled
 * when the module is created, for gfx942 or the chip an option names ("--offload-arch=gfx90a",
 * "-arch=gfx1100", "--gpu-architecture=gfx942"), and again, at its first launch there, for a device of
 * another chip (unless a chip was named). The runtime is touched only at the first load on a device: the
 * module loads its own HIP instance (rt_hip_load: the same libamdhip64 the AMD device uses, whose handles
 * it shares), as CUDA's raw modules do. Launches go through hipModuleLaunchKernel, which lays the
 * arguments out from the code object's metadata, on the given hipStream_t (NULL: the device's null
 * stream; a LoomStream's, the current stream or a foreign one).
 */
#include <stdio.h>
#include <string.h>

#include "codegen/codegen.h"
#include "runtime/hip/hip.h"
#include "runtime/hip/hip_rt.h"

#define RAW_MAX_DEVICES 64
#define RAW_DEFAULT_CHIP "gfx942"

typedef struct HipRawModule {
  LoomRawFormat format;
  char chip[32];  /* the chip `co` is for */
  bool chip_given;
  char *llvm;     /* LLVM IR (text or bitcode) to compile again for another chip */
  size_t llvm_size;
  char *co;       /* the code object */
  size_t co_size;
  RtHip *hip;    /* the module's own runtime instance, loaded at the first load on a device */
  void *mods[RAW_MAX_DEVICES];   /* hipModule_t per device */
  char *dev_co[RAW_MAX_DEVICES]; /* a code object compiled for device i's chip (LLVM IR) */
} HipRawModule;

static bool is_amdgpu_elf(const unsigned char *p, size_t n) {
  return n >= 64 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F' && (p[18] | p[19] << 8) == 224;
}

LoomRawFormat rt_amd_raw_sniff(const void *code, size_t size) {
  const unsigned char *p = code;
  if (is_amdgpu_elf(p, size)) return LOOM_RAW_HSACO;
  if (!cg_llvm_targets_amdgcn(code, size)) return LOOM_RAW_AUTO;
  bool bitcode = size >= 4 && ((p[0] == 'B' && p[1] == 'C') || (p[0] == 0xde && p[1] == 0xc0));
  return bitcode ? LOOM_RAW_LLVM_BITCODE : LOOM_RAW_LLVM_IR;
}

static const char *option_chip(const char *o) {
  static const char *const prefixes[] = {"--offload-arch=", "--gpu-architecture=", "-arch=", "--amdgpu-target=",
                                         "-mcpu="};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t k = strlen(prefixes[i]);
    if (!strncmp(o, prefixes[i], k)) return o + k;
  }
  return NULL;
}

void rt_amd_raw_destroy(LoomContext *ctx, RtRawModule *rm) {
  HipRawModule *m = (HipRawModule *)rm;
  if (!m) return;
  for (int i = 0; i < RAW_MAX_DEVICES; i++) {
    Diag d = {.status = LOOM_OK};
    if (m->mods[i]) { /* unloaded even if the device cannot be made current: nothing is left behind */
      rt_hip_set_device(m->hip, i, &d);
      rt_hip_module_unload(m->hip, i, m->mods[i]);
    }
    ctx_free(ctx, m->dev_co[i]);
  }
  rt_hip_unload(m->hip);
  ctx_free(ctx, m->llvm);
  ctx_free(ctx, m->co);
  ctx_free(ctx, m);
}

LoomStatus rt_amd_raw_create(LoomContext *ctx, const void *code, size_t size, LoomRawFormat format,
                             const char *const *options, int32_t noptions, RtRawModule **out, CgRawEntry **entries,
                             int32_t *nentries, Diag *d) {
  *out = NULL;
  *entries = NULL;
  *nentries = 0;
  HipRawModule *m = ctx_calloc(ctx, 1, sizeof *m);
  if (!m) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "loom_raw_module_create: out of memory");
  m->format = format;
  snprintf(m->chip, sizeof m->chip, "%s", RAW_DEFAULT_CHIP);
  LoomStatus st = LOOM_OK;
  for (int32_t i = 0; i < noptions && st == LOOM_OK; i++) {
    const char *c = options[i] ? option_chip(options[i]) : NULL;
    if (!c || strncmp(c, "gfx", 3)) continue; /* an sm_XX option is NVIDIA's */
    if (!cg_amdgpu_chip(c, NULL))
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: unknown AMD chip '%s' (Loom knows %s)", c,
                      cg_amdgpu_chip_names());
    snprintf(m->chip, sizeof m->chip, "%.*s", (int)strcspn(c, ":"), c);
    m->chip_given = true;
  }
  if (st == LOOM_OK && format == LOOM_RAW_HSACO) {
    m->co = ctx_alloc(ctx, size);
    if (!m->co) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
    else memcpy(m->co, code, size);
    m->co_size = size;
    if (st == LOOM_OK && !is_amdgpu_elf(code, size))
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: the code is not an AMDGPU code object (an ELF file "
                                                    "with e_machine EM_AMDGPU)");
    if (st == LOOM_OK) st = cg_amdgpu_code_object_entries(ctx, code, size, entries, nentries, d);
    if (st == LOOM_OK) { /* its chip, from e_flags */
      unsigned mach = ((const unsigned char *)code)[48] & 0xffu;
      m->chip[0] = 0;
      static const char *const names[] = {"gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx1030",
                                          "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201"};
      for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CgAmdChip c;
        if (cg_amdgpu_chip(names[i], &c) && c.mach == mach) snprintf(m->chip, sizeof m->chip, "%s", names[i]);
      }
      if (!m->chip[0]) snprintf(m->chip, sizeof m->chip, "mach 0x%02x", mach);
    }
  } else if (st == LOOM_OK) { /* LLVM IR, text or bitcode */
    if (format == LOOM_RAW_LLVM_IR) size = strnlen(code, size); /* a trailing NUL is fine */
    m->llvm = ctx_alloc(ctx, size);
    if (!m->llvm) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
    else memcpy(m->llvm, code, size);
    m->llvm_size = size;
    if (st == LOOM_OK)
      st = cg_amdgpu_compile_llvm(ctx, m->llvm, size, format == LOOM_RAW_LLVM_BITCODE, m->chip, &m->co, &m->co_size,
                                  entries, nentries, d);
  }
  if (st != LOOM_OK) {
    if (*nentries > 0) cg_raw_entries_free(ctx, *entries, *nentries);
    *entries = NULL;
    *nentries = 0;
    rt_amd_raw_destroy(ctx, (RtRawModule *)m);
    return st;
  }
  *out = (RtRawModule *)m;
  return LOOM_OK;
}

const char *rt_amd_raw_text(const RtRawModule *m) {
  (void)m;
  return NULL; /* code objects are binaries */
}

LoomStatus rt_amd_raw_load(LoomContext *ctx, RtRawModule *rm, int device, const char *name, void **fn,
                           CgRawParam **params, int32_t *nparams, Diag *d) {
  HipRawModule *m = (HipRawModule *)rm;
  (void)params; /* the parameters are known from the IR or the metadata already */
  (void)nparams;
  if (device < 0 || device >= RAW_MAX_DEVICES)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "AMD device %d is out of range", device);
  LoomStatus st = LOOM_OK;
  if (!m->hip && (st = rt_hip_load(ctx, &m->hip, d)) != LOOM_OK) {
    m->hip = NULL;
    return st;
  }
  if (!m->mods[device]) {
    RtGpuDeviceInfo info;
    st = rt_hip_device_info(m->hip, device, &info, d); /* makes the device current */
    if (st != LOOM_OK) return st;
    const char *co = m->co;
    size_t co_size = m->co_size;
    char devchip[32];
    snprintf(devchip, sizeof devchip, "%.*s", (int)strcspn(info.arch, ":"), info.arch);
    if (strcmp(devchip, m->chip)) {
      if (!m->llvm || m->chip_given)
        return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: the code object is for %s; AMD device %d is a %s",
                          m->chip, device, devchip);
      CgRawEntry *es = NULL; /* LLVM IR: compiled again for this device's chip */
      int32_t n = 0;
      st = cg_amdgpu_compile_llvm(ctx, m->llvm, m->llvm_size, m->format == LOOM_RAW_LLVM_BITCODE, devchip,
                                  &m->dev_co[device], &co_size, &es, &n, d);
      cg_raw_entries_free(ctx, es, n);
      if (st != LOOM_OK) return st;
      co = m->dev_co[device];
    }
    st = rt_hip_module_load(m->hip, device, co, co_size, &m->mods[device], d);
    if (st != LOOM_OK) {
      m->mods[device] = NULL;
      return st;
    }
  } else if ((st = rt_hip_set_device(m->hip, device, d)) != LOOM_OK) {
    return st;
  }
  return rt_hip_module_function(m->hip, device, m->mods[device], name, fn, d);
}

LoomStatus rt_amd_raw_launch(LoomContext *ctx, RtRawModule *rm, void *fn, int device, const uint32_t grid[3],
                             const uint32_t block[3], uint32_t shared_mem, void *stream, void **params, const char *name,
                             Diag *d) {
  (void)ctx;
  HipRawModule *m = (HipRawModule *)rm;
  if (!m->hip) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: raw kernel '%s' launched before it was loaded", name);
  LoomStatus st = rt_hip_set_device(m->hip, device, d);
  if (st == LOOM_OK) st = rt_hip_launch(m->hip, device, fn, grid, block, shared_mem, stream, params, d);
  if (st != LOOM_OK)
    diag_error(d, st, "launching '%s' on AMD device %d (grid %u,%u,%u block %u,%u,%u, %u bytes of dynamic LDS) failed",
               name, device, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_mem);
  return st;
}
