"""Host sums of bool and <= 16-bit integers into int64 / uint64 (count_nonzero, (a < b).sum(), int8.sum())
fold the narrow values in int32 lanes within blocks of 2048 points and widen each block's sum into the 64-bit
accumulator (codegen/lower_host_sum.c cg_host_narrow_sum_walk). Values against NumPy: lengths around the block
size, extreme values whose total needs 64 bits, signed and unsigned sources, rows (axis=-1), R splits of long
vectors, strided views, empty and 0-d arrays; the IR (int32 vector lanes) and LOOM_HOST_NARROW_SUM=0."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom
from conftest import ON_GPU

host = pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")

NARROW = ["bool", "int8", "uint8", "int16", "uint16"]


def same(got, want):
    got = loom.asnumpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def values(dtype, n, rng):
    if dtype == "bool":
        return rng.random(n) < 0.3
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64).astype(dtype)


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("n", [1, 7, 2047, 2048, 2049, 4096, 6145, 65536 + 3, 1 << 20])
def test_sum_matches_numpy(dtype, n):
    a = values(dtype, n, np.random.default_rng(n))
    same(loom.sum(loom.asarray(a)), np.sum(a))


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint16"])
def test_extreme_values_need_64_bits(dtype):
    info = np.iinfo(dtype)
    for v in (info.min, info.max):
        a = np.full((1 << 20) + 5, v, dtype)  # |sum| up to 2^36: past any 32-bit accumulator
        want = np.sum(a)
        same(loom.sum(loom.asarray(a)), want)
        assert int(want) == int(v) * a.size  # the reference itself, written out


def test_counts_of_comparisons():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1 << 21) + 11).astype(np.float32)
    x[::97] = np.nan
    lx = loom.asarray(x)
    same(loom.sum((lx > -1.0) & (lx < 1.0)), np.sum((x > -1.0) & (x < 1.0)))
    same(loom.count_nonzero(lx > 0.5), np.asarray(np.count_nonzero(x > 0.5)))
    same(loom.sum(loom.isnan(lx)), np.sum(np.isnan(x)))
    f = loom.fuse(lambda a, lo, hi: loom.sum((a > lo) & (a < hi)))
    for lo, hi in [(-1.0, 1.0), (0.0, 0.1), (-5.0, 5.0)]:  # the bounds are kernel parameters
        same(f(lx, lo, hi), np.sum((x > lo) & (x < hi)))


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("shape", [(5, 3000), (64, 2048), (3, 1), (1000, 17), (2, 5, 4099)])
def test_rows_and_keepdims(dtype, shape):
    a = values(dtype, int(np.prod(shape)), np.random.default_rng(len(shape))).reshape(shape)
    la = loom.asarray(a)
    same(loom.sum(la, axis=-1), np.sum(a, axis=-1))
    same(loom.sum(la, axis=-1, keepdims=True), np.sum(a, axis=-1, keepdims=True))
    same(loom.sum(la, axis=None), np.sum(a))


def test_strided_and_offset_views():
    rng = np.random.default_rng(5)
    a = values("int8", 3 * 70001, rng)
    la = loom.asarray(a)
    same(loom.sum(la[1::3]), np.sum(a[1::3]))
    m = values("uint16", 300 * 401, rng).reshape(300, 401)
    same(loom.sum(loom.asarray(m)[:, 3:], axis=1), np.sum(m[:, 3:], axis=1))
    same(loom.sum(loom.asarray(m).T, axis=1), np.sum(m.T, axis=1))


@pytest.mark.parametrize("dtype", NARROW)
def test_empty_and_zero_d(dtype):
    same(loom.sum(loom.asarray(np.zeros(0, dtype))), np.sum(np.zeros(0, dtype)))
    same(loom.sum(loom.asarray(np.zeros((4, 0), dtype)), axis=1), np.sum(np.zeros((4, 0), dtype), axis=1))
    z = np.asarray(values(dtype, 1, np.random.default_rng(0))[0])
    same(loom.sum(loom.asarray(z)), np.sum(z))


def test_explicit_dtype_and_wider_sources_keep_their_fold():
    rng = np.random.default_rng(9)
    a = values("int16", 50000, rng)
    same(loom.sum(loom.asarray(a), dtype=np.int32), np.sum(a, dtype=np.int32))
    b = rng.integers(-2**31, 2**31, 50000).astype(np.int32)
    same(loom.sum(loom.asarray(b)), np.sum(b))  # int32 values: not narrow, the int64 fold
    c = np.full(70000, 2**31 - 1, np.int32)
    same(loom.sum(loom.asarray(c)), np.sum(c))


@host
def test_ir_uses_int32_lanes_and_the_knob_turns_it_off():
    code = ("import loom, numpy as np\n"
            "x = loom.asarray(np.ones(1 << 16, np.float32))\n"
            "with loom.capture_dumps('llvm', echo=False) as d:\n"
            "    loom.asnumpy(loom.fuse(kernel_name='narrow_sum_knob')(lambda x: loom.sum(x > 0))(x))\n"
            "import re\n"
            "print(bool(re.search(r'add <\\d+ x i32>', d.text)))\n")
    for knob, want in (("1", "True"), ("0", "False")):
        env = dict(os.environ, LOOM_HOST_NARROW_SUM=knob, LOOM_HOST_DISK_CACHE="0")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == want, (knob, out.stdout)
