# SPDX-License-Identifier: Apache-2.0
"""Reads (and writes) with a small constant stride along the innermost loop of host kernels: x[:, ::s]
(s 2..9: 2-4 are the compile-time layout classes, 5 and up run-time strides), reversed and offset views,
every dtype width (float16/32/64, int8/64, complex), broadcast partners (the row jam), empty and 0-d
arrays, odd lengths so that the vector loops' tails run; values against NumPy. And the mechanism of
codegen/lower_host_strided.c: on an x86 host with 512-bit vectors a stride-3 read is a wide load plus
shuffles (an interleaved group), not a masked gather; LOOM_HOST_STRIDED_BYTES=0 (the element-typed
address that InstCombine rewrites without nsw) gives the same values."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int64, np.complex64, np.complex128]


def _ints(shape, dtype, seed=0):
    """Small integers (exact in every dtype, also after x * 2 + 1), complex with an imaginary part."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-40, 40, size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        return (a + 1j * rng.integers(-40, 40, size=shape)).astype(dtype)
    return a.astype(dtype)


def _check(got, want):
    got = loom.asnumpy(got)
    assert got.shape == want.shape
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("step", [2, 3, 4, 5, 6, 7, 8, 9])
def test_strided_columns_match_numpy(dtype, step):
    a = _ints((7, 16 * step + 37), dtype, seed=step)   # odd row lengths: vector tails and epilogues run
    la = loom.asarray(a)
    for off in (0, 1, step - 1):
        _check(la[:, off::step] * 2 + 1, a[:, off::step] * 2 + 1)
    _check(la[:, ::-step] * 2 + 1, a[:, ::-step] * 2 + 1)          # reversed
    _check(la[:, -2::-step] - la[:, -2::-step] * 3, a[:, -2::-step] - a[:, -2::-step] * 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.complex64])
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 1777])
def test_one_dim_lengths(dtype, n):
    for step in (2, 3, 6):
        a = _ints(n * step + 2, dtype, seed=n)
        la = loom.asarray(a)
        _check(la[1::step][:n] * 2 + 1, a[1::step][:n] * 2 + 1)


def test_run_time_stride_matches_constant_ones():
    # the same values read through constant strides (3) and run-time ones (a view of a view: 15 = 3 * 5)
    a = _ints((5, 1000), np.float32, seed=7)
    la = loom.asarray(a)
    _check(la[:, ::3][:, ::5] * 2 + 1, a[:, ::15] * 2 + 1)
    _check(la[:, 2::3] + la[:, 1::3] * 3, a[:, 2::3] + a[:, 1::3] * 3)   # two members of one group


def test_broadcast_partners_and_row_jam():
    # rows of >= 4096 bytes with an operand broadcast along them: the row jam (lower_host_jam.c) walks
    # them, its row offsets are the same `mul nsw j, stride` the strided address is made from
    rng = np.random.default_rng(3)
    x = rng.standard_normal((13, 3 * 1501)).astype(np.float32)
    b = rng.standard_normal(1501).astype(np.float32)
    c = rng.standard_normal((13, 1)).astype(np.float32)
    lx, lb, lc = loom.asarray(x), loom.asarray(b), loom.asarray(c)
    got = loom.asnumpy(lx[:, 1::3] * lb[None, :] + lc)
    np.testing.assert_allclose(got, x[:, 1::3] * b[None, :] + c, rtol=1e-6, atol=1e-6)
    got = loom.asnumpy(lx[:, ::3] * lb + lx[:, 2::3])
    np.testing.assert_allclose(got, x[:, ::3] * b + x[:, 2::3], rtol=1e-6, atol=1e-6)


def test_strided_partners_of_contiguous_operands_and_reductions():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((31, 3 * 257)).astype(np.float64)
    y = rng.standard_normal((31, 257)).astype(np.float64)
    lx, ly = loom.asarray(x), loom.asarray(y)
    np.testing.assert_allclose(loom.asnumpy(lx[:, ::3] * ly - ly), x[:, ::3] * y - y, rtol=1e-14)
    np.testing.assert_allclose(loom.asnumpy(lx[:, ::3].sum(axis=1)), x[:, ::3].sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(loom.asnumpy(lx[:, 1::3].max(axis=0)), x[:, 1::3].max(axis=0))


@pytest.mark.parametrize("step", [2, 3, 4, 5])
def test_blocked_sums_over_strided_rows(step):
    # rows longer than a sum block (lower_host_sum.c): segments start mid-row at run-time offsets
    rng = np.random.default_rng(step)
    x = rng.random((3, step * 5001 + 2)).astype(np.float32)
    lx = loom.asarray(x)
    for off in (0, 1):
        want = x[:, off::step].astype(np.float64).sum(axis=1)
        np.testing.assert_allclose(loom.asnumpy(lx[:, off::step].sum(axis=1)), want, rtol=1e-6)
        np.testing.assert_allclose(float(loom.asnumpy(lx[:, off::step].mean())), x[:, off::step].astype(np.float64).mean(),
                                   rtol=1e-6)
    flat = rng.random(step * 100_003 + 1).astype(np.float64)
    np.testing.assert_allclose(float(loom.asnumpy(loom.asarray(flat)[1::step].sum())), flat[1::step].sum(), rtol=1e-13)


def test_real_part_of_complex_and_struct_fields():
    rng = np.random.default_rng(5)
    z = (rng.standard_normal((9, 333)) + 1j * rng.standard_normal((9, 333))).astype(np.complex64)
    lz = loom.asarray(z)
    np.testing.assert_allclose(loom.asnumpy(lz.real * 2 + lz.imag), z.real * 2 + z.imag, rtol=1e-6)
    rec = rng.standard_normal((1001, 3)).astype(np.float32)       # a 3-field struct read as columns
    lr = loom.asarray(rec)
    np.testing.assert_allclose(loom.asnumpy(lr[:, 0] * 2 + 1), rec[:, 0] * 2 + 1, rtol=1e-6)
    flat = loom.asarray(rec.reshape(-1))
    np.testing.assert_allclose(loom.asnumpy(flat[2::3] * 2 + 1), rec[:, 2] * 2 + 1, rtol=1e-6)


def test_empty_and_zero_d():
    a = _ints((0, 30), np.float32)
    _check(loom.asarray(a)[:, ::3] * 2 + 1, a[:, ::3] * 2 + 1)
    b = _ints((4, 2), np.float32)
    _check(loom.asarray(b)[:, 2::3] * 2 + 1, b[:, 2::3] * 2 + 1)   # no columns
    c = _ints((4, 30), np.float64)
    _check(loom.asarray(c)[2, ::3][4] * 2 + 1, c[2, ::3][4] * 2 + 1)   # 0-d


def test_store_into_strided_view():
    a = _ints((6, 3 * 101 + 1), np.float32, seed=9)
    x = _ints((6, 102), np.float32, seed=10)
    la = loom.asarray(a.copy())
    la[:, ::3] = loom.asarray(x) * 2 + la[:, ::3] * 3
    want = a.copy()
    want[:, ::3] = x * 2 + a[:, ::3] * 3
    _check(la, want)


def _host_ir(fn):
    return loom.inspect(fn, what="llvm")["llvm"]


def test_stride_three_read_is_a_wide_load_not_a_gather():
    x = loom.asarray(np.zeros((301, 1777), np.float32))
    if "<16 x float>" not in _host_ir(lambda: x * 2.0):
        pytest.skip("this host's code has no 512-bit float vectors")
    ir = _host_ir(lambda: x[:, ::3] * 2.0 + 1.0)
    assert "masked.gather" not in ir
    assert "load <48 x float>" in ir and "shufflevector <48 x float>" in ir
    d = loom.asarray(np.zeros((301, 1777), np.float64))
    ir = _host_ir(lambda: d[:, 1::3] * 2.0 + 1.0)
    assert "masked.gather" not in ir and "shufflevector" in ir
    # compensated sums walk rows in blocks (segments starting at run-time offsets): also groups
    for step in (2, 3, 4):
        ir = _host_ir(lambda: x[:, ::step].sum(axis=1))
        assert "masked.gather" not in ir and "shufflevector" in ir, step
    ir = _host_ir(lambda: x.reshape(-1)[::3].sum())
    assert "masked.gather" not in ir and "shufflevector" in ir


def test_knob_off_same_values():
    code = (
        "import numpy as np, loom\n"
        "a = (np.arange(7 * 400) % 83).astype(np.float32).reshape(7, 400)\n"
        "print(repr(loom.asnumpy(loom.asarray(a)[:, 1::3] * 2 + 1).tolist()))\n")
    outs = {}
    for knob in ("0", "1"):
        env = dict(os.environ, LOOM_HOST_STRIDED_BYTES=knob, LOOM_HOST_DISK_CACHE="0")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs[knob] = r.stdout
    a = (np.arange(7 * 400) % 83).astype(np.float32).reshape(7, 400)
    assert outs["0"] == outs["1"] == repr((a[:, 1::3] * 2 + 1).tolist()) + "\n"
