/* SPDX-License-Identifier: Apache-2.0 */
/* plan_cache.c: the context's structural plan cache (eval_internal.h). A graph keeps the plans of its own
 * roots, but every new input array is a new node: `x * 2 + 1` evaluated on a fresh x each call ran the
 * whole pass pipeline and the kernel-table look-ups each time (~10 us of a ~13 us call on the host). Here
 * plans are keyed by what the passes read: the evaluated subgraph in a canonical form. A hit shares the
 * plan's schedule and pinned kernels with the new graph through an input map (eval_plan.c: rt_plan_share).
 *
 * The key (bytes compared whole; the hash only picks the bucket): the nodes reachable from the roots in the
 * post-order of a depth-first walk (roots in order, sources in order: the same for any graph of the same
 * structure, whatever order its nodes were made in), each with its kind, op, dtype, flags, axes, value
 * bits (not a constant's), shape and view arguments, its sources renumbered in that order; an input node by the order of first use and, at
 * its first use, its layout (dtype, shape, strides, device; never its address); then the roots, the
 * layouts the outputs are written in, the device and whether loom_eval allocates the outputs. Entries past
 * a dimension count are written only when not zero, so keys stay short and still exact.
 *
 * Constants (IR_CONST) are in the key by kind and dtype only, numbered in walk order (RtPlanKey.const_node),
 * so `p - lr * g` with a new lr shares its plan too. A plan holds for other values of a constant when its
 * value reached the kernels only as launch words (SchedKernel.param_node): an entry then lists those
 * words (patches) and a hit writes them from the new graph's values (rt_plan_share). A constant a pass
 * read (Schedule.const_read: folded, matched, baked) or that reached no launch word is pinned: the entry
 * matches only graphs with its value, and another value makes (and keeps) a plan of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/eval_internal.h"

enum {
  KEY_MAX_BYTES = 1 << 20, /* a larger subgraph is not shared (its passes dwarf a look-up anyway) */
  STACK_NODES = 1024,      /* words of the walk kept on the stack (3 a node up to the last root, 1 an input) */
  DEFAULT_CAPACITY = 256,
};

/* Launch word `param` of kernel `kernel` holds constant `konst` (its number in the key) in dtype `dtype`. */
typedef struct PlanPatch {
  int32_t kernel, param, konst;
  uint8_t dtype;
} PlanPatch;

typedef struct PlanEntry {
  struct PlanEntry *chain;      /* the bucket's next entry */
  struct PlanEntry *prev, *next; /* its segment's list, most recently used first */
  bool hot;                      /* in the protected segment: hit since it was kept */
  uint64_t hash;
  size_t len;
  uint8_t *bytes;
  int32_t ncanon;
  int32_t *canon; /* the plan's graph's input indices in first-use order */
  int32_t npin, npatch;
  int32_t *pin;     /* constants (numbers in the key) whose values the plan holds for only ... */
  Scalar *pin_value; /* ... these */
  PlanPatch *patch;  /* the launch words that hold the other constants */
  RtPlan *plan;   /* one reference */
} PlanEntry;

/* A segmented LRU: a new plan enters the probation segment and moves to the protected one on its first hit;
 * the probation segment's least recently used goes first. A structure made once (a new constant each call:
 * a learning rate, a random counter) then never pushes out the plans that are reused. */
struct RtPlanCache {
  pthread_mutex_t lock;
  int32_t capacity, nbuckets;
  int32_t count[2]; /* [0] probation, [1] protected */
  PlanEntry **buckets;
  PlanEntry *first[2], *last[2];
};

/* ---- the key ----------------------------------------------------------------------------------------- */
typedef struct KeyWriter {
  LoomContext *ctx;
  uint8_t *p, *inline_buf; /* p starts as inline_buf (the key's own storage, never freed) */
  size_t len, cap;
  bool failed;
} KeyWriter;

static void put(KeyWriter *w, const void *src, size_t n) {
  if (w->failed || n == 0) return;
  if (w->len + n > w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 2048;
    while (cap < w->len + n) cap *= 2;
    uint8_t *q = cap <= KEY_MAX_BYTES ? ctx_alloc(w->ctx, cap) : NULL;
    if (!q) {
      w->failed = true;
      return;
    }
    if (w->len) memcpy(q, w->p, w->len);
    if (w->p != w->inline_buf) ctx_free(w->ctx, w->p);
    w->p = q;
    w->cap = cap;
  }
  memcpy(w->p + w->len, src, n);
  w->len += n;
}

/* v[0..ndim), then a flag and v[ndim..LOOM_MAX_RANK) when any of those is not zero. */
static void put_dims(KeyWriter *w, const int64_t *v, int32_t ndim) {
  put(w, v, (size_t)ndim * sizeof *v);
  uint8_t tail = 0;
  for (int32_t i = ndim; i < LOOM_MAX_RANK; i++) tail |= v[i] != 0;
  put(w, &tail, 1);
  if (tail) put(w, v + ndim, (size_t)(LOOM_MAX_RANK - ndim) * sizeof *v);
}

/* An array's layout: every field but its address. */
static void put_layout(KeyWriter *w, const LoomArray *a) {
  int32_t head[4] = {(int32_t)a->dtype, a->ndim, (int32_t)a->device, a->device_index};
  put(w, head, sizeof head);
  put_dims(w, a->shape, a->ndim);
  put_dims(w, a->strides, a->ndim);
}

/* An empty key on its own storage (the inline arrays are not cleared: they are written before read). */
static void key_clear(RtPlanKey *key) {
  key->bytes = NULL;
  key->len = 0;
  key->hash = 0;
  key->ncanon = key->nconst = 0;
  key->canon = NULL;
  key->const_node = key->inline_const;
  key->capconst = RT_KEY_INLINE_IDS;
}

/* Appends constant node x to the key's constants (walk order). */
static bool push_const(LoomContext *ctx, RtPlanKey *key, int32_t x) {
  if (key->nconst == key->capconst) {
    int32_t cap = key->capconst * 2;
    int32_t *q = ctx_alloc(ctx, (size_t)cap * sizeof *q);
    if (!q) return false;
    if (key->nconst) memcpy(q, key->const_node, (size_t)key->nconst * sizeof *q);
    if (key->const_node != key->inline_const) ctx_free(ctx, key->const_node);
    key->const_node = q;
    key->capconst = cap;
  }
  key->const_node[key->nconst++] = x;
  return true;
}

static int32_t cache_capacity(void) {
  static int32_t slot = -1;
  int32_t c = __atomic_load_n(&slot, __ATOMIC_RELAXED);
  if (c < 0) {
    const char *s = getenv("LOOM_PLAN_CACHE");
    c = DEFAULT_CAPACITY;
    if (s && *s) {
      char *end = NULL;
      long v = strtol(s, &end, 10);
      if (end && *end == '\0' && v >= 0) c = v > 1 << 20 ? 1 << 20 : (int32_t)v;
    }
    __atomic_store_n(&slot, c, __ATOMIC_RELAXED);
  }
  return c;
}

bool rt_plan_key_make(const LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs,
                      LoomDeviceKind dk, int32_t di, bool fresh, RtPlanKey *key) {
  key_clear(key);
  if (cache_capacity() == 0 || n <= 0) return false;
  const IrGraph *ir = &g->ir;
  int32_t top = -1;
  for (int32_t i = 0; i < n; i++)
    if (nodes[i] > top) top = nodes[i];
  if (top < 0 || top >= ir->nnodes) return false;
  /* per node up to top: its number in the key (-1: not reached, -2: on the walk's stack); the walk's stack
   * (node, next source); per input: its first-use order */
  int32_t stack_words[STACK_NODES];
  size_t need = 3 * (size_t)(top + 1) + (size_t)(ir->ninputs > 0 ? ir->ninputs : 1);
  int32_t *id = need <= STACK_NODES ? stack_words : ctx_alloc(g->ctx, need * sizeof *id);
  if (!id) return false;
  int32_t *walk = id + top + 1, *next_src = walk + top + 1, *order = next_src + top + 1;
  for (int32_t x = 0; x <= top; x++) id[x] = -1;
  for (int32_t k = 0; k < ir->ninputs; k++) order[k] = -1;
  KeyWriter w = {.ctx = g->ctx, .p = key->inline_bytes, .inline_buf = key->inline_bytes,
                 .cap = sizeof key->inline_bytes};
  key->canon = ir->ninputs <= RT_KEY_INLINE_IDS
                   ? key->inline_canon
                   : ctx_alloc(g->ctx, (size_t)ir->ninputs * sizeof *key->canon);
  bool ok = key->canon != NULL;
  int32_t next = 0;
  /* Nodes in the post-order of a depth-first walk from the roots in order, sources in order: the same
   * for every graph of the same structure, whatever order its nodes were made in. */
  for (int32_t r = 0; r < n && ok; r++) {
    if (id[nodes[r]] != -1) continue;
    int32_t depth = 0;
    walk[depth] = nodes[r], next_src[depth++] = 0;
    id[nodes[r]] = -2;
    while (depth > 0 && ok) {
      int32_t x = walk[depth - 1];
      const IrNode *nd = &ir->nodes[x];
      if (next_src[depth - 1] < 3) {
        int32_t s = nd->src[next_src[depth - 1]++];
        if (s < 0 || id[s] >= 0) continue;
        if (s >= x || id[s] == -2) { /* sources precede their users in a graph; never a cycle */
          ok = false;
          break;
        }
        id[s] = -2;
        walk[depth] = s, next_src[depth++] = 0;
        continue;
      }
      depth--;
      if (nd->ndim > LOOM_MAX_RANK) {
        ok = false;
        break;
      }
      id[x] = next++;
      struct {
        uint8_t kind, dtype, ndim, flags;
        uint16_t op, pad;
        uint32_t axes;
        int32_t src[3], input;
      } head = {nd->kind, nd->dtype, nd->ndim, nd->flags, nd->op, nd->pad, nd->axes, {-1, -1, -1}, -1};
      for (int k = 0; k < 3; k++) head.src[k] = nd->src[k] >= 0 ? id[nd->src[k]] : nd->src[k];
      bool first_use = false;
      if (nd->kind == IR_INPUT) {
        if (nd->input < 0 || nd->input >= ir->ninputs) {
          ok = false;
          break;
        }
        if (order[nd->input] < 0) {
          order[nd->input] = key->ncanon;
          key->canon[key->ncanon++] = nd->input;
          first_use = true;
        }
        head.input = order[nd->input];
      }
      put(&w, &head, sizeof head);
      if (nd->kind != IR_CONST) put(&w, &nd->value, sizeof nd->value);
      else if (!push_const(g->ctx, key, x)) ok = false;
      put_dims(&w, nd->shape, nd->ndim);
      uint8_t has_args = 0; /* most nodes have no view arguments: one byte for both */
      for (int k = 0; k < LOOM_MAX_RANK; k++) has_args |= (nd->arg[k] | nd->arg2[k]) != 0;
      put(&w, &has_args, 1);
      if (has_args) {
        put_dims(&w, nd->arg, nd->ndim);
        put_dims(&w, nd->arg2, nd->ndim);
      }
      if (first_use) put_layout(&w, &ir->inputs[nd->input]);
    }
  }
  if (ok) {
    int32_t tail[4] = {n, (int32_t)dk, di, fresh};
    put(&w, tail, sizeof tail);
    for (int32_t i = 0; i < n; i++) {
      put(&w, &id[nodes[i]], sizeof(int32_t));
      put_layout(&w, &outs[i]);
    }
  }
  if (id != stack_words) ctx_free(g->ctx, id);
  if (!ok || w.failed) {
    if (w.p != w.inline_buf) ctx_free(g->ctx, w.p);
    rt_plan_key_free(g->ctx, key);
    return false;
  }
  key->bytes = w.p;
  key->len = w.len;
  key->hash = ir_hash_bytes(w.p, w.len, 0x6c6f6f6d706c616eull);
  return true;
}

void rt_plan_key_free(LoomContext *ctx, RtPlanKey *key) {
  if (key->bytes != key->inline_bytes) ctx_free(ctx, key->bytes);
  if (key->canon != key->inline_canon) ctx_free(ctx, key->canon);
  if (key->const_node != key->inline_const) ctx_free(ctx, key->const_node);
  key_clear(key);
}

/* ---- the table --------------------------------------------------------------------------------------- */
static RtPlanCache *cache_of(LoomContext *ctx, bool make) {
  RtPlanCache *c = __atomic_load_n(&ctx->rt->plan_cache, __ATOMIC_ACQUIRE);
  if (c || !make) return c;
  pthread_mutex_lock(&ctx->rt->stats_lock); /* first use: made once */
  c = ctx->rt->plan_cache;
  if (!c) {
    int32_t cap = cache_capacity(), nb = 64;
    while (nb < cap && nb < (1 << 16)) nb *= 2;
    c = ctx_calloc(ctx, 1, sizeof *c);
    PlanEntry **b = c ? ctx_calloc(ctx, (size_t)nb, sizeof *b) : NULL;
    if (b && pthread_mutex_init(&c->lock, NULL) == 0) {
      c->capacity = cap;
      c->nbuckets = nb;
      c->buckets = b;
      __atomic_store_n(&ctx->rt->plan_cache, c, __ATOMIC_RELEASE);
    } else {
      ctx_free(ctx, b);
      ctx_free(ctx, c);
      c = NULL;
    }
  }
  pthread_mutex_unlock(&ctx->rt->stats_lock);
  return c;
}

static PlanEntry **bucket(RtPlanCache *c, uint64_t hash) { return &c->buckets[hash & (uint64_t)(c->nbuckets - 1)]; }

/* Whether graph g's constants (key's) have e's pinned values. */
static bool pins_match(const PlanEntry *e, const IrGraph *g, const RtPlanKey *key) {
  for (int32_t i = 0; i < e->npin; i++)
    if (memcmp(&g->nodes[key->const_node[e->pin[i]]].value, &e->pin_value[i], sizeof(Scalar)) != 0) return false;
  return true;
}

/* The entry of key (made on graph g) whose pinned constants have g's values, or NULL. */
static PlanEntry *lookup(RtPlanCache *c, const RtPlanKey *key, const IrGraph *g) {
  for (PlanEntry *e = *bucket(c, key->hash); e; e = e->chain)
    if (e->hash == key->hash && e->len == key->len && memcmp(e->bytes, key->bytes, key->len) == 0 &&
        pins_match(e, g, key))
      return e;
  return NULL;
}

static void unlink_lru(RtPlanCache *c, PlanEntry *e) {
  int s = e->hot;
  if (e->prev) e->prev->next = e->next;
  else c->first[s] = e->next;
  if (e->next) e->next->prev = e->prev;
  else c->last[s] = e->prev;
  e->prev = e->next = NULL;
  c->count[s]--;
}

static void push_front(RtPlanCache *c, PlanEntry *e, bool hot) {
  int s = e->hot = hot;
  e->prev = NULL;
  e->next = c->first[s];
  if (c->first[s]) c->first[s]->prev = e;
  c->first[s] = e;
  if (!c->last[s]) c->last[s] = e;
  c->count[s]++;
}

/* A hit: to the front of the protected segment, whose least recently used goes back to probation when it
 * holds more than three quarters of the capacity. */
static void promote(RtPlanCache *c, PlanEntry *e) {
  unlink_lru(c, e);
  push_front(c, e, true);
  int32_t hot_cap = c->capacity - (c->capacity / 4 > 1 ? c->capacity / 4 : 1);
  if (c->count[1] > hot_cap) {
    PlanEntry *old = c->last[1];
    unlink_lru(c, old);
    push_front(c, old, false);
  }
}

RtPlan *rt_plan_cache_find(LoomGraph *g, const RtPlanKey *key, int32_t n, const LoomNode *nodes,
                           const LoomArray *outs, LoomDeviceKind dk, int32_t di, bool fresh) {
  RtPlanCache *c = cache_of(g->ctx, false);
  if (!c) return NULL;
  RtPlan *p = NULL;
  pthread_mutex_lock(&c->lock);
  PlanEntry *e = lookup(c, key, &g->ir);
  if (e && e->ncanon == key->ncanon) {
    promote(c, e);
    int32_t nmap = 0;
    for (int32_t j = 0; j < e->ncanon; j++)
      if (e->canon[j] + 1 > nmap) nmap = e->canon[j] + 1;
    int32_t stack_map[64];
    RtParamPatch stack_patch[32];
    int32_t *map = nmap <= 64 ? stack_map : ctx_alloc(g->ctx, (size_t)nmap * sizeof *map);
    RtParamPatch *patch = e->npatch <= 32 ? stack_patch : ctx_alloc(g->ctx, (size_t)e->npatch * sizeof *patch);
    if (map && patch) {
      for (int32_t i = 0; i < nmap; i++) map[i] = -1;
      for (int32_t j = 0; j < e->ncanon; j++) map[e->canon[j]] = key->canon[j];
      int32_t npatch = 0; /* the words this graph's constants change */
      const Schedule *s = e->plan->schedule;
      for (int32_t i = 0; i < e->npatch; i++) {
        const PlanPatch *q = &e->patch[i];
        uint64_t w = ir_param_word((LoomDType)q->dtype, g->ir.nodes[key->const_node[q->konst]].value);
        if (w != s->kernels[q->kernel].params[q->param])
          patch[npatch++] = (RtParamPatch){.kernel = q->kernel, .param = q->param, .word = w};
      }
      p = rt_plan_share(g, n, nodes, outs, dk, di, fresh, e->plan, map, nmap, patch, npatch);
    }
    if (map != stack_map) ctx_free(g->ctx, map);
    if (patch != stack_patch) ctx_free(g->ctx, patch);
  }
  pthread_mutex_unlock(&c->lock);
  return p;
}

/* Whether every input p's schedule binds is one of the key's (a pass never adds inputs today; if one
 * did, a graph of the same key would not have it). */
static bool binds_key_inputs(const RtPlan *p, const RtPlanKey *key) {
  const Schedule *s = p->schedule;
  for (int32_t k = 0; k < s->nkernel; k++) {
    const SchedKernel *sk = &s->kernels[k];
    for (int32_t b = 0; b < sk->ir->nbuf; b++) {
      if (sk->bind[b].kind != SB_INPUT) continue;
      bool found = false;
      for (int32_t j = 0; j < key->ncanon && !found; j++) found = key->canon[j] == sk->bind[b].index;
      if (!found) return false;
    }
  }
  return true;
}

static void entry_free(LoomContext *ctx, PlanEntry *e) {
  ctx_free(ctx, e->bytes);
  ctx_free(ctx, e->canon);
  ctx_free(ctx, e->pin);
  ctx_free(ctx, e->pin_value);
  ctx_free(ctx, e->patch);
  ctx_free(ctx, e);
}

/* e's pinned constants and launch-word patches for plan p of key (made on graph g): a constant is
 * patched when every use reached the kernels as a launch word and no pass read its value, else pinned. */
static bool entry_constants(LoomContext *ctx, PlanEntry *e, const RtPlan *p, const RtPlanKey *key,
                            const IrGraph *g) {
  const Schedule *s = p->schedule;
  int32_t nc = key->nconst, npatch = 0, nwords = 0;
  for (int32_t k = 0; k < s->nkernel; k++) nwords += s->kernels[k].param_node ? s->kernels[k].ir->nparam : 0;
  uint8_t *patched = ctx_calloc(ctx, (size_t)(nc > 0 ? nc : 1), 1);
  e->patch = ctx_alloc(ctx, (size_t)(nwords > 0 ? nwords : 1) * sizeof *e->patch);
  e->pin = ctx_alloc(ctx, (size_t)(nc > 0 ? nc : 1) * sizeof *e->pin);
  e->pin_value = ctx_alloc(ctx, (size_t)(nc > 0 ? nc : 1) * sizeof *e->pin_value);
  if (!patched || !e->patch || !e->pin || !e->pin_value) {
    ctx_free(ctx, patched);
    return false;
  }
  for (int32_t k = 0; k < s->nkernel; k++) {
    const SchedKernel *sk = &s->kernels[k];
    for (int32_t q = 0; sk->param_node && q < sk->ir->nparam; q++) {
      int32_t x = sk->param_node[q], j = 0;
      if (x < 0 || (x < s->nconst_read && s->const_read[x])) continue;
      while (j < nc && key->const_node[j] != x) j++;
      if (j == nc) continue; /* a constant a pass made (from pinned ones): its word stays */
      patched[j] = 1;
      e->patch[npatch++] = (PlanPatch){.kernel = k, .param = q, .konst = j,
                                       .dtype = (uint8_t)dtype_compute((LoomDType)g->nodes[x].dtype)};
    }
  }
  e->npatch = npatch;
  e->npin = 0;
  for (int32_t j = 0; j < nc; j++) {
    int32_t x = key->const_node[j];
    if (patched[j]) continue; /* reached launch words only, and no pass read it */
    e->pin[e->npin] = j;
    e->pin_value[e->npin++] = g->nodes[x].value;
  }
  ctx_free(ctx, patched);
  return true;
}

void rt_plan_cache_insert(LoomContext *ctx, const RtPlanKey *key, RtPlan *p, const IrGraph *g) {
  if (!key->bytes || p->origin || !binds_key_inputs(p, key)) return;
  RtPlanCache *c = cache_of(ctx, true);
  if (!c) return;
  PlanEntry *e = ctx_calloc(ctx, 1, sizeof *e);
  if (e) {
    e->bytes = ctx_alloc(ctx, key->len);
    e->canon = ctx_alloc(ctx, (size_t)(key->ncanon > 0 ? key->ncanon : 1) * sizeof *e->canon);
  }
  if (!e || !e->bytes || !e->canon || !entry_constants(ctx, e, p, key, g)) {
    if (e) entry_free(ctx, e);
    return;
  }
  memcpy(e->bytes, key->bytes, key->len);
  if (key->ncanon > 0) memcpy(e->canon, key->canon, (size_t)key->ncanon * sizeof *e->canon);
  e->len = key->len;
  e->hash = key->hash;
  e->ncanon = key->ncanon;
  e->plan = p;
  PlanEntry *evicted = NULL;
  pthread_mutex_lock(&c->lock);
  if (lookup(c, key, g)) { /* another thread kept the same plan first */
    pthread_mutex_unlock(&c->lock);
    entry_free(ctx, e);
    return;
  }
  __atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
  PlanEntry **b = bucket(c, key->hash);
  e->chain = *b;
  *b = e;
  push_front(c, e, false);
  if (c->count[0] + c->count[1] > c->capacity) { /* probation's least recently used goes first */
    evicted = c->last[0] ? c->last[0] : c->last[1];
    unlink_lru(c, evicted);
    for (PlanEntry **link = bucket(c, evicted->hash); *link; link = &(*link)->chain)
      if (*link == evicted) {
        *link = evicted->chain;
        break;
      }
  }
  pthread_mutex_unlock(&c->lock);
  if (evicted) { /* outside the lock: the last reference unpins kernels */
    rt_plan_free(ctx, evicted->plan);
    entry_free(ctx, evicted);
  }
}

void rt_plan_cache_destroy(LoomContext *ctx) {
  RtPlanCache *c = ctx && ctx->rt ? ctx->rt->plan_cache : NULL;
  if (!c) return;
  for (int seg = 0; seg < 2; seg++)
    for (PlanEntry *e = c->first[seg], *next; e; e = next) {
      next = e->next;
      rt_plan_free(ctx, e->plan);
      entry_free(ctx, e);
    }
  pthread_mutex_destroy(&c->lock);
  ctx_free(ctx, c->buckets);
  ctx_free(ctx, c);
  ctx->rt->plan_cache = NULL;
}
