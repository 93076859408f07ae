# SPDX-License-Identifier: Apache-2.0
"""Elementwise kernels that miss the GPU's vector entries (odd row lengths, unaligned slices, broadcasts,
strided views) against NumPy. On the GPU these run the scalar entry, where a thread reads every loaded
buffer at LOOM_GPU_ELEM_POINTS points (default 4: i, i + G, i + 2G, i + 3G for a grid of G threads) before
it computes any (codegen/gpu_strategies.c: cg_gpu_elem_points); the values must not depend on that, so the
same expressions also run in a child with LOOM_GPU_ELEM_POINTS=1. The PTX checks (no GPU needed) assert the
entry's shape: the loads of all points come before the first store, and none spills.
Runs on the default device (the host here: the same assertions) and on a CUDA device when one is visible.
"""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import loom

DEVICES = ["default"] + (["cuda"] if loom.cuda.is_available() else [])


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def on(device, a):
    if device == "cuda":
        with loom.cuda.Device(0):
            return loom.asarray(a)
    return loom.asarray(a)


def data(shape, dtype, seed):
    r = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.complexfloating):
        return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return r.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    if dtype == np.bool_:
        return r.random(shape) < 0.5
    return (r.standard_normal(shape) * 3).astype(dtype)


# (name, expression over xp and arrays, input shapes): odd lengths, unaligned slices, broadcasts
CASES = [
    ("row_offset_odd", lambda xp, x, b: x - b[:, None], [(37, 777), (37,)]),
    ("slice_diff", lambda xp, x, b: x[:, 1:] - x[:, :-1] + b[:, None], [(13, 1001), (13,)]),
    ("strided_cols", lambda xp, x, b: x[:, ::3] * b[:1, None], [(9, 100), (9,)]),
    ("rows_of_3", lambda xp, x, b: x * b[None, :3], [(1001, 3), (5,)]),
    ("transposed_plus", lambda xp, x, b: x.T[1:, :] + b[None, :], [(31, 17), (31,)]),
    ("odd_1d", lambda xp, x, b: x[1:] * 2 - b[3], [(10007,), (5,)]),
    ("one_point", lambda xp, x, b: x + b, [(1,), (1,)]),
    ("empty", lambda xp, x, b: x[:, :0] + b[:, None], [(5, 7), (5,)]),
]
DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int32, np.uint16, np.int64, np.complex64, np.bool_]


def check(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind in "fc":
        tol = 2e-3 if want.dtype == np.float16 else 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_against_numpy(device, dtype, case):
    name, f, shapes = case
    xs = [data(s, dtype, i) for i, s in enumerate(shapes)]
    try:
        with np.errstate(all="ignore"):
            want = np.asarray(f(np, *xs))
    except TypeError:  # bool subtraction: NumPy refuses it, and so must Loom
        with pytest.raises(TypeError):
            host(f(loom, *[on(device, a) for a in xs]))
        return
    got = host(f(loom, *[on(device, a) for a in xs]))
    check(np.asarray(got), want)


def test_nan_inf_and_integer_wrap():
    for device in DEVICES:
        x = np.array([[np.nan, 1.0, np.inf, -np.inf, 2.0, 3.0, -0.0]] * 5, np.float32)
        b = np.arange(5, dtype=np.float32)
        with np.errstate(all="ignore"):
            want = x[:, 1:] * b[:, None] - x[:, :-1]
        dx, db = on(device, x), on(device, b)
        check(host(dx[:, 1:] * db[:, None] - dx[:, :-1]), want)
        i = np.full((3, 7), 2**31 - 3, np.int32)
        check(host(on(device, i)[:, 1:] + on(device, i)[:, :-1]), i[:, 1:] + i[:, :-1])


@pytest.mark.parametrize("device", DEVICES)
def test_gather_scatter_in_place(device):
    """Loads the points-ahead entry does not read first: a gather's index-dependent read, a scatter's store,
    and an in-place update (the output is a loaded buffer at the same point)."""
    r = np.random.default_rng(11)
    table = r.standard_normal((1001, 7)).astype(np.float32)
    idx = r.integers(-1001, 1001, size=(333,))
    w = r.standard_normal((333, 7)).astype(np.float32)
    check(host(on(device, table)[on(device, idx)] * on(device, w) + 1), table[idx] * w + 1)
    x = r.standard_normal((77, 13)).astype(np.float64)
    dx = on(device, x)
    dx[:, 1:] += dx[:, 1:] * 2  # in place on an unaligned view
    want = x.copy()
    want[:, 1:] += want[:, 1:] * 2
    check(host(dx), want)
    y = np.zeros(1001, np.float32)
    dy = on(device, y)
    perm = r.permutation(1001)[:500]
    dy[on(device, perm)] = on(device, np.arange(500, dtype=np.float32)) * 3
    y[perm] = np.arange(500, dtype=np.float32) * 3
    check(host(dy), y)


_CHILD = r"""
import numpy as np, loom
dev = loom.cuda.is_available()
r = np.random.default_rng(5)
x = r.standard_normal((41, 1003)).astype(np.float32)
b = r.standard_normal(41).astype(np.float32)
def run(a, c):
    return (a[:, 1:] - a[:, :-1] * c[:, None]) / (c[:, None] + 10)
if dev:
    with loom.cuda.Device(0):
        out = loom.asnumpy(run(loom.asarray(x), loom.asarray(b)))
else:
    out = loom.asnumpy(run(loom.asarray(x), loom.asarray(b)))
np.save(__import__("sys").argv[1], out)
"""


@pytest.mark.parametrize("points", ["1", "2", "4"])
def test_knob_values(points, tmp_path):
    env = dict(os.environ, LOOM_GPU_ELEM_POINTS=points, LOOM_CACHE_DIR=str(tmp_path / "cache"))
    out = tmp_path / "out.npy"
    subprocess.run([sys.executable, "-c", _CHILD, str(out)], env=env, check=True, timeout=300)
    r = np.random.default_rng(5)
    x = r.standard_normal((41, 1003)).astype(np.float32)
    b = r.standard_normal(41).astype(np.float32)
    want = (x[:, 1:] - x[:, :-1] * b[:, None]) / (b[:, None] + 10)
    np.testing.assert_allclose(np.load(out), want, rtol=1e-5, atol=1e-6)


def entry(ptx, name):
    """The body of the PTX entry whose name ends in `name` (e.g. '_elem')."""
    m = re.search(r"\.entry (\w+%s)\((.*?)\n}\n" % name, ptx, re.S)
    assert m, "no %s entry in the PTX" % name
    return m.group(2)


def elem_ptx(expr):
    return loom.inspect(expr, what=("kernels", "ptx"), ptx_arch="sm_90")["ptx"]


def test_ptx_loads_ahead():
    x = loom.asarray(np.ones((37, 777), np.float32))
    b = loom.asarray(np.ones(37, np.float32))
    body = entry(elem_ptx(x[:, 1:] * 2 - b[:, None]), "_elem")
    first_store = body.index("st.global")
    loads = re.findall(r"ld\.global[^\n]*", body[:first_store])
    # two loaded buffers at four points a thread: eight loads in flight before the first point is stored
    assert len(loads) >= 8, loads
    # complex division keeps one point a thread (its body's registers)
    z = loom.asarray(np.ones((37, 777), np.complex128))
    zbody = entry(elem_ptx(z[:, 1:] / z[:, :-1]), "_elem")
    assert len(re.findall(r"ld\.global", zbody[:zbody.index("st.global")])) <= 4


@pytest.mark.skipif(shutil.which("ptxas") is None and not os.path.exists("/usr/local/cuda/bin/ptxas"),
                    reason="ptxas not installed")
def test_ptx_no_spills(tmp_path):
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    xs = {d: loom.asarray(np.ones((37, 777), d)) for d in (np.float32, np.float64, np.float16)}
    f, d, h = xs[np.float32], xs[np.float64], xs[np.float16]
    exprs = [f[:, 1:] - f[:, :-1],
             loom.exp(d[:, 1:-1]) * d[:, :-2] + loom.sin(d[:, 2:]),
             h[:, 1:-1] * h[:, :-2] + h[:, 2:]]
    for i, e in enumerate(exprs):
        src = tmp_path / ("k%d.ptx" % i)
        src.write_text(elem_ptx(e))
        r = subprocess.run([ptxas, "-arch=sm_90", "-v", str(src), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        spills = re.findall(r"(\d+) bytes spill stores", r.stderr)
        assert spills and all(s == "0" for s in spills), r.stderr
