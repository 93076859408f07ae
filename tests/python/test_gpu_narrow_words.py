"""Cached GPU rows that keep float16 values across a block reduction (codegen/gpu_cached.c narrow_kept;
LOOM_GPU_ROW_NARROW_WORDS=0: off): float16 softmax keeps its rounded exp(x - max) from the sum phase for the
map phase's division, as words of two points, and its vector cached-row entry is fitted to 64 registers.
- float16 softmax (and exp(x) / sum(exp(x))) of rows in block mode (2048 to 16384 points), in the short-row
  mode (8 to 1000 points) and rows of -inf, NaN and huge logits against NumPy in float16, and the same
  bits with the knob off (a subprocess); runs on the default device (the H200 in scripts/gpu_all.sh, the
  host in CI, where the knob changes nothing);
- no GPU needed: the PTX of the float16 softmax has the words (inline mov.b32) and .maxntid 1024 on its
  vector cached-row entry, neither with the knob off, and float32 softmax's PTX does not change.
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import loom

SHAPES = [(64, 4096), (33, 2048), (8, 16384), (300, 1000), (1024, 8), (257, 200)]


def logits(r, c, seed):
    x = (np.random.default_rng(seed).standard_normal((r, c)) * 3).astype(np.float16)
    x[0, :] = -np.inf
    x[0, 1] = 0.0                       # one finite logit: one 1.0
    x[1, c // 2] = np.nan               # a NaN row stays NaN
    x[2, :] = 60000.0                   # huge and equal: uniform
    x[3, 3] = 65504.0
    return x


def softmax(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def exp_over_sum(xp, x):
    e = xp.exp(x)
    return e / xp.sum(e, axis=-1, keepdims=True)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fn", [softmax, exp_over_sum])
def test_rows_f16_against_numpy(shape, fn):
    x = logits(shape[0], shape[1], seed=shape[1])
    if fn is exp_over_sum:
        x = np.nan_to_num(x, posinf=0, neginf=-20).clip(-20, 8).astype(np.float16)
    got = fn(loom, loom.asarray(x)).get()
    assert got.dtype == np.float16 and got.shape == x.shape
    with np.errstate(all="ignore"):
        ref = fn(np, x)                          # NumPy rounds each float16 op as Loom does
    # exp's last bit and the sum's order (float32 here) move a result by an ulp of float16 or so
    np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), rtol=1e-2, atol=1e-5)


SCRIPT = r"""
import sys, numpy as np, loom
out = []
for r, c in {shapes}:
    x = (np.random.default_rng(c).standard_normal((r, c)) * 3).astype(np.float16)
    x[1, 5] = np.nan
    e = loom.exp(loom.asarray(x) - loom.max(loom.asarray(x), axis=-1, keepdims=True))
    out.append((e / loom.sum(e, axis=-1, keepdims=True)).get().view(np.uint16))
np.save(sys.argv[1], np.concatenate([o.ravel() for o in out]))
"""


def test_same_bits_with_knob_off(tmp_path):
    paths = []
    for knob in ("1", "0"):
        p = tmp_path / f"bits{knob}.npy"
        env = dict(os.environ, LOOM_GPU_ROW_NARROW_WORDS=knob, LOOM_CACHE_DIR=str(tmp_path / f"cache{knob}"))
        subprocess.run([sys.executable, "-c", SCRIPT.format(shapes=SHAPES), str(p)], env=env, check=True)
        paths.append(p)
    assert np.array_equal(np.load(paths[0]), np.load(paths[1]))


PTX_SCRIPT = r"""
import sys, numpy as np, loom
x = loom.asarray(np.ones((64, 4096), np.{dtype}))
e = loom.exp(x - loom.max(x, axis=-1, keepdims=True))
sys.stdout.write(loom.inspect(e / loom.sum(e, axis=-1, keepdims=True), what=('ptx',))['ptx'])
"""


def ptx_of(dtype, knob, tmp_path):
    env = dict(os.environ, LOOM_GPU_ROW_NARROW_WORDS=knob, LOOM_CACHE_DIR=str(tmp_path / f"c{dtype}{knob}"))
    r = subprocess.run([sys.executable, "-c", PTX_SCRIPT.format(dtype=dtype)], env=env, capture_output=True,
                       text=True, check=True)
    if r.stdout.startswith("unavailable"):
        pytest.skip(r.stdout.strip())
    return r.stdout


def rowcv_entry(ptx):
    m = re.search(r"\.entry (\w+_rowcv)\(", ptx)
    assert m, "no vector cached-row entry"
    end = ptx.find(".entry", m.end())
    return ptx[m.start():end if end > 0 else len(ptx)]


def test_ptx_words_and_fit(tmp_path):
    on, off = rowcv_entry(ptx_of("float16", "1", tmp_path)), rowcv_entry(ptx_of("float16", "0", tmp_path))
    assert ".maxntid 1024" in on and ".maxntid" not in off
    words = len(re.findall(r"mov\.b32 %r\d+, %r\d+;", on))
    assert words >= 16, words                   # 32 points a thread: at least 16 words (block mode)
    assert not re.findall(r"mov\.b32 %r\d+, %r\d+;", off)


def test_ptx_float32_unchanged(tmp_path):
    assert ptx_of("float32", "1", tmp_path) == ptx_of("float32", "0", tmp_path)
