/* SPDX-License-Identifier: Apache-2.0 */
/* bundle_fuse.c: the FUSE section (bundle_fuse.h): its writer and its validating reader.
 *
 * Layout (little-endian; inside one section, so covered by the section table's CRC-32C):
 *   header   32 bytes: u32 records, u32 argument records, u32 node records, u32 references, u32 string
 *            bytes, 12 zero bytes
 *   records  48 bytes: u32 name, u32 identity (offsets into the strings), u32 first argument, u32
 *            arguments, u32 first node, u32 nodes, u32 first reference, u32 outputs, u32 written
 *            arguments, u32 flags (RF_FLAG_TUPLE), u64 signature hash (rt_fuse_sig_hash)
 *   args     4 bytes: u8 kind (RF_*), u8 dtype, u8 rank, u8 0
 *   nodes    64 bytes: u8 kind, u8 dtype, u8 flags, u8 rank, u16 op, u16 0, i32 sources[3], i32 bind,
 *            u32 axes, u32 0, u8 axis map[16] (a permutation; a unit reshape's source axes, 0xff for a
 *            new axis), u64 value, u64 imaginary part (the bits of the constant's Scalar: f / i / u by the
 *            dtype's kind)
 *   refs     i32: per record its outputs (node indices of the record), then its written arguments
 *   strings  NUL-terminated; the first and the last byte are NUL
 * The sizes must add up to the section's size exactly. A record's arguments, nodes and references are
 * ranges of those arrays; a node's sources are earlier nodes of its record (so the graph is acyclic and
 * ordered), and every field a node kind does not use is zero (or -1 for sources and bind).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/bundle_fuse.h"

enum { RF_HEADER = 32, RF_REC = 48, RF_REC_ARG = 4, RF_REC_NODE = 64 };

uint64_t rt_fuse_sig_hash(const char *identity, int32_t nargs, const RtFuseArg *args) {
  uint64_t h = 1469598103934665603ull;
  for (const char *p = identity; *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ull;
  h = (h ^ 0xffu) * 1099511628211ull;
  for (int32_t i = 0; i < nargs; i++) {
    uint8_t v[3] = {args[i].kind, args[i].dtype, args[i].ndim};
    for (int k = 0; k < 3; k++) h = (h ^ v[k]) * 1099511628211ull;
  }
  return h;
}

static bool same_args(const RtFuseArg *a, const RtFuseArg *b, int32_t n) {
  for (int32_t i = 0; i < n; i++)
    if (a[i].kind != b[i].kind || a[i].dtype != b[i].dtype || a[i].ndim != b[i].ndim) return false;
  return true;
}

static bool record_is(const RtFuseRecord *r, uint64_t h, const char *identity, int32_t nargs, const RtFuseArg *args) {
  return r->sig_hash == h && r->nargs == nargs && !strcmp(r->identity, identity) && same_args(r->args, args, nargs);
}

/* ---- reader ----------------------------------------------------------------------------------------- */
typedef struct FuseMem { /* one allocation: the decoded arrays and the lookup table */
  RtFuseArg *args;
  RtFuseNode *nodes;
  int32_t *refs;
  int32_t *table; /* open addressing over records by signature hash, cap slots (-1 empty) */
  int32_t cap;
} FuseMem;

typedef struct FuseReader {
  const uint8_t *p;
  uint64_t size;
  const char *what;
  Diag *d;
  const char *strings;
  uint32_t nstr;
} FuseReader;

static LoomStatus fbad(FuseReader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static LoomStatus fbad(FuseReader *r, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return diag_error(r->d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: section FUSE: %s", r->what, msg);
}

static LoomStatus fstr(FuseReader *r, uint32_t off, const char *field, const char **out) {
  if (off >= r->nstr) return fbad(r, "%s at string offset %u, outside the %u string bytes: corrupted", field, off, r->nstr);
  *out = r->strings + off;
  if (!**out) return fbad(r, "%s is empty: corrupted", field);
  return LOOM_OK;
}

static int node_sources(uint8_t kind) {
  switch (kind) {
  case IR_INPUT: case IR_CONST: return 0;
  case IR_MATMUL: return 2;
  case IR_ELEM: return -1; /* 1..3, by the op: checked when the graph is rebuilt */
  default: return 1;       /* CAST PERMUTE REDUCE SCAN */
  }
}

static bool kind_allowed(uint8_t k) {
  return k == IR_INPUT || k == IR_CONST || k == IR_ELEM || k == IR_CAST || k == IR_PERMUTE || k == IR_RESHAPE ||
         k == IR_SLICE || k == IR_REDUCE || k == IR_SCAN || k == IR_MATMUL;
}

static LoomStatus read_node(FuseReader *r, const uint8_t *p, int32_t rec, int32_t i, const RtFuseRecord *fr,
                            RtFuseNode *n) {
  n->kind = p[0];
  n->dtype = p[1];
  n->flags = p[2];
  n->ndim = p[3];
  n->op = rb_get16(p + 4);
  for (int k = 0; k < 3; k++) n->src[k] = (int32_t)rb_get32(p + 8 + 4 * k);
  n->bind = (int32_t)rb_get32(p + 20);
  n->axes = rb_get32(p + 24);
  memcpy(n->perm, p + 32, LOOM_MAX_RANK);
  n->value.u = rb_get64(p + 48);
  uint64_t im = rb_get64(p + 56);
  memcpy(&n->value.im, &im, sizeof im);
  if (!kind_allowed(n->kind) || n->dtype >= LOOM_DTYPE_COUNT || (n->flags & ~3u) || n->ndim > LOOM_MAX_RANK ||
      rb_get16(p + 6) || rb_get32(p + 28))
    return fbad(r, "record %d node %d: kind %u, dtype %u, flags %u or rank %u invalid: corrupted", rec, i, n->kind,
                n->dtype, n->flags, n->ndim);
  int want = node_sources(n->kind), have = 0;
  for (int k = 0; k < 3; k++) {
    if (n->src[k] == -1) continue;
    if (n->src[k] < 0 || n->src[k] >= i || have != k)
      return fbad(r, "record %d node %d: source %d is %d (sources are earlier nodes, listed first): corrupted", rec, i, k,
                  n->src[k]);
    have++;
  }
  if (want >= 0 ? have != want : have < 1)
    return fbad(r, "record %d node %d: %d sources for node kind %u: corrupted", rec, i, have, n->kind);
  bool uses_op = n->kind == IR_ELEM || n->kind == IR_REDUCE || n->kind == IR_SCAN;
  bool uses_axes = n->kind == IR_REDUCE || n->kind == IR_SCAN;
  if ((!uses_op && n->op) || (!uses_axes && n->axes) || (n->kind != IR_CONST && (n->value.u || im)))
    return fbad(r, "record %d node %d: fields its kind does not use are not zero: corrupted", rec, i);
  if (n->kind == IR_INPUT) {
    const RtFuseArg *a = n->bind >= 0 && n->bind < fr->nargs ? &fr->args[n->bind] : NULL;
    if (!a || a->kind != RF_ARRAY || a->dtype != n->dtype || a->ndim != n->ndim || n->flags)
      return fbad(r, "record %d node %d: an input of argument %d that is not an array of its dtype and rank", rec, i,
                  n->bind);
  } else if (n->kind == IR_CONST) {
    if (n->ndim)
      return fbad(r, "record %d node %d: a constant of rank %u: corrupted", rec, i, n->ndim);
    if (n->bind != -1) {
      const RtFuseArg *a = n->bind >= 0 && n->bind < fr->nargs ? &fr->args[n->bind] : NULL;
      if (!a || a->kind == RF_ARRAY || n->value.u || im)
        return fbad(r, "record %d node %d: a constant bound to argument %d, which is not a scalar", rec, i, n->bind);
    }
  } else if (n->bind != -1) {
    return fbad(r, "record %d node %d: bind %d on a node that is not an input or a constant", rec, i, n->bind);
  }
  if (n->kind == IR_RESHAPE) { /* source axes in increasing order, or new axes of size 1 */
    int last = -1, sn = fr->nodes[n->src[0]].ndim;
    for (int k = 0; k < LOOM_MAX_RANK; k++) {
      uint8_t v = n->perm[k];
      bool ok = k >= n->ndim ? v == 0 : v == RF_NEW_AXIS || ((int)v > last && (int)v < sn);
      if (!ok) return fbad(r, "record %d node %d: reshape axis map entry %d is %u: corrupted", rec, i, k, v);
      if (k < n->ndim && v != RF_NEW_AXIS) last = v;
    }
    return LOOM_OK;
  }
  if (n->kind == IR_SLICE) { /* whole axes: a direction each, the source's rank */
    if (fr->nodes[n->src[0]].ndim != n->ndim)
      return fbad(r, "record %d node %d: a slice of rank %u from rank %u: corrupted", rec, i, n->ndim, fr->nodes[n->src[0]].ndim);
    for (int k = 0; k < LOOM_MAX_RANK; k++)
      if (n->perm[k] > (k < n->ndim ? 1 : 0))
        return fbad(r, "record %d node %d: slice direction %d is %u: corrupted", rec, i, k, n->perm[k]);
    return LOOM_OK;
  }
  uint32_t seen = 0;
  for (int k = 0; k < LOOM_MAX_RANK; k++) {
    bool in = n->kind == IR_PERMUTE && k < n->ndim;
    if (in ? n->perm[k] >= n->ndim || (seen >> n->perm[k]) & 1u : n->perm[k] != 0)
      return fbad(r, "record %d node %d: permutation entry %d is %u: corrupted", rec, i, k, n->perm[k]);
    if (in) seen |= 1u << n->perm[k];
  }
  return LOOM_OK;
}

LoomStatus rt_bundle_fuse_decode(RtBundle *b, const uint8_t *sec, uint64_t size, const char *what, Diag *d) {
  FuseReader r = {.p = sec, .size = size, .what = what, .d = d};
  if (size < RF_HEADER) return fbad(&r, "%llu bytes, shorter than its %d-byte header", (unsigned long long)size, RF_HEADER);
  uint32_t nrec = rb_get32(sec), narg = rb_get32(sec + 4), nnode = rb_get32(sec + 8), nref = rb_get32(sec + 12);
  uint32_t nstr = rb_get32(sec + 16);
  for (int k = 20; k < RF_HEADER; k++)
    if (sec[k]) return fbad(&r, "reserved header byte %d is not zero: corrupted", k);
  uint64_t want = RF_HEADER + (uint64_t)nrec * RF_REC + (uint64_t)narg * RF_REC_ARG + (uint64_t)nnode * RF_REC_NODE +
                  (uint64_t)nref * 4 + nstr;
  if (want != size || nrec > (1u << 20) || nnode > (1u << 26))
    return fbad(&r, "%u records, %u arguments, %u nodes, %u references and %u string bytes do not add up to its %llu "
                "bytes: corrupted", nrec, narg, nnode, nref, nstr, (unsigned long long)size);
  const uint8_t *recs = sec + RF_HEADER, *argp = recs + (size_t)nrec * RF_REC, *nodep = argp + (size_t)narg * RF_REC_ARG;
  const uint8_t *refp = nodep + (size_t)nnode * RF_REC_NODE;
  r.strings = (const char *)(refp + (size_t)nref * 4);
  r.nstr = nstr;
  if (nstr < 1 || r.strings[0] || r.strings[nstr - 1])
    return fbad(&r, "its strings do not start and end with a NUL byte: corrupted");
  LoomContext *ctx = b->ctx;
  int32_t cap = 16;
  while ((uint32_t)cap < 2 * nrec) cap *= 2;
  FuseMem *m = ctx_calloc(ctx, 1, sizeof *m);
  RtFuseRecord *fr = ctx_calloc(ctx, (size_t)nrec + 1, sizeof *fr);
  if (m) {
    m->args = ctx_calloc(ctx, (size_t)narg + 1, sizeof *m->args);
    m->nodes = ctx_calloc(ctx, (size_t)nnode + 1, sizeof *m->nodes);
    m->refs = ctx_calloc(ctx, (size_t)nref + 1, sizeof *m->refs);
    m->table = ctx_alloc(ctx, (size_t)cap * sizeof *m->table);
    m->cap = cap;
  }
  b->fuse_mem = m;
  b->fuse = fr;
  if (!m || !fr || !m->args || !m->nodes || !m->refs || !m->table)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "bundle %s: out of memory decoding %u fuse records", what, nrec);
  for (int32_t s = 0; s < cap; s++) m->table[s] = -1;
  for (uint32_t i = 0; i < narg; i++) {
    const uint8_t *p = argp + (size_t)i * RF_REC_ARG;
    RtFuseArg *a = &m->args[i];
    a->kind = p[0], a->dtype = p[1], a->ndim = p[2];
    bool array = a->kind == RF_ARRAY;
    if (a->kind >= RF_KIND_COUNT || p[3] || (array ? a->dtype >= LOOM_DTYPE_COUNT || a->ndim > LOOM_MAX_RANK : a->dtype || a->ndim))
      return fbad(&r, "argument record %u: kind %u, dtype %u, rank %u invalid: corrupted", i, a->kind, a->dtype, a->ndim);
  }
  for (uint32_t i = 0; i < nref; i++) m->refs[i] = (int32_t)rb_get32(refp + 4 * (size_t)i);
  LoomStatus st;
  for (uint32_t i = 0; i < nrec; i++) {
    const uint8_t *p = recs + (size_t)i * RF_REC;
    RtFuseRecord *f = &fr[i];
    if ((st = fstr(&r, rb_get32(p), "a function name", &f->name)) || (st = fstr(&r, rb_get32(p + 4), "an identity", &f->identity)))
      return st;
    uint32_t a0 = rb_get32(p + 8), na = rb_get32(p + 12), n0 = rb_get32(p + 16), nn = rb_get32(p + 20);
    uint32_t r0 = rb_get32(p + 24), no = rb_get32(p + 28), nw = rb_get32(p + 32);
    f->flags = rb_get32(p + 36);
    f->sig_hash = rb_get64(p + 40);
    if (na < 1 || na > RF_MAX_ARGS || a0 > narg || na > narg - a0 || nn < 1 || nn > RF_MAX_NODES || n0 > nnode ||
        nn > nnode - n0 || no > RF_MAX_OUTS || nw > no || r0 > nref || (uint64_t)no + nw > nref - r0 || (f->flags & ~RF_FLAG_TUPLE))
      return fbad(&r, "record %u ('%.64s'): its ranges (arguments %u+%u, nodes %u+%u, references %u+%u+%u) or flags %#x "
                  "are invalid: corrupted", i, f->name, a0, na, n0, nn, r0, no, nw, f->flags);
    f->nargs = (int32_t)na, f->nnode = (int32_t)nn, f->nout = (int32_t)no, f->nwrite = (int32_t)nw;
    f->args = &m->args[a0];
    f->nodes = &m->nodes[n0];
    f->outs = &m->refs[r0];
    f->write_args = &m->refs[r0 + no];
    if (rt_fuse_sig_hash(f->identity, f->nargs, f->args) != f->sig_hash)
      return fbad(&r, "record %u ('%.64s'): its signature does not match its hash: corrupted", i, f->name);
    bool any_array = false;
    for (int32_t k = 0; k < f->nargs; k++) any_array |= f->args[k].kind == RF_ARRAY;
    if (!any_array) return fbad(&r, "record %u ('%.64s'): no array argument", i, f->name);
    for (int32_t k = 0; k < f->nnode; k++)
      if ((st = read_node(&r, nodep + (size_t)(n0 + (uint32_t)k) * RF_REC_NODE, (int32_t)i, k, f, &m->nodes[n0 + (uint32_t)k])))
        return st;
    for (int32_t k = 0; k < f->nout; k++)
      if (f->outs[k] < 0 || f->outs[k] >= f->nnode)
        return fbad(&r, "record %u ('%.64s'): output %d is node %d of %d: corrupted", i, f->name, k, f->outs[k], f->nnode);
    for (int32_t k = 0; k < f->nwrite; k++) {
      int32_t j = f->write_args[k];
      bool dup = false;
      for (int32_t q = 0; q < k; q++) dup |= f->write_args[q] == j;
      if (j < 0 || j >= f->nargs || f->args[j].kind != RF_ARRAY || dup)
        return fbad(&r, "record %u ('%.64s'): written argument %d is not an array argument, or is written twice", i, f->name, j);
    }
    if (rt_bundle_find_fuse(b, f->identity, f->nargs, f->args))
      return fbad(&r, "records of '%.64s' with the same signature twice: corrupted", f->name);
    uint32_t s = (uint32_t)f->sig_hash & (uint32_t)(cap - 1);
    while (m->table[s] >= 0) s = (s + 1) & (uint32_t)(cap - 1);
    m->table[s] = (int32_t)i;
    b->nfuse = (int32_t)i + 1; /* records [0, nfuse) are checked: the lookup above sees only those */
  }
  return LOOM_OK;
}

void rt_bundle_fuse_free(RtBundle *b) {
  FuseMem *m = b->fuse_mem;
  if (m) {
    ctx_free(b->ctx, m->args);
    ctx_free(b->ctx, m->nodes);
    ctx_free(b->ctx, m->refs);
    ctx_free(b->ctx, m->table);
    ctx_free(b->ctx, m);
  }
  ctx_free(b->ctx, b->fuse);
  b->fuse = NULL;
  b->fuse_mem = NULL;
  b->nfuse = 0;
}

const RtFuseRecord *rt_bundle_find_fuse(const RtBundle *b, const char *identity, int32_t nargs, const RtFuseArg *args) {
  const FuseMem *m = b ? b->fuse_mem : NULL;
  if (!m || !m->table || b->nfuse == 0) return NULL;
  uint64_t h = rt_fuse_sig_hash(identity, nargs, args);
  for (uint32_t s = (uint32_t)h & (uint32_t)(m->cap - 1);; s = (s + 1) & (uint32_t)(m->cap - 1)) {
    int32_t i = m->table[s];
    if (i < 0) return NULL;
    if (record_is(&b->fuse[i], h, identity, nargs, args)) return &b->fuse[i];
  }
}

/* ---- writer ----------------------------------------------------------------------------------------- */
typedef struct FuseBuf {
  uint8_t *p;
  size_t len, cap;
} FuseBuf;

struct RtFuseWriter {
  LoomContext *ctx;
  FuseBuf recs, args, nodes, refs, strings, out;
  uint32_t nrec, narg, nnode, nref;
  bool oom;
};

static uint8_t *fgrow(RtFuseWriter *w, FuseBuf *b, size_t n) {
  if (w->oom) return NULL;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap *= 2;
    uint8_t *p = ctx_alloc(w->ctx, cap);
    if (!p) {
      w->oom = true;
      return NULL;
    }
    if (b->len) memcpy(p, b->p, b->len);
    ctx_free(w->ctx, b->p);
    b->p = p, b->cap = cap;
  }
  uint8_t *r = b->p + b->len;
  memset(r, 0, n);
  b->len += n;
  return r;
}

static uint32_t fstring(RtFuseWriter *w, const char *s) {
  size_t n = strlen(s) + 1;
  uint8_t *p = fgrow(w, &w->strings, n);
  if (!p) return 0;
  memcpy(p, s, n);
  return (uint32_t)(p - w->strings.p);
}

LoomStatus rt_fuse_writer_create(LoomContext *ctx, RtFuseWriter **out, Diag *d) {
  RtFuseWriter *w = ctx_calloc(ctx, 1, sizeof *w);
  if (!w) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: fuse record writer");
  w->ctx = ctx;
  fgrow(w, &w->strings, 1); /* offset 0 is "" (never a valid name) */
  *out = w;
  return LOOM_OK;
}

void rt_fuse_writer_free(RtFuseWriter *w) {
  if (!w) return;
  FuseBuf *all[] = {&w->recs, &w->args, &w->nodes, &w->refs, &w->strings, &w->out};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) ctx_free(w->ctx, all[i]->p);
  ctx_free(w->ctx, w);
}

int32_t rt_fuse_writer_count(const RtFuseWriter *w) { return w ? (int32_t)w->nrec : 0; }

static bool writer_has(const RtFuseWriter *w, const char *identity, int32_t nargs, const RtFuseArg *args) {
  uint64_t h = rt_fuse_sig_hash(identity, nargs, args);
  for (uint32_t i = 0; i < w->nrec; i++) {
    const uint8_t *p = w->recs.p + (size_t)i * RF_REC;
    if (rb_get64(p + 40) != h || rb_get32(p + 12) != (uint32_t)nargs ||
        strcmp((const char *)w->strings.p + rb_get32(p + 4), identity))
      continue;
    const uint8_t *a = w->args.p + (size_t)rb_get32(p + 8) * RF_REC_ARG;
    bool same = true;
    for (int32_t k = 0; k < nargs && same; k++)
      same = a[4 * k] == args[k].kind && a[4 * k + 1] == args[k].dtype && a[4 * k + 2] == args[k].ndim;
    if (same) return true;
  }
  return false;
}

LoomStatus rt_fuse_writer_add(RtFuseWriter *w, const char *name, const char *identity, int32_t nargs,
                              const RtFuseArg *args, int32_t nnode, const RtFuseNode *nodes, int32_t nout,
                              const int32_t *outs, int32_t nwrite, const int32_t *write_args, uint32_t flags,
                              bool *duplicate, Diag *d) {
  *duplicate = false;
  if (!name || !*name || !identity || !*identity || nargs < 1 || nargs > RF_MAX_ARGS || nnode < 1 ||
      nnode > RF_MAX_NODES || nout < 0 || nout > RF_MAX_OUTS || nwrite < 0 || nwrite > nout)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "fuse record: name, identity or counts out of range");
  if (writer_has(w, identity, nargs, args)) {
    *duplicate = true;
    return LOOM_OK;
  }
  uint32_t sname = fstring(w, name), sid = fstring(w, identity);
  uint8_t *r = fgrow(w, &w->recs, RF_REC), *a = fgrow(w, &w->args, (size_t)nargs * RF_REC_ARG);
  uint8_t *n = fgrow(w, &w->nodes, (size_t)nnode * RF_REC_NODE), *f = fgrow(w, &w->refs, (size_t)(nout + nwrite) * 4);
  if (!r || !a || !n || (nout + nwrite && !f)) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: fuse records");
  rb_put32(r, sname);
  rb_put32(r + 4, sid);
  rb_put32(r + 8, w->narg);
  rb_put32(r + 12, (uint32_t)nargs);
  rb_put32(r + 16, w->nnode);
  rb_put32(r + 20, (uint32_t)nnode);
  rb_put32(r + 24, w->nref);
  rb_put32(r + 28, (uint32_t)nout);
  rb_put32(r + 32, (uint32_t)nwrite);
  rb_put32(r + 36, flags);
  rb_put64(r + 40, rt_fuse_sig_hash(identity, nargs, args));
  for (int32_t k = 0; k < nargs; k++) a[4 * k] = args[k].kind, a[4 * k + 1] = args[k].dtype, a[4 * k + 2] = args[k].ndim;
  for (int32_t k = 0; k < nnode; k++) {
    const RtFuseNode *x = &nodes[k];
    uint8_t *p = n + (size_t)k * RF_REC_NODE;
    p[0] = x->kind, p[1] = x->dtype, p[2] = x->flags, p[3] = x->ndim;
    rb_put16(p + 4, x->op);
    for (int s = 0; s < 3; s++) rb_put32(p + 8 + 4 * s, (uint32_t)x->src[s]);
    rb_put32(p + 20, (uint32_t)x->bind);
    rb_put32(p + 24, x->axes);
    memcpy(p + 32, x->perm, LOOM_MAX_RANK);
    uint64_t im;
    memcpy(&im, &x->value.im, sizeof im);
    rb_put64(p + 48, x->value.u);
    rb_put64(p + 56, im);
  }
  for (int32_t k = 0; k < nout; k++) rb_put32(f + 4 * (size_t)k, (uint32_t)outs[k]);
  for (int32_t k = 0; k < nwrite; k++) rb_put32(f + 4 * (size_t)(nout + k), (uint32_t)write_args[k]);
  w->nrec++;
  w->narg += (uint32_t)nargs;
  w->nnode += (uint32_t)nnode;
  w->nref += (uint32_t)(nout + nwrite);
  return LOOM_OK;
}

LoomStatus rt_fuse_writer_bytes(RtFuseWriter *w, const uint8_t **bytes, size_t *n, Diag *d) {
  *bytes = NULL;
  *n = 0;
  if (w->oom) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: fuse records");
  if (w->nrec == 0) return LOOM_OK;
  w->out.len = 0;
  uint8_t *h = fgrow(w, &w->out, RF_HEADER);
  if (!h) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: fuse section");
  rb_put32(h, w->nrec);
  rb_put32(h + 4, w->narg);
  rb_put32(h + 8, w->nnode);
  rb_put32(h + 12, w->nref);
  rb_put32(h + 16, (uint32_t)w->strings.len);
  const FuseBuf *parts[] = {&w->recs, &w->args, &w->nodes, &w->refs, &w->strings};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
    uint8_t *p = parts[i]->len ? fgrow(w, &w->out, parts[i]->len) : w->out.p;
    if (!p) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: fuse section");
    if (parts[i]->len) memcpy(p, parts[i]->p, parts[i]->len);
  }
  *bytes = w->out.p;
  *n = w->out.len;
  return LOOM_OK;
}
