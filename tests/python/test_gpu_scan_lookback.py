"""GPU scans of few long rows after the scan15 change: the single-pass decoupled look-back scan
(codegen/lower_scan_lookback.c; fewer than 512 rows of 4096+ points), through the CuPy-compatible API, each
case against NumPy: integers exactly (wrap-around in the result dtype), float sums against the float64
cumsum within a bound scaled by the running sum of magnitudes (the GPU associates in a tree and across
tiles), cummax / cummin exactly (NaN propagates), fused producers and consumers, strided views, several
rows, back-to-back scans and repeated runs. Skipped without a CUDA device (CI has none): the lead runs it on
the H200 (scripts/gpu_all.sh).
"""
import numpy as np
import pytest

import loom

GPU = loom.cuda.is_available()
pytestmark = pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")

TILE = 4096  # points of a look-back tile (256 threads x 16: codegen.h CG_SCAN_LB_ITEMS)


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def close_sum(got, v, axis=-1):
    """got within (15 k / TILE + 72) units of the running magnitude of the float64 cumsum (k: the position
    along the axis): the look-back scan reaches point k through at most 72 roundings in its tile and the
    look-back's folds, plus 15 per earlier tile along the chain of inclusive prefixes, each within a unit
    of the running magnitude (a missing or doubled tile, TILE points' worth, is far outside it)."""
    ref = np.cumsum(v.astype(np.float64), axis=axis)
    mag = np.cumsum(np.abs(v).astype(np.float64), axis=axis) + 1
    k = np.arange(1, v.shape[axis] + 1, dtype=np.float64)
    shape = [1] * v.ndim
    shape[axis] = -1
    unit = np.finfo(got.dtype).eps / 2
    bound = (15 * k.reshape(shape) / TILE + 72) * unit * mag
    err = np.abs(got.astype(np.float64) - ref)
    assert np.all(err <= bound), f"max error / bound {float(np.max(err / bound)):.3g}"


@pytest.mark.parametrize("n", [2 * TILE - 1, 2 * TILE, 2 * TILE + 1, 3 * TILE + 1, (1 << 20) + 3, 1 << 26])
def test_cumsum_f32_tile_boundaries(n):
    x = np.random.default_rng(n).random(n, dtype=np.float32) * 4 - 1
    close_sum(host(loom.cumsum(loom.asarray(x))), x)


SEG = 512  # points of a wave's segment of a tile (32 lanes x 16 items): its own loads, stores and slots


@pytest.mark.parametrize("r", [1, SEG - 1, SEG, SEG + 1, 3 * SEG + 17, TILE - 1])
def test_last_tile_ends_inside_a_wave_segment(r):
    """A last tile of r points ends inside (or at the edge of) a wave's segment: the lanes past the end
    load the identity and store nothing; int8 sums wrap as NumPy's (exact), with a producer fused in."""
    n = 2 * TILE + r
    x = np.random.default_rng(r).integers(-128, 128, n).astype(np.int8)
    got = host(loom.cumsum(loom.asarray(x) * 3, dtype=np.int8))
    np.testing.assert_array_equal(got, np.cumsum(x * np.int8(3), dtype=np.int8))
    y = np.random.default_rng(r).random(n, dtype=np.float32) * 4 - 1
    close_sum(host(loom.cumsum(loom.asarray(y))), y)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "uint32", "uint64", "bool"])
def test_cumsum_integers_exact(dtype):
    n = (1 << 20) + 5
    r = np.random.default_rng(1)
    x = r.integers(0, 2, n).astype(dtype) if dtype == "bool" else r.integers(0, 120, n).astype(dtype)
    np.testing.assert_array_equal(host(loom.cumsum(loom.asarray(x))), np.cumsum(x))


def test_cumsum_int32_wraps():
    x = np.random.default_rng(2).integers(-(2**31), 2**31 - 1, (1 << 20) + 3, dtype=np.int32)
    np.testing.assert_array_equal(host(loom.cumsum(loom.asarray(x), dtype=np.int32)), np.cumsum(x, dtype=np.int32))


def test_cumprod_int64_wraps():
    x = (np.random.default_rng(3).integers(0, 1000, 70001) * 2 + 1).astype(np.int64)
    np.testing.assert_array_equal(host(loom.cumprod(loom.asarray(x))), np.cumprod(x))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_cummax_cummin_nan(dtype):
    x = np.random.default_rng(4).standard_normal((1 << 20) + 7).astype(dtype)
    x[5000] = np.nan
    g = loom.asarray(x)
    np.testing.assert_array_equal(host(loom.maximum.accumulate(g)), np.maximum.accumulate(x))
    np.testing.assert_array_equal(host(loom.minimum.accumulate(g)), np.minimum.accumulate(x))


def test_cumsum_nan_propagates():
    x = np.ones(100003, np.float32)
    x[4099] = np.nan
    got = host(loom.cumsum(loom.asarray(x)))
    assert np.all(np.isnan(got[4099:])) and np.array_equal(got[:4099], np.arange(1, 4100, dtype=np.float32))


def test_float64_and_complex():
    r = np.random.default_rng(5)
    x = r.standard_normal((1 << 20) + 1)
    close_sum(host(loom.cumsum(loom.asarray(x))), x)
    for dt in (np.complex64, np.complex128):
        z = (r.standard_normal(100003) + 1j * r.standard_normal(100003)).astype(dt)
        got = host(loom.cumsum(loom.asarray(z)))
        close_sum(got.real, z.real)
        close_sum(got.imag, z.imag)


def test_float16():
    x = (np.random.default_rng(6).random(100003) * 0.01).astype(np.float16)
    close_sum(host(loom.cumsum(loom.asarray(x), dtype=np.float32)), x.astype(np.float32))
    # float16 partial sums that are exact in any order (integers below 2048): NumPy's bits
    y = np.zeros(100003, np.float16)
    y[::97] = 1
    got = host(loom.cumsum(loom.asarray(y)))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.cumsum(y))


def test_fused_producer_and_consumer_strided_rows():
    r = np.random.default_rng(7)
    x = (r.random((4, (1 << 20) + 3), dtype=np.float32) * 4 - 1)
    g = loom.asarray(x)
    close_sum(host(loom.cumsum(g * 2 + 1, axis=1)), x * 2 + 1, axis=1)
    y = host(loom.cumsum(g, axis=1) * 3 - 1)
    close_sum((y + 1) / 3, x, axis=1)
    close_sum(host(loom.cumsum(g[:, ::3], axis=1)), x[:, ::3], axis=1)
    rows = r.random((511, 2 * TILE + 4), dtype=np.float32)
    close_sum(host(loom.cumsum(loom.asarray(rows), axis=1)), rows, axis=1)


def test_back_to_back_and_repeats():
    x = np.random.default_rng(8).integers(-50, 50, 3 * (1 << 20) + 5).astype(np.int64)
    g = loom.asarray(x)
    want1 = np.cumsum(x)
    want2 = np.maximum.accumulate(np.cumsum(want1))
    for _ in range(3):
        s = loom.cumsum(g)
        t = loom.maximum.accumulate(loom.cumsum(s))
        np.testing.assert_array_equal(host(s), want1)
        np.testing.assert_array_equal(host(t), want2)


def test_empty_and_short():
    for n in (0, 1, TILE - 1, TILE, TILE + 1):
        x = np.arange(n, dtype=np.int32)
        np.testing.assert_array_equal(host(loom.cumsum(loom.asarray(x))), np.cumsum(x))
