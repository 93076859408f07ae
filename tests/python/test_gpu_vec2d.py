"""GPU elementwise vector entries of n-d kernels (codegen/gpu_strategies.c cg_gpu_elemv_pair): every buffer
contiguous or broadcast along the last dim, one row division per vector, 16-byte loads and stores, a
broadcast operand loaded once per vector. The launcher (runtime/gpu/gpu_launch.c elem_vec_ok) runs them only
when the last dim is a multiple of the lanes and every contiguous buffer starts its rows aligned; the other
cases below (odd last dims, shifted bases, odd row strides) must fall back to the scalar entry. Every case is
checked against NumPy. Skipped without a CUDA device (CI has none): runs in scripts/gpu_all.sh on the H200.
"""
import numpy as np
import pytest

import loom

GPU = loom.cuda.is_available()
pytestmark = pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")


def rnd(shape, dtype, seed):
    r = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return r.integers(-50, 50, size=shape).astype(dtype)
    return r.standard_normal(shape).astype(dtype)


def same(got, want, dtype):
    got = got.get() if hasattr(got, "get") else np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, want, rtol=2e-3 if dtype == "float16" else 1e-6, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int64"])
@pytest.mark.parametrize("m,n", [(257, 1024), (64, 1030), (33, 8), (5, 3), (1, 4096)])
def test_outer_and_row_broadcasts(dtype, m, n):
    a, b = rnd(m, dtype, 1), rnd(n, dtype, 2)
    x = rnd((m, n), dtype, 3)
    ga, gb, gx = loom.asarray(a), loom.asarray(b), loom.asarray(x)
    same(ga[:, None] + gb[None, :], a[:, None] + b[None, :], dtype)    # outer: both broadcast
    same(gx * gb + ga[:, None], x * b + a[:, None], dtype)              # row bias and column scale
    same(gx - gb, x - b, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_views_with_odd_bases_and_strides(dtype):
    x = rnd((96, 1032), dtype, 4)
    b = rnd(1024, dtype, 5)
    gx, gb = loom.asarray(x), loom.asarray(b)
    same(gx[:, :1024] + gb, x[:, :1024] + b, dtype)        # row stride 1032: aligned rows
    same(gx[:, 1:1025] + gb, x[:, 1:1025] + b, dtype)      # shifted base: the scalar entry
    same(gx[::3, 4:1028] * gb, x[::3, 4:1028] * b, dtype)  # every third row, aligned
    y = rnd((96, 1027), dtype, 6)
    gy = loom.asarray(y)
    same(gy[:, :1024] + gb, y[:, :1024] + b, dtype)        # row stride 1027: rows not aligned
    same(gx.T[:8, :] + 1, x.T[:8, :] + 1, dtype)           # transposed: not contiguous along the last dim


def test_three_d_middle_axis_and_mixed_dtypes():
    x = rnd((6, 40, 256), "float32", 7)
    s = rnd((40, 1), "float32", 8)
    h = rnd(256, "float16", 9)
    gx, gs, gh = loom.asarray(x), loom.asarray(s), loom.asarray(h)
    same(gx * gs + gh, x * s + h, "float32")
    i8 = rnd((6, 40, 256), "int8", 10)
    same(loom.asarray(i8).astype(np.float32) * gs, i8.astype(np.float32) * s, "float32")


def test_many_outputs_and_where():
    a, b = rnd(128, "float32", 11), rnd(512, "float32", 12)
    ga, gb = loom.asarray(a), loom.asarray(b)

    @loom.fuse()
    def two(a, b):
        d = a[:, None] - b[None, :]
        return loom.where(d > 0, d, 0.0), d * d

    p, q = two(ga, gb)
    d = a[:, None] - b[None, :]
    same(p, np.where(d > 0, d, np.float32(0)), "float32")
    same(q, d * d, "float32")
