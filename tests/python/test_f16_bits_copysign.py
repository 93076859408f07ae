"""Float16 arithmetic and copysign bits against NumPy, on the default device (the H200 in scripts/gpu_all.sh,
the host in CI):
- + - * / of float16 pairs bit for bit (NumPy computes in float32 and rounds once; the NVPTX backend computes
  + - * in float16 directly, add.rn.f16 / mul.rn.f16: the same bits, 24 >= 2 * 11 + 2): a sample of every
  bit pattern (subnormals, infinities, NaNs, signed zeros) plus the specials against each other;
- llvm.copysign.f32 written as bit operations on NVPTX (codegen/nvptx_lower.c cg_nvptx_copysign_bits;
  LOOM_GPU_COPYSIGN_BITS=0: LLVM's sign test and select): np.copysign and tanh (libdevice's tanhf ends in a
  copysign) keep every sign, -0.0 and NaN included, float16 tanh over every float16 value, and the bits
  are the same with the knob off (a subprocess);
- the PTX of a float32 tanh kernel holds no sign-bit test and select (no GPU needed).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

SPECIALS16 = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400, 0x3c00, 0xbc00, 0x7bff,
                       0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x3555, 0x1400, 0x5bff], dtype=np.uint16)


def same_bits(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan)
    bits = {2: np.uint16, 4: np.uint32}[ref.dtype.itemsize]
    bad = np.flatnonzero(got[~nan].view(bits) != ref[~nan].view(bits))
    assert bad.size == 0, (bad.size, got[~nan][bad[:5]], ref[~nan][bad[:5]])


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide"])
def test_f16_arith_bits(op):
    r = np.random.default_rng(11)
    a = r.integers(0, 1 << 16, size=1 << 18, dtype=np.uint32).astype(np.uint16)
    b = r.integers(0, 1 << 16, size=1 << 18, dtype=np.uint32).astype(np.uint16)
    sa, sb = np.meshgrid(SPECIALS16, SPECIALS16)
    a = np.concatenate([a, sa.ravel(), a[:4096] & 0x83ff]).view(np.float16)  # subnormals against anything
    b = np.concatenate([b, sb.ravel(), b[:4096]]).view(np.float16)
    with np.errstate(all="ignore"):
        ref = getattr(np, op)(a, b)
    got = getattr(loom, op)(loom.asarray(a), loom.asarray(b)).get()
    assert got.dtype == np.float16
    same_bits(got, ref)


def f32_cases():
    r = np.random.default_rng(3)
    x = np.concatenate([r.standard_normal(1 << 16) * 4, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45,
                        -1e-45, 0.59, -0.59, 0.61, -0.61, 9.0, -9.0, 9.02, -9.02, 1e30, -1e30], np.float32)]).astype(np.float32)
    x[-3] = -np.float32(np.nan)
    return x


def test_copysign_f32_bits():
    x = f32_cases()
    y = np.roll(x, 7)
    y[:4] = np.array([-0.0, 0.0, -np.nan, np.nan], np.float32)
    same_bits(loom.copysign(loom.asarray(x), loom.asarray(y)).get(), np.copysign(x, y))
    got = loom.copysign(loom.asarray(x), loom.asarray(y)).get()
    assert np.array_equal(np.signbit(got), np.signbit(y))  # NaN magnitudes too


def test_tanh_signs_f32():
    x = f32_cases()
    got, ref = loom.tanh(loom.asarray(x)).get(), np.tanh(x)
    fin = ~np.isnan(x)  # a NaN's sign is not NumPy's contract (the GPU's tanhf returns the canonical NaN)
    assert np.array_equal(np.isnan(got), ~fin)
    assert np.array_equal(np.signbit(got[fin]), np.signbit(x[fin]))
    np.testing.assert_allclose(got[fin], ref[fin], rtol=4e-7, atol=0)


def test_tanh_f16_every_value():
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    with np.errstate(invalid="ignore"):
        got, ref = loom.tanh(loom.asarray(x)).get(), np.tanh(x)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    fin = ~np.isnan(x)
    assert np.array_equal(np.signbit(got[fin]), np.signbit(x[fin]))
    ulps = np.abs(got[fin].view(np.int16).astype(np.int32) - ref[fin].view(np.int16).astype(np.int32))
    assert ulps.max() <= 1 and np.mean(ulps != 0) < 1e-3


def test_knob_off_same_bits():
    code = ("import numpy as np, loom, sys; x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16);"
            "g = loom.asarray(x); y = (0.5 * g * (1.0 + loom.tanh(0.7978845608028654 * (g + 0.044715 * g ** 3)))).get();"
            "z = loom.tanh(loom.asarray(x.astype(np.float32) * 3)).get();"
            "sys.stdout.write(y.view(np.uint16).tobytes().hex() + ' ' + z.view(np.uint32).tobytes().hex())")
    outs = []
    for knob in ("1", "0"):
        env = dict(os.environ, LOOM_GPU_COPYSIGN_BITS=knob)
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        outs.append(p.stdout)
    assert outs[0] == outs[1]


def test_ptx_tanh_no_sign_select():
    x = loom.asarray(np.ones(64, dtype=np.float32))
    ptx = loom.inspect(loom.tanh(x), what=("ptx",))["ptx"]
    if ptx.startswith("unavailable"):
        pytest.skip(ptx)
    assert "or.b32" in ptx and "neg.f32" not in ptx and "setp.eq.b32" not in ptx
