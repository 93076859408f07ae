/* SPDX-License-Identifier: Apache-2.0 */
/* pipeline.c: pass_run_pipeline, the whole pass pipeline written out in one {name, fn} table.
 *
 * Contract. Requires: m->graph, m->arena, m->roots (nroots >= 1, valid nodes), m->outs (one descriptor
 * per root: dtype, shape, strides). Guarantees: on LOOM_OK, m->schedule holds the kernels to run in
 * order; on error, d says what failed and m->schedule is left NULL or partial (everything lives in the
 * arena, so nothing leaks). With LOOM_DEBUG_VERIFY, the graph is verified after each graph pass and
 * every kernel after each schedule pass. When m->dump is set: "# after NAME" plus the graph after each
 * graph pass (IR_DUMP_GRAPH), the schedule at the end (IR_DUMP_KERNELS), "# time NAME MS" per pass
 * (IR_DUMP_TIME).
 */
#include <time.h>

#include "passes/passes.h"

typedef struct PassEntry {
  const char *name;
  LoomStatus (*fn)(IrModule *m, Diag *d);
  bool graph_pass; /* rewrites the graph and roots (dumps and verifies the graph after it) */
} PassEntry;

static const PassEntry passes[] = {
    {"fold", pass_fold, true},
    {"onehot", pass_onehot, true},
    {"push_views", pass_push_views, true},
    {"fuse", pass_fuse, false},
    {"lower", pass_lower, false},
    {"complex_parts", pass_complex_parts, false},
    {"collapse", pass_collapse, false},
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#ifdef LOOM_DEBUG_VERIFY
static LoomStatus verify_schedule(const Schedule *s, const char *after, Diag *d) {
  if (!s) return LOOM_OK;
  for (int32_t i = 0; i < s->nkernel; i++) {
    LoomStatus st = ir_verify_kernel(s->kernels[i].ir, d);
    if (st != LOOM_OK) return st;
  }
  (void)after;
  return LOOM_OK;
}
#endif

LoomStatus pass_run_pipeline(IrModule *m, Diag *d) {
  if (!m || !m->graph || !m->arena || m->nroots < 1 || !m->roots || !m->outs)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "pass_run_pipeline: needs a graph, an arena, at least one root and its outputs");
  for (int32_t i = 0; i < m->nroots; i++)
    if (m->roots[i] < 0 || m->roots[i] >= m->graph->nnodes)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "pass_run_pipeline: root %d is not a node", i);
  m->plan = NULL;
  m->schedule = NULL;
  m->nconst_read = m->graph->nnodes;
  m->const_read = arena_alloc(m->arena, (size_t)m->nconst_read + 1); /* zeroed */
  if (!m->const_read) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "pass_run_pipeline: out of memory");
  for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
    const PassEntry *p = &passes[i];
    double t0 = now_ms();
    LoomStatus st = p->fn(m, d);
    double t1 = now_ms();
    if (st != LOOM_OK) return st;
    if (m->dump && (m->dump_flags & IR_DUMP_TIME)) sb_printf(m->dump, "# time %s %.3f ms\n", p->name, t1 - t0);
#ifdef LOOM_DEBUG_VERIFY
    if (p->graph_pass) {
      if ((st = ir_verify_graph(m->graph, d)) != LOOM_OK) return st;
    } else if ((st = verify_schedule(m->schedule, p->name, d)) != LOOM_OK) {
      return st;
    }
#endif
    if (m->dump && p->graph_pass && (m->dump_flags & IR_DUMP_GRAPH)) {
      sb_printf(m->dump, "# after %s\n", p->name);
      ir_print_graph(m->graph, m->nroots, m->roots, m->dump);
    }
  }
  if (m->schedule) {
    m->schedule->const_read = m->const_read;
    m->schedule->nconst_read = m->nconst_read;
  }
  if (m->dump && (m->dump_flags & IR_DUMP_KERNELS)) {
    sb_printf(m->dump, "# schedule\n");
    ir_print_schedule(m->schedule, m->dump);
  }
  return LOOM_OK;
}
