/* SPDX-License-Identifier: Apache-2.0 */
/* host_object.c: kernel IR -> x86-64 host image for bundles (cg_aot.h).
 *
 * The same lowering and optimization as the JIT (host.c: cg_lower_host, "default<O3>"), but for a fixed
 * CPU of the x86-64 psABI (x86-64, x86-64-v3, x86-64-v4) instead of the build machine's, with the
 * position-independent small code model, emitted as an ELF relocatable object by LLVM's TargetMachine.
 * Then a small static linker turns the object into the image the loader maps:
 *   - keeps the allocated sections (text, rodata, data, bss; .eh_frame and non-allocated sections are
 *     dropped: kernels are never unwound through), lays them out text | stubs, rodata | GOT, data | bss
 *     with page boundaries between the three regions;
 *   - undefined symbols become imports; a call (PLT32) to one goes through an 8-byte stub
 *     `jmp *GOT(%rip)`; a GOT load (GOTPCREL, GOTPCRELX, REX_GOTPCRELX) reads a GOT slot;
 *   - resolves every PC-relative relocation (PC32, PLT32, PC64, GOTPCREL*) now and leaves only 64-bit
 *     absolute ones (R_X86_64_64 and the GOT slots) for the loader, as (offset, import or base, addend);
 *   - any other relocation type is an error naming it, so an image is complete or not made at all.
 * The object comes from LLVM in this process, but the linker still checks every offset it reads.
 */
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/cg_aot.h"
#include "codegen/cg_llvm.h"

#ifndef LOOM_SLEEF_LIB
#define LOOM_SLEEF_LIB "libsleefgnuabi.so.3"
#endif
#ifndef LOOM_SLEEF_SCALAR_LIB
#define LOOM_SLEEF_SCALAR_LIB "libsleef.so.3"
#endif
#define AOT_TRIPLE "x86_64-unknown-linux-gnu"

/* Present only when LLVM has the X86 backend (see nvptx.c for the same pattern). */
extern void LLVMInitializeX86TargetInfo(void) __attribute__((weak));
extern void LLVMInitializeX86Target(void) __attribute__((weak));
extern void LLVMInitializeX86TargetMC(void) __attribute__((weak));
extern void LLVMInitializeX86AsmPrinter(void) __attribute__((weak));

struct CgHostAot {
  LoomContext *ctx;
  void *sleef, *sleef_scalar; /* dlopen handles or NULL: SLEEF's vector (GNU ABI) and scalar libraries */
};

/* As the JIT's (host.c): vector names from the GNU-ABI library, Sleef_* scalar names (the calls the
 * vectorizer widens through their vector variants) from the scalar one; both or no SLEEF at all. */
static bool sleef_has(void *user, const char *name) {
  CgHostAot *a = user;
  if (!a->sleef) return false;
  if (strncmp(name, "Sleef_", 6) == 0) return a->sleef_scalar && dlsym(a->sleef_scalar, name) != NULL;
  return dlsym(a->sleef, name) != NULL;
}

static const char *level_cpu(int level) { return level >= 4 ? "x86-64-v4" : level >= 3 ? "x86-64-v3" : "x86-64"; }
/* SLEEF's GNU vector ABI letters usable at a level, best first (host.c derives them from CPU features). */
static const char *level_isas(int level) { return level >= 4 ? "edcb" : level >= 3 ? "dcb" : "b"; }

LoomStatus cg_host_aot_create(LoomContext *ctx, bool sleef, CgHostAot **out, Diag *d) {
  *out = NULL;
  if (!LLVMInitializeX86TargetInfo || !LLVMInitializeX86Target || !LLVMInitializeX86TargetMC ||
      !LLVMInitializeX86AsmPrinter)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "host bundles: this LLVM has no X86 backend");
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  CgHostAot *a = ctx_calloc(ctx, 1, sizeof *a);
  if (!a) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: host AOT compiler");
  a->ctx = ctx;
  if (sleef) {
    a->sleef = dlopen(LOOM_SLEEF_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!a->sleef) a->sleef = dlopen("libsleefgnuabi.so.3", RTLD_NOW | RTLD_LOCAL);
    a->sleef_scalar = dlopen(LOOM_SLEEF_SCALAR_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!a->sleef_scalar) a->sleef_scalar = dlopen("libsleef.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!a->sleef_scalar && a->sleef) { /* vector functions without scalar ones: not usable (math.c) */
      dlclose(a->sleef);
      a->sleef = NULL;
    }
  }
  *out = a;
  return LOOM_OK;
}

void cg_host_aot_destroy(CgHostAot *a) {
  if (!a) return;
  if (a->sleef) dlclose(a->sleef);
  if (a->sleef_scalar) dlclose(a->sleef_scalar);
  ctx_free(a->ctx, a);
}

const char *cg_llvm_version(char *buf, size_t cap) {
  unsigned maj = 0, min = 0, pat = 0;
  LLVMGetVersion(&maj, &min, &pat);
  snprintf(buf, cap, "%u.%u.%u", maj, min, pat);
  return buf;
}

const char *cg_host_aot_describe(CgHostAot *a, int level, char *buf, size_t cap) {
  unsigned maj = 0, min = 0, pat = 0;
  LLVMGetVersion(&maj, &min, &pat);
  snprintf(buf, cap, "LLVM %u.%u.%u x86_64 %s%s", maj, min, pat, level_cpu(level), a && a->sleef ? " sleef" : "");
  return buf;
}

void cg_host_image_release(LoomContext *ctx, CgHostImage *im) {
  if (!im) return;
  ctx_free(ctx, im->bytes);
  memset(im, 0, sizeof *im);
}

/* ---- the linker ------------------------------------------------------------------------------------ */
enum { REG_NONE, REG_TEXT, REG_RO, REG_DATA };

typedef struct Linker {
  LoomContext *ctx;
  Diag *d;
  const uint8_t *obj;
  size_t size;
  const Elf64_Shdr *sh;
  uint32_t nsh;
  const char *shstr;
  size_t shstr_size;
  const Elf64_Sym *syms;
  uint32_t nsyms;
  const char *symstr;
  size_t symstr_size;
  int8_t *region;     /* per section */
  uint32_t *sec_off;  /* per section: offset inside its region */
  uint32_t text, ro, data, bss; /* region sizes while laying out */
  /* imports and GOT slots, per symbol index: -1 when none */
  int32_t *import_of, *got_of, *stub_of;
  uint32_t nimport, ngot, nstub;
  uint32_t *import_sym, *got_sym, *stub_sym;
  uint32_t stubs_at, got_at; /* offsets inside the text and rodata regions */
  CgHostLayout lay;
  uint8_t *image; /* lay.image_size bytes being built */
  uint8_t *relocs;
  uint32_t nreloc, capreloc;
} Linker;

static LoomStatus link_err(Linker *L, const char *what) {
  return diag_error(L->d, LOOM_ERR_BACKEND, "host bundle linker: %s", what);
}

static const char *sec_name(Linker *L, uint32_t i) {
  uint32_t n = L->sh[i].sh_name;
  return n < L->shstr_size ? L->shstr + n : "?";
}

static const char *sym_name(Linker *L, uint32_t i) {
  uint32_t n = L->syms[i].st_name;
  return n < L->symstr_size ? L->symstr + n : "";
}

static LoomStatus read_elf(Linker *L) {
  if (L->size < sizeof(Elf64_Ehdr)) return link_err(L, "the object is shorter than an ELF header");
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)L->obj;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
      eh->e_type != ET_REL || eh->e_machine != EM_X86_64 || eh->e_shentsize != sizeof(Elf64_Shdr))
    return link_err(L, "not a little-endian x86-64 ELF relocatable object");
  if (eh->e_shoff > L->size || (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > L->size - eh->e_shoff || eh->e_shstrndx >= eh->e_shnum)
    return link_err(L, "section headers out of bounds");
  L->sh = (const Elf64_Shdr *)(const void *)(L->obj + eh->e_shoff);
  L->nsh = eh->e_shnum;
  for (uint32_t i = 0; i < L->nsh; i++)
    if (L->sh[i].sh_type != SHT_NOBITS && (L->sh[i].sh_offset > L->size || L->sh[i].sh_size > L->size - L->sh[i].sh_offset))
      return link_err(L, "a section lies outside the object");
  L->shstr = (const char *)L->obj + L->sh[eh->e_shstrndx].sh_offset;
  L->shstr_size = L->sh[eh->e_shstrndx].sh_size;
  for (uint32_t i = 0; i < L->nsh; i++) {
    if (L->sh[i].sh_type == SHT_REL) return link_err(L, "REL relocations (only RELA is expected on x86-64)");
    if (L->sh[i].sh_type != SHT_SYMTAB) continue;
    if (L->syms || L->sh[i].sh_link >= L->nsh) return link_err(L, "several symbol tables, or a bad string table link");
    L->syms = (const Elf64_Sym *)(const void *)(L->obj + L->sh[i].sh_offset);
    L->nsyms = (uint32_t)(L->sh[i].sh_size / sizeof(Elf64_Sym));
    L->symstr = (const char *)L->obj + L->sh[L->sh[i].sh_link].sh_offset;
    L->symstr_size = L->sh[L->sh[i].sh_link].sh_size;
  }
  if (!L->syms) return link_err(L, "no symbol table");
  if (L->shstr_size == 0 || L->shstr[L->shstr_size - 1] || L->symstr_size == 0 || L->symstr[L->symstr_size - 1])
    return link_err(L, "string tables not NUL-terminated");
  return LOOM_OK;
}

/* Which region a section goes to (REG_NONE: dropped). */
static int classify(Linker *L, uint32_t i) {
  const Elf64_Shdr *s = &L->sh[i];
  if (!(s->sh_flags & SHF_ALLOC)) return REG_NONE;
  if (s->sh_type == SHT_X86_64_UNWIND || !strcmp(sec_name(L, i), ".eh_frame")) return REG_NONE;
  if (s->sh_flags & SHF_TLS) return -1; /* thread-local storage: kernels have none, and the loader no TLS */
  if (s->sh_type != SHT_PROGBITS && s->sh_type != SHT_NOBITS) return -1;
  if (s->sh_flags & SHF_EXECINSTR) return REG_TEXT;
  if (s->sh_flags & SHF_WRITE) return REG_DATA;
  return REG_RO;
}

static LoomStatus layout(Linker *L) {
  L->region = ctx_calloc(L->ctx, L->nsh, sizeof *L->region);
  L->sec_off = ctx_calloc(L->ctx, L->nsh, sizeof *L->sec_off);
  if (!L->region || !L->sec_off) return diag_error(L->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: host linker");
  /* data: PROGBITS first, then NOBITS (zero tail not stored) */
  for (int pass = 0; pass < 4; pass++)
    for (uint32_t i = 0; i < L->nsh; i++) {
      int reg = classify(L, i);
      if (reg < 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "section %s of type %u cannot be placed", sec_name(L, i), L->sh[i].sh_type);
        return link_err(L, msg);
      }
      bool nobits = L->sh[i].sh_type == SHT_NOBITS;
      int want = pass == 0 ? REG_TEXT : pass == 1 ? REG_RO : REG_DATA;
      if (reg != want || (pass == 2 && nobits) || (pass == 3 && !nobits)) continue;
      uint64_t align = L->sh[i].sh_addralign ? L->sh[i].sh_addralign : 1;
      if (align > CG_HOST_PAGE || (align & (align - 1))) return link_err(L, "a section alignment is over a page");
      if (L->sh[i].sh_size > CG_HOST_IMAGE_MAX / 4) return link_err(L, "a section is too large");
      uint32_t *cur = pass == 0 ? &L->text : pass == 1 ? &L->ro : &L->data;
      if (pass == 3) { /* bss after the stored data bytes; offsets from the data region's start */
        uint32_t at = cg_align_up(L->data + L->bss, (uint32_t)align);
        L->sec_off[i] = at;
        L->bss = at + (uint32_t)L->sh[i].sh_size - L->data;
      } else {
        uint32_t at = cg_align_up(*cur, (uint32_t)align);
        L->sec_off[i] = at;
        *cur = at + (uint32_t)L->sh[i].sh_size;
      }
      L->region[i] = (int8_t)reg;
    }
  return LOOM_OK;
}

/* The image offset of section i's byte off (regions placed). */
static uint32_t sec_addr(Linker *L, uint32_t i, uint64_t off) {
  uint32_t region_start = L->region[i] == REG_TEXT ? 0 : L->region[i] == REG_RO ? L->lay.ro_start : L->lay.data_start;
  return region_start + L->sec_off[i] + (uint32_t)off;
}

static bool is_rela_of_kept(Linker *L, uint32_t i) {
  return L->sh[i].sh_type == SHT_RELA && L->sh[i].sh_info < L->nsh && L->region[L->sh[i].sh_info] != REG_NONE;
}

static bool is_got_type(uint32_t t) { return t == R_X86_64_GOTPCREL || t == R_X86_64_GOTPCRELX || t == R_X86_64_REX_GOTPCRELX; }

static LoomStatus add_index(Linker *L, int32_t *of, uint32_t **list, uint32_t *n, uint32_t sym) {
  if (of[sym] >= 0) return LOOM_OK;
  uint32_t *q = ctx_alloc(L->ctx, ((size_t)*n + 1) * sizeof *q);
  if (!q) return diag_error(L->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: host linker");
  if (*n) memcpy(q, *list, (size_t)*n * sizeof *q);
  ctx_free(L->ctx, *list);
  *list = q;
  q[*n] = sym;
  of[sym] = (int32_t)(*n)++;
  return LOOM_OK;
}

/* First walk over the relocations: which symbols need an import, a GOT slot, a stub. */
static LoomStatus collect(Linker *L) {
  L->import_of = ctx_alloc(L->ctx, (size_t)L->nsyms * sizeof(int32_t));
  L->got_of = ctx_alloc(L->ctx, (size_t)L->nsyms * sizeof(int32_t));
  L->stub_of = ctx_alloc(L->ctx, (size_t)L->nsyms * sizeof(int32_t));
  if (!L->import_of || !L->got_of || !L->stub_of) return diag_error(L->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: host linker");
  for (uint32_t s = 0; s < L->nsyms; s++) L->import_of[s] = L->got_of[s] = L->stub_of[s] = -1;
  LoomStatus st = LOOM_OK;
  for (uint32_t i = 0; i < L->nsh && st == LOOM_OK; i++) {
    if (!is_rela_of_kept(L, i)) continue;
    const Elf64_Rela *r = (const Elf64_Rela *)(const void *)(L->obj + L->sh[i].sh_offset);
    size_t n = L->sh[i].sh_size / sizeof *r;
    for (size_t j = 0; j < n && st == LOOM_OK; j++) {
      uint32_t sym = (uint32_t)ELF64_R_SYM(r[j].r_info), type = (uint32_t)ELF64_R_TYPE(r[j].r_info);
      if (type == R_X86_64_NONE) continue;
      if (sym >= L->nsyms) return link_err(L, "a relocation names a symbol out of range");
      bool undef = L->syms[sym].st_shndx == SHN_UNDEF;
      if (undef) st = add_index(L, L->import_of, &L->import_sym, &L->nimport, sym);
      if (st == LOOM_OK && (is_got_type(type) || (type == R_X86_64_PLT32 && undef)))
        st = add_index(L, L->got_of, &L->got_sym, &L->ngot, sym);
      if (st == LOOM_OK && type == R_X86_64_PLT32 && undef) st = add_index(L, L->stub_of, &L->stub_sym, &L->nstub, sym);
    }
  }
  return st;
}

static LoomStatus add_reloc(Linker *L, uint32_t off, uint32_t import, int64_t addend) {
  if (L->nreloc == L->capreloc) {
    uint32_t nc = L->capreloc ? 2 * L->capreloc : 32;
    uint8_t *q = ctx_alloc(L->ctx, (size_t)nc * CG_HOST_RELOC);
    if (!q) return diag_error(L->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: host linker");
    if (L->nreloc) memcpy(q, L->relocs, (size_t)L->nreloc * CG_HOST_RELOC);
    ctx_free(L->ctx, L->relocs);
    L->relocs = q;
    L->capreloc = nc;
  }
  uint8_t *p = L->relocs + (size_t)L->nreloc++ * CG_HOST_RELOC;
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(off >> (8 * i));
  for (int i = 0; i < 4; i++) p[4 + i] = (uint8_t)(import >> (8 * i));
  for (int i = 0; i < 8; i++) p[8 + i] = (uint8_t)((uint64_t)addend >> (8 * i));
  return LOOM_OK;
}

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* The image offset of a defined symbol. */
static LoomStatus sym_addr(Linker *L, uint32_t sym, uint32_t *out) {
  const Elf64_Sym *s = &L->syms[sym];
  if (s->st_shndx == SHN_UNDEF || s->st_shndx >= L->nsh || s->st_shndx == SHN_COMMON || s->st_shndx == SHN_ABS) {
    char msg[200];
    snprintf(msg, sizeof msg, "symbol '%.80s' has no place in the image (section %u)", sym_name(L, sym), s->st_shndx);
    return link_err(L, msg);
  }
  if (L->region[s->st_shndx] == REG_NONE) {
    char msg[200];
    snprintf(msg, sizeof msg, "symbol '%.80s' lies in dropped section %s", sym_name(L, sym), sec_name(L, s->st_shndx));
    return link_err(L, msg);
  }
  *out = sec_addr(L, s->st_shndx, s->st_value);
  return LOOM_OK;
}

static LoomStatus apply(Linker *L) {
  /* GOT slots: 64-bit addresses written by the loader */
  for (uint32_t g = 0; g < L->ngot; g++) {
    uint32_t sym = L->got_sym[g], off = L->lay.ro_start + L->got_at + 8 * g, a = 0;
    LoomStatus st = L->import_of[sym] >= 0 ? add_reloc(L, off, (uint32_t)L->import_of[sym], 0)
                                           : (sym_addr(L, sym, &a) ?: add_reloc(L, off, CG_RELOC_BASE, a));
    if (st) return st;
  }
  for (uint32_t s = 0; s < L->nstub; s++) { /* jmp *slot(%rip); int3 int3 */
    uint8_t *p = L->image + L->stubs_at + 8 * s;
    uint32_t slot = L->lay.ro_start + L->got_at + 8 * (uint32_t)L->got_of[L->stub_sym[s]];
    p[0] = 0xff;
    p[1] = 0x25;
    put32(p + 2, (uint32_t)((int64_t)slot - (int64_t)(L->stubs_at + 8 * s + 6)));
    p[6] = p[7] = 0xcc;
  }
  for (uint32_t i = 0; i < L->nsh; i++) {
    if (!is_rela_of_kept(L, i)) continue;
    uint32_t target = L->sh[i].sh_info;
    const Elf64_Rela *r = (const Elf64_Rela *)(const void *)(L->obj + L->sh[i].sh_offset);
    size_t n = L->sh[i].sh_size / sizeof *r;
    for (size_t j = 0; j < n; j++) {
      uint32_t sym = (uint32_t)ELF64_R_SYM(r[j].r_info), type = (uint32_t)ELF64_R_TYPE(r[j].r_info);
      if (type == R_X86_64_NONE) continue;
      if (L->sh[target].sh_type == SHT_NOBITS) return link_err(L, "a relocation in a bss section");
      uint32_t width = type == R_X86_64_64 || type == R_X86_64_PC64 ? 8 : 4;
      if (r[j].r_offset > L->sh[target].sh_size || width > L->sh[target].sh_size - r[j].r_offset)
        return link_err(L, "a relocation outside its section");
      uint32_t P = sec_addr(L, target, r[j].r_offset);
      int64_t A = r[j].r_addend, S = 0, v;
      bool import = L->import_of[sym] >= 0;
      LoomStatus st = LOOM_OK;
      uint32_t a = 0;
      switch (type) {
      case R_X86_64_64:
        st = import ? add_reloc(L, P, (uint32_t)L->import_of[sym], A) : (sym_addr(L, sym, &a) ?: add_reloc(L, P, CG_RELOC_BASE, a + A));
        if (st) return st;
        continue;
      case R_X86_64_PC32:
      case R_X86_64_PLT32:
      case R_X86_64_PC64:
        if (import && type != R_X86_64_PLT32) {
          char msg[200];
          snprintf(msg, sizeof msg, "PC-relative reference to undefined symbol '%.80s' (code must be position-independent)",
                   sym_name(L, sym));
          return link_err(L, msg);
        }
        if (import) S = L->stubs_at + 8 * (int64_t)L->stub_of[sym];
        else if ((st = sym_addr(L, sym, &a))) return st;
        else S = a;
        break;
      case R_X86_64_GOTPCREL:
      case R_X86_64_GOTPCRELX:
      case R_X86_64_REX_GOTPCRELX: S = L->lay.ro_start + L->got_at + 8 * (int64_t)L->got_of[sym]; break;
      default: {
        char msg[160];
        snprintf(msg, sizeof msg, "unsupported relocation type %u against '%.80s'", type, sym_name(L, sym));
        return link_err(L, msg);
      }
      }
      v = S + A - (int64_t)P;
      if (width == 8) {
        for (int b = 0; b < 8; b++) L->image[P + b] = (uint8_t)((uint64_t)v >> (8 * b));
      } else {
        if (v < INT32_MIN || v > INT32_MAX) return link_err(L, "a PC-relative displacement does not fit in 32 bits");
        put32(L->image + P, (uint32_t)(int32_t)v);
      }
    }
  }
  return LOOM_OK;
}

static LoomStatus find_export(Linker *L, const char *name, uint32_t *out) {
  for (uint32_t s = 1; s < L->nsyms; s++) {
    if (L->syms[s].st_shndx == SHN_UNDEF || strcmp(sym_name(L, s), name)) continue;
    LoomStatus st = sym_addr(L, s, out);
    if (st == LOOM_OK && *out >= L->text) return link_err(L, "an entry point is not in the text");
    return st;
  }
  char msg[160];
  snprintf(msg, sizeof msg, "entry point %.80s not in the object", name);
  return link_err(L, msg);
}

/* Links obj into out->bytes; names: the entry points lower.c defined. */
static LoomStatus link_image(LoomContext *ctx, const uint8_t *obj, size_t size, const CgEntryNames *names, CgHostImage *out,
                             Diag *d) {
  Linker L = {.ctx = ctx, .d = d, .obj = obj, .size = size};
  LoomStatus st = read_elf(&L);
  if (st == LOOM_OK) st = layout(&L);
  if (st == LOOM_OK) st = collect(&L);
  uint32_t strtab = 0;
  uint8_t *blob = NULL;
  if (st == LOOM_OK) {
    L.stubs_at = cg_align_up(L.text, 8);
    L.text = L.stubs_at + 8 * L.nstub;
    L.got_at = cg_align_up(L.ro, 8);
    L.ro = L.got_at + 8 * L.ngot;
    L.lay = cg_host_layout(L.text, L.ro, L.data, L.bss);
    if (L.lay.image_size > CG_HOST_IMAGE_MAX) st = link_err(&L, "the image is over 1 GiB");
  }
  if (st == LOOM_OK) {
    L.image = ctx_calloc(ctx, 1, L.lay.image_size);
    if (!L.image) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: host image of %u bytes", L.lay.image_size);
  }
  if (st == LOOM_OK) {
    for (uint32_t i = 0; i < L.nsh; i++)
      if (L.region[i] != REG_NONE && L.sh[i].sh_type == SHT_PROGBITS)
        memcpy(L.image + sec_addr(&L, i, 0), L.obj + L.sh[i].sh_offset, L.sh[i].sh_size);
    st = apply(&L);
  }
  if (st == LOOM_OK) st = find_export(&L, names->run, &out->run);
  out->partial = out->finish = CG_HOST_NO_SYMBOL;
  if (st == LOOM_OK && names->has_partial) {
    st = find_export(&L, names->partial, &out->partial);
    if (st == LOOM_OK) st = find_export(&L, names->finish, &out->finish);
    out->acc_size = names->acc_size;
  }
  out->colpart = out->colfinish = CG_HOST_NO_SYMBOL;
  out->col_phases = 0;
  if (st == LOOM_OK && names->has_col) {
    st = find_export(&L, names->colpart, &out->colpart);
    if (st == LOOM_OK) st = find_export(&L, names->colfinish, &out->colfinish);
    out->acc_size = names->acc_size;
    out->col_phases = names->col_phases;
  }
  if (st == LOOM_OK) {
    for (uint32_t i = 0; i < L.nimport; i++) strtab += (uint32_t)strlen(sym_name(&L, L.import_sym[i])) + 1;
    size_t total = CG_HOST_IMAGE_HEADER + 4 * (size_t)L.nimport + (size_t)L.nreloc * CG_HOST_RELOC + strtab + L.text + L.ro + L.data;
    blob = ctx_calloc(ctx, 1, total);
    if (!blob) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: host image blob");
    else {
      uint32_t hdr[10] = {CG_HOST_IMAGE_MAGIC, CG_HOST_IMAGE_VERSION, L.text, L.ro, L.data, L.bss, L.nimport, L.nreloc, strtab, 0};
      for (int i = 0; i < 10; i++) put32(blob + 4 * i, hdr[i]);
      uint8_t *p = blob + CG_HOST_IMAGE_HEADER, *strs = p + 4 * (size_t)L.nimport + (size_t)L.nreloc * CG_HOST_RELOC;
      uint32_t so = 0;
      for (uint32_t i = 0; i < L.nimport; i++) {
        const char *nm = sym_name(&L, L.import_sym[i]);
        put32(p + 4 * i, so);
        memcpy(strs + so, nm, strlen(nm) + 1);
        so += (uint32_t)strlen(nm) + 1;
      }
      if (L.nreloc) memcpy(p + 4 * (size_t)L.nimport, L.relocs, (size_t)L.nreloc * CG_HOST_RELOC);
      uint8_t *code = strs + strtab;
      memcpy(code, L.image, L.text);
      memcpy(code + L.text, L.image + L.lay.ro_start, L.ro);
      memcpy(code + L.text + L.ro, L.image + L.lay.data_start, L.data);
      out->bytes = blob;
      out->size = total;
    }
  }
  ctx_free(ctx, L.region);
  ctx_free(ctx, L.sec_off);
  ctx_free(ctx, L.import_of);
  ctx_free(ctx, L.got_of);
  ctx_free(ctx, L.stub_of);
  ctx_free(ctx, L.import_sym);
  ctx_free(ctx, L.got_sym);
  ctx_free(ctx, L.stub_sym);
  ctx_free(ctx, L.image);
  ctx_free(ctx, L.relocs);
  return st;
}

/* ---- compile ---------------------------------------------------------------------------------------- */
static LoomStatus llvm_fail(Diag *d, const char *what, char *msg) {
  LoomStatus st = diag_error(d, LOOM_ERR_BACKEND, "host bundle: LLVM %s failed: %s", what, msg ? msg : "?");
  if (msg) LLVMDisposeMessage(msg);
  return st;
}

LoomStatus cg_host_aot_compile(CgHostAot *a, const KernelIr *k, int level, CgHostImage *out, Diag *d) {
  CgHostCpu cpu = {.cpu = level_cpu(level), .features = "", .vector_bits = "", .isas = level_isas(level)};
  return cg_host_aot_compile_cpu(a, k, &cpu, out, d);
}

LoomStatus cg_host_aot_compile_cpu(CgHostAot *a, const KernelIr *k, const CgHostCpu *hc, CgHostImage *out, Diag *d) {
  memset(out, 0, sizeof *out);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  LoomContext *ctx = a->ctx;
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(AOT_TRIPLE, &target, &err)) return llvm_fail(d, "target lookup", err);
  const char *cpu = hc->cpu;
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, AOT_TRIPLE, cpu, hc->features, LLVMCodeGenLevelAggressive,
                                                    LLVMRelocPIC, LLVMCodeModelSmall);
  if (!tm) return diag_error(d, LOOM_ERR_BACKEND, "host bundle: no LLVM target machine for %s", cpu);
  LLVMContextRef c = LLVMContextCreate();
  cg_llvm_quiet(c);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("loom_aot", c);
  LLVMSetTarget(mod, AOT_TRIPLE);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
  CgVecMath vec = {.isas = a->sleef ? hc->isas : "", .has_symbol = sleef_has, .user = a};
  const char *attrs[6] = {"target-cpu", cpu, "target-features", hc->features, "prefer-vector-width", hc->vector_bits};
  CgEntryNames names;
  LoomStatus st = cg_lower_host(ctx, c, mod, k, "loom_kernel", &vec, attrs, hc->vector_bits[0] ? 3 : 2, &names, d);
  if (st == LOOM_OK) {
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(po, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
    LLVMErrorRef e = cg_run_pipeline(mod, "default<O3>", tm, po, k);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
      char *msg = LLVMGetErrorMessage(e);
      st = diag_error(d, LOOM_ERR_BACKEND, "host bundle: LLVM optimization failed: %s", msg ? msg : "?");
      LLVMDisposeErrorMessage(msg);
    } else {
      cg_host_widen_half(mod, hc->features);
    }
  }
  LLVMMemoryBufferRef mb = NULL;
  if (st == LOOM_OK && LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &err, &mb))
    st = llvm_fail(d, "object emission", err);
  if (st == LOOM_OK)
    st = link_image(ctx, (const uint8_t *)LLVMGetBufferStart(mb), LLVMGetBufferSize(mb), &names, out, d);
  if (mb) LLVMDisposeMemoryBuffer(mb);
  LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  LLVMDisposeTargetMachine(tm);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  out->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
  if (st != LOOM_OK) cg_host_image_release(ctx, out);
  return st;
}
