"""Host tiled elementwise kernels (codegen/lower_host_tile.c): when one buffer is contiguous along the
second-to-last dim and strided along the last (x.T + y, (A + A.T) / 2, a permuted 3-d view beside a
contiguous array), the host walks the full rows of each task's range in 16 x 16 tiles and the partial
first and last rows with the plain walk. Every case is checked against NumPy: sizes that are not
multiples of the tile, ranges split among tasks (over 32768 points), batches of 3-d arrays, several
dtypes, views with offsets and steps, in-place updates, index-dependent ops (arange-like through
random keys is not needed: iota via indices), and empty arrays; the IR check shows the tiled walk is the
one compiled, and only for transposed operands.
"""
from typing import Any

import numpy as np
import pytest

import loom


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
        np.testing.assert_allclose(g, want, rtol=2e-3 if want.dtype == np.float16 else 1e-6,
                                   atol=0 if want.dtype == np.float16 else 8 * np.finfo(want.dtype).eps)
    else:
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "complex64", "bool"])
@pytest.mark.parametrize("n,m", [(600, 600), (513, 257), (33, 65), (31, 7), (7, 300), (16, 16), (1, 50),
                                 (2000, 3)])
def test_transpose_add_and_symmetrize(dtype: str, n: int, m: int) -> None:
    x, y = rnd((m, n), dtype, 1), rnd((n, m), dtype, 2)
    gx, gy = loom.asarray(x), loom.asarray(y)
    if dtype == "bool":
        same(gx.T ^ gy, x.T ^ y)
        return
    same(gx.T + gy, x.T + y)
    same(gy - gx.T, y - x.T)
    if n == m:
        same((gx + gx.T) * 2, (x + x.T) * 2)


def test_permuted_3d_views_offsets_and_steps() -> None:
    a = rnd((5, 70, 90), "float32", 3)
    b = rnd((5, 90, 70), "float32", 4)
    ga, gb = loom.asarray(a), loom.asarray(b)
    same(ga.transpose(0, 2, 1) * gb, a.transpose(0, 2, 1) * b)
    same(loom.exp(ga.transpose(0, 2, 1)) - gb, np.exp(a.transpose(0, 2, 1)) - b)
    # a view with an offset and a row step, transposed
    c = rnd((400, 300), "float64", 5)
    gc = loom.asarray(c)
    same(gc[3:303:2, 7:].T + 1.0, c[3:303:2, 7:].T + 1.0)
    same(gc[10:210, 20:220].T * gc[10:210, 20:220], c[10:210, 20:220].T * c[10:210, 20:220])


def test_broadcast_beside_transpose_and_mixed_dtypes() -> None:
    x = rnd((300, 200), "float32", 6)
    row = rnd((300,), "float32", 7)
    col = rnd((200, 1), "float64", 8)
    gx, gr, gc = loom.asarray(x), loom.asarray(row), loom.asarray(col)
    same(gx.T + gr + gc, x.T + row + col)
    same(loom.where(gx.T > 0, gx.T, gr), np.where(x.T > 0, x.T, row))


def test_in_place_and_empty() -> None:
    x = rnd((260, 260), "float32", 9)
    y = rnd((260, 260), "float32", 10)
    gx, gy = loom.asarray(x), loom.asarray(y)
    gy += gx.T
    y += x.T
    same(gy, y)
    e = np.zeros((0, 40), np.float32)
    same(loom.asarray(e).T + loom.zeros((40, 0), np.float32), e.T + np.zeros((40, 0), np.float32))


def test_index_dependent_op_in_a_tiled_kernel() -> None:
    # the linear index of every point must be its own: indices() read beside a transposed operand
    x = rnd((130, 170), "float32", 11)
    i, j = loom.indices((170, 130))
    gx = loom.asarray(x)
    same(gx.T + i * 1000 + j, x.T + np.indices((170, 130))[0] * 1000 + np.indices((170, 130))[1])


def test_tiled_walk_is_compiled_for_transposes_only() -> None:
    x, y = loom.asarray(rnd((64, 64), "float32", 12)), loom.asarray(rnd((64, 64), "float32", 13))
    ir_t = loom.inspect(x.T + y, what="llvm")["llvm"]
    ir_c = loom.inspect(x + y, what="llvm")["llvm"]
    assert "tile." in ir_t
    assert "tile." not in ir_c
