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


# Panels (lower_host_tile.c's panel_rows): a task's full rows run in panels of up to 256 rows (float32
# x.T + y), a column of tiles at a time. The shapes below give tasks taller than a panel (a remainder
# panel that is not a whole number of tiles), planes shorter than a panel (3-d), one-row and one-column
# outputs, and strided views; every dtype size the staged copy moves (1, 2, 4, 8 bytes).
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16"])
@pytest.mark.parametrize("n,m", [(1100, 70), (531, 1029), (1, 5000), (5000, 1), (300, 17), (2049, 33)])
def test_panels_against_numpy(dtype: str, n: int, m: int) -> None:
    x, y = rnd((m, n), dtype, 20), rnd((n, m), dtype, 21)
    gx, gy = loom.asarray(x), loom.asarray(y)
    same(gx.T + gy, x.T + y)
    same(gx.T * 3 - gy, x.T * 3 - y)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8"])
def test_panels_3d_and_slices(dtype: str) -> None:
    a, b = rnd((3, 290, 300), dtype, 22), rnd((3, 300, 290), dtype, 23)
    same(loom.asarray(a).transpose(0, 2, 1) + loom.asarray(b), a.transpose(0, 2, 1) + b)
    c = rnd((1200, 900), dtype, 24)
    gc = loom.asarray(c)
    same(gc[::2, 1::3].T + gc[1::4, 100:700], c[::2, 1::3].T + c[1::4, 100:700])
    s = rnd((700, 700), dtype, 25)
    gs = loom.asarray(s)
    same(gs + gs.T, s + s.T)


_PANEL_SCRIPT = """
import numpy as np, loom
r = np.random.default_rng(5)
for (n, m) in [(700, 333), (1, 900), (333, 1), (47, 1000), (1000, 47)]:
    for dt in ("float32", "float64", "int8"):
        x = (r.standard_normal((m, n)) * 40).astype(dt); y = (r.standard_normal((n, m)) * 40).astype(dt)
        got = loom.asnumpy(loom.asarray(x).T + loom.asarray(y))
        assert np.array_equal(got, x.T + y), (n, m, dt)
a = r.standard_normal((4, 130, 250)).astype("float32"); b = r.standard_normal((4, 250, 130)).astype("float32")
assert np.array_equal(loom.asnumpy(loom.asarray(a).transpose(0, 2, 1) + loom.asarray(b)), a.transpose(0, 2, 1) + b)
e = np.zeros((0, 40), np.float32)
assert loom.asnumpy(loom.asarray(e).T + loom.zeros((40, 0), np.float32)).shape == (40, 0)
print("ok")
"""


@pytest.mark.parametrize("panel,edge", [("0", "1"), ("32", "1"), ("48", "0"), ("1", "1"), ("1", "0"), ("4096", "1")])
def test_panel_knob_and_one_task(panel: str, edge: str, tmp_path: Any) -> None:
    # one thread: one task holds every row, so panels follow each other down the whole array; the knobs'
    # values (panel 0: one tile row per panel, N: N rows; edge 0: edge tiles read in place) give the same bits
    import os
    import subprocess
    import sys
    env = dict(os.environ, LOOM_HOST_TILE_PANEL=panel, LOOM_HOST_TILE_EDGE=edge, LOOM_NUM_THREADS="1",
               LOOM_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", _PANEL_SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
