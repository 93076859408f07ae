# SPDX-License-Identifier: Apache-2.0
"""Reversed views walked forwards (passes/flip_dims.c) and complex inputs read for one part as float views
(passes/complex_parts.c), against NumPy: every dtype (bool, ints, float16/32/64, complex), strides -1 .. -17
and 5 .. 17, broadcast partners, empty and 0-d arrays, reductions that may flip (sum, prod, min, max, any,
all, mean) and those that must not (argmin / argmax ties, cumsum), the linear index (arange-like kernels);
the kernels' layouts and LLVM IR (no masked gathers where the flip or the part view makes a constant stride);
LOOM_FLIP_DIMS=0 / LOOM_COMPLEX_PARTS=0 give the same values (subprocesses)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

DTYPES = [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32, np.float64,
          np.complex64, np.complex128]


def _data(shape, dtype, seed=0):
    """Small integers: exact in every dtype, also after x * 2 + 1 and short sums."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-9, 10, size=shape)
    if dtype == np.bool_:
        return a > 0
    if np.issubdtype(dtype, np.unsignedinteger):
        a = np.abs(a)
    if np.issubdtype(dtype, np.complexfloating):
        return (a + 1j * rng.integers(-9, 10, size=shape)).astype(dtype)
    return a.astype(dtype)


def _same(got, want):
    got = loom.asnumpy(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(got, want)


def _kernels(fn):
    return loom.inspect(fn, what="kernels")["kernels"]


def _llvm(fn):
    return loom.inspect(fn, what="llvm")["llvm"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("step", [1, 2, 3, 4, 5, 7, 16, 17])
def test_reversed_columns_elementwise(dtype, step):
    a = _data((5, 9 * step + 23), dtype, seed=step)
    la = loom.asarray(a)
    for off in (None, -2):
        sl = slice(off, None, -step)
        _same(la[:, sl] * 2 + 1 if dtype != np.bool_ else ~la[:, sl], a[:, sl] * 2 + 1 if dtype != np.bool_ else ~a[:, sl])
    _same(la[::-1, ::-step] + la[::-1, ::-step], a[::-1, ::-step] + a[::-1, ::-step])
    _same(la[::-1] * la, a[::-1] * a)                                  # one operand forwards: no flip of dim 0


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("step", [1, 2, 3, 5, 13])
def test_reversed_reductions(dtype, step):
    a = _data((7, 11 * step + 1001), dtype, seed=step + 1)
    la = loom.asarray(a)
    v = a[:, ::-step]
    lv = la[:, ::-step]
    rtol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
    # float32 sums in two orders (loom's, NumPy's) differ by up to ~eps * sum |v|: a sum that cancels gets
    # that much absolute room (AVX-512 hosts split rows differently from this box: 1.07e-5 relative seen)
    atol = 1e-6 * float(np.abs(v).sum(axis=1).max()) if dtype in (np.float32, np.complex64) else 0
    np.testing.assert_allclose(loom.asnumpy(lv.sum(axis=1)), v.sum(axis=1), rtol=rtol, atol=atol)
    np.testing.assert_allclose(loom.asnumpy(lv.sum()), v.sum(), rtol=rtol, atol=7 * atol)
    np.testing.assert_allclose(loom.asnumpy(lv.mean(axis=0)), v.mean(axis=0), rtol=rtol)
    np.testing.assert_allclose(loom.asnumpy(lv[::-1].sum(axis=0)), v[::-1].sum(axis=0), rtol=rtol)
    if dtype != np.complex64:
        _same(lv.max(axis=1), v.max(axis=1))
        _same(lv.min(), v.min())
    _same((lv != 0).all(axis=1), (v != 0).all(axis=1))
    _same((lv == 3).any(axis=1), (v == 3).any(axis=1))
    small = _data((3, 12), dtype, seed=3)
    np.testing.assert_allclose(loom.asnumpy(loom.prod(loom.asarray(small)[:, ::-step], axis=1)),
                               np.prod(small[:, ::-step], axis=1), rtol=1e-6)


def test_order_dependent_kernels_keep_their_order():
    # ties: argmax / argmin give the first index in the view's order, cumsum runs along the view
    a = np.array([[1, 5, 5, 2, 5, 0, 0, 1]] * 3, np.float32)
    la = loom.asarray(a)
    for sl in (slice(None, None, -1), slice(None, None, -2), slice(-2, None, -3)):
        _same(loom.argmax(la[:, sl], axis=1), np.argmax(a[:, sl], axis=1))
        _same(loom.argmin(la[:, sl], axis=1), np.argmin(a[:, sl], axis=1))
        _same(loom.argmax(la[::-1, sl]), np.argmax(a[::-1, sl]))
        _same(loom.cumsum(la[:, sl], axis=1), np.cumsum(a[:, sl], axis=1))
    r = np.arange(20, dtype=np.float64)
    lr = loom.asarray(r)
    _same(lr[::-1] + loom.arange(20), r[::-1] + np.arange(20))         # the linear index of the points
    _same(lr[::-3] * loom.arange(7.0), r[::-3] * np.arange(7.0))


def test_broadcast_partners_empty_and_zero_d():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((13, 3 * 700)).astype(np.float32)
    b = rng.standard_normal(700).astype(np.float32)
    c = rng.standard_normal((13, 1)).astype(np.float32)
    lx, lb, lc = loom.asarray(x), loom.asarray(b), loom.asarray(c)
    np.testing.assert_allclose(loom.asnumpy(lx[:, ::-3] * lb + lc), x[:, ::-3] * b + c, rtol=1e-6)
    np.testing.assert_allclose(loom.asnumpy(lx[:, ::-3] * lb[::-1]), x[:, ::-3] * b[::-1], rtol=1e-6)
    np.testing.assert_allclose(loom.asnumpy(lx[::-1, ::-3].sum(axis=1) + lc[:, 0]),
                               x[::-1, ::-3].sum(axis=1) + c[:, 0], rtol=1e-5)
    e = np.zeros((0, 12), np.float32)
    _same(loom.asarray(e)[:, ::-5] * 2, e[:, ::-5] * 2)
    _same(loom.asarray(e)[:, ::-5].sum(axis=1), e[:, ::-5].sum(axis=1))
    _same(loom.asarray(e)[::-1].sum(), e[::-1].sum())
    z = np.arange(30.0)
    _same(loom.asarray(z)[::-7][2] * 2 + 1, z[::-7][2] * 2 + 1)        # 0-d
    _same(loom.asarray(z)[3:3:-1] * 2, z[3:3:-1] * 2)                  # empty reversed


def test_store_into_reversed_view():
    a = _data((6, 3 * 101 + 1), np.float32, seed=9)
    x = _data((6, 102), np.float32, seed=10)
    la = loom.asarray(a.copy())
    la[:, ::-3] = loom.asarray(x) * 2 + la[:, ::-3] * 3
    want = a.copy()
    want[:, ::-3] = x * 2 + a[:, ::-3] * 3
    _same(la, want)
    lb = loom.asarray(a.copy())
    lb[:, ::-1] = lb * 2                                              # overlapping in place: NumPy's copy semantics
    want = a.copy()
    want[:, ::-1] = a * 2
    _same(lb, want)


def test_flipped_layouts_and_no_gathers():
    x = loom.asarray(np.zeros((301, 1777), np.float32))
    k = _kernels(lambda: x[:, ::-2] * 2.0 + 1.0)
    assert "in f32 [s,2]" in k and "out f32 [s,r]" in k, k                # read forwards at stride 2
    k = _kernels(lambda: x[:, ::-3].sum(axis=1))
    assert "in f32 [s,3]" in k, k
    k = _kernels(lambda: x[:, ::-7] * 2.0)                              # a tie of run-time strides: read forwards
    assert "in f32 [s,s]" in k and "out f32 [s,r]" in k, k
    k = _kernels(lambda: x[:, ::-1] * 2.0)                              # a tie: -1 read, +1 write kept
    assert "in f32 [s,r]" in k and "out f32 [s,1]" in k, k
    k = _kernels(lambda: loom.argmax(x[:, ::-2], axis=1))               # order matters: not flipped
    assert "in f32 [s,s]" in k, k
    if "<16 x float>" not in _llvm(lambda: x * 2.0):
        pytest.skip("this host's code has no 512-bit float vectors")
    for fn in (lambda: x[:, ::-2] * 2.0 + 1.0, lambda: x[:, ::-3].sum(axis=1), lambda: x.reshape(-1)[::-2].sum(),
               lambda: x[:, ::-4].max(axis=1)):
        ir = _llvm(fn)
        assert "masked.gather" not in ir and "shufflevector" in ir


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_parts_in_kernels(dtype):
    rng = np.random.default_rng(11)
    z = (rng.standard_normal((9, 1001)) + 1j * rng.standard_normal((9, 1001))).astype(dtype)
    lz = loom.asarray(z)
    part = np.float32 if dtype == np.complex64 else np.float64
    rtol = 1e-5 if dtype == np.complex64 else 1e-12
    fr = loom.fuse(lambda v: v.real.sum(axis=1))
    fi = loom.fuse(lambda v: v.imag * 2 + 1)
    fb = loom.fuse(lambda v: v.real * v.imag + abs(v))                   # both parts and the whole: stays complex
    fs = loom.fuse(lambda v: v[:, ::-3].imag.max(axis=1))
    np.testing.assert_allclose(loom.asnumpy(fr(lz)), z.real.sum(axis=1), rtol=rtol)
    got = loom.asnumpy(fi(lz))
    assert got.dtype == part
    np.testing.assert_array_equal(got, z.imag * 2 + 1)
    np.testing.assert_allclose(loom.asnumpy(fb(lz)), z.real * z.imag + abs(z), rtol=rtol, atol=1e-5)
    np.testing.assert_array_equal(loom.asnumpy(fs(lz)), z[:, ::-3].imag.max(axis=1))
    # a float32 sum is as close as its order allows: eps * sum |v| absolutely (a sum near 0 has no relative bound)
    half = z[:, 1::2].real
    np.testing.assert_allclose(loom.asnumpy(fr(lz[:, 1::2])), half.sum(axis=1), rtol=rtol,
                               atol=float(np.finfo(part).eps) * float(np.abs(half).sum(axis=1).max()))
    e = np.zeros((0, 4), dtype)
    np.testing.assert_array_equal(loom.asnumpy(fr(loom.asarray(e))), e.real.sum(axis=1))
    s = np.array(3 - 4j, dtype)
    np.testing.assert_array_equal(loom.asnumpy(fi(loom.asarray(s))), s.imag * 2 + 1)


def test_complex_part_kernels_read_floats_without_gathers():
    z = loom.asarray(np.zeros(1 << 12, np.complex64))
    if z._on_gpu:
        pytest.skip("the host's code generation (its LLVM vectors): arrays on the host device")
    k = _kernels(lambda: z.real * 2.0 + z.real)
    assert "in f32 [2]" in k and "c64" not in k, k
    k = _kernels(lambda: abs(z) + z.real)
    assert "in c64" in k, k
    x = loom.asarray(np.zeros(1 << 12, np.float32))
    if "<16 x float>" not in _llvm(lambda: x * 2.0):
        pytest.skip("this host's code has no 512-bit float vectors")
    f = loom.fuse(lambda v: v.real.sum())
    with loom.capture_dumps("llvm", echo=False) as dump:
        loom.asnumpy(f(z))
    assert "masked.gather" not in dump.text and "shufflevector" in dump.text


def test_knobs_off_same_values():
    code = (
        "import numpy as np, loom\n"
        "a = (np.arange(7 * 400) % 83).astype(np.float32).reshape(7, 400)\n"
        "z = (a + 1j * a[::-1]).astype(np.complex64)\n"
        "la, lz = loom.asarray(a), loom.asarray(z)\n"
        "f = loom.fuse(lambda v: v.imag * 2 + 1)\n"
        "print(repr(loom.asnumpy(la[:, ::-3] * 2 + 1).tolist()))\n"
        "print(repr(loom.asnumpy(la[:, ::-2].sum(axis=1)).tolist()))\n"
        "print(repr(loom.asnumpy(f(lz)).tolist()))\n")
    outs = {}
    for env_knobs in ({"LOOM_FLIP_DIMS": "0", "LOOM_COMPLEX_PARTS": "0"}, {}):
        env = dict(os.environ, LOOM_HOST_DISK_CACHE="0", **env_knobs)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs[len(env_knobs)] = r.stdout
    a = (np.arange(7 * 400) % 83).astype(np.float32).reshape(7, 400)
    z = (a + 1j * a[::-1]).astype(np.complex64)
    want = "\n".join(repr(v.tolist()) for v in (a[:, ::-3] * 2 + 1, a[:, ::-2].sum(axis=1), z.imag * 2 + 1)) + "\n"
    assert outs[0] == outs[2] == want
