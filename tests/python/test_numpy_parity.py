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
