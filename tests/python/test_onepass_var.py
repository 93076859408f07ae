# SPDX-License-Identifier: Apache-2.0
"""Variances against an independent reference: a long double two-pass loop over the same data (NumPy's own
var is two-pass too). On the GPU these kernels gather the squared deviations in the mean's pass
(codegen/gpu_moments.c: blocked Welford moments relative to the row's first value, Chan's merge across
threads and parts); the host does the same for rows it splits into parts (codegen/host_moments.c, tested
in test_host_onepass_var.py). Shapes are chosen so that every GPU path runs: the phase
split over all points, rows and columns (long R), `main` per row / column, the cached row entry, a
LayerNorm whose rows are split. Data with a large mean against its spread (1e4 + N(0, 1) in float32,
1e8 + N(0, 1) in float64), an outlier as the first value, NaN, inf, one point, empty, ddof, keepdims.
"""
import warnings

import numpy as np
import pytest

import loom


def ref_var(a, axis, ddof=0, keepdims=False):
    """long double two-pass variance (np.longdouble: 80-bit on x86)"""
    x = np.asarray(a, dtype=np.longdouble)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = x.mean(axis=axis, keepdims=True)
        n = x.size if axis is None else np.prod([x.shape[i] for i in np.atleast_1d(axis)])
        q = ((x - m) ** 2).sum(axis=axis, keepdims=keepdims)
        return q / max(n - ddof, 0)


def data(shape, dtype, offset, seed=0):
    r = np.random.default_rng(seed)
    return (offset + r.standard_normal(shape)).astype(dtype)


def check(got, want, dtype):
    got = np.asarray(got.get() if hasattr(got, "get") else got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    fin = ~np.isnan(want)
    rtol = 2e-5 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=0)


CASES = [  # (shape, axis): all points (split), rows (short / long: cached, main, split), columns, middle, two axes
    ((1 << 20,), None), ((300, 1000), 1), ((6, 70000), 1), ((200000, 8), 0), ((64, 300), 0), ((8, 4000, 6), 1),
    ((4, 16, 32, 40), (0, 2, 3)), ((3, 5, 7), None),
]


@pytest.mark.parametrize("dtype,offset", [(np.float32, 1e4), (np.float64, 1e8)])
@pytest.mark.parametrize("shape,axis", CASES)
def test_var_large_mean(dtype, offset, shape, axis):
    a = data(shape, dtype, offset, seed=len(shape))
    x = loom.asarray(a)
    check(loom.var(x, axis=axis), ref_var(a, axis), dtype)


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_var_std_ddof_keepdims(ddof, keepdims):
    a = data((40, 3000), np.float64, 1e8, seed=3)
    x = loom.asarray(a)
    check(loom.var(x, axis=1, ddof=ddof, keepdims=keepdims), ref_var(a, 1, ddof, keepdims), np.float64)
    check(loom.std(x, axis=0, ddof=ddof, keepdims=keepdims), np.sqrt(ref_var(a, 0, ddof, keepdims)), np.float64)
    check(loom.std(x, ddof=ddof), np.sqrt(ref_var(a, None, ddof)), np.float64)


@pytest.mark.parametrize("dtype,offset", [(np.float32, 1e4), (np.float64, 1e8)])
def test_outlier_first_value(dtype, offset):
    """the first value of every row (the moments' shift) far from the rest"""
    a = data((16, 50000), dtype, offset, seed=5)
    a[:, 0] = offset + 1e3
    b = data((1 << 20,), dtype, offset, seed=6)
    b[0] = offset - 1e3
    check(loom.var(loom.asarray(a), axis=1), ref_var(a, 1), dtype)
    check(loom.var(loom.asarray(b)), ref_var(b, None), dtype)


def test_nan_inf():
    a = data((5, 40000), np.float64, 0.0, seed=7)
    a[1, 123] = np.nan
    a[2, 40] = np.inf
    a[3, 0] = -np.inf
    a[4, 7] = np.inf
    a[4, 9] = -np.inf
    with np.errstate(all="ignore"):
        got = loom.var(loom.asarray(a), axis=1).get()
        want = np.var(a, axis=1)
    assert np.isfinite(got[0]) and np.all(np.isnan(got[1:])) and np.all(np.isnan(want[1:]))
    check(got[:1], ref_var(a[:1], 1), np.float64)
    b = data((1 << 20,), np.float32, 0.0, seed=8)
    b[999] = np.inf
    assert np.isnan(loom.var(loom.asarray(b)).get())


def test_one_point_and_empty():
    a = np.array([[3.5], [1e300], [-2.0]])
    x = loom.asarray(a)
    check(loom.var(x, axis=1), np.zeros(3), np.float64)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = loom.var(loom.asarray(np.zeros((3, 0))), axis=1).get()
        got1 = loom.var(x, axis=1, ddof=1).get()
    assert got.shape == (3,) and np.all(np.isnan(got))
    assert np.all(np.isnan(got1) | np.isinf(got1))  # 0 / 0 (NumPy: nan)


def test_batchnorm_stats_as_in_the_suite():
    a = data((4, 8, 32, 64), np.float32, 1e4, seed=9)
    x = loom.asarray(a)
    mu = loom.mean(x, axis=(0, 2, 3), keepdims=True)
    v = loom.mean((x - mu) ** 2, axis=(0, 2, 3), keepdims=True)
    check(v, ref_var(a, (0, 2, 3), keepdims=True), np.float32)
    b = data((100000, 16), np.float32, 1e4, seed=10)
    y = loom.asarray(b)
    check(loom.var(y, axis=0), ref_var(b, 0), np.float32)
    check(loom.mean(y, axis=0), b.astype(np.float64).mean(axis=0), np.float32)


def test_layernorm_long_rows():
    """rows longer than the cached entry takes (16 x 1024 points on the GPU): the split reads the
    variance from phase 0's finished record in the map's pass"""
    a = data((3, 40000), np.float32, 50.0, seed=11)
    w = data((40000,), np.float32, 1.0, seed=12)
    x, wx = loom.asarray(a), loom.asarray(w)
    mu = loom.mean(x, axis=-1, keepdims=True)
    var = loom.mean((x - mu) ** 2, axis=-1, keepdims=True)
    got = ((x - mu) / loom.sqrt(var + 1e-5) * wx).get()
    a64 = a.astype(np.float64)
    m = a64.mean(axis=-1, keepdims=True)
    want = (a64 - m) / np.sqrt(((a64 - m) ** 2).mean(axis=-1, keepdims=True) + 1e-5) * w
    # float32 mean of 40000 values near 50: a few ulps of 50 (3.8e-6 each) of error in mu, whatever the
    # summation tree, move every output of the row by that / sd (~1): H200 2026-12-02 10:12 saw 1.7e-5
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=5e-5)
