"""CuPy behaviours that CuPy's own test suite (tests/cupy) relies on, checked against NumPy here so that
a regression shows in the fast Python tests too: @fuse in-place updates, bit counting and packing, ..."""
import numpy as np
import pytest

import loom as cp


# ---- @fuse: in-place updates of arguments reach the caller (CuPy's fusion semantics) ----------------
def test_fuse_iadd_writes_caller_array():
    @cp.fuse()
    def f(x, y):
        x += y

    x = cp.arange(6, dtype=cp.float32)
    assert f(x, cp.ones(6, dtype=cp.float32)) is None
    assert f(x, 2.0) is None  # a second signature (scalar folded in)
    np.testing.assert_array_equal(x.get(), np.arange(6, dtype=np.float32) + 3)
    f(x, cp.ones(6, dtype=cp.float32))  # the cached entry writes too
    np.testing.assert_array_equal(x.get(), np.arange(6, dtype=np.float32) + 4)


def test_fuse_inplace_casts_and_broadcasts_like_numpy():
    @cp.fuse()
    def f(x, y):
        x *= y
        return x + 1

    x, y = np.arange(12, dtype=np.int16).reshape(3, 4), np.array([1, -2, 3, 300], dtype=np.int16)
    lx = cp.asarray(x)
    r = f(lx, cp.asarray(y))
    x *= y  # int16 wraps around as NumPy does
    np.testing.assert_array_equal(lx.get(), x)
    np.testing.assert_array_equal(r.get(), x + 1)


def test_fuse_inplace_numpy_arguments_and_strided_views():
    @cp.fuse()
    def f(x, y):
        x -= y

    x = np.arange(10.0)
    f(x, np.ones(10))
    np.testing.assert_array_equal(x, np.arange(10.0) - 1)
    base = cp.zeros((4, 6))
    view = base[:, ::2]  # non-contiguous destination
    f(view, cp.ones((4, 3)))
    expect = np.zeros((4, 6))
    expect[:, ::2] = -1
    np.testing.assert_array_equal(base.get(), expect)


def test_fuse_out_argument_and_setitem_reach_caller():
    @cp.fuse()
    def f(x, y):
        cp.add(x, y, out=x)
        return x * 2

    @cp.fuse()
    def g(x, y):
        y[...] = x
        return y

    @cp.fuse()
    def h(x, y):
        y[:] = 7
        return x

    x = cp.arange(4.0)
    np.testing.assert_array_equal(f(x, 1.0).get(), (np.arange(4.0) + 1) * 2)
    np.testing.assert_array_equal(x.get(), np.arange(4.0) + 1)
    a, b = cp.arange(12).reshape(3, 4), cp.zeros((3, 4), dtype=cp.int8)
    np.testing.assert_array_equal(g(a, b).get(), np.arange(12).reshape(3, 4))
    assert b.dtype == np.int8
    np.testing.assert_array_equal(b.get(), np.arange(12, dtype=np.int8).reshape(3, 4))
    c = cp.zeros(5)
    h(cp.ones(5), c)
    np.testing.assert_array_equal(c.get(), np.full(5, 7.0))


def test_fuse_inplace_errors():
    @cp.fuse()
    def f(x, y):
        x += y

    ro = np.arange(3.0)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        f(ro, np.ones(3))
    np.testing.assert_array_equal(ro, np.arange(3.0))  # untouched

    @cp.fuse()
    def part(x):
        x[1:] = 0

    with pytest.raises(TypeError, match="part of a traced value"):
        part(cp.arange(3))
    with pytest.raises(ValueError):  # NumPy: non-broadcastable output operand
        f(cp.zeros(3), cp.ones((2, 3)))


def test_fuse_inplace_keeps_pending_values_consistent():
    @cp.fuse()
    def f(x):
        x += 1

    x = cp.arange(3.0)
    before = x * 10  # pending: reads x's memory
    f(x)
    np.testing.assert_array_equal(before.get(), np.arange(3.0) * 10)
    np.testing.assert_array_equal(x.get(), np.arange(3.0) + 1)


# ---- bit counting and packing (CuPy's cupy/_binary) ---------------------------------------------------
@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64])
def test_bitwise_count_matches_numpy(dt):
    info = np.iinfo(dt)
    vals = [0, 1, info.max, info.min, info.max - 1, info.max // 2] + ([-1, info.min + 1, -77] if info.min else [])
    a = np.array(vals, dtype=dt)
    r = cp.bitwise_count(cp.asarray(a)).get()
    assert r.dtype == np.uint8
    np.testing.assert_array_equal(r, np.bitwise_count(a))
    with pytest.raises(TypeError):
        cp.bitwise_count(cp.ones(2))


@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits_match_numpy(bitorder):
    for data in ([0], [1, 0, 1, 1, 0, 1, 1, 1, 1], np.arange(24).reshape(2, 3, 4) % 3, []):
        for axis in (None, 0, -1):
            a = np.array(data, dtype=np.int32)
            e = np.packbits(a, axis=axis, bitorder=bitorder)
            r = cp.packbits(cp.asarray(a), axis=axis, bitorder=bitorder).get()
            assert r.dtype == e.dtype and r.shape == e.shape
            np.testing.assert_array_equal(r, e)
    b = np.array([[100, 200, 123], [0, 255, 7]], dtype=np.uint8)
    for axis in (None, 0, 1):
        for count in (None, 3, -2, 40):
            e = np.unpackbits(b, axis=axis, count=count, bitorder=bitorder)
            r = cp.unpackbits(cp.asarray(b), axis=axis, count=count, bitorder=bitorder).get()
            assert r.dtype == e.dtype and r.shape == e.shape
            np.testing.assert_array_equal(r, e)
    with pytest.raises(TypeError):
        cp.packbits(cp.ones(3))
    with pytest.raises(TypeError):
        cp.unpackbits(cp.arange(3))
    with pytest.raises(ValueError):
        cp.packbits(cp.arange(3), bitorder="r")


# ---- reductions of empty arrays, window functions, float loops ------------------------------------------
def test_any_all_of_empty_arrays_are_the_identities():
    for shape, axis in (((0,), None), ((0, 3, 4), None), ((0, 3, 4), 0), ((0, 3, 4), (0, 1)), ((2, 0), 1)):
        x = np.zeros(shape)
        for f in ("all", "any"):
            for keepdims in (False, True):
                e = getattr(np, f)(x, axis=axis, keepdims=keepdims)
                r = getattr(cp, f)(cp.asarray(x), axis=axis, keepdims=keepdims)
                np.testing.assert_array_equal(r.get(), e)


@pytest.mark.parametrize("m", [0, 1, 2, 5, 6, 31])
def test_window_functions_match_numpy(m):
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        r, e = getattr(cp, name)(m).get(), getattr(np, name)(m)
        assert r.dtype == e.dtype
        np.testing.assert_allclose(r, e, rtol=1e-12, atol=1e-15)
    for beta in (0.0, 5.0, -3.4):
        np.testing.assert_allclose(cp.kaiser(m, beta).get(), np.kaiser(m, beta), rtol=1e-12, atol=1e-15)


def test_float_loop_dtypes_and_sinc_at_zero():
    x = np.array([-2.0, 0.0, 3.0, np.nan, np.inf, -np.inf])
    for d1 in (np.int8, np.uint8, np.float16, np.float32, np.bool_):
        for d2 in (np.int8, np.int64, np.float16, np.float32):
            with np.errstate(all="ignore"):
                a, h = x.astype(d1), np.array([10], dtype=d2)
                e = np.heaviside(a, h)
            r = cp.heaviside(cp.asarray(a), cp.asarray(h)).get()
            assert r.dtype == e.dtype, (d1, d2)
            np.testing.assert_array_equal(r, e)
    for dt in (np.float16, np.float32, np.float64):
        v: np.ndarray = np.array([0.0, 0.5, -2.25], dtype=dt)
        np.testing.assert_allclose(cp.sinc(cp.asarray(v)).get(), np.sinc(v), rtol=2e-3)  # type: ignore[type-var,arg-type]


def test_nan_to_num_with_array_replacements():
    x = np.array([[np.nan, 1.0, np.inf], [-np.inf, np.nan, 2.0]])
    for kw in ({"nan": np.array([7.0, 8.0, 9.0])}, {"posinf": np.array([[5.0], [6.0]])}, {"neginf": np.float32(-3)}):
        np.testing.assert_array_equal(cp.nan_to_num(cp.asarray(x), **kw).get(), np.nan_to_num(x, **kw))


# ---- splitting, set operations, r_/c_, require ------------------------------------------------------------
def test_split_family_and_set_operations_match_numpy():
    a = np.arange(33).reshape(3, 11)
    for args in ((4, 1), (4, -1), ([2, 4, 9], 1), ([-9, 4, -2], 1), ([], 0), ([3], 0)):
        e, r = np.array_split(a, *args), cp.array_split(cp.asarray(a), *args)
        assert len(e) == len(r)
        for x, y in zip(r, e):
            np.testing.assert_array_equal(x.get(), y)
    with pytest.raises(ValueError):
        cp.split(cp.asarray(a), 4, 1)
    p, q = np.array([5, 1, 3, 3, 9, 1]), np.array([3, 1, 2, 8, 8])
    lp, lq = cp.asarray(p), cp.asarray(q)
    for name in ("union1d", "setdiff1d", "setxor1d", "intersect1d"):
        np.testing.assert_array_equal(getattr(cp, name)(lp, lq).get(), getattr(np, name)(p, q))
    for x, y in zip(cp.intersect1d(lp, lq, return_indices=True), np.intersect1d(p, q, return_indices=True)):
        np.testing.assert_array_equal(x.get(), y)
    assert cp.array_equiv(cp.asarray([1, 2]), cp.asarray([[1, 2], [1, 2]])) is True
    assert cp.array_equiv(cp.asarray([1, 2]), cp.asarray([1, 2, 3])) is False
    np.testing.assert_array_equal(cp.r_[cp.asarray(p), 0, 0].get(), np.r_[p, 0, 0])
    np.testing.assert_array_equal(cp.c_[cp.arange(3), cp.arange(3)].get(), np.c_[np.arange(3), np.arange(3)])
    with pytest.raises(NotImplementedError):
        cp.r_[0:1:5j]
    f = cp.require(cp.arange(6).reshape(2, 3), requirements="F")
    assert f.flags.f_contiguous and not f.flags.c_contiguous
    with pytest.raises(ValueError):
        cp.require(f, requirements=["C", "F"])


def test_poly1d_and_scan_methods_match_numpy():
    c = np.array([0.0, 0.0, 1.0, 2.0, 3.0])
    p, q = cp.poly1d(cp.asarray(c)), np.poly1d(c)
    assert p.order == q.order and repr(p) == repr(q) and str(p) == str(q)
    x = np.arange(4.0)
    np.testing.assert_allclose(p(cp.asarray(x)).get(), q(x))
    for r, e in ((p * p, q * q), (p + 1, q + 1), (p - p, q - q), (-p, -q), (p ** 3, q ** 3), (p.deriv(), q.deriv()),
                 (p.integ(), q.integ())):
        np.testing.assert_allclose(r.coeffs.get(), e.coeffs)
    assert p.get() == q
    p[6] = 7
    q[6] = 7
    np.testing.assert_array_equal(p.coeffs.get(), q.coeffs)
    np.testing.assert_allclose(cp.poly1d([1.0, 2.0], r=True).coeffs.get(), np.poly1d([1.0, 2.0], r=True).coeffs)
    a = np.arange(1, 7).reshape(2, 3)
    la = cp.asarray(a)
    np.testing.assert_array_equal(la.cumsum(1).get(), a.cumsum(1))
    np.testing.assert_array_equal(la.cumprod().get(), a.cumprod())


def test_view_base_is_the_owner_as_in_numpy():
    h = np.arange(12)
    a = cp.asarray(h)
    assert a.base is None
    v = a.reshape(3, 4)
    w = v[1:, ::2]
    assert v.base is a and w.base is a and v.T.base is a  # NumPy collapses chains to the owner
    assert h.reshape(3, 4)[1:, ::2].base is h
    x = cp.ones(3, dtype=cp.complex64)
    assert x.real.base is x and x.imag.base is x
    r = cp.ones(3)
    assert r.real is r  # a real array's .real is the array itself
    assert cp.array(a, copy=True).base is None


def test_comparison_with_arbitrary_objects_as_numpy():
    class HasEq:
        def __eq__(self, other):
            return (other == 2) | (other == 4)

    h = np.arange(6)
    a = cp.asarray(h)
    for v in (None, Ellipsis, object(), HasEq()):
        np.testing.assert_array_equal((a == v).get(), h == v)
        np.testing.assert_array_equal((a != v).get(), h != v)
        np.testing.assert_array_equal((v == a).get(), v == h)


def test_comparison_defers_to_the_objects_answer() -> None:
    """NumPy asks each element's comparison of the object itself: its own __eq__ / __ne__ answering
    NotImplemented is the identity comparison (as NoneType's own __eq__ of Python 3.12+ answers), a plain
    bool fills the result. Whether the type defines __eq__ decides nothing."""
    class Defers:
        def __eq__(self, other: object) -> bool:
            return NotImplemented

        def __ne__(self, other: object) -> bool:
            return NotImplemented

    class AlwaysEqual:
        def __eq__(self, other: object) -> bool:
            return True

    h = np.arange(6).reshape(2, 3)
    a = cp.asarray(h)
    for v in (Defers(), AlwaysEqual(), None):
        for got, want in (((a == v), h == v), ((a != v), h != v), ((v == a), v == h), ((v != a), v != h)):
            if not isinstance(want, np.ndarray):  # the object's own answer (a bool), before loom is asked
                assert got is want
                continue
            assert isinstance(got, cp.ndarray)
            g = got.get()
            np.testing.assert_array_equal(g, want)
            assert g.dtype == want.dtype and g.shape == want.shape
