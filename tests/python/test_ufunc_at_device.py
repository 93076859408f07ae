# SPDX-License-Identifier: Apache-2.0
"""add.at / subtract.at as one scatter-add (python/loom/_ufunc.py _added_at_on_device, the path of GPU
arrays; called here on host arrays too, so it runs everywhere) against NumPy's ufunc.at: repeated and
negative indices, rows of 2-d arrays, broadcast and scalar operands, integer wrap-around, empty index
arrays, NumPy's IndexError, and the cases it leaves to NumPy (False: bool indices, slices, casts NumPy
refuses)."""
import numpy as np
import pytest

import loom
from loom import _ufunc

RNG = np.random.default_rng(9)


def run(name, a, idx, b):
    want = a.copy()
    getattr(np, name).at(want, idx, b)
    la = loom.asarray(a)
    lb = loom.asarray(b) if isinstance(b, np.ndarray) else b
    li = loom.asarray(idx) if isinstance(idx, np.ndarray) and idx.dtype.kind != "b" else idx
    assert _ufunc._added_at_on_device(la, li, lb, name == "subtract") is True
    return la.get(), want


@pytest.mark.parametrize("name", ["add", "subtract"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64])
def test_repeated_and_negative_indices(name, dtype):
    a = (RNG.random(50) * 10).astype(dtype)
    idx = RNG.integers(-50, 50, 400)
    b = (RNG.random(400) * 10).astype(dtype)
    got, want = run(name, a, idx, b)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    else:
        np.testing.assert_array_equal(got, want)


def test_rows_broadcast_and_scalars():
    a = RNG.standard_normal((6, 3, 2))
    idx = np.array([[0, 5], [5, -1], [2, 2]])
    for b in (1.5, RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2, 3, 2)), RNG.standard_normal((1, 1))):
        got, want = run("add", a, idx, b)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    got, want = run("add", np.zeros((4, 1)), np.array([1, 1, 3]), np.ones((3, 1)))
    np.testing.assert_array_equal(got, want)


def test_lists_ints_wrap_and_empty():
    got, want = run("add", np.array([250, 1, 2], np.uint32), [0, 0, 0], 2**31)
    np.testing.assert_array_equal(got, want)
    got, want = run("add", np.arange(5.0), np.zeros(0, np.int64), 1.0)
    np.testing.assert_array_equal(got, want)
    got, want = run("subtract", np.arange(4, dtype=np.int64), np.array([3, 3, 3]), np.int32(2))
    np.testing.assert_array_equal(got, want)


def test_index_errors_follow_numpy():
    for bad in (5, -6):
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds for axis 0 with size 5"):
            _ufunc._added_at_on_device(loom.asarray(np.zeros(5)), loom.asarray(np.array([0, bad])), 1.0, False)


def test_left_to_numpy():
    a = loom.asarray(np.zeros(5, np.int64))
    assert _ufunc._added_at_on_device(a, np.array([True, False, True, False, False]), 1, False) is False
    assert _ufunc._added_at_on_device(a, slice(0, 2), 1, False) is False
    assert _ufunc._added_at_on_device(a, loom.asarray(np.array([1])), 1.5, False) is False  # float into int
    assert _ufunc._added_at_on_device(loom.asarray(np.zeros(5, np.float16)), [1], 1.0, False) is False
    assert _ufunc._added_at_on_device(a, (np.array([0]), np.array([0])), 1, False) is False
    loom.add.at(a, [1, 1, 4], 2)  # the public call (NumPy's on the host here) still works
    np.testing.assert_array_equal(a.get(), [0, 4, 0, 0, 2])
