"""Matrix and tensor products (loom._products) against NumPy in float64: matmul and the @ operator
(1-d, 2-d, batched and broadcast, transposed and sliced operands, every float dtype, integers, bool,
complex, empty and K = 0), dot, vdot, inner, outer, kron, tensordot (int and pair axes), einsum
(implicit and explicit outputs, ellipsis, traces, diagonals, batched contractions, three operands,
broadcasting), vecdot and matrix_transpose; that a product stays a lazy graph node and runs as a library
call; and the errors NumPy raises.
"""
import numpy as np
import pytest

import loom

RNG = np.random.default_rng(7)


def rand(shape, dtype=np.float64):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(-5, 6, shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return RNG.integers(0, 2, shape).astype(bool)
    return x.astype(dtype)


def tol(dtype, k):
    """Relative tolerance of a k-term float product in dtype (float16 accumulates in float32)."""
    eps = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-14, "complex64": 2e-6, "complex128": 1e-14}
    return eps.get(np.dtype(dtype).name, 0) * max(4, 2 * np.sqrt(max(k, 1)))


def ref(a, b, fn=np.matmul):
    """fn in float64 (complex128) of the operands as given (exact for the operands' values)."""
    up = lambda x: x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)  # noqa: E731
    return fn(up(a), up(b))


def close(got, want, dtype, k):
    got = np.asarray(got.get() if isinstance(got, loom.ndarray) else got)
    assert got.shape == np.shape(want)
    if np.dtype(dtype).kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        scale = np.max(np.abs(want)) if np.size(want) else 1
        np.testing.assert_allclose(got.astype(np.complex128), want, rtol=0, atol=tol(dtype, k) * max(scale, 1))


SHAPES = [((3,), (3,)), ((4, 3), (3,)), ((3,), (3, 5)), ((4, 3), (3, 5)), ((2, 4, 3), (3, 5)),
          ((4, 3), (2, 3, 5)), ((2, 1, 4, 3), (3, 3, 5)), ((1, 1), (1, 1)), ((7, 33), (33, 65)),
          ((0, 3), (3, 4)), ((4, 0), (0, 5)), ((2, 0, 4, 3), (3, 5))]


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_shapes(sa, sb, dtype):
    a, b = rand(sa, dtype), rand(sb, dtype)
    r = loom.matmul(loom.asarray(a), loom.asarray(b))
    assert r.dtype == np.matmul(a, b).dtype
    close(r, ref(a, b), dtype, sa[-1])
    close(loom.asarray(a) @ loom.asarray(b), ref(a, b), dtype, sa[-1])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "uint8", "bool",
                                   "complex64", "complex128"])
def test_matmul_dtypes(dtype):
    a, b = rand((5, 6), dtype), rand((6, 4), dtype)
    r = loom.asarray(a) @ loom.asarray(b)
    want = np.matmul(a, b)
    assert r.dtype == want.dtype
    if dtype == "bool":
        np.testing.assert_array_equal(r.get(), want)
    elif np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(r.get(), want)  # wraps like NumPy
    else:
        close(r, ref(a, b), dtype, 6)


def test_matmul_bfloat16():
    bf16 = pytest.importorskip("ml_dtypes").bfloat16
    a, b = rand((9, 17)).astype(bf16), rand((17, 5)).astype(bf16)
    r = loom.asarray(a) @ loom.asarray(b)
    assert r.dtype == bf16
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(r.get().astype(np.float64), want, atol=2e-2 * np.abs(want).max())


def test_matmul_mixed_dtypes_promote():
    a, b = rand((3, 4), np.float32), rand((4, 2), np.float64)
    r = loom.asarray(a) @ loom.asarray(b)
    assert r.dtype == np.float64
    close(r, ref(a, b), np.float32, 4)
    ia = rand((3, 4), np.int64)
    r = loom.asarray(ia) @ loom.asarray(b)
    assert r.dtype == np.float64
    close(r, ref(ia, b), np.float64, 4)


@pytest.mark.parametrize("layout", ["aT", "bT", "both", "slice", "neg"])
def test_matmul_views(layout):
    a, b = rand((6, 5)), rand((5, 7))
    A, B = loom.asarray(a), loom.asarray(b)
    if layout == "aT":
        a, A = a.T.copy().T, loom.asarray(a.T.copy()).T
    elif layout == "bT":
        b, B = b.T.copy().T, loom.asarray(b.T.copy()).T
    elif layout == "both":
        a2, b2 = rand((7, 5)), rand((5, 6))
        a, b, A, B = b2.T, a2.T, loom.asarray(b2).T, loom.asarray(a2).T
    elif layout == "slice":
        big = rand((12, 10))
        a, A = big[::2, ::2], loom.asarray(big)[::2, ::2]
    else:
        big = rand((5, 7))
        b, B = big[::-1], loom.asarray(big)[::-1]
    close(A @ B, ref(a, b), "float64", a.shape[1])


def test_matmul_nan_inf_propagate():
    a = np.array([[1.0, np.nan], [np.inf, 1.0]])
    b = np.array([[1.0, 0.0], [0.0, 1.0]])
    got = (loom.asarray(a) @ loom.asarray(b)).get()
    with np.errstate(invalid="ignore"):
        want = a @ b
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isfinite(want)], want[np.isfinite(want)])


def test_matmul_is_lazy_and_fuses():
    a, b, bias = rand((8, 16), np.float32), rand((16, 4), np.float32), rand((4,), np.float32)
    A, B, Bias = loom.asarray(a), loom.asarray(b), loom.asarray(bias)
    loom.eval(A, B, Bias)
    before = loom.stats()["library_calls"]
    y = loom.maximum(A @ B + Bias, 0)
    assert y._lazy
    got = y.get()
    assert loom.stats()["library_calls"] - before == 1
    close(got, np.maximum(ref(a, b) + bias, 0), np.float32, 16)



@pytest.mark.parametrize("epilogue", ["times2", "bias", "tanh-bias", "bare"])
@pytest.mark.parametrize("key", ["empty-mask", "mask", "rows", "scalar-rows"])
def test_scatter_into_a_pending_product(epilogue, key):
    """x[key] = v where x is a pending product with an elementwise tail: the tail is not a call epilogue
    (the scatter stores its base, then its values). Taken as one, the scatter was placed as a plain call
    and x became the bare product (scikit-learn's LDA predict_log_proba: p[p == 0] += tiny after a softmax
    of X @ coef.T + intercept)."""
    a, b, bias = rand((5, 3)), rand((3, 4)), rand((4,))
    tails = {"times2": (lambda m, c: m * 2), "bias": (lambda m, c: m + c),
             "tanh-bias": (lambda m, c: np.tanh(m + c) if isinstance(m, np.ndarray) else loom.tanh(m + c)),
             "bare": (lambda m, c: m)}
    want = tails[epilogue](ref(a, b), bias)
    got = tails[epilogue](loom.asarray(a) @ loom.asarray(b), loom.asarray(bias))
    assert got._lazy
    if key == "empty-mask":
        m = want > 100
        want[m] += 1.0
        got[loom.asarray(m)] += 1.0  # gathers nothing, scatters nothing: x must keep its value
    elif key == "mask":
        m = want > 0
        want[m] = np.arange(m.sum())
        got[loom.asarray(m)] = loom.asarray(np.arange(m.sum(), dtype=np.float64))
    elif key == "rows":
        want[[0, 3]] = -want[[1, 2]]
        got[np.array([0, 3])] = loom.asarray(want[[1, 2]]) * -1  # lazy values
    else:
        want[[4, 1]] = 7.5
        got[np.array([4, 1])] = 7.5
    close(got, want, np.float64, 3)

def test_matmul_errors():
    with pytest.raises(ValueError):
        loom.matmul(loom.ones((3, 4)), loom.ones((5, 2)))
    with pytest.raises(ValueError):
        loom.matmul(loom.ones(()), loom.ones((2, 2)))
    with pytest.raises(ValueError):
        loom.ones((2, 3, 4)) @ loom.ones((3, 4, 5))


def test_matmul_out_and_dtype():
    a, b = rand((3, 4)), rand((4, 2))
    out = loom.empty((3, 2))
    r = loom.matmul(loom.asarray(a), loom.asarray(b), out=out)
    assert r is out
    close(out, a @ b, "float64", 4)
    r = loom.matmul(loom.asarray(a), loom.asarray(b), dtype=np.float32)
    assert r.dtype == np.float32
    with pytest.raises(TypeError):
        loom.matmul(loom.asarray(a), loom.asarray(b), dtype=np.int32)


@pytest.mark.parametrize("sa,sb", [((), (3,)), ((3,), ()), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)),
                                   ((3, 4), (4, 2)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (5, 4, 6)),
                                   ((3, 4), (2, 4, 5))])
def test_dot(sa, sb):
    a, b = rand(sa), rand(sb)
    close(loom.dot(loom.asarray(a), loom.asarray(b)), np.dot(a, b), "float64", 4)
    if sa:
        close(loom.asarray(a).dot(loom.asarray(b)), np.dot(a, b), "float64", 4)


def test_dot_errors():
    with pytest.raises(ValueError):
        loom.dot(loom.ones((2, 3)), loom.ones((4, 2)))
    with pytest.raises(ValueError):
        loom.dot(loom.ones((2, 3)), loom.ones((2, 4, 2)))


def test_vdot_inner_outer_kron():
    a, b = rand((2, 3), np.complex128), rand((3, 2), np.complex128)
    close(loom.vdot(loom.asarray(a), loom.asarray(b)), np.vdot(a, b), "complex128", 6)
    x, y = rand((2, 3, 4)), rand((5, 4))
    close(loom.inner(loom.asarray(x), loom.asarray(y)), np.inner(x, y), "float64", 4)
    close(loom.inner(loom.asarray(x), 2.0), np.inner(x, 2.0), "float64", 1)
    close(loom.outer(loom.asarray(x[0]), loom.asarray(y)), np.outer(x[0], y), "float64", 1)
    p, q = rand((2, 3)), rand((3, 1, 2))
    close(loom.kron(loom.asarray(p), loom.asarray(q)), np.kron(p, q), "float64", 1)
    with pytest.raises(ValueError):
        loom.vdot(loom.ones(3), loom.ones(4))


@pytest.mark.parametrize("sa,sb,axes", [((3, 4, 5), (4, 5, 6), 2), ((3, 4, 5), (5, 6), 1), ((3, 4), (5, 6), 0),
                                        ((3, 4, 5), (4, 3, 2), ([0, 1], [1, 0])), ((4, 5), (5, 4), ([1, 0], [0, 1])),
                                        ((2, 3, 4), (3, 2), (1, 0)), ((3, 0), (0, 2), 1)])
def test_tensordot(sa, sb, axes):
    a, b = rand(sa), rand(sb)
    close(loom.tensordot(loom.asarray(a), loom.asarray(b), axes), np.tensordot(a, b, axes), "float64", 20)


def test_tensordot_lazy_operands():
    a, b = rand((3, 4, 5)), rand((5, 4))
    A, B = loom.asarray(a) * 2, loom.asarray(b) + 1
    r = loom.tensordot(A, B, ([1, 2], [1, 0]))
    close(r, np.tensordot(a * 2, b + 1, ([1, 2], [1, 0])), "float64", 20)


def test_tensordot_errors():
    with pytest.raises(ValueError):
        loom.tensordot(loom.ones((3, 4)), loom.ones((5, 6)), 1)
    with pytest.raises(ValueError):
        loom.tensordot(loom.ones((3, 4)), loom.ones((4, 6)), ([1], [0, 1]))


EINSUM = [("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ij,kj->ik", [(3, 4), (5, 4)]),
          ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("bij,jk->bik", [(2, 3, 4), (4, 5)]), ("i,i", [(4,), (4,)]),
          ("i,i->i", [(4,), (4,)]), ("i,j->ij", [(3,), (4,)]), ("ij->ji", [(3, 4)]), ("ii", [(4, 4)]),
          ("ii->i", [(4, 4)]), ("ij->", [(3, 4)]), ("ij->j", [(3, 4)]), ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
          ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]), ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
          ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]), ("iij->ij", [(3, 3, 2)]), ("ijk,ikj->i", [(2, 3, 4), (2, 4, 3)]),
          ("ba", [(3, 4)]), ("Ab,bC->AC", [(3, 4), (4, 2)]), ("ij,ij->ij", [(1, 3), (2, 3)]),
          ("i...,i...->...", [(3, 2, 4), (3, 2, 4)]), ("bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 6, 4)]),
          ("ij,j->i", [(3, 0), (0,)])]


@pytest.mark.parametrize("sub,shapes", EINSUM)
def test_einsum(sub, shapes):
    xs = [rand(s) for s in shapes]
    got = loom.einsum(sub, *[loom.asarray(x) for x in xs])
    close(got, np.einsum(sub, *xs), "float64", 60)


def test_einsum_dtypes_and_errors():
    a, b = rand((3, 4), np.float32), rand((4, 2), np.float32)
    r = loom.einsum("ij,jk->ik", loom.asarray(a), loom.asarray(b))
    assert r.dtype == np.float32
    ia = rand((3, 4), np.int64)
    r = loom.einsum("ij,jk->ik", loom.asarray(ia), loom.asarray(ia.T.copy()))
    np.testing.assert_array_equal(r.get(), ia @ ia.T)
    with pytest.raises(ValueError):
        loom.einsum("ij,jk->ik", loom.ones((3, 4)), loom.ones((5, 2)))
    with pytest.raises(ValueError):
        loom.einsum("ij->k", loom.ones((3, 4)))
    with pytest.raises(ValueError):
        loom.einsum("ijk", loom.ones((3, 4)))
    with pytest.raises(ValueError):
        loom.einsum("ij,jk", loom.ones((3, 4)))


def test_vecdot_matrix_transpose():
    a, b = rand((2, 3, 4), np.complex128), rand((3, 4), np.complex128)
    want = np.sum(np.conj(a) * b, axis=-1)
    close(loom.vecdot(loom.asarray(a), loom.asarray(b)), want, "complex128", 4)
    want = np.sum(np.conj(a) * b, axis=1)
    close(loom.vecdot(loom.asarray(a), loom.asarray(b), axis=-2), want, "complex128", 4)
    x = rand((2, 3, 4))
    np.testing.assert_array_equal(loom.matrix_transpose(loom.asarray(x)).get(), np.swapaxes(x, -1, -2))
    with pytest.raises(ValueError):
        loom.vecdot(loom.ones((3, 4)), loom.ones((3, 5)))
    with pytest.raises(ValueError):
        loom.matrix_transpose(loom.ones(3))


def test_mlp_step_matches_numpy():
    """A two-layer MLP step (forward, hand-written backward, SGD) against the same step in NumPy."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 20)), rng.standard_normal((32, 3))
    w1, b1 = rng.standard_normal((20, 16)) * 0.1, np.zeros(16)
    w2, b2 = rng.standard_normal((16, 3)) * 0.1, np.zeros(3)

    def step(xp, x, y, w1, b1, w2, b2):
        h = xp.maximum(x @ w1 + b1, 0)
        out = h @ w2 + b2
        d = (out - y) / x.shape[0]
        loss = 0.5 * xp.sum((out - y) ** 2) / x.shape[0]
        gw2, gb2 = h.T @ d, xp.sum(d, axis=0)
        dh = (d @ w2.T) * (h > 0)
        gw1, gb1 = x.T @ dh, xp.sum(dh, axis=0)
        return loss, w1 - 0.1 * gw1, b1 - 0.1 * gb1, w2 - 0.1 * gw2, b2 - 0.1 * gb2

    ln, *pn = step(np, x, y, w1, b1, w2, b2)
    ll, *pl = step(loom, *[loom.asarray(v) for v in (x, y, w1, b1, w2, b2)])
    np.testing.assert_allclose(float(ll), ln, rtol=1e-12)
    for p, q in zip(pl, pn):
        np.testing.assert_allclose(p.get(), q, rtol=1e-12, atol=1e-14)
