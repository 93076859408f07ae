# SPDX-License-Identifier: Apache-2.0
"""isclose, allclose and array_equal on the arrays' device (python/loom/_math.py) against NumPy: every pair
of real/complex/integer/bool dtypes, NaN, +-inf, -0, values just inside and outside the tolerances, the
integer minimum (|b| must not overflow), broadcasting, Python and NumPy scalars on either side, equal_nan
both ways, array rtol/atol, 0-d and empty arrays. On a GPU nothing is copied to the host but the one bool of
allclose / array_equal (they were NumPy calls on host copies of both arrays)."""
import itertools
import warnings

import numpy as np
import pytest

import loom

DEVICES = ["default"] + (["cuda"] if loom.cuda.is_available() else [])
VALS = np.array([0, 1, -1, 1e-9, np.nan, np.inf, -np.inf, 1 + 1e-6, 1 + 1e-4, 2.5, -0.0, 1e8 + 1e3])
DTYPES = ["float32", "float64", "complex64", "int64", "bool"]
PAIRS = list(itertools.product(DTYPES, repeat=2)) + [("float16", "float32"), ("float32", "float16"), ("int8", "uint8"),
                                                     ("int32", "float32"), ("uint8", "float64"), ("float16", "int8")]


def on(device, v):
    if not isinstance(v, np.ndarray):
        return v
    if device == "cuda":
        with loom.cuda.Device(0):
            return loom.asarray(v)
    return loom.asarray(v)


def make(dtype, transpose):
    base = np.resize(VALS, (12, 12))
    base = base.T if transpose else base
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return base > 0 if dtype == "bool" else base.astype(dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("da,db", PAIRS)
def test_isclose_against_numpy(device, da, db):
    a, b = make(da, False), make(db, True)
    cases: list = [(a, b), (a, b[0]), (a, 1.0), (a, 2), (1.0, b), (a, np.float32(1)), (a[:0], b[:0]), (a[3, 3], b[2, 2])]
    for args in cases:
        for equal_nan in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = np.isclose(args[0], args[1], equal_nan=equal_nan)
            got = loom.isclose(on(device, args[0]), on(device, args[1]), equal_nan=equal_nan)
            got = loom.asnumpy(got)
            assert got.shape == np.shape(want) and got.dtype == np.bool_
            np.testing.assert_array_equal(got, want, err_msg=f"{da} {db} equal_nan={equal_nan}")


@pytest.mark.parametrize("device", DEVICES)
def test_tolerances_and_integer_minimum(device):
    x = np.array([1.0, 1.0 + 2e-5, 1.0 + 1e-4, 100.0, 0.0, 1e-9], np.float64)
    y = np.ones_like(x)
    tols: list = [(1e-5, 1e-8), (0, 0), (1e-3, 0), (0, 1e-3), (np.array([0, 1e-4, 1e-3, 1, 0, 0]), 0.0)]
    for rtol, atol in tols:
        np.testing.assert_array_equal(loom.asnumpy(loom.isclose(on(device, x), on(device, y), rtol, atol)),
                                      np.isclose(x, y, rtol, atol))
    i = np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max], np.int64)
    np.testing.assert_array_equal(loom.asnumpy(loom.isclose(on(device, i), on(device, i))), np.isclose(i, i))
    np.testing.assert_array_equal(loom.asnumpy(loom.isclose(on(device, i), on(device, i[::-1]))),
                                  np.isclose(i, i[::-1]))


@pytest.mark.parametrize("device", DEVICES)
def test_allclose_and_array_equal(device):
    x = np.array([1.0, np.nan, 3.0, -np.inf])
    X = on(device, x)
    for y in [x, x + 1e-9, x + 1, np.array([1.0, np.nan, 3.0, np.inf])]:
        Y = on(device, y)
        for equal_nan in (False, True):
            assert loom.allclose(X, Y, equal_nan=equal_nan) is bool(np.allclose(x, y, equal_nan=equal_nan))
            assert loom.array_equal(X, Y, equal_nan=equal_nan) is bool(np.array_equal(x, y, equal_nan=equal_nan))
    assert loom.array_equal(X, on(device, x[:3])) is False
    assert loom.array_equal(on(device, np.arange(6).reshape(2, 3)), on(device, np.arange(6).reshape(3, 2))) is False
    i = np.arange(10)
    assert loom.array_equal(on(device, i), on(device, i.copy()), equal_nan=True) is True
    assert loom.array_equal(on(device, i[:0]), on(device, i[:0])) is True


@pytest.mark.skipif(not loom.cuda.is_available(), reason="no CUDA device")
def test_gpu_stays_on_the_device():
    with loom.cuda.Device(0):
        x = loom.asarray(np.linspace(0, 1, 1 << 20))
        y = x + 1e-9
        before = loom.stats()["bytes_to_host"]
        r = loom.isclose(x, y)
        loom.eval(r)
        assert loom.stats()["bytes_to_host"] == before
        assert loom.allclose(x, y)
        assert loom.stats()["bytes_to_host"] - before < 64
