"""The NumPy functions added for CuPy's suite, against NumPy: NaN-ignoring reductions, average, ptp,
order statistics; take/choose/select/diagonal/compress/extract/put/place/putmask/fill_diagonal;
diff, nan_to_num, outer, kron, vander, trapezoid, sinc, convolve, interp; logspace, meshgrid,
mgrid/ogrid, indices, tri/tril/triu/diag; around with negative decimals; linalg det/slogdet/cond/
matrix_rank; NumPy's type helpers re-exported. Edge cases: NaN-only slices, empty, 0-d,
non-contiguous, integer dtypes."""
import numpy as np
import pytest

import loom
from conftest import check, may_share_memory, sample

NAN = np.array([[1.0, np.nan, 3.0, -2.0], [np.nan, np.nan, np.nan, np.nan], [0.5, 2.0, np.inf, -np.inf]])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "complex128"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_nan_reductions(dtype, axis):
    x = NAN.astype(dtype) if dtype != "int32" else sample((3, 4), dtype, 1)
    if dtype == "complex128":
        x = x + 1j * x[::-1]
    a = loom.asarray(x)
    with np.errstate(all="ignore"), _quiet():
        for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd"):
            check(getattr(loom, name)(a, axis=axis), getattr(np, name)(x, axis=axis))
        check(loom.nanvar(a, axis=axis, ddof=1), np.nanvar(x, axis=axis, ddof=1))
        check(loom.nanmean(a, axis=axis, keepdims=True), np.nanmean(x, axis=axis, keepdims=True))
        for name in ("nanmax", "nanmin"):  # complex: NumPy's fmax / fmin folds (a NaN part loses)
            check(getattr(loom, name)(a, axis=axis), getattr(np, name)(x, axis=axis))
            check(getattr(loom, name)(a, axis=axis, keepdims=True), getattr(np, name)(x, axis=axis, keepdims=True))
        if dtype == "complex128":  # NaN in one part only, and an all-NaN row
            y = x.copy()
            y[0, 1], y[1, :] = complex(0, np.nan), complex(np.nan, 1)
            for name in ("nanmax", "nanmin"):
                check(getattr(loom, name)(loom.asarray(y), axis=axis), getattr(np, name)(y, axis=axis))


class _quiet:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


def test_nanarg_and_order_statistics():
    x = NAN[[0, 2]]
    a = loom.asarray(x)
    for axis in (None, 0, 1):
        check(loom.nanargmax(a, axis=axis), np.nanargmax(x, axis=axis))
        check(loom.nanargmin(a, axis=axis), np.nanargmin(x, axis=axis))
    with pytest.raises(ValueError, match="All-NaN"):
        loom.nanargmax(loom.asarray(NAN), axis=1)
    y = sample((5, 6), "float64", 2)
    b = loom.asarray(y)
    with _quiet():
        for axis in (None, 0, 1):
            check(loom.median(b, axis=axis), np.median(y, axis=axis))
            check(loom.percentile(b, [10, 90], axis=axis), np.percentile(y, [10, 90], axis=axis))
            check(loom.quantile(b, 0.3, axis=axis), np.quantile(y, 0.3, axis=axis))
            check(loom.nanmedian(loom.asarray(NAN), axis=axis), np.nanmedian(NAN, axis=axis))
    r = loom.median(b)
    assert isinstance(r, loom.ndarray) and r.ndim == 0  # CuPy returns 0-d arrays, not scalars
    h, e = loom.histogram(b, bins=4)
    hw, ew = np.histogram(y, bins=4)
    check(h, hw)
    check(e, ew)
    check(loom.bincount(loom.asarray(np.array([0, 3, 3, 1]))), np.bincount([0, 3, 3, 1]))


@pytest.mark.parametrize("dtype", ["int16", "float32", "float64"])
def test_average_and_ptp(dtype):
    x = sample((3, 4), dtype, 3)
    a = loom.asarray(x)
    w1 = np.array([1.0, 2.0, 0.5, 3.0])
    for axis in (None, 0, 1):
        check(loom.average(a, axis=axis), np.average(x, axis=axis))
        check(loom.ptp(a, axis=axis), np.ptp(x, axis=axis))
    check(loom.average(a, axis=1, weights=loom.asarray(w1)), np.average(x, axis=1, weights=w1))
    w2 = sample((3, 4), "float64", 4, positive=True)
    avg, scl = loom.average(a, axis=0, weights=loom.asarray(w2), returned=True)
    wa, ws = np.average(x, axis=0, weights=w2, returned=True)
    check(avg, wa)
    check(scl, ws)
    avg, scl = loom.average(a, returned=True)
    wa, ws = np.average(x, returned=True)
    check(avg, wa)
    check(scl, ws)
    with pytest.raises(ZeroDivisionError):
        loom.average(a, axis=1, weights=loom.zeros(4))
    with pytest.raises(TypeError):
        loom.average(a, weights=loom.asarray(w1))


def test_selection_on_the_device_and_host():
    x = np.arange(24.0).reshape(2, 3, 4)
    a = loom.asarray(x)
    d = a.diagonal(1, 1, 2)
    check(d, x.diagonal(1, 1, 2))
    assert may_share_memory(d, a)
    check(a.trace(), np.trace(x))
    check(loom.take(a, [0, -1, 5]), np.take(x, [0, -1, 5]))
    check(a.take(loom.asarray(np.array([[2, 0]])), axis=2), x.take([[2, 0]], axis=2))
    check(loom.take(a, [7, -9], mode="wrap", axis=1), np.take(x, [7, -9], mode="wrap", axis=1))
    with pytest.raises(IndexError):
        loom.take(a, [3], axis=1)
    idx = np.array([[0, 1, 2], [2, 1, 0]])
    ch = [np.arange(3) * 10, np.full((2, 3), -1), 7]
    check(loom.choose(loom.asarray(idx), [loom.asarray(ch[0]), loom.asarray(ch[1]), 7]), np.choose(idx, ch))  # type: ignore[arg-type]  # NumPy's stubs: mixed operand types
    check(loom.choose(loom.asarray(idx + 4), ch, mode="wrap"), np.choose(idx + 4, ch, mode="wrap"))  # type: ignore[call-overload]  # NumPy's stubs: mixed operand types
    check(loom.choose(loom.asarray(idx - 1), ch, mode="clip"), np.choose(idx - 1, ch, mode="clip"))  # type: ignore[call-overload]  # NumPy's stubs: mixed operand types
    with pytest.raises(ValueError):
        loom.choose(loom.asarray(idx + 1), ch)
    c = [x < 5, x > 20]
    check(loom.select([loom.asarray(v) for v in c], [loom.asarray(x), 2 * loom.asarray(x)], -1.5),
          np.select(c, [x, 2 * x], -1.5))
    with pytest.raises(TypeError):
        loom.select([loom.asarray(x)], [loom.asarray(x)])
    check(loom.compress([True, False, True], a, axis=1), np.compress([True, False, True], x, axis=1))
    check(loom.extract(loom.asarray(x > 10), a), np.extract(x > 10, x))


def test_placing_writes_in_place():
    x = np.arange(12.0).reshape(3, 4)
    a = loom.asarray(x)
    view = a[:, 1:]
    loom.put(a, [0, 5, 11], [-1.0, -2.0])
    want = x.copy()
    np.put(want, [0, 5, 11], [-1.0, -2.0])
    check(a, want)
    check(view, want[:, 1:])
    m = want > 6
    loom.place(a, loom.asarray(m), [100.0, 200.0])
    np.place(want, m, [100.0, 200.0])
    check(a, want)
    b = loom.asarray(x)
    bw = x.copy()
    loom.putmask(b, loom.asarray(x > 4), loom.asarray(-x))  # same shape: on the device
    np.putmask(bw, x > 4, -x)
    check(b, bw)
    loom.putmask(b, loom.asarray(x < 3), loom.asarray(np.array([7.0, 8.0])))  # cycled values
    np.putmask(bw, x < 3, np.array([7.0, 8.0]))
    check(b, bw)
    f = loom.zeros((5, 3))
    fw = np.zeros((5, 3))
    loom.fill_diagonal(f, 4.0, wrap=True)
    np.fill_diagonal(fw, 4.0, wrap=True)
    check(f, fw)
    for got, want in zip(loom.diag_indices(3, 3), np.diag_indices(3, 3)):
        check(got, want)
    for got, want in zip(loom.tril_indices(4, 1), np.tril_indices(4, 1)):  # type: ignore[assignment]  # NumPy's stubs: mixed operand types
        check(got, want)
    check(loom.isin(loom.arange(6), loom.asarray(np.array([1, 4, 9]))), np.isin(np.arange(6), [1, 4, 9]))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "float32"])
def test_diff_and_friends(dtype):
    x = sample((4, 6), dtype, 5)
    a = loom.asarray(x)
    for n, axis in ((1, -1), (2, 0), (3, 1), (0, 1)):
        check(loom.diff(a, n=n, axis=axis), np.diff(x, n=n, axis=axis))
    check(loom.diff(a[:, ::2], axis=1), np.diff(x[:, ::2], axis=1))
    if dtype != "bool":
        check(loom.diff(a, prepend=0, append=loom.asarray(x[:, :1])), np.diff(x, prepend=0, append=x[:, :1]))
        tb, te = np.array([9], dtype), np.array([1, 2], dtype)
        check(loom.ediff1d(a, to_begin=loom.asarray(tb), to_end=te), np.ediff1d(x, to_begin=tb, to_end=te))
        if dtype == "uint8":  # an int64 to_begin does not cast to uint8 under same_kind: NumPy refuses
            with pytest.raises(TypeError):
                loom.ediff1d(a, to_begin=[9])
    with pytest.raises(ValueError):
        loom.diff(loom.asarray(np.float64(1.0)))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "int32"])
def test_nan_to_num(dtype):
    base = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0, 3.0])
    x = base.astype(dtype) if dtype != "int32" else np.arange(6, dtype=dtype)
    if dtype == "complex64":
        x = (base + 1j * base[::-1]).astype(dtype)
    check(loom.nan_to_num(loom.asarray(x)), np.nan_to_num(x))
    check(loom.nan_to_num(loom.asarray(x), nan=-1, posinf=5, neginf=-5), np.nan_to_num(x, nan=-1, posinf=5, neginf=-5))
    a = loom.asarray(x)
    r = loom.nan_to_num(a, copy=False)
    assert r is a
    check(a, np.nan_to_num(x))


def test_products_and_small_helpers():
    x, y = sample((3,), "float64", 6), sample((2, 2), "int32", 7)
    check(loom.outer(loom.asarray(x), loom.asarray(y)), np.outer(x, y))
    check(loom.kron(loom.asarray(y), loom.asarray(np.arange(6).reshape(2, 3))), np.kron(y, np.arange(6).reshape(2, 3)))
    check(loom.kron(loom.asarray(x), loom.asarray(y)), np.kron(x, y))
    v = np.array([2, 3, -1, 5])
    check(loom.vander(loom.asarray(v)), np.vander(v))
    check(loom.vander(loom.asarray(v.astype(float)), 3, increasing=True), np.vander(v.astype(float), 3, True))
    check(loom.vander(loom.asarray(v), 0), np.vander(v, 0))
    yy = sample((3, 5), "float64", 8)
    check(loom.trapezoid(loom.asarray(yy)), np.trapezoid(yy))
    check(loom.trapezoid(loom.asarray(yy), x=loom.asarray(np.array([0.0, 1, 3, 4, 7])), axis=1),
          np.trapezoid(yy, x=[0.0, 1, 3, 4, 7], axis=1))
    s = np.array([0.0, 0.5, -1.5, 2.0, 1e-9])
    check(loom.sinc(loom.asarray(s)), np.sinc(s))
    f = np.array([-2.5, 2.5, -0.0, np.inf, np.nan])
    check(loom.fix(loom.asarray(f)), np.fix(f))
    check(loom.isposinf(loom.asarray(f)), np.isposinf(f))
    check(loom.isneginf(loom.asarray(-f)), np.isneginf(-f))
    check(loom.convolve(loom.asarray(x), loom.asarray(np.array([1.0, -1.0])), "same"), np.convolve(x, [1.0, -1.0], "same"))
    check(loom.correlate(loom.asarray(x), loom.asarray(x), "full"), np.correlate(x, x, "full"))
    xp, fp = np.array([0.0, 1.0, 3.0]), np.array([5.0, -1.0, 2.0])
    q = np.array([-1.0, 0.5, 2.0, 4.0])
    check(loom.interp(loom.asarray(q), loom.asarray(xp), loom.asarray(fp)), np.interp(q, xp, fp))
    p = np.array([0.0, 3.0, 6.5, -3.0, 0.2])
    check(loom.unwrap(loom.asarray(p)), np.unwrap(p))


def test_around_negative_decimals():
    i = np.array([15, 25, 35, -15, 1234, -1250], np.int32)
    for d in (-1, -2, 0, 2):
        check(loom.around(loom.asarray(i), d), np.around(i, d))
    f = np.array([1234.5, -1250.0, 0.125, 2.675, 1e300])
    for d in (-3, -1, 0, 1, 2):
        check(loom.around(loom.asarray(f), d), np.around(f, d))


def test_ranges_grids_matrices():
    check(loom.logspace(0, 3, 4), np.logspace(0, 3, 4))
    check(loom.logspace(1, 2, 5, base=2.0, endpoint=False), np.logspace(1, 2, 5, base=2.0, endpoint=False))
    check(loom.logspace(0, 2, 3, dtype=np.float32), np.logspace(0, 2, 3, dtype=np.float32))
    check(loom.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4))
    xs, ys = np.arange(3), np.arange(4.0)
    for kw in ({}, {"indexing": "ij"}, {"sparse": True}, {"copy": False}):
        got, want = loom.meshgrid(loom.asarray(xs), loom.asarray(ys), **kw), np.meshgrid(xs, ys, **kw)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w)
    check(loom.mgrid[0:3, 1:5:2], np.mgrid[0:3, 1:5:2])
    check(loom.mgrid[0:1:5j], np.mgrid[0:1:5j])
    for g, w in zip(loom.ogrid[0:3, 0:2], np.ogrid[0:3, 0:2]):
        check(g, w)
    check(loom.indices((2, 3)), np.indices((2, 3)))
    for g, w in zip(loom.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True)):
        check(g, w)
    m = sample((4, 5), "int16", 9)
    for k in (-2, 0, 1, 7):
        check(loom.tri(4, 5, k), np.tri(4, 5, k))
        check(loom.tril(loom.asarray(m), k), np.tril(m, k))
        check(loom.triu(loom.asarray(m), k), np.triu(m, k))
    check(loom.tril(loom.asarray(np.arange(24).reshape(2, 3, 4))), np.tril(np.arange(24).reshape(2, 3, 4)))
    for k in (-1, 0, 2):
        check(loom.diag(loom.asarray(m), k), np.diag(m, k))
        check(loom.diag(loom.arange(3), k), np.diag(np.arange(3), k))
    check(loom.diagflat(loom.asarray(np.array([[1, 2], [3, 4]])), -1), np.diagflat([[1, 2], [3, 4]], -1))
    check(loom.diag(loom.zeros(0)), np.diag(np.zeros(0)))


def test_linalg_host_functions():
    m = sample((3, 3), "float64", 10) + 3 * np.eye(3)
    a = loom.asarray(m)
    check(loom.linalg.det(a), np.linalg.det(m))
    s, ld = loom.linalg.slogdet(a)
    ws, wld = np.linalg.slogdet(m)
    check(s, ws)
    check(ld, wld)
    check(loom.linalg.cond(a), np.linalg.cond(m))
    check(loom.linalg.matrix_rank(loom.asarray(np.ones((3, 3)))), np.linalg.matrix_rank(np.ones((3, 3))))
    with pytest.raises(np.linalg.LinAlgError):
        loom.linalg.det(loom.ones((2, 3)))


def test_numpy_type_helpers():
    assert loom.iinfo(loom.int8).max == 127
    assert loom.finfo(loom.float32).eps == np.finfo(np.float32).eps
    assert loom.isscalar(3.0) and not loom.isscalar(loom.ones(2))
    assert loom.issubdtype(loom.ones(2).dtype, loom.floating)
    assert loom.ones(2, loom.intp).dtype == np.intp


def test_small_api_fixes_against_numpy():
    x = np.arange(12.0).reshape(3, 4)
    a = loom.asarray(x)
    # builtin divmod on arrays
    for got, want in zip(divmod(a, 5.0), divmod(x, 5.0)):
        check(got, want)
    for got, want in zip(divmod(7, loom.asarray(np.array([2, -3]))), divmod(7, np.array([2, -3]))):
        check(got, want)
    # reshape(copy=)
    r = loom.reshape(a, (4, 3), copy=True)
    check(r, x.reshape(4, 3))
    assert not may_share_memory(r, a)
    assert may_share_memory(a.reshape(2, 6, copy=False), a)
    with pytest.raises(ValueError):
        loom.reshape(a.T, 12, copy=False)
    # flags are read-only; fnc / forc as NumPy's
    for arr, nparr in ((a, x), (loom.asfortranarray(a), np.asfortranarray(x)), (a[:, ::2], x[:, ::2])):
        assert (arr.flags.fnc, arr.flags.forc) == (nparr.flags.fnc, nparr.flags.forc)
    with pytest.raises(AttributeError):
        a.flags.c_contiguous = False
    # copyto with a scalar mask: its truth value, as NumPy
    for w in (3.2, 0, -4, 1 + 1j):
        d, dn = loom.zeros(3), np.zeros(3)
        loom.copyto(d, loom.ones(3), where=w)
        np.copyto(dn, np.ones(3), where=w)
        check(d, dn)
    # joins with dtype= / casting=
    check(loom.stack([a, a], dtype=np.float32), np.stack([x, x], dtype=np.float32))
    check(loom.concatenate([a, a], axis=1, dtype=np.int64, casting="unsafe"),
          np.concatenate([x, x], axis=1, dtype=np.int64, casting="unsafe"))
    with pytest.raises(TypeError):
        loom.vstack([a, a], dtype=np.int64)  # same_kind refuses float -> int, as NumPy
    # reductions cast into out= whatever its dtype (NumPy: unsafe)
    o = loom.zeros((), bool)
    loom.sum(loom.arange(4), out=o)
    on = np.zeros((), bool)
    np.sum(np.arange(4), out=on)
    check(o, on)
    # round of bool: NumPy's float16 rint loop; other decimals refused
    b = np.array([True, False])
    check(loom.asarray(b).round(), b.round())
    with pytest.raises(TypeError):
        loom.asarray(b).round(1)
    # a.flat reads in C order and writes a (also through a transposed view)
    y = np.arange(24).reshape(2, 3, 4)
    c = loom.asarray(y)
    check(c.flat[5:17:3], y.flat[5:17:3])
    t, tn = c.T, y.T.copy()
    t.flat[[0, 4, 9]] = -1
    tn.flat[[0, 4, 9]] = -1
    check(c, tn.T)
    assert len(c.flat) == 24
    check(loom.size(c, 1), np.size(y, 1))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_norm_of_complex(dtype):
    x = ((np.arange(8).reshape(2, 2, 2) - 3) + 1j * np.arange(8).reshape(2, 2, 2)[::-1]).astype(dtype)
    for ord_, axis in ((None, None), (-1, (0, 1)), (np.inf, 0), (2, 2), (1, (1, 2)), (0, 0), (-np.inf, 2),
                       ("fro", (0, 1)), (3, 1)):  # the SVD norms (2, 'nuc') of complex matrices: linalg's own tests
        check(loom.linalg.norm(loom.asarray(x), ord_, axis), np.linalg.norm(x, ord_, axis), rtol=2e-5)  # type: ignore[arg-type]  # NumPy's stubs: mixed operand types


def test_reductions_of_numpy_arrays_are_numpy_methods_as_in_cupy():
    # CuPy's reduction functions call the argument's method: cupy.sum(numpy_array) is numpy_array.sum()
    x = np.arange(6.0).reshape(2, 3)
    for name, kw in (("sum", {"axis": 1}), ("prod", {}), ("mean", {"axis": 0}), ("max", {}), ("amin", {"axis": 1}),
                     ("argmax", {"axis": 1}), ("var", {"ddof": 1}), ("std", {}), ("any", {}), ("all", {"axis": 0})):
        got = getattr(loom, name)(x, **kw)
        want = getattr(x, {"amin": "min"}.get(name, name))(**kw)
        assert type(got) is type(want), name
        np.testing.assert_array_equal(got, want)
    assert isinstance(loom.sum(loom.asarray(x)), loom.ndarray)


def test_python_ints_beyond_int64_with_float_arrays():
    # NumPy converts the int to the array's float dtype: 2**63 is inf in float16
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for dt in (np.float16, np.float32, np.float64):
            n = np.array([-1.0, 0.0, np.inf, 6e4]).astype(dt)
            a = loom.asarray(n)
            for s in (2**63, 2**64 - 1, -2**70):
                for got, want in ((a == s, n == s), (s > a, s > n), (a + s, n + s), (a * s, n * s)):  # type: ignore[operator]  # NumPy's stubs: mixed operand types
                    check(got, want)
