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


_KNOWN = None


def pytest_collection_modifyitems(config, items):
    """Marks the tests listed in known_failures.txt xfail (not strict): open regressions after the merges
    of 2026-12-01, listed there one node id per line, so they stay visible in every run."""
    global _KNOWN
    if _KNOWN is None:
        import pathlib
        path = pathlib.Path(__file__).with_name("known_failures.txt")
        _KNOWN = {line.strip() for line in path.read_text().splitlines()
                  if line.strip() and not line.startswith("#")} if path.exists() else set()
    for item in items:
        rel = item.nodeid.split("tests/python/", 1)[-1]
        if "tests/python/" + rel in _KNOWN:
            item.add_marker(pytest.mark.xfail(reason="open regression after the 2026-12-01 merges "
                                              "(tests/python/known_failures.txt)", strict=False))
