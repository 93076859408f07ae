# SPDX-License-Identifier: Apache-2.0
"""Many short rows (2 .. 16 points) through row kernels, against NumPy. On the GPU, rows that fit a thread
run the cached entry's thread-per-row mode, staged where every row-contiguous buffer holds its rows one
after another from a 16-byte aligned base (codegen/gpu_stage.c: the block's tile of rows is copied between
global and shared memory with coalesced accesses, each thread walks its rows there; the launcher,
runtime/gpu/gpu_launch_policy.c, decides); slices with another row pitch, a base off 16 bytes, or rows
transposed run unstaged. Cases: row lengths 2 .. 16, row counts around the tiles (128 threads x
cache_k / nr rows), float16 / float32 / float64 / int8 / complex64, 3-d arrays, a weight broadcast over
the rows (read directly), argmax per row, a reduction alone, in-place updates, NaN and infinities.
Runs on the default device (the host here: the same assertions) and on a CUDA device when one is visible.
"""
import numpy as np
import pytest

import loom

DEVICES = ["default"] + (["cuda"] if loom.cuda.is_available() else [])


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def on(device, a):
    if device == "cuda":
        with loom.cuda.Device(0):
            return loom.asarray(a)
    return loom.asarray(a)


def data(shape, dtype, seed):
    r = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return r.integers(-100, 100, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)
    return (r.standard_normal(shape) * 2).astype(dtype)


def tol(dtype):
    return {np.float16: 3e-3, np.float32: 2e-5, np.float64: 1e-12, np.complex64: 2e-5}.get(np.dtype(dtype).type, 0)


def l1_normalize(xp, x):
    return x / (xp.sum(xp.abs(x), axis=-1, keepdims=True) + 1e-3)


def softmax(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def check(got, want, dtype):
    got = host(got)
    assert got.shape == want.shape
    t = tol(dtype)
    np.testing.assert_allclose(got.astype(want.dtype), want, rtol=t, atol=t)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", list(range(2, 17)))
@pytest.mark.parametrize("rows", [1, 127, 1031, 5000])
def test_l1_and_softmax_rows(device, n, rows):
    x = data((rows, n), np.float32, n * 1000 + rows)
    a = on(device, x)
    check(l1_normalize(loom, a), l1_normalize(np, x.astype(np.float64)), np.float32)
    check(softmax(loom, a), softmax(np, x.astype(np.float64)), np.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.complex64])
@pytest.mark.parametrize("n", [2, 3, 7, 8, 13])
def test_dtypes(device, dtype, n):
    x = data((3001, n), dtype, n)
    a = on(device, x)
    want = l1_normalize(np, x.astype(np.complex128 if np.iscomplexobj(x) else np.float64))
    check(l1_normalize(loom, a), want, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [3, 5, 7])
def test_int8_rows(device, n):
    """Centre int8 rows on their integer mean: an int8 tile in and out (16 points a vector)."""
    x = data((4099, n), np.int8, n)
    a = on(device, x)
    got = host(a - loom.sum(a, axis=-1, keepdims=True, dtype=np.int8))
    want = x - np.sum(x, axis=-1, keepdims=True, dtype=np.int8)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("device", DEVICES)
def test_3d_and_broadcast_weight(device):
    """(batch, points, 3) normalized per point, times a per-coordinate weight broadcast over the rows."""
    x = data((17, 301, 3), np.float32, 3)
    w = data((3,), np.float32, 4)
    a, wa = on(device, x), on(device, w)
    got = a / loom.sqrt(loom.sum(a * a, axis=-1, keepdims=True) + 1e-6) * wa
    x64 = x.astype(np.float64)
    check(got, x64 / np.sqrt(np.sum(x64 * x64, axis=-1, keepdims=True) + 1e-6) * w, np.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("view", ["pitch", "offset", "transposed"])
def test_views_unstaged(device, view):
    """Rows that are not one after another from an aligned base take the unstaged mode: the same results."""
    big = data((2003, 12), np.float32, 5)
    x = {"pitch": big[:, :7], "offset": big.reshape(-1)[1:1 + 2000 * 7].reshape(2000, 7),
         "transposed": np.ascontiguousarray(big[:, :7].T).T}[view]
    a = on(device, big)
    a = {"pitch": a[:, :7], "offset": a.reshape(-1)[1:1 + 2000 * 7].reshape(2000, 7),
         "transposed": on(device, np.ascontiguousarray(big[:, :7].T)).T}[view]
    check(softmax(loom, a), softmax(np, x.astype(np.float64)), np.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [2, 5, 9, 16])
def test_argmax_and_reduction_alone(device, n):
    x = data((2049, n), np.float32, n)
    x[5, 1] = np.nan  # the first NaN wins
    x[7, :] = x[7, 0]  # ties: the first index
    a = on(device, x)
    np.testing.assert_array_equal(host(loom.argmax(a, axis=-1)), np.argmax(x, axis=-1))
    got = host(loom.max(a, axis=-1) - loom.min(a, axis=-1))
    want = np.max(x, axis=-1) - np.min(x, axis=-1)
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_and_specials(device):
    x = data((1500, 6), np.float32, 6)
    x[3, 2] = np.inf
    x[4, 0] = np.nan
    x[9, :] = 0.0
    a = on(device, x)
    a /= loom.sum(loom.abs(a), axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        want = x / np.sum(np.abs(x), axis=-1, keepdims=True)
    np.testing.assert_allclose(host(a), want, rtol=2e-6, atol=1e-7, equal_nan=True)
