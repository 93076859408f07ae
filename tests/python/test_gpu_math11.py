# SPDX-License-Identifier: Apache-2.0
"""float32 math on GPU targets (session 13, issue 11), each against an independent float64 reference:
- float32 x ** n (3 <= |n| <= 8) computed in float64 and rounded once on chips whose float64 is fast
  (cg_gpu.h fast_f64: sm_60/70/80/90/10x, gfx90a/gfx94x; codegen/math_pow.c), the float32-pair product
  elsewhere (sm_86/sm_89 consumer chips, the host): the PTX tests need no GPU, the bits tests compare with
  float32(float64 power) (correctly rounded: the float64 power of a float32 is exact for n <= 3 and within
  2^-50 relative for n <= 8) on the default device (the host here, the GPU in scripts/gpu_all.sh);
- float32 hypot (codegen/math.c: in float64, on GPUs and the host) within NumPy's own float32 hypot's ulp error.
"""
import re

import numpy as np
import pytest

import loom

needs_gpu = pytest.mark.skipif(not loom.cuda.is_available(), reason="no CUDA device visible to loom")


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def ptx(expr, arch):
    text = loom.inspect(expr, what="ptx", ptx_arch=arch)["ptx"]
    if text.startswith("unavailable"):
        pytest.skip(text)
    return text


def f32_values(n=40000, seed=11):
    r = np.random.default_rng(seed)
    x = (r.standard_normal(n) * np.exp2(r.integers(-40, 40, n))).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.17e-38, -1.17e-38, 3.4e38, -3.4e38,
                        1.0, -1.0, 0.5, 2.0, 1e13, -1e13, 1e-13, 6.98e12, 2.2e9, 1.9e6, 4.3e4], dtype=np.float32)
    return np.concatenate([special, x, np.nextafter(x, np.float32(np.inf))])


@pytest.mark.parametrize("arch,fast", [("sm_90", True), ("sm_80", True), ("sm_70", True), ("sm_86", False),
                                       ("sm_89", False), ("sm_75", False)])
@pytest.mark.parametrize("n", [3, 4, 5, 7])
def test_f32_int_power_uses_f64_only_on_fast_f64_chips(arch, fast, n):
    x = loom.asarray(np.linspace(-3, 3, 4096, dtype=np.float32))
    text = ptx(x ** n, arch)
    has_f64_mul = "mul.rn.f64" in text or "mul.f64" in text
    assert ("cvt.f64.f32" in text and has_f64_mul) == fast
    assert ("cvt.rn.f32.f64" in text) == fast
    # the float32 pairs' exact products: fma.rn.f32 with a negated product (absent on the float64 path)
    assert (len(re.findall(r"fma\.rn\.f32", text)) > 0) != fast


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, -8])
def test_f32_int_power_is_correctly_rounded(n):
    """Default device: bits of float32(float64(x) ** n) (NumPy's own float32 power is 1 ulp off in ~10 %)."""
    v = f32_values()
    got = host(loom.asarray(v) ** n)
    with np.errstate(all="ignore"):
        want = (v.astype(np.float64) ** n).astype(np.float32)
    assert got.dtype == np.float32
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    g, w, vv = got[~nan], want[~nan], v[~nan]
    # the host's (and slow-float64 GPUs') float32 pairs lose their low part where it falls below the
    # normal range (results under ~2^-100): there within 1 ulp; the float64 path is exact everywhere
    exact = (np.abs(w) >= np.float32(2.0 ** -100)) | np.isinf(w) | (n < 0) | (n == 2)
    bad = np.flatnonzero((g.view(np.uint32) != w.view(np.uint32)) & exact)
    assert bad.size == 0, (n, vv[bad[:5]], g[bad[:5]], w[bad[:5]])
    d = np.abs(g.view(np.int32).astype(np.int64) - w.view(np.int32).astype(np.int64))
    assert d[~exact].max(initial=0) <= 1


def ulps(got, want64):
    """|got - want| in units of float32 ulp at want (float64 want)."""
    w32 = want64.astype(np.float32)
    ulp = np.abs(np.spacing(np.abs(w32).astype(np.float32))).astype(np.float64)
    ulp = np.maximum(ulp, np.float64(2.0 ** -149))
    return np.abs(got.astype(np.float64) - want64) / ulp


@needs_gpu
def test_f32_hypot_within_numpy():
    """On the GPU (the host's float32 hypot is the same float64 computation: tests/python/test_hypot_f32.py)."""
    r = np.random.default_rng(3)
    a = (r.standard_normal(30000) * np.exp2(r.integers(-60, 60, 30000))).astype(np.float32)
    b = (r.standard_normal(30000) * np.exp2(r.integers(-60, 60, 30000))).astype(np.float32)
    a[:6] = [0.0, -0.0, np.inf, 1e-45, 3e38, np.nan]
    b[:6] = [-0.0, np.nan, 1.0, 1e-45, 3e38, np.inf]
    got = host(loom.hypot(loom.asarray(a), loom.asarray(b)))
    want = np.hypot(a.astype(np.float64), b.astype(np.float64))
    with np.errstate(over="ignore"):
        inf = np.isinf(want.astype(np.float32))
    assert np.array_equal(np.isinf(got), inf)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    fin = ~inf & ~np.isnan(want)
    assert ulps(got[fin], want[fin]).max() <= max(0.5001, ulps(np.hypot(a, b)[fin], want[fin]).max())
