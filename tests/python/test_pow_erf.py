# SPDX-License-Identifier: Apache-2.0
"""Powers by constant exponents (codegen/math_pow.c: multiplies, sqrt, divides instead of pow) and
erf/erfc, against independent references: NumPy's power (the same special values; float32 within 1 ulp
of a correctly rounded power), a float64 loop of math.erf/math.erfc. Broadcasts, strided views, 0-d,
empty arrays, NaN/inf/-0, weak Python scalars and strong constants, integer overflow (wrapping)."""
import math
from typing import Any

import numpy as np
import pytest

import loom

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -3.5, 1e-30, 1e30, 5e-324]
EXPONENTS = [0, 1, 2, 3, 4, 5, 8, -1, -2, -3, 0.5, -0.5, 1.5, 9]


def _ulps(a, b, dtype):
    """ulp distance between two arrays of a float dtype (NaN == NaN)."""
    it: Any = {np.float16: np.int16, np.float32: np.int32, np.float64: np.int64}[dtype]
    a, b = np.asarray(a, dtype), np.asarray(b, dtype)
    ia, ib = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    lo = np.iinfo(it).min
    ia = np.where(ia < 0, lo - ia, ia)
    ib = np.where(ib < 0, lo - ib, ib)
    d = np.abs(ia - ib)
    both_nan = np.isnan(a) & np.isnan(b)
    return np.where(both_nan, 0, d)


def _inputs(dtype, n=3000, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-8, 8, n))).astype(dtype)
    with np.errstate(all="ignore"):
        sp = np.array(SPECIAL, dtype=dtype)
    return np.concatenate([sp, x])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("c", EXPONENTS)
def test_float_power_constant(dtype, c):
    x = _inputs(dtype)
    with np.errstate(all="ignore"):
        want = x ** c  # the operator with a Python scalar: NumPy takes sqrt for 0.5 in every float dtype
        got = loom.asnumpy(loom.asarray(x) ** c)
        # the exact power, rounded once to the dtype: float64 via longdouble where it helps
        exact = (x.astype(np.longdouble) ** np.longdouble(c)).astype(dtype)
    assert got.dtype == want.dtype
    if c in (0, 1, 2, -1, 0.5):
        np.testing.assert_array_equal(got, want)        # one rounding: NumPy's bits, -0 -> -0 for 0.5
        # the sign of zeros and infinities as NumPy's; a NaN's sign from an invalid operation (sqrt of a
        # negative) is the platform's (x86 negative, NVIDIA's float32/float16 positive): not compared
        num = ~np.isnan(want)
        assert np.array_equal(np.signbit(got[num]), np.signbit(want[num]))
        return
    # NaN/inf/zero pattern as NumPy's
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got) & (got > 0), np.isinf(want) & (want > 0))
    zero = want == 0
    assert np.array_equal(got[zero], want[zero]) and np.array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
    allow = {np.float16: 1, np.float32: 1, np.float64: 5}[dtype]
    assert _ulps(got, exact, dtype).max() <= allow


def test_power_views_broadcasts_and_shapes():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 33)).astype(np.float32)
    v = a[::2, 1::3]                       # strided both ways
    np.testing.assert_array_equal(loom.asnumpy(loom.asarray(a)[::2, 1::3] ** 2), v * v)
    b = rng.standard_normal(33).astype(np.float32)
    got = loom.asnumpy((loom.asarray(a) - loom.asarray(b)[None, :]) ** 2)
    np.testing.assert_array_equal(got, (a - b[None, :]) ** 2)
    z = np.float64(3.0)
    assert float(loom.asnumpy(loom.asarray(np.array(z)) ** 0.5)) == math.sqrt(3.0)   # 0-d
    e = loom.asnumpy(loom.asarray(np.zeros((0, 4), np.float32)) ** 3)
    assert e.shape == (0, 4) and e.dtype == np.float32
    # a strong float64 constant exponent (numpy scalar) promotes as NumPy does
    got = loom.asarray(a) ** np.float64(2.0)
    want = a ** np.float64(2.0)
    assert loom.asnumpy(got).dtype == want.dtype
    np.testing.assert_array_equal(loom.asnumpy(got), want)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("c", [0, 1, 2, 3, 5, 8])
def test_int_power_wraps(dtype, c):
    info = np.iinfo(dtype)
    x = np.array([0, 1, 2, 3, 7, 100, info.max, info.min, info.max // 3], dtype=dtype)
    with np.errstate(all="ignore"):
        want = x ** c
    got = loom.asnumpy(loom.asarray(x) ** c)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fn", ["erf", "erfc"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_erf(fn, dtype):
    x = _inputs(dtype, seed=2)
    x = x[np.abs(x.astype(np.float64)) < 1e6]  # plus the specials kept below
    x = np.concatenate([x, np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 6.0, 27.0, -27.0], dtype)])
    ref = np.array([getattr(math, fn)(float(v)) if not math.isnan(v) else math.nan for v in x])
    got = loom.asnumpy(getattr(loom, fn)(loom.asarray(x)))
    assert got.dtype == dtype
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    allow = {np.float16: 1, np.float32: 4, np.float64: 4}[dtype]
    assert _ulps(got, ref.astype(dtype), dtype).max() <= allow
    if fn == "erf":
        assert np.array_equal(np.signbit(got[x == 0]), np.signbit(x[x == 0]))   # erf(-0) = -0


def test_erf_dtypes_and_fusion():
    i8 = np.array([-3, 0, 1, 2], np.int8)
    got = loom.erf(loom.asarray(i8))               # FLOAT rule: int8 -> float16
    assert loom.asnumpy(got).dtype == np.float16
    with pytest.raises(Exception):
        loom.erf(loom.asarray(np.array([1 + 1j], np.complex64)))   # no complex erf (as scipy's real one)
    x = np.linspace(-4, 4, 1001, dtype=np.float32)
    g = loom.asnumpy(0.5 * loom.asarray(x) * (1.0 + loom.erf(loom.asarray(x) * 0.7071067811865476)))
    assert g.dtype == np.float32
    x64 = x.astype(np.float64)
    t = x64 * 0.7071067811865476
    e = np.array([math.erf(v) for v in t])
    ref = 0.5 * x64 * (1.0 + e)
    # float32 GELU: erf within test_erf's 4 ulps of float32 (CUDA's erff: 2) and its argument rounded to
    # float32, scaled by 0.5|x|; 1 + erf cancels near x = -4, where one ulp of erf is 0.1 % of the result
    def ulp32(v: Any) -> Any:
        return np.spacing(np.abs(v).astype(np.float32)).astype(np.float64)
    bound = 0.5 * np.abs(x64) * (4 * ulp32(e) + 1.2 * ulp32(t)) + 2 * ulp32(ref)
    assert np.all(np.abs(g - ref) <= bound), np.max(np.abs(g - ref) / bound)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_arcsinh_of_tiny_and_subnormal_values(dtype):
    """asinh(x) rounds to x for tiny |x|: the host's vector library gave 0 for subnormals (fuzz_numpy seed
    8688389242436405620: 5e-324 // arcsinh(5e-324) was inf, NumPy 1.0). Reference: the float64 series
    x - x**3/6, exact to rounding here."""
    fi = np.finfo(dtype)
    x = np.array([fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny, -fi.tiny / 3, 1e-30, -2e-20, 0.0, -0.0],
                 dtype=dtype)
    got = loom.asnumpy(loom.arcsinh(loom.asarray(x)))
    want = (x.astype(np.float64) - x.astype(np.float64) ** 3 / 6).astype(dtype)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(x))
    np.testing.assert_array_equal(loom.asnumpy(loom.asarray(x) // loom.arcsinh(loom.asarray(x)))[:4],
                                  np.ones(4, dtype))
