# SPDX-License-Identifier: Apache-2.0
"""Reductions over short packed rows, (N, E) -> (N,) with E = 2 .. 33: Poincare / cosine distances of embeddings,
softmax over a router's 16 logits, norms of (N, 3) points, a box's volume. On a GPU, 2-d ROW reductions of at least
2^14 packed rows of 2 .. 32 points are specialized on E and read whole rows as flat 16-byte vectors
(codegen/gpu_rowflat.c, where its stores stay coalesced enough; LOOM_GPU_ROWF=0 keeps the short-row mode, =2 takes
it wherever it can run); unaligned bases (x[1:] of rows of 3), padded
rows (x[:, :E] of wider rows) and strided rows take the usual entries. Against NumPy in float64 / int64, on
whatever device runs."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom


def data(n, e, dtype, seed=0):
    r = np.random.default_rng(seed + 13 * e + n)
    if np.dtype(dtype).kind in "iu":
        lo = 0 if np.dtype(dtype).kind == "u" else -100
        return r.integers(lo, 100, (n, e)).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return r.random((n, e)) > 0.7
    a = np.round(r.standard_normal((n, e)) * 8) / 32  # steps of 1/32: ties for argmin / argmax
    return a.astype(dtype)


def poincare(xp, u, v):
    d = u - v
    uu = 1.0 - xp.sum(u * u, axis=-1)
    vv = 1.0 - xp.sum(v * v, axis=-1)
    return xp.arccosh(1.0 + 2.0 * xp.sum(d * d, axis=-1) / (uu * vv))


def softmax(xp, x):
    z = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return z / xp.sum(z, axis=-1, keepdims=True)


OPS = {
    "sum": lambda xp, x: xp.sum(x, axis=-1),
    "mean": lambda xp, x: xp.mean(x, axis=-1),
    "max": lambda xp, x: xp.max(x, axis=-1),
    "argmax": lambda xp, x: xp.argmax(x, axis=-1),
    "argmin": lambda xp, x: xp.argmin(x * 2 - 1, axis=-1),
    "norm": lambda xp, x: xp.sqrt(xp.sum(x * x, axis=-1)),
    "softmax": softmax,
    "l1_normalize": lambda xp, x: x / xp.sum(xp.abs(x), axis=-1, keepdims=True),
    "var": lambda xp, x: xp.var(x, axis=-1),
}


def check(fn, *xs, tol=None):
    with np.errstate(all="ignore"):
        wide = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in xs]
        want = np.asarray(fn(np, *wide))
        got = np.asarray(loom.asnumpy(fn(loom, *[loom.asarray(x) for x in xs])))
    assert got.shape == want.shape
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        t = tol or {np.float16: 2e-2, np.float32: 2e-5}.get(xs[0].dtype.type, 1e-12)
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=t, atol=t * 4, equal_nan=True)


@pytest.mark.parametrize("e", [2, 3, 5, 7, 10, 16, 24, 33])
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_rows(op, e, dtype):
    check(OPS[op], data(20011, e, dtype))


@pytest.mark.parametrize("e", [3, 10, 13])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_poincare_distance(e, dtype):
    u, v = data(40009, e, dtype), data(40009, e, dtype, seed=1)
    check(poincare, u, v, tol=1e-4 if dtype == np.float32 else 1e-10)


@pytest.mark.parametrize("e", [3, 4, 10])
def test_nan_and_ties(e):
    x = data(30011, e, np.float32)
    x[17, e - 1] = np.nan
    x[19, 0] = np.nan
    x[23, :] = 0.5  # ties: the first
    for op in ("max", "argmax", "argmin", "sum", "softmax"):
        check(OPS[op], x)


@pytest.mark.parametrize("e", [2, 3, 8, 16])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.float16])
def test_other_dtypes(e, dtype):
    x = data(50021, e, dtype)
    check(OPS["sum"], x)
    check(OPS["max"], x)
    check(lambda xp, v: xp.prod(v[:, :3] if e > 3 else v, axis=-1), x)  # int32 products wrap as NumPy's do


def test_box_volume_int32_to_int64():
    e = data(70001, 3, np.int32) + 101
    check(lambda xp, v: xp.prod(v, axis=-1, dtype=xp.int64), e)


def test_bool_rows():
    x = data(40013, 7, np.bool_)
    check(lambda xp, v: xp.any(v, axis=-1), x)
    check(lambda xp, v: xp.all(v, axis=-1), x)
    check(lambda xp, v: xp.sum(v, axis=-1), x)


def test_weights_and_scales_beside_the_rows():
    """a per-column weight (w[None, :]) and a per-row scale (s[:, None]) read beside the packed rows"""
    x, w, s = data(30029, 10, np.float32), data(1, 10, np.float32, seed=3)[0], data(30029, 1, np.float32, seed=4)
    check(lambda xp, v, ww, ss: xp.sum(v * ww, axis=-1) * ss[:, 0], x, w, s)
    check(lambda xp, v, ww, ss: (v - xp.mean(v, axis=-1, keepdims=True)) * ww + ss, x, w, s)


def test_mixed_dtypes():
    """float16 logits beside float32 values (vectors of 4 lanes over both), an int8 beside float64"""
    x, h = data(40031, 10, np.float32), data(40031, 10, np.float16, seed=5)
    check(lambda xp, a, b: xp.sum(a * b.astype(xp.float32), axis=-1), x, h, tol=1e-3)
    q, w = data(40031, 6, np.int8), data(40031, 6, np.float64)
    check(lambda xp, a, b: xp.max(a * b, axis=-1), q, w)


@pytest.mark.parametrize("e", [3, 10])
def test_unaligned_padded_and_strided_views(e):
    base = data(60013, e + 2, np.float32)
    check(OPS["sum"], base[1:, :e].copy()[1:])  # a base one row in (not a vector for rows of 3 or 10)
    check(OPS["softmax"], base[:, :e])          # rows e + 2 apart: not packed
    check(OPS["argmax"], base[::2, :e])
    check(OPS["sum"], np.ascontiguousarray(base[:, ::-1])[:, :e])


def test_batched_rows_3d():
    """(B, T, E) reduced over E: the scheduler's rows of the flattened (B * T, E)"""
    x = data(64 * 512, 16, np.float32).reshape(64, 512, 16)
    check(OPS["softmax"], x)
    check(lambda xp, v: xp.max(v, axis=-1), x)


@pytest.mark.parametrize("env,select", [
    ({"LOOM_GPU_ROWF": "0"}, "float32 and (softmax or argmax) and (-10] or -3])"),
    ({"LOOM_GPU_ROWF": "2"}, "float_rows or nan_and_ties or other_dtypes or weights or unaligned"),
    ({"LOOM_GPU_ROWF_STAGE": "1"}, "float_rows or poincare or nan_and_ties or other_dtypes or box_volume or bool_rows "
                                   "or weights or mixed or unaligned or batched")])
def test_switch_in_a_child(env, select):
    """LOOM_GPU_ROWF=0 in a child: the same values by the short-row mode; =2: by the flat rows wherever the entry
    can run, also where its stores spread (MAP outputs of rows of 7, per-row results of rows of 3);
    LOOM_GPU_ROWF_STAGE=1: a wave's chunks exchanged through shared memory (coalesced loads and stores)"""
    if os.environ.get("LOOM_GPU_ROWF") or os.environ.get("LOOM_GPU_ROWF_STAGE"):
        pytest.skip("already a child")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.abspath(__file__),
                    "-k", select], env=dict(os.environ, **env), check=True, timeout=600)
