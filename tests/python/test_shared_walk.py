# SPDX-License-Identifier: Apache-2.0
"""Sibling reductions over many points (R >= 8192: long columns, few long rows, whole arrays) that pass_fuse puts in
one kernel since they may share a walk (passes/fuse_place.c walk_shareable; LOOM_FUSE_SHARED_WALK=0 keeps them apart),
against NumPy in float64: min and max (MinMaxScaler), nanmean's sum and count, sum and sum of squares, any and all,
an int and a float sum, prod beside max; arg-reductions and complex values beside a sum (kept apart, same values).
On a GPU the joined walk (codegen/gpu_joint.c) runs them; a child checks the values with the rule off."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)  # the default device of this run

SHAPES = [((9001, 7), 0), ((20011,), None), ((3, 10007), 1), ((8192, 3), 0), ((2, 5000, 3), (0, 1)), ((12289, 1), 0)]


def minmax(xp, x, ax):
    lo, hi = xp.min(x, axis=ax, keepdims=True), xp.max(x, axis=ax, keepdims=True)
    return (x - lo) / (hi - lo)


def nanmean(xp, x, ax):
    ok = ~xp.isnan(x)
    return xp.sum(xp.where(ok, x, 0.0), axis=ax) / xp.sum(ok, axis=ax)


def moments(xp, x, ax):
    n = x.size if ax is None else int(np.prod([x.shape[a] for a in (ax if isinstance(ax, tuple) else (ax,))]))
    return xp.sum(x * x, axis=ax) / n - (xp.sum(x, axis=ax) / n) ** 2


def any_all(xp, x, ax):
    return xp.logical_xor(xp.any(x > 1.5, axis=ax), xp.all(x > -4.0, axis=ax))


def int_and_float(xp, x, ax):
    return xp.sum((x > 0).astype(xp.int32), axis=ax) + xp.sum(x, axis=ax)


def prod_max(xp, x, ax):
    return xp.prod(1.0 + x * 1e-4, axis=ax) * xp.max(xp.abs(x), axis=ax)


def argmax_sum(xp, x, ax):
    a = ax if not isinstance(ax, tuple) else None
    return xp.argmax(x, axis=a) + xp.sum(x, axis=a)


def complex_sum(xp, x, ax):
    return xp.abs(xp.sum(x * (1 + 2j), axis=ax)) + xp.sum(x, axis=ax)


FNS = [minmax, nanmean, moments, any_all, int_and_float, prod_max, argmax_sum, complex_sum]


def data(shape, seed=0):
    r = np.random.default_rng(seed)
    a = r.standard_normal(shape)
    if a.size > 10:
        a.flat[r.integers(0, a.size, 5)] = np.nan if a.ndim > 1 else 0.0
    return a


def check(fn, shape, ax, dtype):
    a = data(shape).astype(dtype)
    with np.errstate(all="ignore"):
        want = np.asarray(fn(np, a.astype(np.float64), ax))
        got = np.asarray(loom.asnumpy(fn(loom, loom.asarray(a), ax)))
    assert got.shape == want.shape
    if want.dtype.kind in "bi":
        np.testing.assert_array_equal(got, want)
    else:
        tol = 2e-4 if dtype == np.float32 else 1e-9
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("fn", FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape,ax", SHAPES, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_siblings_against_numpy(fn, shape, ax, dtype):
    if fn is nanmean and shape == (20011,):
        pytest.skip("one NaN-free 1-d case is enough: the NaN positions differ")
    check(fn, shape, ax, dtype)


def test_minmax_is_one_kernel():
    """the fuser's decision itself: MinMaxScaler over 9001 rows is one kernel (two with the rule off)"""
    x = loom.asarray(data((9001, 7)).astype(np.float32))
    text = loom.inspect(minmax(loom, x, 0), what="kernels")["kernels"]
    n = text.count("\nkernel ") + text.startswith("kernel ")
    assert n == (2 if os.environ.get("LOOM_FUSE_SHARED_WALK") == "0" else 1), text


def test_rule_off_in_a_child():
    """LOOM_FUSE_SHARED_WALK=0 in a child: the same values with the siblings in kernels of their own"""
    env = dict(os.environ, LOOM_FUSE_SHARED_WALK="0")
    if os.environ.get("LOOM_FUSE_SHARED_WALK") == "0":
        pytest.skip("already the child")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.abspath(__file__),
                    "-k", "one_kernel or (float32 and (minmax or nanmean or argmax))"], env=env, check=True, timeout=600)
