"""Reductions whose walk the strides pick on the GPU (KernelIr.walk_cols, codegen/lower.c cg_gpu_walk_cols,
runtime/gpu/gpu_launch.c rt_gpu_specialize): a view strided along both its kept and its reduced axis by
run-time amounts (x[:, ::2].mean(0), x.T[::2].sum(1), x[:, ::-1].cumsum(0)) has no contiguous axis, so its
kernel's layout cannot say which walk reads memory in order; the GPU device compiles a copy that walks by
columns (a thread a kept point) where the kept axis strides less, else the generic kernel walks by rows.
The PTX a launch would run is checked without a GPU (loom.inspect specializes as a launch does); the values
are checked against NumPy on the default device (the host here, the GPU on a GPU machine)."""
import os
import re
import subprocess
import sys

from typing import Any, Callable, Dict, Tuple

import numpy as np
import pytest

import loom
from conftest import check


def entries(e) -> set:
    text = loom.inspect(e, what="ptx")["ptx"]
    if text.startswith("unavailable"):
        pytest.skip(text)
    return {m.group(1).rsplit("_", 1)[1] for m in re.finditer(r"\.entry (\w+)\(", text)}


def test_strides_pick_the_walk_ptx() -> None:
    x = loom.asarray(np.random.default_rng(0).random((203, 151), dtype=np.float32))
    col = [x[:, ::2].mean(0), x[:, ::3].max(0), x[:, ::-1].sum(0), x.T[::2].sum(1), x.sum(0)]
    row = [x[:, ::8].sum(1), x.T[::2].sum(0), x.sum(1), x[::2].sum(1)]
    for e in col:
        got = entries(e)
        assert "col" in got and "row" not in got, got
    for e in row:
        got = entries(e)
        assert "row" in got and "col" not in got, got


def test_walk_by_strides_knob_off_ptx() -> None:
    """LOOM_GPU_WALK_BY_STRIDES=0 (read once per process): checked in a child so this process keeps its value."""
    code = ("import numpy as np, loom, re\n"
            "x = loom.asarray(np.ones((203, 151), np.float32))\n"
            "t = loom.inspect(x[:, ::2].mean(0), what='ptx')['ptx']\n"
            "print('unavailable' if t.startswith('unavailable') else sorted(set(re.findall(r'_(col|row)\\(', t))))\n")
    env = dict(os.environ, LOOM_GPU_WALK_BY_STRIDES="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    if "unavailable" in out:
        pytest.skip(out)
    assert out.strip() == "['row']", out


def test_short_rows_walk_a_thread_a_row_ptx() -> None:
    """Scans over >= 2^14 rows of at most 128 bytes (LOOM_GPU_THREAD_ROW_BYTES) walk a thread a row (the column
    walk over a row-major layout), and one-reduction kernels too where no loaded buffer could be staged (broadcast
    operands); longer rows, fewer of them, or a stageable buffer keep the row walk."""
    rng = np.random.default_rng(1)
    r12 = rng.random((20000, 12)) * 0.1 - 0.05
    r17 = rng.random((20000, 17))
    a, b = rng.random((300, 3), dtype=np.float32), rng.random((100, 3), dtype=np.float32)
    la, lb = loom.asarray(a), loom.asarray(b)
    Case = Tuple[Callable[..., Any], np.ndarray]
    thread: Dict[str, Case] = {
        "cumprod rows of 12 f64": (lambda xp, x: xp.cumprod(1.0 + x, axis=-1), r12),
        "cumsum rows of 15 int32 (int64 out: 120 bytes)": (lambda xp, x: xp.cumsum(x, axis=1),
                                                          (r17 * 100).astype(np.int32)[:, :15]),
    }
    rows: Dict[str, Case] = {
        "cumprod rows of 17 f64 (136 bytes)": (lambda xp, x: xp.cumprod(1.0 + x, axis=-1), r17),
        "cumprod of 100 rows": (lambda xp, x: xp.cumprod(1.0 + x, axis=-1), r12[:100]),
        "cumsum rows of 17 int32 (int64 out: 136 bytes)": (lambda xp, x: xp.cumsum(x, axis=1), (r17 * 100).astype(np.int32)),
        "softmax rows of 12 (two phases)": (lambda xp, x: xp.exp(x) / xp.sum(xp.exp(x), axis=1, keepdims=True), r12),
        "argmin rows of 16 f32 (the short-row mode stages its tiles)": (lambda xp, x: xp.argmin(x, axis=1),
                                                                         r17[:, :16].astype(np.float32)),
    }
    for name, (f, x) in thread.items():
        got = entries(f(loom, loom.asarray(x)))
        assert "col" in got and "row" not in got, (name, got)
        check(f(loom, loom.asarray(x)), f(np, x), rtol=1e-12 if x.dtype == np.float64 else None)
    for name, (f, x) in rows.items():
        got = entries(f(loom, loom.asarray(x)))
        assert "col" not in got, (name, got)
    d2 = ((la[:, None, :] - lb[None, :, :]) ** 2).sum(-1)
    got = entries(d2)
    assert "col" in got and "row" not in got, got
    check(d2, ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))


def test_thread_rows_knob_off_ptx() -> None:
    """LOOM_GPU_THREAD_ROW_BYTES=0 (read once per process): short-row scans keep the row walk; checked in a child."""
    code = ("import numpy as np, loom, re\n"
            "x = loom.asarray(np.ones((20000, 12)))\n"
            "t = loom.inspect(loom.cumprod(x, axis=-1), what='ptx')['ptx']\n"
            "print('unavailable' if t.startswith('unavailable') else sorted(set(re.findall(r'_(col|row)\\(', t))))\n")
    for knob, want in (("0", "['row']"), ("128", "['col']")):
        env = dict(os.environ, LOOM_GPU_THREAD_ROW_BYTES=knob)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
        if "unavailable" in out:
            pytest.skip(out)
        assert out.strip() == want, (knob, out)


VIEWS = {
    "x[:, ::2]": (lambda a: a[:, ::2], 0),
    "x[:, ::3]": (lambda a: a[:, ::3], 0),
    "x[:, ::-1]": (lambda a: a[:, ::-1], 0),
    "x.T[::2]": (lambda a: a.T[::2], 1),
    "x[::3, ::2]": (lambda a: a[::3, ::2], 0),
}
SHAPES = [(2003, 1531), (700, 5), (1, 9), (4099, 2), (0, 6)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's mean / var of an empty axis
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_strided_reductions_match_numpy(view: str, shape: tuple, dtype: str) -> None:
    rng = np.random.default_rng(hash((view, shape, dtype)) % 2**32)
    if dtype.startswith("int"):
        a = rng.integers(-(2**30), 2**30, size=shape).astype(dtype)  # int32 sums wrap as NumPy's do
    else:
        a = (rng.standard_normal(shape) + 2.0).astype(dtype)
        if a.size > 10:
            a.flat[7] = np.nan  # a NaN in one column (max propagates it; sum too)
    f, axis = VIEWS[view]
    x = loom.asarray(a)
    v, xv = f(a), f(x)
    check(xv.sum(axis), v.sum(axis), rtol=1e-4 if dtype == "float32" else None)
    if v.shape[axis] > 0:
        check(xv.max(axis), v.max(axis))
        if not np.isnan(v).any():
            check(xv.argmin(axis), v.argmin(axis))
    if dtype.startswith("float"):
        check(xv.mean(axis), v.mean(axis), rtol=1e-4 if dtype == "float32" else None)
        check(xv.var(axis), v.var(axis), rtol=1e-3 if dtype == "float32" else 1e-9)
    check(loom.cumsum(xv, axis=axis), np.cumsum(v, axis=axis), rtol=1e-4 if dtype == "float32" else None)


def test_strided_mean_fused_prologue() -> None:
    """A prologue over the strided view and a broadcast second operand, kept axis the smaller stride."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((1001, 777)).astype(np.float32)
    w = rng.standard_normal((1001, 1)).astype(np.float32)
    x, lw = loom.asarray(a), loom.asarray(w)
    check(((x[:, ::2] * lw) ** 2).sum(0), ((a[:, ::2] * w) ** 2).sum(0), rtol=1e-4)
    check(abs(x[:, ::-2]).max(0, keepdims=True), abs(a[:, ::-2]).max(0, keepdims=True))
