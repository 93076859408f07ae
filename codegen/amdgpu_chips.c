/* SPDX-License-Identifier: Apache-2.0 */
/* amdgpu_chips.c: the AMD chips Loom knows (codegen.h: cg_amdgpu_chip), with what the lowering and the
 * code object checks need per chip: wave size (64 on gfx9, 32 on gfx10+: the block reductions shuffle
 * across the chip's own wave), ISA version (ocml's __oclc_ISA_version), e_flags mach, and register / LDS
 * budgets (register file per SIMD, waves of a workgroup spread over 4 SIMDs of a CU or WGP). No LLVM here:
 * the HIP runtime layer (runtime/hip/hip.c) reads a device's wave from it, in libloom and in libloomrt.
 */
#include <string.h>

#include "codegen/codegen.h"

/* ---- chips ---------------------------------------------------------------------------------------------- */
/* name, mach, wave, ISA version, SIMDs, VGPR file per SIMD lane, VGPRs per wave, SGPRs per wave, LDS.
 * gfx90a / gfx94x: 512 unified VGPRs (arch + acc) per SIMD lane; gfx908: 256 arch (+ 256 acc apart);
 * gfx1100/1101/1200/1201: 1536 per SIMD lane (192 KiB), gfx1030/1102: 1024; LDS 64 KiB per workgroup;
 * fast float64: gfx90a / gfx94x (full-rate FP64; gfx908's is 1/2 of FP32 but kept off: untested). */
static const CgAmdChip chips[] = {
    {"gfx908", 0x030, 64, 9008, 4, 256, 256, 108, 65536, false},   {"gfx90a", 0x03f, 64, 9010, 4, 512, 512, 108, 65536, true},
    {"gfx940", 0x040, 64, 9400, 4, 512, 512, 108, 65536, true},   {"gfx941", 0x04b, 64, 9401, 4, 512, 512, 108, 65536, true},
    {"gfx942", 0x04c, 64, 9402, 4, 512, 512, 108, 65536, true},   {"gfx1030", 0x036, 32, 10300, 4, 1024, 256, 108, 65536, false},
    {"gfx1100", 0x041, 32, 11000, 4, 1536, 256, 108, 65536, false}, {"gfx1101", 0x046, 32, 11001, 4, 1536, 256, 108, 65536, false},
    {"gfx1102", 0x047, 32, 11002, 4, 1024, 256, 108, 65536, false}, {"gfx1200", 0x048, 32, 12000, 4, 1536, 256, 108, 65536, false},
    {"gfx1201", 0x04e, 32, 12001, 4, 1536, 256, 108, 65536, false},
};

bool cg_amdgpu_chip(const char *gfx, CgAmdChip *out) {
  if (!gfx) return false;
  size_t n = strcspn(gfx, ":");
  for (size_t i = 0; i < sizeof chips / sizeof chips[0]; i++)
    if (strlen(chips[i].name) == n && !strncmp(chips[i].name, gfx, n)) {
      if (out) *out = chips[i];
      return true;
    }
  return false;
}

const char *cg_amdgpu_chip_names(void) {
  return "gfx908, gfx90a, gfx940, gfx941, gfx942, gfx1030, gfx1100, gfx1101, gfx1102, gfx1200, gfx1201";
}
