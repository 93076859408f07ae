"""linspace of real scalar endpoints and eye computed from each point's index where the array lives
(python/loom/_creation.py: no host array, no copy to the device), against NumPy bit for bit: endpoints in
either order, equal endpoints, float32 scalars (float32 arithmetic, as NumPy), endpoint=False, num 2 and
2^20, integer dtypes (floored; out of their range: NumPy's path), float16, retstep; eye of every k, non
square, empty, C and F order, bool / int / complex dtypes; both fuse into their consumers."""
import warnings
from typing import Any

import numpy as np
import pytest

import loom

ENDS = [(0, 1), (-3.5, 7.25), (1, 0), (2, 2), (np.float32(0), np.float32(1)), (np.float32(-1.5), 2), (0, 1e300),
        (5, -5), (3, 9), (np.float64(1), 2), (-1e-9, 1e-9)]


@pytest.mark.parametrize("ends", ENDS)
@pytest.mark.parametrize("num", [2, 3, 50, 1001, 1 << 20])
@pytest.mark.parametrize("dtype", [None, np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, bool])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_matches_numpy(ends: Any, num: int, dtype: Any, endpoint: bool) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.linspace(ends[0], ends[1], num, endpoint=endpoint, dtype=dtype)
        got = loom.linspace(ends[0], ends[1], num, endpoint=endpoint, dtype=dtype)
        g = np.asarray(got.get())
    assert g.dtype == want.dtype and g.shape == want.shape
    assert np.array_equal(g, want, equal_nan=True)


def test_linspace_retstep_small_and_errors() -> None:
    r, step = loom.linspace(0, 1, 5, retstep=True)
    w, wstep = np.linspace(0, 1, 5, retstep=True)
    assert np.array_equal(r.get(), w) and step == wstep
    for n in (0, 1):
        assert np.array_equal(loom.linspace(2, 3, n).get(), np.linspace(2, 3, n))
    with pytest.raises(ValueError):
        loom.linspace(0, 1, -1)
    a = loom.linspace(np.array([0.0, 1.0]), np.array([1.0, 3.0]), 4, axis=1)  # array endpoints: NumPy's path
    assert np.array_equal(a.get(), np.linspace(np.array([0.0, 1.0]), np.array([1.0, 3.0]), 4, axis=1))


def test_linspace_fuses() -> None:
    x = loom.sin(loom.linspace(-2, 2, 4097, dtype=np.float32))
    loom.eval(x)
    assert int(loom.stats()["last_eval_kernels"]) == 1
    assert np.allclose(x.get(), np.sin(np.linspace(-2, 2, 4097, dtype=np.float32)), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("n,m,k", [(3, None, 0), (4, 6, 1), (5, 3, -2), (0, 3, 0), (1, 1, 5), (7, 7, -7),
                                   (6, 4, 3), (1, 9, 0), (300, 200, -17)])
@pytest.mark.parametrize("dtype", [float, np.float32, int, bool, np.complex64, np.uint8, np.float16])
@pytest.mark.parametrize("order", ["C", "F"])
def test_eye_matches_numpy(n: int, m: Any, k: int, dtype: Any, order: str) -> None:
    want = np.eye(n, m, k, dtype, order)  # type: ignore[call-overload]
    got = loom.eye(n, m, k, dtype, order)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.get(), want)
    if want.ndim == 2 and min(want.shape) > 1:
        assert got.flags.f_contiguous == want.flags.f_contiguous


def test_eye_identity_errors_and_writes() -> None:
    with pytest.raises(ValueError):
        loom.eye(-1)
    with pytest.raises(TypeError):
        loom.eye(2.5)  # type: ignore[arg-type]
    i = loom.identity(4, dtype=np.int32)
    i[1, 2] = 7  # a lazy eye is writable like any array
    w = np.identity(4, dtype=np.int32)
    w[1, 2] = 7
    assert np.array_equal(i.get(), w)


ARANGES = [(0, 1, 0.1), (0.5, 3), (0, 5, 0.5), (1, 0, -0.1), (-3.3, 7.7, 0.37), (0, 1e5, 0.1), (1e-9, 1e-8, 1e-10),
           (2.5,), (10.0,), (0, 3, 1.5), (0, 1, 0.3333333), (0.0, 1.0, 0.5), (5.0, -5.0, -0.75)]


@pytest.mark.parametrize("args", ARANGES + [tuple(np.round(np.random.default_rng(s).uniform(-100, 100, 3), 3))
                                            for s in range(40)])
@pytest.mark.parametrize("dtype", [None, np.float32, np.float64])
def test_float_arange_matches_numpy(args: Any, dtype: Any) -> None:
    """arange with float arguments, computed from the point's index, is NumPy's fill bit for bit."""
    a: Any = tuple(float(v) for v in args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = np.arange(*a, dtype=dtype)  # type: ignore[misc]
        except ValueError:
            with pytest.raises(ValueError):
                loom.arange(*a, dtype=dtype)  # type: ignore[misc]
            return
        got = np.asarray(loom.arange(*a, dtype=dtype).get())  # type: ignore[misc]
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)
