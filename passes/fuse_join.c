/* SPDX-License-Identifier: Apache-2.0 */
/* fuse_join.c: the kernel table of pass_fuse and the legality of a join: may node x (its cone and reads
 * in f->cone, f->reads) be computed by kernel k? It may when no cycle between kernels results (a bounded
 * depth-first search over deps) and k stays within FUSE_MAX_NODES nodes and its buffer budget.
 *
 * Contract: a refusal is always safe (x then goes to another kernel), so every bound answers "no" when
 * it is reached; a join is recorded with pass_fuse_commit_join and pass_fuse_add_deps once decided.
 */
#include <string.h>

#include "passes/fuse_internal.h"

/* ---- kernels ---------------------------------------------------------------------------------------- */

/* Whether kernel `from` depends (transitively) on kernel `to`: an iterative depth-first search over
 * deps, sharing f->kstamp/kgen with the other searches of one cycle check (the target is the same,
 * so a kernel explored once need not be explored again). Past FUSE_MAX_REACH visited kernels it
 * answers true: the caller then refuses a join, which is always safe. */
LoomStatus pass_fuse_reaches(Fuser *f, int32_t from, int32_t to, int32_t *budget, bool *out) {
  *out = false;
  if (f->kusers[to] == 0) return LOOM_OK; /* nothing depends on `to` */
  int32_t nstack = 0;
  LoomStatus st = pass_fuse_push_i32(f, &f->stack, &nstack, &f->capstack, from);
  while (st == LOOM_OK && nstack > 0) {
    int32_t k = f->stack[--nstack];
    if (k == to || --*budget < 0) {
      *out = true;
      return LOOM_OK;
    }
    if (f->kstamp[k] == f->kgen) continue;
    f->kstamp[k] = f->kgen;
    const FusedKernel *K = &f->p->kernels[k];
    for (int i = 0; i < K->ndep && st == LOOM_OK; i++)
      if (f->kstamp[K->deps[i]] != f->kgen) st = pass_fuse_push_i32(f, &f->stack, &nstack, &f->capstack, K->deps[i]);
  }
  return st;
}

/* *ok: no kernel x's cone reads (other than k itself) depends on k. */
LoomStatus pass_fuse_no_cycle(Fuser *f, int32_t k, bool *ok) {
  *ok = true;
  f->kgen++;
  int32_t budget = FUSE_MAX_REACH;
  for (int i = 0; i < f->nreads; i++) {
    int32_t kd = pass_fuse_producer_of(f, f->reads[i]);
    if (kd < 0 || kd == k) continue;
    bool r;
    LoomStatus st = pass_fuse_reaches(f, kd, k, &budget, &r);
    if (st != LOOM_OK) return st;
    if (r) {
      *ok = false;
      return LOOM_OK;
    }
  }
  return LOOM_OK;
}

static LoomStatus grow_kernel_arrays(Fuser *f, int32_t ncap) {
  Arena *a = f->m->arena;
  int32_t n = f->p->nkernel;
  FusedKernel *nk = arena_alloc(a, (size_t)ncap * sizeof *nk);
  int32_t *ns = arena_alloc(a, (size_t)ncap * sizeof *ns);
  int32_t *nn = arena_alloc(a, (size_t)ncap * sizeof *nn);
  int32_t *nb = arena_alloc(a, (size_t)ncap * sizeof *nb);
  int32_t *nu = arena_alloc(a, (size_t)ncap * sizeof *nu);
  uint8_t *nf = arena_alloc(a, (size_t)ncap);
  if (!nk || !ns || !nn || !nb || !nu || !nf) return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory");
  if (n) {
    memcpy(nk, f->p->kernels, (size_t)n * sizeof *nk);
    memcpy(ns, f->kstamp, (size_t)n * sizeof *ns);
    memcpy(nn, f->knodes, (size_t)n * sizeof *nn);
    memcpy(nb, f->kbufs, (size_t)n * sizeof *nb);
    memcpy(nu, f->kusers, (size_t)n * sizeof *nu);
    memcpy(nf, f->kfull, (size_t)n);
  }
  f->p->kernels = nk;
  f->p->cap = ncap;
  f->kstamp = ns;
  f->kstamp_cap = ncap;
  f->knodes = nn;
  f->kbufs = nb;
  f->kusers = nu;
  f->kfull = nf;
  return LOOM_OK;
}

LoomStatus pass_fuse_new_kernel(Fuser *f, int32_t *out) {
  FusionPlan *p = f->p;
  if (p->nkernel == p->cap) {
    LoomStatus st = grow_kernel_arrays(f, p->cap ? p->cap * 2 : 8);
    if (st != LOOM_OK) return st;
  }
  int32_t k = p->nkernel;
  memset(&p->kernels[k], 0, sizeof p->kernels[0]);
  f->kstamp[k] = 0;
  f->knodes[k] = f->kbufs[k] = f->kusers[k] = 0;
  f->kfull[k] = 0;
  *out = p->nkernel++;
  return LOOM_OK;
}

/* ---- budgets ------------------------------------------------------------------------------------------ */

/* Buffers a kernel of rank nd may have: FUSE_MAX_BUFS, and few enough for its GPU parameter block
 * (nd sizes, then per buffer an address and nd strides, then 4 words). */
int32_t pass_fuse_buf_cap(int nd) {
  int32_t gpu = (FUSE_GPU_WORDS - nd) / (1 + nd);
  return gpu < FUSE_MAX_BUFS ? gpu : FUSE_MAX_BUFS;
}

static uint64_t key_hash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}

bool pass_fuse_keyset_has(const KeySet *s, uint64_t key) {
  if (s->cap == 0) return false;
  uint64_t mask = (uint64_t)s->cap - 1;
  for (uint64_t i = key_hash(key) & mask; s->slot[i]; i = (i + 1) & mask)
    if (s->slot[i] == key + 1) return true;
  return false;
}

static LoomStatus keyset_add(Fuser *f, KeySet *s, uint64_t key) {
  if ((s->n + 1) * 2 > s->cap) {
    int64_t ncap = s->cap ? s->cap * 2 : 1024;
    uint64_t *ns = arena_alloc(f->m->arena, (size_t)ncap * sizeof *ns);
    if (!ns) return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory (%lld keys)", (long long)ncap);
    uint64_t mask = (uint64_t)ncap - 1;
    for (int64_t i = 0; i < s->cap; i++) {
      if (!s->slot[i]) continue;
      uint64_t j = key_hash(s->slot[i] - 1) & mask;
      while (ns[j]) j = (j + 1) & mask;
      ns[j] = s->slot[i];
    }
    s->slot = ns;
    s->cap = ncap;
  }
  uint64_t mask = (uint64_t)s->cap - 1, i = key_hash(key) & mask;
  for (; s->slot[i]; i = (i + 1) & mask)
    if (s->slot[i] == key + 1) return LOOM_OK;
  s->slot[i] = key + 1;
  s->n++;
  return LOOM_OK;
}

uint64_t pass_fuse_member_key(int32_t k, int32_t node, int tag) {
  return ((uint64_t)(uint32_t)k << 32) | ((uint64_t)(uint32_t)node << 1) | (uint64_t)tag;
}

bool pass_fuse_is_const_read(const IrGraph *g, int32_t top) { return pass_const_of(g, top) >= 0; }

/* Buffers x stores: its output (a root) and its temp (when another node reads it). */
static int32_t store_cost(const Fuser *f, int32_t x) {
  int32_t c = f->is_out[x] + f->has_user[x];
  return c > 0 ? c : 1;
}

/* What x (its cone in f->cone, reads in f->reads) adds to kernel k: distinct nodes and buffers. */
static void join_cost(const Fuser *f, int32_t k, int32_t x, int32_t *dn, int32_t *db) {
  int32_t n = f->g->nodes[x].kind == IR_REDUCE ? 1 : 0, b = store_cost(f, x);
  for (int32_t i = 0; i < f->ncone; i++)
    if (k < 0 || !pass_fuse_keyset_has(&f->members, pass_fuse_member_key(k, f->cone[i], 0))) n++;
  for (int32_t i = 0; i < f->nreads; i++) {
    int32_t t = f->reads[i];
    if (pass_fuse_is_const_read(f->g, t) || (k >= 0 && pass_fuse_producer_of(f, t) == k)) continue;
    if (k < 0 || !pass_fuse_keyset_has(&f->members, pass_fuse_member_key(k, t, 1))) b++;
  }
  *dn = n;
  *db = b;
}

bool pass_fuse_fits_budget(Fuser *f, int32_t k, int32_t x) {
  int32_t dn, db;
  join_cost(f, k, x, &dn, &db);
  bool ok = f->knodes[k] + dn <= FUSE_MAX_NODES && f->kbufs[k] + db <= pass_fuse_buf_cap(f->p->kernels[k].ndim);
  if (!ok) f->kfull[k] = 1;
  return ok;
}

/* Records x's cone and reads as members of kernel k (its budget). */
LoomStatus pass_fuse_commit_join(Fuser *f, int32_t k, int32_t x) {
  int32_t dn, db;
  join_cost(f, k, x, &dn, &db);
  f->knodes[k] += dn;
  f->kbufs[k] += db;
  LoomStatus st = LOOM_OK;
  for (int32_t i = 0; i < f->ncone && st == LOOM_OK; i++) st = keyset_add(f, &f->members, pass_fuse_member_key(k, f->cone[i], 0));
  for (int32_t i = 0; i < f->nreads && st == LOOM_OK; i++)
    if (!pass_fuse_is_const_read(f->g, f->reads[i])) st = keyset_add(f, &f->members, pass_fuse_member_key(k, f->reads[i], 1));
  return st;
}

/* Can x (whose reads are in f->reads) be computed by kernel k in the given space? */
LoomStatus pass_fuse_can_join(Fuser *f, int32_t k, bool final_space, int32_t x, bool *ok) {
  *ok = false;
  const FusedKernel *K = &f->p->kernels[k];
  for (int i = 0; i < f->nreads; i++) {
    const IrNode *t = &f->g->nodes[f->reads[i]];
    int64_t tmp[LOOM_MAX_RANK], z[LOOM_MAX_RANK] = {0};
    if (!pass_map_strides(K, final_space, t->ndim, t->shape, z, tmp)) return LOOM_OK;
    if (pass_fuse_producer_of(f, f->reads[i]) != k) continue;
    ReadInfo r;
    LoomStatus st = pass_resolve_read(f->g, K, final_space, f->reads[i], &r, f->d);
    if (st != LOOM_OK) return st;
    if (!r.is_acc && !r.is_local) return LOOM_OK;
  }
  if (!pass_fuse_fits_budget(f, k, x)) return LOOM_OK;
  return pass_fuse_no_cycle(f, k, ok);
}

LoomStatus pass_fuse_add_deps(Fuser *f, int32_t k) {
  FusedKernel *K = &f->p->kernels[k];
  for (int i = 0; i < f->nreads; i++) {
    int32_t kd = pass_fuse_producer_of(f, f->reads[i]);
    if (kd < 0 || kd == k) continue;
    bool have = false;
    for (int j = 0; j < K->ndep; j++)
      if (K->deps[j] == kd) have = true;
    if (!have) {
      LoomStatus st = pass_fuse_push_i32(f, &K->deps, &K->ndep, &K->cap_dep, kd);
      if (st != LOOM_OK) return st;
      f->kusers[kd]++;
    }
  }
  return LOOM_OK;
}
