"""Comparisons of a signed integer array with a uint64 array are exact, as NumPy 2's qQ / Qq loops make
them (promotion to float64 would round both: the H200 fuzz run of 2026-12-02 10:12 found
int64 4022953313179823382 >= uint64 4022953313179823616 true). Checked against NumPy on the extremes."""
import numpy as np
import pytest

import loom

S = np.array([-2**63, -2**62, -1, 0, 1, 2**53 + 1, 2**62, 2**63 - 1, 4022953313179823382], dtype=np.int64)
U = np.array([0, 1, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 4022953313179823616], dtype=np.uint64)
OPS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


@pytest.mark.parametrize("sdt", ["int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("op", OPS)
def test_signed_vs_uint64_exact(sdt, op):
    s = S.astype(sdt)  # wraps for the narrow dtypes: still signed values of every sign
    for a, b in [(s[:, None], U[None, :]), (U[:, None], s[None, :])]:
        want = getattr(np, op)(a, b)
        got = getattr(loom, op)(loom.asarray(a), loom.asarray(b))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.get(), want)


def test_operators_and_fused_consumer():
    s, u = loom.asarray(S[:8]), loom.asarray(U)
    np.testing.assert_array_equal((s >= u).get(), S[:8] >= U)
    np.testing.assert_array_equal((u < s).get(), U < S[:8])
    # inside a larger expression: where on the comparison
    np.testing.assert_array_equal(loom.where(s == u, 1, 2).get(), np.where(S[:8] == U, 1, 2))


def test_zero_d_and_empty():
    np.testing.assert_array_equal((loom.asarray(np.int64(-1)) < loom.asarray(np.uint64(2**63))).get(), True)
    e = loom.asarray(np.zeros(0, np.int64)) > loom.asarray(np.zeros(0, np.uint64))
    assert e.shape == (0,) and e.dtype == np.bool_
