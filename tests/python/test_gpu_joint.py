# SPDX-License-Identifier: Apache-2.0
"""Kernels with several independent reductions over the same axes against NumPy in float64: min and max
(MinMaxScaler), nanmean's sum and count, a weighted mean's two sums, any and all, an int and a float sum
side by side, one sum beside a variance. On the GPU the reductions after the first that read no earlier
result are folded in the first one's walk over memory (codegen/gpu_joint.c): `main` for columns and long
rows, the phase split (parts, finish, the COL block fold) for few long rows or many columns. Shapes cover
columns (COL), rows past the cached-row limit, few long rows, a full reduction, a middle axis, empty and
one-point extents, views; values with NaN and +-inf. The fold is on by default (LOOM_GPU_JOINT=0 turns it
off): on a GPU a child runs the expressions with it off against NumPy too. On the host the test checks the
values only.
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import loom

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)


def minmax_scale(xp, x, axis):
    lo = xp.min(x, axis=axis, keepdims=True)
    return (x - lo) / (xp.max(x, axis=axis, keepdims=True) - lo)


def nanmean(xp, x, axis):
    ok = ~xp.isnan(x)
    return xp.sum(xp.where(ok, x, 0.0), axis=axis) / xp.sum(ok, axis=axis)


def weighted_mean(xp, x, axis, w=None):
    w = x * 0.5 + 2.0 if w is None else w
    return xp.sum(w * x, axis=axis) / xp.sum(w, axis=axis)


def ptp_and_mean(xp, x, axis):
    return (xp.max(x, axis=axis) - xp.min(x, axis=axis)) + xp.mean(x, axis=axis)


def any_all(xp, x, axis):
    return xp.any(x > 0.5, axis=axis) & ~xp.all(x > -3.0, axis=axis)


def count_and_sum(xp, x, axis):
    return xp.sum(x, axis=axis) + xp.sum((x > 0).astype(np.int32), axis=axis)


def sum_beside_var(xp, x, axis):
    return xp.var(x, axis=axis) + xp.sum(x, axis=axis)


FNS = [minmax_scale, nanmean, weighted_mean, ptp_and_mean, any_all, count_and_sum, sum_beside_var]

# (shape, axis): columns, a middle axis, rows past the cached row, few long rows, a full reduction, short
SHAPES = [((4099, 67), 0), ((301, 2053), 0), ((7, 1301, 9), 1), ((37, 40009), 1), ((3, 300007), 1),
          ((100003,), 0), ((5, 1), 1), ((1, 9), 0), ((0, 5), 0), ((6, 0), 1), ((2, 3, 4), (0, 2))]


def data(shape, dtype, seed=0, special=True):
    r = np.random.default_rng(seed + int(np.prod(shape)))
    a = (8.0 * r.random(shape) - 4.0).astype(dtype)
    if special and a.size > 8:
        flat = a.reshape(-1)
        flat[r.integers(0, a.size, 3)] = np.nan
        flat[r.integers(0, a.size)] = np.inf
        flat[r.integers(0, a.size)] = -np.inf
    return a


def check(got, want, dtype):
    got = np.asarray(loom.asnumpy(got))
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want)
        return
    got = got.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
    fin = np.isfinite(want)
    rtol = 3e-5 if dtype == np.float32 else 1e-11
    scale = 1.0 + np.max(np.abs(want[fin]), initial=0.0)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=rtol * scale)


def reference(fn, a, axis):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(np, a.astype(np.float64), axis)
    return np.asarray(out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", SHAPES, ids=[f"{s}-{a}" for s, a in SHAPES])
@pytest.mark.parametrize("fn", FNS, ids=[f.__name__ for f in FNS])
def test_against_numpy(fn, shape, axis, dtype):
    a = data(shape, dtype, special=fn is not any_all)
    try:
        want = reference(fn, a, axis)
    except ValueError:  # min / max of an empty extent: NumPy and CuPy refuse it
        with pytest.raises(ValueError):
            fn(loom, loom.asarray(a), axis)
        return
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fn(loom, loom.asarray(a), axis)
    if want.dtype != np.bool_:
        want = want.astype(np.float64)
    check(got, want, dtype)


VIEWS = [(lambda a: a.T, 0), (lambda a: a.T, 1), (lambda a: a[::2, 1::3], 0), (lambda a: a[:, ::-1], 1)]


@pytest.mark.parametrize("fn", [minmax_scale, nanmean, weighted_mean], ids=lambda f: f.__name__)
@pytest.mark.parametrize("vi", range(len(VIEWS)))
def test_views(fn, vi):
    """Transposed, strided and reversed inputs (the walk by strides; columns of a view)."""
    view, axis = VIEWS[vi]
    a = data((601, 403), np.float32, seed=3)
    want = reference(fn, view(a), axis)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fn(loom, view(loom.asarray(a)), axis)
    check(got, want.astype(np.float64), np.float32)


def test_weighted_with_weights():
    """Two inputs: the weights' sum reads w only, the weighted sum both."""
    r = np.random.default_rng(5)
    x = r.standard_normal((257, 5003)).astype(np.float32)
    w = r.random((257, 5003)).astype(np.float32)
    want = np.sum(w.astype(np.float64) * x, axis=1) / np.sum(w.astype(np.float64), axis=1)
    got = weighted_mean(loom, loom.asarray(x), 1, loom.asarray(w))
    check(got, want, np.float32)


@pytest.mark.skipif(not ON_GPU, reason="the switch changes GPU code only")
def test_unjoined_on_gpu_against_numpy():
    """LOOM_GPU_JOINT=0 in a child: the walks a phase each against NumPy, for every expression and the first
    six shapes (columns, rows past the cached row, few long rows, a full reduction)"""
    code = (
        "import numpy as np, loom, sys, warnings\n"
        "sys.path.insert(0, %r)\n"
        "import test_gpu_joint as t\n"
        "for f in t.FNS:\n"
        "    for s, ax in t.SHAPES[:6]:\n"
        "        a = t.data(s, np.float64, special=f is not t.any_all)\n"
        "        with np.errstate(all='ignore'), warnings.catch_warnings():\n"
        "            warnings.simplefilter('ignore')\n"
        "            got = f(loom, loom.asarray(a), ax)\n"
        "        want = t.reference(f, a, ax)\n"
        "        t.check(got, want if want.dtype == np.bool_ else want.astype(np.float64), np.float64)\n"
        % os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, LOOM_GPU_JOINT="0")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=600)
