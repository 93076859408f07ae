/* SPDX-License-Identifier: Apache-2.0 */
/* bundle.h: ahead-of-time kernel bundles, the part shared by libloom and libloomrt (no LLVM here).
 *
 * A bundle is one file holding, per kernel signature and target, the machine code and the launch facts
 * the runtime needs. Layout (every integer little-endian; every offset from the start of the file):
 *
 *   header (64 bytes)   "LOOMBNDL", u16 major, u16 minor, u32 header size, u64 file size,
 *                       u64 section table offset, u32 section count, u32 table CRC, u32 flags,
 *                       reserved, u32 header CRC (CRC-32C of bytes [0, 60))
 *   sections            16-byte aligned, each described by a table entry
 *   section table       count x 32 bytes: u32 kind, u32 flags, u64 offset, u64 size, u32 CRC, u32 0
 *
 * Sections (each exactly once; unknown kinds are checked and skipped, so a minor version may add some):
 *   STRINGS  NUL-terminated strings; a string is referred to by its offset (0 is "")
 *   META     producer, loom version, LLVM version (string refs)
 *   TARGETS  32-byte records: kind (host x86-64 / CUDA cubin / CUDA PTX / AMDGPU code object), arch
 *            (x86-64 psABI level 1, 3, 4; sm as 90; gfx as 0x90a), ABI version, name, description
 *   KERNELS  48-byte records: name, key (the kernel IR key text: ir_print_kernel_key, the signature the
 *            in-memory and disk caches use: structure, dtypes, rank, layout classes, index width), key
 *            hash, ndim, nkeep, index bits, buffers (first, count), code records (first, count), entry,
 *            scalar parameters (count: their records follow the kernel's buffer records)
 *   BUFFERS  20-byte records: dtype, is_output, layout class per dim (the kernel's KBuffer); a kernel's
 *            scalar parameters (KI_PARAM, in order) as records with is_output 2 and the parameter's dtype
 *   CODE     128-byte records, grouped by kernel: kernel, target, blob (offset, size, CRC) and 24
 *            words of launch facts (RB_HOST_* / RB_GPU_* below)
 *   ENTRIES  16-byte records: the C-callable names; each names a kernel for 32-bit and one for 64-bit
 *            indexing (-1 when absent): a launch picks by its sizes, as the passes do
 *   BLOBS    the code: host images (below), cubins, PTX text; each blob checked by its own CRC when it
 *            is loaded (so opening a bundle does not read code it will not use)
 *   FUSE     (format 1.2, optional) bundled @loom.fuse signatures: per signature the function's identity,
 *            its arguments' kinds, dtypes and ranks, and its traced graph in a size-free form, so that a
 *            call with any sizes is rebuilt without running the Python function (layout and rules:
 *            runtime/bundle_fuse.c; libloomrt checks and ignores it)
 *
 * Every section but BLOBS is checked against its CRC-32C when the bundle is opened, every record and
 * every string reference when it is decoded; a failure is LOOM_ERR_INVALID_ARGUMENT with a message that
 * says what is wrong ("truncated", "checksum", "version", "no code for this CPU"). The parser never reads
 * outside the bytes it was given and never trusts a count or an offset it has not checked.
 *
 * Host image (a blob of a host target; layout in codegen/cg_aot.h): position-independent code that
 * codegen/host_object.c linked at bundle build time, so that the loader (bundle_hostimg.c) resolves
 * imports and writes 64-bit addresses only (an import's, or the image base plus an offset): every
 * PC-relative reference (calls through stubs, GOT loads, constant pools) was resolved by the linker. The
 * loader maps the image, copies it, writes those values and protects the regions (text read-execute,
 * rodata and the GOT read-only, data read-write).
 */
#ifndef LOOM_RUNTIME_BUNDLE_H
#define LOOM_RUNTIME_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* ---- CRC-32C (Castagnoli), software, any byte order ---------------------------------------------- */
uint32_t rt_crc32c(uint32_t crc, const void *p, size_t n);
/* The hash of a kernel key stored in its KERNELS record (FNV-1a, folded): reader and writer agree. */
uint64_t rt_bundle_key_hash(const char *s, size_t n);

/* ---- format constants ---------------------------------------------------------------------------- */
#define RB_MAGIC "LOOMBNDL"
/* 1.2 added the optional FUSE section (a 1.1 reader checks and skips it; 1.1 bundles load as before) */
enum { RB_MAJOR = 1, RB_MINOR = 2, RB_HEADER_SIZE = 64, RB_SECTION_ENTRY = 32 };
enum {
  RB_SEC_STRINGS = 1, RB_SEC_META = 2, RB_SEC_TARGETS = 3, RB_SEC_KERNELS = 4, RB_SEC_BUFFERS = 5,
  RB_SEC_CODE = 6, RB_SEC_ENTRIES = 7, RB_SEC_BLOBS = 8, RB_SEC_LAST = 8, /* the required ones */
  RB_SEC_FUSE = 9                                                         /* optional, at most once */
};
enum { RB_SECF_PER_RECORD_CRC = 1u }; /* BLOBS: the table's CRC is 0; each blob has its own */
enum { RB_TARGET_HOST_X86_64 = 1, RB_TARGET_CUDA_CUBIN = 2, RB_TARGET_CUDA_PTX = 3, RB_TARGET_AMDGPU = 4 };
/* Calling conventions a code record follows (codegen/codegen.h); a runtime refuses another version.
 * Version 2: scalar parameters follow the buffers (host: bufs[nbuf + p]; GPU: after the extra words).
 * GPU version 3: extra word 2 of the cached row entries is the short-row mode's lanes per row (0: a
 * block per row), which a version-2 entry would ignore (wrong rows).
 * GPU version 4: extra word 2 of a COL `part` is the phase | g << 8, g the block fold's parts (codegen.h),
 * which a version-3 entry would misread (no phase run, or unfolded records).
 * GPU version 5: bit 16 of the cached row entries' extra word 2 (CG_GPU_STAGE) asks for staged short rows,
 * which a version-4 entry would read as thousands of lanes a row. */
enum { RB_HOST_ABI = 2, RB_GPU_ABI = 5 };
enum { RB_BUF_PARAM = 2 }; /* BUFFERS record is_output value of a scalar parameter */
enum { RB_REC_TARGET = 32, RB_REC_KERNEL = 48, RB_REC_BUFFER = 20, RB_REC_CODE = 128, RB_REC_ENTRY = 16,
       RB_REC_META = 32 };
#define RB_FACTS 24
/* host facts (words of RtBundleCode.facts): text offsets of the entries (RB_NO_SYMBOL: absent), the
 * accumulator size, and the column split (COL_PHASES: CgCompiled.col_phases; 0, as in bundles written
 * before it existed, means no column split and COLPART / COLFINISH unused) */
enum { RB_HOST_RUN = 0, RB_HOST_PARTIAL = 1, RB_HOST_FINISH = 2, RB_HOST_ACC_SIZE = 3, RB_HOST_COLPART = 4,
       RB_HOST_COLFINISH = 5, RB_HOST_COL_PHASES = 6 };
#define RB_NO_SYMBOL 0xffffffffu
/* GPU facts: CgGpuKernel's launch facts; entry names are string refs, bit i of `entries` <-> name i */
enum {
  RB_GPU_STRATEGY = 0, RB_GPU_BLOCK, RB_GPU_VEC_LANES, RB_GPU_VEC_ALIGN, RB_GPU_ACC_SIZE, RB_GPU_NWORDS,
  RB_GPU_CACHE_K, RB_GPU_PART_LANES, RB_GPU_CACHE_LANES, RB_GPU_ENTRIES_ALL, RB_GPU_ENTRIES, RB_GPU_NAME0,
  RB_GPU_WAVE = RB_GPU_NAME0 + 9, /* threads of a wave: 32 (NVIDIA) or 64 (AMD) */
  /* CgGpuKernel.split_reduce / split_map (the phase split); 0, as in bundles written before it existed:
   * part / finish are the single-phase split */
  RB_GPU_SPLIT_REDUCE, RB_GPU_SPLIT_MAP,
  /* the name of entry 9 (`flatv`, added after the others: bundles written before it hold 0, "") */
  RB_GPU_NAME9
};
#define RB_GPU_NENTRY 10 /* CG_NENTRY */
_Static_assert(RB_GPU_NAME9 < RB_FACTS, "the GPU facts fit a code record");
/* The fact that holds entry name i (0 .. RB_GPU_NENTRY - 1). */
static inline int rb_gpu_name_fact(int i) { return i < 9 ? RB_GPU_NAME0 + i : RB_GPU_NAME9; }
#define RB_MAX_KERNEL_BUFS 4096

/* ---- the reader: a validated view of a bundle's bytes ------------------------------------------- */
typedef struct RtBundleTarget {
  uint32_t kind, arch, abi;
  const char *name, *desc;
} RtBundleTarget;

typedef struct RtBundleCode {
  uint32_t kernel, target;
  const uint8_t *blob; /* inside the bundle's bytes; its CRC is checked by rt_bundle_code_check */
  uint64_t blob_size;
  uint32_t blob_crc;
  uint32_t facts[RB_FACTS];
  const char *names[RB_GPU_NENTRY]; /* GPU: entry names ("" when absent) */
} RtBundleCode;

typedef struct RtBundleKernel {
  const char *name, *key;
  size_t keylen;
  uint64_t key_hash;
  int32_t ndim, nkeep, index_bits, nbuf;
  const KBuffer *bufs; /* nbuf */
  int32_t nparam;
  const KBuffer *params; /* nparam: the scalar parameters' dtypes (is_output RB_BUF_PARAM, layouts 0) */
  uint32_t code_first, ncode;
  int32_t entry; /* -1 when no entry names it */
} RtBundleKernel;

typedef struct RtBundleEntry {
  const char *name;
  int32_t kernel[2]; /* [0] index 32, [1] index 64; -1 when absent */
} RtBundleEntry;

typedef struct RtFuseRecord RtFuseRecord; /* bundle_fuse.h */

typedef struct RtBundle {
  LoomContext *ctx;
  const uint8_t *data; /* not owned (see rt_bundle_parse) */
  size_t size;
  uint16_t major, minor;
  const char *producer, *loom_version, *llvm_version;
  int32_t ntarget, nkernel, ncode, nentry;
  RtBundleTarget *targets;
  RtBundleKernel *kernels;
  RtBundleCode *codes;
  RtBundleEntry *entries;
  KBuffer *bufs;
  int32_t *key_table; /* open addressing over kernels by key hash (-1 empty), key_cap slots */
  int32_t key_cap;
  int32_t *entry_sorted; /* entry indices sorted by name */
  int32_t nfuse;         /* FUSE records (0 without the section) */
  RtFuseRecord *fuse;
  void *fuse_mem;        /* their decoded arrays (bundle_fuse.c) */
} RtBundle;

/* Validates size bytes of a bundle (everything but the blobs' contents) and decodes them into *out.
 * `what` names the bundle in messages (a file name). The bytes must outlive *out (they are not copied). */
LoomStatus rt_bundle_parse(LoomContext *ctx, const void *data, size_t size, const char *what, RtBundle **out,
                           Diag *d);
void rt_bundle_free(RtBundle *b);
/* Checks a code record's blob against its CRC (once per use: loaders call it before using the bytes). */
LoomStatus rt_bundle_code_check(const RtBundle *b, const RtBundleCode *c, Diag *d);
/* The kernel whose key text is key[0, keylen), or NULL. */
const RtBundleKernel *rt_bundle_find_key(const RtBundle *b, const char *key, size_t keylen);
/* The entry called name, or NULL. */
const RtBundleEntry *rt_bundle_find_entry(const RtBundle *b, const char *name);
const char *rt_bundle_target_kind_name(uint32_t kind); /* "host x86-64", "CUDA cubin", ... */
/* "host" / "host-avx2" / "host-avx512" / "sm_90" / "ptx_sm_90" / "gfx90a" for a target: buf. */
const char *rt_bundle_target_label(uint32_t kind, uint32_t arch, char *buf, size_t cap);

/* ---- the writer ---------------------------------------------------------------------------------- */
typedef struct RtBundleWriter RtBundleWriter;
LoomStatus rt_bundle_writer_create(LoomContext *ctx, RtBundleWriter **out, Diag *d);
void rt_bundle_writer_free(RtBundleWriter *w);
/* Each returns the new record's index, or -1 after an allocation failure (reported by finish). */
int32_t rt_bw_target(RtBundleWriter *w, uint32_t kind, uint32_t arch, uint32_t abi, const char *name,
                     const char *desc);
int32_t rt_bw_kernel(RtBundleWriter *w, const char *name, const char *key, size_t keylen, int32_t ndim,
                     int32_t nkeep, int32_t index_bits, int32_t nbuf, const KBuffer *bufs, int32_t nparam,
                     const uint8_t *param_dtype);
/* facts: RB_FACTS words; names: RB_GPU_NENTRY entry names for GPU targets (NULL for host targets). */
int32_t rt_bw_code(RtBundleWriter *w, int32_t kernel, int32_t target, const void *blob, size_t size,
                   const uint32_t *facts, const char *const *names);
int32_t rt_bw_entry(RtBundleWriter *w, const char *name, int32_t kernel32, int32_t kernel64);
void rt_bw_meta(RtBundleWriter *w, const char *producer, const char *loom_version, const char *llvm_version);
/* The FUSE section's bytes (bundle_fuse.c's writer), kept by reference until finish; n = 0: none. */
void rt_bw_fuse_section(RtBundleWriter *w, const uint8_t *bytes, size_t n);
/* The whole file (*bytes ctx_alloc'ed). Code records are ordered by kernel here. */
LoomStatus rt_bundle_writer_finish(RtBundleWriter *w, uint8_t **bytes, size_t *size, Diag *d);

/* ---- the FUSE section (bundle_fuse.c): called by rt_bundle_parse / rt_bundle_free ---------------- */
LoomStatus rt_bundle_fuse_decode(RtBundle *b, const uint8_t *sec, uint64_t size, const char *what, Diag *d);
void rt_bundle_fuse_free(RtBundle *b);

/* ---- host images --------------------------------------------------------------------------------- */
/* x86-64 psABI levels this CPU runs (cpuid + xgetbv): 0 on other architectures, else 1, 2, 3 or 4. */
int rt_host_cpu_level(void);
/* "x86-64-v3 (AVX2)" etc.; what is missing for level `want` on this CPU into buf ("" when none). */
const char *rt_host_level_name(int level);
void rt_host_cpu_missing(int want, char *buf, size_t cap);

/* Where the loader finds imported symbols: SLEEF (dlopen'ed once per resolver), libm, libc, and a
 * few helpers of the runtime itself (half-precision conversions). Thread-safe after creation. */
typedef struct RtSymbolResolver RtSymbolResolver;
LoomStatus rt_symbol_resolver_create(LoomContext *ctx, RtSymbolResolver **out, Diag *d);
void rt_symbol_resolver_free(RtSymbolResolver *r);

typedef struct RtHostImage {
  LoomContext *ctx;
  uint8_t *base; /* mapped */
  size_t map_size;
  uint32_t text_end;
} RtHostImage;
/* Validates a host image blob, maps it, resolves its imports and relocates it. what: messages. */
LoomStatus rt_host_image_load(LoomContext *ctx, RtSymbolResolver *r, const uint8_t *blob, size_t size,
                              const char *what, RtHostImage **out, Diag *d);
/* Only the structural checks of rt_host_image_load (no mapping, no symbols): fuzzing and tests. */
LoomStatus rt_host_image_check(const uint8_t *blob, size_t size, const char *what, Diag *d);
/* The address of text offset off (checked to lie inside the text region), or NULL. */
void *rt_host_image_symbol(const RtHostImage *im, uint32_t off);
void rt_host_image_free(RtHostImage *im);

/* ---- little-endian helpers ------------------------------------------------------------------------ */
static inline uint16_t rb_get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t rb_get32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t rb_get64(const uint8_t *p) { return (uint64_t)rb_get32(p) | (uint64_t)rb_get32(p + 4) << 32; }
static inline void rb_put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static inline void rb_put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void rb_put64(uint8_t *p, uint64_t v) {
  rb_put32(p, (uint32_t)v);
  rb_put32(p + 4, (uint32_t)(v >> 32));
}

#endif /* LOOM_RUNTIME_BUNDLE_H */
