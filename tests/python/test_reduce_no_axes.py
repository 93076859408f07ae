"""Reductions over no axis (axis=()): NumPy reduces each element by itself, the reduction's identity
combined with it, in the dtype the reduction gives (sum of int8: int64; -0.0 summed is +0.0; any: x != 0).
Every reduction (sum, prod, min, max, mean, any, all, var, std, ptp, count_nonzero, the nan* forms) must
give NumPy's dtype, shape and values (0-d, empty, keepdims, strided, NaN, -0.0, dtype=), argmin/argmax
refuse the tuple as NumPy does, and the result stays on the input's device (the H200 fuzz under NumPy
2.5, seed 700402: max(v, axis=()) of a GPU array gave a host array).
"""
import warnings
from typing import Any

import numpy as np
import pytest

import loom

REDUCTIONS = ["sum", "prod", "max", "min", "mean", "any", "all", "var", "std", "ptp", "count_nonzero",
              "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]
DTYPES = ["bool", "int8", "uint64", "float16", "float32", "complex64"]
SHAPES = [(), (2, 3), (0, 3), (1, 1, 2)]


def values(shape: tuple, dtype: str) -> np.ndarray:
    """Edge values of the dtype (extremes, NaN, inf, -0.0), cycled over the shape."""
    d = np.dtype(dtype)
    if d.kind == "b":
        pool: list[Any] = [True, False]
    elif d.kind in "iu":
        info = np.iinfo(d)
        pool = [0, 1, info.max, info.min, 7, info.max - 1]
    elif d.kind == "f":
        pool = [-0.0, 1.5, np.nan, -np.inf, float(np.finfo(d).max), -2.25]
    else:
        pool = [complex(-0.0, 0.0), complex(1.5, -2), complex(np.nan, 1), complex(0, np.inf)]
    n = int(np.prod(shape))
    return np.array([pool[i % len(pool)] for i in range(n)], dtype=d).reshape(shape)


def outcome(fn, x: Any) -> tuple[str, Any]:
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # All-NaN slice: the values count
            r = fn(x)
    except (TypeError, ValueError) as e:
        return ("raises", type(e))
    return ("ok", r.get() if isinstance(r, loom.ndarray) else np.asarray(r))


def same(want: np.ndarray, got: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)  # NaN == NaN
    if want.dtype.kind == "f":  # the zero's sign too (sum and mean of -0.0 are +0.0, max keeps it); a NaN's
        # sign is the math library's (README, 'nan-sign': x86's inf - inf is -NaN, a GPU's +NaN)
        num = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got)[num], np.signbit(want)[num])


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_over_no_axes_is_numpys(name: str, dtype: str, shape: tuple) -> None:
    if name in ("nanmax", "nanmin") and dtype == "complex64":
        pytest.skip("loom refuses complex nanmax/nanmin (NotImplementedError; README)")
    x = values(shape, dtype)
    lx = loom.asarray(x)
    for kw in ({}, {"keepdims": True}):
        want = outcome(lambda a: getattr(np, name)(a, axis=(), **kw), x)
        got = outcome(lambda a: getattr(loom, name)(a, axis=(), **kw), lx)
        if want[0] == "raises" and name == "ptp" and dtype == "bool":
            continue  # NumPy refuses bool subtraction in ptp; loom's ptp is max - min (covered by test_statistics)
        assert want[0] == got[0], (want, got)
        if want[0] == "ok":
            same(want[1], got[1])


@pytest.mark.parametrize("name", ["sum", "prod", "mean"])
@pytest.mark.parametrize("to", ["int8", "uint8", "float16", "float64"])
def test_no_axes_with_dtype(name: str, to: str) -> None:
    x = np.array([[200, 3], [0, 255]], dtype=np.uint8)
    want = getattr(np, name)(x, axis=(), dtype=to)
    same(np.asarray(want), getattr(loom, name)(loom.asarray(x), axis=(), dtype=to).get())


def test_no_axes_of_strided_views_and_methods() -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 6)[::2, ::-3]
    lx = loom.asarray(np.arange(24, dtype=np.float32).reshape(4, 6))[::2, ::-3]
    for name in ("sum", "max", "mean", "any", "var"):
        same(np.asarray(getattr(x, name)(axis=())), getattr(lx, name)(axis=()).get())


def test_no_axes_into_out() -> None:
    x = np.array([1.5, -0.0, 3.0])
    out = loom.zeros(3, dtype=np.int32)
    r = loom.sum(loom.asarray(x), axis=(), out=out)
    assert r is out
    same(np.sum(x, axis=(), out=np.zeros(3, np.int32)), out.get())


@pytest.mark.parametrize("name", ["argmax", "argmin", "nanargmax", "nanargmin"])
def test_arg_reductions_refuse_a_tuple(name: str) -> None:
    x = np.array([1.0, 3.0, 2.0])
    with pytest.raises(TypeError):
        getattr(np, name)(x, axis=())
    with pytest.raises(TypeError):
        getattr(loom, name)(loom.asarray(x), axis=())


def test_traced_reduction_over_no_axes() -> None:
    f = loom.fuse(lambda a: loom.max(a, axis=()) + loom.sum(a, axis=()))
    x = np.array([[1, -2], [3, 4]], dtype=np.int8)
    same(np.max(x, axis=()) + np.sum(x, axis=()), f(loom.asarray(x)).get())


@pytest.mark.skipif(not loom.cuda.is_available(), reason="needs a GPU: the result's device is the point")
@pytest.mark.parametrize("name", REDUCTIONS)
def test_no_axes_result_stays_on_the_device(name: str) -> None:
    with loom.cuda.Device(0):
        for shape in [(), (3,), (1,), (0, 2)]:
            x = loom.asarray(values(shape, "float32"))
            r = getattr(loom, name)(x, axis=())
            assert r.device == x.device, (name, shape, r.device, x.device)
            loom.eval(r)
            assert r.device == x.device, (name, shape, r.device, x.device)
            # used with another array of that device (the fuzz case: the host result met a GPU array there)
            y = (x >= r) if name not in ("any", "all") else (r | (x > 0))
            assert y.device == x.device
            same(np.asarray(getattr(np, name)(values(shape, "float32"), axis=())), r.get())
