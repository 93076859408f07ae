"""Streaming stores of the host column split's MAP phase (x / x.sum(0), standardized columns): colpart maps
its slab by whole rows of up to 4096 columns (LOOM_HOST_COL_MAP_BLOCK) and, where the launch is large
(lower_host_stream.c's threshold), stages each piece of a row in a scratch row and copies it out with
non-temporal stores (codegen/lower_host_outer_map.c body_row_streamed; LOOM_HOST_COL_MAP_NT=0 off).
Results against NumPy (float64 references) in process at a size that streams by default, and in child
processes with the threshold at 4 KiB (every launch streams) for odd widths (pieces shorter than a line,
rows wider than a block), float64, int32 inputs, 3-d, empty arrays and an in-place divide (not streamed),
the same bits as the mechanism off; the generated colpart has non-temporal stores only where on."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import loom

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)  # the default device of this run
pytestmark = pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")


def col_stochastic(xp, x, axis=0):
    return x / xp.sum(x, axis=axis, keepdims=True)


def standardize(xp, x, axis=0):
    return (x - xp.mean(x, axis=axis, keepdims=True)) / (xp.std(x, axis=axis, keepdims=True) + 1e-5)


@pytest.mark.parametrize("fn", [col_stochastic, standardize], ids=lambda f: f.__name__)
def test_large_streams_by_default(fn) -> None:
    a = np.random.default_rng(1).uniform(0.5, 2.0, size=(2100, 3001)).astype(np.float32)  # 2 x 25 MB: streams
    got = loom.asnumpy(fn(loom, loom.asarray(a)))
    np.testing.assert_allclose(got.astype(np.float64), fn(np, a.astype(np.float64)), rtol=3e-5, atol=3e-5)


# (shape, dtype, expression) run in the children; x is loom's array, a NumPy's
CASES = [((257, 1000), "float32", "x / x.sum(0)"), ((2000, 17), "float32", "x / x.sum(0)"),
         ((700, 4096), "float32", "x / x.sum(0)"), ((1100, 333), "float64", "(x - x.mean(0)) / x.std(0)"),
         ((2500, 77), "int32", "x / x.sum(0)"), ((300, 50, 31), "float32", "x / x.sum(0)"),
         ((30, 50, 31), "float64", "x / x.sum((0, 1))"), ((0, 33), "float32", "x / x.sum(0)"),
         ((33, 0), "float32", "x / x.sum(0)"), ((300, 200), "float32", "x - x.max(0)"),
         ((1500, 301), "float32", "x[:, ::2] / x[:, ::2].sum(0)"), ((700, 5001), "float32", "x / x.sum(0)"),
         ((300, 301), "float32", "loom.divide(x, x.sum(0), out=x)")]

CHILD = """
import sys, numpy as np, loom
cases = eval(sys.argv[2])
out, code = [], ""
for i, (shape, dtype, e) in enumerate(cases):
    rng = np.random.default_rng(i)
    a = (rng.integers(1, 100, size=shape) if dtype == "int32" else rng.uniform(0.5, 2.0, size=shape)).astype(dtype)
    x = loom.asarray(a)
    with loom.capture_dumps("llvm", echo=False) as d:
        r = eval(e)
        out.append(loom.asnumpy(x if r is None else r))
    if i == 0:
        code = d.text
np.savez(sys.argv[1], *out)
open(sys.argv[1] + ".ll", "w").write(code)
"""


def reference(i: int, shape: tuple, dtype: str, e: str) -> np.ndarray:
    rng = np.random.default_rng(i)
    a = (rng.integers(1, 100, size=shape) if dtype == "int32" else rng.uniform(0.5, 2.0, size=shape)).astype(dtype)
    x = a.astype(np.float64)
    r = eval(e.replace("loom.divide(x, x.sum(0), out=x)", "x / x.sum(0)"))
    return r


def run_child(tmp_path, name: str, **env: str) -> tuple:
    """the CASES' results and the first case's colpart in a child with env (own kernel cache)"""
    e = dict(os.environ, LOOM_CACHE_DIR=str(tmp_path / ("cache" + name)), LOOM_HOST_NT_STORES="4096", **env)
    path = str(tmp_path / (name + ".npz"))
    out = subprocess.run([sys.executable, "-c", CHILD, path, repr(CASES)], env=e, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    with open(path + ".ll") as f:
        m = re.search(r"^define [^@]*@\w+_colpart\(.*?^}", f.read(), re.M | re.S)
    assert m, "the column map did not take the column split"
    with np.load(path) as f:
        return m.group(0), [f["arr_%d" % i] for i in range(len(f.files))]


def test_streamed_against_numpy_and_off(tmp_path) -> None:
    code_on, on = run_child(tmp_path, "on")
    code_off, off = run_child(tmp_path, "off", LOOM_HOST_COL_MAP_NT="0")
    code_old, old = run_child(tmp_path, "old", LOOM_HOST_COL_MAP_NT="0", LOOM_HOST_COL_MAP_BLOCK="1024")
    assert "!nontemporal" in code_on and "llvm.x86.sse.sfence" in code_on
    assert "!nontemporal" not in code_off and "!nontemporal" not in code_old
    for i, (case, a, b, c) in enumerate(zip(CASES, on, off, old)):
        want = reference(i, *case)
        assert a.shape == want.shape, case
        tol = 1e-12 if a.dtype == np.float64 else 3e-6
        np.testing.assert_allclose(a.astype(np.float64), want, rtol=tol, atol=tol, err_msg=str(case))
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8), err_msg=str(case))
        np.testing.assert_array_equal(a.view(np.uint8), c.view(np.uint8), err_msg=str(case))
