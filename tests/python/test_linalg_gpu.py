"""loom.linalg's decompositions on the device's solver library (cuSOLVER on CUDA: runtime/cuda/cuda_solver.c)
against NumPy: every op in float32, float64, complex64 and complex128, single matrices and batches
(Cholesky's batch is one potrfBatched call), tall, square and wide matrices (a wide SVD goes through the
conjugate transpose), the errors LAPACK's info turns into (LinAlgError for a singular or not positive
definite matrix, naming the failing matrix of a batch), and that the work stays on the device: one
library call per decomposition and no host-fallback warning. Factors that are not unique (signs of
singular and eigen vectors) are checked by their defining identities.

The device tests skip on a machine without a GPU (scripts/gpu_all.sh runs them on the H200); the test of
the wide-SVD transposition runs everywhere (it is plain loom operations).
"""
import warnings
from typing import Any

import numpy as np
import pytest

import loom
import loom.linalg as la

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)
gpu = pytest.mark.skipif(not ON_GPU, reason="needs a GPU (arrays live on the host here)")
RNG = np.random.default_rng(23)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def rand(shape: Any, dtype: Any) -> np.ndarray:
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def herm(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def spd(shape: Any, dtype: Any) -> np.ndarray:
    a = rand(shape, dtype)
    return (a @ herm(a) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def tol(dtype: Any) -> float:
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def get(x: Any) -> np.ndarray:
    return x.get() if isinstance(x, loom.ndarray) else np.asarray(x)


def close(got: Any, want: np.ndarray, dtype: Any, scale: float = 1.0) -> None:
    g = get(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    np.testing.assert_allclose(g, want, rtol=tol(dtype) * scale, atol=tol(dtype) * scale)


class _OnDevice:
    """Counts library calls and turns a host-fallback warning into a failure."""

    def __enter__(self) -> "_OnDevice":
        self.before = loom.stats()["library_calls"]
        self.w = warnings.catch_warnings()
        self.w.__enter__()
        warnings.simplefilter("error", RuntimeWarning)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.w.__exit__(*exc)

    def calls(self) -> int:
        return int(loom.stats()["library_calls"] - self.before)


# ---- runs everywhere: the transposition a wide SVD takes on the device ---------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("full", [True, False])
def test_wide_svd_through_the_conjugate_transpose(dtype: Any, full: bool) -> None:
    a = rand((2, 3, 5), dtype)
    x = loom.asarray(a)
    u1, s, vh1 = la.svd(la._herm(x), full_matrices=full)
    u, vh = la._herm(vh1), la._herm(u1)
    k = 3
    assert get(u).shape == ((2, 3, 3) if full else (2, 3, k)) and get(vh).shape == ((2, 5, 5) if full else (2, k, 5))
    close(s, np.linalg.svd(a, compute_uv=False), dtype)
    recon = get(u)[..., :, :k] * get(s)[..., None, :] @ get(vh)[..., :k, :]
    close(recon, a.astype(recon.dtype), dtype, 10)


# ---- on the GPU -----------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 6, 6), (2, 2, 1, 1)])
def test_gpu_cholesky(dtype: Any, shape: Any) -> None:
    a = spd(shape, dtype)
    with _OnDevice() as od:
        lower = la.cholesky(loom.asarray(a))
        upper = la.cholesky(loom.asarray(a), upper=True)
        assert od.calls() == 2
    close(lower, np.linalg.cholesky(a), dtype, 10)
    close(upper, herm(np.linalg.cholesky(a)), dtype, 10)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb", [((4, 4), (4, 2)), ((3, 5, 5), (3, 5, 1)), ((2, 3, 3), (2, 3, 4))])
def test_gpu_solve_inv_det(dtype: Any, sa: Any, sb: Any) -> None:
    a = rand(sa, dtype) + 3 * np.eye(sa[-1], dtype=dtype)
    b = rand(sb, dtype)
    with _OnDevice() as od:
        x = la.solve(loom.asarray(a), loom.asarray(b))
        ai = la.inv(loom.asarray(a))
        d = la.det(loom.asarray(a))
        sg, ld = la.slogdet(loom.asarray(a))
        assert od.calls() == 4  # solve, inv, and the getrf of det and of slogdet; nothing on the host
    close(x, np.linalg.solve(a, b), dtype, 10)
    close(ai, np.linalg.inv(a), dtype, 10)
    close(d, np.linalg.det(a), dtype, 10 * float(np.max(np.abs(np.linalg.det(a)))))
    want_s, want_l = np.linalg.slogdet(a)
    close(sg, want_s, dtype, 10)
    close(ld, want_l, dtype, 10)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (4, 4), (3, 7, 5), (4, 6)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_gpu_qr(dtype: Any, shape: Any, mode: str) -> None:
    a = rand(shape, dtype)
    with _OnDevice() as od:
        res = la.qr(loom.asarray(a), mode=mode)
        assert od.calls() == 1
    want: Any = np.linalg.qr(a, mode=mode)  # type: ignore[call-overload]
    if mode == "r":
        # R is unique up to the signs (phases) of its rows: compare R^H R = A^H A
        r = get(res)
        assert r.shape == want.shape
        close(herm(r) @ r, herm(a) @ a, dtype, 100)
        return
    q, r = get(res[0]), get(res[1])
    assert q.shape == want[0].shape and r.shape == want[1].shape
    close(q @ r, a, dtype, 10)
    k = q.shape[-1]
    close(herm(q) @ q, np.broadcast_to(np.eye(k, dtype=dtype), q.shape[:-2] + (k, k)).copy(), dtype, 10)
    close(np.tril(r, -1), np.zeros_like(r), dtype)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (4, 4), (4, 6), (3, 5, 2), (2, 2, 7)])
@pytest.mark.parametrize("full", [True, False])
def test_gpu_svd(dtype: Any, shape: Any, full: bool) -> None:
    a = rand(shape, dtype)
    with _OnDevice() as od:
        u, s, vh = la.svd(loom.asarray(a), full_matrices=full)
        sv = la.svd(loom.asarray(a), compute_uv=False)
        assert od.calls() == 2
    wu, ws, wvh = np.linalg.svd(a, full_matrices=full)
    assert get(u).shape == wu.shape and get(vh).shape == wvh.shape
    close(s, ws, dtype, 10)
    close(sv, ws, dtype, 10)
    k = ws.shape[-1]
    recon = get(u)[..., :, :k] * get(s)[..., None, :] @ get(vh)[..., :k, :]
    close(recon, a, dtype, 10)
    uu = get(u)
    close(herm(uu) @ uu, np.broadcast_to(np.eye(uu.shape[-1]), uu.shape[:-2] + (uu.shape[-1],) * 2).astype(dtype),
          dtype, 10)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (1, 1)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_gpu_eigh(dtype: Any, shape: Any, uplo: str) -> None:
    a = rand(shape, dtype)
    a = a + herm(a)
    # the other triangle is garbage that must not be read
    junk = np.triu(rand(shape, dtype), 1) if uplo == "L" else np.tril(rand(shape, dtype), -1)
    with _OnDevice() as od:
        w, v = la.eigh(loom.asarray(a + junk), UPLO=uplo)
        wo = la.eigvalsh(loom.asarray(a + junk), UPLO=uplo)
        assert od.calls() == 2
    want = np.linalg.eigvalsh(a)
    close(w, want, dtype, 10)
    close(wo, want, dtype, 10)
    vv = get(v)
    close(a @ vv, vv * get(w)[..., None, :].astype(vv.dtype), dtype, 100)


@gpu
def test_gpu_errors_follow_numpy() -> None:
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(la.LinAlgError, match="Singular matrix"):
        la.inv(loom.asarray(sing))
    with pytest.raises(la.LinAlgError, match="Singular matrix"):
        la.solve(loom.asarray(sing), loom.asarray(np.ones(2)))
    batch = np.stack([np.eye(3), -np.eye(3), np.eye(3)])
    with pytest.raises(la.LinAlgError, match=r"not positive definite \(matrix 1 of the batch\)"):
        la.cholesky(loom.asarray(batch))
    with pytest.raises(la.LinAlgError, match="not positive definite"):
        la.cholesky(loom.asarray(-np.eye(3, dtype=np.complex64)))
    # a singular matrix is not an error for det / slogdet: NumPy's 0 and (0, -inf)
    assert float(la.det(loom.asarray(sing))) == 0.0
    s, ld = la.slogdet(loom.asarray(sing))
    assert float(s) == 0.0 and float(ld) == -np.inf


@gpu
def test_gpu_lstsq_pinv_rank() -> None:
    a, b = rand((8, 3), np.float64), rand((8, 2), np.float64)
    x, res, rank, s = la.lstsq(loom.asarray(a), loom.asarray(b), rcond=None)
    wx, wres, wrank, ws = np.linalg.lstsq(a, b, rcond=None)
    close(x, wx, np.float64, 10)
    close(res, wres, np.float64, 10)
    assert rank == wrank
    close(la.pinv(loom.asarray(a.T)), np.linalg.pinv(a.T), np.float64, 10)
    assert int(la.matrix_rank(loom.asarray(a @ a.T))) == 3


# ---- the Jacobi SVD (cuSOLVER's gesvdj: real dtypes, vh returned as V read row-major) ----------------------
def _svd_identities(a: np.ndarray, u: Any, s: Any, vh: Any, dtype: Any, full: bool) -> None:
    wu, ws, wvh = np.linalg.svd(a.astype(np.float64), full_matrices=full)
    uu, ss, vv = get(u), get(s), get(vh)
    assert uu.shape == wu.shape and vv.shape == wvh.shape and ss.shape == ws.shape
    assert uu.dtype == dtype and vv.dtype == dtype and ss.dtype == dtype
    scale = max(1.0, float(ws.max(initial=0.0)))
    close(ss / scale, ws / scale, dtype, 50)
    k = ws.shape[-1]
    close((uu[..., :, :k] * ss[..., None, :] @ vv[..., :k, :]) / scale, a / scale, dtype, 50)
    for q, side in ((uu, -1), (vv, -2)):  # orthonormal columns of u, rows of vh
        g = np.swapaxes(q, -1, -2) @ q if side == -1 else q @ np.swapaxes(q, -1, -2)
        close(g, np.broadcast_to(np.eye(g.shape[-1]), g.shape).astype(dtype), dtype, 50)


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 48), (200, 200), (3, 33, 17), (1, 1), (9, 9)])
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("route", ["gesvdj", "gesvd"])
def test_gpu_svd_jacobi_and_gesvd(monkeypatch: Any, dtype: Any, shape: Any, full: bool, route: str) -> None:
    """gesvdj (the default for real dtypes) and gesvd (LOOM_CUSOLVER_SVD=gesvd) give NumPy's factors,
    one library call each; wide matrices go through the conjugate transpose."""
    monkeypatch.setenv("LOOM_CUSOLVER_SVD", route)
    a = rand(shape, dtype)
    with _OnDevice() as od:
        u, s, vh = la.svd(loom.asarray(a), full_matrices=full)
        assert od.calls() == 1
    _svd_identities(a, u, s, vh, dtype, full)
    wide = np.swapaxes(a, -1, -2).copy()
    u, s, vh = la.svd(loom.asarray(wide), full_matrices=full)
    _svd_identities(wide, u, s, vh, dtype, full)


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpu_svd_jacobi_hard_spectra(dtype: Any) -> None:
    """Rank-deficient, repeated and widely spread singular values, zeros and a batch mixing them."""
    n = 40
    q1, _ = np.linalg.qr(RNG.standard_normal((n, n)))
    q2, _ = np.linalg.qr(RNG.standard_normal((n, n)))
    spectra = [np.r_[np.ones(20) * 3.0, np.zeros(20)],          # rank 20, a repeated value
               np.logspace(0, -6 if dtype == np.float64 else -3, n),  # spread
               np.zeros(n)]                                    # the zero matrix
    a = np.stack([(q1 * sv) @ q2.T for sv in spectra]).astype(dtype)
    u, s, vh = la.svd(loom.asarray(a), full_matrices=False)
    _svd_identities(a, u, s, vh, dtype, False)
    # without LOOM_LINALG_ANY_VH_LAYOUT the C API keeps its column-major contract (gesvd, or a transpose)
    x = la._colmajor(loom.asarray(a), np.dtype(dtype))
    s_cm, u_cm, vh_cm = loom._core.linalg(la._SVD, 0, x)
    assert vh_cm.strides[-2] == np.dtype(dtype).itemsize and u_cm.strides[-2] == np.dtype(dtype).itemsize
    _svd_identities(a, u_cm, s_cm, vh_cm, dtype, False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("full", [True, False])
def test_svd_any_vh_layout_flag(dtype: Any, full: bool) -> None:
    """loom_linalg's LOOM_LINALG_ANY_VH_LAYOUT (8): vh comes back in whatever layout its strides say (row-major
    from gesvdj on a GPU for real dtypes, column-major from LAPACK and gesvd); read through those strides it
    is NumPy's factor. Runs everywhere (the host's LAPACK ignores the flag)."""
    a = rand((2, 7, 5), dtype)
    x = la._colmajor(loom.asarray(a), np.dtype(dtype))
    s, u, vh = loom._core.linalg(la._SVD, 8 | (la._COMPLETE if full else 0), x)
    it = np.dtype(dtype).itemsize
    kv, n = vh.shape[-2:]
    assert vh.strides[-2:] in ((it, it * kv), (it * n, it))  # column-major or row-major matrices
    if not ON_GPU or np.dtype(dtype).kind == "c":
        assert vh.strides[-2] == it  # column-major, the C API's default layout
    k = 5
    recon = get(u)[..., :, :k] * get(s)[..., None, :] @ get(vh)[..., :k, :]
    close(recon, a, dtype, 10)
    vv = get(vh)
    eye = np.broadcast_to(np.eye(vv.shape[-2]), vv.shape[:-1] + (vv.shape[-2],)).astype(dtype)
    close(vv @ herm(vv), eye, dtype, 10)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
@pytest.mark.parametrize("n", [3, 64])
def test_nan_propagates(n, dtype):
    """A NaN entry makes NumPy's det, slogdet's logdet, inv and solve NaN (LAPACK's getrf carries it into U;
    slogdet's sign counts negative pivots, so a NaN one reads as positive). cuSOLVER's getrf drops the NaN
    (H100, 2026-12-06: det, inv and solve came back finite, those of the matrix with the NaN read as 0);
    linalg._nan_carried restores NumPy's results on a GPU. Of a batch only the matrix with the NaN is
    NaN: the other matches NumPy. Host and device alike."""
    a = rand((2, n, n), dtype) + n * np.eye(n, dtype=dtype)
    a[1, 1, 2] = np.nan
    la_ = loom.asarray(a)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want_det, want_inv = np.linalg.det(a), np.linalg.inv(a)
        want_solve, want_sl = np.linalg.solve(a, np.ones((2, n, 1), dtype)), np.linalg.slogdet(a)
    assert np.isnan(want_det[1]) and np.isnan(want_inv[1]).all() and np.isnan(want_solve[1]).all()
    det = la.det(la_).get()
    assert np.isnan(det[1]), "det of a matrix with a NaN is not NaN"
    if n == 3:  # 64 x 64 determinants overflow complex64: compared through slogdet below
        np.testing.assert_allclose(det[0], want_det[0], rtol=1e-3)
    inv = la.inv(la_).get()
    assert np.isnan(inv[1]).all()
    np.testing.assert_allclose(inv[0], want_inv[0], rtol=1e-3, atol=1e-6)
    x = la.solve(la_, loom.asarray(np.ones((2, n, 1), dtype))).get()
    assert np.isnan(x[1]).all()
    np.testing.assert_allclose(x[0], want_solve[0], rtol=1e-3, atol=1e-6)
    sign, logdet = (v.get() for v in la.slogdet(la_))
    assert np.isnan(logdet[1])
    if np.dtype(dtype).kind == "f":
        assert sign[1] == want_sl.sign[1] == 1.0
    np.testing.assert_allclose(logdet[0], want_sl.logabsdet[0], rtol=1e-4)


def test_nan_carried_marks_only_matrices_with_a_nan():
    """The device fix itself (linalg._nan_carried), run on any device: every float result of a matrix with a
    NaN becomes all-NaN (complex: nan+nanj), the others and integer results (pivots) are untouched."""
    a = np.ones((3, 2, 2))
    a[2, 0, 1] = np.nan
    lu = np.arange(12.0).reshape(3, 2, 2)
    piv = np.ones((3, 2), np.int32)
    out, p = la._nan_carried(loom.asarray(a), (loom.asarray(lu), loom.asarray(piv)))
    want = lu.copy()
    want[2] = np.nan
    np.testing.assert_array_equal(out.get(), want)
    np.testing.assert_array_equal(p.get(), piv)
    (c,) = la._nan_carried(loom.asarray(a.astype(np.complex128)), (loom.asarray(lu.astype(np.complex128)),))
    assert np.isnan(c.get()[2].real).all() and np.isnan(c.get()[2].imag).all()
    np.testing.assert_array_equal(c.get()[:2], lu[:2])
