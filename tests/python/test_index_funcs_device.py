# SPDX-License-Identifier: Apache-2.0
"""isin, the triangle indices and unravel_index as loom operations (python/loom/_index_funcs.py), against
NumPy. A GPU's arrays take these paths (on the host NumPy's own functions run); the tests call them on
host arrays too, so they run everywhere: isin's compare-all and sort + binary-search forms (NaN never
found, mixed dtypes, duplicates, invert, empty and 0-d inputs), the triangles for k below, on and above
the diagonal and rectangular grids, unravel_index in C and F order with NumPy's errors."""
import numpy as np
import pytest

import loom
from loom import _index_funcs as fx

RNG = np.random.default_rng(5)


def get(x):
    return x.get() if isinstance(x, loom.ndarray) else np.asarray(x)


CASES = [
    (RNG.integers(-50, 50, 1000).astype(np.int32), RNG.integers(-50, 50, 7).astype(np.int32)),
    (RNG.integers(-50, 50, 1000).astype(np.int32), RNG.integers(-60, 60, 500).astype(np.int64)),  # sort form
    (RNG.integers(0, 9, (13, 17)).astype(np.int64), np.array([3, 3, 8, 0])),  # duplicates, 2-d element
    (np.array([1.0, np.nan, 2.5, -0.0, np.inf]), np.array([np.nan, 0.0, np.inf, 2.5])),
    (np.r_[np.array([1.0, np.nan, 2.5, -0.0, np.inf]), RNG.standard_normal(300)],
     np.r_[np.array([np.nan, 0.0, np.inf, 2.5]), RNG.standard_normal(400)]),  # sort form with NaN
    (RNG.integers(0, 5, 50), np.array([1.0, 2.5, 4.0])),  # int elements, float tests
    (RNG.random(200) > 0.5, np.array([True])),
    (np.array([1 + 2j, 3, 4j]), np.array([3 + 0j, 4j])),
    (np.array(7), np.array([1, 7])),  # 0-d element
    (np.zeros(0, np.int32), np.array([1, 2])),
    (np.arange(5), np.zeros(0, np.int64)),
]


@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_isin_as_loom_operations(case, invert):
    e, t = CASES[case]
    want = np.isin(e, t, invert=invert)
    got = get(fx._isin_on(loom.asarray(e), loom.asarray(t), invert))
    assert got.dtype == np.bool_ and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(get(loom.isin(loom.asarray(e), loom.asarray(t), invert=invert)), want)


def test_isin_both_forms_agree_past_the_compare_limit():
    e = RNG.integers(0, 3000, 5000)
    for m in (fx._ISIN_COMPARE_MAX, fx._ISIN_COMPARE_MAX + 1, 4 * fx._ISIN_COMPARE_MAX):
        t = RNG.integers(0, 3000, m)
        np.testing.assert_array_equal(get(fx._isin_on(loom.asarray(e), loom.asarray(t), False)), np.isin(e, t))


def test_isin_kind_errors_follow_numpy():
    with pytest.raises(ValueError, match="Invalid kind"):
        loom.isin(loom.asarray([1]), [1], kind="hash")
    with pytest.raises(ValueError, match="only supported for boolean or integer"):
        fx._isin_on(loom.asarray([1.5]), loom.asarray([1.5]), False, kind="table")
    np.testing.assert_array_equal(get(fx._isin_on(loom.asarray([1, 2]), loom.asarray([2]), False, kind="table")),
                                  [False, True])


@pytest.mark.parametrize("n,k,m", [(4, 0, None), (5, 1, None), (5, -2, None), (3, 0, 6), (6, 2, 3), (1, 0, 1),
                                   (0, 0, None), (4, 9, None), (4, -9, None)])
@pytest.mark.parametrize("upper", [False, True])
def test_triangle_indices(n, k, m, upper):
    want = (np.triu_indices if upper else np.tril_indices)(n, k, m)
    got = fx._tri_indices(n, k, m, upper)
    assert len(got) == 2
    for g, w in zip(got, want):
        assert get(g).dtype == w.dtype
        np.testing.assert_array_equal(get(g), w)
    pub = (loom.triu_indices if upper else loom.tril_indices)(n, k, m)
    for g, w in zip(pub, want):
        np.testing.assert_array_equal(get(g), w)


def test_triangle_indices_from():
    a = loom.asarray(np.zeros((4, 6)))
    for g, w in zip(loom.triu_indices_from(a, 1), np.triu_indices_from(np.zeros((4, 6)), 1)):
        np.testing.assert_array_equal(get(g), w)
    with pytest.raises(ValueError, match="2-d"):
        loom.tril_indices_from(loom.asarray(np.zeros(3)))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dims", [(6,), (2, 3), (4, 1, 5), (3, 0 + 2, 2, 2)])
def test_unravel_index(dims, order):
    size = int(np.prod(dims))
    idx = RNG.integers(0, size, (3, 5))
    want = np.unravel_index(idx, dims, order=order)
    got = fx._unravel_on(loom.asarray(idx), dims, order)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(get(g), w)
    zero_d = fx._unravel_on(loom.asarray(np.array(size - 1)), dims, order)
    for g, w0 in zip(zero_d, np.unravel_index(size - 1, dims, order=order)):
        assert get(g).shape == () and int(get(g)) == int(w0)


def test_unravel_index_errors_follow_numpy():
    with pytest.raises(ValueError, match="index 6 is out of bounds for array with size 6"):
        fx._unravel_on(loom.asarray(np.array([1, 6, 7])), (2, 3), "C")
    with pytest.raises(ValueError, match="index -1 is out of bounds"):
        fx._unravel_on(loom.asarray(np.array([0, -1])), (2, 3), "C")
    with pytest.raises(TypeError, match="only int indices"):
        fx._unravel_on(loom.asarray(np.array([1.0])), (2, 3), "C")
    for g in fx._unravel_on(loom.asarray(np.zeros(0, np.int64)), (2, 3), "C"):
        assert get(g).shape == (0,)
