/* SPDX-License-Identifier: Apache-2.0 */
/* eval_internal.h: what the files of loom_eval share (private to runtime/eval*.c).
 *
 *   eval.c        loom_eval: argument checks, the device of an evaluation, outputs and temporaries, the run
 *   eval_plan.c   evaluation plans: a graph's kept schedules (roots and layouts -> schedule, pinned kernels)
 *   plan_cache.c  the context's structural plan cache: plans shared by graphs whose evaluated subgraphs match
 *                 (rt_plan_cache_destroy, called with the context, is declared in runtime.h)
 *   eval_dump.c   loom_dump / loom_dump_for: graphs, kernels, LLVM IR, PTX, AMDGPU code and compile times
 */
#ifndef LOOM_RUNTIME_EVAL_INTERNAL_H
#define LOOM_RUNTIME_EVAL_INTERNAL_H

#include "runtime/device.h"

/* LOOM_ERR_INVALID_ARGUMENT unless n >= 1 and every nodes[i] is a node of g (fn names the call). */
LoomStatus rt_eval_check_nodes(const LoomGraph *g, int32_t n, const LoomNode *nodes, const char *fn, Diag *d);
/* *a: a C-contiguous host descriptor of node nd's dtype and shape over data. */
void rt_eval_describe_contiguous(LoomArray *a, const IrNode *nd, void *data);
/* The pass pipeline over graph g's n roots (outs: their layouts), its allocations in arena a; dump and
 * dump_flags as IrModule's. *out: the schedule (never NULL on LOOM_OK). Shared by plans and loom_dump. */
LoomStatus rt_eval_schedule(LoomGraph *g, Arena *a, int32_t n, int32_t *roots, const LoomArray *outs, StrBuf *dump,
                            uint32_t dump_flags, Schedule **out, Diag *d);

/* ---- eval_plan.c ---------------------------------------------------------------------------------------
 * A graph keeps up to RT_MAX_PLANS plans (most recently used first): the schedule made for one set
 * of roots, output layouts and input layouts, with its kernels pinned in the cache. Graph nodes are
 * immutable and the schedule binds arrays by index, never by address, so a later loom_eval with the
 * same roots and layouts skips the passes and the cache look-up: only outputs are allocated and the
 * kernels launched. Plans are freed with the graph (LoomGraph.free_plans). */
enum { RT_MAX_PLANS = 8 };

typedef struct RtPlan {
  struct RtPlan *next;
  int32_t refs;          /* the graph's list, the structural cache, plans sharing it (atomic) */
  struct RtPlan *origin; /* a plan of another graph whose schedule and kernels this one runs, or NULL */
  const int32_t *input_map; /* origin's: schedule input index -> this graph's input index; NULL: identity */
  int32_t ninput_map;
  int32_t n;
  int32_t *roots;
  int64_t *out_strides;  /* n * LOOM_MAX_RANK */
  int32_t ninputs;
  LoomArray *inputs;     /* layouts of the graph's inputs when the plan was made (data unused) */
  int32_t *input_index;  /* which input each of inputs[] is (a shared plan's, the ones it reads); NULL: i */
  Schedule *schedule;
  const RtKernel **kernels; /* prepared (pinned) on the device, one per schedule kernel; NULL: not kept */
  const RtDevice *dev;
  LoomDeviceKind device;
  int32_t device_index;
  bool fresh_outs;       /* made for outputs all allocated by loom_eval (rt_plan_find_fresh) */
  Arena arena;           /* owns this struct and everything above */
} RtPlan;

/* A kept plan for these roots when every output is to be allocated here (all outs[i].data NULL), found
 * before the device walk; NULL when there is none (or an output is given). Moves it to the front. */
RtPlan *rt_plan_find_fresh(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs);
/* The kept plan for these roots, output layouts (outs: the descriptors the kernels write) and device;
 * NULL if none. Moves it to the front. */
RtPlan *rt_plan_find(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs, LoomDeviceKind dk,
                     int32_t di);
/* Runs the pass pipeline into a new plan (dump: the passes' text, or NULL); when `keep`, prepares (pins)
 * its kernels on the device and keeps it on the graph, else the caller frees it (rt_plan_free). fresh:
 * every output is allocated by loom_eval. */
LoomStatus rt_plan_make(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs, LoomDeviceKind dk,
                        int32_t di, bool keep, bool fresh, StrBuf *dump, RtPlan **out, Diag *d);
/* Drops a reference; the last one unpins its kernels (or releases its origin) and frees it. */
void rt_plan_free(LoomContext *ctx, RtPlan *p);
/* A launch word of origin's schedule that holds another value in the sharing graph (plan_cache.c). */
typedef struct RtParamPatch {
  int32_t kernel, param;
  uint64_t word;
} RtParamPatch;
/* A plan of graph g for these roots that runs origin's schedule and kernels (origin: a plan made for
 * another graph whose evaluated subgraph matches, found by rt_plan_cache_find), its inputs bound through
 * map (nmap entries: origin's input index -> g's) and the launch words in patch[0..npatch) rewritten (a
 * copy of the schedule's kernel list and of those kernels' words); kept on g's list. NULL when out of
 * memory. */
RtPlan *rt_plan_share(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs, LoomDeviceKind dk,
                      int32_t di, bool fresh, RtPlan *origin, const int32_t *map, int32_t nmap,
                      const RtParamPatch *patch, int32_t npatch);

/* ---- plan_cache.c ---------------------------------------------------------------------------------------
 * Every new input array is a new graph node, so a graph's own plans serve only evaluations of the same
 * nodes; an expression evaluated on fresh arrays planned again each time. The context keeps up to
 * LOOM_PLAN_CACHE (default 256) plans (a segmented LRU: reused plans are protected from one-off ones) keyed
 * by a canonical form of the evaluated subgraph: the reachable nodes in a depth-first post-order from the
 * roots with sources renumbered, inputs by first use with their layouts (never their data), constants'
 * dtypes, roots, output layouts and the device. Passes read no array data, so a plan is valid for every
 * graph of the same key once its schedule's inputs are renamed (RtRun.input_map) and its constants'
 * launch words rewritten; constants a pass read are matched by value (plan_cache.c). */
enum { RT_KEY_INLINE_BYTES = 1024, RT_KEY_INLINE_IDS = 16 };
typedef struct RtPlanKey {
  uint8_t *bytes;
  size_t len;
  uint64_t hash;
  int32_t ncanon;
  int32_t *canon; /* the graph's input indices in first-use order */
  int32_t nconst, capconst;
  int32_t *const_node; /* the graph's IR_CONST nodes in walk order (their values are not in bytes) */
  /* a small key's storage (the key lives on the evaluation's stack): bytes, canon and const_node point
   * here until they outgrow it, so most evaluations make no heap allocation for their key */
  uint8_t inline_bytes[RT_KEY_INLINE_BYTES];
  int32_t inline_canon[RT_KEY_INLINE_IDS], inline_const[RT_KEY_INLINE_IDS];
} RtPlanKey;

/* The key of evaluating these roots of g (outs: the layouts the kernels write); false when the
 * evaluation cannot be shared (the cache is off, too large a subgraph, out of memory). */
bool rt_plan_key_make(const LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs,
                      LoomDeviceKind dk, int32_t di, bool fresh, RtPlanKey *key);
void rt_plan_key_free(LoomContext *ctx, RtPlanKey *key);
/* The cached plan of key shared into g (rt_plan_share), or NULL when none matches. */
RtPlan *rt_plan_cache_find(LoomGraph *g, const RtPlanKey *key, int32_t n, const LoomNode *nodes,
                           const LoomArray *outs, LoomDeviceKind dk, int32_t di, bool fresh);
/* Keeps plan p (made for key's graph g, kept on its list) for other graphs of the same key. */
void rt_plan_cache_insert(LoomContext *ctx, const RtPlanKey *key, RtPlan *p, const IrGraph *g);

#endif /* LOOM_RUNTIME_EVAL_INTERNAL_H */
