"""Reductions of views that stride along both the kept and the reduced axes (x[:, ::2].sum(0), x.T[::2].sum(1),
x[::2, ::3].max(0), reversed and 3-d views): the host picks its walk at run time from the strides
(codegen/lower_host.c run_by_strides: the outer walk where the kept axis strides less, else the per-O walk),
so one compiled kernel serves views of either kind. Results against NumPy (float64 references for float
sums; exact for max / min / argmax / integer sums), with the walk forced off (LOOM_HOST_WALK_BY_STRIDES=0)
in a child process as a second reference that must agree with NumPy too."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

A = np.random.default_rng(3).uniform(-1.0, 1.0, size=(403, 301)).astype(np.float32)
A[17, 40] = np.nan  # a NaN in one column and one row (max / argmax must carry it)
I = np.random.default_rng(4).integers(-1000, 1000, size=(403, 301)).astype(np.int32)

VIEWS = {
    "cols2": lambda a: a[:, ::2],
    "rows2_cols3": lambda a: a[::2, ::3],
    "T_rows2": lambda a: a.T[::2],
    "rev": lambda a: a[::-1, ::-2],
    "mid3d": lambda a: a.reshape(13, 31, 301)[:, ::2, ::3],
}
OPS = ["sum", "mean", "max", "min", "argmax", "var"]


def np_ref(op: str, v: np.ndarray, axis):
    if op in ("sum", "mean", "var"):
        return getattr(np, op)(v.astype(np.float64), axis=axis)
    return getattr(np, op)(v, axis=axis)


def close(got: np.ndarray, want: np.ndarray, terms: np.ndarray, axis=0) -> None:
    """float32 results within 4 eps of the sum of the terms' magnitudes (an accurate float32 sum's bound)"""
    scale = np.abs(terms.astype(np.float64)).sum(axis=axis)
    if want.shape != scale.shape:  # (mean / var: per term)
        scale = scale / terms.shape[axis]
    ok = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    err = np.abs(got.astype(np.float64) - want)[ok]
    assert (err <= 4 * np.finfo(np.float32).eps * (scale[ok] + np.abs(want[ok])) + 1e-30).all(), err.max()


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_float_views(view: str, op: str, axis: int) -> None:
    v = VIEWS[view](A)
    if op == "argmax" and v.ndim == 3:
        return  # (argmax over one axis of a 3-d view: covered by the 2-d views)
    got = loom.asnumpy(getattr(loom, op)(VIEWS[view](loom.asarray(A)), axis=axis))
    want = np_ref(op, v, axis)
    if op == "argmax":
        np.testing.assert_array_equal(got, want)
    elif op in ("max", "min"):
        np.testing.assert_array_equal(got, want.astype(np.float32))
    else:
        close(got, want, v, axis)


@pytest.mark.parametrize("view", ["cols2", "T_rows2", "rev"])
@pytest.mark.parametrize("axis", [0, 1])
def test_int_views(view: str, axis: int) -> None:
    v = VIEWS[view](I)
    x = VIEWS[view](loom.asarray(I))
    np.testing.assert_array_equal(loom.asnumpy(loom.sum(x, axis=axis)), v.sum(axis=axis))
    np.testing.assert_array_equal(loom.asnumpy(loom.min(x, axis=axis)), v.min(axis=axis))
    np.testing.assert_array_equal(loom.asnumpy(loom.any(x > 990, axis=axis)), (v > 990).any(axis=axis))


def test_one_kernel_for_both_kinds_of_view() -> None:
    """the same expression on views whose kept axis strides less (outer walk) and more (per-O walk)"""
    f = loom.fuse(lambda v: loom.sum(v * 2.0, axis=0))
    x = loom.asarray(A)
    for v, vn in ((x[:, ::2], A[:, ::2]), (x.T[::2], A.T[::2]), (x[::3, ::2], A[::3, ::2])):
        close(loom.asnumpy(f(v)), (vn.astype(np.float64) * 2).sum(0), vn * 2.0)


def test_forced_per_o_walk_agrees() -> None:
    code = ("import numpy as np, loom\n"
            "a = np.random.default_rng(3).uniform(-1, 1, size=(403, 301)).astype(np.float32)\n"
            "x = loom.asarray(a)\n"
            "print(repr(loom.asnumpy(loom.sum(x[:, ::2], axis=0)).tolist()))\n")
    env = dict(os.environ, LOOM_HOST_WALK_BY_STRIDES="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    forced = np.array(eval(out.stdout), dtype=np.float32)
    a = np.random.default_rng(3).uniform(-1, 1, size=(403, 301)).astype(np.float32)
    want = a[:, ::2].astype(np.float64).sum(0)
    close(forced, want, a[:, ::2])
    close(loom.asnumpy(loom.sum(loom.asarray(a)[:, ::2], axis=0)), want, a[:, ::2])
