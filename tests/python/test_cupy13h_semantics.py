"""NumPy semantics CuPy's own suite found missing (tests/cupy/README.md, issue 13): linalg.eig / eigvals,
lstsq's rank type, ndarray.flags.owndata of views, tobytes, conj of real arrays, fill's scalar rule,
positional ufunc outputs and shape arguments; each checked against NumPy."""
import contextlib
import warnings

import numpy as np
import pytest

import loom


def general(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((n, n))
    return a.astype(dtype)


# ---- linalg.eig / eigvals ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128, np.int64])
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 1, 3, 3)])
def test_eig_matches_numpy(dtype, shape):
    a = general(shape[-1], dtype).astype(dtype) if len(shape) == 2 else np.stack(
        [general(shape[-1], dtype, s) for s in range(int(np.prod(shape[:-2])))]).reshape(shape).astype(dtype)
    w, v = loom.linalg.eig(loom.asarray(a))
    wn = np.linalg.eigvals(a)
    want_dt = np.result_type(np.linalg.eigvals(a).dtype, np.complex64)
    assert w.dtype == want_dt and v.dtype == want_dt  # always complex, as CuPy's
    tol = 1e-3 if want_dt == np.complex64 else 1e-9
    np.testing.assert_allclose(np.sort(w.get(), axis=-1), np.sort(wn.astype(want_dt), axis=-1), rtol=tol, atol=tol)
    # A v = v diag(w), with v's columns of unit length (a float64 check independent of loom)
    av = np.matmul(a.astype(np.complex128), v.get().astype(np.complex128))
    vw = v.get().astype(np.complex128) * w.get().astype(np.complex128)[..., None, :]
    np.testing.assert_allclose(av, vw, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(np.linalg.norm(v.get(), axis=-2), 1, rtol=tol)
    ev = loom.linalg.eigvals(loom.asarray(a))
    assert ev.dtype == want_dt and ev.shape == wn.shape
    np.testing.assert_allclose(np.sort(ev.get(), axis=-1), np.sort(wn.astype(want_dt), axis=-1), rtol=tol, atol=tol)


def test_eig_complex_eigenvalues_of_a_real_matrix():
    a = np.array([[0.0, -1.0], [1.0, 0.0]])  # a rotation: eigenvalues +-i
    w = loom.linalg.eigvals(loom.asarray(a)).get()
    np.testing.assert_allclose(np.sort_complex(w), [-1j, 1j], atol=1e-12)


def test_eig_non_contiguous_input_and_result_tuple():
    a = general(6, np.float64)[::2, ::2]
    r = loom.linalg.eig(loom.asarray(general(6, np.float64))[::2, ::2])
    assert r.eigenvalues is r[0] and r.eigenvectors is r[1]
    np.testing.assert_allclose(np.sort_complex(r[0].get()), np.sort_complex(np.linalg.eigvals(a)), rtol=1e-10)


@pytest.mark.parametrize("dtype", "ifdFD")
@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_eig_empty_as_numpy(dtype, shape):
    a = np.empty(shape, dtype)
    wn, vn = np.linalg.eig(a)
    w, v = loom.linalg.eig(loom.asarray(a))
    assert (w.shape, w.dtype, v.shape, v.dtype) == (wn.shape, wn.dtype, vn.shape, vn.dtype)
    e = loom.linalg.eigvals(loom.asarray(a))
    assert (e.shape, e.dtype) == (wn.shape, wn.dtype)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (4, 0), (2, 2, 3), (0, 2, 3)])
@pytest.mark.parametrize("fn", ["eig", "eigvals"])
def test_eig_shape_errors_as_numpy(shape, fn):
    with pytest.raises(np.linalg.LinAlgError):
        getattr(np.linalg, fn)(np.zeros(shape))
    with pytest.raises(np.linalg.LinAlgError):
        getattr(loom.linalg, fn)(loom.zeros(shape))


def test_eig_nan_and_float16_as_numpy():
    a = np.array([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.eig(a)
    with pytest.raises(np.linalg.LinAlgError):
        loom.linalg.eig(loom.asarray(a))
    with pytest.raises(TypeError):
        loom.linalg.eigvals(loom.ones((2, 2), dtype=np.float16))


# ---- lstsq's rank: NumPy's int32 --------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (0, 3), (3, 0)])
def test_lstsq_rank_type(shape):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) % 5
    b = np.ones(shape[0])
    want = np.linalg.lstsq(a, b, rcond=None)[2]
    got = loom.linalg.lstsq(loom.asarray(a), loom.asarray(b), rcond=None)[2]
    assert type(got) is type(want) and got == want


# ---- ndarray methods -------------------------------------------------------------------------------------
def test_owndata_of_views():
    a = loom.zeros((3, 4))
    na = np.zeros((3, 4))
    for f in (lambda x: x, lambda x: x.view(), lambda x: x[1:], lambda x: x.T, lambda x: x.view(np.int32)):
        assert f(a).flags.owndata == f(na).flags.owndata
        assert f(a).flags["OWNDATA"] == f(na).flags["OWNDATA"]
    assert (a + 1).flags.owndata


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float64, np.complex64])
@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_tobytes_as_numpy(dtype, order):
    n = np.arange(24).reshape(2, 3, 4).astype(dtype)
    for x in (n, n[:, ::2, 1:], n.transpose(2, 0, 1), np.asfortranarray(n), n[:0]):
        assert loom.asarray(x).tobytes(order) == x.tobytes(order)
    assert loom.asarray(np.array(7, dtype)).tobytes() == np.array(7, dtype).tobytes()


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32, np.complex64])
def test_conj_method(dtype):
    x = np.array([[1, 2 - 1j], [0, 3j]]) if np.dtype(dtype).kind == "c" else np.array([[1, 0], [2, 3]])
    n = x.astype(dtype)
    a = loom.asarray(n)
    for m in ("conj", "conjugate"):
        got, want = getattr(a, m)(), getattr(n, m)()
        assert (got is a) == (want is n)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.get(), want)
    assert loom.conjugate(loom.asarray(np.array([True]))).dtype == np.conjugate(np.array([True])).dtype


def test_fill_takes_scalars_only():
    a, n = loom.zeros(3), np.zeros(3)
    for v in (np.ones((1,)), [1.0], np.ones((1, 1)), loom.ones((1,))):
        with pytest.raises(ValueError):
            n.fill(v if not isinstance(v, loom.ndarray) else v.get())
        with pytest.raises(ValueError):
            a.fill(v)
    a.fill(np.array(2.5))
    a.fill(loom.asarray(np.array(2.5)))
    np.testing.assert_array_equal(a.get(), np.full(3, 2.5))


def test_divmod_fewer_positional_outputs():
    x, y = np.arange(1.0, 7.0).reshape(2, 3), np.arange(6.0, 0.0, -1).reshape(2, 3)
    q, r = np.divmod(x, y, np.zeros((2, 3)))
    out0 = loom.zeros((2, 3))
    got = loom.divmod(loom.asarray(x), loom.asarray(y), out0)
    assert got[0] is out0
    np.testing.assert_array_equal(got[0].get(), q)
    np.testing.assert_array_equal(got[1].get(), r)
    with pytest.raises(ValueError):  # a keyword out= tuple still needs every output, as NumPy's
        loom.divmod(loom.asarray(x), loom.asarray(y), out=(out0,))


# ---- shape arguments: NumPy's rules ------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [True, np.bool_(True), np.array(True), (True, True), (2, False), 1.0, (2.0,)])
def test_shape_rejects_bools_and_floats(shape):
    with pytest.raises(TypeError):
        np.zeros(shape)
    with pytest.raises(TypeError):
        loom.zeros(shape)


@pytest.mark.parametrize("shape", [np.array(3), np.int32(2), (np.int32(1), np.array(2)), [], 0])
def test_shape_takes_integers_and_0d_integer_arrays(shape):
    assert loom.zeros(shape).shape == np.zeros(shape).shape
    assert loom.empty(shape).shape == np.empty(shape).shape


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex128, np.bool_])
@pytest.mark.parametrize("shape", [(3, 0), (0, 3), (0, 0), (0, 2, 3), (2, 0, 3)])
def test_pinv_of_empty_keeps_numpy_dtype(dtype, shape):
    a = np.zeros(shape, dtype)
    want = np.linalg.pinv(a)
    got = loom.linalg.pinv(loom.asarray(a))
    assert got.shape == want.shape and got.dtype == want.dtype


@pytest.mark.parametrize("shape", [(1, 3, 1), (3,), (0, 2), (), (2, 1), (1, 1), (2, 3)])
@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_array_from_numpy_strides_and_owndata(shape, order):
    for src in (np.ones(shape), np.asfortranarray(np.ones(shape))):
        want = np.array(src, order=order)
        got = loom.array(src, order=order)
        assert got.strides == want.strides
        assert got.flags.owndata == want.flags.owndata and got.base is None


@pytest.mark.parametrize("make", [lambda: loom.empty((2, 3), order="F"), lambda: loom.zeros((2, 3, 4), order="F"),
                                  lambda: loom.ones((2, 3)).copy(order="F"),
                                  lambda: loom.asarray(np.asfortranarray(np.arange(6.0).reshape(2, 3)))])
def test_fortran_arrays_own_their_memory(make):
    a = make()
    assert a.flags.f_contiguous and a.flags.owndata and a.base is None
    assert a.T.base is a and not a.T.flags.owndata and a[0].base is a


@pytest.mark.parametrize("name", ["1", "a-b", "", "x y", "caf\u00e9", 3])
def test_kernel_names_must_be_identifiers(name):
    with pytest.raises(ValueError, match="kernel name"):
        loom.ElementwiseKernel("T x", "T y", "y = x", name)
    with pytest.raises(ValueError, match="kernel name"):
        loom.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", name=name)


def test_kernel_with_a_valid_name_runs():
    k = loom.ElementwiseKernel("T x", "T y", "y = x * 2", "_twice9")
    np.testing.assert_array_equal(k(loom.arange(4)).get(), np.arange(4) * 2)


@pytest.mark.parametrize("fn", ["sum", "prod", "mean"])
@pytest.mark.parametrize("dtype,warns", [(np.float32, True), (np.int64, True), (np.complex128, False),
                                         (np.bool_, False)])
def test_reduction_of_complex_into_real_warns_as_numpy(fn, dtype, warns):
    if fn == "mean" and dtype == np.bool_:
        return
    x = (np.arange(4) + 1j).astype(np.complex64)
    with pytest.warns(np.exceptions.ComplexWarning) if warns else _no_complex_warning():
        want = getattr(x, fn)(dtype=dtype)
    with pytest.warns(np.exceptions.ComplexWarning) if warns else _no_complex_warning():
        got = getattr(loom.asarray(x), fn)(dtype=dtype)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.get(), want, rtol=1e-6)


@contextlib.contextmanager
def _no_complex_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        yield
