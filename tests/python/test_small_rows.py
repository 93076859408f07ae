# SPDX-License-Identifier: Apache-2.0
"""Reductions over a short last dim (2 .. 9 points) of many kept points: pairwise distances, per-pair maxima,
arg-reductions, integer products, boolean any / all. On a GPU these walk a thread a row with the row's extent
compiled in as a constant (codegen/lower.c cg_gpu_row_extent, KernelIr.row_extent; LOOM_GPU_SMALL_ROWS=0 keeps
the generic walk); on the host the short-row kernels (codegen/lower_host_rows.c). Both against NumPy in float64 /
int64, over packed, reversed (a[:, ::-1]) and sliced (b[:, :E] of longer rows: the generic kernel) operands."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

N, M = 181, 97  # 17557 kept points: past the GPU's 2^14 for a thread a row


def sqdist(xp, a, b):
    return xp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)


def maxprod(xp, a, b):
    return xp.max(a[:, None, :] * b[None, :, :], axis=-1)


def argmin_diff(xp, a, b):
    return xp.argmin(xp.abs(a[:, None, :] - b[None, :, :]), axis=-1)


def mean_keep(xp, a, b):
    return xp.mean(a[:, None, :] + b[None, :, :], axis=-1, keepdims=True)


def any_close(xp, a, b):
    return xp.any(xp.abs(a[:, None, :] - b[None, :, :]) < 0.25, axis=-1)


FLOAT_FNS = [sqdist, maxprod, argmin_diff, mean_keep, any_close]


def operands(e, dtype, view, seed=0):
    r = np.random.default_rng(seed + e)
    if np.dtype(dtype).kind == "i":
        a, b = r.integers(-9, 10, (N, e + 2)).astype(dtype), r.integers(-9, 10, (M, e + 2)).astype(dtype)
    else:
        a = (np.round(r.standard_normal((N, e + 2)) * 4) / 4).astype(dtype)
        b = (np.round(r.standard_normal((M, e + 2)) * 4) / 4).astype(dtype)
        a[3, 1] = np.nan  # a NaN: max / argmin / sums propagate or pick it as NumPy does
    if view == "packed":
        return np.ascontiguousarray(a[:, :e]), np.ascontiguousarray(b[:, :e])
    if view == "reversed":
        return np.ascontiguousarray(a[:, :e])[:, ::-1], np.ascontiguousarray(b[:, :e])[:, ::-1]
    return a[:, :e], b[:, :e]  # sliced: rows e + 2 apart


def check(fn, e, dtype, view):
    a, b = operands(e, dtype, view)
    wide = np.int64 if np.dtype(dtype).kind == "i" else np.float64
    with np.errstate(all="ignore"):
        want = np.asarray(fn(np, a.astype(wide), b.astype(wide)))
        got = np.asarray(loom.asnumpy(fn(loom, loom.asarray(a), loom.asarray(b))))
    assert got.shape == want.shape
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("view", ["packed", "reversed", "sliced"])
@pytest.mark.parametrize("e", [2, 3, 4, 7, 8, 9])
@pytest.mark.parametrize("fn", FLOAT_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_rows_against_numpy(fn, e, dtype, view):
    check(fn, e, dtype, view)


def int_prod(xp, a, b):
    return xp.prod(a[:, None, :] + b[None, :, :], axis=-1)  # int32 wraps as NumPy's does


def int_max(xp, a, b):
    return xp.max(a[:, None, :] * b[None, :, :], axis=-1)


@pytest.mark.parametrize("view", ["packed", "reversed"])
@pytest.mark.parametrize("e", [2, 3, 5, 8])
@pytest.mark.parametrize("fn", [int_prod, int_max], ids=lambda f: f.__name__)
def test_int32_rows_against_numpy(fn, e, view):
    a, b = operands(e, np.int32, view)
    want = np.asarray(fn(np, a, b))  # int32 in NumPy too: the same wrapping
    got = np.asarray(loom.asnumpy(fn(loom, loom.asarray(a), loom.asarray(b))))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_empty_and_one_point_rows():
    """rows of 0 and 1 points (never specialized): the identities and the points themselves"""
    for e in (0, 1):
        a, b = np.ones((N, e), np.float32), np.full((M, e), 2.0, np.float32)
        np.testing.assert_array_equal(np.asarray(loom.asnumpy(sqdist(loom, loom.asarray(a), loom.asarray(b)))),
                                      sqdist(np, a, b))


def test_generic_walk_in_a_child():
    """LOOM_GPU_SMALL_ROWS=0 in a child: the same values with the generic walk"""
    if os.environ.get("LOOM_GPU_SMALL_ROWS") == "0":
        pytest.skip("already the child")
    env = dict(os.environ, LOOM_GPU_SMALL_ROWS="0")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.abspath(__file__),
                    "-k", "float32 and (sqdist or argmin_diff)"], env=env, check=True, timeout=600)
