# SPDX-License-Identifier: Apache-2.0
"""float32 exp over a stride of every float32 in [-104, 89], against np.exp in float64 rounded once to float32:
within 1 ulp on the host (codegen/math_exp.c, LOOM_HOST_POLY_EXP=1, the default; SLEEF's expf_u10 with =0,
also 1), 2 on a GPU (its device library's expf). The specials (+-inf, NaN, -0, the overflow and underflow
edges, subnormal results), float16 inputs (the float16 path must stay vectorized: its compares are kept in
float32), and the composites that use exp (softmax, logsumexp-like, SiLU) against NumPy in float64."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom
from conftest import ON_GPU, ulp_distance

ULPS = 2 if ON_GPU else 1

EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 88.72283, 88.722839, 88.72284, 88.8, 89.0, 100.0, 3.4e38,
         -87.33654, -87.33655, -100.0, -103.27893, -103.97207, -103.972084, -103.99, -104.0, -150.0, -3.4e38,
         1e-45, -1e-45, 1e-30, -1e-30, 2.9802322e-08, -2.9802322e-08, 0.34657359, -0.34657359, 1.0, -1.0]


def _want(x):
    with np.errstate(over="ignore", under="ignore"):
        return np.exp(x.astype(np.float64)).astype(np.float32)


@pytest.mark.parametrize("stride", [4099, 4111])
def test_exp_float32_sweep(stride):
    pos = np.arange(0, int(np.array(89.0, np.float32).view(np.int32)), stride, dtype=np.int32).view(np.float32)
    neg = -np.arange(0, int(np.array(104.0, np.float32).view(np.int32)), stride, dtype=np.int32).view(np.float32)
    x = np.concatenate([pos, neg, np.array(EDGES, np.float32)])
    got = loom.asnumpy(loom.exp(loom.asarray(x)))
    want = _want(x)
    assert got.dtype == np.float32
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    u = ulp_distance(got[~nan], want[~nan])
    assert u.max() <= ULPS, (x[~nan][np.argmax(u)], got[~nan][np.argmax(u)], want[~nan][np.argmax(u)])


def test_exp_float32_edges_exactly():
    x = np.array(EDGES, np.float32)
    got = loom.asnumpy(loom.exp(loom.asarray(x)))
    want = _want(x)
    big = np.abs(x) >= 88.8
    assert np.array_equal(got[big & (x > 0)], want[big & (x > 0)])  # inf, and no finite value above it
    assert np.all(got[big & (x < -103.98)] == 0.0)                  # underflow to +0
    assert np.all(got[x == 0] == 1.0)
    if not ON_GPU:  # subnormal results (a device library may flush them)
        sub = (x < -87.34) & (x > -103.98)
        assert np.all(ulp_distance(got[sub], want[sub]) <= 1)
        assert np.all(got[x == np.float32(-103.27893)] > 0)  # ~2^-149: the smallest subnormal


def test_exp_float32_subnormal_range_dense():
    x = np.linspace(-103.98, -87.0, 200001).astype(np.float32)
    got = loom.asnumpy(loom.exp(loom.asarray(x)))
    if ON_GPU:
        np.testing.assert_allclose(got, _want(x), rtol=1e-6, atol=1e-37)
    else:
        assert ulp_distance(got, _want(x)).max() <= 1


def test_exp_float16_and_strided_views():
    rng = np.random.default_rng(1)
    h = (rng.standard_normal(70001) * 4).astype(np.float16)
    h[::101] = np.nan
    h[5], h[6], h[7] = np.inf, -np.inf, 11.1  # exp(11.1) overflows float16
    got = loom.asnumpy(loom.exp(loom.asarray(h)))
    with np.errstate(over="ignore"):
        want = np.exp(h.astype(np.float64)).astype(np.float16)
    assert got.dtype == np.float16
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert ulp_distance(got[~nan], want[~nan]).max() <= 1
    m = (rng.standard_normal((300, 200)) * 10).astype(np.float32)
    for v in (m[::3, 1::2], m.T, m[7]):
        u = ulp_distance(loom.asnumpy(loom.exp(loom.asarray(m)[..., :] if v is m else loom.asarray(v))), _want(v))
        assert u.max() <= ULPS
    z = np.float32(-3.25)
    assert ulp_distance(loom.asnumpy(loom.exp(loom.asarray(z))), _want(np.asarray(z))) <= ULPS
    assert loom.asnumpy(loom.exp(loom.asarray(np.zeros((0, 3), np.float32)))).shape == (0, 3)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_softmax_and_silu_against_float64(dtype):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((64, 1000)) * 3).astype(dtype)
    lx = loom.asarray(x)
    e = loom.exp(lx - loom.max(lx, axis=-1, keepdims=True))
    got = loom.asnumpy(e / loom.sum(e, axis=-1, keepdims=True)).astype(np.float64)
    x64 = x.astype(np.float64)
    e64 = np.exp(x64 - x64.max(-1, keepdims=True))
    want = e64 / e64.sum(-1, keepdims=True)
    tol = 2e-3 if dtype == "float16" else 2e-6
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 1e-3)
    got = loom.asnumpy(lx / (1 + loom.exp(-lx))).astype(np.float64)
    np.testing.assert_allclose(got, x64 / (1 + np.exp(-x64)), rtol=tol, atol=5e-4 if dtype == "float16" else 1e-9)


@pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")
def test_ir_is_inline_and_the_knob_restores_sleef():
    code = ("import loom, numpy as np, re\n"
            "x = loom.asarray(np.ones(1 << 12, np.float16))\n"
            "with loom.capture_dumps('llvm', echo=False) as d:\n"
            "    loom.asnumpy(loom.fuse(kernel_name='exp_knob')(lambda x: loom.exp(x))(x))\n"
            "t = d.text\n"
            "print('expf' in t, 'llvm.rint.v' in t, bool(re.search(r'fcmp \\w+ (<\\d+ x )?half', t)))\n")
    for knob, want in (("1", "False True False"), ("0", "True False False")):
        env = dict(os.environ, LOOM_HOST_POLY_EXP=knob, LOOM_HOST_DISK_CACHE="0")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == want, (knob, out.stdout)
