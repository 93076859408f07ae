"""loom.ufunc against NumPy's ufuncs: attributes, __call__ with out=/where=/dtype=/casting=, the methods
reduce/accumulate/outer/at/reduceat, NumPy dispatch (np.add.reduce(loom array)), and the ufuncs added
with the class (deg2rad, logaddexp, divmod, modf, signbit, heaviside, ldexp, gcd, ...)."""
import numpy as np
import pytest

import loom
from conftest import check, sample, DTYPES, FLOATS


def test_ufunc_attributes_match_numpy():
    for name in ("add", "subtract", "sin", "negative", "divmod", "modf", "logaddexp", "maximum", "equal"):
        u, n = getattr(loom, name), getattr(np, name)
        assert isinstance(u, loom.ufunc)
        assert (u.nin, u.nout, u.nargs, u.identity) == (n.nin, n.nout, n.nargs, n.identity), name
        assert u.types and set(u.types) <= set(n.types)
        assert u.__name__ == n.__name__
        assert repr(u) == repr(n)
    assert loom.divide is loom.true_divide and loom.abs is loom.absolute and loom.conj is loom.conjugate
    assert loom.add.signature is None


def test_call_out_where_dtype_casting():
    a, b = sample((3, 4), "int8", 1), sample((3, 4), "int8", 2)
    # dtype= is the loop's dtype: int8 overflow does not happen in float64
    big = np.array([100, 120], np.int8)
    check(loom.add(loom.asarray(big), loom.asarray(big), dtype=np.float64), np.add(big, big, dtype=np.float64))
    # where= keeps out's values where the mask is false
    mask = a > 0
    out_np = np.full((3, 4), -7, np.int8)
    np.add(a, b, out=out_np, where=mask)
    out = loom.full((3, 4), -7, np.int8)
    r = loom.add(loom.asarray(a), loom.asarray(b), out=out, where=loom.asarray(mask))
    assert r is out
    check(out, out_np)
    # positional out, tuple out, unary dtype= (square of int8 in float64 does not wrap)
    o = loom.empty((3, 4), np.float64)
    loom.multiply(loom.asarray(a), 0.5, o)
    check(o, np.multiply(a, 0.5))
    o2 = loom.empty((3, 4), np.float64)
    loom.sqrt(loom.asarray(np.abs(a).astype(np.float64)), out=(o2,))
    check(o2, np.sqrt(np.abs(a).astype(np.float64)))
    check(loom.square(loom.asarray(big), dtype=np.float64), np.square(big, dtype=np.float64))
    with pytest.raises(TypeError):
        loom.add(loom.asarray(a), loom.asarray(b), out=loom.empty((3, 4), np.int8), dtype=np.float64)
    with pytest.raises(TypeError):
        loom.add(loom.asarray(np.ones(3)), 1, dtype=np.int8, casting="safe")
    with pytest.raises(TypeError):
        loom.add(loom.ones(3))
    with pytest.raises(TypeError):
        loom.add(loom.ones(3), 1, bogus=1)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or",
                                  "bitwise_xor", "subtract"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64"])
def test_reduce(name, dtype):
    if name in ("bitwise_xor",) and dtype.startswith("float"):
        return
    if name == "subtract" and dtype == "bool":
        return
    x = sample((3, 4, 5), dtype, 3)
    u, n = getattr(loom, name), getattr(np, name)
    for axis in (0, -1, (0, 2), None):
        try:
            want = n.reduce(x, axis=axis)
        except ValueError:  # subtract is not reorderable: NumPy refuses several axes, and so does loom
            with pytest.raises(ValueError):
                u.reduce(loom.asarray(x), axis=axis)
            continue
        check(u.reduce(loom.asarray(x), axis=axis), want)
    check(u.reduce(loom.asarray(x), axis=1, keepdims=True), n.reduce(x, axis=1, keepdims=True))


def test_reduce_initial_where_dtype_empty():
    x = sample((4, 6), "float64", 4)
    check(loom.add.reduce(loom.asarray(x), axis=1, initial=10.0), np.add.reduce(x, axis=1, initial=10.0))
    check(loom.maximum.reduce(loom.asarray(x), axis=0, initial=2.5), np.maximum.reduce(x, axis=0, initial=2.5))
    m = x > 0
    check(loom.add.reduce(loom.asarray(x), axis=1, where=loom.asarray(m)), np.add.reduce(x, axis=1, where=m))
    i8 = np.array([100, 100, 100], np.int8)
    check(loom.add.reduce(loom.asarray(i8), dtype=np.int64), np.add.reduce(i8, dtype=np.int64))
    e = np.zeros((0, 3))
    check(loom.add.reduce(loom.asarray(e), axis=0), np.add.reduce(e, axis=0))
    check(loom.maximum.reduce(loom.asarray(e), axis=0, initial=-1.0), np.maximum.reduce(e, axis=0, initial=-1.0))
    with pytest.raises(ValueError):
        loom.maximum.reduce(loom.asarray(e), axis=0)
    with pytest.raises(ValueError):
        loom.maximum.reduce(loom.asarray(x), where=loom.asarray(m))  # no identity, no initial
    with pytest.raises(ValueError):
        loom.sin.reduce(loom.asarray(x))
    nan = np.array([1.0, np.nan, 3.0])
    check(loom.maximum.reduce(loom.asarray(nan)), np.maximum.reduce(nan))
    check(loom.fmax.reduce(loom.asarray(nan)), np.fmax.reduce(nan))


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "float32", "float64", "bool"])
def test_accumulate_reduceat_outer(dtype):
    x = sample((3, 4), dtype, 5)
    for name in ("add", "multiply", "maximum"):
        u, n = getattr(loom, name), getattr(np, name)
        check(u.accumulate(loom.asarray(x), axis=1), n.accumulate(x, axis=1))
        check(u.accumulate(loom.asarray(x)), n.accumulate(x))
    idx = np.array([0, 2, 1, 3])
    check(loom.add.reduceat(loom.asarray(x), loom.asarray(idx), axis=1), np.add.reduceat(x, idx, axis=1))
    y = sample((2, 1, 5), dtype, 6)
    check(loom.add.outer(loom.asarray(x), loom.asarray(y)), np.add.outer(x, y))
    check(loom.add.outer(2, 3), np.add.outer(2, 3))
    check(loom.greater.outer(loom.asarray(x[0]), loom.asarray(x[1])), np.greater.outer(x[0], x[1]))


@pytest.mark.parametrize("name, dtype", [("add", "float64"), ("add", "int32"), ("subtract", "int64"),
                                         ("maximum", "float32"), ("minimum", "uint32"), ("bitwise_or", "int16"),
                                         ("multiply", "float64")])
def test_at_duplicate_indices_and_views(name, dtype):
    x = sample((20,), dtype, 7)
    idx = np.array([0, 3, 3, 19, 0, 0, 5])
    vals = sample((7,), dtype, 8)
    u, n = getattr(loom, name), getattr(np, name)
    a = loom.asarray(x)
    u.at(a, loom.asarray(idx), loom.asarray(vals))
    want = x.copy()
    n.at(want, idx, vals)
    check(a, want)
    # a strided view: the base sees the writes; a pending operand is computed first
    base = loom.asarray(x)
    v = base[::2]
    u.at(v, np.array([1, 1, 2]), loom.asarray(vals[:3]) * 1)
    want = x.copy()
    n.at(want[::2], np.array([1, 1, 2]), vals[:3])
    check(base, want)
    m = np.zeros(20, bool)
    m[[2, 4]] = True
    a = loom.asarray(x)
    loom.negative.at(a, loom.asarray(m))
    want = x.copy()
    np.negative.at(want, m)
    check(a, want)


def test_numpy_dispatches_ufunc_methods_to_loom():
    x = sample((3, 4), "float64", 9)
    a = loom.asarray(x)
    r = np.add.reduce(a, axis=1)
    assert isinstance(r, loom.ndarray)
    check(r, np.add.reduce(x, axis=1))
    r = np.multiply.outer(a[0], a[1])
    assert isinstance(r, loom.ndarray)
    check(r, np.multiply.outer(x[0], x[1]))
    check(np.add.accumulate(a, axis=0), np.add.accumulate(x, axis=0))
    o = loom.empty((3, 4))
    np.sin(a, out=o)
    check(o, np.sin(x))
    q, rem = np.divmod(a, 0.7)
    check(q, np.divmod(x, 0.7)[0])
    check(rem, np.divmod(x, 0.7)[1])


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -7.25, 1e300, -1e300, 1e-310, np.inf, -np.inf, np.nan, 710.0,
                    -745.0])


@pytest.mark.parametrize("dtype", FLOATS + ["int8", "int16", "int32", "uint8", "bool"])
def test_new_unary_ufuncs(dtype):
    x = SPECIAL.astype(dtype) if dtype in FLOATS else sample((9,), dtype, 10)
    with np.errstate(all="ignore"):
        for name in ("deg2rad", "rad2deg", "radians", "degrees", "signbit"):
            check(getattr(loom, name)(loom.asarray(x)), getattr(np, name)(x))
        if dtype != "bool":
            fl, it = loom.modf(loom.asarray(x))
            wf, wi = np.modf(x)
            check(fl, wf)
            check(it, wi)
            # signs of zeros
            assert np.array_equal(np.signbit(fl.get()), np.signbit(wf))


@pytest.mark.parametrize("dtype", FLOATS + ["int16", "int64"])
def test_new_binary_ufuncs(dtype):
    if dtype in FLOATS:
        a = np.repeat(SPECIAL, len(SPECIAL)).astype(dtype)
        b = np.tile(SPECIAL, len(SPECIAL)).astype(dtype)
    else:
        a, b = sample((50,), dtype, 11), sample((50,), dtype, 12)
    with np.errstate(all="ignore"):
        for name in ("logaddexp", "logaddexp2", "heaviside"):
            got, want = getattr(loom, name)(loom.asarray(a), loom.asarray(b)).get(), getattr(np, name)(a, b)
            assert got.dtype == want.dtype
            # the result's dtype sets the tolerance (int16 computes in float32: the device's log2 may round
            # the other way)
            rt = {"float16": 5e-3, "float32": 1e-5}.get(want.dtype.name, 1e-12)
            # atol: loom's float64 log1p gives 0 for the smallest subnormal (5e-324), NumPy 5e-324
            np.testing.assert_allclose(got, want, rtol=rt, atol=1e-320, equal_nan=True)
        if dtype not in FLOATS:
            bz = np.where(b == 0, 3, b).astype(dtype)
            for got, want in zip(loom.divmod(loom.asarray(a), loom.asarray(bz)), np.divmod(a, bz)):
                check(got, want)
            check(loom.gcd(loom.asarray(a), loom.asarray(b)), np.gcd(a, b))
            check(loom.lcm(loom.asarray(a), loom.asarray(bz)), np.lcm(a, bz))
        else:
            for got, want in zip(loom.divmod(loom.asarray(a), loom.asarray(b)), np.divmod(a, b)):
                check(got, want)
            n = np.array([0, 1, -1, 10, -10, 1000, -1060, 2000, -5000, 2**31 - 1, -2**31, 7, -3, 40], np.int32)
            x = SPECIAL.astype(dtype)
            check(loom.ldexp(loom.asarray(x), loom.asarray(n)), np.ldexp(x, n))
            check(loom.nextafter(loom.asarray(a), loom.asarray(b)), np.nextafter(a, b))


def test_fused_trace_uses_ufuncs():
    @loom.fuse()
    def f(x, y):
        return loom.logaddexp(x, y) + loom.deg2rad(x)

    x, y = sample((8,), "float64", 13), sample((8,), "float64", 14)
    check(f(loom.asarray(x), loom.asarray(y)), np.logaddexp(x, y) + np.deg2rad(x))


def test_dtype_selects_numpys_loop():
    """dtype= / signature= pick NumPy's loop (numpy.ufunc.resolve_dtypes): no loop with that output is a
    TypeError (comparisons and logical ops only have bool outputs), operands are cast to the loop's inputs
    (not to dtype: equal(int8, int16, dtype=bool) compares integers), Python ints are converted to the loop's
    dtype before the casting rule is checked (OverflowError first, as NumPy)."""
    i8, i16 = np.array([1, 2, -3], np.int8), np.array([1, 5, -3], np.int16)
    f16 = np.array([1.5, -2.0, 0.25], np.float16)
    la, lb, lf = loom.asarray(i8), loom.asarray(i16), loom.asarray(f16)
    for call in (lambda xp, x, y, f: xp.equal(x, y, dtype=bool), lambda xp, x, y, f: xp.add(x, y, dtype=np.float32),
                 lambda xp, x, y, f: xp.add(x, y, dtype=np.int8), lambda xp, x, y, f: xp.sqrt(x, dtype=np.float32),
                 lambda xp, x, y, f: xp.add(x, 2.5, dtype=np.float32), lambda xp, x, y, f: xp.add(3, 4, dtype=np.int8),
                 lambda xp, x, y, f: xp.divmod(x, y, dtype=np.float32)[1],
                 lambda xp, x, y, f: xp.ldexp(f, y, dtype=np.float64), lambda xp, x, y, f: xp.add(x, y, signature="dd->d"),
                 lambda xp, x, y, f: xp.less(x, 2**70, dtype=bool), lambda xp, x, y, f: xp.logical_and(x, 300, dtype=bool),
                 lambda xp, x, y, f: xp.arctan2(-2**63 - 1, y), lambda xp, x, y, f: xp.hypot(y, 2**70)):
        check(call(loom, la, lb, lf), np.asarray(call(np, i8, i16, f16)))
    for call, exc in ((lambda xp, x, y, f: xp.equal(x, y, dtype=np.float32), TypeError),
                      (lambda xp, x, y, f: xp.logical_or(x, y, dtype=np.int64), TypeError),
                      (lambda xp, x, y, f: xp.hypot(y, y, dtype=np.int16), TypeError),
                      (lambda xp, x, y, f: xp.sqrt(x, dtype=np.int64), TypeError),
                      (lambda xp, x, y, f: xp.bitwise_and(f, 7, dtype=np.uint32), TypeError),
                      (lambda xp, x, y, f: xp.bitwise_and(f, 2**63 - 1, dtype=np.uint32), OverflowError),
                      (lambda xp, x, y, f: xp.fmax(x, 2**63, dtype=bool), OverflowError),
                      (lambda xp, x, y, f: xp.add(x, 300, dtype=np.int8), OverflowError)):
        with pytest.raises(exc):
            call(np, i8, i16, f16)
        with pytest.raises(exc):
            call(loom, la, lb, lf)
