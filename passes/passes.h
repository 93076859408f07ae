/* passes.h: the passes between the graph IR and a schedule of kernels.
 *
 * A pass has the signature `LoomStatus pass_NAME(IrModule *m, Diag *d)`; analyses are compute_*,
 * transforms are verbs. passes/pipeline.c runs them in order from one {name, fn} table, verifies the
 * IR between passes in debug builds, and appends per-pass dumps when LOOM_DUMP asks for them.
 *
 * Pipeline: fold (constant folding) -> push_views (movement ops moved onto leaves) -> fuse (kernel
 * grouping) -> lower (kernel IR + bindings, reduction strategy) -> collapse (merge contiguous dims).
 * Graph nodes are immutable and hash-consed, so rewrites add nodes and replace the roots.
 */
#ifndef LOOM_PASSES_H
#define LOOM_PASSES_H

#include "ir/ir.h"

struct FusionPlan; /* defined by passes/fuse.c's section below */

typedef struct IrModule {
  IrGraph *graph;
  Arena *arena;               /* everything a pass allocates lives here */
  int32_t nroots;
  int32_t *roots;             /* the requested nodes (arena copy; passes replace entries) */
  const LoomArray *outs;      /* nroots output descriptors: dtype, shape, strides (data unused) */
  struct FusionPlan *plan;    /* set by pass_fuse */
  Schedule *schedule;         /* set by pass_lower, refined by pass_collapse */
  StrBuf *dump;               /* non-NULL: per-pass dumps are appended */
  uint32_t dump_flags;        /* IR_DUMP_* */
} IrModule;

/* Runs the whole pipeline: on success m->schedule holds the kernels to run in order. */
LoomStatus pass_run_pipeline(IrModule *m, Diag *d);

LoomStatus pass_fold(IrModule *m, Diag *d);
LoomStatus pass_push_views(IrModule *m, Diag *d);
LoomStatus pass_fuse(IrModule *m, Diag *d);
LoomStatus pass_lower(IrModule *m, Diag *d);
LoomStatus pass_collapse(IrModule *m, Diag *d);

/* Prints the schedule (each kernel's IR plus its shape and bindings) in the golden-file format. */
void ir_print_schedule(const Schedule *s, StrBuf *out);

#endif /* LOOM_PASSES_H */
