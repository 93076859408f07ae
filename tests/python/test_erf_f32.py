# SPDX-License-Identifier: Apache-2.0
"""float32 erf over a stride of every float32 in [-8, 8], against math.erf in float64 rounded once:
within 1 ulp on the host (codegen/math_erf.c's own polynomials), 2 on a GPU (its device library's erff,
documented within 2 ulp). The specials, subnormals, the branch points (|x| = 1, 4) and erf's saturation near 3.92 too,
and the float16 / broadcast / strided paths through the same code."""
import math

import numpy as np
import pytest

import loom
from conftest import ON_GPU, ulp_distance

ULPS = 2 if ON_GPU else 1


def _ref(x):
    return np.array([math.erf(v) if not math.isnan(v) else math.nan for v in x.astype(np.float64)])


EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, np.nextafter(1.0, 0.0), np.nextafter(1.0, 2.0), 4.0,
         -4.0, 3.9, 3.92, 3.93, -3.95, 1e-45, -1e-45, 1e-40, 1.1754942e-38, 1e-20, 0.5, 2.0, 10.0, 3.4e38]


@pytest.mark.parametrize("stride", [997, 1009])
def test_erf_float32_sweep(stride):
    top = int(np.array(8.0, np.float32).view(np.int32))
    bits = np.arange(0, top, stride, dtype=np.int32)
    x = bits.view(np.float32)
    x = np.concatenate([x, -x, np.array(EDGES, np.float32)])
    got = loom.asnumpy(loom.erf(loom.asarray(x)))
    want = _ref(x).astype(np.float32)
    assert got.dtype == np.float32
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    u = ulp_distance(got[~nan], want[~nan])
    assert u.max() <= ULPS, (x[~nan][np.argmax(u)], got[~nan][np.argmax(u)], want[~nan][np.argmax(u)])
    zero = x == 0
    assert np.array_equal(np.signbit(got[zero]), np.signbit(x[zero]))       # erf(-0) = -0
    assert np.all(got[np.abs(x) >= 3.95] == np.sign(x[np.abs(x) >= 3.95]))  # saturated, incl. +-inf


def test_erf_float32_views_broadcast_fused():
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((96, 70)) * 2).astype(np.float32)
    b = (rng.standard_normal(35) * 2).astype(np.float32)
    la, lb = loom.asarray(a), loom.asarray(b)
    got = loom.asnumpy(loom.erf(la[::2, ::2] - lb[None, :]) * 0.5 + 0.5)      # strided, broadcast, fused
    t = (a[::2, ::2] - b[None, :]).astype(np.float32)
    want = _ref(t.ravel()).reshape(t.shape) * 0.5 + 0.5
    assert np.max(np.abs(got - want)) <= 2e-7
    s = loom.asnumpy(loom.erf(loom.asarray(np.array(0.75, np.float32))))      # 0-d
    assert s.shape == () and abs(float(s) - math.erf(0.75)) <= 6e-8
    e = loom.asnumpy(loom.erf(loom.asarray(np.zeros((0, 3), np.float32))))
    assert e.shape == (0, 3) and e.dtype == np.float32


def test_erf_float16_rounds_once():
    # every finite float16: computed in float32, rounded to float16; within 1 ulp of float16 of math.erf
    h = np.arange(0, 1 << 16, dtype=np.uint16).view(np.float16)
    h = h[np.isfinite(h)]
    got = loom.asnumpy(loom.erf(loom.asarray(h)))
    want = _ref(h.astype(np.float32)).astype(np.float16)
    assert ulp_distance(got, want).max() <= 1
