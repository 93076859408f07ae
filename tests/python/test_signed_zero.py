"""Signed zeros and infinities where NumPy's choice of operand decides the bits (found by the long
fuzz_numpy runs on the H200, 2026-12-02): clip keeps x on a tie with a bound, maximum/minimum give their
second operand on a tie (folded constants too), and float16 power(x, 0.5) is powf (no sqrt fast path)
while x ** 0.5 is np.sqrt for every float dtype. Compared bit for bit (signbit and NaN) with NumPy."""
import numpy as np
import pytest

import loom

FLOATS = ["float16", "float32", "float64"]
X = [0.0, -0.0, 2.0, -3.0, np.nan, 5e-324, np.inf, -np.inf]


def same_bits(want, got):
    want, got = np.asarray(want), np.asarray(got)
    assert want.dtype == got.dtype, (want.dtype, got.dtype)
    assert np.array_equal(np.isnan(want), np.isnan(got)), (want, got)
    ok = np.isnan(want) | ((want == got) & (np.signbit(want) == np.signbit(got)))
    assert ok.all(), (want, got)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("lo,hi", [(-0.0, 5e-324), (1.0, -0.0), (-0.0, 1.0), (0.0, -0.0), (-0.0, 0.0),
                                   (np.nan, 1.0), (0.0, np.nan), (None, -0.0), (0.0, None)])
def test_clip_keeps_x_on_ties(dt, lo, hi):
    x = np.array(X, dtype=dt)
    with np.errstate(all="ignore"):
        same_bits(np.clip(x, lo, hi), loom.clip(loom.asarray(x), lo, hi).get())


@pytest.mark.parametrize("dt", FLOATS)
def test_clip_array_bounds_ties(dt):
    x = np.array([-0.0, 0.0, -0.0, 0.0], dtype=dt)
    lo = np.array([0.0, -0.0, -0.0, 0.0], dtype=dt)
    hi = np.array([0.0, -0.0, 1.0, 1.0], dtype=dt)
    same_bits(np.clip(x, lo, hi), loom.clip(loom.asarray(x), loom.asarray(lo), loom.asarray(hi)).get())


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_minmax_ties_arrays_and_constants(op, dt):
    # NumPy's float32/float64 loops give the second operand on a tie, its float16 loops the first (fmax and
    # fmin are not checked: NumPy's own float32/float64 fmax gives b in its SIMD body and a in the tail)
    a, b = np.array([0.0, -0.0] * 9, dtype=dt), np.array([-0.0, 0.0] * 9, dtype=dt)
    same_bits(getattr(np, op)(a, b), getattr(loom, op)(loom.asarray(a), loom.asarray(b)).get())
    for p, q in [(0.0, -0.0), (-0.0, 0.0)]:  # 0-d constants: the folded path
        want = getattr(np, op)(np.array(p, dtype=dt), np.array(q, dtype=dt))
        got = getattr(loom, op)(loom.asarray(np.array(p, dtype=dt)), loom.asarray(np.array(q, dtype=dt)))
        same_bits(want, np.asarray(got.get()))


@pytest.mark.parametrize("dt", FLOATS)
def test_half_power_function_and_operator(dt):
    x = np.array([-np.inf, -0.0, 0.0, 4.0, -1.0, np.inf, np.nan], dtype=dt)
    with np.errstate(all="ignore"):
        same_bits(np.power(x, 0.5), loom.power(loom.asarray(x), 0.5).get())
        same_bits(x ** 0.5, (loom.asarray(x) ** 0.5).get())
        # inside a fused expression too
        same_bits(np.power(x * 1, 0.5) + 1, (loom.power(loom.asarray(x) * 1, 0.5) + 1).get())
