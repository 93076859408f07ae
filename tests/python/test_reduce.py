"""Reductions (axis, keepdims, dtype, out) and linalg.norm against NumPy."""
import numpy as np
import pytest

import loom
from conftest import check, sample


@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean", "any", "all"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(name, axis, keepdims):
    a = sample((3, 4, 5), "float64", positive=True)
    if name == "prod":
        a = a / 2 + 0.5
    got = getattr(loom, name)(loom.asarray(a), axis=axis, keepdims=keepdims)
    check(got, getattr(np, name)(a, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "uint16", "float32", "float16"])
def test_sum_dtypes(dtype):
    a = sample((6, 7), dtype)
    check(loom.asarray(a).sum(axis=0), a.sum(axis=0))
    check(loom.asarray(a).sum(), a.sum())
    check(loom.asarray(a).sum(dtype="float64"), a.sum(dtype="float64"))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_arg(axis):
    a = sample((5, 6), "float32", 3)
    check(loom.asarray(a).argmax(axis=axis), a.argmax(axis=axis))
    check(loom.asarray(a).argmin(axis=axis), a.argmin(axis=axis))


def test_var_std():
    a = sample((5, 6), "float64", 4)
    check(loom.asarray(a).var(axis=1), a.var(axis=1))
    check(loom.asarray(a).std(), a.std())
    check(loom.var(loom.asarray(a), ddof=1), np.var(a, ddof=1))


def test_reduce_out():
    a = sample((4, 5), "float64")
    out = loom.empty(5)
    r = loom.sum(loom.asarray(a), axis=0, out=out)
    assert r is out
    check(out, a.sum(axis=0))
    with pytest.raises(ValueError):
        loom.sum(loom.asarray(a), axis=1, out=out)


def test_empty_and_0d():
    check(loom.zeros((0, 3)).sum(axis=0), np.zeros((0, 3)).sum(axis=0))
    check(loom.asarray(np.float32(3)).sum(), np.asarray(np.float32(3)).sum())
    with pytest.raises(ValueError):
        loom.zeros((0,)).max().get()


def test_bad_axis():
    x = loom.ones((2, 3))
    with pytest.raises(np.exceptions.AxisError):
        x.sum(axis=2)
    with pytest.raises(ValueError):
        x.sum(axis=(0, 0))


@pytest.mark.parametrize("ord", [None, 1, 2, np.inf])
def test_norm(ord):
    a = sample((10,), "float64")
    check(loom.linalg.norm(loom.asarray(a), ord), np.linalg.norm(a, ord))
    m = sample((3, 4), "float64")
    check(loom.linalg.norm(loom.asarray(m)), np.linalg.norm(m))
    check(loom.linalg.norm(loom.asarray(m), axis=1), np.linalg.norm(m, axis=1))


@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean", "any", "all"])
@pytest.mark.parametrize("dtype", ["float64", "float16", "int8", "uint8", "bool", "complex128"])
def test_reduction_over_axes_of_extent_one(name, dtype):
    """A reduction over axes of extent 1 is an elementwise map (each result its identity combined with
    one element): NumPy's values and dtypes, -0.0 summed to +0.0, NaN kept, int8 widened to the sum's
    int64; and it fuses with the kernel that produced its operand (Dask's aggregate over an axis of one
    chunk reads the chunk step's keepdims result this way)."""
    if name in ("min", "max") and dtype == "complex128":
        pytest.skip("NumPy orders complex numbers lexicographically; loom's min/max take real dtypes")
    a = np.array([[-0.0], [np.nan], [3.0], [-7.0], [127.0], [0.0]])
    if dtype == "complex128":
        a = a + np.array([[-0.0], [1.0], [np.nan], [-2.0], [0.5], [-0.0]]) * 1j
    with np.errstate(invalid="ignore"):
        a = a.astype(dtype) if dtype != "bool" else a != 0
    a3 = a.reshape(6, 1, 1)
    for arr, axis in ((a, 1), (a, (1,)), (a3, (1, 2)), (a3, -1), (a[:1], None), (a3[:0], (1, 2))):
        for keepdims in (False, True):
            want = getattr(np, name)(arr, axis=axis, keepdims=keepdims)
            got = getattr(loom, name)(loom.asarray(arr), axis=axis, keepdims=keepdims)
            assert got.dtype == want.dtype and got.shape == want.shape, (axis, keepdims)
            np.testing.assert_array_equal(loom.asnumpy(got), want)
            if want.dtype.kind in "fc":  # signed zeros too
                np.testing.assert_array_equal(np.signbit(loom.asnumpy(got).real), np.signbit(want.real))
    x = loom.asarray(np.arange(12.0).reshape(3, 4))
    loom.eval(x)
    before = loom.stats()["kernels_launched"]
    r = loom.sum(loom.sum(x * 2, axis=1, keepdims=True), axis=1)  # the reduction, then one of extent 1
    loom.eval(r)
    assert loom.stats()["kernels_launched"] - before == 1
    np.testing.assert_array_equal(loom.asnumpy(r), (np.arange(12.0).reshape(3, 4) * 2).sum(axis=1))
