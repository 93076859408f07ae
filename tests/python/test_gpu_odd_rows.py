# SPDX-License-Identifier: Apache-2.0
"""Row reductions and row-normalizing kernels (reduce, then map over the same row) at odd row lengths and
misaligned row starts, against NumPy: rows of 1 .. 17, 31, 33, 1000 and 7777 points, slices x[:, 1:]
(every row starts one point past a vector boundary, the output aligned: phases differ), x[:, 1:] of a
row-padded array (all rows of input and output on one phase), float16 / float32 / float64. On the GPU these
run the vector cached-row entry's peel (codegen/gpu_cached.c: a row's head before its first aligned point
and its tail as one extra point a thread; the launcher runtime/gpu/gpu_launch_policy.c picks it where the
buffers share each row's start phase), its short-row mode (rows <= 32 * 16 points: g lanes a row, g at
least the row's extra points) and block mode, the scalar cached entry where the phases differ, and `main`.
Runs on the default device (the host here: the same assertions) and on a CUDA device when one is visible.
"""
import numpy as np
import pytest

import loom

DEVICES = ["default"] + (["cuda"] if loom.cuda.is_available() else [])
LENGTHS = list(range(1, 18)) + [31, 33, 1000, 7777]


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def on(device, a):
    if device == "cuda":
        with loom.cuda.Device(0):
            return loom.asarray(a)
    return loom.asarray(a)


def rows_for(n):
    return 37 if n <= 1000 else 5  # several rows of every start phase mod 8 (37 is odd, 5 rows of 7777)


def data(shape, dtype, seed):
    r = np.random.default_rng(seed)
    return (r.standard_normal(shape) * 2).astype(dtype)


def tol(dtype):
    return {np.float16: 3e-3, np.float32: 2e-5, np.float64: 1e-12}[dtype]


def softmax(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def clip_row_norm(xp, x):
    n = xp.sqrt(xp.sum(x * x, axis=-1, keepdims=True))
    return x * xp.minimum(1.0, 1.0 / (n + 1e-6))


def l1_normalize(xp, x):
    return x / (xp.sum(xp.abs(x), axis=-1, keepdims=True) + 1e-3)


def logsumexp(xp, x):
    m = xp.max(x, axis=-1, keepdims=True)
    return xp.log(xp.sum(xp.exp(x - m), axis=-1)) + m[:, 0]


def center(xp, x):
    return x - xp.mean(x, axis=-1, keepdims=True)


def row_sum(xp, x):
    return xp.sum(x, axis=-1)


def row_max(xp, x):
    return xp.max(x, axis=-1)


# name -> (function, reference in float64 for float16 inputs?)
KERNELS = {"softmax": softmax, "clip_row_norm": clip_row_norm, "l1_normalize": l1_normalize,
           "logsumexp": logsumexp, "center": center, "row_sum": row_sum, "row_max": row_max}


def check(got, want, dtype, n):
    got = host(got).astype(np.float64)
    want = np.asarray(want).astype(np.float64)
    assert got.shape == want.shape
    scale = 1.0 + np.abs(want)
    if dtype == np.float16:  # float16 outputs round; sums of many float16 terms in float32 registers
        rt = 2e-3 * max(1.0, np.sqrt(n) / 8)
    else:
        rt = tol(dtype) * max(1.0, np.sqrt(n))
    assert np.all(np.abs(got - want) <= rt * scale), (np.max(np.abs(got - want) / scale), rt)


def reference(f, x, dtype):
    # float16: NumPy's float16 arithmetic rounds every step; the reference is float32 rounded to float16
    if dtype == np.float16:
        return f(np, x.astype(np.float32)).astype(np.float16)
    return f(np, x)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_odd_rows(device, dtype, n, name):
    f = KERNELS[name]
    x = data((rows_for(n), n), dtype, n)
    check(f(loom, on(device, x)), reference(f, x, dtype), dtype, n)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("n", [2, 7, 8, 9, 15, 16, 17, 33, 1000, 7777])
@pytest.mark.parametrize("name", ["softmax", "clip_row_norm", "logsumexp", "row_max"])
def test_misaligned_rows(device, dtype, n, name):
    """x[:, 1:]: the input's rows start one point late (the output's do not: phases differ); x[:, 1:] of an
    array of rows padded to n + 1 points and written into a slice of the same padding (one phase)."""
    f = KERNELS[name]
    full = data((rows_for(n), n + 1), dtype, n + 100)
    xs = on(device, full)[:, 1:]
    check(f(loom, xs), reference(f, full[:, 1:], dtype), dtype, n)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [7, 13, 1000, 7777])
def test_same_phase_in_place(device, dtype, n):
    """Input and output rows on one start phase that is not aligned: a row-normalization written back into
    the slice it read (out[:, 1:] of the same padded array)."""
    full = data((rows_for(n), n + 3), dtype, n + 7)
    want = full.copy()
    want[:, 1:n + 1] = l1_normalize(np, full[:, 1:n + 1])
    g = on(device, full)
    g[:, 1:n + 1] = l1_normalize(loom, g[:, 1:n + 1])
    check(g, want, dtype, n)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [5, 7, 9, 17, 33, 1001])
def test_arg_rows_ties(device, n):
    """argmax / argmin of odd rows with ties: the first index wins also when the row's head point (before
    the first aligned vector) ties with a later one."""
    r = np.random.default_rng(n)
    x = r.integers(0, 3, size=(41, n)).astype(np.float32)
    g = on(device, x)
    assert np.array_equal(host(loom.argmax(g, axis=-1)), np.argmax(x, axis=-1))
    assert np.array_equal(host(loom.argmin(g, axis=-1)), np.argmin(x, axis=-1))
    xs = g[:, 1:]
    assert np.array_equal(host(loom.argmax(xs, axis=-1)), np.argmax(x[:, 1:], axis=-1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_rows_with_a_per_row_scale(device, dtype):
    """A buffer constant along the row (a per-row scale, loaded once as a scalar) beside odd rows."""
    x = data((53, 7777 if dtype == np.float32 else 999), dtype, 3)
    s = data((53, 1), dtype, 4)
    def f(xp, x, s):
        return softmax(xp, x * s)
    got = f(loom, on(device, x), on(device, s))
    want = f(np, x.astype(np.float32), s.astype(np.float32)).astype(dtype)
    check(got, want, dtype, x.shape[1])
