"""Shared helpers for the loom pytest suite: NumPy comparison with per-dtype tolerances."""
import numpy as np
import pytest

import loom

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]
FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def rtol_for(dtype):
    return {"float16": 2e-3, "float32": 2e-5}.get(np.dtype(dtype).name, 1e-12)


def check(got, want, rtol=None):
    """got (loom or numpy) equals want (numpy) in shape, dtype and value (NaN == NaN)."""
    if isinstance(got, loom.ndarray):
        got = got.get()
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol or rtol_for(want.dtype), atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def sample(shape, dtype, seed=0, positive=False):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo, hi = (1, 20) if positive or dt.kind == "u" else (-20, 20)
        return rng.integers(lo, hi, size=shape).astype(dt)
    x = rng.uniform(0.1 if positive else -3, 3, size=shape)
    return x.astype(dt)


@pytest.fixture
def xp():
    return loom
