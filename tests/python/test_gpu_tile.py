"""GPU tiled elementwise kernels (codegen/gpu_tile.c): when one loaded buffer is contiguous along an earlier
dim and strided along the last (x.T + y, (A + A.T) / 2, a channels-last view beside a contiguous array),
the main entry walks 32 x 32 tiles of that dim and the last one, the transposed buffer read through shared
memory; extents below 8 along either dim take the plain loop. Every case is checked against NumPy: sizes
that are not multiples of the tile, partial tiles at both edges, batches of 3-d and 4-d arrays, several
dtypes (bool, int8, float16, float64, complex64), views with offsets, in-place updates, 0-d and empty
arrays. Skipped without a CUDA device (CI has none): runs in scripts/gpu_all.sh on the H200.
"""
from typing import Any

import numpy as np
import pytest

import loom

GPU = loom.cuda.is_available()
pytestmark = pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")


def rnd(shape: Any, dtype: str, seed: int) -> np.ndarray:
    r = np.random.default_rng(seed)
    if dtype == "bool":
        return r.integers(0, 2, size=shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return r.integers(-50, 50, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)
    return r.standard_normal(shape).astype(dtype)


def same(got: Any, want: np.ndarray) -> None:
    g = loom.asnumpy(got)
    assert g.shape == want.shape and g.dtype == want.dtype
    if want.dtype.kind in "fc":
        # the GPU contracts x * y + 1 into one fma (NumPy rounds twice): where the sum cancels, the error is
        # relative to the terms (standard normal here), not to the result
        np.testing.assert_allclose(g, want, rtol=2e-3 if want.dtype == np.float16 else 1e-6,
                                   atol=0 if want.dtype == np.float16 else 8 * np.finfo(want.dtype).eps)
    else:
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "complex64"])
@pytest.mark.parametrize("n,m", [(1024, 1024), (1000, 1000), (33, 65), (31, 7), (7, 300), (8, 8), (1, 50)])
def test_transpose_add_and_symmetrize(dtype: str, n: int, m: int) -> None:
    x, y = rnd((m, n), dtype, 1), rnd((n, m), dtype, 2)
    gx, gy = loom.asarray(x), loom.asarray(y)
    same(gx.T + gy, x.T + y)
    same(gy - gx.T, y - x.T)
    if n == m:
        same((gx + gx.T) * 2, (x + x.T) * 2)


@pytest.mark.parametrize("n", [32, 64, 96, 129, 1000, 4100])
def test_symmetric_planes(n: int) -> None:
    # a square plane whose transposed side reads the row-major side's memory: every tile exactly once for
    # 1..129 tiles a side, in a batch, and through an offset view
    x = rnd((n, n), "float32", 12)
    gx = loom.asarray(x)
    same(0.5 * (gx + gx.T), 0.5 * (x + x.T))
    same(gx.T - gx, x.T - x)
    b = rnd((3, 70, 70), "float32", 13)
    gb = loom.asarray(b)
    same(gb + loom.transpose(gb, (0, 2, 1)), b + np.transpose(b, (0, 2, 1)))
    v = x[1:, 1:]  # an offset square view of the same memory
    gv = gx[1:, 1:]
    same(gv * gv.T, v * v.T)


@pytest.mark.parametrize("n,m", [(4099, 2053), (2053, 4099), (20011, 77)])
def test_rect_odd_rows_ranges_of_tiles(n: int, m: int) -> None:
    # each block walks a range of consecutive tiles (several a block here: more tiles than resident
    # blocks); rows of odd length put tile edges inside sectors; a batch of odd planes continues the ranges
    # across planes
    x, y = rnd((m, n), "float32", 14), rnd((n, m), "float32", 15)
    gx, gy = loom.asarray(x), loom.asarray(y)
    same(gx.T * gy, x.T * y)
    b = rnd((5, 1001, 777), "float32", 16)
    c = rnd((5, 777, 1001), "float32", 17)
    gb, gc = loom.asarray(b), loom.asarray(c)
    same(loom.transpose(gb, (0, 2, 1)) - gc, np.transpose(b, (0, 2, 1)) - c)


def test_bool_and_mixed_dtypes() -> None:
    a = rnd((130, 70), "bool", 3)
    b = rnd((70, 130), "float32", 4)
    ga, gb = loom.asarray(a), loom.asarray(b)
    same(loom.where(ga.T, gb, -gb), np.where(a.T, b, -b))
    same(gb * ga.T.astype(np.float64), b * a.T.astype(np.float64))


@pytest.mark.parametrize("shape,axes", [((3, 40, 50), (0, 2, 1)), ((5, 37, 70), (2, 1, 0)), ((4, 3, 33, 40), (0, 3, 1, 2)),
                                        ((2, 50, 3, 41), (3, 1, 2, 0))])
def test_nd_permutes_beside_contiguous(shape: Any, axes: Any) -> None:
    x = rnd(shape, "float32", 5)
    xt = np.transpose(x, axes)
    y = rnd(xt.shape, "float32", 6)
    gx, gy = loom.asarray(x), loom.asarray(y)
    same(loom.transpose(gx, axes) * gy + 1, xt * y + 1)
    same(loom.exp(loom.transpose(gx, axes)) - gy, np.exp(xt) - y)


def test_views_offsets_and_broadcasts() -> None:
    x = rnd((300, 260), "float32", 7)
    y = rnd((250, 290), "float32", 8)
    b = rnd(290, "float32", 9)
    gx, gy, gb = loom.asarray(x), loom.asarray(y), loom.asarray(b)
    same(gx[3:293, 5:255].T + gy, x[3:293, 5:255].T + y)              # offset base, row stride 260
    same(gx[::-1, :250].T[:, 10:] * gy, x[::-1, :250].T[:, 10:] * y)  # reversed rows, a column offset
    same(gx[:290, :250].T + gb + gy, x[:290, :250].T + b + y)          # a broadcast beside both


def test_in_place_update_and_edges() -> None:
    x = rnd((97, 61), "float32", 10)
    y = rnd((61, 97), "float32", 11)
    gx, gy = loom.asarray(x), loom.asarray(y)
    gy += gx.T
    same(gy, y + x.T)
    e = loom.asarray(np.zeros((0, 5), np.float32))
    same(e.T + loom.asarray(np.zeros((5, 0), np.float32)), np.zeros((5, 0), np.float32))
    z = loom.asarray(np.float32(2.5))
    same(z + z.T, np.asarray(np.float32(5.0)))
