# SPDX-License-Identifier: Apache-2.0
"""The host's one-pass variance (codegen/host_moments.c): phase 0's walk gathers the moments of the
squared-deviation phase, per O point (run()) and in the R split of inner multi-phase reductions (colpart
of phase 0 stores the part's (n, mean, M2), colfinish merges the parts in order). Compared with a long
double two-pass reference on data whose mean is large against its spread, with NaN, inf, empty and 0-d
inputs, ddof, keepdims, several axes and non-contiguous inputs; LOOM_HOST_ONEPASS_VAR=0 (two passes, a
different cache key) is checked in a subprocess, since the switch is read once per process.
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import loom
from test_onepass_var import data, ref_var  # the same long double reference and data as the GPU's tests


def check(got, want, dtype, rtol=None):
    got = np.asarray(got.get() if hasattr(got, "get") else got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    fin = ~np.isnan(want)
    if rtol is None:
        rtol = 2e-5 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=0)


# (shape, axis): all points (R split over parts), a few long rows (R split), long rows per O point (run():
# one pass from 2^17 points), many short rows (per O point, two passes), several axes, axis -1, a middle axis
CASES = [
    ((1 << 22,), None), ((3, 300001), 1), ((6, 140000), 1), ((5, 2, 70000), (1, 2)), ((2000, 700), -1),
    ((5, 3, 20000), (1, 2)), ((16, 40, 50), (0, 2)), ((7, 9000, 3), 1), ((3, 5, 7), None), ((1,), None),
]


@pytest.mark.parametrize("dtype,offset", [(np.float32, 1e4), (np.float64, 1e8)])
@pytest.mark.parametrize("shape,axis", CASES)
def test_large_mean(dtype, offset, shape, axis):
    a = data(shape, dtype, offset, seed=int(np.prod(shape)) % 97)
    check(loom.var(loom.asarray(a), axis=axis), ref_var(a, axis), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_contiguous(dtype):
    a = data((600, 3000), dtype, 1e3, seed=1)
    x = loom.asarray(a)
    for sl, axis in [((slice(None), slice(None, None, 3)), 1), ((slice(None, None, 2), slice(1, None, 2)), None),
                     ((slice(None, None, -1), slice(None, None, -2)), -1)]:
        check(loom.var(x[sl], axis=axis), ref_var(a[sl], axis), dtype)
    for axis in (0, 1, None):  # a transposed view
        check(loom.var(x.T, axis=axis), ref_var(a.T, axis), dtype)


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("keepdims", [False, True])
def test_ddof_keepdims_std(ddof, keepdims):
    a = data((4, 250000), np.float64, 1e8, seed=3)
    x = loom.asarray(a)
    check(loom.var(x, axis=1, ddof=ddof, keepdims=keepdims), ref_var(a, 1, ddof, keepdims), np.float64)
    check(loom.std(x, axis=-1, ddof=ddof, keepdims=keepdims), np.sqrt(ref_var(a, -1, ddof, keepdims)), np.float64)
    check(loom.std(x, ddof=ddof, keepdims=keepdims), np.sqrt(ref_var(a, None, ddof, keepdims)), np.float64)


@pytest.mark.parametrize("dtype,offset", [(np.float32, 1e4), (np.float64, 1e8)])
def test_outliers_and_trends(dtype, offset):
    """the moments' first shift far from the rest (the range's first value, a part's first value), and
    sorted data (every block's mean far from the running one)"""
    b = data((1 << 21,), dtype, offset, seed=6)
    b[0] = offset - 1e3
    b[1 << 17] = offset + 1e3  # a later part's first point (parts of 32768 points)
    check(loom.var(loom.asarray(b)), ref_var(b, None), dtype)
    a = data((4, 200000), dtype, offset, seed=5)
    a[:, 0] = offset + 1e3
    check(loom.var(loom.asarray(a), axis=1), ref_var(a, 1), dtype)
    s = np.linspace(-1, 1, 1 << 21).astype(dtype) + dtype(offset / 1e4)
    check(loom.var(loom.asarray(s)), ref_var(s, None), dtype)


def test_nan_inf():
    a = data((6, 100000), np.float64, 0.0, seed=7)
    a[1, 70000] = np.nan
    a[2, 40] = np.inf
    a[3, 0] = -np.inf
    a[4, 99999] = np.inf
    a[5, 9] = -np.inf
    a[5, 50000] = np.inf
    with np.errstate(all="ignore"):
        got = loom.var(loom.asarray(a), axis=1).get()
        want = np.var(a, axis=1)
    assert np.isfinite(got[0]) and np.all(np.isnan(got[1:])) and np.all(np.isnan(want[1:]))
    check(got[:1], ref_var(a[:1], 1), np.float64)
    for pos, v in [(999, np.inf), (3 << 19, np.nan), (0, -np.inf)]:
        b = data((1 << 21,), np.float32, 0.0, seed=8)
        b[pos] = v
        with np.errstate(all="ignore"):
            assert np.isnan(loom.var(loom.asarray(b)).get())
    for shape in [(2000, 300), (8, 140000)]:  # per O point: two passes, one pass
        c = data(shape, np.float32, 0.0, seed=9)
        c[3, 5] = np.nan
        c[4, shape[1] - 1] = np.inf
        c[5, 0] = -np.inf
        with np.errstate(all="ignore"):
            got = loom.var(loom.asarray(c), axis=1).get()
        assert np.isnan(got[3:6]).all() and np.isfinite(np.delete(got, [3, 4, 5])).all()


def test_empty_and_0d():
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = loom.var(loom.asarray(np.zeros((3, 0))), axis=1).get()
        assert got.shape == (3,) and np.all(np.isnan(got))
        assert np.isnan(loom.var(loom.asarray(np.zeros((0,)))).get())
        got0 = loom.var(loom.asarray(np.zeros((0, 5))), axis=0).get()
        assert got0.shape == (5,) and np.all(np.isnan(got0))
    z = loom.asarray(np.float64(1e8 + 0.5))
    assert loom.var(z).get() == 0.0 and loom.std(z).get() == 0.0
    one = loom.asarray(np.array([[3.5], [1e300], [-2.0]]))
    check(loom.var(one, axis=1), np.zeros(3), np.float64)


def test_batchnorm_and_layernorm_forms():
    """the statistics as the suite writes them: ((x - mu) ** 2).mean over axes, and a LayerNorm whose map
    follows the variance (per-O-point walk with a MAP phase)"""
    a = data((4, 8, 32, 64), np.float32, 1e4, seed=9)
    x = loom.asarray(a)
    mu = loom.mean(x, axis=(0, 2, 3), keepdims=True)
    check(loom.mean((x - mu) ** 2, axis=(0, 2, 3), keepdims=True), ref_var(a, (0, 2, 3), keepdims=True), np.float32)
    r = data((64, 4096), np.float32, 50.0, seed=11)
    w = data((4096,), np.float32, 1.0, seed=12)
    xr, wx = loom.asarray(r), loom.asarray(w)
    mu = loom.mean(xr, axis=-1, keepdims=True)
    var = loom.mean((xr - mu) ** 2, axis=-1, keepdims=True)
    got = ((xr - mu) / loom.sqrt(var + 1e-5) * wx).get()
    r64 = r.astype(np.float64)
    m = r64.mean(axis=-1, keepdims=True)
    want = (r64 - m) / np.sqrt(((r64 - m) ** 2).mean(axis=-1, keepdims=True) + 1e-5) * w
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=5e-5)


def test_same_bits_run_after_run():
    a = data((1 << 22,), np.float64, 1e8, seed=13)
    b = data((3, 400000), np.float32, 1e4, seed=14)
    x, y = loom.asarray(a), loom.asarray(b)
    v1, w1 = loom.var(x).get(), loom.var(y, axis=1).get()
    for _ in range(3):
        assert loom.var(x).get().tobytes() == v1.tobytes()
        assert loom.var(y, axis=1).get().tobytes() == w1.tobytes()


_CHILD = r"""
import sys, numpy as np, loom
r = np.random.default_rng(21)
out = []
for shape, axis, dt in [((1 << 21,), None, np.float64), ((3, 300001), 1, np.float32), ((6, 140000), 1, np.float32)]:
    a = (1e4 + r.standard_normal(shape)).astype(dt)
    out.append(np.asarray(loom.var(loom.asarray(a), axis=axis).get(), dtype=np.float64).ravel())
np.save(sys.argv[1], np.concatenate(out))
print(loom.config_info()["host_target"])
"""


def test_switch_two_passes(tmp_path):
    """LOOM_HOST_ONEPASS_VAR=0: the two-pass kernels, under another target description (the in-memory and
    disk caches' key), with results as close to the reference as the one-pass ones"""
    res = {}
    for mode in ("1", "0"):
        env = dict(os.environ, LOOM_HOST_ONEPASS_VAR=mode, LOOM_CACHE_DIR=str(tmp_path / "cache"))
        path = tmp_path / f"v{mode}.npy"
        p = subprocess.run([sys.executable, "-c", _CHILD, str(path)], env=env, capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, p.stderr
        res[mode] = (np.load(path), p.stdout.strip())
    (v1, d1), (v0, d0) = res["1"], res["0"]
    assert d0.endswith(" onepass0") and not d1.endswith(" onepass0") and d0 != d1
    np.testing.assert_allclose(v1, v0, rtol=2e-5)
    assert not np.array_equal(v1, v0)  # another summation: other rounding somewhere


@pytest.mark.parametrize("shape", [(2, 300001), (3, 40000), (2, 32769), (4, 1 << 18)])
def test_same_bits_with_one_thread_or_two(shape):
    """run() of a long row takes the R split's parts (the launcher's plan) and merges them in the same
    order, so the strategy the thread count picks (R split with 2 threads, run() with 1) does not change
    the bits"""
    x = data(shape, np.float64, 1e3, seed=15)
    y = data(shape, np.float32, 1e3, seed=16)
    old = loom.config.num_threads
    try:
        outs = []
        for n in (1, 2):
            loom.config.num_threads = n
            outs.append((loom.var(loom.asarray(x), axis=-1).get().tobytes(),
                         loom.std(loom.asarray(y), axis=1, ddof=1).get().tobytes()))
    finally:
        loom.config.num_threads = old
    assert outs[0] == outs[1]
    check(loom.var(loom.asarray(x), axis=-1), ref_var(x, -1), np.float64)
