# SPDX-License-Identifier: Apache-2.0
"""Host max / min (and sums, arg-reductions) over a leading or middle axis: the outer-axis strategy
(codegen/lower_host_outer.c) walks whole rows one R point after another where the block is a whole row of
256 B to LOOM_HOST_OUTER_STREAM bytes whose next R point's row follows it in memory (a forward stream),
and keeps the row jam / register strips otherwise (lower_host_outer_regs.c). Checked here against NumPy:
every integer and float dtype, NaN propagation (NumPy's max / min return NaN for a column holding one),
rows on both sides of the stream's bounds, row-major 3-d middle axes (run() over O ranges) and matrices
(the column split's slabs), axis tuples, keepdims, transposed and strided inputs, empty axes and 0-d
arrays, with one thread and two; and the same bits with the stream on and off (in subprocesses: the knob
is read once per process)."""
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest

import loom

INTS: list[type] = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS: list[type] = [np.float32, np.float64]


def _data(rng, shape, dt):
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    return (rng.standard_normal(shape) * 100).astype(dt)


@pytest.fixture
def threads():
    old = loom.config.num_threads
    yield
    loom.config.num_threads = old


def _both_thread_counts(fn):
    outs = []
    for n in (1, 2):
        loom.config.num_threads = n
        outs.append(loom.asnumpy(fn()))
    assert outs[0].dtype == outs[1].dtype and outs[0].tobytes() == outs[1].tobytes()
    return outs[0]


def _check(x, op, axis, keepdims=False, lx=None):
    lx = loom.asarray(x) if lx is None else lx
    got = _both_thread_counts(lambda: getattr(loom, op)(lx, axis=axis, keepdims=keepdims))
    want = getattr(np, op)(x, axis=axis, keepdims=keepdims)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


# rows of 64 B (jam), 1 KiB-ish (stream), 4 KiB (stream, the bound for 4-byte dtypes), 7 KiB (jam)
@pytest.mark.parametrize("dt", INTS + FLOATS)
@pytest.mark.parametrize("shape,axis", [((300, 16), 0), ((600, 257), 0), ((333, 1024), 0), ((129, 1777), 0),
                                        ((6, 301, 257), 1), ((24, 99, 130), 1), ((5, 40, 300), (0, 1))])
@pytest.mark.parametrize("op", ["max", "min"])
def test_against_numpy(threads, dt, shape, axis, op):
    rng = np.random.default_rng(zlib.crc32(repr((np.dtype(dt).name, shape, op)).encode()))
    _check(_data(rng, shape, dt), op, axis)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", ["max", "min"])
def test_nan_propagates(threads, dt, op):
    rng = np.random.default_rng(3)
    for shape, axis in [((600, 257), 0), ((6, 301, 257), 1), ((40, 16), 0), ((129, 1777), 0)]:
        x = _data(rng, shape, dt)
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, size=max(1, flat.size // 5000), replace=False)] = np.nan
        x[(0,) * x.ndim] = np.nan  # the first element of a column: NaN must survive every later value
        idx: list[slice | int] = [slice(None)] * x.ndim
        idx[axis] = -1
        x[tuple(idx)][..., 3] = np.nan  # and the last R point of a column
        _check(x, op, axis)
        inf = np.full(shape, -np.inf if op == "max" else np.inf, dt)
        inf[(0,) * x.ndim] = np.nan
        _check(inf, op, axis)


@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
def test_transposed_strided_keepdims(threads, op):
    rng = np.random.default_rng(11)
    x = _data(rng, (257, 600), np.float32)
    _check(np.ascontiguousarray(x.T).T, op, 1, lx=loom.asarray(np.ascontiguousarray(x.T)).T)  # rows are columns
    x3 = _data(rng, (30, 200, 300), np.int32)
    l3 = loom.asarray(x3)
    _check(x3[:, ::2, :], op, 1, lx=l3[:, ::2, :])          # R stride twice the row: no stream
    _check(x3[:, :, 10:290], op, 1, lx=l3[:, :, 10:290])    # a piece of every row
    _check(x3.transpose(1, 0, 2), op, 0, lx=l3.transpose(1, 0, 2))
    if op in ("max", "min"):
        _check(x3, op, 1, keepdims=True, lx=l3)
        _check(x3, op, (0, 1), keepdims=True, lx=l3)


@pytest.mark.parametrize("op", ["max", "min"])
def test_empty_and_zero_d(op):
    for shape, axis in [((5, 0), 0), ((0, 5, 0), 1), ((3, 0, 300), 0)]:
        x = np.ones(shape, np.float32)
        _check(x, op, axis)
    for shape, axis in [((0, 5), 0), ((4, 0, 300), 1)]:
        with pytest.raises(ValueError):
            getattr(np, op)(np.ones(shape, np.float32), axis=axis)
        with pytest.raises(ValueError):
            loom.asnumpy(getattr(loom, op)(loom.asarray(np.ones(shape, np.float32)), axis=axis))
    z = np.array(-2.5, np.float32)
    got = loom.asnumpy(getattr(loom, op)(loom.asarray(z)))
    assert got.shape == () and got == z
    got = loom.asnumpy(getattr(loom, op)(loom.asarray(np.array(7, np.int64)), axis=None, keepdims=True))
    assert got.shape == () and got == 7


# Every case's result bytes into an .npz file, run with the stream on and off.
_CASES = r"""
import sys
import numpy as np
import loom

rng = np.random.default_rng(5)
out = {}
for shape, axis in [((600, 257), 0), ((6, 301, 257), 1), ((129, 1777), 0), ((300, 64), 0), ((5, 40, 300), (0, 1))]:
    x = (rng.standard_normal(shape) * 10 + 3).astype(np.float32)
    x.reshape(-1)[::997] = np.nan
    lx = loom.asarray(x)
    lc = loom.asarray(np.nan_to_num(x))
    k = "x".join(map(str, shape))
    for name, v in [("max", loom.max(lx, axis=axis)), ("min", loom.min(lx, axis=axis)),
                    ("sum", loom.sum(lc, axis=axis)), ("mean", loom.mean(lc, axis=axis)),
                    ("var", loom.var(lc, axis=axis)), ("prod", loom.prod(1 + lc * 0.001, axis=axis)),
                    ("i8max", loom.max(loom.asarray((x * 9).astype(np.int8)), axis=axis)),
                    ("u16min", loom.min(loom.asarray(np.nan_to_num(x * 99).astype(np.uint16)), axis=axis)),
                    ("i64sum", loom.sum(loom.asarray(np.nan_to_num(x * 1e6).astype(np.int64)), axis=axis)),
                    ("f64max", loom.max(loom.asarray(x.astype(np.float64)), axis=axis))]:
        out[name + k] = loom.asnumpy(v)
    if not isinstance(axis, tuple):
        out["argmax" + k] = loom.asnumpy(loom.argmax(loom.round(lc), axis=axis))
np.savez(sys.argv[1], **out)
"""


@pytest.mark.parametrize("threads_env", ["1", "2"])
def test_same_bits_with_the_stream_off(tmp_path, threads_env):
    script = tmp_path / "cases.py"
    script.write_text(_CASES)
    got = {}
    for name, env in [("stream", {}), ("off", {"LOOM_HOST_OUTER_STREAM": "0"}),
                      ("wide", {"LOOM_HOST_OUTER_STREAM": "8192"}), ("block", {"LOOM_HOST_OUTER_REGS": "0"})]:
        e = dict(os.environ, LOOM_CACHE_DIR="", LOOM_NUM_THREADS=threads_env, **env)
        path = tmp_path / f"{name}.npz"
        subprocess.run([sys.executable, str(script), str(path)], check=True, env=e)
        got[name] = dict(np.load(path))
    ref = got["off"]
    for name in ("stream", "wide", "block"):
        assert got[name].keys() == ref.keys()
        for k, v in ref.items():
            assert got[name][k].dtype == v.dtype and got[name][k].tobytes() == v.tobytes(), (name, k)
