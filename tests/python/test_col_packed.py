# SPDX-License-Identifier: Apache-2.0
"""Reductions over the rows of packed short rows, (N, S) -> (S,) with S = 2 .. 5: a point cloud's centroid, an image's
per-channel statistics over its pixels (NHWC), boxes' extents. On a GPU, S = 2, 3, 4 with at least 32768 points and
aligned bases read the flat memory in 16-byte vectors (codegen/gpu_colv.c; LOOM_GPU_COLV=0 keeps the column walk);
unaligned views (x[1:]) and S = 5 take the column walk. Against NumPy in float64 / int64, on whatever device runs."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom


def data(n, s, dtype, seed=0):
    r = np.random.default_rng(seed + 7 * s + n)
    if np.dtype(dtype).kind in "iu":
        return r.integers(-1000, 1000, (n, s)).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return r.random((n, s)) > 0.999
    a = np.round(r.standard_normal((n, s)) * 8) / 8  # quarter steps: ties for argmin / argmax
    return a.astype(dtype)


OPS = {
    "sum": lambda xp, x: xp.sum(x, axis=0),
    "mean": lambda xp, x: xp.mean(x, axis=0),
    "max": lambda xp, x: xp.max(x, axis=0),
    "min_shifted": lambda xp, x: xp.min(x * 2 - 1, axis=0),
    "argmax": lambda xp, x: xp.argmax(x, axis=0),
    "argmin": lambda xp, x: xp.argmin(x, axis=0),
    "sumsq": lambda xp, x: xp.sum(x * x, axis=0),
}


def check(fn, x):
    with np.errstate(all="ignore"):
        wide = x.astype(np.float64) if x.dtype.kind == "f" else x
        want = np.asarray(fn(np, wide))
        got = np.asarray(loom.asnumpy(fn(loom, loom.asarray(x))))
    assert got.shape == want.shape
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        tol = {np.float16: 2e-2, np.float32: 2e-5}.get(x.dtype.type, 1e-12)
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * 4, equal_nan=True)


@pytest.mark.parametrize("n", [9, 16385, 40001, 250007])
@pytest.mark.parametrize("s", [2, 3, 4, 5])
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_columns(op, s, n, dtype):
    check(OPS[op], data(n, s, dtype))


@pytest.mark.parametrize("s", [2, 3, 4])
@pytest.mark.parametrize("op", ["sum", "max", "argmin"])
def test_nan_in_one_column(op, s):
    x = data(60000, s, np.float32)
    x[31337, 1] = np.nan
    check(OPS[op], x)


@pytest.mark.parametrize("s", [2, 3, 4])
@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int8, np.uint8])
def test_other_dtypes(s, dtype):
    x = data(70001, s, dtype)
    check(OPS["sum"], x)
    check(OPS["max"], x)


@pytest.mark.parametrize("s", [2, 3, 4])
def test_bool_any_all(s):
    x = data(100003, s, np.bool_)
    for fn in (lambda xp, v: xp.any(v, axis=0), lambda xp, v: xp.all(~v, axis=0), lambda xp, v: xp.sum(v, axis=0)):
        check(fn, x)


@pytest.mark.parametrize("s", [3, 4])
def test_unaligned_and_strided_views(s):
    base = data(80001, s, np.float32)
    check(OPS["sum"], base[1:])      # a base 1 row (not a vector) in
    check(OPS["argmax"], base[3:])
    check(OPS["sum"], base[::2])     # rows 2 S apart: the column walk


@pytest.mark.parametrize("s", [2, 3, 4])
def test_mixed_dtypes(s):
    """a bool mask beside float32 values (vectors of 4 lanes over both), an int8 beside float64"""
    x, m = data(90001, s, np.float32), data(90001, s, np.bool_)
    check(lambda xp, v: xp.sum(xp.where(xp.asarray(m), v, 0.0), axis=0), x)
    q, w = data(50001, s, np.int8), data(50001, s, np.float64)
    check(lambda xp, v: xp.max(v * xp.asarray(w), axis=0), q)


def test_nhwc_channel_statistics():
    """an image batch's per-channel mean and std over (N, H, W), as torchvision's Normalize is fitted"""
    x = data(4 * 128 * 96, 3, np.float32).reshape(4, 128, 96, 3)
    check(lambda xp, v: xp.mean(v, axis=(0, 1, 2)), x)
    check(lambda xp, v: xp.std(v, axis=(0, 1, 2)), x)
    check(lambda xp, v: xp.max(v, axis=(0, 1, 2)) - xp.min(v, axis=(0, 1, 2)), x)


def test_column_walk_in_a_child():
    """LOOM_GPU_COLV=0 in a child: the same values by the column walk"""
    if os.environ.get("LOOM_GPU_COLV") == "0":
        pytest.skip("already the child")
    env = dict(os.environ, LOOM_GPU_COLV="0")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.abspath(__file__),
                    "-k", "float32 and (sum or argmin) and 40001"], env=env, check=True, timeout=600)
