# SPDX-License-Identifier: Apache-2.0
"""The float16 and division paths of gpuperf11, each case against an independent reference:
- float16 constants as kernel parameters that pass through float16 (passes/lower.c const_value), so that
  `round16(x * c)` is one float16 multiply: the bits of NumPy's float16 arithmetic (NEP 50 weak scalars);
- x ** 3 and x ** 4 of float16 as plain multiplies (codegen/math_pow.c: a widened float16's square is
  exact): the float32 power rounded once, then to float16 (the float64 cube is exact);
- float32 division on NVIDIA GPUs (codegen/nvptx_lower.c): Markstein's step from the correctly rounded
  reciprocal, the float64 quotient outside |a|, |b| in [2^-61, 2^62): bit for bit against IEEE float32
  division for varying divisors and for divisors that are the same along a row (x / max|x|, LayerNorm).
The float16 and power tests run on the default device (the host here, the GPU in scripts/gpu_all.sh); the
division tests need a CUDA device (skipped without one).
"""
import numpy as np
import pytest

import loom

GPU = loom.cuda.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def f16_values(n=20000, seed=0):
    r = np.random.default_rng(seed)
    x = (r.standard_normal(n) * np.exp2(r.integers(-14, 6, n))).astype(np.float16)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 6e-8, -6e-8, 6.1e-5, 65504, -65504, 1.0, -1.0, 0.5,
                        255.9, 256.0, 40.0, -40.0], dtype=np.float16)
    return np.concatenate([special, x])


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint16 if got.dtype == np.float16 else np.uint32),
                          want[~nan].view(np.uint16 if want.dtype == np.float16 else np.uint32))


@pytest.mark.parametrize("c", [0.5, 0.1, 0.044715, 0.7978845608028654, -3.3, 1e-3, 1000.0, 70000.0])
def test_f16_weak_scalar_multiply_add(c):
    x = f16_values()
    g = loom.asarray(x)
    with np.errstate(all="ignore"):
        same_bits(host(g * c), x * c)
        same_bits(host(c * g + 1.0), c * x + 1.0)
        same_bits(host((g - c) * 0.25), (x - c) * 0.25)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_f16_small_integer_powers(n):
    x = f16_values(seed=n)
    got = host(loom.asarray(x) ** n)
    with np.errstate(all="ignore"):
        # float64 x ** n is exact for n <= 4 (11-bit significands); rounded to float32, then to float16
        want = (x.astype(np.float64) ** n).astype(np.float32).astype(np.float16)
        if n == 5:  # not exact in float64 either way: compare with NumPy's float16 power within 1 ulp
            ref = x ** 5
            both = np.isfinite(ref) & np.isfinite(got)
            assert np.array_equal(np.isfinite(got), np.isfinite(ref))
            assert np.all(np.abs(got[both].astype(np.float64) - ref[both]) <= np.spacing(np.abs(ref[both])))
            return
    same_bits(got, want)


def test_f16_gelu_tanh_as_numpy():
    x = f16_values(seed=7)
    g = loom.asarray(x)
    got = host(0.5 * g * (1.0 + loom.tanh(0.7978845608028654 * (g + 0.044715 * g ** 3))))
    with np.errstate(all="ignore"):
        want = 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    assert got.dtype == np.float16
    fin = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    # tanh of float32 within a few float32 ulp: the float16 rounding may differ by one float16 ulp
    diff = np.abs(got[fin].astype(np.float64) - want[fin].astype(np.float64))
    with np.errstate(over="ignore"):
        ulp = np.spacing(np.abs(want[fin])).astype(np.float64)
    assert np.all(diff <= np.minimum(ulp, 32.0) + 6e-8)


def _random_f32(shape, seed, lo=-70, hi=70):
    r = np.random.default_rng(seed)
    bits = r.integers(0, 1 << 23, size=shape, dtype=np.uint32) | (r.integers(127 + lo, 127 + hi, size=shape)
                                                                    .astype(np.uint32) << 23)
    sign = r.integers(0, 2, size=shape, dtype=np.uint32) << 31
    return (bits | sign).view(np.float32)


@needs_gpu
def test_gpu_division_varying_bitwise():
    a = _random_f32(1 << 18, 1, -90, 90)
    b = _random_f32(1 << 18, 2, -90, 90)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 1e-40, 2.0 ** -61, 2.0 ** -62, 2.0 ** 62,
                        2.0 ** 61, 3.4e38, 1.0, -1.0, 1.9999999], dtype=np.float32)
    a = np.concatenate([a, np.repeat(special, special.size)])
    b = np.concatenate([b, np.tile(special, special.size)])
    with np.errstate(all="ignore"):
        same_bits(host(loom.asarray(a) / loom.asarray(b)), a / b)


@needs_gpu
def test_gpu_float16_division_bitwise():
    # float16 operands take the branch-free quotient (nvptx_lower.c, CgMath.half_operands): every pair of a
    # sample of all 2^16 half values (subnormals, zeros of both signs, infinities, NaN, the extremes)
    r = np.random.default_rng(6)
    pick = np.concatenate([r.integers(0, 1 << 16, size=700), [0, 0x8000, 1, 0x8001, 0x3ff, 0x400, 0x7bff, 0xfbff,
                                                              0x7c00, 0xfc00, 0x7e00, 0x3c00, 0xbc00, 0x3bff]])
    v = pick.astype(np.uint16).view(np.float16)
    a, b = np.repeat(v, v.size), np.tile(v, v.size)
    with np.errstate(all="ignore"):
        same_bits(host(loom.asarray(a) / loom.asarray(b)), a / b)
        # a divisor constant along the row (hoisted reciprocal), and softmax in float16
        x = r.standard_normal((64, 2048)).astype(np.float16) * np.float16(4)
        x[0, :7] = [0, -0.0, np.inf, -np.inf, 65504, 6e-8, -6e-8]
        g = loom.asarray(x)
        s = x.astype(np.float32).sum(axis=1, keepdims=True).astype(np.float16)
        same_bits(host(g / loom.asarray(s)), x / s)
        same_bits(host(g / loom.max(loom.abs(g), axis=1, keepdims=True)), x / np.abs(x).max(axis=1, keepdims=True))
        e = np.exp(x - x.max(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True)
        ge = loom.exp(g - g.max(axis=1, keepdims=True))
        got = host(ge / ge.sum(axis=1, keepdims=True))
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=1e-6)


@needs_gpu
@pytest.mark.parametrize("shape", [(64, 4096), (1000, 96), (3, 100003)])
def test_gpu_division_by_row_constant_bitwise(shape):
    x = _random_f32(shape, 3)
    x[0] = 0.0  # 0 / 0
    x[1, 0] = np.inf
    # a subnormal-only row: divisors and dividends outside the fast range (the float64 quotient)
    x[2] = np.random.default_rng(4).integers(1, 1 << 23, size=shape[1], dtype=np.uint32).view(np.float32)
    g = loom.asarray(x)
    with np.errstate(all="ignore"):
        m = np.max(np.abs(x), axis=1, keepdims=True)
        same_bits(host(g / loom.max(loom.abs(g), axis=1, keepdims=True)), x / m)
        # a scalar parameter divisor and its reciprocal as 1 / c
        same_bits(host(g / 3.0), x / np.float32(3.0))
        same_bits(host(1.0 / g), np.float32(1.0) / x)


@needs_gpu
@pytest.mark.parametrize("shape", [(256, 4096), (100, 1000)])
def test_gpu_layernorm_matches_float32_steps(shape):
    r = np.random.default_rng(5)
    x = (r.standard_normal(shape) * 3 + 1).astype(np.float32)
    w, b = r.standard_normal(shape[1]).astype(np.float32), r.standard_normal(shape[1]).astype(np.float32)
    g = loom.asarray(x)
    mu = g.mean(axis=-1, keepdims=True)
    var = ((g - mu) ** 2).mean(axis=-1, keepdims=True)
    got = host((g - mu) / loom.sqrt(var + 1e-5) * loom.asarray(w) + loom.asarray(b))
    # against float32 steps from Loom's own mean and variance (evaluated apart: their sums' order may
    # differ from the fused kernel's by a few ulp, so a tolerance; the division's bits are checked above)
    s = np.sqrt(host(var) + np.float32(1e-5)).astype(np.float32)
    want = ((x - host(mu)) / s) * w + b
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@needs_gpu
@pytest.mark.parametrize("shape", [(300, 4096), (257, 1000), (64, 16), (5, 24)])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gpu_row_kernels_with_row_scalars(shape, dtype):
    """Row reductions reading a buffer that is constant along the row (labels, a per-row scale) run the
    cached vector entry (codegen/gpu_lower.c cvlanes: the row scalar is loaded once)."""
    r = np.random.default_rng(8)
    x = r.standard_normal(shape).astype(dtype)
    scale = (r.random(shape[0]) + 0.5).astype(dtype)
    labels = r.integers(0, shape[1], shape[0])
    gx, gs, gl = loom.asarray(x), loom.asarray(scale), loom.asarray(labels)
    # softmax of x * scale[:, None] (MAP phase reads the row scalar too)
    y = gx * gs[:, None]
    e = loom.exp(y - y.max(axis=-1, keepdims=True))
    got = host(e / e.sum(axis=-1, keepdims=True))
    y64 = x.astype(np.float64) * scale.astype(np.float64)[:, None]
    e64 = np.exp(y64 - y64.max(axis=-1, keepdims=True))
    tol = 2e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(got.astype(np.float64), e64 / e64.sum(axis=-1, keepdims=True), rtol=tol, atol=tol)
    # cross-entropy terms: labels (int64, constant along the row) against an arange (contiguous int64)
    z = gx - gx.max(axis=-1, keepdims=True)
    logp = z - loom.log(loom.exp(z).sum(axis=-1, keepdims=True))
    picked = host(loom.where(gl[:, None] == loom.arange(shape[1]), logp, 0.0).sum(axis=-1))
    z64 = x.astype(np.float64) - x.astype(np.float64).max(axis=-1, keepdims=True)
    lp = z64 - np.log(np.exp(z64).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(picked.astype(np.float64), lp[np.arange(shape[0]), labels], rtol=tol, atol=tol)


def test_row_scalar_buffers_keep_the_vector_entry_ptx():
    """No GPU needed: a row kernel reading a row-constant buffer (labels[:, None]) gets the cached vector
    entry (`_rowcv`, 16-byte loads of the row) in its sm_90 PTX; with LOOM_GPU_VEC_ROW_SCALARS=0 it would
    not (the A/B switch, read at compile time)."""
    x = loom.asarray(np.zeros((64, 256), np.float32))
    s = loom.asarray(np.ones(64, np.float32))
    y = x * s[:, None]
    out = y - y.max(axis=-1, keepdims=True)
    text = loom.inspect(out, what="ptx")["ptx"]
    if text.startswith("unavailable"):
        pytest.skip(text)
    assert "_rowcv(" in text
    assert "ld.global.v4.f32" in text


def test_unrolled_reduction_keeps_divisions_straight_ptx():
    """No GPU needed: a divisor loaded at every point (sum(x / y, axis=1)) has no reciprocal to share, so no
    entry takes Markstein's step and its range branch (codegen/nvptx_lower.c reads_memory: batchnorm's
    per-channel divisor ran 0.14 -> 0.24 ms on the H200 with it); a row's own reduction as the divisor
    (x / x.sum(axis=1, keepdims=True)) does, in the cached entries (loads already in registers)."""
    x = loom.asarray(np.ones((64, 4096), np.float32))
    y = loom.asarray(np.ones((64, 4096), np.float32))
    import re

    def bodies(e):
        text = loom.inspect(e, what="ptx")["ptx"]
        if text.startswith("unavailable"):
            pytest.skip(text)
        return {m.group(1): m.group(2) for m in re.finditer(r"\.entry (\S+)\((.*?)\n\}\n", text, re.S)}
    per_point = bodies((x / y).sum(axis=1))
    assert all(v.count(", 123;") == 0 for v in per_point.values())
    by_row = bodies(x / x.sum(axis=1, keepdims=True))
    rowc = next(v for k, v in by_row.items() if k.endswith("_rowc"))
    assert rowc.count(", 123;") >= 16
