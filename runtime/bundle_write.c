/* SPDX-License-Identifier: Apache-2.0 */
/* bundle_write.c: the bundle writer (runtime/bundle.h): records appended per section (targets, kernels,
 * buffers, code, entries, strings, blobs) into growable buffers, then one file laid out as the reader
 * (bundle_format.c) checks it: header, sections, section table, every CRC filled in.
 *
 * Contract: each rt_bw_* returns the new record's index, or -1 after an allocation failure, which
 * rt_bundle_writer_finish reports; finish returns the whole file (ctx_alloc'ed), code records ordered by
 * kernel. Only libloom has the writer; libloomrt reads bundles only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "runtime/bundle.h"

/* ---- writer ---------------------------------------------------------------------------------------- */
typedef struct Buf {
  LoomContext *ctx;
  uint8_t *p;
  size_t len, cap;
  bool oom;
} Buf;

static uint8_t *buf_grow(Buf *b, size_t n, size_t align) {
  size_t start = (b->len + align - 1) / align * align;
  if (b->oom || n > SIZE_MAX / 2 - start) {
    b->oom = true;
    return NULL;
  }
  if (start + n > b->cap) {
    size_t nc = b->cap ? b->cap : 256;
    while (nc < start + n) nc *= 2;
    uint8_t *q = ctx_alloc(b->ctx, nc);
    if (!q) {
      b->oom = true;
      return NULL;
    }
    if (b->len) memcpy(q, b->p, b->len);
    ctx_free(b->ctx, b->p);
    b->p = q;
    b->cap = nc;
  }
  memset(b->p + b->len, 0, start + n - b->len);
  b->len = start + n;
  return b->p + start;
}

typedef struct CodeItem {
  uint8_t rec[RB_REC_CODE];
  int32_t kernel, order;
} CodeItem;

struct RtBundleWriter {
  LoomContext *ctx;
  Buf strings, targets, kernels, buffers, entries, blobs;
  CodeItem *codes;
  int32_t ncode, capcode, ntarget, nkernel, nentry;
  uint32_t nbufrec;
  uint8_t meta[RB_REC_META];
  const uint8_t *fuse; /* the FUSE section (bundle_fuse.c), not owned; NULL: none */
  size_t fuse_len;
};

void rt_bw_fuse_section(RtBundleWriter *w, const uint8_t *bytes, size_t n) {
  w->fuse = n ? bytes : NULL;
  w->fuse_len = n;
}

static uint32_t add_string(RtBundleWriter *w, const char *s) {
  if (!s || !*s) return 0;
  size_t n = strlen(s) + 1;
  uint8_t *p = buf_grow(&w->strings, n, 1);
  if (!p) return 0;
  memcpy(p, s, n);
  return (uint32_t)(p - w->strings.p);
}

LoomStatus rt_bundle_writer_create(LoomContext *ctx, RtBundleWriter **out, Diag *d) {
  RtBundleWriter *w = ctx_calloc(ctx, 1, sizeof *w);
  if (!w) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle writer");
  w->ctx = ctx;
  Buf *bufs[] = {&w->strings, &w->targets, &w->kernels, &w->buffers, &w->entries, &w->blobs};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) bufs[i]->ctx = ctx;
  buf_grow(&w->strings, 1, 1); /* offset 0 is "" */
  *out = w;
  return LOOM_OK;
}

void rt_bundle_writer_free(RtBundleWriter *w) {
  if (!w) return;
  Buf *bufs[] = {&w->strings, &w->targets, &w->kernels, &w->buffers, &w->entries, &w->blobs};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) ctx_free(w->ctx, bufs[i]->p);
  ctx_free(w->ctx, w->codes);
  ctx_free(w->ctx, w);
}

int32_t rt_bw_target(RtBundleWriter *w, uint32_t kind, uint32_t arch, uint32_t abi, const char *name, const char *desc) {
  uint8_t *p = buf_grow(&w->targets, RB_REC_TARGET, 1);
  if (!p) return -1;
  rb_put32(p, kind);
  rb_put32(p + 4, arch);
  rb_put32(p + 8, abi);
  uint32_t n = add_string(w, name), ds = add_string(w, desc);
  p = w->targets.p + (size_t)w->ntarget * RB_REC_TARGET; /* add_string may not move targets, but be safe */
  rb_put32(p + 12, n);
  rb_put32(p + 16, ds);
  return w->ntarget++;
}

int32_t rt_bw_kernel(RtBundleWriter *w, const char *name, const char *key, size_t keylen, int32_t ndim, int32_t nkeep,
                     int32_t index_bits, int32_t nbuf, const KBuffer *bufs, int32_t nparam, const uint8_t *param_dtype) {
  char *k = ctx_alloc(w->ctx, keylen + 1);
  if (!k) {
    w->strings.oom = true;
    return -1;
  }
  memcpy(k, key, keylen);
  k[keylen] = 0;
  uint32_t ns = add_string(w, name), ks = add_string(w, k);
  ctx_free(w->ctx, k);
  uint8_t *p = buf_grow(&w->kernels, RB_REC_KERNEL, 1);
  if (!p) return -1;
  rb_put32(p, ns);
  rb_put32(p + 4, ks);
  rb_put64(p + 8, rt_bundle_key_hash(key, keylen));
  p[16] = (uint8_t)ndim;
  p[17] = (uint8_t)nkeep;
  p[18] = (uint8_t)index_bits;
  rb_put32(p + 20, (uint32_t)nbuf);
  rb_put32(p + 24, w->nbufrec);
  rb_put32(p + 36, 0xffffffffu); /* entry: set by rt_bw_entry */
  rb_put32(p + 40, (uint32_t)nparam);
  for (int32_t b = 0; b < nbuf; b++) {
    uint8_t *q = buf_grow(&w->buffers, RB_REC_BUFFER, 1);
    if (!q) return -1;
    q[0] = bufs[b].dtype;
    q[1] = bufs[b].is_output ? 1 : 0;
    for (int i = 0; i < LOOM_MAX_RANK; i++) q[4 + i] = i < ndim ? bufs[b].layout[i] : 0;
  }
  for (int32_t j = 0; j < nparam; j++) {
    uint8_t *q = buf_grow(&w->buffers, RB_REC_BUFFER, 1);
    if (!q) return -1;
    q[0] = param_dtype[j];
    q[1] = RB_BUF_PARAM;
  }
  w->nbufrec += (uint32_t)(nbuf + nparam);
  return w->nkernel++;
}

int32_t rt_bw_code(RtBundleWriter *w, int32_t kernel, int32_t target, const void *blob, size_t size, const uint32_t *facts,
                   const char *const *names) {
  if (w->ncode == w->capcode) {
    int32_t nc = w->capcode ? 2 * w->capcode : 16;
    CodeItem *q = ctx_alloc(w->ctx, (size_t)nc * sizeof *q);
    if (!q) {
      w->blobs.oom = true;
      return -1;
    }
    if (w->ncode) memcpy(q, w->codes, (size_t)w->ncode * sizeof *q);
    ctx_free(w->ctx, w->codes);
    w->codes = q;
    w->capcode = nc;
  }
  uint8_t *bp = buf_grow(&w->blobs, size, 16);
  if (!bp) return -1;
  memcpy(bp, blob, size);
  CodeItem *c = &w->codes[w->ncode];
  memset(c, 0, sizeof *c);
  c->kernel = kernel;
  c->order = w->ncode;
  rb_put32(c->rec, (uint32_t)kernel);
  rb_put32(c->rec + 4, (uint32_t)target);
  rb_put64(c->rec + 8, (uint64_t)(bp - w->blobs.p));
  rb_put64(c->rec + 16, size);
  rb_put32(c->rec + 24, rt_crc32c(0, blob, size));
  uint32_t f[RB_FACTS];
  memcpy(f, facts, sizeof f);
  if (names)
    for (int i = 0; i < RB_GPU_NENTRY; i++) f[rb_gpu_name_fact(i)] = add_string(w, names[i]);
  for (int i = 0; i < RB_FACTS; i++) rb_put32(c->rec + 32 + 4 * i, f[i]);
  return w->ncode++;
}

int32_t rt_bw_entry(RtBundleWriter *w, const char *name, int32_t kernel32, int32_t kernel64) {
  uint32_t ns = add_string(w, name);
  uint8_t *p = buf_grow(&w->entries, RB_REC_ENTRY, 1);
  if (!p) return -1;
  rb_put32(p, ns);
  rb_put32(p + 4, (uint32_t)kernel32);
  rb_put32(p + 8, (uint32_t)kernel64);
  int32_t ks[2] = {kernel32, kernel64};
  for (int i = 0; i < 2; i++)
    if (ks[i] >= 0 && ks[i] < w->nkernel) rb_put32(w->kernels.p + (size_t)ks[i] * RB_REC_KERNEL + 36, (uint32_t)w->nentry);
  return w->nentry++;
}

void rt_bw_meta(RtBundleWriter *w, const char *producer, const char *loom_version, const char *llvm_version) {
  rb_put32(w->meta, add_string(w, producer));
  rb_put32(w->meta + 4, add_string(w, loom_version));
  rb_put32(w->meta + 8, add_string(w, llvm_version));
}

static int code_cmp(const void *a, const void *b) {
  const CodeItem *x = a, *y = b;
  if (x->kernel != y->kernel) return x->kernel < y->kernel ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

LoomStatus rt_bundle_writer_finish(RtBundleWriter *w, uint8_t **bytes, size_t *size, Diag *d) {
  *bytes = NULL;
  *size = 0;
  Buf *all[] = {&w->strings, &w->targets, &w->kernels, &w->buffers, &w->entries, &w->blobs};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (all[i]->oom) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory while writing a bundle");
  qsort(w->codes, (size_t)w->ncode, sizeof *w->codes, code_cmp);
  for (int32_t k = 0; k < w->nkernel; k++) { /* code ranges per kernel */
    int32_t first = 0;
    while (first < w->ncode && w->codes[first].kernel < k) first++;
    int32_t n = 0;
    while (first + n < w->ncode && w->codes[first + n].kernel == k) n++;
    rb_put32(w->kernels.p + (size_t)k * RB_REC_KERNEL + 28, (uint32_t)first);
    rb_put32(w->kernels.p + (size_t)k * RB_REC_KERNEL + 32, (uint32_t)n);
  }
  Buf out = {.ctx = w->ctx};
  uint8_t code_rec_none = 0;
  struct {
    uint32_t kind, flags;
    const uint8_t *p;
    size_t n;
  } secs[RB_SEC_LAST + 1] = {
      {RB_SEC_STRINGS, 0, w->strings.p, w->strings.len}, {RB_SEC_META, 0, w->meta, RB_REC_META},
      {RB_SEC_TARGETS, 0, w->targets.p, w->targets.len}, {RB_SEC_KERNELS, 0, w->kernels.p, w->kernels.len},
      {RB_SEC_BUFFERS, 0, w->buffers.p, w->buffers.len}, {RB_SEC_CODE, 0, &code_rec_none, 0},
      {RB_SEC_ENTRIES, 0, w->entries.p, w->entries.len}, {RB_SEC_BLOBS, RB_SECF_PER_RECORD_CRC, w->blobs.p, w->blobs.len},
      {RB_SEC_FUSE, 0, w->fuse, w->fuse_len}};
  int nsec = w->fuse ? RB_SEC_LAST + 1 : RB_SEC_LAST;
  uint64_t offs[RB_SEC_LAST + 1];
  buf_grow(&out, RB_HEADER_SIZE, 1);
  for (int s = 0; s < nsec; s++) {
    size_t n = secs[s].kind == RB_SEC_CODE ? (size_t)w->ncode * RB_REC_CODE : secs[s].n;
    uint8_t *p = buf_grow(&out, n, 16);
    if (!p) break;
    offs[s] = (uint64_t)(p - out.p);
    if (secs[s].kind == RB_SEC_CODE)
      for (int32_t i = 0; i < w->ncode; i++) memcpy(p + (size_t)i * RB_REC_CODE, w->codes[i].rec, RB_REC_CODE);
    else if (n)
      memcpy(p, secs[s].p, n);
    secs[s].n = n;
  }
  uint8_t *t = buf_grow(&out, (size_t)nsec * RB_SECTION_ENTRY, 16);
  if (!t || out.oom) {
    ctx_free(w->ctx, out.p);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory while writing a bundle");
  }
  uint64_t toff = (uint64_t)(t - out.p);
  for (int s = 0; s < nsec; s++) {
    uint8_t *e = t + (size_t)s * RB_SECTION_ENTRY;
    rb_put32(e, secs[s].kind);
    rb_put32(e + 4, secs[s].flags);
    rb_put64(e + 8, offs[s]);
    rb_put64(e + 16, secs[s].n);
    rb_put32(e + 24, secs[s].flags & RB_SECF_PER_RECORD_CRC ? 0 : rt_crc32c(0, out.p + offs[s], secs[s].n));
  }
  uint8_t *h = out.p;
  memcpy(h, RB_MAGIC, 8);
  rb_put16(h + 8, RB_MAJOR);
  rb_put16(h + 10, RB_MINOR);
  rb_put32(h + 12, RB_HEADER_SIZE);
  rb_put64(h + 16, out.len);
  rb_put64(h + 24, toff);
  rb_put32(h + 32, (uint32_t)nsec);
  rb_put32(h + 36, rt_crc32c(0, t, (size_t)nsec * RB_SECTION_ENTRY));
  rb_put32(h + 60, rt_crc32c(0, h, 60));
  *bytes = out.p;
  *size = out.len;
  return LOOM_OK;
}
