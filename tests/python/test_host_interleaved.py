# SPDX-License-Identifier: Apache-2.0
"""Views with a small constant stride along their last axis (x[::2], x[1::2], x[:, ::3], RGB planes,
the four 2x2-pooling views): values against NumPy for strides 2-4 and -1, odd lengths (vector tails),
offsets, 2-d and 3-d, reductions over such views and stores into them; and, on an x86 host with AVX2,
the host code's loads of such views are interleaved groups (wide loads and shuffles), not gathers or
scalar loads (codegen/lower.c cg_point_ptr: the row pointer and the in-row offset are inbounds / nsw)."""
import numpy as np
import pytest

import loom


def _rng(seed=0):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("n", [1, 7, 33, 1000, 4099])
@pytest.mark.parametrize("step", [2, 3, 4, -1, -2])
def test_strided_pairs_match_numpy(n, step):
    a = _rng(n).standard_normal(n * 4 + 3).astype(np.float32)
    la = loom.asarray(a)
    for off in (0, 1):
        s = slice(off, None, step) if step > 0 else slice(len(a) - 1 - off, None, step)
        v, lv = a[s][:n], la[s][:n]
        w, lw = a[s][1:n + 1], la[s][1:n + 1]
        got = loom.asnumpy(0.5 * (lv + lw) - lv * lw)
        np.testing.assert_array_equal(got, np.float32(0.5) * (v + w) - v * w)


@pytest.mark.parametrize("shape", [(64, 66), (5, 9), (1, 2), (130, 258)])
def test_pooling_views_2d(shape):
    x = _rng(1).standard_normal(shape).astype(np.float32)
    h, w = shape[0] // 2, shape[1] // 2
    lx = loom.asarray(x)[:2 * h, :2 * w]          # an odd image is cropped first, as a pooling layer does
    got = loom.asnumpy(0.25 * (lx[0::2, 0::2] + lx[1::2, 0::2] + lx[0::2, 1::2] + lx[1::2, 1::2]))
    x = x[:2 * h, :2 * w]
    want = np.float32(0.25) * (((x[0::2, 0::2] + x[1::2, 0::2]) + x[0::2, 1::2]) + x[1::2, 1::2])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_rgb_planes_and_rope_pairs():
    rng = _rng(2)
    img = rng.random((37, 41, 3)).astype(np.float32).reshape(37, 123)
    li = loom.asarray(img)
    got = loom.asnumpy(0.299 * li[:, 0::3] + 0.587 * li[:, 1::3] + 0.114 * li[:, 2::3])
    want = np.float32(0.299) * img[:, 0::3] + np.float32(0.587) * img[:, 1::3] + np.float32(0.114) * img[:, 2::3]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    x = rng.standard_normal((19, 70)).astype(np.float32)
    c = rng.standard_normal((19, 35)).astype(np.float32)
    s = rng.standard_normal((19, 35)).astype(np.float32)
    lx, lc, ls = loom.asarray(x), loom.asarray(c), loom.asarray(s)
    r1, r2 = lx[:, 0::2] * lc - lx[:, 1::2] * ls, lx[:, 0::2] * ls + lx[:, 1::2] * lc
    np.testing.assert_allclose(loom.asnumpy(r1), x[:, 0::2] * c - x[:, 1::2] * s, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loom.asnumpy(r2), x[:, 0::2] * s + x[:, 1::2] * c, rtol=1e-5, atol=1e-6)


def test_reductions_over_strided_views():
    x = _rng(3).standard_normal((33, 130)).astype(np.float64)
    lx = loom.asarray(x)
    np.testing.assert_allclose(loom.asnumpy(lx[:, 1::2].sum(axis=1)), x[:, 1::2].sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(loom.asnumpy(lx[::3, ::4].max(axis=0)), x[::3, ::4].max(axis=0))
    np.testing.assert_allclose(float(loom.asnumpy(lx[:, ::-1][:, ::2].mean())), x[:, ::-1][:, ::2].mean(), rtol=1e-12)
    e = np.exp(x[:, ::2] - x[:, ::2].max(axis=1, keepdims=True))
    le = loom.exp(lx[:, ::2] - lx[:, ::2].max(axis=1, keepdims=True))
    np.testing.assert_allclose(loom.asnumpy(le / le.sum(axis=1, keepdims=True)), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-12)


def test_store_into_strided_view_and_integers():
    a = np.arange(2 * 1001, dtype=np.int32)
    la = loom.asarray(a.copy())
    la[1::2] = la[0::2] * 3 + la[1::2]
    want = a.copy()
    want[1::2] = a[0::2] * 3 + a[1::2]
    np.testing.assert_array_equal(loom.asnumpy(la), want)
    b = np.arange(4 * 257, dtype=np.int8)       # wraps
    lb = loom.asarray(b)
    np.testing.assert_array_equal(loom.asnumpy(lb[0::4] + lb[3::4]), b[0::4] + b[3::4])


def _host_ir(fn):
    return loom.inspect(fn, what="llvm")["llvm"]


def test_interleaved_loads_not_gathers():
    x = loom.asarray(np.zeros(1 << 12, np.float32))
    plain = _host_ir(lambda: x * 2.0)
    if "<8 x float>" not in plain and "<16 x float>" not in plain:
        pytest.skip("this host's code has no 256/512-bit float vectors")
    l, r = x[0::2], x[1::2]
    ir = _host_ir(lambda: (0.5 * (l + r), 0.5 * (l - r)))
    assert "masked.gather" not in ir
    assert "shufflevector" in ir and ("load <16 x float>" in ir or "load <32 x float>" in ir or "load <8 x float>" in ir)
    y = loom.asarray(np.zeros((64, 256), np.float32))
    ir = _host_ir(lambda: 0.25 * (y[0::2, 0::2] + y[1::2, 0::2] + y[0::2, 1::2] + y[1::2, 1::2]))
    assert "masked.gather" not in ir and "shufflevector" in ir
