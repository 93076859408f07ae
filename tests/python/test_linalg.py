"""loom.linalg against numpy.linalg in float64 (float32 at its own precision): solve (vector and matrix
right-hand sides, broadcast batches), inv, cholesky (lower and upper), qr (reduced, complete, r), svd
(full and thin, values only), eigh / eigvalsh (both triangles), det and slogdet (singular, permuted,
batched, empty), lstsq (over- and under-determined, rank-deficient), pinv, matrix_rank, matrix_power,
multi_dot, norms (vector and matrix orders), the array API names; decompositions are checked by their
defining identities where the factors are not unique (signs of singular and eigen vectors), and the
errors NumPy raises (LinAlgError for singular, not positive definite, not square, 1-d input).
"""
import numpy as np
import pytest

import loom
import loom.linalg as la

RNG = np.random.default_rng(11)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def spd(*shape, dtype=np.float64):
    a = rand(*shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def get(x):
    return x.get() if isinstance(x, loom.ndarray) else np.asarray(x)


def atol(dtype, scale=1.0):
    return (1e-11 if np.dtype(dtype) == np.float64 else 2e-4) * scale


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sa,sb", [((4, 4), (4,)), ((4, 4), (4, 3)), ((2, 4, 4), (2, 4, 3)), ((2, 4, 4), (4, 3)),
                                   ((3, 1, 4, 4), (2, 4, 1)), ((0, 3, 3), (0, 3, 2)), ((3, 3), (3, 0))])
def test_solve(sa, sb, dtype):
    a, b = rand(*sa, dtype=dtype) + 4 * np.eye(sa[-1], dtype=dtype), rand(*sb, dtype=dtype)
    x = la.solve(loom.asarray(a), loom.asarray(b))
    want = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
    assert x.dtype == dtype and x.shape == want.shape
    np.testing.assert_allclose(get(x), want, atol=atol(dtype, 10))


def test_solve_int_input_and_errors():
    a, b = np.array([[2, 1], [1, 3]]), np.array([1, 2])
    x = la.solve(loom.asarray(a), loom.asarray(b))
    assert x.dtype == np.float64
    np.testing.assert_allclose(get(x), np.linalg.solve(a, b), atol=1e-14)
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        la.solve(loom.asarray(np.ones((3, 3))), loom.ones(3))
    with pytest.raises(np.linalg.LinAlgError):
        la.solve(loom.ones((3, 2)), loom.ones(3))
    with pytest.raises(np.linalg.LinAlgError):
        la.inv(loom.ones(3))
    with pytest.raises(ValueError):
        la.solve(loom.asarray(np.eye(3)), loom.ones(4))
    with pytest.raises(TypeError):
        la.inv(loom.asarray(np.eye(3, dtype=np.float16)))


@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (1, 1), (0, 0)])
def test_inv(shape):
    a = rand(*shape) + 3 * np.eye(shape[-1])
    np.testing.assert_allclose(get(la.inv(loom.asarray(a))), np.linalg.inv(a), atol=1e-12)


def test_inv_singular_in_batch_names_it():
    a = np.stack([np.eye(3), np.zeros((3, 3))])
    with pytest.raises(np.linalg.LinAlgError, match="matrix 1"):
        la.inv(loom.asarray(a))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(upper):
    a = spd(3, 5, 5)
    got = get(la.cholesky(loom.asarray(a), upper=upper))
    want = np.linalg.cholesky(a)
    np.testing.assert_allclose(got, np.swapaxes(want, -1, -2) if upper else want, atol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        la.cholesky(loom.asarray(-np.eye(3)))


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (2, 6, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, mode):
    a = rand(*shape)
    got = la.qr(loom.asarray(a), mode=mode)
    want = np.linalg.qr(a, mode=mode)
    if mode == "r":
        np.testing.assert_allclose(np.abs(get(got)), np.abs(want), atol=1e-12)
        return
    q, r = get(got.Q), get(got.R)
    assert q.shape == want.Q.shape and r.shape == want.R.shape
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] +
                               (q.shape[-1],) * 2), atol=1e-12)
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    np.testing.assert_allclose(np.abs(r), np.abs(want.R), atol=1e-12)  # unique up to the signs of rows


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 5), (1, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(shape, full):
    a = rand(*shape)
    u, s, vh = (get(x) for x in la.svd(loom.asarray(a), full_matrices=full))
    wu, ws, wvh = np.linalg.svd(a, full_matrices=full)
    assert u.shape == wu.shape and s.shape == ws.shape and vh.shape == wvh.shape
    np.testing.assert_allclose(s, ws, atol=1e-12)
    k = s.shape[-1]
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] +
                               (u.shape[-1],) * 2), atol=1e-12)
    np.testing.assert_allclose(get(la.svd(loom.asarray(a), compute_uv=False)), ws, atol=1e-12)
    np.testing.assert_allclose(get(la.svdvals(loom.asarray(a))), ws, atol=1e-12)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(uplo):
    s = spd(2, 6, 6)
    a = s + np.triu(rand(2, 6, 6), 1) if uplo == "L" else s + np.tril(rand(2, 6, 6), -1)  # junk in the unused half
    w, v = (get(x) for x in la.eigh(loom.asarray(a), UPLO=uplo))
    ww, wv = np.linalg.eigh(a, UPLO=uplo)
    np.testing.assert_allclose(w, ww, atol=1e-10)
    np.testing.assert_allclose(s @ v, v * w[..., None, :], atol=1e-10)
    np.testing.assert_allclose(get(la.eigvalsh(loom.asarray(a), UPLO=uplo)), ww, atol=1e-10)
    with pytest.raises(ValueError):
        la.eigh(loom.asarray(a), UPLO="X")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_det_slogdet(dtype):
    a = rand(4, 5, 5, dtype=dtype)
    a[1] = a[0]
    a[1, 2] = a[1, 1]  # singular
    a[2] = a[2][[1, 0, 2, 3, 4]]  # row swaps
    got = get(la.det(loom.asarray(a)))
    want = np.linalg.det(a.astype(np.float64))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-3 if dtype == np.float32 else 1e-10, atol=atol(dtype))
    sg, ld = la.slogdet(loom.asarray(a))
    ws, wl = np.linalg.slogdet(a.astype(np.float64))
    np.testing.assert_array_equal(get(sg)[[0, 2, 3]], ws[[0, 2, 3]])
    np.testing.assert_allclose(get(ld)[[0, 2, 3]], wl[[0, 2, 3]], rtol=1e-4 if dtype == np.float32 else 1e-12)
    exact = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert float(la.det(loom.asarray(exact))) == 0.0
    s, l = la.slogdet(loom.asarray(exact))
    assert float(s) == 0.0 and float(l) == -np.inf
    assert float(la.det(loom.asarray(np.zeros((0, 0))))) == 1.0
    assert float(la.det(loom.asarray(np.array([[0.0, 1.0], [1.0, 0.0]])))) == -1.0


@pytest.mark.parametrize("m,n,k", [(8, 3, None), (8, 3, 2), (3, 8, 2), (5, 5, 1)])
def test_lstsq(m, n, k):
    a = rand(m, n)
    b = rand(m) if k is None else rand(m, k)
    x, res, rank, s = la.lstsq(loom.asarray(a), loom.asarray(b))
    wx, wres, wrank, ws = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(get(x), wx, atol=1e-10)
    np.testing.assert_allclose(get(res), wres, atol=1e-10)
    assert rank == wrank
    np.testing.assert_allclose(get(s), ws, atol=1e-12)


def test_lstsq_rank_deficient():
    a = rand(6, 3)
    a[:, 2] = a[:, 0] + a[:, 1]
    b = rand(6)
    x, res, rank, s = la.lstsq(loom.asarray(a), loom.asarray(b))
    wx, wres, wrank, _ = np.linalg.lstsq(a, b)
    assert rank == wrank == 2 and get(res).shape == wres.shape == (0,)
    np.testing.assert_allclose(get(x), wx, atol=1e-10)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3)])
def test_pinv(shape):
    a = rand(*shape)
    if shape == (2, 4, 4):
        a[1, :, 3] = a[1, :, 0]  # rank deficient
    np.testing.assert_allclose(get(la.pinv(loom.asarray(a))), np.linalg.pinv(a), atol=1e-10)


def test_matrix_rank_power_multi_dot():
    a = rand(3, 6, 4)
    a[1, :, 3] = 2 * a[1, :, 1]
    np.testing.assert_array_equal(get(la.matrix_rank(loom.asarray(a))), np.linalg.matrix_rank(a))
    assert la.matrix_rank(loom.asarray(np.zeros(3))) == 0
    m = rand(4, 4) / 2
    for p in (0, 1, 2, 5, -3):
        np.testing.assert_allclose(get(la.matrix_power(loom.asarray(m), p)), np.linalg.matrix_power(m, p),
                                   rtol=1e-10, atol=1e-10)
    xs = [rand(3), rand(3, 8), rand(8, 2), rand(2, 5), rand(5)]
    np.testing.assert_allclose(get(la.multi_dot([loom.asarray(x) for x in xs])), np.linalg.multi_dot(xs),
                               rtol=1e-12)


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms(ord):
    a = rand(2, 4, 5)
    got = la.norm(loom.asarray(a), ord=ord, axis=(1, 2))
    np.testing.assert_allclose(get(got), np.linalg.norm(a, ord=ord, axis=(1, 2)), rtol=1e-12)
    got = la.norm(loom.asarray(a), ord=ord, axis=(2, 0), keepdims=True)
    np.testing.assert_allclose(get(got), np.linalg.norm(a, ord=ord, axis=(2, 0), keepdims=True), rtol=1e-12)
    if ord is not None:
        np.testing.assert_allclose(get(la.norm(loom.asarray(a[0]), ord=ord)), np.linalg.norm(a[0], ord=ord),
                                   rtol=1e-12)


@pytest.mark.parametrize("ord", [None, 1, 2, 3, 0, np.inf, -np.inf])
def test_vector_norms(ord):
    v = rand(3, 7)
    np.testing.assert_allclose(get(la.norm(loom.asarray(v), ord=ord, axis=1)), np.linalg.norm(v, ord=ord, axis=1),
                               rtol=1e-12)
    c = v + 1j * rand(3, 7)
    np.testing.assert_allclose(get(la.norm(loom.asarray(c), ord=ord, axis=-1)), np.linalg.norm(c, ord=ord, axis=-1),
                               rtol=1e-12)
    with pytest.raises(ValueError):
        la.norm(loom.asarray(rand(2, 2, 2)), ord=1)


def test_array_api_names():
    x = rand(2, 3, 3)
    np.testing.assert_allclose(get(la.vector_norm(loom.asarray(x))), np.linalg.norm(x.ravel()), rtol=1e-12)
    np.testing.assert_allclose(get(la.vector_norm(loom.asarray(x), axis=(1, 2), ord=1)),
                               np.sum(np.abs(x), axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(get(la.matrix_norm(loom.asarray(x), ord=2)), np.linalg.norm(x, 2, axis=(-2, -1)),
                               rtol=1e-12)
    np.testing.assert_allclose(get(la.diagonal(loom.asarray(x), offset=1)), np.diagonal(x, 1, -2, -1))
    np.testing.assert_allclose(get(la.trace(loom.asarray(x))), np.trace(x, axis1=-2, axis2=-1), rtol=1e-14)
    a, b = rand(4, 3), rand(4, 3)
    np.testing.assert_allclose(get(la.cross(loom.asarray(a), loom.asarray(b))), np.cross(a, b), rtol=1e-12)
    np.testing.assert_allclose(get(la.outer(loom.asarray(a[0]), loom.asarray(b[0]))), np.outer(a[0], b[0]))
    np.testing.assert_allclose(get(la.matmul(loom.asarray(a), loom.asarray(b.T))), a @ b.T, rtol=1e-12)


def test_results_are_loom_arrays_on_device_and_lazy_after():
    a = spd(4, 4)
    before = loom.stats()["library_calls"]
    d = la.det(loom.asarray(a))
    assert isinstance(d, loom.ndarray)
    np.testing.assert_allclose(float(d), np.linalg.det(a), rtol=1e-12)
    assert loom.stats()["library_calls"] - before == 1
