"""Decompositions against NumPy on the inputs that broke them: empty batches and matrices, stacks,
non-contiguous views, float32, integers and complex; and the reductions that read their results.

Regression (2026-12-01): an empty stack such as qr of a (5, 0, 4, 4) array made the next reduction of a
result (all(R == triu(R)) in array-api-tests) read element 0 of a zero-byte buffer and crash the process:
empty arrays have zero strides, and pass_collapse took a reduced dim of size 0 with stride 0 for a
broadcast dim (a repeated value) and shrank it to size 1.
"""
from typing import Any

import numpy
import pytest

import loom as cp

RNG = numpy.random.default_rng(7)


def rand(shape, dtype):
    dt = numpy.dtype(dtype)
    x = RNG.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dt)


def tol(dtype):
    return 2e-3 if numpy.dtype(dtype) in (numpy.float32, numpy.complex64) else 1e-9


def close(got, want, dtype, scale=1.0):
    got = got.get() if hasattr(got, "get") else numpy.asarray(got)
    assert got.shape == want.shape
    numpy.testing.assert_allclose(got, want, rtol=tol(dtype), atol=tol(dtype) * scale)


EMPTY_SHAPES = [(0, 0), (0, 3), (3, 0), (5, 0, 4, 4), (2, 0, 3), (0, 2, 3), (2, 3, 0, 2)]


# ---- the crash: reductions over empty, zero-strided results -------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (5, 0), (5, 0, 4, 4), (0, 3, 3)])
def test_reductions_of_empty_zero_strided_arrays(shape):
    for x in (cp.zeros(shape), cp.zeros(shape).swapaxes(0, -1), cp.empty(shape, dtype=bool)):
        want = numpy.zeros(x.shape, dtype=x.dtype)
        assert bool(cp.all(x)) is True
        assert bool(cp.any(x)) is False
        assert float(cp.sum(x)) == 0.0
        assert float(cp.prod(x)) == 1.0
        for ax in range(x.ndim):
            numpy.testing.assert_array_equal(cp.all(x, axis=ax).get(), numpy.all(want, axis=ax))
            numpy.testing.assert_array_equal(cp.any(x, axis=ax).get(), numpy.any(want, axis=ax))


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_empty(shape, mode):
    a = numpy.zeros(shape)
    want: Any = numpy.linalg.qr(a, mode=mode)
    got = cp.linalg.qr(cp.asarray(a), mode=mode)
    if mode == "r":
        want, got = (want,), (got,)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        numpy.testing.assert_array_equal(g.get(), w)
    r = got[-1]
    assert bool(cp.all(cp.equal(r, cp.triu(r))))  # what array-api-tests' test_qr does next


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
def test_svd_eigh_det_empty(shape):
    a = numpy.zeros(shape)
    s = cp.linalg.svd(cp.asarray(a), compute_uv=False)
    assert s.shape == numpy.linalg.svd(a, compute_uv=False).shape
    assert bool(cp.all(cp.equal(s, s)))
    sv = cp.linalg.svdvals(cp.asarray(a))
    assert sv.shape == s.shape and float(cp.sum(sv)) == 0.0
    u, s2, vh = cp.linalg.svd(cp.asarray(a), full_matrices=False)
    wu, ws, wvh = numpy.linalg.svd(a, full_matrices=False)
    assert (u.shape, s2.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape)
    if shape[-1] == shape[-2]:
        w = cp.linalg.eigvalsh(cp.asarray(a))
        assert w.shape == numpy.linalg.eigvalsh(a).shape and bool(cp.all(cp.equal(w, w)))
        numpy.testing.assert_array_equal(cp.linalg.det(cp.asarray(a)).get(), numpy.linalg.det(a))
        assert cp.linalg.inv(cp.asarray(a)).shape == a.shape


# ---- stacks, views and dtypes against NumPy -----------------------------------------------------------
DTYPES = ["float32", "float64", "complex64", "complex128"]


def _views(shape, dtype):
    """A C-contiguous stack, its Fortran-ordered copy, and a non-contiguous view with the same values."""
    a = rand(shape, dtype)
    big = numpy.zeros(shape[:-2] + (2 * shape[-2], 3 * shape[-1]), dtype=a.dtype)
    big[..., ::2, ::3] = a
    yield a, cp.asarray(a)
    yield a, cp.asarray(numpy.asfortranarray(a))
    yield a, cp.asarray(big)[..., ::2, ::3]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4), (2, 3, 5, 2)])
def test_qr_matches_numpy(shape, dtype):
    for a, x in _views(shape, dtype):
        for mode in ("reduced", "complete"):
            q, r = cp.linalg.qr(x, mode=mode)
            wq, wr = numpy.linalg.qr(a, mode=mode)
            assert q.dtype == wq.dtype and r.dtype == wr.dtype
            assert q.shape == wq.shape and r.shape == wr.shape
            qn, rn = q.get(), r.get()
            close(qn @ rn, a, dtype, 10)  # Q R = A
            k = qn.shape[-1]
            close(numpy.swapaxes(qn.conj(), -1, -2) @ qn, numpy.broadcast_to(numpy.eye(k), qn.shape[:-2] + (k, k)),
                  dtype, 10)
            numpy.testing.assert_array_equal(rn, numpy.triu(rn))
            close(numpy.abs(rn), numpy.abs(wr), dtype, 10)  # R is unique up to the signs of its rows
        r = cp.linalg.qr(x, mode="r")
        close(numpy.abs(r.get()), numpy.abs(numpy.linalg.qr(a, mode="r")), dtype, 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4), (2, 3, 5, 2)])
def test_svd_matches_numpy(shape, dtype):
    for a, x in _views(shape, dtype):
        ws = numpy.linalg.svd(a, compute_uv=False)
        s = cp.linalg.svdvals(x)
        assert s.dtype == ws.dtype and s.shape == ws.shape
        close(s, ws, dtype, 10)
        for full in (True, False):
            u, s, vh = cp.linalg.svd(x, full_matrices=full)
            wu, ws2, wvh = numpy.linalg.svd(a, full_matrices=full)
            assert (u.shape, s.shape, vh.shape) == (wu.shape, ws2.shape, wvh.shape)
            assert (u.dtype, s.dtype, vh.dtype) == (wu.dtype, ws2.dtype, wvh.dtype)
            k = s.shape[-1]
            un, sn, vn = u.get(), s.get(), vh.get()
            close((un[..., :, :k] * sn[..., None, :]) @ vn[..., :k, :], a, dtype, 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,batch", [(1, ()), (4, ()), (3, (2,)), (5, (2, 2))])
def test_eigh_cholesky_solve_inv_det_match_numpy(n, batch, dtype):
    a = rand(batch + (n, n), dtype)
    spd = a @ numpy.swapaxes(a.conj(), -1, -2) + n * numpy.eye(n, dtype=a.dtype)
    for x in (cp.asarray(spd), cp.asarray(numpy.asfortranarray(spd)), cp.asarray(spd.copy()).swapaxes(-1, -2)):
        xs = x.get()
        w, v = cp.linalg.eigh(x)
        ww = numpy.linalg.eigvalsh(xs)
        assert w.dtype == ww.dtype and v.dtype == xs.dtype
        close(w, ww, dtype, 10 * n)
        vn = v.get()
        close(xs @ vn, vn * w.get()[..., None, :], dtype, 10 * n)
        close(cp.linalg.eigvalsh(x, UPLO="U"), numpy.linalg.eigvalsh(xs, UPLO="U"), dtype, 10 * n)
        l = cp.linalg.cholesky(x)
        close(l, numpy.linalg.cholesky(xs), dtype, 10 * n)
        b = rand(batch + (n, 2), dtype)
        close(cp.linalg.solve(x, cp.asarray(b)), numpy.linalg.solve(xs, b), dtype, 10)
        close(cp.linalg.inv(x), numpy.linalg.inv(xs), dtype, 10)
        close(cp.linalg.det(x), numpy.linalg.det(xs), dtype, 10 * abs(numpy.linalg.det(xs)).max())
        sg, ld = cp.linalg.slogdet(x)
        wsg, wld = numpy.linalg.slogdet(xs)
        assert sg.dtype == wsg.dtype and ld.dtype == wld.dtype
        close(sg, wsg, dtype, 10)
        close(ld, wld, dtype, 10 * n)


def test_integer_input_computes_in_float64():
    a = numpy.array([[4, 1], [1, 3]])
    for got, want in ((cp.linalg.inv(cp.asarray(a)), numpy.linalg.inv(a)),
                      (cp.linalg.eigvalsh(cp.asarray(a)), numpy.linalg.eigvalsh(a)),
                      (cp.linalg.svd(cp.asarray(a), compute_uv=False), numpy.linalg.svd(a, compute_uv=False))):
        assert got.dtype == want.dtype
        close(got, want, "float64")


# ---- functions built on the decompositions and products (CuPy's linalg tests' rules) -----------------
@pytest.mark.parametrize("x", [numpy.ones((3, 3)), numpy.zeros((2, 2, 2)),
                               numpy.array([[[1.0, 2], [3, 4]], [[1, 1], [1, 1]]])])
@pytest.mark.parametrize("p", [None, 1, 2, -2, "fro", numpy.inf])
def test_cond_of_singular_matrices_is_inf_as_numpy(x, p):
    want = numpy.asarray(numpy.linalg.cond(x, p))
    got = cp.linalg.cond(cp.asarray(x), p).get()
    assert got.shape == numpy.shape(want)
    # inf, or a finite cond beyond 1/eps (for p = -2, below eps: smallest over largest singular value), is
    # a zero singular value or rounding noise over one (whether the SVD returns exactly 0 depends on its
    # order of operations: LAPACK's and cuSOLVER's differ, as do NumPy builds): singular in both is the
    # claim there
    eps = numpy.finfo(got.dtype).eps

    def singular(c):
        return numpy.isinf(c) | (c > 1 / eps) | (numpy.abs(c) < eps)

    assert numpy.array_equal(singular(got), singular(want)), (got, want)
    keep = numpy.isfinite(want) & ~singular(want)
    numpy.testing.assert_allclose(got[keep], want[keep], rtol=1e-6)
    with pytest.raises(numpy.linalg.LinAlgError):
        cp.linalg.cond(cp.zeros((0, 0)), p)


def test_tensorsolve_tensorinv_trace_eigh_float16():
    a, b = rand((2, 3, 6), "float64"), rand((2, 3), "float64")
    close(cp.linalg.tensorsolve(cp.asarray(a), cp.asarray(b)), numpy.linalg.tensorsolve(a, b), "float64", 10)
    a = rand((6, 2, 3), "float64")
    close(cp.linalg.tensorsolve(cp.asarray(a), cp.asarray(b), axes=(0,)),
          numpy.linalg.tensorsolve(a, b, axes=(0,)), "float64", 10)
    a = rand((4, 6, 8, 3), "float64")
    close(cp.linalg.tensorinv(cp.asarray(a)), numpy.linalg.tensorinv(a), "float64", 10)
    x = numpy.arange(24).reshape(2, 3, 4)
    got = cp.trace(cp.asarray(x), 1, 2, 0)
    numpy.testing.assert_array_equal(got.get(), numpy.trace(x, 1, 2, 0))
    assert got.dtype == numpy.trace(x, 1, 2, 0).dtype
    h = numpy.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]], dtype=numpy.float16)
    w, v = cp.linalg.eigh(cp.asarray(h))  # CuPy: computed in float32, results float16
    assert w.dtype == numpy.float16 and v.dtype == numpy.float16
    numpy.testing.assert_allclose(w.get().astype(float), numpy.linalg.eigvalsh(h.astype(float)), rtol=2e-3)
    r = cp.linalg.matrix_rank(cp.asarray([1, 2]))
    assert isinstance(r, cp.ndarray) and r.shape == () and int(r) == 1


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float32"])
def test_einsum_keeps_dtype_broadcasts_zero_dims_and_interleaved(dtype):
    a = (numpy.arange(6).reshape(2, 3) % 2).astype(dtype)
    for sub in ("ij->", "ij->i", "ij->j", "ij", "ji"):
        want = numpy.einsum(sub, a)
        got = cp.einsum(sub, cp.asarray(a))
        assert got.dtype == want.dtype, sub
        numpy.testing.assert_array_equal(got.get(), want)
    for sa, sb in (((0, 1), (3, 2)), ((1, 0), (0, 2)), ((2, 0), (0, 1)), ((1, 1), (1, 0))):
        x, y = numpy.ones(sa, dtype), numpy.ones(sb, dtype)
        want = numpy.einsum("ij,jk->ik", x, y)
        got = cp.einsum("ij,jk->ik", cp.asarray(x), cp.asarray(y))
        assert got.shape == want.shape and got.dtype == want.dtype
        numpy.testing.assert_array_equal(got.get(), want)
    x, y = numpy.ones((2, 3), dtype), numpy.ones(3, dtype)
    numpy.testing.assert_array_equal(cp.einsum(cp.asarray(x), [0, 1], cp.asarray(y), [1], [0]).get(),
                                     numpy.einsum(x, [0, 1], y, [1], [0]))
    with pytest.raises(ValueError):
        cp.einsum("...->", cp.zeros((2, 2, 2)))
    with pytest.raises(ValueError):
        cp.einsum()


def test_einsum_view_ignores_dtype_and_dot_out_rules_as_numpy():
    a = numpy.arange(27, dtype=numpy.int8).reshape(3, 3, 3)
    for sub in ("iji->ij", "ijk->kji"):  # NumPy returns a view: dtype= is not applied
        want = numpy.einsum(sub, a, dtype=numpy.int16)
        got = cp.einsum(sub, cp.asarray(a), dtype=numpy.int16)
        assert got.dtype == want.dtype
        numpy.testing.assert_array_equal(got.get(), want)
    assert cp.einsum("ijk->", cp.asarray(a), dtype=numpy.int16).dtype == numpy.einsum("ijk->", a, dtype=numpy.int16).dtype
    x, y = numpy.ones((2, 3)), numpy.ones((3, 4))
    out = cp.zeros((2, 4))
    assert cp.dot(cp.asarray(x), cp.asarray(y), out=out) is out
    numpy.testing.assert_array_equal(out.get(), numpy.dot(x, y))
    for bad in (cp.zeros((4, 2)).T, cp.zeros((2, 4), dtype=numpy.float32), cp.zeros((2, 5))):
        with pytest.raises(ValueError):
            cp.dot(cp.asarray(x), cp.asarray(y), out=bad)
