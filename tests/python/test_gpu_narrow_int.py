# SPDX-License-Identifier: Apache-2.0
"""Narrow signed integers at their minimum on every device: abs(INT16_MIN) and abs(INT8_MIN) wrap to the
minimum (NumPy), and every later use of that value sees it negative: a floor division, a remainder, a cast
to a wider integer, a comparison, a reduction. The H200 fuzz (2026-12-02, seed 7497455554265651678)
found `abs(int16) // max(abs(int16))` giving +1 where NumPy gives -2: ptxas took abs.s16's result as
non-negative (codegen/nvptx_lower.c cg_nvptx_fence_narrow_abs). Runs on the default device (the host
here, the GPU in scripts/gpu_all.sh) and on a CUDA device when one is visible; NumPy is the reference.
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


def values(dtype, n=257):
    info = np.iinfo(dtype)
    r = np.random.default_rng(7)
    v = r.integers(info.min, info.max, n, endpoint=True).astype(dtype)
    v[:6] = [info.min, info.min + 1, -1, 0, 1, info.max]
    v[100:110] = info.min
    return v


CASES = {
    "abs // max": (lambda xp, x: xp.floor_divide(xp.abs(x), xp.max(xp.abs(x)))),
    "abs // 3": (lambda xp, x: xp.abs(x) // x.dtype.type(3)),
    "abs % 7": (lambda xp, x: xp.abs(x) % x.dtype.type(7)),
    "abs as int32": (lambda xp, x: xp.abs(x).astype(np.int32)),
    "abs as int64 * 3": (lambda xp, x: xp.abs(x).astype(np.int64) * 3),
    "abs < 0": (lambda xp, x: xp.abs(x) < 0),
    "abs as float32": (lambda xp, x: xp.abs(x).astype(np.float32)),
    "sum(abs as int32)": (lambda xp, x: xp.abs(x).astype(np.int32).sum()),
    "max(abs)": (lambda xp, x: xp.max(xp.abs(x))),
    "where(x<0, -x, x) // 5": (lambda xp, x: xp.where(x < 0, -x, x) // x.dtype.type(5)),
    "abs(x) >> 1": (lambda xp, x: xp.right_shift(xp.abs(x), x.dtype.type(1))),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.int8, np.int16])
@pytest.mark.parametrize("case", sorted(CASES))
def test_abs_of_minimum_wraps_and_stays_negative(device, dtype, case):
    f = CASES[case]
    a = values(dtype)
    with np.errstate(all="ignore"):
        want = f(np, a)
    got = host(f(loom, on(device, a)))
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("device", DEVICES)
def test_fuzz_reproducer_7497455554265651678(device):
    """The fuzz graph itself: where(v0, v0, v0), abs, max over axes (1, 0), floor_divide."""
    r = np.random.default_rng(1)
    v0 = r.integers(-32768, 32767, (5, 3, 4, 3), endpoint=True).astype(np.int16)
    v0.reshape(-1)[[2, 5, 26, 41, 77]] = -32768
    def graph(xp, v):
        v5 = xp.absolute(xp.where(v, v, v))
        return xp.floor_divide(v5, xp.max(v5, axis=(1, 0)))
    np.testing.assert_array_equal(host(graph(loom, on(device, v0))), graph(np, v0))
