/* SPDX-License-Identifier: Apache-2.0 */
/* bundle_format.c: the bundle file format (runtime/bundle.h): CRC-32C, the key hash and the validating
 * reader (the writer is bundle_write.c).
 *
 * Reader approach: nothing is trusted before it is checked. The header is checked first (magic, then the
 * major version, so that a bundle of another version is named as such even if its header changed, then
 * its CRC, then the file size it announces against the bytes given: truncation and trailing garbage are
 * both errors), then the section table (bounds, CRC), then every section (bounds inside the area between
 * header and table, CRC), then every record, decoded into host-order structures whose string pointers
 * all point at NUL-terminated strings inside STRINGS. Counts are checked against section sizes before any
 * allocation, and every index against the array it indexes. Blob contents are checked later, by
 * rt_bundle_code_check, only for the code a loader actually uses.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "runtime/bundle.h"

/* ---- CRC-32C (slicing by 8) ------------------------------------------------------------------------ */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++) crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

uint32_t rt_crc32c(uint32_t crc, const void *data, size_t n) {
  pthread_once(&crc_once, crc_init);
  const uint8_t *p = data;
  uint32_t c = ~crc;
  while (n >= 8) {
    uint32_t lo = c ^ rb_get32(p), hi = rb_get32(p + 4);
    c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^ crc_table[5][(lo >> 16) & 0xff] ^
        crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
        crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
  return ~c;
}

uint64_t rt_bundle_key_hash(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

/* ---- names ---------------------------------------------------------------------------------------- */
const char *rt_bundle_target_kind_name(uint32_t kind) {
  switch (kind) {
  case RB_TARGET_HOST_X86_64: return "host x86-64";
  case RB_TARGET_CUDA_CUBIN: return "CUDA cubin";
  case RB_TARGET_CUDA_PTX: return "CUDA PTX";
  case RB_TARGET_AMDGPU: return "AMDGPU code object";
  default: return "unknown";
  }
}

const char *rt_bundle_target_label(uint32_t kind, uint32_t arch, char *buf, size_t cap) {
  switch (kind) {
  case RB_TARGET_HOST_X86_64:
    snprintf(buf, cap, "%s", arch >= 4 ? "host-avx512" : arch >= 3 ? "host-avx2" : "host");
    break;
  case RB_TARGET_CUDA_CUBIN: snprintf(buf, cap, "sm_%u", arch); break;
  case RB_TARGET_CUDA_PTX: snprintf(buf, cap, "ptx_sm_%u", arch); break;
  case RB_TARGET_AMDGPU: snprintf(buf, cap, "gfx%x", arch); break;
  default: snprintf(buf, cap, "target-%u-%u", kind, arch); break;
  }
  return buf;
}

/* ---- reader --------------------------------------------------------------------------------------- */
typedef struct Reader {
  LoomContext *ctx;
  const uint8_t *data;
  size_t size;
  const char *what;
  Diag *d;
  const uint8_t *sec[RB_SEC_FUSE + 1]; /* [RB_SEC_FUSE]: optional (format 1.2) */
  uint64_t sec_size[RB_SEC_FUSE + 1];
} Reader;

static LoomStatus bad(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static LoomStatus bad(Reader *r, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return diag_error(r->d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: %s", r->what, msg);
}

/* A string reference: NUL-terminated inside STRINGS (whose last byte is NUL, checked once). */
static LoomStatus str_at(Reader *r, uint32_t off, const char *field, const char **out) {
  if (off >= r->sec_size[RB_SEC_STRINGS])
    return bad(r, "%s refers to string %u, past the string table (%llu bytes): corrupted", field, off,
               (unsigned long long)r->sec_size[RB_SEC_STRINGS]);
  *out = (const char *)r->sec[RB_SEC_STRINGS] + off;
  return LOOM_OK;
}

static bool c_identifier(const char *s) {
  if (!s[0] || strlen(s) > 63 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
  return true;
}

static const char *sec_name(uint32_t kind) {
  static const char *const names[] = {"?", "STRINGS", "META", "TARGETS", "KERNELS", "BUFFERS", "CODE", "ENTRIES", "BLOBS",
                                      "FUSE"};
  return kind <= RB_SEC_FUSE ? names[kind] : "unknown";
}

static LoomStatus read_header(Reader *r, uint64_t *table_off, uint32_t *nsec, uint32_t *table_crc, uint16_t *major,
                              uint16_t *minor) {
  if (r->size < 8 || memcmp(r->data, RB_MAGIC, 8) != 0)
    return r->size < 8 && memcmp(r->data, RB_MAGIC, r->size) == 0
               ? bad(r, "truncated: %zu bytes, a bundle header has %d", r->size, RB_HEADER_SIZE)
               : bad(r, "not a loom bundle (the file does not start with \"%s\")", RB_MAGIC);
  if (r->size < 12) return bad(r, "truncated: %zu bytes, a bundle header has %d", r->size, RB_HEADER_SIZE);
  *major = rb_get16(r->data + 8);
  *minor = rb_get16(r->data + 10);
  if (*major != RB_MAJOR)
    return bad(r, "format version %u.%u; this loom reads version %d.x (rebuild the bundle with this loom's loomc)",
               *major, *minor, RB_MAJOR);
  if (r->size < RB_HEADER_SIZE) return bad(r, "truncated: %zu bytes, a bundle header has %d", r->size, RB_HEADER_SIZE);
  if (rt_crc32c(0, r->data, 60) != rb_get32(r->data + 60)) return bad(r, "header checksum mismatch: the file is corrupted");
  if (rb_get32(r->data + 12) != RB_HEADER_SIZE) return bad(r, "header size %u, expected %d", rb_get32(r->data + 12), RB_HEADER_SIZE);
  uint64_t fsize = rb_get64(r->data + 16);
  if (fsize > r->size)
    return bad(r, "truncated: the header says %llu bytes, the file has %zu", (unsigned long long)fsize, r->size);
  if (fsize < r->size)
    return bad(r, "%llu bytes after the end the header gives (%llu): not one bundle", (unsigned long long)(r->size - fsize),
               (unsigned long long)fsize);
  *table_off = rb_get64(r->data + 24);
  *nsec = rb_get32(r->data + 32);
  *table_crc = rb_get32(r->data + 36);
  return LOOM_OK;
}

static LoomStatus read_sections(Reader *r, uint64_t table_off, uint32_t nsec, uint32_t table_crc) {
  if (nsec == 0 || nsec > 64) return bad(r, "%u sections (1 to 64 expected): corrupted", nsec);
  uint64_t tsize = (uint64_t)nsec * RB_SECTION_ENTRY;
  if (table_off < RB_HEADER_SIZE || table_off > r->size || tsize > r->size - table_off)
    return bad(r, "the section table (%u entries at offset %llu) lies outside the file: truncated or corrupted", nsec,
               (unsigned long long)table_off);
  const uint8_t *t = r->data + table_off;
  if (rt_crc32c(0, t, (size_t)tsize) != table_crc) return bad(r, "section table checksum mismatch: the file is corrupted");
  for (uint32_t i = 0; i < nsec; i++) {
    const uint8_t *e = t + (size_t)i * RB_SECTION_ENTRY;
    uint32_t kind = rb_get32(e), flags = rb_get32(e + 4), crc = rb_get32(e + 24);
    uint64_t off = rb_get64(e + 8), size = rb_get64(e + 16);
    if (off < RB_HEADER_SIZE || off > table_off || size > table_off - off)
      return bad(r, "section %u (%s) at offset %llu, %llu bytes, lies outside the data area: corrupted", i,
                 sec_name(kind), (unsigned long long)off, (unsigned long long)size);
    const uint8_t *p = r->data + off;
    bool per_record = kind == RB_SEC_BLOBS && (flags & RB_SECF_PER_RECORD_CRC);
    if (!per_record && rt_crc32c(0, p, (size_t)size) != crc)
      return bad(r, "section %s checksum mismatch: the file is corrupted", sec_name(kind));
    if (kind == 0 || kind > RB_SEC_FUSE) continue; /* a later minor version's section: checked, skipped */
    if (r->sec[kind]) return bad(r, "section %s appears twice", sec_name(kind));
    r->sec[kind] = p;
    r->sec_size[kind] = size;
  }
  for (uint32_t k = 1; k <= RB_SEC_LAST; k++)
    if (!r->sec[k]) return bad(r, "section %s is missing", sec_name(k));
  /* bytes between the header, the sections and the table are padding and must be zero, so that every
   * byte of a bundle is covered by a checksum or by this check */
  uint64_t at = RB_HEADER_SIZE;
  for (;;) {
    uint64_t next = table_off, end = table_off;
    for (uint32_t i = 0; i < nsec; i++) { /* the section starting first at or after `at` */
      const uint8_t *e = t + (size_t)i * RB_SECTION_ENTRY;
      uint64_t off = rb_get64(e + 8), size = rb_get64(e + 16);
      if (off >= at && off < next) next = off, end = off + size;
      if (off < at && off + size > at) return bad(r, "sections overlap: corrupted");
    }
    for (uint64_t i = at; i < next; i++)
      if (r->data[i]) return bad(r, "non-zero padding at offset %llu: corrupted", (unsigned long long)i);
    if (next == table_off) break;
    at = end > at ? end : at + 1;
  }
  if (r->sec_size[RB_SEC_STRINGS] == 0 || r->sec[RB_SEC_STRINGS][0] != 0 ||
      r->sec[RB_SEC_STRINGS][r->sec_size[RB_SEC_STRINGS] - 1] != 0)
    return bad(r, "the string table does not start and end with a NUL byte: corrupted");
  return LOOM_OK;
}

/* Number of records of `rec` bytes in section kind, checked. */
static LoomStatus records(Reader *r, uint32_t kind, uint32_t rec, int32_t *n) {
  uint64_t size = r->sec_size[kind];
  if (size % rec) return bad(r, "section %s has %llu bytes, not a multiple of its %u-byte records", sec_name(kind),
                             (unsigned long long)size, rec);
  if (size / rec > (uint64_t)INT32_MAX / 2) return bad(r, "section %s has too many records", sec_name(kind));
  *n = (int32_t)(size / rec);
  return LOOM_OK;
}

/* A scalar parameter's dtype: a compute dtype (ir.h), never complex. */
static bool param_dtype_ok(uint8_t t) {
  switch (t) {
  case LOOM_BOOL: case LOOM_INT8: case LOOM_INT16: case LOOM_INT32: case LOOM_INT64: case LOOM_UINT8: case LOOM_UINT16:
  case LOOM_UINT32: case LOOM_UINT64: case LOOM_FLOAT32: case LOOM_FLOAT64: return true;
  default: return false;
  }
}

static uint32_t target_abi(uint32_t kind) { return kind == RB_TARGET_HOST_X86_64 ? RB_HOST_ABI : RB_GPU_ABI; }

static LoomStatus check_gpu_facts(Reader *r, int32_t ci, const RtBundleCode *c, const RtBundleKernel *k) {
  const uint32_t *f = c->facts;
  if (f[RB_GPU_STRATEGY] > 2) return bad(r, "code %d: unknown GPU strategy %u", ci, f[RB_GPU_STRATEGY]);
  if (f[RB_GPU_BLOCK] > 1024 || f[RB_GPU_VEC_LANES] > 64 || f[RB_GPU_VEC_ALIGN] > 256 || f[RB_GPU_ACC_SIZE] > 4096 ||
      f[RB_GPU_CACHE_K] > 4096 || f[RB_GPU_PART_LANES] > 64 || f[RB_GPU_CACHE_LANES] > 64)
    return bad(r, "code %d: GPU launch facts out of range: corrupted", ci);
  if (f[RB_GPU_WAVE] != 32 && f[RB_GPU_WAVE] != 64) return bad(r, "code %d: GPU wave of %u threads", ci, f[RB_GPU_WAVE]);
  if ((f[RB_GPU_SPLIT_REDUCE] & f[RB_GPU_SPLIT_MAP]) || (f[RB_GPU_SPLIT_REDUCE] && !(f[RB_GPU_SPLIT_REDUCE] & 1u)) ||
      (f[RB_GPU_SPLIT_MAP] && !f[RB_GPU_SPLIT_REDUCE]))
    return bad(r, "code %d: GPU phase split %#x / %#x is not a phase list: corrupted", ci, f[RB_GPU_SPLIT_REDUCE],
               f[RB_GPU_SPLIT_MAP]);
  if (f[RB_GPU_VEC_LANES] && (f[RB_GPU_VEC_ALIGN] == 0 || (f[RB_GPU_VEC_ALIGN] & (f[RB_GPU_VEC_ALIGN] - 1))))
    return bad(r, "code %d: vector alignment %u is not a power of two", ci, f[RB_GPU_VEC_ALIGN]);
  uint64_t want = (uint64_t)k->ndim + (uint64_t)k->nbuf + (uint64_t)k->nbuf * (uint64_t)k->ndim + CG_GPU_EXTRA +
                  (uint64_t)k->nparam;
  if (f[RB_GPU_NWORDS] != want)
    return bad(r, "code %d: %u parameter words, the kernel's signature needs %llu", ci, f[RB_GPU_NWORDS],
               (unsigned long long)want);
  uint32_t all = f[RB_GPU_ENTRIES_ALL], have = f[RB_GPU_ENTRIES];
  /* a bundle holds every entry the lowering made (the launcher may pick any), `main` always among them */
  if ((all & ~(uint32_t)CG_ENTRY_ALL) || have != all || !(have & CG_ENTRY_MAIN))
    return bad(r, "code %d: GPU entry set 0x%x of 0x%x is invalid", ci, have, all);
  for (int i = 0; i < RB_GPU_NENTRY; i++) {
    bool present = (have >> i) & 1;
    if (present != (c->names[i][0] != 0) || strlen(c->names[i]) > 63)
      return bad(r, "code %d: GPU entry %d name '%.64s' does not match the entry set", ci, i, c->names[i]);
  }
  return LOOM_OK;
}

/* Sorts code indices by blob address (merge sort). */
static void sort_blobs(const RtBundle *b, int32_t *idx, int32_t *tmp, int32_t n) {
  if (n < 2) return;
  int32_t h = n / 2, i = 0, j = h, k = 0;
  sort_blobs(b, idx, tmp, h);
  sort_blobs(b, idx + h, tmp, n - h);
  while (i < h && j < n) tmp[k++] = b->codes[idx[j]].blob < b->codes[idx[i]].blob ? idx[j++] : idx[i++];
  while (i < h) tmp[k++] = idx[i++];
  while (j < n) tmp[k++] = idx[j++];
  memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

/* Bytes of BLOBS outside every blob are alignment padding and must be zero (blobs are checked by their
 * own CRCs, so this makes every byte of the section covered). */
static LoomStatus check_blob_padding(Reader *r, const RtBundle *b) {
  const uint8_t *base = r->sec[RB_SEC_BLOBS];
  uint64_t size = r->sec_size[RB_SEC_BLOBS], at = 0;
  int32_t *idx = ctx_alloc(r->ctx, 2 * ((size_t)b->ncode + 1) * sizeof *idx);
  if (!idx) return diag_error(r->d, LOOM_ERR_OUT_OF_MEMORY, "bundle %s: out of memory (blob index)", r->what);
  for (int32_t i = 0; i < b->ncode; i++) idx[i] = i;
  sort_blobs(b, idx, idx + b->ncode + 1, b->ncode);
  LoomStatus st = LOOM_OK;
  for (int32_t n = 0; n <= b->ncode && st == LOOM_OK; n++) {
    uint64_t next = n < b->ncode ? (uint64_t)(b->codes[idx[n]].blob - base) : size;
    for (uint64_t i = at; i < next && st == LOOM_OK; i++)
      if (base[i]) st = bad(r, "non-zero padding in the code section at %llu: corrupted", (unsigned long long)i);
    if (n < b->ncode && next + b->codes[idx[n]].blob_size > at) at = next + b->codes[idx[n]].blob_size;
  }
  ctx_free(r->ctx, idx);
  return st;
}

static bool same_signature(const RtBundleKernel *a, const RtBundleKernel *b) {
  if (a->ndim != b->ndim || a->nkeep != b->nkeep || a->nbuf != b->nbuf || a->nparam != b->nparam) return false;
  for (int32_t p = 0; p < a->nparam; p++)
    if (a->params[p].dtype != b->params[p].dtype) return false;
  for (int32_t i = 0; i < a->nbuf; i++)
    if (a->bufs[i].dtype != b->bufs[i].dtype || a->bufs[i].is_output != b->bufs[i].is_output ||
        memcmp(a->bufs[i].layout, b->bufs[i].layout, (size_t)a->ndim) != 0)
      return false;
  return true;
}

static LoomStatus decode(Reader *r, RtBundle *b) {
  LoomStatus st;
  const uint8_t *m = r->sec[RB_SEC_META];
  if (r->sec_size[RB_SEC_META] < RB_REC_META) return bad(r, "section META is %llu bytes, shorter than %d",
                                                        (unsigned long long)r->sec_size[RB_SEC_META], RB_REC_META);
  if ((st = str_at(r, rb_get32(m), "META producer", &b->producer)) || (st = str_at(r, rb_get32(m + 4), "META version", &b->loom_version)) ||
      (st = str_at(r, rb_get32(m + 8), "META LLVM version", &b->llvm_version)))
    return st;
  int32_t nbufrec = 0;
  if ((st = records(r, RB_SEC_TARGETS, RB_REC_TARGET, &b->ntarget)) || (st = records(r, RB_SEC_KERNELS, RB_REC_KERNEL, &b->nkernel)) ||
      (st = records(r, RB_SEC_BUFFERS, RB_REC_BUFFER, &nbufrec)) || (st = records(r, RB_SEC_CODE, RB_REC_CODE, &b->ncode)) ||
      (st = records(r, RB_SEC_ENTRIES, RB_REC_ENTRY, &b->nentry)))
    return st;
  LoomContext *ctx = r->ctx;
  b->targets = ctx_calloc(ctx, (size_t)b->ntarget + 1, sizeof *b->targets);
  b->kernels = ctx_calloc(ctx, (size_t)b->nkernel + 1, sizeof *b->kernels);
  b->codes = ctx_calloc(ctx, (size_t)b->ncode + 1, sizeof *b->codes);
  b->entries = ctx_calloc(ctx, (size_t)b->nentry + 1, sizeof *b->entries);
  b->bufs = ctx_calloc(ctx, (size_t)nbufrec + 1, sizeof *b->bufs);
  b->entry_sorted = ctx_calloc(ctx, (size_t)b->nentry + 1, sizeof *b->entry_sorted);
  if (!b->targets || !b->kernels || !b->codes || !b->entries || !b->bufs || !b->entry_sorted)
    return diag_error(r->d, LOOM_ERR_OUT_OF_MEMORY, "bundle %s: out of memory decoding %d kernels", r->what, b->nkernel);

  for (int32_t i = 0; i < b->ntarget; i++) {
    const uint8_t *p = r->sec[RB_SEC_TARGETS] + (size_t)i * RB_REC_TARGET;
    RtBundleTarget *t = &b->targets[i];
    t->kind = rb_get32(p);
    t->arch = rb_get32(p + 4);
    t->abi = rb_get32(p + 8);
    if ((st = str_at(r, rb_get32(p + 12), "target name", &t->name)) || (st = str_at(r, rb_get32(p + 16), "target description", &t->desc)))
      return st;
    if (t->kind < RB_TARGET_HOST_X86_64 || t->kind > RB_TARGET_AMDGPU)
      return bad(r, "target %d ('%.64s') has unknown kind %u (made by a newer loomc?)", i, t->name, t->kind);
    if (t->abi != target_abi(t->kind))
      return bad(r, "target %d ('%.64s') uses %s calling convention %u; this loom runs version %u (rebuild the bundle)", i,
                 t->name, rt_bundle_target_kind_name(t->kind), t->abi, target_abi(t->kind));
  }
  for (int32_t i = 0; i < nbufrec; i++) {
    const uint8_t *p = r->sec[RB_SEC_BUFFERS] + (size_t)i * RB_REC_BUFFER;
    KBuffer *kb = &b->bufs[i];
    if (p[0] >= LOOM_DTYPE_COUNT || p[1] > RB_BUF_PARAM)
      return bad(r, "buffer record %d: dtype %u or output flag %u invalid", i, p[0], p[1]);
    kb->dtype = p[0];
    kb->is_output = p[1];
    for (int j = 0; j < LOOM_MAX_RANK; j++) {
      if (p[4 + j] >= KL_COUNT) return bad(r, "buffer record %d: layout class %u invalid", i, p[4 + j]);
      kb->layout[j] = p[4 + j];
    }
  }
  for (int32_t i = 0; i < b->nkernel; i++) {
    const uint8_t *p = r->sec[RB_SEC_KERNELS] + (size_t)i * RB_REC_KERNEL;
    RtBundleKernel *k = &b->kernels[i];
    if ((st = str_at(r, rb_get32(p), "kernel name", &k->name)) || (st = str_at(r, rb_get32(p + 4), "kernel key", &k->key)))
      return st;
    k->keylen = strlen(k->key);
    k->key_hash = rb_get64(p + 8);
    k->ndim = p[16];
    k->nkeep = p[17];
    k->index_bits = p[18];
    uint32_t nbuf = rb_get32(p + 20), first = rb_get32(p + 24);
    k->code_first = rb_get32(p + 28);
    k->ncode = rb_get32(p + 32);
    k->entry = (int32_t)rb_get32(p + 36);
    if (!k->keylen || rt_bundle_key_hash(k->key, k->keylen) != k->key_hash)
      return bad(r, "kernel %d ('%.64s'): its key does not match its hash: corrupted", i, k->name);
    if (k->ndim < 1 || k->ndim > LOOM_MAX_RANK || k->nkeep > k->ndim || (k->index_bits != 32 && k->index_bits != 64))
      return bad(r, "kernel %d ('%.64s'): ndim %d, keep %d, index %d out of range", i, k->name, k->ndim, k->nkeep, k->index_bits);
    if (nbuf < 1 || nbuf > RB_MAX_KERNEL_BUFS || first > (uint32_t)nbufrec || nbuf > (uint32_t)nbufrec - first)
      return bad(r, "kernel %d ('%.64s'): buffers [%u, +%u) outside the %d buffer records", i, k->name, first, nbuf, nbufrec);
    if (k->code_first > (uint32_t)b->ncode || k->ncode > (uint32_t)b->ncode - k->code_first)
      return bad(r, "kernel %d ('%.64s'): code records [%u, +%u) outside the %d records", i, k->name, k->code_first, k->ncode,
                 b->ncode);
    if (k->entry < -1 || k->entry >= b->nentry) return bad(r, "kernel %d ('%.64s'): entry %d out of range", i, k->name, k->entry);
    uint32_t nparam = rb_get32(p + 40);
    if (nparam > RB_MAX_KERNEL_BUFS || nparam > (uint32_t)nbufrec - first - nbuf)
      return bad(r, "kernel %d ('%.64s'): %u parameters outside the %d buffer records", i, k->name, nparam, nbufrec);
    for (uint32_t j = 0; j < nbuf + nparam; j++) {
      const KBuffer *kb = &b->bufs[first + j];
      bool param = kb->is_output == RB_BUF_PARAM;
      if (param != (j >= nbuf) || (param && !param_dtype_ok(kb->dtype)))
        return bad(r, "kernel %d ('%.64s'): buffer record %u is not a %s", i, k->name, first + j,
                   j >= nbuf ? "scalar parameter" : "buffer");
    }
    k->nbuf = (int32_t)nbuf;
    k->bufs = &b->bufs[first];
    k->nparam = (int32_t)nparam;
    k->params = &b->bufs[first + nbuf];
  }
  uint64_t blobs = r->sec_size[RB_SEC_BLOBS];
  for (int32_t i = 0; i < b->ncode; i++) {
    const uint8_t *p = r->sec[RB_SEC_CODE] + (size_t)i * RB_REC_CODE;
    RtBundleCode *c = &b->codes[i];
    c->kernel = rb_get32(p);
    c->target = rb_get32(p + 4);
    uint64_t off = rb_get64(p + 8);
    c->blob_size = rb_get64(p + 16);
    c->blob_crc = rb_get32(p + 24);
    for (int j = 0; j < RB_FACTS; j++) c->facts[j] = rb_get32(p + 32 + 4 * j);
    if (c->kernel >= (uint32_t)b->nkernel || c->target >= (uint32_t)b->ntarget)
      return bad(r, "code %d: kernel %u or target %u out of range", i, c->kernel, c->target);
    const RtBundleKernel *k = &b->kernels[c->kernel];
    if ((uint32_t)i < k->code_first || (uint32_t)i - k->code_first >= k->ncode)
      return bad(r, "code %d: not among its kernel's code records: corrupted", i);
    if (off > blobs || c->blob_size > blobs - off || c->blob_size == 0)
      return bad(r, "code %d: blob [%llu, +%llu) outside the %llu-byte blob section: truncated or corrupted", i,
                 (unsigned long long)off, (unsigned long long)c->blob_size, (unsigned long long)blobs);
    c->blob = r->sec[RB_SEC_BLOBS] + off;
    uint32_t kind = b->targets[c->target].kind;
    for (int j = 0; j < RB_GPU_NENTRY; j++) c->names[j] = "";
    if (kind == RB_TARGET_HOST_X86_64) {
      bool part = c->facts[RB_HOST_PARTIAL] != RB_NO_SYMBOL, fin = c->facts[RB_HOST_FINISH] != RB_NO_SYMBOL;
      bool col = c->facts[RB_HOST_COL_PHASES] != 0;
      if (c->facts[RB_HOST_RUN] == RB_NO_SYMBOL || part != fin || c->facts[RB_HOST_ACC_SIZE] > 4096 ||
          ((part || col) && c->facts[RB_HOST_ACC_SIZE] == 0) ||
          (col && (c->facts[RB_HOST_COLPART] == RB_NO_SYMBOL || c->facts[RB_HOST_COLFINISH] == RB_NO_SYMBOL)))
        return bad(r, "code %d: host entry points invalid: corrupted", i);
    } else {
      for (int j = 0; j < RB_GPU_NENTRY; j++)
        if ((st = str_at(r, c->facts[rb_gpu_name_fact(j)], "GPU entry name", &c->names[j]))) return st;
      if ((st = check_gpu_facts(r, i, c, k))) return st;
    }
  }
  if ((st = check_blob_padding(r, b))) return st;
  for (int32_t i = 0; i < b->nentry; i++) {
    const uint8_t *p = r->sec[RB_SEC_ENTRIES] + (size_t)i * RB_REC_ENTRY;
    RtBundleEntry *e = &b->entries[i];
    if ((st = str_at(r, rb_get32(p), "entry name", &e->name))) return st;
    if (!c_identifier(e->name)) return bad(r, "entry %d: '%.64s' is not a C identifier", i, e->name);
    for (int w = 0; w < 2; w++) {
      e->kernel[w] = (int32_t)rb_get32(p + 4 + 4 * w);
      if (e->kernel[w] < -1 || e->kernel[w] >= b->nkernel)
        return bad(r, "entry '%s': kernel %d out of range", e->name, e->kernel[w]);
      if (e->kernel[w] >= 0 && b->kernels[e->kernel[w]].index_bits != (w ? 64 : 32))
        return bad(r, "entry '%s': its %d-bit kernel has index width %d", e->name, w ? 64 : 32,
                   b->kernels[e->kernel[w]].index_bits);
    }
    if (e->kernel[0] < 0 && e->kernel[1] < 0) return bad(r, "entry '%s' names no kernel", e->name);
    if (e->kernel[0] >= 0 && e->kernel[1] >= 0 && !same_signature(&b->kernels[e->kernel[0]], &b->kernels[e->kernel[1]]))
      return bad(r, "entry '%s': its 32-bit and 64-bit kernels have different signatures", e->name);
    b->entry_sorted[i] = i;
  }
  return LOOM_OK;
}

/* Sorts idx[0, n) by entry name (a merge sort: no global comparator state). */
static void sort_entries(const RtBundle *b, int32_t *idx, int32_t *tmp, int32_t n) {
  if (n < 2) return;
  int32_t h = n / 2;
  sort_entries(b, idx, tmp, h);
  sort_entries(b, idx + h, tmp, n - h);
  int32_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = strcmp(b->entries[idx[j]].name, b->entries[idx[i]].name) < 0 ? idx[j++] : idx[i++];
  while (i < h) tmp[k++] = idx[i++];
  while (j < n) tmp[k++] = idx[j++];
  memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

/* The key table and the sorted entry index; duplicate keys or names are errors. */
static LoomStatus index_bundle(Reader *r, RtBundle *b) {
  int32_t cap = 16;
  while (cap < 2 * b->nkernel) cap *= 2;
  b->key_cap = cap;
  b->key_table = ctx_alloc(r->ctx, (size_t)cap * sizeof *b->key_table);
  if (!b->key_table) return diag_error(r->d, LOOM_ERR_OUT_OF_MEMORY, "bundle %s: out of memory (key table)", r->what);
  for (int32_t i = 0; i < cap; i++) b->key_table[i] = -1;
  for (int32_t i = 0; i < b->nkernel; i++) {
    const RtBundleKernel *k = &b->kernels[i];
    if (rt_bundle_find_key(b, k->key, k->keylen))
      return bad(r, "kernels '%.64s' and another have the same key: corrupted", k->name);
    uint32_t s = (uint32_t)k->key_hash & (uint32_t)(cap - 1);
    while (b->key_table[s] >= 0) s = (s + 1) & (uint32_t)(cap - 1);
    b->key_table[s] = i;
  }
  int32_t *tmp = ctx_alloc(r->ctx, ((size_t)b->nentry + 1) * sizeof *tmp);
  if (!tmp) return diag_error(r->d, LOOM_ERR_OUT_OF_MEMORY, "bundle %s: out of memory (entry index)", r->what);
  sort_entries(b, b->entry_sorted, tmp, b->nentry);
  ctx_free(r->ctx, tmp);
  for (int32_t i = 1; i < b->nentry; i++)
    if (!strcmp(b->entries[b->entry_sorted[i - 1]].name, b->entries[b->entry_sorted[i]].name))
      return bad(r, "two entries are named '%s'", b->entries[b->entry_sorted[i]].name);
  return LOOM_OK;
}

LoomStatus rt_bundle_parse(LoomContext *ctx, const void *data, size_t size, const char *what, RtBundle **out,
                           Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_bundle_parse: out is NULL");
  *out = NULL;
  Reader r = {.ctx = ctx, .data = data, .size = size, .what = what ? what : "(memory)", .d = d};
  if (!data && size) return bad(&r, "no data");
  if (!data) return bad(&r, "empty (0 bytes)");
  uint64_t table_off = 0;
  uint32_t nsec = 0, table_crc = 0;
  uint16_t major = 0, minor = 0;
  LoomStatus st = read_header(&r, &table_off, &nsec, &table_crc, &major, &minor);
  if (st == LOOM_OK) st = read_sections(&r, table_off, nsec, table_crc);
  if (st != LOOM_OK) return st;
  RtBundle *b = ctx_calloc(ctx, 1, sizeof *b);
  if (!b) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "bundle %s: out of memory", r.what);
  b->ctx = ctx;
  b->data = data;
  b->size = size;
  b->major = major;
  b->minor = minor;
  st = decode(&r, b);
  if (st == LOOM_OK) st = index_bundle(&r, b);
  if (st == LOOM_OK && r.sec[RB_SEC_FUSE]) st = rt_bundle_fuse_decode(b, r.sec[RB_SEC_FUSE], r.sec_size[RB_SEC_FUSE], r.what, d);
  if (st != LOOM_OK) {
    rt_bundle_free(b);
    return st;
  }
  *out = b;
  return LOOM_OK;
}

void rt_bundle_free(RtBundle *b) {
  if (!b) return;
  LoomContext *ctx = b->ctx;
  ctx_free(ctx, b->targets);
  ctx_free(ctx, b->kernels);
  ctx_free(ctx, b->codes);
  ctx_free(ctx, b->entries);
  ctx_free(ctx, b->bufs);
  ctx_free(ctx, b->key_table);
  ctx_free(ctx, b->entry_sorted);
  rt_bundle_fuse_free(b);
  ctx_free(ctx, b);
}

LoomStatus rt_bundle_code_check(const RtBundle *b, const RtBundleCode *c, Diag *d) {
  if (rt_crc32c(0, c->blob, (size_t)c->blob_size) != c->blob_crc) {
    char label[32];
    const RtBundleTarget *t = &b->targets[c->target];
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle: the %s code of kernel '%s' fails its checksum: the file is corrupted",
                      rt_bundle_target_label(t->kind, t->arch, label, sizeof label), b->kernels[c->kernel].name);
  }
  return LOOM_OK;
}

const RtBundleKernel *rt_bundle_find_key(const RtBundle *b, const char *key, size_t keylen) {
  if (!b || !b->key_table || b->nkernel == 0) return NULL;
  uint64_t h = rt_bundle_key_hash(key, keylen);
  for (uint32_t s = (uint32_t)h & (uint32_t)(b->key_cap - 1);; s = (s + 1) & (uint32_t)(b->key_cap - 1)) {
    int32_t i = b->key_table[s];
    if (i < 0) return NULL;
    const RtBundleKernel *k = &b->kernels[i];
    if (k->key_hash == h && k->keylen == keylen && memcmp(k->key, key, keylen) == 0) return k;
  }
}

const RtBundleEntry *rt_bundle_find_entry(const RtBundle *b, const char *name) {
  int32_t lo = 0, hi = b ? b->nentry : 0;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    int c = strcmp(b->entries[b->entry_sorted[mid]].name, name);
    if (c == 0) return &b->entries[b->entry_sorted[mid]];
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  return NULL;
}
