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
 *   one row-major c matrix (beta 1), then at most one ReLU (maximum with a constant 0) or one tanh-GELU
 *   0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))) (cuBLASLt's GELU; the erf GELU is not it). Every
 *   node of the chain must have P's dtype and shape and be computed only here (no realized node inside).
 *
 * The GELU is recognized by value, not by spelling (v * v * v, v ** 3, x * 0.5 first, the sigmoid form
 * v / (1 + exp(-2u)) all are it): the cone above one node v, built only of +, -, *, /, negation, powers,
 * tanh and exp of v and constants, is evaluated in float64 at points over [-8, 8] and a few large ones
 * and must equal tanh-GELU within what rounding its constants to P's dtype explains (4x the effect of
 * rounding sqrt(2/pi) and 0.044715), and be 4x closer to it than to the erf GELU. The two GELUs differ by
 * at most 4.7e-4, which float32 and float16 constants resolve (1e-7, 1.4e-5) and bfloat16 ones (3.4e-4)
 * do not: a bfloat16 GELU stays an elementwise kernel after the call.
 *
 * Complex products (complex64, complex128) take no epilogue: ReLU and GELU are not defined on them, the
 * Lt libraries' bias epilogues are for real types, and the scale constants here are real; an elementwise
 * tail of a complex product is a kernel of its own after the call.
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

/* ---- tanh-GELU ------------------------------------------------------------------------------------------ */
#define GELU_C1 0.7978845608028654 /* sqrt(2 / pi) */
#define GELU_C2 0.044715

static double gelu_tanh(double v, double c1, double c2) { return 0.5 * v * (1 + tanh(c1 * (v + c2 * v * v * v))); }
static double gelu_erf(double v) { return 0.5 * v * (1 + erf(v / sqrt(2.0))); }

/* The cone of x at v = t: a function of node v and constants only, through the ops above (each other
 * node a chain node); *ok false otherwise, or past *budget visits (a deep or wide cone is not a GELU). */
static double eval_at(const Match *m, int32_t x, int32_t v, double t, int *budget, bool *ok) {
  if (!*ok || --*budget < 0) return *ok = false, 0;
  if (x == v) return t;
  double c;
  if (const_value(m->g, x, &c)) return c;
  const IrNode *n = &m->g->nodes[x];
  if (x == m->mm || !chain_node(m, x)) return *ok = false, 0;
  double a = eval_at(m, n->src[0], v, t, budget, ok);
  switch (n->op) {
  case LOOM_OP_NEG: return -a;
  case LOOM_OP_TANH: return tanh(a);
  case LOOM_OP_EXP: return exp(a);
  case LOOM_OP_ADD: return a + eval_at(m, n->src[1], v, t, budget, ok);
  case LOOM_OP_SUB: return a - eval_at(m, n->src[1], v, t, budget, ok);
  case LOOM_OP_MUL: return a * eval_at(m, n->src[1], v, t, budget, ok);
  case LOOM_OP_TRUEDIV: return a / eval_at(m, n->src[1], v, t, budget, ok);
  case LOOM_OP_POW: return pow(a, eval_at(m, n->src[1], v, t, budget, ok));
  default: return *ok = false, 0;
  }
}

/* Whether the cone of m->root is tanh-GELU of node v (module comment). */
static bool is_gelu_of(const Match *m, int32_t v) {
  LoomDType t = (LoomDType)m->g->nodes[m->mm].dtype;
  /* float16 and float32 only: cuBLASLt's GELU epilogue on a float64 product is off by ~1e-8 relative
   * (H200, 2026-12-03: test_matmul_gelu_epilogue's float64 cases), a wrong answer at float64 */
  if (t != LOOM_FLOAT16 && t != LOOM_FLOAT32) return false;
  double r1 = ir_scalar_canon(t, (Scalar){.f = GELU_C1}).f, r2 = ir_scalar_canon(t, (Scalar){.f = GELU_C2}).f;
  double tol = 1e-9, err = 0, err_erf = 0;
  static const double big[] = {-1e4, -300, -50, -20, 12, 20, 50, 300, 1e4};
  for (int i = 0; i < 321 + 9; i++) {
    double x = i < 321 ? -8 + 0.05 * i : big[i - 321], want = gelu_tanh(x, GELU_C1, GELU_C2);
    double scale = fabs(x) > 1 ? fabs(x) : 1;
    int budget = 512;
    bool ok = true;
    double got = eval_at(m, m->root, v, x, &budget, &ok);
    if (!ok || isnan(got)) return false;
    tol = fmax(tol, 4 * fabs(gelu_tanh(x, r1, r2) - want) / scale);
    err = fmax(err, fabs(got - want) / scale);
    if (err > 2e-3) return false; /* beyond any dtype's tolerance: most cones leave at the first point */
    err_erf = fmax(err_erf, fabs(got - gelu_erf(x)) / scale);
  }
  return err <= tol && err * 4 < err_erf;
}

/* The node v of which the cone of m->root is tanh-GELU: the product or a chain node read in that cone
 * (searched depth first, at most 64 nodes); -1 if there is none. */
static int32_t gelu_arg(const Match *m) {
  int32_t stack[64], seen[64];
  int ns = 0, nseen = 0;
  stack[ns++] = m->root;
  while (ns > 0 && nseen < 64) {
    int32_t x = stack[--ns];
    bool dup = false;
    for (int i = 0; i < nseen && !dup; i++) dup = seen[i] == x;
    if (dup) continue;
    seen[nseen++] = x;
    if (x != m->root && (x == m->mm || chain_node(m, x)) && is_gelu_of(m, x)) return x;
    const IrNode *n = &m->g->nodes[x];
    if (x == m->mm || !chain_node(m, x)) continue;
    for (int i = 0; i < 3 && n->src[i] >= 0 && ns < 64; i++) stack[ns++] = n->src[i];
  }
  return -1;
}

/* epilogue = MAXIMUM(sum, 0) | MAXIMUM(0, sum) | GELU_TANH(sum) | sum */
bool pass_match_epilogue(const IrGraph *g, const uint8_t *is_stop, int32_t value, int32_t mm, CallEpilogue *out) {
  Match m = {g, is_stop, mm, value, {.bias = -1, .c = -1, .alpha = 1.0, .beta = 0.0, .act = KACT_NONE}};
  if (dtype_is_complex((LoomDType)g->nodes[mm].dtype)) return false; /* no epilogue (module comment) */
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
  } else if (x != mm && chain_node(&m, x) && (n->op == LOOM_OP_MUL || n->op == LOOM_OP_TRUEDIV)) {
    int32_t v = gelu_arg(&m); /* a GELU's root is a product (0.5 v (1 + tanh u), v / (1 + exp(-2u))) */
    if (v >= 0) {
      m.e.act = KACT_GELU_TANH;
      x = v;
    }
  }
  if (!match_sum(&m, x, 0)) return false;
  *out = m.e;
  return true;
}
