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
