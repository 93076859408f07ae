"""One-hot contractions (passes/onehot.c): sum(where(L == index along k, v, 0), axis=k) is computed as a gather of
v at L's position. Results are checked against NumPy, and bit for bit against Loom with the pass off
(LOOM_ONEHOT=0, a subprocess) where floating-point rounding is involved; the kernels must show the gather."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

RNG = np.random.default_rng(11)


def _run(fn, *arrays):
    """fn(loom, *arrays) fused (views of pending arrays stay lazy there), as NumPy, and its kernels' text."""
    args = [loom.asarray(a) for a in arrays]
    with loom.capture_dumps("kernels", echo=False) as d:
        got = loom.asnumpy(loom.fuse(lambda *a: fn(loom, *a))(*args))
    return got, d.text


def _onehot_sum(xp, v, labels, axis=-1, start=0, step=1, keepdims=False):
    n = v.shape[axis]
    idx = xp.arange(start, start + step * n, step)
    shape = [1] * v.ndim
    shape[axis] = n
    lab = xp.expand_dims(labels, axis)
    return xp.sum(xp.where(lab == xp.reshape(idx, tuple(shape)), v, 0), axis=axis, keepdims=keepdims)


def _cross_entropy(xp, x, labels):
    z = x - xp.max(x, axis=-1, keepdims=True)
    logp = z - xp.log(xp.sum(xp.exp(z), axis=-1, keepdims=True))
    onehot = labels[:, None] == xp.arange(x.shape[-1])
    return -xp.mean(xp.sum(xp.where(onehot, logp, 0.0), axis=-1))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_pick_matches_numpy_every_axis(axis):
    v = RNG.standard_normal((5, 7, 9)).astype(np.float32)
    red = [s for i, s in enumerate(v.shape) if i != axis % 3]
    n = v.shape[axis]
    labels = RNG.integers(-2, n + 2, size=red)  # some out of range on both sides
    got, kernels = _run(lambda xp, a, b: _onehot_sum(xp, a, b, axis=axis), v, labels)
    assert "gather" in kernels
    np.testing.assert_array_equal(got, _onehot_sum(np, v, labels, axis=axis))


def test_affine_index_start_step_and_negative_step():
    v = RNG.standard_normal((6, 8)).astype(np.float32)
    for start, step in [(5, 3), (40, -5), (-8, 2)]:
        labels = np.array([start + step * j for j in (0, 3, 7)] + [start + 1, start - step, start + 8 * step])
        got, kernels = _run(lambda xp, a, b: _onehot_sum(xp, a, b, start=start, step=step), v, labels)
        assert "gather" in kernels
        np.testing.assert_array_equal(got, _onehot_sum(np, v, labels, start=start, step=step))


@pytest.mark.parametrize("ldt", ["int8", "uint8", "int16", "int32", "uint32", "int64"])
def test_label_dtypes(ldt):
    v = RNG.standard_normal((10, 6)).astype(np.float64)
    info = np.iinfo(ldt)
    labels = np.array([0, 5, 3, 6, info.max, info.min, 1, 2, 4, 5], dtype=ldt)
    got, kernels = _run(_onehot_sum, v, labels)
    assert "gather" in kernels
    np.testing.assert_array_equal(got, _onehot_sum(np, v, labels))


def test_values_int_bool_half_and_signed_zero():
    labels = np.array([0, 1, 2, 3, 9])
    vi = RNG.integers(-(2**31), 2**31 - 1, size=(5, 4), dtype=np.int32)  # int32 sums to int64
    got, kernels = _run(_onehot_sum, vi, labels)
    want = _onehot_sum(np, vi, labels)
    assert "gather" in kernels and got.dtype == want.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    vb = RNG.random((5, 4)) < 0.5
    got, kernels = _run(_onehot_sum, vb, labels)
    assert "gather" in kernels
    np.testing.assert_array_equal(got, _onehot_sum(np, vb, labels))
    vh = RNG.standard_normal((5, 4)).astype(np.float16)
    vh[0, 0] = -0.0  # the label's element: the sum of it and zeros is +0
    vh[1, 3] = np.inf  # elsewhere: dropped by where
    vh[2, 0] = np.nan
    got, kernels = _run(_onehot_sum, vh, labels)
    assert "gather" in kernels
    want = _onehot_sum(np, vh, labels)
    np.testing.assert_array_equal(got, want)
    assert not np.signbit(got[0]) and not np.signbit(want[0])


def test_keepdims_root_and_noncontiguous_values():
    v = RNG.standard_normal((12, 10)).astype(np.float32)
    labels = RNG.integers(0, 5, size=12)
    got, _ = _run(lambda xp, a, b: _onehot_sum(xp, a[:, ::2], b, keepdims=True), v, labels)
    np.testing.assert_array_equal(got, _onehot_sum(np, v[:, ::2], labels, keepdims=True))
    labels_t = RNG.integers(0, 12, size=10)
    got, _ = _run(lambda xp, a, b: _onehot_sum(xp, a.T, b), v, labels_t)  # axes that do not merge: still right
    np.testing.assert_array_equal(got, _onehot_sum(np, v.T, labels_t))


def test_not_rewritten_but_right_when_compared_as_floats():
    v = RNG.standard_normal((4, 5)).astype(np.float32)
    labels = np.array([0.0, 2.0, 2.5, 4.0], dtype=np.float32)
    got, kernels = _run(_onehot_sum, v, labels)
    assert "gather" not in kernels
    np.testing.assert_array_equal(got, _onehot_sum(np, v, labels))


def test_cross_entropy_against_float64_reference():
    x = (RNG.standard_normal((300, 37)) * 4).astype(np.float32)
    labels = RNG.integers(0, 37, size=300)
    got, kernels = _run(_cross_entropy, x, labels)
    assert "gather" in kernels
    x64 = x.astype(np.float64)
    z = x64 - x64.max(-1, keepdims=True)
    ref = -np.mean(z[np.arange(300), labels] - np.log(np.exp(z).sum(-1)))
    np.testing.assert_allclose(float(got), ref, rtol=2e-6)


_CHILD = r"""
import json, sys, numpy as np, loom
sys.path.insert(0, sys.argv[1])
from test_onehot_gather import _cross_entropy, _onehot_sum
rng = np.random.default_rng(5)
x = (rng.standard_normal((257, 33)) * 6).astype(np.float32)
labels = rng.integers(-1, 34, size=257)
X, L = loom.asarray(x), loom.asarray(labels)
ce = loom.asnumpy(loom.fuse(lambda a, b: _cross_entropy(loom, a, b))(X, L))
def logp_pick(a, b):
    z = a - loom.max(a, axis=-1, keepdims=True)
    return _onehot_sum(loom, z - loom.log(loom.sum(loom.exp(z), axis=-1, keepdims=True)), b)
rows = loom.asnumpy(loom.fuse(logp_pick)(X, L))
print(json.dumps([float(ce).hex()] + [float(r).hex() for r in rows] + [bool(X._on_gpu)]))
"""


def test_same_bits_as_without_the_pass(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    out = {}
    for knob in ("1", "0"):
        env = dict(os.environ, LOOM_ONEHOT=knob, LOOM_CACHE_DIR=str(tmp_path / knob))
        r = subprocess.run([sys.executable, "-c", _CHILD, here], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        out[knob] = json.loads(r.stdout)
    on_gpu = out["0"].pop()
    assert out["1"].pop() == on_gpu
    # each row's pick: the same bits whether it is a gather or a sum of one-hot products
    assert out["1"][1:] == out["0"][1:]
    ce1, ce0 = (float.fromhex(out[k][0]) for k in ("1", "0"))
    if on_gpu:
        # the mean over rows: a GPU picks the cross-entropy kernel's strategy (rows per warp or per block)
        # from its shape, so the rewritten graph may sum the 257 row values in another tree (H100: 1 ulp)
        assert abs(ce1 - ce0) <= 4 * np.spacing(np.float32(ce0)), (ce1, ce0)
    else:
        assert ce1 == ce0
