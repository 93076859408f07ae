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
