/* calls.c: what the passes know about library-call nodes (IR_MATMUL), shared by fuse.c and lower.c.
 *
 * A matrix product runs as one call of a vendor library (runtime/linalg_call.c; a BLAS on the host,
 * cuBLASLt on NVIDIA). Two questions are answered here from the graph alone, so that every device
 * sees the same schedule:
 * - pass_blas_matrix: can a BLAS read (or write) an operand in place, with its strides? Transposes
 *   and slices with a unit-stride dim are; broadcast (stride 0) or negative-stride matrices are not
 *   (fuse.c then materializes the operand into a contiguous temp first).
 * - pass_match_epilogue: is the elementwise expression that alone reads a product of the form
 *   act(alpha * P + bias + beta * c) that the library applies inside the call (cuBLASLt's epilogues)?
 *   Accepted: P scaled by scalar constants (multiplication, or division by a power of two: exact),
 *   added (in any order) to at most one bias vector (along N, the same for every batch) and at most
 *   one row-major c matrix (beta 1), then at most one ReLU (maximum with a constant 0). Every node
 *   of the chain must have P's dtype and shape and be computed only here (no realized node inside).
 */
#include <math.h>
#include <string.h>

#include "passes/passes.h"

bool pass_blas_matrix(int ndim, const int64_t *shape, const int64_t *strides) {
  if (ndim < 2) return false;
  for (int i = 0; i < ndim; i++)
    if (strides[i] < 0) return false;
  int64_t r = shape[ndim - 2], c = shape[ndim - 1], sr = strides[ndim - 2], sc = strides[ndim - 1];
  if (r <= 1 || c <= 1) { /* a vector: its one dim of size > 1 needs a positive stride */
    if (r > 1) return sr > 0;
    if (c > 1) return sc > 0;
    return true;
  }
  if (sc == 1 && sr >= c) return true; /* row-major, leading dimension sr */
  if (sr == 1 && sc >= r) return true; /* column-major, leading dimension sc */
  return false;
}

static bool same_shape(const IrNode *a, const IrNode *b) {
  return a->ndim == b->ndim && memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

/* The scalar value of constant top x (a CONST or BROADCAST(CONST)) as a double; false if not one. */
static bool const_value(const IrGraph *g, int32_t x, double *v) {
  int32_t c = pass_const_of(g, x);
  if (c < 0) return false;
  const IrNode *n = &g->nodes[c];
  switch (dtype_kind((LoomDType)n->dtype)) {
  case DK_FLOAT: *v = n->value.f; break;
  case DK_INT: *v = (double)n->value.i; break;
  default: *v = (double)n->value.u; break;
  }
  return isfinite(*v);
}

/* The matcher's state: the graph, the realized-node marks, the product, the epilogue's root (which is
 * realized itself: the call stores it) and the epilogue found so far. */
typedef struct Match {
  const IrGraph *g;
  const uint8_t *is_stop;
  int32_t mm, root;
  CallEpilogue e;
} Match;

/* A node of the chain: an ELEM of the product's dtype and shape, not realized on its own. */
static bool chain_node(const Match *m, int32_t x) {
  const IrNode *n = &m->g->nodes[x], *p = &m->g->nodes[m->mm];
  return n->kind == IR_ELEM && (x == m->root || !m->is_stop[x]) && n->dtype == p->dtype && same_shape(n, p);
}

/* Classifies addend x (of the product's shape) as the bias vector or the c matrix: it must be read
 * from memory (a view of a leaf other than the product, or a realized node), not computed here. */
static bool add_term(Match *m, int32_t x) {
  const IrGraph *g = m->g;
  const IrNode *p = &g->nodes[m->mm], *t = &g->nodes[x];
  CallEpilogue *e = &m->e;
  IrView v;
  if ((t->kind == IR_ELEM || t->kind == IR_CAST) && !m->is_stop[x]) return false;
  if (x == m->root || pass_const_of(g, x) >= 0 || !pass_compute_view(g, x, &v) || v.leaf == m->mm) return false;
  if (t->dtype != p->dtype || !same_shape(t, p)) return false;
  int nd = p->ndim;
  int64_t mr = p->shape[nd - 2], nc = p->shape[nd - 1], sm = v.strides[nd - 2], sn = v.strides[nd - 1];
  bool batch_zero = true;
  for (int i = 0; i < nd - 2; i++)
    if (v.strides[i] != 0 && p->shape[i] > 1) batch_zero = false;
  bool along_n = batch_zero && (sm == 0 || mr == 1) && (sn == 1 || nc == 1);
  if (along_n && e->bias < 0) { /* a bias along N: cuBLASLt's (the result is row-major) */
    e->bias = x;
    return true;
  }
  bool row_major = (sn == 1 || nc == 1) && (sm >= nc || mr == 1) && pass_blas_matrix(nd, p->shape, v.strides);
  if (e->c < 0 && row_major) { /* a c matrix is read in the layout of the (row-major) result */
    e->c = x;
    e->beta = 1.0;
    return true;
  }
  return false;
}

/* scaled = mm | MUL(scaled, c) | MUL(c, scaled) | TRUEDIV(scaled, 2^k) */
static bool match_scaled(Match *m, int32_t x, int depth) {
  if (x == m->mm) return true;
  if (depth > 64 || !chain_node(m, x)) return false;
  const IrNode *n = &m->g->nodes[x];
  double c;
  if (n->op == LOOM_OP_MUL) {
    for (int i = 0; i < 2; i++)
      if (const_value(m->g, n->src[1 - i], &c) && match_scaled(m, n->src[i], depth + 1)) {
        m->e.alpha *= c;
        return true;
      }
    return false;
  }
  if (n->op == LOOM_OP_TRUEDIV && const_value(m->g, n->src[1], &c) && c != 0) {
    int ex;
    if (frexp(fabs(c), &ex) != 0.5) return false; /* only powers of two scale exactly */
    if (!match_scaled(m, n->src[0], depth + 1)) return false;
    m->e.alpha /= c;
    return true;
  }
  return false;
}

/* sum = scaled | ADD(sum, addend) | ADD(addend, sum) */
static bool match_sum(Match *m, int32_t x, int depth) {
  const IrNode *n = &m->g->nodes[x];
  if (depth > 64) return false;
  if (x != m->mm && chain_node(m, x) && n->op == LOOM_OP_ADD) {
    for (int i = 0; i < 2; i++) {
      CallEpilogue save = m->e;
      if (add_term(m, n->src[1 - i]) && match_sum(m, n->src[i], depth + 1))
        return true;
      m->e = save;
    }
    return false;
  }
  return match_scaled(m, x, depth);
}

/* epilogue = MAXIMUM(sum, 0) | MAXIMUM(0, sum) | sum */
bool pass_match_epilogue(const IrGraph *g, const uint8_t *is_stop, int32_t value, int32_t mm, CallEpilogue *out) {
  Match m = {g, is_stop, mm, value, {.bias = -1, .c = -1, .alpha = 1.0, .beta = 0.0, .act = KACT_NONE}};
  const IrNode *n = &g->nodes[value];
  int32_t x = value;
  double z;
  if (x != mm && chain_node(&m, x) && n->op == LOOM_OP_MAXIMUM) {
    for (int i = 0; i < 2; i++)
      if (const_value(g, n->src[1 - i], &z) && z == 0) {
        m.e.act = KACT_RELU;
        x = n->src[i];
        break;
      }
    if (m.e.act == KACT_NONE) return false;
  }
  if (!match_sum(&m, x, 0)) return false;
  *out = m.e;
  return true;
}
