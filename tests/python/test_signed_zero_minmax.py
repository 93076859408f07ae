"""maximum/minimum of equal operands (-0.0 and 0.0) give the second operand, as NumPy's float32/float64
loops do (the host fuzz on an AVX-512 machine found reciprocal(maximum(-0.0, 0)) = -inf where NumPy gives
inf: loom returned the first operand of a tie). NumPy itself is not consistent beyond that (its float16
loops return the first operand, and fmax/fmin's SIMD and scalar paths differ with the array's length), so
those are checked for values only."""
import numpy as np
import pytest

import loom


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_tie_of_signed_zeros_is_numpys(name, dtype):
    signs = name in ("maximum", "minimum") and dtype != np.float16
    a = np.array([-0.0, 0.0, -0.0, 0.0, np.nan, 1.0, -0.0] * 9, dtype=dtype)
    b = np.array([0.0, -0.0, -0.0, 0.0, 0.0, np.nan, np.nan] * 9, dtype=dtype)
    want = getattr(np, name)(a, b)
    got = getattr(loom, name)(loom.asarray(a), loom.asarray(b)).get()
    np.testing.assert_array_equal(got, want)
    if signs:
        assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), (got, want)
    # a Python scalar operand (a kernel parameter) and the reciprocal that exposes the sign
    if signs:
        with np.errstate(divide="ignore"):
            want = np.reciprocal(getattr(np, name)(a, dtype(0.0)))
        got = loom.reciprocal(getattr(loom, name)(loom.asarray(a), 0.0)).get()
        np.testing.assert_array_equal(got, want)
