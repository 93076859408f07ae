"""GPU one-phase row reductions of many rows (>= 2048 rows of a few thousand points): the launcher gives them
a narrower block, about a thread per 32 points (runtime/gpu/gpu_launch_policy.c narrow_row_block;
LOOM_GPU_ROW_NARROW=0 keeps the kernel's block). Each case against NumPy: arg-reductions (first index of
ties, the first NaN, all -inf rows), sums and maxima, row lengths that are not multiples of the lanes or of
the block, unaligned row starts (a column slice), and the same indices with the knob off (a subprocess).
Skipped without a CUDA device (CI has none): runs in scripts/gpu_all.sh on the H200.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

GPU = loom.cuda.is_available()
pytestmark = pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")


def rows(r, c, dtype, seed):
    x = np.random.default_rng(seed).standard_normal((r, c)).astype(dtype)
    x[1, :] = x[1, 0]                       # one value everywhere: index 0
    x[2, :] = -np.inf                       # all -inf: index 0
    x[3, c // 3] = np.nan                   # the first NaN wins
    x[3, c - 1] = np.nan
    x[4, c // 2] = x[4, c - 2] = 1e4        # ties: the first
    return x


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32"])
@pytest.mark.parametrize("c", [4096, 4099, 2048, 8192, 1000])
def test_arg_rows_many(dtype, c):
    x = rows(2304, c, "float32", c)
    if np.dtype(dtype).kind in "iu":
        x = np.nan_to_num(x * 5, nan=7, neginf=-9).astype(dtype) % 11
    else:
        x = x.astype(dtype)
    g = loom.asarray(x)
    np.testing.assert_array_equal(loom.argmax(g, axis=-1).get(), np.argmax(x, axis=-1))
    np.testing.assert_array_equal(loom.argmin(g, axis=-1).get(), np.argmin(x, axis=-1))


def test_arg_rows_unaligned():
    x = rows(2048, 4100, "float32", 7)
    g = loom.asarray(x)[:, 1:4097]          # rows that start off a 16-byte boundary
    np.testing.assert_array_equal(loom.argmax(g, axis=1).get(), np.argmax(x[:, 1:4097], axis=1))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_sum_max_rows_many(dtype):
    x = np.random.default_rng(3).standard_normal((4096, 3000)).astype(dtype)
    g = loom.asarray(x)
    ref = x.astype(np.float64).sum(axis=1)
    got = loom.sum(g, axis=1).get().astype(np.float64)
    tol = 2e-2 if dtype == "float16" else 1e-4
    assert np.max(np.abs(got - ref) / (np.abs(ref) + np.sqrt(3000))) < tol
    np.testing.assert_array_equal(loom.max(g, axis=1).get(), x.max(axis=1))


def test_knob_off_same_indices():
    code = ("import numpy as np, loom; x = np.random.default_rng(5).standard_normal((2048, 4096)).astype('float32');"
            "print(int(np.asarray(loom.argmax(loom.asarray(x), axis=1).get()).astype(np.int64).sum()))")
    env = dict(os.environ, LOOM_GPU_ROW_NARROW="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    x = np.random.default_rng(5).standard_normal((2048, 4096)).astype("float32")
    assert int(out.stdout.split()[-1]) == int(np.argmax(x, axis=1).astype(np.int64).sum())
