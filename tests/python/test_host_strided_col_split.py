"""The column split of host reductions whose walk the strides pick at run time (x[:, ::2].mean(0),
x.T[::2].sum(1), x[::2, ::3].max(0)): such kernels get colpart / colfinish (codegen/lower_host.c col_query,
codegen/codegen.h CG_COL_BY_STRIDES), and the launcher asks colpart whether the strides pick the outer walk before it
plans slabs of rows (runtime/host_launch.c rt_host_kernel_plan); where they pick the per-O walk
(x[::2, ::3].sum(1)) the plan stays as before. Sizes here take the split (at least 2 slabs of >= 64 rows).
Results against NumPy (float64 references for float sums; exact for max / min / argmax / integer sums and
any), the plan read from LOOM_DUMP=time's launch lines, and in child processes: the same bits on one thread
(the slabs depend on the sizes only), and the mechanism off (LOOM_HOST_COL_BY_STRIDES=0,
LOOM_HOST_WALK_BY_STRIDES=0: no column split) agreeing with NumPy."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)  # the default device of this run
pytestmark = pytest.mark.skipif(ON_GPU, reason="the host launch plan (the default device is a GPU)")

A = np.random.default_rng(5).uniform(-1.0, 1.0, size=(1500, 301)).astype(np.float32)
A[17, 40] = np.nan  # a NaN in one column (axis 0 of [:, ::2]) and one row
A[900, 41] = np.inf  # an inf in a column [:, ::2] skips (it must not leak into a neighbour)
I = np.random.default_rng(6).integers(-1000, 1000, size=(1500, 301)).astype(np.int32)

# (view, axis): the strides pick the outer walk (kept axis strides less): the column split
OUTER = {
    "cols2": (lambda a: a[:, ::2], 0),
    "T_rows2": (lambda a: a.T[::2], 1),
    "rows2_cols3": (lambda a: a[::2, ::3], 0),
    "rev": (lambda a: a[::-1, ::-2], 0),
}
# the per-O walk (the reduced axis strides less): no column split
PER_O = {"rows2_cols3_ax1": (lambda a: a[::2, ::3], 1), "cols2_ax1": (lambda a: a[::3, ::2], 1)}
OPS = ["sum", "mean", "max", "min", "argmax", "argmin", "var"]


def np_ref(op: str, v: np.ndarray, axis: int) -> np.ndarray:
    if op in ("sum", "mean", "var"):
        return getattr(np, op)(v.astype(np.float64), axis=axis)
    return getattr(np, op)(v, axis=axis)


def close(got: np.ndarray, want: np.ndarray, terms: np.ndarray, axis: int, mean: bool = False) -> None:
    """float32 results within 4 eps of the sum of the terms' finite magnitudes (an accurate float32 sum's
    bound; of a mean: over the count); NaN and inf where NumPy has them"""
    scale = np.abs(np.where(np.isfinite(terms), terms, 0).astype(np.float64)).sum(axis=axis)
    if mean:
        scale = scale / max(terms.shape[axis], 1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    ok = np.isfinite(want)
    err = np.abs(got.astype(np.float64) - want)[ok]
    assert (err <= 4 * np.finfo(np.float32).eps * (scale[ok] + np.abs(want[ok])) + 1e-30).all(), err.max()


def check(op: str, got: np.ndarray, v: np.ndarray, axis: int) -> None:
    want = np_ref(op, v, axis)
    if op in ("argmax", "argmin"):
        np.testing.assert_array_equal(got, want)
    elif op in ("max", "min"):
        np.testing.assert_array_equal(got, want.astype(np.float32))
    elif op == "var":
        dev = v.astype(np.float64) - np.nanmean(v.astype(np.float64), axis=axis, keepdims=True)
        close(got, want, (dev * dev).astype(np.float32), axis, mean=True)
    else:
        close(got, want, v, axis, mean=op == "mean")


def launches(fn) -> tuple:
    """fn's result and the strategies of its host launches (LOOM_DUMP=time)"""
    with loom.capture_dumps("time", echo=False) as d:
        r = loom.asnumpy(fn())
    plans = [line.split(": ", 1)[1].split(",")[0] for line in d.text.splitlines()
             if line.startswith("# time host") and " launch " in line]
    return r, plans


@pytest.mark.parametrize("view", list(OUTER))
@pytest.mark.parametrize("op", OPS)
def test_outer_views_take_the_column_split(view: str, op: str) -> None:
    f, axis = OUTER[view]
    got, plans = launches(lambda: getattr(loom, op)(f(loom.asarray(A)), axis=axis))
    check(op, got, f(A), axis)
    assert "column split" in plans, plans


@pytest.mark.parametrize("view", list(PER_O))
@pytest.mark.parametrize("op", ["sum", "max", "argmax"])
def test_per_o_views_keep_their_plan(view: str, op: str) -> None:
    f, axis = PER_O[view]
    got, plans = launches(lambda: getattr(loom, op)(f(loom.asarray(A)), axis=axis))
    check(op, got, f(A), axis)
    assert plans and "column split" not in plans, plans


def test_one_kernel_both_ways() -> None:
    """one compiled kernel, fed a view of each kind: split where the strides pick the outer walk only"""
    g = loom.fuse(lambda v: loom.sum(v * 2.0, axis=0))
    x = loom.asarray(A)
    for v, vn, split in ((x[:, ::2], A[:, ::2], True), (x.T[::3, ::2], A.T[::3, ::2], False),
                         (x[::3, ::2], A[::3, ::2], True)):
        got, plans = launches(lambda: g(v))
        close(got, (vn.astype(np.float64) * 2).sum(0), vn * 2.0, 0)
        assert ("column split" in plans) == split, (plans, v.shape)


@pytest.mark.parametrize("view", ["cols2", "T_rows2", "rev"])
def test_int_and_bool(view: str) -> None:
    f, axis = OUTER[view]
    v, x = f(I), f(loom.asarray(I))
    got, plans = launches(lambda: loom.sum(x, axis=axis))
    np.testing.assert_array_equal(got, v.sum(axis=axis))
    assert "column split" in plans, plans
    np.testing.assert_array_equal(loom.asnumpy(loom.min(x, axis=axis)), v.min(axis=axis))
    np.testing.assert_array_equal(loom.asnumpy(loom.any(x > 995, axis=axis)), (v > 995).any(axis=axis))


def test_broadcast_weight_and_float64() -> None:
    """a second operand broadcast along R (a strided weight per column), and float64 data"""
    w = np.linspace(-2.0, 2.0, 602).astype(np.float32)
    x, wx = loom.asarray(A), loom.asarray(w)
    got, plans = launches(lambda: loom.sum(x[:, ::2] * wx[::4][None, :], axis=0))
    terms = A[:, ::2] * w[::4][None, :]
    close(got, (A[:, ::2].astype(np.float64) * w[::4].astype(np.float64)).sum(0), terms, 0)
    assert "column split" in plans, plans
    a64 = A.astype(np.float64)
    got64, plans = launches(lambda: loom.mean(loom.asarray(a64)[:, ::2], axis=0))
    np.testing.assert_allclose(got64, a64[:, ::2].mean(0), rtol=1e-12, atol=1e-12)
    assert "column split" in plans, plans


def test_edges_3d_empty_and_full() -> None:
    x = loom.asarray(A)
    v3 = A.reshape(15, 100, 301)[:, ::2, ::3]  # 3-d: too few rows for slabs, but the same kernel family
    close(loom.asnumpy(loom.sum(x.reshape(15, 100, 301)[:, ::2, ::3], axis=0)), v3.astype(np.float64).sum(0), v3, 0)
    np.testing.assert_array_equal(loom.asnumpy(loom.sum(x[:0, ::2], axis=0)), np.zeros(151, np.float32))
    assert loom.asnumpy(loom.max(x[:, :0:2], axis=0)).shape == (0,)
    full = float(loom.asnumpy(loom.nansum(x[:, ::2])))  # 0-d: no kept axis (not a by-strides kernel)
    want = np.nansum(A[:, ::2].astype(np.float64))
    assert abs(full - want) <= 1e-5 * np.abs(np.nan_to_num(A[:, ::2], posinf=0)).sum() + 1e-3, (full, want)


CHILD = ("import numpy as np, loom\n"
         "a = np.random.default_rng(5).uniform(-1, 1, size=(1500, 301)).astype(np.float32)\n"
         "x = loom.asarray(a)\n"
         "with loom.capture_dumps('time', echo=False) as d:\n"
         "    r = [loom.asnumpy(loom.mean(x[:, ::2], axis=0)), loom.asnumpy(loom.max(x.T[::2], axis=1))]\n"
         "print('split' if 'column split' in d.text else 'none')\n"
         "print(repr([v.tolist() for v in r]))\n")


def run_child(tmp_path, **env: str) -> tuple:
    e = dict(os.environ, LOOM_CACHE_DIR=str(tmp_path / "cache"), **env)  # (knobs change the code: own cache)
    out = subprocess.run([sys.executable, "-c", CHILD], env=e, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    plan, values = out.stdout.splitlines()[-2:]
    mean, mx = (np.array(v, dtype=np.float32) for v in eval(values))
    a = np.random.default_rng(5).uniform(-1, 1, size=(1500, 301)).astype(np.float32)
    close(mean, a[:, ::2].astype(np.float64).mean(0), a[:, ::2], 0, mean=True)
    np.testing.assert_array_equal(mx, a.T[::2].max(1))
    return plan, mean


def test_same_bits_on_one_thread(tmp_path) -> None:
    plan1, one = run_child(tmp_path, LOOM_NUM_THREADS="1")
    plan2, two = run_child(tmp_path, LOOM_NUM_THREADS="2")
    assert plan1 == plan2 == "split"
    np.testing.assert_array_equal(one.view(np.uint32), two.view(np.uint32))


@pytest.mark.parametrize("knob", ["LOOM_HOST_COL_BY_STRIDES", "LOOM_HOST_WALK_BY_STRIDES"])
def test_switched_off(tmp_path, knob: str) -> None:
    # (the generic kernel's run-time choice: without the launch's specialization, KernelIr.walk_cols)
    plan, _ = run_child(tmp_path, **{knob: "0", "LOOM_HOST_COL_SPECIALIZE": "0"})
    assert plan == "none"


def test_generic_kernel_splits_too(tmp_path) -> None:
    """LOOM_HOST_COL_SPECIALIZE=0: the generic kernel's colpart answers the launcher's query (CG_COL_BY_STRIDES)."""
    plan, _ = run_child(tmp_path, LOOM_HOST_COL_SPECIALIZE="0")
    assert plan == "split"


@pytest.mark.parametrize("view,split", [("cols2", True), ("cols3_rows2", True), ("T_rows2", False)])
def test_map_phase_takes_the_column_split(view: str, split: bool) -> None:
    """x[:, ::2] / x[:, ::2].sum(0): a MAP phase after a reduction the strides pick the outer walk for; the launch
    specializes it (KernelIr.walk_cols), so it takes the column split as a contiguous one does. x.T[::2] over
    axis 1 writes its result along the reduced axis (a new array is row-major): the per-O walk, no split."""
    f, axis = {"cols2": (lambda a: a[:, ::2], 0), "T_rows2": (lambda a: a.T[::2], 1),
               "cols3_rows2": (lambda a: a[::2, ::3], 0)}[view]
    v = f(A.astype(np.float64))
    x = f(loom.asarray(A))
    with loom.capture_dumps("time", echo=False) as d:
        got = loom.asnumpy(x / x.sum(axis, keepdims=True))
        cen = loom.asnumpy(x - x.mean(axis, keepdims=True))
    assert ("column split" in d.text) == split
    want = v / v.sum(axis, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-6)
    np.testing.assert_allclose(cen, v - v.mean(axis, keepdims=True), rtol=1e-4, atol=2e-5)
