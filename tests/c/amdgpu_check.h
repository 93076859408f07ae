/* amdgpu_check.h: checks of AMDGPU code objects and of the memory traffic of GPU code, shared by the AMD
 * tests (one translation unit each; static functions).
 *
 *  - amd_elf_read, amd_elf_has_kernel: the ELF header (EM_AMDGPU, HSA OS/ABI, the code object version's ABI version, a
 *    shared object, e_flags mach of the chip) and the symbol tables read here, with <elf.h>: every
 *    kernel has a FUNC symbol and a 64-byte OBJECT "<name>.kd" (its kernel descriptor), and no symbol
 *    is undefined.
 *  - amd_readelf: the same facts through llvm-readelf-19, an independent reader (header lines, the
 *    symbol table, and the NT_AMDGPU_METADATA note printed as YAML: per kernel the kernarg segment size,
 *    registers, LDS), for comparison with comgr's reading.
 *  - Traffic: the global memory bytes loaded and stored per iteration of an entry's innermost loops, read
 *    from the machine code: llvm-objdump-19's disassembly for AMDGPU (global_load / global_store / buffer /
 *    flat instructions, width from the mnemonic) and the PTX text for NVIDIA (ld.global / st.global,
 *    width from the vector count and type; accesses to the module's own .global / .const tables left out). Loops are the natural loops of the control flow graph
 *    (basic blocks, dominators, back edges); the test divides each innermost memory loop's bytes by the
 *    points it handles per iteration (which the lowering and LLVM's unrolling decide, per target).
 */
#ifndef LOOM_AMDGPU_CHECK_H
#define LOOM_AMDGPU_CHECK_H

#include <elf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif
#define AMD_OSABI_HSA 64
#define AMD_CHECK_FN static __attribute__((unused)) /* each test uses some */

typedef struct AmdTraffic {
  long load, store; /* bytes per iteration of one loop */
  int widest;       /* widest access in it, bytes */
} AmdTraffic;
#define AMD_MAXLOOPS 16 /* innermost memory loops kept per entry */
typedef struct AmdLoops {
  int n;
  AmdTraffic loop[AMD_MAXLOOPS]; /* the innermost loops with global memory operations, in code order */
} AmdLoops;

/* ---- files and processes ---------------------------------------------------------------------------- */

AMD_CHECK_FN const char *amd_tool(const char *name) {
  static char path[2][256];
  static int slot;
  char *p = path[slot++ & 1];
  snprintf(p, sizeof path[0], "/usr/lib/llvm-19/bin/%s", name);
  if (access(p, X_OK) == 0) return p;
  snprintf(p, sizeof path[0], "/usr/bin/%s-19", name);
  if (access(p, X_OK) == 0) return p;
  return NULL;
}

/* Writes bytes to a fresh temporary file; its path in out (cap bytes). */
AMD_CHECK_FN bool amd_write_temp(const void *bytes, size_t n, const char *suffix, char *out, size_t cap) {
  snprintf(out, cap, "/tmp/loom_amd_XXXXXX%s", suffix);
  int fd = mkstemps(out, (int)strlen(suffix));
  if (fd < 0) return false;
  bool ok = write(fd, bytes, n) == (ssize_t)n;
  close(fd);
  return ok;
}

/* The whole output of a shell command (malloc'ed), or NULL. */
AMD_CHECK_FN char *amd_run(const char *cmd) {
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (size_t r; buf && (r = fread(buf + n, 1, cap - n - 1, p)) > 0;) {
    n += r;
    if (cap - n < 4096) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
      }
      buf = nb;
    }
  }
  int rc = pclose(p);
  if (buf) buf[n] = 0;
  if (rc != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* ---- the ELF file, read here -------------------------------------------------------------------------- */

typedef struct AmdElfFacts {
  unsigned machine, osabi, abiversion, type, flags;
  int nfunc, nkd, nundef; /* FUNC symbols, 64-byte OBJECT *.kd symbols, undefined symbols (null one excluded) */
  char undef[128];        /* the first undefined symbol */
} AmdElfFacts;

/* Whether the symbol tables hold FUNC `name` and OBJECT `name`.kd of 64 bytes. */
AMD_CHECK_FN bool amd_elf_has_kernel(const void *code, size_t size, const char *name) {
  const unsigned char *b = code;
  const Elf64_Ehdr *eh = code;
  if (size < sizeof *eh || eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size) return false;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(b + eh->e_shoff);
  bool fn = false, kd = false;
  char kdname[160];
  snprintf(kdname, sizeof kdname, "%s.kd", name);
  for (int i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM) continue;
    if (sh[i].sh_link >= eh->e_shnum || sh[i].sh_offset + sh[i].sh_size > size) continue;
    const Elf64_Shdr *strs = &sh[sh[i].sh_link];
    const Elf64_Sym *sym = (const Elf64_Sym *)(b + sh[i].sh_offset);
    for (size_t j = 0; j < sh[i].sh_size / sizeof *sym; j++) {
      if (sym[j].st_name >= strs->sh_size) continue;
      const char *s = (const char *)b + strs->sh_offset + sym[j].st_name;
      if (!strcmp(s, name) && ELF64_ST_TYPE(sym[j].st_info) == STT_FUNC && sym[j].st_size > 0) fn = true;
      if (!strcmp(s, kdname) && ELF64_ST_TYPE(sym[j].st_info) == STT_OBJECT && sym[j].st_size == 64) kd = true;
    }
  }
  return fn && kd;
}

AMD_CHECK_FN bool amd_elf_read(const void *code, size_t size, AmdElfFacts *f) {
  memset(f, 0, sizeof *f);
  const unsigned char *b = code;
  const Elf64_Ehdr *eh = code;
  if (size < sizeof *eh || memcmp(b, ELFMAG, SELFMAG) || b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB)
    return false;
  f->machine = eh->e_machine;
  f->osabi = b[EI_OSABI];
  f->abiversion = b[EI_ABIVERSION];
  f->type = eh->e_type;
  f->flags = eh->e_flags;
  if (eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size) return false;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(b + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB) continue; /* .symtab (a superset of .dynsym) */
    if (sh[i].sh_link >= eh->e_shnum || sh[i].sh_offset + sh[i].sh_size > size) return false;
    const Elf64_Shdr *strs = &sh[sh[i].sh_link];
    const Elf64_Sym *sym = (const Elf64_Sym *)(b + sh[i].sh_offset);
    for (size_t j = 1; j < sh[i].sh_size / sizeof *sym; j++) {
      const char *s = sym[j].st_name < strs->sh_size ? (const char *)b + strs->sh_offset + sym[j].st_name : "?";
      int t = ELF64_ST_TYPE(sym[j].st_info);
      if (sym[j].st_shndx == SHN_UNDEF && f->nundef++ == 0) snprintf(f->undef, sizeof f->undef, "%s", s);
      if (t == STT_FUNC) f->nfunc++;
      size_t len = strlen(s);
      if (t == STT_OBJECT && len > 3 && !strcmp(s + len - 3, ".kd") && sym[j].st_size == 64) f->nkd++;
    }
  }
  return true;
}

/* ---- llvm-readelf: the independent reader ------------------------------------------------------------- */

typedef struct AmdReadelfKernel {
  char name[128];
  long kernarg, vgprs, sgprs, lds, priv, maxwg, wave;
} AmdReadelfKernel;
typedef struct AmdReadelf {
  bool ok;
  char machine[32], flags[96];
  int nkd; /* "<name>.kd" OBJECT symbols in .symtab */
  int nk;
  AmdReadelfKernel k[32];
  char target[96];
  int version[2];
} AmdReadelf;

AMD_CHECK_FN long amd_yaml_num(const char *line) {
  const char *c = strchr(line, ':');
  return c ? strtol(c + 1, NULL, 0) : -1;
}

/* llvm-readelf-19 --file-headers --symbols --notes of the code object at path. */
AMD_CHECK_FN void amd_readelf(const char *path, AmdReadelf *r) {
  memset(r, 0, sizeof *r);
  const char *tool = amd_tool("llvm-readelf");
  if (!tool) return;
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s --file-headers --symbols --notes %s 2>&1", tool, path);
  char *out = amd_run(cmd);
  if (!out) return;
  r->ok = true;
  bool symtab = false, version = false;
  int nver = 0;
  AmdReadelfKernel *k = NULL;
  for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
    const char *s = line + strspn(line, " ");
    if (!strncmp(s, "Machine:", 8)) snprintf(r->machine, sizeof r->machine, "%s", s + 8 + strspn(s + 8, " "));
    else if (!strncmp(s, "Flags:", 6)) snprintf(r->flags, sizeof r->flags, "%s", s + 6 + strspn(s + 6, " "));
    else if (!strncmp(s, "Symbol table '.symtab'", 22)) symtab = true;
    else if (!strncmp(s, "Symbol table", 12) || !strncmp(s, "Displaying notes", 16)) symtab = false;
    else if (symtab && strstr(s, " OBJECT ") && strlen(s) > 3 && !strcmp(s + strlen(s) - 3, ".kd")) r->nkd++;
    else if (!strncmp(line, "  - .", 5) && r->nk < 32) { /* a kernel of amdhsa.kernels (args are deeper) */
      k = &r->k[r->nk++];
      k->kernarg = k->vgprs = k->sgprs = k->lds = k->priv = k->maxwg = k->wave = -1;
    }
    if (!strncmp(line, "amdhsa.target:", 14)) snprintf(r->target, sizeof r->target, "%s", s + 14 + strspn(s + 14, " "));
    if (!strncmp(line, "amdhsa.version:", 15)) version = true;
    else if (version && !strncmp(line, "  - ", 4) && nver < 2) r->version[nver++] = atoi(line + 4);
    else if (line[0] != ' ') version = false;
    if (!k || strncmp(line, "    .", 5)) continue; /* a kernel's own keys: indent 4 */
    if (!strncmp(s, ".name:", 6)) snprintf(k->name, sizeof k->name, "%s", s + 6 + strspn(s + 6, " "));
    else if (!strncmp(s, ".kernarg_segment_size:", 22)) k->kernarg = amd_yaml_num(s);
    else if (!strncmp(s, ".vgpr_count:", 12)) k->vgprs = amd_yaml_num(s);
    else if (!strncmp(s, ".sgpr_count:", 12)) k->sgprs = amd_yaml_num(s);
    else if (!strncmp(s, ".group_segment_fixed_size:", 26)) k->lds = amd_yaml_num(s);
    else if (!strncmp(s, ".private_segment_fixed_size:", 28)) k->priv = amd_yaml_num(s);
    else if (!strncmp(s, ".max_flat_workgroup_size:", 25)) k->maxwg = amd_yaml_num(s);
    else if (!strncmp(s, ".wavefront_size:", 16)) k->wave = amd_yaml_num(s);
  }
  free(out);
}

/* ---- traffic ------------------------------------------------------------------------------------------ */

typedef struct AmdInsn {
  long addr;       /* instruction address (AMDGPU) or line number (PTX) */
  long target;     /* branch target, -1 when not a branch */
  int flow;        /* AMD_FLOW_* */
  int load, store; /* bytes of a global memory access */
} AmdInsn;
enum { AMD_FLOW_NEXT = 0, AMD_FLOW_COND, AMD_FLOW_JUMP, AMD_FLOW_END };

/* Bytes of a global / buffer / flat memory mnemonic's access (0: not one). */
AMD_CHECK_FN int amd_mem_width(const char *m, bool *store) {
  if (strncmp(m, "global_", 7) && strncmp(m, "buffer_", 7) && strncmp(m, "flat_", 5)) return 0;
  *store = strstr(m, "_store") != NULL;
  if (!*store && !strstr(m, "_load")) return 0; /* atomics and the like: none in Loom's kernels */
  static const struct { const char *suffix; int bytes; } w[] = {
      {"dwordx4", 16}, {"dwordx3", 12}, {"dwordx2", 8}, {"dword", 4}, {"b128", 16}, {"b96", 12}, {"b64", 8},
      {"b32", 4}, {"short", 2}, {"b16", 2}, {"u16", 2}, {"i16", 2}, {"byte", 1}, {"b8", 1}, {"u8", 1}, {"i8", 1}};
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
    if (strstr(m, w[i].suffix)) return w[i].bytes;
  return -1; /* unknown width: the caller fails */
}

/* The innermost memory loops of insns[0, n) (in address order): basic blocks, their dominators, the
 * natural loop of each back edge (a loop is all blocks of one header); an innermost memory loop has
 * global memory operations and no other such loop inside it. */
#define AMD_MAXB 1024
AMD_CHECK_FN int amd_cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return x < y ? -1 : x > y;
}
AMD_CHECK_FN AmdLoops amd_loops(const AmdInsn *in, int n) {
  AmdLoops t;
  memset(&t, 0, sizeof t);
  if (n <= 0) return t;
  /* blocks: leaders are the first instruction, branch targets and what follows a branch or an end */
  int *block = calloc((size_t)n, sizeof *block), nb = 0, nt = 0;
  long *targets = malloc(sizeof *targets * (size_t)n);
  for (int i = 0; i < n; i++)
    if (in[i].flow == AMD_FLOW_COND || in[i].flow == AMD_FLOW_JUMP) targets[nt++] = in[i].target;
  qsort(targets, (size_t)nt, sizeof *targets, amd_cmp_long);
  int first[AMD_MAXB];
  for (int i = 0; i < n; i++) {
    bool lead = i == 0 || in[i - 1].flow != AMD_FLOW_NEXT ||
                bsearch(&in[i].addr, targets, (size_t)nt, sizeof *targets, amd_cmp_long);
    if (lead && nb < AMD_MAXB) first[nb++] = i;
    block[i] = nb - 1;
  }
  free(targets);
  static unsigned char succ[AMD_MAXB][AMD_MAXB / 8], dom[AMD_MAXB][AMD_MAXB / 8];
  memset(succ, 0, sizeof succ);
  long ld[AMD_MAXB] = {0}, st[AMD_MAXB] = {0};
  int wide[AMD_MAXB] = {0};
#define BSET(a, i) ((a)[(i) >> 3] |= (unsigned char)(1u << ((i) & 7)))
#define BGET(a, i) (((a)[(i) >> 3] >> ((i) & 7)) & 1u)
  for (int b = 0; b < nb; b++) {
    int last = b + 1 < nb ? first[b + 1] - 1 : n - 1;
    for (int i = first[b]; i <= last; i++) {
      ld[b] += in[i].load, st[b] += in[i].store;
      int w = in[i].load > in[i].store ? in[i].load : in[i].store;
      if (w > wide[b]) wide[b] = w;
    }
    const AmdInsn *x = &in[last];
    if (x->flow != AMD_FLOW_JUMP && x->flow != AMD_FLOW_END && b + 1 < nb) BSET(succ[b], b + 1);
    if (x->flow == AMD_FLOW_COND || x->flow == AMD_FLOW_JUMP)
      for (int j = 0; j < n; j++) /* the target's block (addresses ascend) */
        if (in[j].addr >= x->target) {
          BSET(succ[b], block[j]);
          break;
        }
  }
  /* dominators (iterative; block 0 is the entry) */
  for (int b = 0; b < nb; b++) {
    memset(dom[b], b == 0 ? 0 : 0xff, sizeof dom[b]);
    BSET(dom[b], b);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int b = 1; b < nb; b++) {
      unsigned char nd[AMD_MAXB / 8];
      memset(nd, 0xff, sizeof nd);
      bool any = false;
      for (int p = 0; p < nb; p++)
        if (BGET(succ[p], b)) {
          any = true;
          for (size_t k = 0; k < sizeof nd; k++) nd[k] &= dom[p][k];
        }
      if (!any) memset(nd, 0, sizeof nd);
      BSET(nd, b);
      if (memcmp(nd, dom[b], sizeof nd)) memcpy(dom[b], nd, sizeof nd), changed = true;
    }
  }
  /* natural loops, merged per header */
  static unsigned char loop[AMD_MAXB][AMD_MAXB / 8];
  int header[AMD_MAXB], nl = 0;
  for (int b = 0; b < nb; b++)
    for (int h = 0; h < nb; h++) {
      if (!BGET(succ[b], h) || !BGET(dom[b], h)) continue;
      int li = 0;
      while (li < nl && header[li] != h) li++;
      if (li == nl) {
        header[nl] = h;
        memset(loop[nl], 0, sizeof loop[nl]);
        BSET(loop[nl], h);
        nl++;
      }
      int stack[AMD_MAXB], sp = 0;
      if (!BGET(loop[li], b)) BSET(loop[li], b), stack[sp++] = b;
      while (sp > 0) {
        int x = stack[--sp];
        for (int p = 0; p < nb; p++)
          if (BGET(succ[p], x) && !BGET(loop[li], p)) BSET(loop[li], p), stack[sp++] = p;
      }
    }
  long lb[AMD_MAXB], sb[AMD_MAXB];
  int wb[AMD_MAXB];
  for (int l = 0; l < nl; l++) {
    lb[l] = sb[l] = 0, wb[l] = 0;
    for (int b = 0; b < nb; b++)
      if (BGET(loop[l], b)) {
        lb[l] += ld[b], sb[l] += st[b];
        if (wide[b] > wb[l]) wb[l] = wide[b];
      }
  }
  for (int a = 0; a < nl && t.n < AMD_MAXLOOPS; a++) {
    if (lb[a] + sb[a] == 0) continue;
    bool inner = true;
    for (int c = 0; c < nl && inner; c++) {
      if (c == a || lb[c] + sb[c] == 0 || !BGET(loop[a], header[c])) continue;
      inner = false; /* loop c (its header inside a) is nested in a */
    }
    if (inner) t.loop[t.n++] = (AmdTraffic){lb[a], sb[a], wb[a]};
  }
#undef BSET
#undef BGET
  free(block);
  return t;
}

/* The innermost memory loops of every function of the disassembly (llvm-objdump -d) of the code object at
 * path, in names/out (up to max functions); returns how many, -1 when the tool fails. */
AMD_CHECK_FN int amd_objdump_traffic(const char *path, const char *chip, char names[][128], AmdLoops *out, int max) {
  const char *tool = amd_tool("llvm-objdump");
  if (!tool) return -1;
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s -d --mcpu=%s %s 2>&1", tool, chip, path);
  char *text = amd_run(cmd);
  if (!text) return -1;
  int nf = 0, n = 0, cap = 8192;
  AmdInsn *in = malloc(sizeof *in * (size_t)cap);
  long fstart = 0;
  for (char *line = strtok(text, "\n");; line = strtok(NULL, "\n")) {
    bool head = line && line[0] >= '0' && line[0] <= '9' && strchr(line, '<') && strstr(line, ">:");
    if (!line || head) {
      if (nf > 0 && nf <= max) out[nf - 1] = amd_loops(in, n);
      if (!line) break;
      n = 0;
      fstart = strtol(line, NULL, 16);
      if (nf < max) sscanf(strchr(line, '<') + 1, "%127[^>]", names[nf]);
      nf++;
      continue;
    }
    if (line[0] != '\t' || !in || n >= cap) continue;
    const char *c = strstr(line, "// ");
    if (!c) continue;
    AmdInsn x = {strtol(c + 3, NULL, 16), -1, AMD_FLOW_NEXT, 0, 0};
    char m[64] = "";
    sscanf(line + 1, "%63s", m);
    if (!strcmp(m, "s_endpgm") || !strncmp(m, "s_setpc", 7)) x.flow = AMD_FLOW_END;
    bool store = false;
    int w = amd_mem_width(m, &store);
    if (w < 0) w = 1000000; /* an unknown memory mnemonic: a figure no test accepts */
    if (store) x.store = w;
    else x.load = w;
    const char *t = strchr(c, '<');
    if ((!strncmp(m, "s_cbranch", 9) || !strcmp(m, "s_branch")) && t) {
      const char *plus = strchr(t, '+');
      x.target = fstart + (plus ? strtol(plus + 1, NULL, 16) : 0);
      x.flow = !strcmp(m, "s_branch") ? AMD_FLOW_JUMP : AMD_FLOW_COND;
    }
    in[n++] = x;
  }
  free(in);
  free(text);
  return nf < max ? nf : max;
}

/* Bytes of a PTX ld.global / st.global instruction (0: not one). */
AMD_CHECK_FN int ptx_mem_width(const char *op, bool *store) {
  *store = !strncmp(op, "st.global", 9);
  if (!*store && strncmp(op, "ld.global", 9)) return 0;
  int lanes = strstr(op, ".v4") ? 4 : strstr(op, ".v2") ? 2 : 1;
  const char *last = strrchr(op, '.');
  int bits = last ? atoi(last + 2) : 0; /* .f32, .u64, .b16, .s8 */
  return bits > 0 ? lanes * bits / 8 : -1;
}

/* Tables: the module's own .global / .const variables (libdevice's __cudart_i2opi_f, the Payne-Hanek
 * reduction's bits of 2/pi, read in a loop by an inlined sinf / cosf) are constants of the code, not a
 * point's data, which only reaches a kernel through pointers in its parameter block. An access whose
 * address is such a variable, or a register computed from one (mov, cvta, add, mad, ... of it; a
 * flow-insensitive fixpoint over the entry, so a pointer stepped around a loop stays a table pointer),
 * moves no data: ptx_traffic leaves it out. */
typedef struct PtxNames {
  int n;
  char name[256][40];
} PtxNames;

AMD_CHECK_FN bool ptx_names_has(const PtxNames *s, const char *name, size_t len) {
  for (int i = 0; i < s->n; i++)
    if (strlen(s->name[i]) == len && !strncmp(s->name[i], name, len)) return true;
  return false;
}

AMD_CHECK_FN void ptx_names_add(PtxNames *s, const char *name, size_t len) {
  if (s->n < 256 && len < sizeof s->name[0] && !ptx_names_has(s, name, len)) {
    memcpy(s->name[s->n], name, len);
    s->name[s->n++][len] = 0;
  }
}

/* The module-level .global / .const variables of PTX text (lines at column 0: "[.visible|.extern|.weak]
 * .global .align 4 .b8 name[24] = {...};"). */
AMD_CHECK_FN void ptx_module_vars(const char *ptx, PtxNames *vars) {
  vars->n = 0;
  for (const char *line = ptx; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
    const char *p = line;
    while (!strncmp(p, ".visible ", 9) || !strncmp(p, ".extern ", 8) || !strncmp(p, ".weak ", 6)) p = strchr(p, ' ') + 1;
    if (strncmp(p, ".global ", 8) && strncmp(p, ".const ", 7)) continue;
    while (*p == '.' || (*p >= '0' && *p <= '9')) /* the state space, .align n, the type */
      p += strcspn(p, " \n"), p += strspn(p, " ");
    size_t len = strcspn(p, "[ ;=\n");
    if (len) ptx_names_add(vars, p, len);
  }
}

/* Whether operand text op (a register, a variable, "name+8") names a table or a table register. */
AMD_CHECK_FN bool ptx_operand_is_table(const char *op, size_t len, const PtxNames *vars, const PtxNames *regs) {
  while (len && (*op == ' ' || *op == '[' || *op == '{' || *op == '-')) op++, len--;
  size_t base = strcspn(op, "+]}, ;");
  if (base > len) base = len;
  return base && (ptx_names_has(vars, op, base) || ptx_names_has(regs, op, base));
}

/* The registers of entry body `body` whose values are addresses in the module's tables. */
AMD_CHECK_FN void ptx_table_regs(const char *body, const PtxNames *vars, PtxNames *regs) {
  regs->n = 0;
  if (!vars->n) return;
  for (int before = -1; before != regs->n;) {
    before = regs->n;
    for (const char *line = body; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
      const char *p = line + strspn(line, " \t");
      if (*p == '@') p += strcspn(p, " \t"), p += strspn(p, " \t");
      if (*p == '.' || *p == '$' || *p == '/' || !strncmp(p, "ld.", 3) || !strncmp(p, "st.", 3)) continue;
      size_t oplen = strcspn(p, " \t;\n");
      const char *a = p + oplen + strspn(p + oplen, " \t");
      size_t end = strcspn(a, ";\n"), dlen = strcspn(a, ", ;\n");
      if (*a != '%' || dlen >= end || ptx_names_has(regs, a, dlen)) continue;
      for (const char *src = a + dlen; src < a + end; src += strcspn(src, ",;\n")) {
        src += strspn(src, ", ");
        if (ptx_operand_is_table(src, (size_t)(a + end - src), vars, regs)) {
          ptx_names_add(regs, a, dlen);
          break;
        }
      }
    }
  }
}

/* The innermost memory loops of entry `name` in PTX text (accesses to the module's tables left out). */
AMD_CHECK_FN AmdLoops ptx_traffic(const char *ptx, const char *name) {
  AmdLoops none;
  memset(&none, 0, sizeof none);
  char head[160];
  snprintf(head, sizeof head, ".entry %s(", name);
  const char *s = strstr(ptx, head);
  if (!s) return none;
  const char *e = strstr(s, "\n}\n"); /* the end of the entry's body (called .funcs follow it) */
  size_t len = e ? (size_t)(e - s) : strlen(s);
  char *body = strndup(s, len);
  static PtxNames vars, regs; /* (large: static, like amd_loops' tables) */
  ptx_module_vars(ptx, &vars);
  ptx_table_regs(body, &vars, &regs);
  int n = 0, cap = 8192, nlab = 0;
  AmdInsn *in = malloc(sizeof *in * (size_t)cap);
  struct { char name[32]; long line; } *lab = malloc(sizeof *lab * 1024);
  long lineno = 0;
  for (char *line = strtok(body, "\n"); line; line = strtok(NULL, "\n"), lineno++) /* labels first */
    if (line[0] == '$' && strchr(line, ':') && nlab < 1024) {
      sscanf(line, "%31[^:]", lab[nlab].name);
      lab[nlab++].line = lineno;
    }
  free(body);
  body = strndup(s, len);
  lineno = 0;
  for (char *line = strtok(body, "\n"); line && n < cap; line = strtok(NULL, "\n"), lineno++) {
    const char *p = line + strspn(line, " \t");
    bool pred = *p == '@';
    if (pred) p += strcspn(p, " \t"), p += strspn(p, " \t"); /* a predicate */
    char op[64] = "", arg[64] = "";
    sscanf(p, "%63s %63s", op, arg);
    AmdInsn x = {lineno, -1, AMD_FLOW_NEXT, 0, 0};
    if (!strncmp(op, "ret", 3) || !strncmp(op, "exit", 4)) x.flow = pred ? AMD_FLOW_NEXT : AMD_FLOW_END;
    bool store = false;
    int w = ptx_mem_width(op, &store);
    if (w < 0) w = 1000000;
    const char *addr = w ? strchr(p, '[') : NULL;
    if (addr && ptx_operand_is_table(addr, strcspn(addr, "]"), &vars, &regs)) w = 0; /* a table's constant */
    if (store) x.store = w;
    else x.load = w;
    if (!strncmp(op, "bra", 3)) {
      arg[strcspn(arg, ";")] = 0;
      for (int i = 0; i < nlab; i++)
        if (!strcmp(lab[i].name, arg)) x.target = lab[i].line;
      x.flow = pred ? AMD_FLOW_COND : AMD_FLOW_JUMP;
    }
    in[n++] = x;
  }
  AmdLoops t = amd_loops(in, n);
  free(lab);
  free(in);
  free(body);
  return t;
}

/* ---- one code object, every structural check (tests that are not test_amdgpu.c) --------------------- */
#ifdef LOOM_CODEGEN_H
/* The checks test_amdgpu.c makes, for a code object of chip and code object version cov whose kernels
 * each take one explicit by_value argument (Loom's parameter block; explicit_args false: any layout):
 * ELF, descriptors, no undefined symbol, comgr's metadata equal to llvm-readelf's, registers / LDS
 * within the chip's limits for 1024-thread blocks, no scratch: no VGPR spill, and SGPR spills only into
 * VGPR lanes (v_writelane / v_readlane, no memory; LLVM's choice for the Philox partial kernel on gfx90a). false with why filled on the first
 * failure; *nkernels: the kernels found. */
AMD_CHECK_FN bool amd_check_code_object(LoomContext *ctx, const void *co, size_t n, const CgAmdChip *chip, int cov,
                                  bool explicit_args, int *nkernels, char *why, size_t cap) {
  *nkernels = 0;
  AmdElfFacts f;
  if (!amd_elf_read(co, n, &f)) return snprintf(why, cap, "not an ELF64 file"), false;
  if (f.machine != EM_AMDGPU || f.osabi != AMD_OSABI_HSA || f.abiversion != (unsigned)(cov == 4 ? 2 : 3) ||
      f.type != ET_DYN || (f.flags & 0xffu) != chip->mach)
    return snprintf(why, cap, "ELF machine %u osabi %u abi %u type %u flags 0x%x", f.machine, f.osabi, f.abiversion,
                    f.type, f.flags), false;
  if (f.nundef) return snprintf(why, cap, "%d undefined symbols (%s)", f.nundef, f.undef), false;
  CgAmdMeta meta;
  Diag d = {.status = LOOM_OK};
  if (cg_amdgpu_read_metadata(ctx, co, n, &meta, &d) != LOOM_OK) return snprintf(why, cap, "metadata: %.400s", d.msg), false;
  bool ok = true;
  *nkernels = meta.nkernels;
  if (meta.nkernels < 1 || f.nkd != meta.nkernels || meta.version[1] != (cov == 4 ? 1 : 2))
    ok = false, snprintf(why, cap, "%d kernels, %d descriptors, metadata version %d.%d", meta.nkernels, f.nkd,
                         meta.version[0], meta.version[1]);
  char path[256];
  AmdReadelf re;
  memset(&re, 0, sizeof re);
  if (ok && amd_write_temp(co, n, ".co", path, sizeof path)) {
    amd_readelf(path, &re);
    unlink(path);
  }
  if (ok && (!re.ok || strcmp(re.machine, "EM_AMDGPU") || !strstr(re.flags, chip->name) || re.nk != meta.nkernels))
    ok = false, snprintf(why, cap, "llvm-readelf: %s, machine %s, flags %s, %d kernels", re.ok ? "ran" : "did not run",
                         re.machine, re.flags, re.nk);
  int waves = (1024 + chip->wave - 1) / chip->wave, per_simd = (waves + chip->simds - 1) / chip->simds;
  for (int i = 0; ok && i < meta.nkernels; i++) {
    const CgAmdKernelMeta *k = &meta.kernels[i];
    if (!amd_elf_has_kernel(co, n, k->name))
      ok = false, snprintf(why, cap, "%s: no FUNC or 64-byte descriptor", k->name);
    int nexplicit = 0;
    for (int j = 0; j < k->nargs; j++) nexplicit += strncmp(k->args[j].kind, "hidden_", 7) != 0;
    if (ok && explicit_args &&
        (nexplicit != 1 || strcmp(k->args[0].kind, "by_value") || k->args[0].offset != 0 || k->args[0].size % 8 ||
         k->kernarg_size < k->args[0].size))
      ok = false, snprintf(why, cap, "%s: %d explicit arguments, first %s @%u size %u, kernarg %u", k->name, nexplicit,
                           k->nargs ? k->args[0].kind : "-", k->nargs ? k->args[0].offset : 0,
                           k->nargs ? k->args[0].size : 0, k->kernarg_size);
    for (int j = 0; ok && j < k->nargs; j++)
      if (k->args[j].offset + k->args[j].size > k->kernarg_size)
        ok = false, snprintf(why, cap, "%s: argument %d outside the kernarg segment", k->name, j);
    int vg = (k->vgprs + 7) / 8 * 8;
    if (ok && (k->wave != (uint32_t)chip->wave || k->max_flat_workgroup < 1024 || k->vgprs <= 0 ||
               k->vgprs > chip->max_vgprs || vg * per_simd > chip->vgpr_file || k->sgprs > chip->max_sgprs ||
               k->group_segment > (uint32_t)chip->lds_bytes || k->vgpr_spills > 0 ||
               (k->sgpr_spills > 0 && k->private_segment > 0)))
      ok = false, snprintf(why, cap, "%s: wave %u, max workgroup %u, %d VGPRs, %d SGPRs, LDS %u, spills %d/%d, scratch %u",
                           k->name, k->wave, k->max_flat_workgroup, k->vgprs, k->sgprs, k->group_segment,
                           k->vgpr_spills, k->sgpr_spills, k->private_segment);
    const AmdReadelfKernel *rk = NULL;
    for (int j = 0; j < re.nk && !rk; j++)
      if (!strcmp(re.k[j].name, k->name)) rk = &re.k[j];
    if (ok && (!rk || rk->kernarg != k->kernarg_size || rk->vgprs != k->vgprs || rk->sgprs != k->sgprs ||
               rk->lds != k->group_segment))
      ok = false, snprintf(why, cap, "%s: llvm-readelf and comgr disagree", k->name);
  }
  cg_amdgpu_meta_free(ctx, &meta);
  return ok;
}
#endif

#endif /* LOOM_AMDGPU_CHECK_H */
