/* SPDX-License-Identifier: Apache-2.0 */
/* clone.c: deep copies of kernel IR (clone.h). Every array a KernelIr and its SnModule point at is copied
 * into the destination arena; names are duplicated; the copy shares nothing with the original. */
#include <string.h>

#include "ir/clone.h"
#include "ir/snippet.h"

static void *dup_array(Arena *a, const void *p, size_t n, size_t elem, bool *ok) {
  if (!p || n == 0) return NULL;
  void *q = arena_alloc(a, n * elem);
  if (!q) {
    *ok = false;
    return NULL;
  }
  memcpy(q, p, n * elem);
  return q;
}

static const char *dup_str(Arena *a, const char *s, bool *ok) {
  if (!s) return NULL;
  char *q = arena_strdup(a, s);
  if (!q) *ok = false;
  return q;
}

static SnModule *clone_snippet(Arena *a, const SnModule *m, bool *ok) {
  SnModule *c = arena_alloc(a, sizeof *c);
  if (!c) {
    *ok = false;
    return NULL;
  }
  *c = *m;
  c->arena = a;
  c->name = dup_str(a, m->name, ok);
  c->funcs = dup_array(a, m->funcs, (size_t)m->nfunc, sizeof *m->funcs, ok);
  c->vars = dup_array(a, m->vars, (size_t)m->nvar, sizeof *m->vars, ok);
  c->exprs = dup_array(a, m->exprs, (size_t)m->nexpr, sizeof *m->exprs, ok);
  c->stmts = dup_array(a, m->stmts, (size_t)m->nstmt, sizeof *m->stmts, ok);
  c->lists = dup_array(a, m->lists, (size_t)m->nlist, sizeof *m->lists, ok);
  c->capfunc = m->nfunc;
  c->capvar = m->nvar;
  c->capexpr = m->nexpr;
  c->capstmt = m->nstmt;
  c->caplist = m->nlist;
  for (int32_t i = 0; *ok && i < m->nfunc; i++) c->funcs[i].name = dup_str(a, m->funcs[i].name, ok);
  for (int32_t i = 0; *ok && i < m->nvar; i++) c->vars[i].name = dup_str(a, m->vars[i].name, ok);
  return c;
}

KernelIr *ir_kernel_clone(Arena *a, const KernelIr *k) {
  if (!k) return NULL;
  bool ok = true;
  KernelIr *c = arena_alloc(a, sizeof *c);
  if (!c) return NULL;
  *c = *k;
  c->bufs = dup_array(a, k->bufs, (size_t)k->nbuf, sizeof *k->bufs, &ok);
  c->instrs = dup_array(a, k->instrs, (size_t)k->ninstr, sizeof *k->instrs, &ok);
  c->phases = dup_array(a, k->phases, (size_t)k->nphase, sizeof *k->phases, &ok);
  c->stores = dup_array(a, k->stores, (size_t)k->nstore, sizeof *k->stores, &ok);
  c->user_args = dup_array(a, k->user_args, (size_t)k->nuser_arg, sizeof *k->user_args, &ok);
  if (k->snippet) c->snippet = clone_snippet(a, k->snippet, &ok);
  if (k->call) c->call = dup_array(a, k->call, 1, sizeof *k->call, &ok);
  return ok ? c : NULL;
}
