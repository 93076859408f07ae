"""The host's fast linalg paths against NumPy (float64 references): LU and solves of small real matrices
written in runtime/host_lapack.c (n <= 64, the batch over the thread pool) and LAPACK's above that; det,
slogdet and inv reading a C-ordered matrix as its transpose (no copy); inv's identities; cov and corrcoef
centred in the input's memory order with one product, which is syrk for a real matrix times its own
transpose (runtime/host_blas.c). float32 / float64 / complex, batches, empty and 1 x 1 matrices, singular
matrices (NumPy's LinAlgError), non-contiguous inputs, NaN; cov's ddof / rowvar / bias / weights / y.
"""
import warnings

import numpy as np
import pytest

import loom
import loom.linalg as la

RNG = np.random.default_rng(5)
REAL = [np.float32, np.float64]
ALL = REAL + [np.complex64, np.complex128]
SIZES = [1, 2, 3, 8, 17, 63, 64, 65, 130]  # both sides of the small path's bound (64)


def rand(shape, dtype):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def well(shape, dtype):
    """A well-conditioned matrix (stack) whose LU still pivots and whose det stays near 1 in size: a
    permutation plus a small random one."""
    n = shape[-1]
    p = np.eye(n)[RNG.permutation(n)]
    return (p + rand(shape, dtype) / (3 * np.sqrt(n))).astype(dtype)


def tol(dtype):
    return dict(rtol=2e-4, atol=2e-4) if np.dtype(dtype) in (np.float32, np.complex64) else dict(rtol=1e-9, atol=1e-9)


def get(x):
    return x.get() if isinstance(x, loom.ndarray) else np.asarray(x)


def ref(a):
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("n", SIZES)
def test_solve_inv_det(n, dtype):
    a = well((n, n), dtype)
    b = rand((n, 3), dtype)
    v = rand((n,), dtype)
    la_, lb, lv = loom.asarray(a), loom.asarray(b), loom.asarray(v)
    t = tol(dtype)
    x = la.solve(la_, lb)
    assert x.dtype == dtype and x.shape == (n, 3)
    np.testing.assert_allclose(get(x), np.linalg.solve(ref(a), ref(b)), **t)
    np.testing.assert_allclose(get(la.solve(la_, lv)), np.linalg.solve(ref(a), ref(v)), **t)
    ai = la.inv(la_)
    assert ai.dtype == dtype and ai.flags.c_contiguous  # the transposed solve's result, C-ordered
    np.testing.assert_allclose(get(ai), np.linalg.inv(ref(a)), **t)
    d = np.linalg.det(ref(a))
    np.testing.assert_allclose(get(la.det(la_)) / d, 1, **t)
    s, ld = la.slogdet(la_)
    rs, rld = np.linalg.slogdet(ref(a))
    np.testing.assert_allclose(get(s), rs, **t)
    np.testing.assert_allclose(get(ld), rld, rtol=t["rtol"], atol=t["atol"] * max(1, abs(rld)))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("n", [1, 4, 8, 64, 70])
def test_batches(n, dtype):
    a = well((7, n, n), dtype)
    b = rand((7, n, 2), dtype)
    la_, lb = loom.asarray(a), loom.asarray(b)
    t = tol(dtype)
    np.testing.assert_allclose(get(la.solve(la_, lb)), np.linalg.solve(ref(a), ref(b)), **t)
    np.testing.assert_allclose(get(la.inv(la_)), np.linalg.inv(ref(a)), **t)
    np.testing.assert_allclose(get(la.det(la_)) / np.linalg.det(ref(a)), 1, **t)
    s, ld = la.slogdet(la_)
    rs, rld = np.linalg.slogdet(ref(a))
    np.testing.assert_allclose(get(s), rs, **t)
    np.testing.assert_allclose(get(ld), rld, rtol=t["rtol"], atol=1e-3)


@pytest.mark.parametrize("dtype", REAL)
def test_many_small(dtype):
    """1000 x 8 x 8: many tasks of the thread pool."""
    a = well((1000, 8, 8), dtype)
    b = rand((1000, 8, 1), dtype)
    la_, lb = loom.asarray(a), loom.asarray(b)
    t = tol(dtype)
    np.testing.assert_allclose(get(la.solve(la_, lb)), np.linalg.solve(ref(a), ref(b)), **t)
    np.testing.assert_allclose(get(la.inv(la_)), np.linalg.inv(ref(a)), **t)
    np.testing.assert_allclose(get(la.det(la_)), np.linalg.det(ref(a)), rtol=t["rtol"] * 10)


@pytest.mark.parametrize("dtype", ALL)
def test_non_contiguous(dtype):
    base = well((40, 40), dtype)
    lb_ = loom.asarray(base)
    t = tol(dtype)
    for a, view in ((base.T, lb_.T), (base[::2, ::2], lb_[::2, ::2]), (base[3:20, 5:22].T, lb_[3:20, 5:22].T)):
        n = a.shape[0]
        b = rand((n, 2), dtype)
        np.testing.assert_allclose(get(la.solve(view, loom.asarray(b))), np.linalg.solve(ref(a), ref(b)), **t)
        np.testing.assert_allclose(get(la.inv(view)), np.linalg.inv(ref(a)), **t)
        np.testing.assert_allclose(get(la.det(view)), np.linalg.det(ref(a)), rtol=1e-3 if t["rtol"] > 1e-6 else 1e-8)
    # a transposed right-hand side and a broadcast matrix
    a = well((6, 6), dtype)
    b = rand((3, 6), dtype)
    np.testing.assert_allclose(get(la.solve(loom.asarray(a), loom.asarray(b).T)), np.linalg.solve(ref(a), ref(b).T), **t)
    bb = rand((4, 6, 2), dtype)
    np.testing.assert_allclose(get(la.solve(loom.asarray(a), loom.asarray(bb))), np.linalg.solve(ref(a), ref(bb)), **t)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("n", [2, 5, 64, 80])
def test_singular(n, dtype):
    a = rand((n, n), dtype)
    a[:, 1] = 0  # a zero column: an exact zero pivot whichever way the matrix is read
    la_ = loom.asarray(a)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.inv(a)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        la.inv(la_)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        la.solve(la_, loom.asarray(rand((n, 1), dtype)))
    z = np.zeros((n, n), dtype)
    d = get(la.det(loom.asarray(z)))
    assert d == 0 and not np.signbit(d.real)  # NumPy's +0.0
    s, ld = la.slogdet(loom.asarray(z))
    assert get(s) == 0 and get(ld) == -np.inf
    batch = np.stack([well((n, n), dtype), z])
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        la.inv(loom.asarray(batch))
    np.testing.assert_allclose(get(la.det(loom.asarray(batch)))[1], 0)


def test_exact_permutation_dets():
    """Pivoting and the sign of the permutation: det of permutation matrices is +-1 exactly."""
    for n in (2, 3, 7, 64, 66):
        for _ in range(3):
            p = np.eye(n)[RNG.permutation(n)]
            assert get(la.det(loom.asarray(p))) == np.linalg.det(p)
            assert get(la.det(loom.asarray(p.astype(np.float32)))) == np.linalg.det(p)


@pytest.mark.parametrize("dtype", ALL)
def test_empty_and_one(dtype):
    for shape in [(0, 0), (3, 0, 0), (0, 4, 4)]:
        a = np.zeros(shape, dtype)
        np.testing.assert_array_equal(get(la.inv(loom.asarray(a))), np.linalg.inv(a))
        np.testing.assert_array_equal(get(la.det(loom.asarray(a))), np.linalg.det(a))
    one = np.array([[2.5]], dtype)
    np.testing.assert_allclose(get(la.inv(loom.asarray(one))), [[0.4]], rtol=1e-6)
    np.testing.assert_allclose(get(la.det(loom.asarray(one))), 2.5, rtol=1e-6)
    np.testing.assert_allclose(get(la.solve(loom.asarray(one), loom.asarray(np.array([5.0], dtype)))), [2.0], rtol=1e-6)


@pytest.mark.parametrize("n", [3, 64, 70])
def test_nan(n):
    a = well((n, n), np.float64)
    a[1, 2] = np.nan
    la_ = loom.asarray(a)
    assert np.isnan(get(la.det(la_)))
    assert np.isnan(get(la.inv(la_))).any()
    assert np.isnan(get(la.solve(la_, loom.asarray(np.ones(n))))).any()


def test_integer_and_lstsq():
    a = RNG.integers(-5, 5, size=(6, 6)) + 20 * np.eye(6, dtype=np.int64)
    np.testing.assert_allclose(get(la.inv(loom.asarray(a))), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(get(la.det(loom.asarray(a))), np.linalg.det(a), rtol=1e-10)
    x = rand((200, 8), np.float64)
    y = rand((200,), np.float64)
    r = la.lstsq(loom.asarray(x), loom.asarray(y), rcond=None)
    e = np.linalg.lstsq(x, y, rcond=None)
    np.testing.assert_allclose(get(r[0]), e[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(get(r[1]), e[1], rtol=1e-9)
    assert int(r[2]) == e[2]
    np.testing.assert_allclose(get(r[3]), e[3], rtol=1e-9)


# ---- cov and corrcoef --------------------------------------------------------------------------------
COV_X = np.random.default_rng(6).standard_normal((300, 7))


def cov_cases():
    x = COV_X
    return [x, x.T, x.astype(np.float32), x.astype(np.float32).T, x[::3, 1:6], x[::3, 1:6].T]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # ddof=5: no degrees of freedom left for some
@pytest.mark.parametrize("i", range(6))
@pytest.mark.parametrize("rowvar", [True, False])
@pytest.mark.parametrize("kw", [{}, {"ddof": 0}, {"bias": True}, {"ddof": 5}, {"dtype": np.float32}])
def test_cov(i, rowvar, kw):
    x = cov_cases()[i]
    lx = loom.asarray(np.ascontiguousarray(x.T)).T if i % 2 else loom.asarray(x)  # views in x's layout
    if i >= 4:
        lx = loom.asarray(COV_X)[::3, 1:6]
        lx = lx.T if i == 5 else lx
    r = loom.cov(lx, rowvar=rowvar, **kw)
    e = np.cov(np.asarray(x, np.float64) if "dtype" not in kw else x, rowvar=rowvar, **kw)
    assert r.dtype == np.cov(x, rowvar=rowvar, **kw).dtype
    np.testing.assert_allclose(get(r), e, rtol=1e-4 if r.dtype == np.float32 else 1e-10, atol=1e-6)
    c = loom.corrcoef(lx, rowvar=rowvar)
    np.testing.assert_allclose(get(c), np.corrcoef(np.asarray(x, np.float64), rowvar=rowvar), rtol=1e-9, atol=1e-12)


def test_cov_symmetric_exactly():
    """The syrk path mirrors one triangle: the result is exactly symmetric."""
    for shape in [(64, 4096), (4096, 64), (130, 70)]:
        x = RNG.standard_normal(shape)
        for lx in (loom.asarray(x), loom.asarray(x).T):
            c = get(loom.cov(lx))
            assert np.array_equal(c, c.T)
            np.testing.assert_allclose(c, np.cov(get(lx)), rtol=1e-10, atol=1e-12)


def test_cov_weights_y_complex_1d():
    x = RNG.standard_normal((4, 50))
    y = RNG.standard_normal((2, 50))
    fw = RNG.integers(1, 4, size=50)
    aw = RNG.random(50)
    lx, ly = loom.asarray(x), loom.asarray(y)
    np.testing.assert_allclose(get(loom.cov(lx, ly)), np.cov(x, y), rtol=1e-10)
    np.testing.assert_allclose(get(loom.cov(lx.T, ly.T, rowvar=False)), np.cov(x.T, y.T, rowvar=False), rtol=1e-10)
    np.testing.assert_allclose(get(loom.cov(lx, fweights=loom.asarray(fw), aweights=loom.asarray(aw))),
                               np.cov(x, fweights=fw, aweights=aw), rtol=1e-10)
    z = x + 1j * RNG.standard_normal((4, 50))
    for lz, nz in ((loom.asarray(z), z), (loom.asarray(np.ascontiguousarray(z.T)).T, z)):
        np.testing.assert_allclose(get(loom.cov(lz)), np.cov(nz), rtol=1e-10)
        np.testing.assert_allclose(get(loom.corrcoef(lz)), np.corrcoef(nz), rtol=1e-10, atol=1e-12)
    v = RNG.standard_normal(30)
    np.testing.assert_allclose(get(loom.cov(loom.asarray(v))), np.cov(v), rtol=1e-12)
    xn = x.copy()
    xn[1, 3] = np.nan
    r, e = get(loom.cov(loom.asarray(xn.T), rowvar=False)), np.cov(xn.T, rowvar=False)
    np.testing.assert_array_equal(np.isnan(r), np.isnan(e))
    np.testing.assert_allclose(r[~np.isnan(e)], e[~np.isnan(e)], rtol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r1 = get(loom.cov(loom.asarray(np.ones((3, 1)))))
        e1 = np.cov(np.ones((3, 1)))
    np.testing.assert_array_equal(np.isnan(r1), np.isnan(e1))


@pytest.mark.parametrize("dtype", REAL)
def test_self_transpose_products(dtype):
    """A real matrix times its own transpose (syrk), batched and not, next to products that only look alike."""
    x = RNG.standard_normal((3, 40, 25)).astype(dtype)
    lx = loom.asarray(x)
    t = tol(dtype)
    np.testing.assert_allclose(get(lx @ lx.swapaxes(-1, -2)), x @ x.swapaxes(-1, -2), **t)
    np.testing.assert_allclose(get(lx.swapaxes(-1, -2) @ lx), x.swapaxes(-1, -2) @ x, **t)
    m = lx[0]
    np.testing.assert_allclose(get(m @ m.T * 0.5), x[0] @ x[0].T * 0.5, **t)
    np.testing.assert_allclose(get(m.T @ m), x[0].T @ x[0], **t)
    np.testing.assert_allclose(get(m[:, :1] @ m[:, :1].T), x[0][:, :1] @ x[0][:, :1].T, **t)  # k = 1
    np.testing.assert_allclose(get(m[1:] @ m[:-1].T), x[0][1:] @ x[0][:-1].T, **t)  # not one buffer
    sq = loom.asarray(x[0][:25])
    np.testing.assert_allclose(get(sq @ sq), x[0][:25] @ x[0][:25], **t)  # a a, not a a^T
    s = get(m @ m.T)
    assert np.array_equal(s, s.T)
