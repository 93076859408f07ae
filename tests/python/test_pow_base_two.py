"""2 ** x is computed as exp2(x) (passes/fold.c base_two): the same function, several times cheaper than pow.
Values against NumPy for every real float dtype and the special exponents (NaN, +-inf, overflow, underflow to
subnormals and 0, -0), the kernel IR (exp2, no pow), and the plan cache: the base is read by the pass, so
3 ** x after 2 ** x of the same structure is a power again, not exp2."""
import numpy as np
import pytest

import loom

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 127.0, 128.0, -126.0, -149.0, -150.0, 1023.0, 1024.0,
           -1074.0, -1075.0, 15.0, 16.0, -24.0, -25.0, 3.3, -7.25]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_values(dtype: str) -> None:
    rng = np.random.default_rng(1)
    a = np.concatenate([np.array(SPECIAL), rng.uniform(-60, 60, 4001)]).astype(dtype)
    got = loom.asnumpy(2.0 ** loom.asarray(a))
    with np.errstate(over="ignore"):
        want = np.asarray(2.0 ** a)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=float(2 * np.finfo(dtype).eps), atol=0, equal_nan=True)
    got = loom.asnumpy(loom.power(2, loom.asarray(a)))  # an int base: the same promotion as NumPy's
    with np.errstate(over="ignore"):
        want = np.power(2, a)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=float(2 * np.finfo(dtype).eps), atol=0, equal_nan=True)


def test_kernel_is_exp2_and_other_bases_are_powers() -> None:
    x = loom.asarray(np.linspace(-3, 3, 1001).astype(np.float32))
    k = loom.inspect(440 * 2.0 ** ((x - 69) / 12), what="kernels")["kernels"]
    assert " exp2 " in k and " pow " not in k, k
    k3 = loom.inspect(440 * 3.0 ** ((x - 69) / 12), what="kernels")["kernels"]
    assert " pow " in k3, k3
    a = np.linspace(-3, 3, 1001).astype(np.float32)
    for base in (2.0, 3.0, 2.0, 0.5):  # one structure, other bases: no plan may keep exp2 for them
        np.testing.assert_allclose(loom.asnumpy(base ** loom.asarray(a)), base ** a, rtol=4e-7)


def test_broadcast_exponent_keeps_pow_shape() -> None:
    """the exponent broadcast against another operand: (2 ** e) * y with e a column"""
    e = np.arange(-5, 5, dtype=np.float64)[:, None]
    y = np.ones((10, 7))
    np.testing.assert_array_equal(loom.asnumpy(2.0 ** loom.asarray(e) * loom.asarray(y)), 2.0 ** e * y)
