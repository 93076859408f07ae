"""Host code paths of the CPU-suite fixes (issue 11, cpumisc11), each against an independent reference:

- float -> 8/16/32-bit integer casts (codegen/lower_host_cast.c): NaN -> 0, saturation at the target's
  bounds, truncation toward zero, for float16/float32/float64 sources; the reference is a float64 loop
  written here, and NumPy's astype where NumPy defines the result (values in range);
- int8 quantisation `clip(rint(x / s), -128, 127).astype(int8)` bit-identical to NumPy (ties to even);
- float16 kernels at the float32 width (codegen/lower_host.c f16_width): GPT-2 gelu in float16,
  bit-identical to NumPy's per-op float16 rounding, with overflow to inf, subnormals, NaN and inf;
- staged transposed tiles (codegen/lower_host_tile.c): x.T + y exact against NumPy for every element
  size the staging moves (1, 2, 4, 8 bytes) and for 16-byte elements (not staged), full and partial
  tiles, 3-d permutations, broadcast operands, views with steps.
Sizes exceed one vector body and leave remainders, so vector loops and their scalar tails both run.
"""
import math
from typing import Any

import numpy as np
import pytest

import loom

INT_TARGETS = ["int8", "uint8", "int16", "uint16", "int32", "uint32"]


def saturating_reference(x: np.ndarray, to: str) -> np.ndarray:
    """KI_CAST float -> int: NaN -> 0, values beyond the range -> its bounds, else truncation."""
    info = np.iinfo(to)
    out = np.empty(x.shape, dtype=to)
    flat = out.reshape(-1)
    for i, v in enumerate(x.astype(np.float64).reshape(-1)):
        if math.isnan(v):
            flat[i] = 0
        elif v <= info.min:
            flat[i] = info.min
        elif v >= info.max:
            flat[i] = info.max
        else:
            flat[i] = int(math.trunc(v))
    return out


def edge_values(src: str, to: str) -> np.ndarray:
    info = np.iinfo(to)
    f = np.dtype(src)
    vals = [0.0, -0.0, 0.5, -0.5, 0.999, -0.999, 1.5, -1.5, 2.5, -2.5, float("nan"), float("inf"), -float("inf"),
            float(info.max), float(info.max) + 0.5, float(info.max) + 1, float(info.min), float(info.min) - 0.5,
            float(info.min) - 1, 1e30, -1e30, 3e9, -3e9, 4294967040.0, 4294967296.0, 2147483520.0, 2147483648.0,
            -2147483648.0, -2147483904.0, 65504.0, -65504.0, 1e-40, -1e-40, 6e-8]
    with np.errstate(over="ignore"):
        return np.array(vals, dtype=np.float64).astype(f)


@pytest.mark.parametrize("src", ["float16", "float32", "float64"])
@pytest.mark.parametrize("to", INT_TARGETS)
def test_float_to_int_cast_saturates_like_the_reference(src: str, to: str) -> None:
    r = np.random.default_rng(7)
    info = np.iinfo(to)
    span = min(float(info.max) * 1.5 + 10, float(np.finfo(src).max))
    with np.errstate(over="ignore"):
        rand = (r.uniform(-span, span, 1037)).astype(src)
    x = np.concatenate([edge_values(src, to), rand, edge_values(src, to)[::-1]])
    got = loom.asnumpy(loom.asarray(x).astype(to))
    np.testing.assert_array_equal(got, saturating_reference(x, to))
    # in range, where NumPy defines the cast: NumPy's own answer
    ok = np.isfinite(x.astype(np.float64)) & (x.astype(np.float64) > info.min - 1) & (x.astype(np.float64) < info.max + 1)
    np.testing.assert_array_equal(got[ok], x[ok].astype(to))
    # fused behind arithmetic (the vector loop of a map kernel), non-contiguous, 0-d and empty
    gx = loom.asarray(x)
    np.testing.assert_array_equal(loom.asnumpy((gx[::3] * 1).astype(to)), saturating_reference(x[::3] * 1, to))
    np.testing.assert_array_equal(loom.asnumpy(loom.asarray(x[5:6].reshape(())).astype(to)),
                                  saturating_reference(x[5:6].reshape(()), to))
    assert loom.asnumpy(loom.asarray(x[:0]).astype(to)).shape == (0,)


@pytest.mark.parametrize("n", [1, 7, 64, 4099])
def test_int8_quantize_matches_numpy(n: int) -> None:
    r = np.random.default_rng(n)
    x = (r.standard_normal(n) * 3).astype(np.float32)
    x[: min(n, 4)] = np.array([0.01, -0.01, 0.03, 2.57], dtype=np.float32)[: min(n, 4)]  # ties of x / 0.02

    def q(xp: Any, v: Any) -> Any:
        return xp.clip(xp.rint(v / 0.02), -128, 127).astype(xp.int8)

    want = q(np, x)
    np.testing.assert_array_equal(loom.asnumpy(q(loom, loom.asarray(x))), want)
    f = loom.fuse()(lambda v: q(loom, v))
    np.testing.assert_array_equal(loom.asnumpy(f(loom.asarray(x))), want)
    xs = np.repeat(x, 2)[::2]
    np.testing.assert_array_equal(loom.asnumpy(q(loom, loom.asarray(np.repeat(x, 2))[::2])), q(np, xs))


def test_float16_gelu_bit_identical_to_numpy() -> None:
    r = np.random.default_rng(3)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 65504, -65504, 40.0, -40.0, 6e-8, -6e-8, 1e-5,
                        6.1e-5, 3.0, -3.0], dtype=np.float16)
    x = np.concatenate([special, (r.standard_normal(5003) * 4).astype(np.float16), special])

    def gelu(xp: Any, v: Any) -> Any:
        return 0.5 * v * (1.0 + xp.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3)))

    with np.errstate(all="ignore"):
        want = gelu(np, x)
    got = loom.asnumpy(gelu(loom, loom.asarray(x)))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.view(np.uint16)[~np.isnan(want)], want.view(np.uint16)[~np.isnan(want)])
    assert np.array_equal(np.isnan(got), np.isnan(want))
    # float16 arithmetic with per-op rounding, overflow to inf and subnormal results
    y = np.concatenate([x, np.array([300.0, -300.0, 1e-7], dtype=np.float16)])
    with np.errstate(all="ignore"):
        want2 = (y * y) * np.float16(0.001) + y
    got2 = loom.asnumpy((loom.asarray(y) * loom.asarray(y)) * np.float16(0.001) + loom.asarray(y))
    np.testing.assert_array_equal(got2, want2)


def rnd(shape: Any, dtype: str, seed: int) -> np.ndarray:
    r = np.random.default_rng(seed)
    if dtype == "bool":
        return r.integers(0, 2, size=shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return r.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)
    return (r.standard_normal(shape) * 100).astype(dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "float16", "int32", "float32", "int64", "float64",
                                   "complex64", "complex128", "bool"])
@pytest.mark.parametrize("n,m", [(48, 32), (37, 53), (16, 17), (300, 40)])
def test_staged_transpose_exact(dtype: str, n: int, m: int) -> None:
    x, y = rnd((m, n), dtype, 1), rnd((n, m), dtype, 2)
    gx, gy = loom.asarray(x), loom.asarray(y)
    with np.errstate(all="ignore"):
        want = x.T ^ y if dtype == "bool" else x.T + y
        got = loom.asnumpy(gx.T ^ gy if dtype == "bool" else gx.T + gy)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)  # integer wrap-around, float16 rounding: exact


def test_staged_transpose_views_broadcast_and_3d() -> None:
    a = rnd((3, 70, 90), "float32", 5)
    b = rnd((3, 90, 70), "float32", 6)
    ga, gb = loom.asarray(a), loom.asarray(b)
    np.testing.assert_array_equal(loom.asnumpy(ga.transpose(0, 2, 1) - gb), a.transpose(0, 2, 1) - b)
    # two transposed operands and a broadcast row; a transposed view with offset and steps
    c = rnd((64, 96), "float32", 7)
    gc = loom.asarray(c)
    row = rnd((64,), "float32", 8)
    want = c.T * c[:, ::-1].T + row
    np.testing.assert_array_equal(loom.asnumpy(gc.T * gc[:, ::-1].T + loom.asarray(row)), want)
    big = rnd((100, 80), "float64", 9)
    v = big[2::2, 1:77]          # rows step 2: the transposed view is not contiguous along its rows
    w = rnd((76, 49), "float64", 10)
    np.testing.assert_array_equal(loom.asnumpy(loom.asarray(big)[2::2, 1:77].T + loom.asarray(w)), v.T + w)
    # NaN and inf pass through the staged copy bit for bit
    s = rnd((32, 32), "float32", 11)
    s[3, 5], s[7, 1], s[0, 31] = np.nan, np.inf, -np.inf
    gs = loom.asarray(s)
    np.testing.assert_array_equal(loom.asnumpy(gs + gs.T), s + s.T)
