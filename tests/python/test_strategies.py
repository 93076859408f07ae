"""Host launch strategies and codegen paths chosen from the sizes, against NumPy: vector arg-reductions
(long ranges, ties, NaN placement, all-identity inputs, views), the column split of tall narrow column
reductions (several REDUCE phases, FINAL phases, argmin/argmax over axis 0), short rows, tiled
transposes and small constant strides. Sizes are picked to cross each strategy's thresholds (the
vector arg fold from 64 points, blocks of 2048; the column split for <= 256 columns and >= 65536
points) and their odd tails."""
import numpy as np
import pytest

import loom
from conftest import check

ARG_DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int16", "int32", "int64", "uint64"]


def _values(rng, n, dtype, kind):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -5), min(info.max, 5), n, endpoint=True).astype(dt)
        if kind == "identity":
            a[:] = info.min
        elif kind == "top":
            a[:] = info.max
        return a
    a = rng.standard_normal(n).astype(dt)
    if kind == "ties":
        a = np.round(a).astype(dt)
    elif kind == "nan":
        a[rng.integers(0, n, 3)] = np.nan
    elif kind == "identity":
        a[:] = -np.inf
    elif kind == "top":
        a[:] = np.inf
    elif kind == "lastnan":
        a[-1] = np.nan
    return a


@pytest.mark.parametrize("dtype", ARG_DTYPES)
@pytest.mark.parametrize("n", [63, 64, 65, 2047, 2049, 6000])
@pytest.mark.parametrize("kind", ["rand", "ties", "nan", "identity", "top", "lastnan"])
def test_arg_all(dtype, n, kind):
    rng = np.random.default_rng(n)
    a = _values(rng, n, dtype, kind)
    la = loom.asarray(a)
    for v, lv in [(a, la), (a[::-1], la[::-1]), (a[1::3], la[1::3])]:
        check(lv.argmax(), np.argmax(v))
        check(lv.argmin(), np.argmin(v))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
@pytest.mark.parametrize("shape", [(7, 100), (3, 2049), (200, 65), (1, 70000), (70000, 2)])
def test_arg_axes(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    a = (rng.standard_normal(shape) * 3).astype(dtype)
    if a.dtype.kind == "f":
        a[0, shape[1] // 2:] = np.nan
        a[-1, :] = -np.inf
    for v in [a, a.T, a[:, ::-1]]:
        for axis in [None, 0, 1, -1]:
            check(loom.asarray(v).argmax(axis=axis), np.argmax(v, axis=axis))
            check(loom.asarray(v).argmin(axis=axis), np.argmin(v, axis=axis))


def test_arg_expression_prologue():
    """The value folded is an expression (a fused prologue), not a plain load."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((300, 513)).astype(np.float32)
    c = rng.standard_normal(513).astype(np.float32)
    f = loom.fuse(lambda a, b: ((a - b) * (a - b)).argmin(axis=1))
    check(f(loom.asarray(x), loom.asarray(c)), ((x - c) * (x - c)).argmin(axis=1))


def check_column_sum(got, v):
    """got (loom) = v.sum(axis=0): dtype and shape as NumPy's; floats within the error bound of ANY
    summation order, 2 (n - 1) u sum|x| (u: the dtype's unit roundoff; the float64 reference has its own
    share), of the float64 sum: a GPU's tree order and NumPy's row order both lie within it, and a
    result relative to a cancelling sum (a column summing to ~0) is not a fair measure."""
    want = v.sum(axis=0)
    got = got.get()
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    x = v.astype(np.float64)
    exact = x.sum(axis=0)
    bound = 2 * (v.shape[0] - 1) * (np.finfo(v.dtype).eps / 2) * np.abs(x).sum(axis=0)
    nan = np.isnan(exact)
    np.testing.assert_array_equal(np.isnan(got), nan)
    err = np.abs(got.astype(np.float64) - exact)
    assert np.all(err[~nan] <= bound[~nan]), (err[~nan].max(), bound[~nan][np.argmax(err[~nan] - bound[~nan])])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8"])
@pytest.mark.parametrize("shape", [(5000, 16), (70000, 3), (4099, 64), (3000, 255), (100, 256), (65537, 1),
                                   (2048, 2, 8)])
def test_column_split(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 4).astype(dtype) if dtype[0] == "f" else rng.integers(-9, 9, shape).astype(dtype)
    if dtype[0] == "f":
        x.ravel()[rng.integers(0, x.size, 5)] = np.nan
    lx = loom.asarray(x)
    rtol = 1e-9 if dtype == "float64" else 1e-4
    for v, lv in [(x, lx), (x[::-1], lx[::-1])]:
        check_column_sum(lv.sum(axis=0), v)
        check(lv.max(axis=0), v.max(axis=0))
        check(lv.argmax(axis=0), v.argmax(axis=0))
        check(lv.argmin(axis=0), v.argmin(axis=0))
        if dtype[0] == "f":
            check(lv.var(axis=0), v.var(axis=0), rtol=rtol * 10)
            # several dependent REDUCE phases and FINAL stores in one kernel
            f = loom.fuse(lambda a: (a.mean(axis=0), a.var(axis=0), (a - a.mean(axis=0)).max(axis=0)))
            got = f(lv)
            # a column mean near 0 cancels: the bound is the summation order's, relative to mean |x|
            check(got[0], v.mean(axis=0), rtol=rtol * 10,
                  atol=2 * v.shape[0] * np.finfo(dtype).eps * float(np.nanmax(np.abs(v))))
            check(got[1], v.var(axis=0), rtol=rtol * 10)
            check(got[2], (v - v.mean(axis=0)).max(axis=0), rtol=rtol * 10)


def test_column_split_bits_repeat():
    """The split depends on the sizes only: the same input gives the same bits every time."""
    x = np.random.default_rng(5).standard_normal((100000, 16)).astype(np.float32)
    lx = loom.asarray(x)
    first = lx.sum(axis=0).get()
    for _ in range(3):
        assert np.array_equal(lx.sum(axis=0).get(), first)
    np.testing.assert_allclose(first, x.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-3)
