# SPDX-License-Identifier: Apache-2.0
"""Integer floor_divide / remainder / divmod against NumPy. The host divides 8-, 16- and 32-bit integers
by a run-time divisor through float32 / float64 division (codegen/math.c: host_int_quotient; x86 has no
vector integer division), which must stay exact: every pair of int8 / uint8 values, int16 / uint16 /
int32 / uint32 extremes (MIN // -1 wraps as NumPy's does, division by zero gives 0), random operands of
every magnitude, and constant divisors (LLVM's multiply)."""
import numpy as np
import pytest

import loom


def check(a, b):
    la, lb = loom.asarray(a), loom.asarray(b)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((la // lb).get(), a // b)
        np.testing.assert_array_equal((la % lb).get(), a % b)
        q, r = loom.divmod(la, lb)
        wq, wr = np.divmod(a, b)
        np.testing.assert_array_equal(q.get(), wq)
        np.testing.assert_array_equal(r.get(), wr)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_every_8bit_pair(dtype):
    v = np.arange(np.iinfo(dtype).min, np.iinfo(dtype).max + 1).astype(dtype)
    a, b = np.meshgrid(v, v)
    check(a.ravel().copy(), b.ravel().copy())


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.int32, np.uint32])
def test_extremes_and_random(dtype):
    info = np.iinfo(dtype)
    edges = np.array(sorted({info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3, 7, 255, 256, 32767,
                             32768 if info.max >= 32768 else 1} | ({-1, -2, -3, -7, -32768} if info.min < 0 else set())),
                     dtype=np.int64)
    edges = edges[(edges >= info.min) & (edges <= info.max)].astype(dtype)
    a, b = np.meshgrid(edges, edges)
    r = np.random.default_rng(int(info.bits))
    n = 100003
    mag = r.integers(0, info.bits, n)
    ra = (r.integers(info.min, info.max, n, endpoint=True, dtype=dtype) >> mag.astype(dtype)).astype(dtype)
    rb = (r.integers(info.min, info.max, n, endpoint=True, dtype=dtype) >> r.integers(0, info.bits, n).astype(dtype)).astype(dtype)
    check(np.concatenate([a.ravel(), ra]), np.concatenate([b.ravel(), rb]))


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.uint8])
@pytest.mark.parametrize("k", [7, -3, 1, -1])
def test_constant_divisors(dtype, k):
    if k < 0 and np.iinfo(dtype).min == 0:
        return
    a = np.random.default_rng(3).integers(np.iinfo(dtype).min, np.iinfo(dtype).max, 4099, endpoint=True, dtype=dtype)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((loom.asarray(a) // k).get(), a // dtype(k))
        np.testing.assert_array_equal((loom.asarray(a) % k).get(), a % dtype(k))
