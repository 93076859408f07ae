# SPDX-License-Identifier: Apache-2.0
"""Host reductions whose reduced axis is outer in memory (column sums, BatchNorm statistics) fold with
register accumulators (codegen/lower_host_outer.c: the row jam of kernels with one reduced dim, register
strips otherwise); every column still folds its values in R order, so the bits are those of the block
loop that LOOM_HOST_OUTER_REGS=0 restores; colfinish folds the column split's parts across blocks of
columns (LOOM_HOST_COL_FINISH_VEC=0: per column). Checked here: the same bits under these settings (in
subprocesses: the knobs are read once per process), values against NumPy in float64 for edge shapes
(one row, one column, columns and rows that are not multiples of a strip or a jam, empty axes),
transposed and strided inputs, NaN, int32 wrap-around, float64, products, arg-reductions with ties
across rows and slabs, multi-phase statistics and prologue expressions, with one thread and two."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

# One script, three settings: every case's result bytes into an .npz file.
_CASES = r"""
import sys
import numpy as np
import loom

rng = np.random.default_rng(7)
out = {}
def put(name, v):
    for i, a in enumerate(v if isinstance(v, tuple) else (v,)):
        out[f"{name}.{i}"] = loom.asnumpy(a)
for shape in [(1, 100), (100, 1), (333, 77), (1000, 130), (4096, 257), (70, 3, 100)]:
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(shape).astype(np.float32)
    lx, ly = loom.asarray(x), loom.asarray(y)
    k = "x".join(map(str, shape))
    put("sum" + k, loom.sum(lx, axis=0))
    put("mean" + k, loom.mean(lx, axis=0))
    put("sumsq" + k, loom.sum((lx * ly) ** 2, axis=0))
    put("bn" + k, (loom.mean(lx, axis=0), loom.var(lx, axis=0)))
    put("max" + k, loom.max(lx, axis=0))
    put("argmin" + k, loom.argmin(loom.round(lx), axis=0))
    put("prod" + k, loom.prod(1 + lx * 0.01, axis=0))
    put("f64" + k, loom.sum(loom.asarray(x.astype(np.float64)), axis=0))
    put("f16" + k, loom.sum(loom.asarray(x.astype(np.float16)), axis=0))
    put("i32" + k, loom.sum(loom.asarray((x * 1e9).astype(np.int32)), axis=0, dtype=np.int32))
    put("t" + k, loom.sum(loom.asarray(np.ascontiguousarray(x.T)).T, axis=0))
x3 = rng.standard_normal((40, 30, 200)).astype(np.float32)
l3 = loom.asarray(x3)
put("mid", loom.mean(l3, axis=1))
put("r2sum", loom.sum(l3[:, ::2, :], axis=(0, 1)))
put("r2var", loom.var(l3[::2], axis=(0, 1)))
put("r2max", loom.max(l3.transpose(1, 0, 2)[::2], axis=(0, 1)))
np.savez(sys.argv[1], **out)
"""


@pytest.mark.parametrize("threads", ["1", "2"])
def test_same_bits_as_the_block_loop(tmp_path, threads):
    script = tmp_path / "cases.py"
    script.write_text(_CASES)
    got = {}
    settings = [("jam", {}), ("strips", {"LOOM_HOST_OUTER_JAM": "0"}), ("per_o_finish", {"LOOM_HOST_COL_FINISH_VEC": "0"}),
                ("block", {"LOOM_HOST_OUTER_REGS": "0"})]
    for name, env in settings:
        e = dict(os.environ, LOOM_CACHE_DIR="", LOOM_NUM_THREADS=threads, **env)
        path = tmp_path / f"{name}.npz"
        subprocess.run([sys.executable, str(script), str(path)], check=True, env=e)
        got[name] = dict(np.load(path))
    ref = got["block"]
    for name in ("jam", "strips", "per_o_finish"):
        assert got[name].keys() == ref.keys()
        for k, v in ref.items():
            assert got[name][k].dtype == v.dtype and got[name][k].tobytes() == v.tobytes(), (name, k)


@pytest.fixture
def threads():
    old = loom.config.num_threads
    yield
    loom.config.num_threads = old


def _each_thread_count(fn):
    outs = []
    for n in (1, 2):
        loom.config.num_threads = n
        outs.append(fn())
    assert outs[0].tobytes() == outs[1].tobytes()
    return outs[0]


SHAPES = [(1, 1), (1, 100), (100, 1), (7, 5), (333, 77), (1000, 130), (4096, 1024), (8191, 33)]


@pytest.mark.parametrize("shape", SHAPES)
def test_sums_and_statistics_against_float64(threads, shape):
    rng = np.random.default_rng(shape[0] * 31 + shape[1])
    x = (rng.standard_normal(shape) + 3).astype(np.float32)
    y = rng.standard_normal(shape).astype(np.float32)
    lx, ly = loom.asarray(x), loom.asarray(y)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    scale = np.abs(xd).sum(axis=0) + 1e-30
    s = _each_thread_count(lambda: loom.asnumpy(loom.sum(lx, axis=0)))
    assert np.all(np.abs(s - xd.sum(axis=0)) <= 4e-7 * scale)
    m = loom.asnumpy(loom.mean(lx, axis=0))
    np.testing.assert_allclose(m, xd.mean(axis=0), rtol=1e-6)
    q = _each_thread_count(lambda: loom.asnumpy(loom.sum((lx * ly) ** 2, axis=0)))
    np.testing.assert_allclose(q, ((xd * yd) ** 2).sum(axis=0), rtol=2e-6)
    v = _each_thread_count(lambda: loom.asnumpy(loom.var(lx, axis=0)))
    np.testing.assert_allclose(v, xd.var(axis=0), rtol=2e-5, atol=1e-6)
    np.testing.assert_array_equal(loom.asnumpy(loom.max(lx, axis=0)), x.max(axis=0))
    np.testing.assert_array_equal(loom.asnumpy(loom.min(lx, axis=0)), x.min(axis=0))
    p = loom.asnumpy(loom.prod(1 + lx * 0.001, axis=0))
    np.testing.assert_allclose(p, np.prod(1 + xd * np.float32(0.001), axis=0), rtol=2e-5)  # float32 products


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0)])
def test_empty_axes(shape):
    x = np.ones(shape, np.float32)
    lx = loom.asarray(x)
    np.testing.assert_array_equal(loom.asnumpy(loom.sum(lx, axis=0)), x.sum(axis=0))
    np.testing.assert_array_equal(loom.asnumpy(loom.prod(lx, axis=0)), x.prod(axis=0))
    if shape[0]:
        np.testing.assert_array_equal(loom.asnumpy(loom.max(lx, axis=0)), x.max(axis=0))


def test_float64_and_transposed_inputs(threads):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2000, 300)) * 1e3
    lx = loom.asarray(x)
    s = _each_thread_count(lambda: loom.asnumpy(loom.sum(lx, axis=0)))
    np.testing.assert_allclose(s, x.sum(axis=0), rtol=1e-12, atol=1e-9)
    t = np.ascontiguousarray(x.T)                       # x.T.sum(0): the reduced axis inner in memory
    np.testing.assert_allclose(loom.asnumpy(loom.sum(loom.asarray(t).T, axis=0)), x.sum(axis=0), rtol=1e-12, atol=1e-9)
    st = x[::3, ::2]                                    # strided along both axes
    np.testing.assert_allclose(loom.asnumpy(loom.var(lx[::3, ::2], axis=0)), st.var(axis=0), rtol=1e-11)
    x3 = rng.standard_normal((30, 40, 130)).astype(np.float32)
    l3 = loom.asarray(x3)
    np.testing.assert_allclose(loom.asnumpy(loom.mean(l3, axis=1)), x3.astype(np.float64).mean(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loom.asnumpy(loom.sum(l3[:, ::2], axis=(0, 1))), x3[:, ::2].astype(np.float64).sum(axis=(0, 1)),
                               rtol=1e-5, atol=1e-4)


def test_nan_propagates_per_column(threads):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1000, 150)).astype(np.float32)
    x[5, 3] = np.nan
    x[900, 149] = np.nan
    x[64, 70] = np.nan                                  # on a slab boundary of the column split
    lx = loom.asarray(x)
    for op in ("sum", "mean", "max", "min", "prod", "var"):
        got = loom.asnumpy(getattr(loom, op)(lx, axis=0))
        want = getattr(np, op)(x.astype(np.float64), axis=0)
        assert np.array_equal(np.isnan(got), np.isnan(want)), op
    np.testing.assert_array_equal(loom.asnumpy(loom.argmax(lx, axis=0)), np.argmax(x, axis=0))
    np.testing.assert_array_equal(loom.asnumpy(loom.argmin(lx, axis=0)), np.argmin(x, axis=0))


def test_int32_sum_wraps(threads):
    rng = np.random.default_rng(5)
    x = rng.integers(-2**31, 2**31 - 1, size=(3000, 200), dtype=np.int32)
    lx = loom.asarray(x)
    got = _each_thread_count(lambda: loom.asnumpy(loom.sum(lx, axis=0, dtype=np.int32)))
    np.testing.assert_array_equal(got, x.sum(axis=0, dtype=np.int32))
    np.testing.assert_array_equal(loom.asnumpy(loom.sum(lx, axis=0)), x.sum(axis=0, dtype=np.int64))
    np.testing.assert_array_equal(loom.asnumpy(loom.max(lx, axis=0)), x.max(axis=0))


@pytest.mark.parametrize("rows", [9, 64, 65, 5000])
def test_arg_reductions_first_index_of_ties_across_rows(threads, rows):
    rng = np.random.default_rng(rows)
    x = np.round(rng.standard_normal((rows, 133)) * 1.5).astype(np.float32)  # many ties
    x[rows - 1, 0] = x[:, 0].max()                      # a tie with the last row
    lx = loom.asarray(x)
    got = _each_thread_count(lambda: loom.asnumpy(loom.argmax(lx, axis=0)))
    np.testing.assert_array_equal(got, np.argmax(x, axis=0))
    np.testing.assert_array_equal(loom.asnumpy(loom.argmin(lx, axis=0)), np.argmin(x, axis=0))
    c = loom.asnumpy(loom.argmax(lx - lx.mean(axis=0), axis=0))  # two REDUCE phases
    np.testing.assert_array_equal(c, np.argmax(x - x.mean(axis=0, dtype=np.float32), axis=0))
