# SPDX-License-Identifier: Apache-2.0
"""Softmax-like row kernels against NumPy in float64: softmax, log_softmax, logsumexp (keepdims and not, the
torch way `(x - m).exp()`), cross-entropy with a gathered target. On the GPU under LOOM_GPU_ONLINE_MAX=1
(off by default), rows too long for the cached row entry run `main`, whose max walk also gathers the sum of
exp(x - max) (codegen/gpu_online_max.c: the online softmax, a running (max, sum) per thread merged in a
fixed order), so the row is read twice, not three times; the switch test compares both settings. Row lengths lie around and above the cached-row limit
(block * 16 points: 16384 at most) and leave partial unrolled blocks; rows with -inf (first, later, all:
NaN as in NumPy), NaN and +inf. On the host the test checks the values only.
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import loom

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)  # the default device of this run
LENGTHS = [1, 9, 1000, 4097, 8000, 16385, 50257]
DTYPES = [np.float32, np.float64]


def rows(n, dtype, seed=0, special=True):
    """4 rows of n: random in [-8, 8), then (when special and n > 2) -inf first and later, a NaN, +inf; a
    fifth row of -inf only."""
    r = np.random.default_rng(seed + n)
    a = (16.0 * r.random((5, n)) - 8.0).astype(dtype)
    if special and n > 2:
        a[1, 0] = -np.inf
        a[1, n // 2] = -np.inf
        a[2, n // 3] = np.nan
        a[3, n - 1] = np.inf
        a[4, :] = -np.inf
    return a


def ref(fn, a):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(fn(np, a.astype(np.float64)), dtype=np.float64)


def check(got, want, dtype, absolute=False):
    got = np.asarray(loom.asnumpy(got), dtype=np.float64)
    assert got.shape == want.shape
    assert np.array_equal(np.isnan(got), np.isnan(want)), (np.argwhere(np.isnan(got) != np.isnan(want))[:5])
    fin = ~np.isnan(want)
    rtol = 2e-6 if dtype == np.float32 else 1e-12
    # log-probabilities: x - m - log(s) cancels near 0, so relative to 1 + |value|
    atol = rtol if absolute else 0.0
    np.testing.assert_array_equal(np.isinf(got[fin]), np.isinf(want[fin]))
    fin &= np.isfinite(want)
    g, w = got[fin], want[fin]
    err = np.abs(g - w) - (rtol * np.abs(w) + atol * (1 + np.abs(w)))
    assert not np.any(err > 0), (g[err > 0][:5], w[err > 0][:5])


def softmax(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def softmax_torch(xp, x):
    e = (x - x.max(-1, keepdims=True))
    e = xp.exp(e)
    return e / e.sum(-1, keepdims=True)


def log_softmax(xp, x):
    z = x - xp.max(x, axis=-1, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=-1, keepdims=True))


def logsumexp_keep(xp, x):
    m = xp.max(x, axis=-1, keepdims=True)
    return xp.log(xp.sum(xp.exp(x - m), axis=-1, keepdims=True)) + m


def logsumexp(xp, x):
    m = xp.max(x, axis=-1, keepdims=True)
    return xp.log(xp.sum(xp.exp(x - m), axis=-1)) + m[..., 0]


FORMS = {"softmax": (softmax, False), "softmax_torch": (softmax_torch, False),
         "log_softmax": (log_softmax, True), "logsumexp_keep": (logsumexp_keep, True),
         "logsumexp": (logsumexp, True)}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("form", list(FORMS))
def test_rows(form, n, dtype):
    fn, absolute = FORMS[form]
    a = rows(n, dtype)
    check(fn(loom, loom.asarray(a)), ref(fn, a), dtype, absolute)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1000, 16385, 50257])
def test_cross_entropy(n, dtype):
    a = rows(n, dtype, special=False)
    t = np.random.default_rng(n).integers(0, n, a.shape[0])

    def ce(xp, x, tt):
        m = xp.max(x, axis=-1, keepdims=True)
        lse = xp.log(xp.sum(xp.exp(x - m), axis=-1)) + m[:, 0]
        return xp.mean(lse - x[xp.arange(x.shape[0]), tt])

    want = ref(lambda xp, x: ce(xp, x, t), a)
    check(ce(loom, loom.asarray(a), loom.asarray(t)), want, dtype, absolute=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_columns(dtype):
    """softmax over axis 0 of a C-contiguous array: the COL `main`, a thread a column"""
    a = rows(3000, dtype).T.copy()

    def col(xp, x):
        e = xp.exp(x - xp.max(x, axis=0, keepdims=True))
        return e / xp.sum(e, axis=0, keepdims=True)

    check(col(loom, loom.asarray(a)), ref(col, a), dtype)


@pytest.mark.skipif(not ON_GPU, reason="the switch changes GPU kernels only")
def test_switch_off_same_values():
    """LOOM_GPU_ONLINE_MAX=0 (read once per process: a child) gives the same values up to rounding"""
    code = ("import numpy as np, loom, sys\n"
            "a = np.load(sys.argv[1])\n"
            "x = loom.asarray(a)\n"
            "e = loom.exp(x - x.max(-1, keepdims=True))\n"
            "np.save(sys.argv[2], loom.asnumpy(e / e.sum(-1, keepdims=True)))\n")
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        a = rows(50257, np.float32)
        np.save(os.path.join(d, "a.npy"), a)
        outs = []
        for v in ("0", "1"):
            env = dict(os.environ, LOOM_GPU_ONLINE_MAX=v)
            out = os.path.join(d, f"o{v}.npy")
            subprocess.run([sys.executable, "-c", code, os.path.join(d, "a.npy"), out], check=True, env=env)
            outs.append(np.load(out).astype(np.float64))
        assert np.array_equal(np.isnan(outs[0]), np.isnan(outs[1]))
        fin = np.isfinite(outs[0])
        np.testing.assert_allclose(outs[1][fin], outs[0][fin], rtol=2e-6, atol=0)
