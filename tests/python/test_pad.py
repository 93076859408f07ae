# SPDX-License-Identifier: Apache-2.0
"""loom.pad against numpy.pad: mode='constant' with a scalar constant runs on the array's device (interior
copy and pad slabs, python/loom/_numeric.py); every dtype, rank 0-3, empty axes, pad widths as int, pair,
per-axis pairs and NumPy integers, constants that need an unsafe cast (1.7 into int8, -3 into uint64, a
complex into float), and NumPy's errors (negative or float widths, wrong shapes, 300 into int8 with no pad).
Other modes (NumPy's, on the host) still answer."""
import warnings
from typing import Any

import numpy as np
import pytest

import loom

DTYPES = ["float32", "float64", "int8", "uint64", "bool", "complex64", "float16"]
SHAPES = [(5,), (3, 4), (2, 3, 4), (0, 3), (), (1,)]
WIDTHS = [0, 1, (1, 2), [[2, 3]], np.int8(2), -1, 1.5, ((1, 2, 3),)]
CONSTANTS: list[Any] = [0, 1.7, -3, True, 300, np.float32(2.5), 1 + 2j]


def outcome(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f()
        except Exception as e:  # noqa: BLE001 (the error's type is the answer)
            return e


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_constant_against_numpy(dtype, shape):
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 7).astype(dtype)
    widths: list[Any] = WIDTHS + ([((1, 0),) * len(shape)] if shape else [])
    for pw in widths:
        for cv in CONSTANTS:
            want = outcome(lambda: np.pad(x, pw, constant_values=cv))
            got = outcome(lambda: loom.asnumpy(loom.pad(loom.asarray(x), pw, constant_values=cv)))
            if isinstance(want, Exception):
                assert type(got) is type(want), (pw, cv, want, got)
                continue
            assert not isinstance(got, Exception), (pw, cv, got)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want, err_msg=f"pad_width={pw} constant_values={cv}")


def test_non_contiguous_input_and_default_constant():
    x = np.arange(60, dtype=np.float64).reshape(6, 10)[::2, 1::3]
    np.testing.assert_array_equal(loom.asnumpy(loom.pad(loom.asarray(np.arange(60.0).reshape(6, 10))[::2, 1::3],
                                                        ((2, 1), (0, 3)))), np.pad(x, ((2, 1), (0, 3))))


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap", "maximum"])
def test_other_modes(mode):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(loom.asnumpy(loom.pad(loom.asarray(x), (1, 2), mode=mode)),
                                  np.pad(x, (1, 2), mode=mode))


def test_per_axis_constants():
    x = np.ones((2, 3), np.int32)
    cv = ((1, 2), (3, 4))
    np.testing.assert_array_equal(loom.asnumpy(loom.pad(loom.asarray(x), 1, constant_values=cv)),
                                  np.pad(x, 1, constant_values=cv))
