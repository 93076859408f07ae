"""Host float16 walks (codegen/lower_host.c cg_host_inner_interleave): their vector width is forced by a loop
hint, and LLVM then vectorizes no epilogue, so each row segment's last points up to lanes x interleave - 1
run scalar; the forced loops interleave 2 vector bodies (LLVM's choice was 4: 40 of every 1000 points of a
float16 softmax row ran scalar). Checked: the vector loops of a float16 row reduction step at most two
vectors of half; the float16 softmax against NumPy's float16 computation at lengths around the vector
widths (remainders of every size), on the default device: the same bits on the host, within one float16
ulp on a GPU.
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import loom

IR_SCRIPT = r"""
import numpy as np, loom
x = loom.asarray(np.ones((64, 1000), np.float16))
loom.eval(loom.sum(loom.exp(x), axis=-1))
"""


def test_forced_width_loops_step_two_vectors(tmp_path):
    env = dict(os.environ, LOOM_DUMP="llvm", LOOM_CACHE_DIR=str(tmp_path / "cache"), LOOM_DEVICE="host")
    r = subprocess.run([sys.executable, "-c", IR_SCRIPT], env=env, capture_output=True, text=True, check=True)
    steps = [int(n) for n in re.findall(r"%index\.next\d* = add nuw i64 %index\d*, (\d+)", r.stderr)]
    lanes = [int(n) for n in re.findall(r"<(\d+) x half>", r.stderr)]
    if not steps or not lanes:
        pytest.skip("no vectorized float16 loop on this host (no F16C conversions)")
    assert max(steps) <= 2 * max(lanes), (steps, max(lanes))


@pytest.mark.parametrize("cols", [1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 127, 129, 1000, 1001])
def test_softmax_f16_against_numpy(cols):
    rng = np.random.default_rng(cols)
    x = (rng.standard_normal((9, cols)) * 4).astype(np.float16)
    x[1, 0] = -np.inf
    x[2, cols // 2] = np.nan
    lx = loom.asarray(x)
    e = loom.exp(lx - loom.max(lx, axis=-1, keepdims=True))
    got = loom.asnumpy(e / loom.sum(e, axis=-1, keepdims=True))
    with np.errstate(all="ignore"):
        ne = np.exp(x - x.max(-1, keepdims=True))
        want = ne / ne.sum(-1, keepdims=True)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    ulps = np.abs(got[ok].view(np.int16).astype(np.int64) - want[ok].view(np.int16).astype(np.int64))
    assert ulps.max(initial=0) <= (1 if lx._on_gpu else 0), ulps.max()
