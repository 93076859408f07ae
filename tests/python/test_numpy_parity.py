"""NumPy behaviours CuPy's own test suite checks (tests/cupy), each compared with NumPy itself on the
same inputs: memory overlap queries, fromfunction, ..."""
import numpy as np
import pytest

import loom


def _pairs(xp):
    """(a, b) pairs of views of one buffer, with overlaps that bounds alone cannot decide."""
    x = xp.arange(24)
    y = x.reshape(4, 6)
    z = xp.zeros((3, 3))
    return [(x[0:7], x[6:12]), (x[1:10], x[4:6]), (x[1:6], x[8:11]), (x[1:7], x[7:10]),
            (x, x[1::4]), (x[0::2], x[1::4]), (x[0::9], x[1::11]), (x[0::2], x[1::3]),
            (y[:, ::2], y[:, 1::2]), (y[::2], y.T), (z[:2, 1::-1], z[1:, 1:]), (x[:0], x), (x, x)]


@pytest.mark.parametrize("fn", ["shares_memory", "may_share_memory"])
def test_memory_overlap_matches_numpy(fn):
    for (la, lb), (na, nb) in zip(_pairs(loom), _pairs(np)):
        got = getattr(loom, fn)(la, lb)
        assert got is getattr(np, fn)(na, nb), (fn, na.shape, na.strides, nb.shape, nb.strides)


def test_memory_overlap_of_distinct_and_pending_arrays():
    a = loom.arange(6)
    b = a + 1  # pending: its own new memory once evaluated
    assert loom.shares_memory(a, b) is False and loom.may_share_memory(a, b) is False
    assert loom.shares_memory(a, a.reshape(2, 3)) is True
    assert loom.shares_memory(a, a.copy()) is False
    assert loom.shares_memory(a, 3) is False and loom.shares_memory(a, [1, 2]) is False


def test_memory_overlap_max_work():
    x, n = loom.arange(24), np.arange(24)
    # the interleaved halves overlap in range but share no element: a search of no work cannot tell
    with pytest.raises(np.exceptions.TooHardError):
        np.shares_memory(n[0::2], n[1::2], max_work=0)
    with pytest.raises(np.exceptions.TooHardError):
        loom.shares_memory(x[0::2], x[1::2], max_work=0)
    assert loom.shares_memory(x[0::2], x[1::2]) is False
    assert loom.shares_memory(x[0:4], x[8:], max_work=0) is False


@pytest.mark.parametrize("dtype", [int, float, np.int8, np.float32])
def test_fromfunction_matches_numpy(dtype):
    def f(i, j, k=2):
        return i * k + j
    want = np.fromfunction(f, (3, 4), dtype=dtype, k=3)
    got = loom.fromfunction(f, (3, 4), dtype=dtype, k=3)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)
    got0 = loom.fromfunction(lambda i: i, (0,))
    assert got0.shape == (0,) and got0.dtype == np.float64


def _geometries(xp):
    a = xp.zeros((4, 7), dtype=xp.float32)
    return [a, a[::2, ::2], a[::-1], a[::-2, ::-2], a[:, ::-1], a[::2, ::-2], a.T, a[1:3, 2:]]


def test_byte_bounds_matches_numpy():
    for la, na in zip(_geometries(loom), _geometries(np)):
        lo, hi = loom.byte_bounds(la)
        nlo, nhi = np.lib.array_utils.byte_bounds(na)
        # the same offsets from the first element's address
        base_l, base_n = la.data.ptr, na.__array_interface__["data"][0]
        assert (lo - base_l, hi - base_l) == (nlo - base_n, nhi - base_n), (na.shape, na.strides)
    e = loom.zeros((19, 0, 4))
    assert loom.byte_bounds(e) == (e.data.ptr, e.data.ptr)
    with pytest.raises(TypeError):
        loom.byte_bounds([1, 2])


def test_who_lists_arrays_once_per_memory(capsys):
    x = loom.ones(10)
    loom.who({"x": x, "y": loom.ones((2, 3), dtype=np.int32), "alias": x, "n": 3, "h": np.ones(4)})
    lines = capsys.readouterr().out.split("\n")
    rows = [ln.split() for ln in lines[2:-3] if ln]
    assert rows == [["x", "10", "80", "float64"], ["y", "2", "x", "3", "24", "int32"],
                    ["alias", "(x)", "10", "80", "float64"]]
    assert lines[-2] == "Upper bound on total bytes  =       104"  # x counted once
    loom.who({})
    assert capsys.readouterr().out == "\nUpper bound on total bytes  =       0\n"


@pytest.mark.parametrize("dtype", [np.int8, np.uint64, np.float16, np.float32, np.float64])
def test_polynomial_helpers_match_numpy(dtype):
    pu, lpu = np.polynomial.polyutils, loom.polynomial.polyutils
    P, LP = np.polynomial.polynomial, loom.polynomial.polynomial
    series = np.array([3, 5, 7, 0, 0, 0], dtype)
    for trim in (True, False):
        for arg in (series, np.arange(20, dtype=dtype).reshape(4, 5) % 3):
            want, got = pu.as_series(arg, trim=trim), lpu.as_series(loom.asarray(arg), trim=trim)
            assert len(want) == len(got)
            for w, g in zip(want, got):
                assert w.dtype == g.dtype
                np.testing.assert_array_equal(g.get(), w)
    for arg in (series, np.zeros(10, dtype), np.zeros(0, dtype), np.array([0, 3, 0], dtype)):
        w, g = pu.trimseq(arg), lpu.trimseq(loom.asarray(arg))
        np.testing.assert_array_equal(g.get(), w)
    z = loom.zeros(10, dtype)
    assert loom.shares_memory(lpu.trimseq(z), z[:1])
    for arg, tol in ((np.array([1, 2, 0, 3, 0, 3e-4, 1e-3]).astype(dtype), 1e-3), (np.zeros(4, dtype), 0),
                     (np.array(5, dtype), 0)):
        w, g = pu.trimcoef(arg, tol), lpu.trimcoef(loom.asarray(arg), tol)
        assert w.dtype == g.dtype
        np.testing.assert_array_equal(g.get(), w)
    x = (np.arange(10) % 4).astype(dtype)
    for arg, deg in ((x, 6), (x.reshape(5, 2), 3), (np.array(2, dtype), 4), (x, 0)):
        w, g = P.polyvander(arg, deg), LP.polyvander(loom.asarray(arg), deg)
        assert w.dtype == g.dtype and w.shape == g.shape and w.strides == g.strides
        np.testing.assert_allclose(g.get(), w, rtol=1e-3 if dtype == np.float16 else 1e-12)
    for c in (np.array([3, 5, 7, 0, 0], dtype), np.array([0, 3, 0], dtype), np.arange(1, 7).astype(dtype)):
        w, g = P.polycompanion(c), LP.polycompanion(loom.asarray(c))
        assert w.dtype == g.dtype
        np.testing.assert_array_equal(g.get(), w)


def test_polynomial_helpers_errors_as_numpy():
    pu, lpu = np.polynomial.polyutils, loom.polynomial.polyutils
    P, LP = np.polynomial.polynomial, loom.polynomial.polynomial
    cases = [(lambda m, xp: m.as_series(xp.zeros((2, 3, 4))), pu, lpu),
             (lambda m, xp: m.as_series(xp.ones(3, dtype=bool)), pu, lpu),
             (lambda m, xp: m.as_series([xp.zeros(0)]), pu, lpu),
             (lambda m, xp: m.trimseq(xp.zeros(())), pu, lpu),
             (lambda m, xp: m.trimcoef(xp.ones(3), -1), pu, lpu),
             (lambda m, xp: m.polyvander(xp.ones(3), -1), P, LP),
             (lambda m, xp: m.polyvander(xp.ones(3), 5.0), P, LP),
             (lambda m, xp: m.polycompanion(xp.array([3.0, 0, 0])), P, LP),
             (lambda m, xp: m.polycompanion(xp.zeros(())), P, LP)]
    for f, nm, lm in cases:
        with pytest.raises(Exception) as want:
            f(nm, np)
        with pytest.raises(want.type):
            f(lm, loom)


def test_stride_tricks_match_numpy():
    n = np.arange(12.0).reshape(3, 4)
    a = loom.asarray(n)
    st, lst = np.lib.stride_tricks, loom.lib.stride_tricks
    for args in ((2, 0), ((2, 2), None), (3, 1), ((2, 3), (0, 1)), ((1, 1), (1, 1))):
        w, g = st.sliding_window_view(n, *args), lst.sliding_window_view(a, *args)
        assert w.shape == g.shape and w.strides == g.strides
        np.testing.assert_array_equal(g.get(), w)
    np.testing.assert_array_equal(lst.sliding_window_view([0.0, 1, 2, 3], 2).get(),
                                  st.sliding_window_view([0.0, 1, 2, 3], 2))
    for shape, strides in (((2,), (16,)), ((3, 4), (0, 8)), ((2, 2), (8, 8))):
        w = st.as_strided(n.ravel()[:4].copy(), shape=shape, strides=strides)
        g = lst.as_strided(loom.arange(4.0), shape=shape, strides=strides)
        np.testing.assert_array_equal(g.get(), w)
    with pytest.raises(ValueError):
        lst.sliding_window_view(loom.asarray(42.0), 1, 0)
    with pytest.raises(ValueError):
        lst.sliding_window_view(a, (2, 2, 2))
    with pytest.raises(NotImplementedError):  # overlapping writable windows: refused, as CuPy does
        lst.sliding_window_view(a, 2, writeable=True)


def test_float_power_complex_loop_as_numpy():
    u = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.uint64)
    c = np.array([[6 + 6j, 5 + 5j, 4 + 4j], [3 + 3j, 2 + 2j, 1 + 1j]], dtype=np.complex64)
    b = np.array([[True, False, True], [False, True, False]])
    for x, y in ((u, c), (c, c), (c, 2j), (2j, True), (c.astype(complex), b), (u, 2.5), (np.int8(3), u), (c, u)):
        lx = loom.asarray(x) if isinstance(x, np.ndarray) else x
        ly = loom.asarray(y) if isinstance(y, np.ndarray) else y
        want, got = np.asarray(np.float_power(x, y)), loom.float_power(lx, ly)
        got = got.get() if isinstance(got, loom.ndarray) else np.asarray(got)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(TypeError):  # no complex -> float64 loop, as NumPy
        np.float_power(c, 2, dtype=np.float64)
    with pytest.raises(TypeError):
        loom.float_power(loom.asarray(c), 2, dtype=np.float64)


@pytest.mark.parametrize("subscripts", ["...", "ij->...ij", "ij", "ij->ji", "ii->i", "ij->i"])
def test_unary_einsum_is_a_view_where_numpy_s_is(subscripts):
    n = np.arange(4).reshape(2, 2).copy()
    a = loom.asarray(n)
    want, got = np.einsum(subscripts, n), loom.einsum(subscripts, a)
    assert (got.base is a) == (want.base is n)
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.float32, np.float64, np.bool_])
def test_poly1d_power_dtype_and_errors_as_numpy(dtype):
    for shape in ((), (4,)):
        n = np.arange(1, 1 + int(np.prod(shape))).reshape(shape).astype(dtype) if shape else np.array(3, dtype)
        for e in (0, 1, 3):
            want, got = np.poly1d(n) ** e, loom.poly1d(loom.asarray(n)) ** e
            assert got.coeffs.dtype == want.coeffs.dtype, (shape, e)
            np.testing.assert_allclose(got.coeffs.get(), want.coeffs, rtol=1e-6)
    for e in (3.0, -10, 3.5, [1, 2]):  # type: ignore[assignment]
        with pytest.raises(Exception) as want:  # type: ignore[assignment]
            np.poly1d([1, 2]) ** e
        with pytest.raises(want.type):  # type: ignore[attr-defined]
            loom.poly1d(loom.asarray([1, 2])) ** e


def test_complex_astype_warns_only_where_numpy_does():
    import warnings
    c = loom.asarray(np.array([1 + 2j, 0j]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(c.astype(bool).get(), np.array([1 + 2j, 0j]).astype(bool))
        c.astype(np.complex64)
    with pytest.warns(np.exceptions.ComplexWarning):
        c.astype(np.float64)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_ndarray_argmin_argmax_index_dtype(dtype):
    n = np.array([[3.0, -1.0, 7.0], [2.0, 9.0, -4.0]])
    a = loom.asarray(n)
    for name in ("argmin", "argmax"):
        for axis in (None, 0, 1):
            got = getattr(a, name)(axis=axis, dtype=dtype)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got.get(), getattr(n, name)(axis=axis))
    with pytest.raises(TypeError):
        a.argmax(dtype=np.float32)


class _OverridesUfuncs(np.lib.mixins.NDArrayOperatorsMixin):
    """An array of another library (NEP 13): its __array_ufunc__ reports the call it was given."""

    __array_priority__ = 20

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ufunc.__name__, inputs, kwargs


def test_operators_defer_to_ufunc_overrides_as_numpy():
    x, y, n = loom.asarray([3, 7]), _OverridesUfuncs(), np.array([3, 7])
    for op in ("__add__", "__sub__", "__mul__", "__truediv__", "__lt__", "__ge__", "__pow__", "__and__"):
        got, want = getattr(x, op)(y), getattr(n, op)(y)
        assert got[0] == want[0] and got[1][0] is x and got[1][1] is y, op
    assert (y + x)[0] == "add" and (y + x)[1] == (y, x)
    assert (x.__radd__(y))[1] == (y, x)
    with pytest.raises(TypeError):  # CuPy's rule: an in-place update cannot hand its output to the other library
        x += y


def test_ndim_and_common_type_of_any_object_as_numpy():
    for obj in (None, "abc", {1, 2, 3}, dict(a=5), [[1, 2]], 3.5, np.zeros((2, 3, 1))):
        assert loom.ndim(obj) == np.ndim(obj)  # type: ignore[arg-type]
    assert loom.ndim(loom.zeros((2, 3))) == 2 and np.ndim(loom.zeros((2, 3))) == 2
    for dts in ((np.int8,), (np.float32, np.float16), (np.float16,), (np.int64, np.float32), (np.complex64, np.float64)):
        want = np.common_type(*[np.zeros(1, d) for d in dts])
        assert loom.common_type(*[loom.zeros(1, d) for d in dts]) is want
        assert np.common_type(*[loom.zeros(1, d) for d in dts]) is want  # through __array_function__
    with pytest.raises(TypeError):
        loom.common_type(loom.zeros(1, bool))


def test_repeat_counts_must_match_the_axis():
    a, n = loom.arange(4), np.arange(4)
    with pytest.raises(ValueError):
        np.repeat(n, np.array([1, 2]), axis=0)
    with pytest.raises(ValueError, match="same length"):
        loom.repeat(a, loom.asarray([1, 2]), axis=0)
    for reps in ([2], [1, 0, 3, 2], 3):
        np.testing.assert_array_equal(loom.repeat(a, reps).get(), np.repeat(n, reps))
