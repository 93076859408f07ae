"""float64 cached GPU rows whose REDUCE phase keeps a float64 value for a later phase (softmax's exp(x - max))
get their vector cached-row entry fitted to 64 registers (.maxntid 1024: codegen/gpu_strategies.c
cg_gpu_rowc_fit); without a kept value (std, layer norm of float64 rows) or with LOOM_GPU_ROW_KEEP=0 they are
not (fitted, those lost on an H100). No GPU needed for the PTX checks (loom.inspect); the values run on the
default device against NumPy in float64.
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import loom

PTX_SCRIPT = r"""
import sys, numpy as np, loom
x = loom.asarray(np.ones((64, 4096), np.float64))
kind = sys.argv[1]
if kind == "softmax":
    e = loom.exp(x - loom.max(x, axis=-1, keepdims=True))
    r = e / loom.sum(e, axis=-1, keepdims=True)
elif kind == "layernorm":
    d = x - loom.mean(x, axis=-1, keepdims=True)
    r = d / loom.sqrt(loom.mean(d * d, axis=-1, keepdims=True) + 1e-5)
else:
    r = loom.std(x, axis=-1, keepdims=True)
sys.stdout.write(loom.inspect(r, what=('ptx',))['ptx'])
"""


def rowcv_entry(kind, tmp_path, **env_extra):
    env = dict(os.environ, LOOM_CACHE_DIR=str(tmp_path / f"c{kind}{len(env_extra)}"), **env_extra)
    r = subprocess.run([sys.executable, "-c", PTX_SCRIPT, kind], env=env, capture_output=True, text=True, check=True)
    if r.stdout.startswith("unavailable"):
        pytest.skip(r.stdout.strip())
    m = re.search(r"\.entry (\w+_rowcv)\(", r.stdout)
    assert m, f"{kind}: no vector cached-row entry"
    end = r.stdout.find(".entry", m.end())
    return r.stdout[m.start():end if end > 0 else len(r.stdout)]


def test_softmax_f64_entry_fitted(tmp_path):
    assert ".maxntid 1024" in rowcv_entry("softmax", tmp_path)


def test_not_fitted_without_a_kept_value(tmp_path):
    assert ".maxntid" not in rowcv_entry("softmax", tmp_path, LOOM_GPU_ROW_KEEP="0")
    assert ".maxntid" not in rowcv_entry("layernorm", tmp_path)
    assert ".maxntid" not in rowcv_entry("std", tmp_path)


@pytest.mark.parametrize("cols", [1, 7, 1000, 4096, 7777, 16000])
def test_softmax_f64_values(cols):
    rng = np.random.default_rng(cols)
    x = rng.standard_normal((5, cols)) * 30
    x[1, 0] = -np.inf
    x[2, cols // 2] = np.nan
    x[3, :] = -np.inf
    lx = loom.asarray(x)
    e = loom.exp(lx - loom.max(lx, axis=-1, keepdims=True))
    got = loom.asnumpy(e / loom.sum(e, axis=-1, keepdims=True))
    with np.errstate(all="ignore"):
        ne = np.exp(x - x.max(axis=-1, keepdims=True))
        want = ne / ne.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300, equal_nan=True)
