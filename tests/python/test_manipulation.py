"""Manipulation functions against NumPy: copyto, views (moveaxis, rollaxis, flip, rot90, atleast_nd,
broadcast_arrays share memory with their input), roll, repeat, tile, and the joins."""
import numpy as np
import pytest

import loom
from conftest import check, may_share_memory

N = np.arange(24).reshape(2, 3, 4)


def shares(x, y):
    return may_share_memory(x, y)


@pytest.mark.parametrize("fn, args", [("moveaxis", (0, -1)), ("moveaxis", ((0, 1), (2, 0))), ("rollaxis", (2,)),
                                      ("rollaxis", (2, 1)), ("flip", ()), ("flip", (1,)), ("flip", ((0, 2),)),
                                      ("fliplr", ()), ("flipud", ()), ("rot90", ()), ("rot90", (3, (1, 2))),
                                      ("atleast_1d", ()), ("atleast_3d", ())])
def test_view_functions(fn, args):
    a = loom.asarray(N)
    got, want = getattr(loom, fn)(a, *args), getattr(np, fn)(N, *args)
    check(got, want)
    assert got.strides == want.strides
    assert shares(got, a)


def test_view_function_errors_and_small_ranks():
    with pytest.raises(np.exceptions.AxisError):
        loom.moveaxis(loom.asarray(N), 3, 0)
    with pytest.raises(ValueError):
        loom.fliplr(loom.arange(3))
    for x in (np.array(5.0), np.arange(3)):
        for fn in ("atleast_1d", "atleast_2d", "atleast_3d"):
            check(getattr(loom, fn)(loom.asarray(x)), getattr(np, fn)(x))
    got = loom.atleast_2d(loom.ones(2), loom.ones((2, 2)))
    assert [g.shape for g in got] == [(1, 2), (2, 2)]


def test_broadcast_arrays():
    x, y = np.arange(3).reshape(3, 1), np.arange(4.0)
    got = loom.broadcast_arrays(loom.asarray(x), loom.asarray(y))
    want = np.broadcast_arrays(x, y)
    for g, w in zip(got, want):
        check(g, w)
    with pytest.raises(ValueError):
        loom.broadcast_arrays(loom.ones(3), loom.ones(4))


@pytest.mark.parametrize("dtype", ["int32", "float32", "bool"])
def test_copyto(dtype):
    d, dn = loom.zeros((2, 3), dtype=dtype), np.zeros((2, 3), dtype)
    src = np.array([1, 0, 3]).astype(dtype)
    mask = np.array([True, False, True])
    loom.copyto(d, loom.asarray(src), where=loom.asarray(mask))
    np.copyto(dn, src, where=mask)
    check(d, dn)
    loom.copyto(d, loom.asarray(src))
    np.copyto(dn, src)
    check(d, dn)
    with pytest.raises(ValueError):
        loom.copyto(d, loom.ones(4, dtype=dtype))


def test_copyto_casting():
    d = loom.zeros(3, dtype=np.int32)
    with pytest.raises(TypeError, match="same_kind"):
        loom.copyto(d, loom.ones(3))  # float64 -> int32
    with pytest.raises(TypeError, match="same_kind"):
        loom.copyto(d, 1.5)
    loom.copyto(d, loom.asarray(np.array([1.7, -2.2, 3.0])), casting="unsafe")
    check(d, np.array([1.7, -2.2, 3.0]).astype(np.int32))
    loom.copyto(d, 7)
    check(d, np.full(3, 7, np.int32))
    with pytest.raises(TypeError):
        loom.copyto(np.zeros(3), loom.ones(3))


@pytest.mark.parametrize("shift, axis", [(1, None), (-5, None), (2, 1), (4, 2), ((1, 2), (0, 2)), (7, -1), (0, 0),
                                         (3, (1, 1)), (25, None)])
def test_roll(shift, axis):
    got = loom.roll(loom.asarray(N), shift, axis)
    check(got, np.roll(N, shift, axis))
    assert not shares(got, N)


@pytest.mark.parametrize("reps, axis", [(2, None), (3, 0), (2, 2), (0, 1), ([1, 2, 0], 1), (np.array(2), 0)])
def test_repeat(reps, axis):
    check(loom.repeat(loom.asarray(N), reps, axis), np.repeat(N, reps, axis))
    with pytest.raises(ValueError):
        loom.repeat(loom.asarray(N), -1)


@pytest.mark.parametrize("reps", [2, (2, 1), (1, 2, 3), (2, 1, 1, 2), 0, (0, 2), (1, 1, 1)])
def test_tile(reps):
    got = loom.tile(loom.asarray(N), reps)
    check(got, np.tile(N, reps))
    assert not shares(got, N)
    check(loom.tile(loom.asarray(np.array(7)), reps), np.tile(np.array(7), reps))


@pytest.mark.parametrize("fn", ["hstack", "vstack", "dstack", "column_stack"])
def test_joins(fn):
    for parts in ([np.arange(3), np.arange(3) * 2], [N[0], N[1]], [np.arange(4.0).reshape(2, 2)] * 3):
        check(getattr(loom, fn)([loom.asarray(p) for p in parts]), getattr(np, fn)(parts))


def test_concatenate_one_piece_and_stack_of_pending_pieces_fuse():
    """concatenate of one piece is a pending copy (it fuses into what reads it, and never aliases the
    piece); stack of pending pieces writes each piece with one kernel that computes it (no evaluation of
    the piece first): what Dask's moment chunk (np.stack of one reduction) and its trees need."""
    base = np.arange(12.0).reshape(3, 4)
    x = loom.asarray(base)
    loom.eval(x)
    k0 = loom.stats()["kernels_launched"]
    c = loom.concatenate([x])
    assert loom.stats()["kernels_launched"] == k0 and c.shape == (3, 4)
    c[0, 0] = 100.0  # a copy: the piece is unchanged
    assert float(x[0, 0]) == 0.0 and float(c[0, 0]) == 100.0
    k0 = loom.stats()["kernels_launched"]
    m = loom.stack([loom.sum(x * x, axis=0)], axis=-1)  # pending: no kernel yet
    assert loom.stats()["kernels_launched"] == k0
    r = m * 2
    loom.eval(r)
    assert loom.stats()["kernels_launched"] - k0 == 1  # the reduction, the stack and * 2: one kernel
    np.testing.assert_array_equal(loom.asnumpy(r), np.stack([(base * base).sum(axis=0)], axis=-1) * 2)
    k1 = loom.stats()["kernels_launched"]
    s = loom.stack([x + 1, x * 3, x[::-1]], axis=1)  # runs of 4 float64 (<= 512 bytes): one pending select
    assert loom.stats()["kernels_launched"] == k1
    np.testing.assert_array_equal(loom.asnumpy(s), np.stack([base + 1, base * 3, base[::-1]], axis=1))
    assert loom.stats()["kernels_launched"] - k1 == 1
    wide = np.arange(600.0).reshape(3, 200)
    w = loom.asarray(wide)
    loom.eval(w)
    k1 = loom.stats()["kernels_launched"]
    s = loom.stack([w + 1, w * 3, w[::-1]], axis=1)  # runs of 1600 bytes
    assert loom.stats()["kernels_launched"] - k1 == 3  # one copy kernel per piece, each computing it
    np.testing.assert_array_equal(loom.asnumpy(s), np.stack([wide + 1, wide * 3, wide[::-1]], axis=1))
    np.testing.assert_array_equal(loom.asnumpy(loom.concatenate([x[:, :0]], axis=1)), base[:, :0])
    np.testing.assert_array_equal(loom.asnumpy(loom.concatenate([x], axis=None)), base.ravel())
    got = loom.concatenate([x.astype(np.int32)], dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(loom.asnumpy(got), base.astype(np.float32))
