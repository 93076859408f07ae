# SPDX-License-Identifier: Apache-2.0
"""Two host-runtime mechanisms of session 21 (runtime/host_launch.c, runtime/pool.c):

- the column split cuts R into slabs of 131072 points (at least 64 rows; up to 16 slabs of at least 65536
  points where that gives fewer than 16), LOOM_HOST_COL_SLAB_POINTS=65536 restores the slabs of 65536
  points. The slab boundaries decide where the parts are combined, so the bits may differ between the
  settings; checked here: values against a float64 reference under both settings (subprocesses: the knob
  is read once), for shapes around the slab sizes, odd sizes, one row, one column, empty axes, 3-d and
  strided inputs, with one thread and two; and that the float32 column sums of 1e7 values are as
  accurate as NumPy's pairwise sums and as before.
- the pool's workers run under SCHED_BATCH (LOOM_POOL_BATCH=0: the inherited policy), so that waking one
  never preempts the caller; the caller's policy is left alone.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

_CASES = r"""
import json, sys
import numpy as np
import loom

rng = np.random.default_rng(11)
worst = {}
def check(name, got, ref, tol, scale=None):
    # error relative to the condition of the sum (the sum of magnitudes, or |ref| where larger)
    got = np.asarray(loom.asnumpy(got), dtype=np.float64)
    assert got.shape == ref.shape, (name, got.shape, ref.shape)
    scale = np.maximum(np.maximum(np.abs(ref), 0.0 if scale is None else scale), 1e-30)
    err = float(np.max(np.abs(got - ref) / scale)) if ref.size else 0.0
    assert err <= tol, (name, err)
    worst[name] = err
shapes = [(1, 7), (7, 1), (63, 1024), (64, 1024), (65, 1024), (129, 1024), (511, 1024), (512, 1024),
          (1025, 1024), (4096, 1024), (4099, 1021), (3, 5), (200, 700), (65536, 64), (70001, 3),
          (2048, 4096), (0, 16), (16, 0)]
for shape in shapes:
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    lx = loom.asarray(x)
    x64 = x.astype(np.float64)
    k = "x".join(map(str, shape))
    mag = np.abs(x64).sum(axis=0)
    check("sum" + k, loom.sum(lx, axis=0), x64.sum(axis=0), 1e-6, mag)
    if shape[0]:
        check("mean" + k, loom.mean(lx, axis=0), x64.mean(axis=0), 1e-6, mag / shape[0])
        check("var" + k, loom.var(lx, axis=0), x64.var(axis=0), 1e-5, (x64 * x64).mean(axis=0))
        check("max" + k, loom.max(lx, axis=0), x64.max(axis=0), 0)
        assert np.array_equal(loom.asnumpy(loom.argmax(lx, axis=0)), x.argmax(axis=0)), k
    check("sumsq" + k, loom.sum((lx * 2) ** 2, axis=0), ((x64 * 2) ** 2).sum(axis=0), 1e-6)
x3 = rng.uniform(-1, 1, (300, 40, 50)).astype(np.float32)
l3 = loom.asarray(x3)
a3 = np.abs(x3.astype(np.float64))
check("mid", loom.mean(l3, axis=1), x3.astype(np.float64).mean(axis=1), 1e-6, a3.mean(axis=1))
check("first", loom.sum(l3, axis=0), x3.astype(np.float64).sum(axis=0), 1e-6, a3.sum(axis=0))
check("strided", loom.sum(l3[::3, :, ::2], axis=0), x3[::3, :, ::2].astype(np.float64).sum(axis=0), 1e-6,
      a3[::3, :, ::2].sum(axis=0))
check("transposed", loom.sum(loom.asarray(np.ascontiguousarray(x3[:, :, 0].T)).T, axis=0),
      x3[:, :, 0].astype(np.float64).sum(axis=0), 1e-6, a3[:, :, 0].sum(axis=0))
i = (rng.integers(-1000, 1000, (5000, 33))).astype(np.int32)
assert np.array_equal(loom.asnumpy(loom.sum(loom.asarray(i), axis=0)), i.sum(axis=0))
# 1e7 float32 values in columns, against float64: relative errors of Loom and of NumPy
big = rng.uniform(0, 1, (1_250_000, 8)).astype(np.float32)
ref = big.astype(np.float64).sum(axis=0)
worst["big_loom"] = float(np.max(np.abs(loom.asnumpy(loom.sum(loom.asarray(big), axis=0)) - ref) / ref))
worst["big_numpy"] = float(np.max(np.abs(big.sum(axis=0).astype(np.float64) - ref) / ref))
wide = rng.uniform(0, 1, (9766, 1024)).astype(np.float32)
ref = wide.astype(np.float64).sum(axis=0)
worst["wide_loom"] = float(np.max(np.abs(loom.asnumpy(loom.sum(loom.asarray(wide), axis=0)) - ref) / ref))
worst["wide_numpy"] = float(np.max(np.abs(wide.sum(axis=0).astype(np.float64) - ref) / ref))
print(json.dumps(worst))
"""


def _run(tmp_path, env_extra):
    script = tmp_path / "cases.py"
    script.write_text(_CASES)
    env = dict(os.environ, **env_extra)
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("threads", ["1", "2"])
def test_column_slabs_against_float64(tmp_path, threads):
    new = _run(tmp_path, {"LOOM_NUM_THREADS": threads})
    old = _run(tmp_path, {"LOOM_NUM_THREADS": threads, "LOOM_HOST_COL_SLAB_POINTS": "65536"})
    eps = float(np.finfo(np.float32).eps)
    for key in ("big", "wide"):
        # as accurate as NumPy's pairwise sums (within a few ulps) and not worse than the slabs before
        assert new[key + "_loom"] <= max(2 * new[key + "_numpy"], 8 * eps), (key, new)
        assert new[key + "_loom"] <= max(2 * old[key + "_loom"], 4 * eps), (key, new, old)


def test_slab_knob_is_read_once_and_bounded(tmp_path):
    # a value below the floor is raised to it: the same results as 65536
    a = _run(tmp_path, {"LOOM_NUM_THREADS": "2", "LOOM_HOST_COL_SLAB_POINTS": "10"})
    b = _run(tmp_path, {"LOOM_NUM_THREADS": "2", "LOOM_HOST_COL_SLAB_POINTS": "65536"})
    assert a == b


_POLICY = r"""
import os, sys
import numpy as np
import loom
x = loom.asarray(np.ones(1 << 22, np.float32))
for _ in range(50):
    float(loom.sum(x))
me = os.sched_getscheduler(0)
policies = sorted(os.sched_getscheduler(int(t)) for t in os.listdir("/proc/self/task") if int(t) != os.getpid())
print(me, os.SCHED_BATCH in policies)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SCHED_BATCH is Linux's")
@pytest.mark.parametrize("knob, batch", [(None, True), ("0", False)])
def test_pool_workers_run_as_batch(tmp_path, knob, batch):
    script = tmp_path / "policy.py"
    script.write_text(_POLICY)
    env = dict(os.environ, LOOM_NUM_THREADS="2")
    env.pop("LOOM_POOL_BATCH", None)
    if knob is not None:
        env["LOOM_POOL_BATCH"] = knob
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    me, seen = r.stdout.split()
    assert int(me) == os.SCHED_OTHER  # the caller keeps its policy
    assert (seen == "True") == batch


def test_in_process_column_sums_match_numpy():
    rng = np.random.default_rng(3)
    for shape in [(4096, 1024), (1000, 1000), (5, 70000)]:
        x = rng.standard_normal(shape).astype(np.float32)
        got = loom.asnumpy(loom.sum(loom.asarray(x), axis=0))
        np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-4)
