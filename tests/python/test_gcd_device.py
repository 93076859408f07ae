# SPDX-License-Identifier: Apache-2.0
"""gcd / lcm as graph ops (python/loom/_math.py _gcd_lcm: Euclid unrolled, the path of GPU arrays; called
here on host arrays so it runs everywhere) against numpy.gcd / numpy.lcm: every integer width, signed and
unsigned, zeros, negatives, the extremes of each dtype, array-array and array-scalar (the scalar bounds the
number of steps), and the step bound itself against the worst case (consecutive Fibonacci numbers)."""
import numpy as np
import pytest

import loom
from loom import _math

RNG = np.random.default_rng(3)
DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def values(dt, n):
    info = np.iinfo(dt)
    v = RNG.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    special = np.array([0, 1, info.max, info.max - 1, info.min, info.min + 1, 12, 18], dtype=dt)
    v[:special.size] = special
    return v


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("lcm", [False, True])
def test_arrays(dt, lcm):
    a, b = values(dt, 2000), values(dt, 2000)
    b[RNG.random(2000) < 0.1] = 0
    small = (RNG.integers(0, 200, 2000) * RNG.integers(1, 7, 2000)).astype(dt)  # many common factors
    for x, y in ((a, b), (small, small[::-1].copy()), (a, small)):
        with np.errstate(over="ignore"):
            want = (np.lcm if lcm else np.gcd)(x, y)
        got = _math._gcd_lcm(loom.asarray(x), loom.asarray(y), np.dtype(dt), lcm).get()
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint32])
@pytest.mark.parametrize("s", [0, 1, 12, 360, 2**31 - 1])
def test_scalar_operand(dt, s):
    a = values(dt, 1000)
    for lcm in (False, True):
        with np.errstate(over="ignore"):
            want = (np.lcm if lcm else np.gcd)(a, s)
            want_r = (np.lcm if lcm else np.gcd)(s, a)
        np.testing.assert_array_equal(_math._gcd_lcm(loom.asarray(a), s, np.dtype(dt), lcm).get(), want)
        np.testing.assert_array_equal(_math._gcd_lcm(s, loom.asarray(a), np.dtype(dt), lcm).get(), want_r)


def test_step_bound_holds_for_fibonacci_pairs():
    f = [1, 2]
    while f[-1] < 2**62:
        f.append(f[-1] + f[-2])
    a = np.array(f[1:], np.int64)
    b = np.array(f[:-1], np.int64)
    np.testing.assert_array_equal(_math._gcd_lcm(loom.asarray(a), loom.asarray(b), np.dtype(np.int64), False).get(),
                                  np.gcd(a, b))


def test_public_calls_on_the_host_stay_numpys():
    np.testing.assert_array_equal(loom.gcd(loom.asarray(np.array([12, 18, -8])), 6).get(), [6, 6, 2])
    np.testing.assert_array_equal(loom.lcm(loom.asarray(np.array([4, 6])), loom.asarray(np.array([6, 4]))).get(),
                                  [12, 12])
    with pytest.raises(TypeError):
        loom.gcd(loom.asarray(np.array([1.5])), 2)
