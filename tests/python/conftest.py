"""Shared helpers for the loom pytest suite: NumPy comparison with per-dtype tolerances.

The suite runs with LOOM_STRICT_CONVERSION=1 (unless the environment sets it): host arrays then refuse
implicit conversion to NumPy (np.asarray, np.testing on a loom array, memoryview) exactly as GPU arrays
do, so a test that would fail on a GPU machine fails here too. Read results with .get() / loom.asnumpy
(or check() below). A test about the host's zero-copy interop itself is marked
@pytest.mark.host_conversion: it runs with the strict mode off on the host and is skipped where arrays
live on a GPU (CuPy refuses the conversion there too).
"""
import os

os.environ.setdefault("LOOM_STRICT_CONVERSION", "1")
# host kernels are kept in the kernel disk cache by default; tests that count compiles must not find an
# earlier test's (or run's) kernels there: the suite runs with the host part off, except
# test_host_disk_cache.py, which turns it on in its own processes
os.environ.setdefault("LOOM_HOST_DISK_CACHE", "0")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import loom  # noqa: E402

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)  # the default device of this run


def pytest_configure(config):
    config.addinivalue_line("markers", "host_conversion: tests implicit NumPy conversion of host arrays "
                            "(strict mode off; skipped when arrays live on a GPU)")


def pytest_collection_modifyitems(config, items):
    # test_host_*.py assert the host's code generation (its kernels, walks, stats): where arrays live on a
    # GPU they would test the GPU's instead; scripts/gpu_all.sh runs them with LOOM_DEVICE=host
    if not ON_GPU:
        return
    skip = pytest.mark.skip(reason="tests the host's kernels: run with LOOM_DEVICE=host")
    for item in items:
        if item.path.name.startswith("test_host_"):
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _host_conversion(request, monkeypatch):
    if request.node.get_closest_marker("host_conversion"):
        if ON_GPU:
            pytest.skip("implicit NumPy conversion is a host-array feature (GPU arrays refuse it, as CuPy's do)")
        monkeypatch.setenv("LOOM_STRICT_CONVERSION", "0")
    yield

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]
FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def rtol_for(dtype):
    return {"float16": 2e-3, "float32": 2e-5}.get(np.dtype(dtype).name, 1e-12)


def check(got, want, rtol=None, atol=0.0):
    """got (loom or numpy) equals want (numpy) in shape, dtype and value (NaN == NaN); atol: for results
    that cancel, the bound of the computation's own rounding."""
    if isinstance(got, loom.ndarray):
        got = got.get()
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol or rtol_for(want.dtype), atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def ulp_distance(a, b):
    """|a - b| in units in the last place, elementwise, of two float16 or float32 arrays of one dtype: the bit
    patterns mapped onto one ordered integer line (-0 and +0 the same point); an int64 array."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.dtype in (np.float16, np.float32), (a.dtype, b.dtype)
    it, top = (np.int16, 2**15) if a.dtype == np.float16 else (np.int32, 2**31)
    ia, ib = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    ia = np.where(ia < 0, -top - ia, ia)
    ib = np.where(ib < 0, -top - ib, ib)
    return np.abs(ia - ib)


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


def normal(rng, shape, dtype):
    """Standard-normal values of dtype from rng; complex dtypes get a standard-normal imaginary part too."""
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.fixture
def xp():
    return loom


def may_share_memory(a, b):
    """Whether arrays a and b (loom or NumPy) overlap in memory (NumPy's may_share_memory: their byte
    extents), on any device: from the data pointer, shape and strides, without converting to NumPy."""
    def extent(x):
        if x.size == 0:
            return None
        p = x.__array_interface__["data"][0] if isinstance(x, np.ndarray) else x.data.ptr
        lo = p + sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
        hi = p + sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides)) + x.itemsize
        return lo, hi
    ea, eb = extent(a), extent(b)
    return bool(ea and eb and ea[0] < eb[1] and eb[0] < ea[1])
