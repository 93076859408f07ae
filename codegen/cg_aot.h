/* SPDX-License-Identifier: Apache-2.0 */
/* cg_aot.h: ahead-of-time host code for bundles (codegen/host_object.c). No LLVM type appears here, so
 * the runtime's loader (runtime/bundle_hostimg.c, also in libloomrt) includes it for the image layout.
 *
 * A host image is a kernel compiled to x86-64 machine code for one psABI level and linked, at build
 * time, into one position-independent block: every PC-relative reference is resolved, calls to other
 * libraries go through stubs and a GOT inside the block, and the loader only writes 64-bit addresses
 * (an import's, or the block's base plus an offset). Layout of the blob (little-endian):
 *   header (CG_HOST_IMAGE_HEADER bytes): u32 magic "LHI1", u32 version, u32 text size, u32 rodata size,
 *     u32 data size, u32 bss size, u32 imports, u32 relocations, u32 string table size, u32 0
 *   imports: u32 name offset into the string table, per import
 *   relocations: CG_HOST_RELOC bytes each: u32 image offset, u32 import index (CG_RELOC_BASE: the image
 *     base), i64 addend; the loader writes the 64-bit (address + addend) at the offset
 *   string table (NUL-terminated names), then the text, rodata and data bytes
 * In memory the text starts at 0 (read-execute), rodata (with the GOT) at the next page boundary
 * (read-only), data and bss at the next one after that (read-write); pages are CG_HOST_PAGE bytes.
 */
#ifndef LOOM_CG_AOT_H
#define LOOM_CG_AOT_H

#include "ir/ir.h"

#define CG_HOST_IMAGE_MAGIC 0x3149484cu /* "LHI1" */
enum { CG_HOST_IMAGE_VERSION = 1, CG_HOST_IMAGE_HEADER = 40, CG_HOST_RELOC = 16 };
#define CG_HOST_PAGE 4096u
#define CG_RELOC_BASE 0xffffffffu
#define CG_HOST_NO_SYMBOL 0xffffffffu
#define CG_HOST_IMAGE_MAX (1u << 30)

static inline uint32_t cg_align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

/* The image offsets of a host image's regions, from its header sizes (both sides use this). */
typedef struct CgHostLayout {
  uint32_t ro_start, data_start, image_size;
} CgHostLayout;
static inline CgHostLayout cg_host_layout(uint32_t text, uint32_t ro, uint32_t data, uint32_t bss) {
  CgHostLayout l;
  l.ro_start = cg_align_up(text, CG_HOST_PAGE);
  l.data_start = cg_align_up(l.ro_start + ro, CG_HOST_PAGE);
  l.image_size = cg_align_up(l.data_start + data + bss, CG_HOST_PAGE);
  return l;
}

/* "19.1.7": the LLVM this build compiles with (recorded in bundles). */
const char *cg_llvm_version(char *buf, size_t cap);

/* Compiles host images for bundles. Thread-safe: compiles may run at the same time on several threads. */
typedef struct CgHostAot CgHostAot;
/* sleef: let the vectorizer call SLEEF's vector functions (dlopen'ed here only to see which exist;
 * the loader needs the same libsleefgnuabi.so.3 at run time); else scalar libm calls. */
LoomStatus cg_host_aot_create(LoomContext *ctx, bool sleef, CgHostAot **out, Diag *d);
void cg_host_aot_destroy(CgHostAot *a);
/* "LLVM 19.1.7 x86_64 x86-64-v3 sleef" for level 1, 3 or 4 (x86-64, x86-64-v3, x86-64-v4). */
const char *cg_host_aot_describe(CgHostAot *a, int level, char *buf, size_t cap);

typedef struct CgHostImage {
  uint8_t *bytes; /* the blob, ctx_alloc'ed */
  size_t size;
  uint32_t run, partial, finish; /* text offsets of the entry points (CG_HOST_NO_SYMBOL: absent) */
  uint32_t colpart, colfinish;    /* the column split's (absent unless col_phases) */
  uint32_t col_phases;            /* CgCompiled.col_phases */
  int32_t acc_size;
  double ms; /* compile time */
} CgHostImage;
/* Lowers k (the shared host lowering, codegen/lower.c), optimizes it at O3 for the level's CPU,
 * emits an ELF object and links it into a host image. */
LoomStatus cg_host_aot_compile(CgHostAot *a, const KernelIr *k, int level, CgHostImage *out, Diag *d);

/* The CPU a host image is made for: an LLVM CPU name and feature string, the "prefer-vector-width"
 * ("" : LLVM's choice) and SLEEF's vector ISA letters usable there, best first ("" : scalar math). */
typedef struct CgHostCpu {
  const char *cpu, *features, *vector_bits, *isas;
} CgHostCpu;
/* cg_host_aot_compile for an explicit CPU: the host JIT's own (cg_host_target_cpu) gives an image with
 * the JIT's code, which the runtime keeps in the kernel disk cache (runtime/host_disk.c). */
LoomStatus cg_host_aot_compile_cpu(CgHostAot *a, const KernelIr *k, const CgHostCpu *cpu, CgHostImage *out, Diag *d);
/* The host JIT target's CPU choice (codegen/host.c; strings owned by the target, valid while it lives);
 * false when t is not the host JIT target. */
struct CgTarget;
bool cg_host_target_cpu(struct CgTarget *t, CgHostCpu *out);
void cg_host_image_release(LoomContext *ctx, CgHostImage *im);

#endif /* LOOM_CG_AOT_H */
