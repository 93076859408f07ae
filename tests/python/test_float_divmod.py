# SPDX-License-Identifier: Apache-2.0
"""Float floor_divide / remainder / divmod / fmod against NumPy, bit for bit, over operands of every
magnitude (quotients far past 2^24 and 2^53, subnormals), signs, zeros, infinities and NaN. The host
computes the exact fmod these need with SLEEF's vectorized fmod where the library has it
(codegen/math.c: float_divmod), else libm's, one call a point; both must equal NumPy's npy_divmod."""
import numpy as np
import pytest

import loom


def operands(dtype, n, seed):
    r = np.random.default_rng(seed)
    info = np.finfo(dtype)
    lo, hi = np.log10(float(info.tiny)) - 3, np.log10(float(info.max))
    mag = 10.0 ** r.uniform(lo, hi, n)
    x = (mag * r.choice([-1.0, 1.0], n)).astype(dtype)
    small = (r.integers(-50, 50, n) * r.choice([1.0, 0.5, 0.1], n)).astype(dtype)
    x = np.where(r.random(n) < 0.4, small, x).astype(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, info.max, -info.max, info.tiny], dtype=dtype)
    k = min(n, special.size)
    x[:k] = special[:k]
    return x


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[want.dtype.itemsize]
    bad = np.flatnonzero(got[~nan].view(bits) != want[~nan].view(bits))
    assert bad.size == 0, f"{bad.size} points differ, e.g. {got[~nan][bad[:3]]} want {want[~nan][bad[:3]]}"


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 16, 33, 20011])
def test_floor_divide_remainder_fmod(dtype, n):
    a, b = operands(dtype, n, 1), operands(dtype, n, 2)
    b[n // 2:] = b[::-1][: n - n // 2]  # pairs of specials with specials
    la, lb = loom.asarray(a), loom.asarray(b)
    with np.errstate(all="ignore"):
        same((la // lb).get(), a // b)
        same((la % lb).get(), a % b)
        same(loom.fmod(la, lb).get(), np.fmod(a, b))
        q, m = loom.divmod(la, lb)
        wq, wm = np.divmod(a, b)
        same(q.get(), wq)
        same(m.get(), wm)
        same((la // 3.0).astype(dtype).get(), (a // dtype(3.0)).astype(dtype))


def test_huge_quotients_are_exact():
    """fmod of quotients past the mantissa: an approximate a - trunc(a / b) * b would be wrong here"""
    a = np.array([1e30, -1e30, 3.4e38, 1e20, 7.0e15, -1.0e25], dtype=np.float32)
    b = np.array([3.0, 7.0, 1.1, 0.3, 1e-5, 2.0e-3], dtype=np.float32)
    with np.errstate(all="ignore"):
        same(loom.fmod(loom.asarray(a), loom.asarray(b)).get(), np.fmod(a, b))
        same((loom.asarray(a) % loom.asarray(b)).get(), a % b)
        same((loom.asarray(a) // loom.asarray(b)).get(), a // b)
