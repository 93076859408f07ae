# SPDX-License-Identifier: Apache-2.0
"""float32 tanh over a stride of every float32 in [-10, 10], against np.tanh in float64 rounded once to
float32 (the correctly rounded tanh up to double rounding: wrong only within ~2^-29 ulp of a tie): within
1 ulp on the host (codegen/math_tanh.c's rational, LOOM_HOST_POLY_TANH=1, the default), 3 with SLEEF's
tanhf_u35 (=0, documented within 3.5), 5 with the float32-evaluated rational (=2, A/B only), 2 on a GPU
(its device library's tanhf). The specials (+-inf, NaN, -0, subnormals, the saturation at |x| = 9), the
float16 / strided / 0-d / empty paths, and GELU's tanh form and Mish against NumPy in float64."""
import os

import numpy as np
import pytest

import loom
from conftest import ON_GPU, ulp_distance

_HOST_ULPS = {"0": 3, "1": 1, "2": 5}
VARIANT = os.environ.get("LOOM_HOST_POLY_TANH", "1")
ULPS = 2 if ON_GPU else _HOST_ULPS.get(VARIANT, 3)
OWN = not ON_GPU and VARIANT in ("1", "2")  # Loom's rational: tiny x and subnormals give x exactly
SLACK = max(1.0, ULPS / 3)                  # the composites' bounds, for the 5-ulp A/B variant


def _ref(x):
    return np.tanh(x.astype(np.float64))


EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 9.0, -9.0, np.nextafter(9.0, 0.0), np.nextafter(9.0, 10.0), 9.02,
         -9.02, 8.9, 7.9, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754942e-38, 1e-20, 3e-4, 4e-4, 5e-4, 0.625, 3.97, 20.0,
         -1e6, 1e20, 3.4e38, -3.4e38]


@pytest.mark.parametrize("stride", [997, 1009])
def test_tanh_float32_sweep(stride):
    top = int(np.array(10.0, np.float32).view(np.int32))
    bits = np.arange(0, top, stride, dtype=np.int32)
    x = bits.view(np.float32)
    x = np.concatenate([x, -x, np.array(EDGES, np.float32)])
    got = loom.asnumpy(loom.tanh(loom.asarray(x)))
    want = _ref(x).astype(np.float32)
    assert got.dtype == np.float32
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)                                # NaN propagates
    u = ulp_distance(got[~nan], want[~nan])
    assert u.max() <= ULPS, (x[~nan][np.argmax(u)], got[~nan][np.argmax(u)], want[~nan][np.argmax(u)])
    zero = x == 0
    assert np.array_equal(np.signbit(got[zero]), np.signbit(x[zero]))       # tanh(-0) = -0
    assert np.all(got[np.abs(x) >= 9.02] == np.sign(x[np.abs(x) >= 9.02]))  # saturated, incl. +-inf
    if VARIANT != "2" or ON_GPU:  # the float32-evaluated rational can round to 1 + 2^-23 (A/B only)
        assert np.all(np.abs(got[~nan]) <= 1.0)


def test_tanh_float32_subnormals_and_tiny():
    # tanh(x) = x - x^3/3 + ...: x itself below ~2^-12 (float32), subnormals included
    sub = np.arange(1, 1 << 23, 4099, dtype=np.int32).view(np.float32)
    tiny = np.geomspace(1.2e-38, 2.4e-4, 2000).astype(np.float32)
    x = np.concatenate([sub, -sub, tiny, -tiny])
    got = loom.asnumpy(loom.tanh(loom.asarray(x)))
    if OWN:
        assert np.array_equal(got.view(np.int32), x.view(np.int32))
    else:  # a device library may flush subnormals; SLEEF's tanhf_u35 is 1 ulp off near 2e-4
        assert np.all(np.abs(got - x) <= np.abs(x) * 2.4e-7)


def test_tanh_float32_views_broadcast_fused():
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((96, 70)) * 3).astype(np.float32)
    b = (rng.standard_normal(35) * 3).astype(np.float32)
    la, lb = loom.asarray(a), loom.asarray(b)
    got = loom.asnumpy(loom.tanh(la[::2, ::2] - lb[None, :]) * 0.5 + 0.5)     # strided, broadcast, fused
    t = (a[::2, ::2] - b[None, :]).astype(np.float32)
    want = _ref(t) * 0.5 + 0.5
    assert np.max(np.abs(got - want)) <= 2e-7
    tt = loom.asnumpy(loom.tanh(la.T))                                         # transposed view
    assert np.max(ulp_distance(tt, _ref(a.T).astype(np.float32))) <= ULPS
    s = loom.asnumpy(loom.tanh(loom.asarray(np.array(0.75, np.float32))))     # 0-d
    assert s.shape == () and abs(float(s) - np.tanh(0.75)) <= 6e-8
    e = loom.asnumpy(loom.tanh(loom.asarray(np.zeros((0, 3), np.float32))))
    assert e.shape == (0, 3) and e.dtype == np.float32


def test_tanh_float16_rounds_once():
    # every finite float16: computed in float32, rounded to float16; within 1 ulp of float16 of tanh
    h = np.arange(0, 1 << 16, dtype=np.uint16).view(np.float16)
    h = h[np.isfinite(h)]
    got = loom.asnumpy(loom.tanh(loom.asarray(h)))
    assert got.dtype == np.float16
    want = _ref(h).astype(np.float16)
    assert ulp_distance(got, want).max() <= 1


def test_gelu_tanh_and_mish_float32():
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.standard_normal(200_000) * 4, np.linspace(-30, 30, 6001)]).astype(np.float32)
    lx = loom.asarray(x)
    x64 = x.astype(np.float64)
    gelu = loom.asnumpy(0.5 * lx * (1.0 + loom.tanh(0.7978845608028654 * (lx + 0.044715 * lx ** 3))))
    want = 0.5 * x64 * (1.0 + np.tanh(0.7978845608028654 * (x64 + 0.044715 * x64 ** 3)))
    assert gelu.dtype == np.float32
    # 1 + tanh cancels for x < 0: the error is absolute there, ~|x| ulp(1)
    assert np.all(np.abs(gelu - want) <= SLACK * (4e-7 * np.abs(want) + 1.2e-7 * np.abs(x64)) + 1e-30)
    mish = loom.asnumpy(lx * loom.tanh(loom.log1p(loom.exp(lx))))
    want = x64 * np.tanh(np.log1p(np.exp(x64)))
    assert mish.dtype == np.float32
    assert np.all(np.abs(mish - want) <= SLACK * (5e-7 * np.abs(want) + 1e-7 * np.abs(x64)) + 1e-30)
