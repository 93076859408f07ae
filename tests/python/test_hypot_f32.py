"""float32 hypot on the host: sqrt(x^2 + y^2) in float64 rounded once (codegen/math.c), correctly rounded, as
glibc's hypotf computes it (SLEEF's hypotf_u35 was up to 1.84 ulp off). Reference: the float64 value, exact
for the squares, and NumPy's np.hypot."""
import sys

import numpy as np
import pytest

import loom


@pytest.mark.parametrize("scale", [1.0, 1e-20, 1e20, 1e-42, 1e18])
def test_hypot_float32_correctly_rounded(scale):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(20011) * scale).astype(np.float32)
    y = (rng.standard_normal(20011) * scale).astype(np.float32)
    got = loom.asnumpy(loom.hypot(loom.asarray(x), loom.asarray(y)))
    assert got.dtype == np.float32
    exact = np.sqrt(x.astype(np.float64) ** 2 + y.astype(np.float64) ** 2)
    ulp = np.spacing(exact.astype(np.float32)).astype(np.float64)
    ulp[ulp == 0] = np.finfo(np.float32).smallest_subnormal
    err = np.abs(got.astype(np.float64) - exact) / ulp
    assert err.max() <= 0.5 + 1e-6, err.max()
    if sys.platform.startswith("linux"):  # glibc's hypotf rounds the same float64 value
        np.testing.assert_array_equal(got, np.hypot(x, y))


def test_hypot_float32_specials_and_views():
    a = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3.0, np.inf, np.nan, 3e38, 1e-45], np.float32)
    b = np.array([np.nan, 1.0, np.inf, -0.0, 0.0, np.nan, np.inf, np.nan, 3e38, 1e-45], np.float32)
    got = loom.asnumpy(loom.hypot(loom.asarray(a), loom.asarray(b)))
    with np.errstate(over="ignore"):
        want = np.hypot(a, b)
    np.testing.assert_array_equal(got, want)  # inf beats NaN; overflow to inf; subnormals kept
    m = np.arange(24, dtype=np.float32).reshape(4, 6) - 11.5
    got2 = loom.asnumpy(loom.hypot(loom.asarray(m)[:, ::2], loom.asarray(m[0])[::2]))  # strided, broadcast
    np.testing.assert_array_equal(got2, np.hypot(m[:, ::2], m[0][::2]))
    z = loom.asarray(np.zeros((0, 3), np.float32))
    assert loom.asnumpy(loom.hypot(z, z)).shape == (0, 3)
