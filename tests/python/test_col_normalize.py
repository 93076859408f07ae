"""Column normalizations (statistics over the leading axes, then a map of every point that reads them:
standardization, BatchNorm in training, centring) against NumPy. On a GPU these are COL phase splits
whose MAP step walks the points in memory order over its own grid (codegen/gpu_phases.c cg_gpu_map_flat):
tall and wide shapes, a row length that is not a multiple of the warp, one column, padded and strided
rows, a per-column operand, NaN in one column, float16 / float32 / float64. On the host the same
expressions run the host plans."""
import numpy as np
import pytest

import loom
from conftest import check

TOL = {"float16": 2e-2, "float32": 2e-4, "float64": 1e-9}


def data(shape: tuple, dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 2.0 + 5.0).astype(dtype)


def standardize(xp, x, axis=0):
    mu = xp.mean(x, axis=axis, keepdims=True)
    return (x - mu) / (xp.std(x, axis=axis, keepdims=True) + 1e-5)


def ref(fn, a: np.ndarray, **kw) -> np.ndarray:
    """fn in float64 (float16 / float32 computed wider, then rounded): the independent reference"""
    return fn(np, a.astype(np.float64), **kw).astype(a.dtype)


SHAPES = [(20011, 77), (5000, 700), (70000, 1), (3001, 33), (1, 64), (2, 3)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standardize_columns(shape: tuple, dtype: str) -> None:
    a = data(shape, dtype, seed=shape[0])
    check(standardize(loom, loom.asarray(a)), ref(standardize, a), rtol=TOL[dtype], atol=TOL[dtype])


def test_standardize_float16() -> None:
    a = data((4099, 40), "float16")
    got = standardize(loom, loom.asarray(a)).get()
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), ref(standardize, a).astype(np.float64), rtol=2e-2, atol=2e-2)


def test_nan_stays_in_its_column() -> None:
    a = data((8193, 45), "float32")
    a[4000, 7] = np.nan
    got = standardize(loom, loom.asarray(a)).get()
    assert np.isnan(got[:, 7]).all()
    keep = np.ones(45, bool)
    keep[7] = False
    np.testing.assert_allclose(got[:, keep], ref(standardize, a)[:, keep], rtol=2e-4, atol=2e-4)


def test_strided_and_padded_rows() -> None:
    base = data((12002, 81), "float32", seed=3)
    x = loom.asarray(base)
    for sl in ((slice(None, None, 2), slice(None, 77)), (slice(1, None, 3), slice(4, None)),
               (slice(None), slice(None, None, 2))):
        check(standardize(loom, x[sl]), ref(standardize, base[sl]), rtol=2e-4, atol=2e-4)


def test_batchnorm_train_channels_last() -> None:
    """BatchNorm2d in training on NHWC data: statistics over (N, H, W), then scale and shift per channel"""
    a = data((16, 30, 31, 24), "float32", seed=5)
    g = np.linspace(0.5, 1.5, 24).astype(np.float32)
    b = np.linspace(-1.0, 1.0, 24).astype(np.float32)

    def bn(xp, x, g, b):
        mu = xp.mean(x, axis=(0, 1, 2))
        var = xp.mean((x - mu) ** 2, axis=(0, 1, 2))
        return (x - mu) / xp.sqrt(var + 1e-5) * g + b

    got = bn(loom, loom.asarray(a), loom.asarray(g), loom.asarray(b))
    want = bn(np, a.astype(np.float64), g.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    check(got, want, rtol=2e-4, atol=2e-4)


def test_centre_and_mask() -> None:
    """two maps of one statistic: x - mean and where(x > mean), in one expression"""
    a = data((9000, 130), "float64", seed=9)
    x = loom.asarray(a)
    mu = loom.mean(x, axis=0)
    got = loom.where(x > mu, x - mu, 0.0)
    m = a.mean(axis=0)
    check(got, np.where(a > m, a - m, 0.0), rtol=1e-9, atol=1e-12)
