# SPDX-License-Identifier: Apache-2.0
"""Elementwise maps over C-contiguous 2-d data whose rows are not whole 16-byte vectors (an image's 3
channels, tables of odd widths) against NumPy. On the GPU these run the `flatv` entry (codegen.h): vectors
of the flat index that cross rows, per-column operands read at (i + j) mod C, per-row ones at each lane's
row; views that are not C-contiguous (a row pitch, an offset base) fall back to the scalar entry and must
give the same values. Runs on the default device (the host here: the same assertions) and on a CUDA device
when one is visible.
"""
import contextlib

import numpy as np
import pytest

import loom

DEVICES = ["default"] + (["cuda"] if loom.cuda.is_available() else [])


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def scope(device):
    """the device's context: arrays made inside live there"""
    return loom.cuda.Device(0) if device == "cuda" else contextlib.nullcontext()


def run(device, fn, *arrays):
    with scope(device):
        return host(fn(loom, *[loom.asarray(a) for a in arrays]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("channels", [1, 2, 3, 5, 6, 7, 9, 13])
def test_image_normalize_channels(device, channels):
    rng = np.random.default_rng(channels)
    img = rng.integers(0, 256, size=(37, 41, channels), dtype=np.uint8)
    mean = rng.random(channels).astype(np.float32)
    std = (rng.random(channels) + 0.5).astype(np.float32)

    def f(xp, x, m, s):
        return (x.astype(xp.float32) / 255.0 - m) / s

    want = f(np, img, mean, std)
    got = run(device, f, img, mean, std)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(1, 9), (2, 5), (3, 3), (1001, 3), (17, 7), (4, 1), (1, 1), (0, 3), (5, 0)])
def test_row_and_column_operands(device, shape):
    """per-column and per-row operands together, every tail (n mod 8) and a row inside one vector"""
    rng = np.random.default_rng(shape[0] * 31 + shape[1])
    x = rng.standard_normal(shape).astype(np.float32)
    col = rng.standard_normal(shape[1]).astype(np.float32)
    row = rng.standard_normal((shape[0], 1)).astype(np.float32)

    def f(xp, a, c, r):
        return a * c + r

    np.testing.assert_allclose(run(device, f, x, col, row), f(np, x, col, row), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.int64, np.float64])
def test_dtypes_wrap_and_nan(device, dtype):
    """vectors of 8 (float16, int8 to int16) and 2 lanes (8-byte values); integer wrap-around; NaN"""
    rng = np.random.default_rng(5)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=(301, 7), endpoint=True, dtype=dtype)
        b = np.array([info.max, 1, -1, info.min, 3, 0, 7], dtype=dtype)
    else:
        x = rng.standard_normal((301, 7)).astype(dtype)
        x[3, 4] = np.nan
        x[7, 0] = np.inf
        b = rng.standard_normal(7).astype(dtype)

    def f(xp, a, c):
        return a * c + a

    want = f(np, x, b)
    got = run(device, f, x, b)
    assert got.dtype == want.dtype
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(got, want)
    else:
        tol = 2e-3 if dtype == np.float16 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_two_outputs(device):
    """a multi-output map (both stores vectors of the flat index)"""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((513, 3)).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)

    def pair(xp, a, c):
        return a * c, a - c

    with scope(device):
        p, q = loom.fuse(lambda a, c: (a * c, a - c))(loom.asarray(x), loom.asarray(w))
        got = (host(p), host(q))
    want = pair(np, x, w)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_views_that_are_not_flat(device):
    """a row pitch (a column slice) and an offset base: the scalar entry, the same values"""
    rng = np.random.default_rng(11)
    big = rng.standard_normal((200, 8)).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)

    def f(xp, v, c):
        return v * c + 1.0

    for view in (lambda t: t[:, :3], lambda t: t[:, 1:4], lambda t: t.reshape(-1)[1:598].reshape(199, 3)):
        with scope(device):
            got = host(f(loom, view(loom.asarray(big)), loom.asarray(w)))
        np.testing.assert_allclose(got, f(np, view(big), w), rtol=1e-6)


# ---- kernels of 3 or more dims (flatv over rows that hold at least one vector) -----------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(5, 7, 9), (3, 4, 513), (2, 1, 5), (1, 3, 4), (4, 3, 3), (2, 3, 4, 5), (0, 2, 5)])
def test_outer_product_heatmaps(device, shape):
    """Gaussian heatmaps from per-axis operands (nothing read is full-rank: the output alone is a flat vector),
    rows of odd widths, rows shorter than a vector (the scalar entry), 4-d"""
    rng = np.random.default_rng(sum(shape))
    ops = [rng.uniform(0.0, 8.0, n).astype(np.float32) for n in shape]

    def f(xp, *axes):
        nd = len(axes)
        terms = []
        for d, a in enumerate(axes):
            v = a.reshape(tuple(-1 if e == d else 1 for e in range(nd)))
            terms.append((v - 3.0) * (v - 3.0))
        acc = terms[0]
        for t in terms[1:]:
            acc = acc + t
        return xp.exp(acc * (-1.0 / 32.0))

    want = f(np, *ops)
    got = run(device, f, *ops)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float64, np.int32])
def test_3d_full_and_axis_operands(device, dtype):
    """a full-rank input beside per-plane, per-row and per-column operands; every dtype width (lanes 2 to 16)"""
    rng = np.random.default_rng(3)
    shape = (6, 11, 37)
    if np.issubdtype(dtype, np.integer):
        x = rng.integers(0, 100, size=shape).astype(dtype)
        p, r, c = (rng.integers(0, 9, size=s).astype(dtype) for s in ((6, 1, 1), (1, 11, 1), (37,)))
    else:
        x = rng.standard_normal(shape).astype(dtype)
        x[2, 3, 4] = np.nan
        p, r, c = (rng.standard_normal(s).astype(dtype) for s in ((6, 1, 1), (1, 11, 1), (37,)))

    def f(xp, a, pp, rr, cc):
        return a * pp + rr - cc

    want = f(np, x, p, r, c)
    got = run(device, f, x, p, r, c)
    assert got.dtype == want.dtype
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(got, want)
    else:
        tol = 4e-3 if dtype == np.float16 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_3d_views_that_are_not_flat(device):
    """a padded row pitch and a sliced plane: the scalar entry, the same values"""
    rng = np.random.default_rng(13)
    big = rng.standard_normal((5, 9, 40)).astype(np.float32)
    c = rng.standard_normal(37).astype(np.float32)
    for view in (lambda t: t[:, :, :37], lambda t: t[1:, 2:7, 3:]):
        with scope(device):
            got = host(view(loom.asarray(big)) * loom.asarray(c[: view(big).shape[-1]]) + 2.0)
        np.testing.assert_allclose(got, view(big) * c[: view(big).shape[-1]] + 2.0, rtol=1e-6)
