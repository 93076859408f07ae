# SPDX-License-Identifier: Apache-2.0
"""float32 log1p over a stride of every float32 of its domain (-1, inf), against np.log1p in float64 rounded
once to float32 (the correctly rounded log1p up to double rounding): within 1 ulp on the host with Loom's own
log1p (codegen/math_log1p.c; LOOM_HOST_POLY_LOG1P=1, float32, the default, and =2, float64; every float32 was
checked once, see the file's comment), 2 with SLEEF's log1pf_u10 (=0) and on a GPU (its device library's
log1pf). The specials (-1, below -1, +-inf, NaN, +-0, subnormals and tiny x returned exactly, the largest
floats without overflow), float16 (computed in float32) and float64 (SLEEF's log1p, as before) inputs, fused
expressions (softplus, binary cross-entropy with logits, Mish) against NumPy in float64, and the generated code:
no call on the host, libdevice's log1pf in the PTX."""
import os

import numpy as np
import pytest

import loom
from conftest import ON_GPU, ulp_distance

VARIANT = os.environ.get("LOOM_HOST_POLY_LOG1P", "1")
OWN = not ON_GPU and VARIANT in ("1", "2")
ULPS = 1 if OWN else 2


def _ref(x):
    with np.errstate(all="ignore"):
        return np.log1p(x.astype(np.float64))


def _log1p(x):
    return loom.asnumpy(loom.log1p(loom.asarray(x)))


EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -1.5, -2.0, -3.4e38, np.nextafter(np.float32(-1), np.float32(0)),
         -0.5, -0.2928932, -0.29289323, 0.41421354, 0.41421357, 1.0, 2.0, 1e-45, -1e-45, 1e-38, 2.9e-8, -2.9e-8,
         3.0e-8, 6e-8, 1e7, 1.6777216e7, 3.3e7, 1e30, 6e37, 1.7e38, 3.4028235e38]


@pytest.mark.parametrize("stride", [997, 1009])
def test_log1p_float32_sweep(stride):
    pos = np.arange(0, 0x7F800000, stride, dtype=np.int64)             # [0, inf)
    neg = np.arange(0x80000000, 0xBF800001, stride, dtype=np.int64)    # [-0, -1]
    x = np.concatenate([pos, neg]).astype(np.uint32).view(np.float32)
    x = np.concatenate([x, np.array(EDGES, np.float32)])
    got, want = _log1p(x), _ref(x).astype(np.float32)
    assert got.dtype == np.float32
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    u = ulp_distance(got[~nan], want[~nan])
    i = np.argmax(u)
    assert u.max() <= ULPS, (x[~nan][i], got[~nan][i], want[~nan][i])


def test_log1p_float32_specials():
    x = np.array([-1.0, -1.0000001, -2.0, -np.inf, np.nan, -np.nan, np.inf, 0.0, -0.0, 3.4028235e38, 1.7e38],
                 np.float32)
    got = _log1p(x)
    assert got[0] == -np.inf
    assert np.all(np.isnan(got[1:6]))
    assert got[6] == np.inf
    assert got[7] == 0.0 and not np.signbit(got[7]) and got[8] == 0.0 and np.signbit(got[8])
    assert np.all(ulp_distance(got[9:], _ref(x[9:]).astype(np.float32)) <= ULPS)   # no overflow near the top


def test_log1p_float32_subnormals_and_tiny():
    # log1p(x) = x - x^2/2 + ...: x itself below 2^-25 (float32), subnormals included
    sub = np.arange(1, 1 << 23, 4099, dtype=np.int32).view(np.float32)
    tiny = np.geomspace(1.2e-38, 2.9e-8, 3000).astype(np.float32)
    x = np.concatenate([sub, -sub, tiny, -tiny])
    got = _log1p(x)
    if OWN:
        assert np.array_equal(got.view(np.int32), x.view(np.int32))
    else:  # a device library may flush subnormals
        assert np.all(np.abs(got - x) <= np.abs(x) * 2.4e-7)
    near = np.geomspace(2.9e-8, 1e-3, 20000).astype(np.float32)              # where x^2/2 starts to count
    near = np.concatenate([near, -near])
    assert ulp_distance(_log1p(near), _ref(near).astype(np.float32)).max() <= ULPS


def test_log1p_float32_views_fused():
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((96, 70)) * 3).astype(np.float32)
    la = loom.asarray(a)
    e = np.exp(a[::2, ::3].astype(np.float64))
    got = loom.asnumpy(loom.log1p(loom.exp(la[::2, ::3])) * 2.0)              # strided, fused softplus
    assert np.all(np.abs(got - 2 * np.log1p(e)) <= 4e-7 * np.abs(2 * np.log1p(e)) + 1e-30)
    t = loom.asnumpy(loom.log1p(loom.abs(la.T)))                                # transposed view
    assert ulp_distance(t, _ref(np.abs(a.T)).astype(np.float32)).max() <= ULPS
    s = loom.asnumpy(loom.log1p(loom.asarray(np.array(0.75, np.float32))))    # 0-d
    assert s.shape == () and ulp_distance(s, np.float32(np.log1p(0.75))) <= ULPS
    e0 = loom.asnumpy(loom.log1p(loom.asarray(np.zeros((0, 3), np.float32))))
    assert e0.shape == (0, 3) and e0.dtype == np.float32


def test_bce_logits_and_mish_float32():
    rng = np.random.default_rng(3)
    z = np.concatenate([rng.standard_normal(300_000) * 4, np.linspace(-100, 100, 20001)]).astype(np.float32)
    y = (rng.random(z.size) < 0.5).astype(np.float32)
    lz, ly = loom.asarray(z), loom.asarray(y)
    z64, y64 = z.astype(np.float64), y.astype(np.float64)
    terms = loom.asnumpy(loom.maximum(lz, 0.0) - lz * ly + loom.log1p(loom.exp(-loom.abs(lz))))
    want = np.maximum(z64, 0) - z64 * y64 + np.log1p(np.exp(-np.abs(z64)))
    assert terms.dtype == np.float32
    # max(z, 0) - z y cancels to 0 for y = 1, z > 0: the error is absolute there, ~|z| ulp(1)
    assert np.all(np.abs(terms - want) <= 4e-7 * np.abs(want) + 1.2e-7 * np.abs(z64) + 1e-30)
    mean = float(loom.asnumpy(loom.mean(loom.maximum(lz, 0.0) - lz * ly + loom.log1p(loom.exp(-loom.abs(lz))))))
    assert abs(mean - want.mean()) <= 1e-5 * abs(want.mean())
    mish = loom.asnumpy(lz * loom.tanh(loom.log1p(loom.exp(lz))))
    want = z64 * np.tanh(np.log1p(np.exp(z64)))
    assert np.all(np.abs(mish - want) <= 5e-7 * np.abs(want) + 1e-7 * np.abs(z64) + 1e-30)


def test_log1p_float16_rounds_once():
    # every float16: computed in float32, rounded to float16; within 1 ulp of float16 of log1p
    h = np.arange(0, 1 << 16, dtype=np.uint16).view(np.float16)
    got = loom.asnumpy(loom.log1p(loom.asarray(h)))
    assert got.dtype == np.float16
    want = _ref(h).astype(np.float16)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert ulp_distance(got[~nan], want[~nan]).max() <= 1


def test_log1p_float64_unchanged():
    # float64 keeps SLEEF's log1p (with math.c's guards near the largest floats and for tiny x)
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal(100_000) * np.exp2(rng.integers(-60, 60, 100_000)),
                        [0.0, -0.0, -1.0, -2.0, np.inf, np.nan, 1e-300, 5e-324, 1.7e308]])
    x = x[(x >= -1) | np.isnan(x) | (x == -2.0)]
    got = loom.asnumpy(loom.log1p(loom.asarray(x)))
    want = _ref(x)
    assert got.dtype == np.float64
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = np.isfinite(want)
    assert np.array_equal(got[~ok & ~np.isnan(want)], want[~ok & ~np.isnan(want)])    # -inf at -1, inf at inf
    assert np.all(np.abs(got[ok] - want[ok]) <= 4.5e-16 * np.abs(want[ok]))


@pytest.mark.skipif(ON_GPU, reason="the host's generated code")
def test_log1p_host_code_has_no_call():
    x = loom.asarray(np.ones(4096, np.float32))
    ll = loom.inspect(loom.log1p(x), what=("llvm",))["llvm"]
    if OWN:
        assert "log1p" not in ll and "call <16 x float> @_ZGV" not in ll
    x64 = loom.asarray(np.ones(4096, np.float64))
    assert "log1p" in loom.inspect(loom.log1p(x64), what=("llvm",))["llvm"]     # float64: SLEEF, as before


def test_log1p_gpu_code_uses_libdevice():
    x = loom.asarray(np.ones(4096, np.float32))
    text = loom.inspect(loom.log1p(x) * 2.0, what="ptx", ptx_arch="sm_90")["ptx"]
    if text.startswith("unavailable"):
        pytest.skip(text)
    # libdevice's __nv_log1pf, linked and inlined (its 1 + x rounded toward zero), not the host's own log1p
    assert "add.rz.f32" in text and ".f64" not in text
