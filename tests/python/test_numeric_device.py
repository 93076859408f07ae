"""unwrap, polyval and append of loom arrays as loom graphs (python/loom/_numeric.py), against NumPy's
results bit for bit (the same operations in the same order: no reassociation), over dtypes, axes,
periods, discontinuities, empty and one-coefficient polynomials, and NumPy's dtype promotion."""
import numpy as np
import pytest

import loom


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def same(got, want):
    got = np.asarray(host(got))
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_unwrap(dtype, axis):
    r = np.random.default_rng(1)
    if np.dtype(dtype).kind == "f":
        p = np.cumsum(r.standard_normal((4, 300)) * 2, axis=1).astype(dtype)
    else:
        p = r.integers(-20, 20, (4, 300)).astype(dtype)
    lp = loom.asarray(p)
    same(loom.unwrap(lp, axis=axis), np.unwrap(p, axis=axis))
    same(loom.unwrap(lp, axis=axis, period=6), np.unwrap(p, axis=axis, period=6))
    same(loom.unwrap(lp, discont=4.0, axis=axis), np.unwrap(p, discont=4.0, axis=axis))


def test_unwrap_edges():
    same(loom.unwrap(loom.asarray(np.array([0.5]))), np.unwrap(np.array([0.5])))
    same(loom.unwrap(loom.asarray(np.zeros(0))), np.unwrap(np.zeros(0)))
    p = np.array([0.0, np.pi, 0.0, -np.pi, np.nan, 1.0])  # the boundary case and a NaN
    same(loom.unwrap(loom.asarray(p)), np.unwrap(p))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's own inf * 0
def test_polyval():
    r = np.random.default_rng(2)
    x = r.standard_normal(1000)
    lx = loom.asarray(x)
    for p in ([1, 2, 3], np.array([0.5, -1.0, 2.0, 3.0], np.float32), [], [3]):
        same(loom.polyval(p, lx), np.polyval(p, x))
    same(loom.polyval(loom.asarray(np.array([1.5, 2.0])), lx.astype(np.float32)), np.polyval(np.array([1.5, 2.0]), x.astype(np.float32)))
    xi = np.arange(10, dtype=np.int32)
    same(loom.polyval([1, 2, 3], loom.asarray(xi)), np.polyval([1, 2, 3], xi))
    xs = np.array([np.inf, -np.inf, np.nan, 0.0])
    same(loom.polyval([2.0, 0.0, 1.0], loom.asarray(xs)), np.polyval([2.0, 0.0, 1.0], xs))
    q = np.poly1d([1.0, 2.0])
    np.testing.assert_array_equal(host(loom.polyval(q, lx)), np.polyval(q, x))  # poly1d: NumPy's


def test_append():
    a = np.arange(6.0).reshape(2, 3)
    la = loom.asarray(a)
    same(loom.append(la, [1, 2]), np.append(a, [1, 2]))
    same(loom.append(la, np.ones((1, 3), np.float32), axis=0), np.append(a, np.ones((1, 3), np.float32), axis=0))
    same(loom.append(loom.asarray(np.arange(3)), loom.asarray(np.array([0.5]))), np.append(np.arange(3), [0.5]))
    with pytest.raises(ValueError):
        loom.append(la, np.ones((2, 2)), axis=0)
