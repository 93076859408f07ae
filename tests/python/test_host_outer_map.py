"""MAP phases in the host outer strategy (codegen/lower_host_outer_map.c): a kernel that reduces along an
axis outer in memory and then writes every point (standardized columns, x / x.sum(0), a softmax over axis
0, x - x.mean(axis=1) of a 3-d array) walks blocks of columns, the per-column values computed once. The
results must equal NumPy's (float64 references, exact for integers and comparisons) across shapes around
the block width (1024 columns), one row or column, empty arrays, NaN columns, strided and broadcast
operands, several outputs and dtypes; the IR test: the strategy's per-column arrays appear in run() of such
a kernel and not with LOOM_HOST_OUTER_MAP=0, whose child process gives the same answers."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom
from conftest import ON_GPU

host = pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")


def _std_cols(xp, x):
    return (x - xp.mean(x, axis=0)) / (xp.std(x, axis=0) + 1e-5)


def _close(got, want, rtol):
    got = loom.asnumpy(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    scale = float(np.max(np.abs(want[np.isfinite(want)]), initial=0.0)) or 1.0
    assert float(np.nanmax(np.abs(got.astype(np.float64) - want), initial=0.0)) <= rtol * scale


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (7, 1), (37, 29), (3001, 17), (5, 1023), (5, 1024), (5, 1025),
                                   (9, 2049), (300, 700)])
def test_standardize_columns(shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    ref = _std_cols(np, x.astype(np.float64))
    _close(loom.fuse(lambda a: _std_cols(loom, a))(loom.asarray(x)), ref, 2e-5 if shape[0] > 1 else 1e-6)
    _close(_std_cols(loom, loom.asarray(x)), ref, 2e-5 if shape[0] > 1 else 1e-6)   # the lazy API


@pytest.mark.parametrize("shape", [(64, 100), (1000, 3), (2, 2500)])
def test_column_shares_and_softmax_axis0(shape):
    r = np.random.default_rng(2)
    x = r.uniform(0.5, 2.0, shape).astype(np.float32)
    _close(loom.asarray(x) / loom.sum(loom.asarray(x), axis=0), x / x.astype(np.float64).sum(0), 1e-6)
    x64 = r.standard_normal(shape)
    e = np.exp(x64 - x64.max(0))
    g = loom.asarray(x64)
    ge = loom.exp(g - loom.max(g, axis=0))
    _close(ge / loom.sum(ge, axis=0), e / e.sum(0), 1e-13)


def test_middle_and_leading_axes_of_3d():
    x = np.random.default_rng(3).standard_normal((4, 50, 33)).astype(np.float32)
    g = loom.asarray(x)
    _close(g - loom.mean(g, axis=1, keepdims=True), x - x.astype(np.float64).mean(1, keepdims=True), 1e-6)
    _close(g - loom.max(g, axis=(0, 1)), (x - x.max((0, 1))).astype(np.float64), 0.0)   # float32, exact
    _close(g / loom.sum(loom.abs(g), axis=0), x / np.abs(x.astype(np.float64)).sum(0), 1e-6)


def test_integers_comparisons_and_float16_exact():
    r = np.random.default_rng(4)
    xi = r.integers(-1000, 1000, (777, 40)).astype(np.int32)
    got = loom.asnumpy(loom.asarray(xi) - loom.min(loom.asarray(xi), axis=0))
    np.testing.assert_array_equal(got, xi - xi.min(0))
    xf = r.standard_normal((500, 129)).astype(np.float32)
    got = loom.asnumpy(loom.asarray(xf) == loom.max(loom.asarray(xf), axis=0))
    np.testing.assert_array_equal(got, xf == xf.max(0))
    xh = r.standard_normal((300, 65)).astype(np.float16)
    gh = loom.asarray(xh)
    got = loom.asnumpy(gh / loom.max(loom.abs(gh), axis=0))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, xh / np.abs(xh).max(0))


def test_nan_column_empty_and_strided_operands():
    r = np.random.default_rng(5)
    x = r.standard_normal((200, 50)).astype(np.float32)
    x[17, 3] = np.nan
    _close(_std_cols(loom, loom.asarray(x)), _std_cols(np, x.astype(np.float64)), 2e-5)
    with np.errstate(all="ignore"):
        for shape in ((0, 5), (5, 0)):
            e = np.zeros(shape, np.float32)
            got = loom.asnumpy(loom.asarray(e) / loom.sum(loom.asarray(e), axis=0))
            assert got.shape == shape
    big = r.standard_normal((400, 300)).astype(np.float32)
    g = loom.asarray(big)
    for view, ref in ((g[::2], big[::2]), (g[:, 1::2], big[:, 1::2]), (g[3:, 5:-5], big[3:, 5:-5]), (g.T, big.T)):
        _close(_std_cols(loom, view), _std_cols(np, ref.astype(np.float64)), 2e-5)
    b = r.standard_normal(300).astype(np.float32)
    s = g + loom.asarray(b)
    _close(s / loom.sum(loom.abs(s), axis=0), (big + b) / np.abs((big + b).astype(np.float64)).sum(0), 1e-6)


def test_two_outputs_map_and_reduction():
    x = np.random.default_rng(6).standard_normal((999, 77)).astype(np.float32)

    @loom.fuse
    def center(a):
        m = loom.mean(a, axis=0)
        return a - m, m
    c, m = center(loom.asarray(x))
    _close(c, x - x.astype(np.float64).mean(0), 1e-6)
    _close(m, x.astype(np.float64).mean(0), 1e-5)


CHILD = r'''
import sys
import numpy as np
import loom
x = np.random.default_rng(8).standard_normal((301, 257)).astype(np.float32)
g = loom.asarray(x)
out = (g - loom.mean(g, axis=0)) / (loom.std(g, axis=0) + 1e-5)
ir = loom.inspect(out, what="llvm")["llvm"]
got = loom.asnumpy(out)
ref = (x - x.astype(np.float64).mean(0)) / (x.astype(np.float64).std(0) + 1e-5)
assert np.max(np.abs(got - ref)) <= 2e-5 * np.max(np.abs(ref))
print("MAPCOLS" if "mapcols" in ir else "PEROPOINT")
'''


@host
@pytest.mark.parametrize("knob,want", [("1", "MAPCOLS"), ("0", "PEROPOINT")])
def test_strategy_in_ir_and_knob(tmp_path, knob, want):
    env = dict(os.environ, LOOM_HOST_OUTER_MAP=knob, LOOM_CACHE_DIR=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip().splitlines()[-1] == want
