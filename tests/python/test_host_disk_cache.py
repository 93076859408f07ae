"""Host kernels in the kernel disk cache (runtime/host_disk.c): a second process finds every kernel the
first compiled, and both agree with NumPy.

One script runs a broad sample of what the lazy API compiles (math of every float dtype, integer and bool
ops, row / column / full reductions, arg-reductions, var, scans, where, casts, float16, complex, random
numbers) and compares each result with NumPy; it runs twice in fresh processes on one cache folder with
LOOM_HOST_DISK_CACHE=1. The first compiles (as images) and stores; the second compiles nothing and must
give bitwise the same results as the first.
"""
import json
import os
import subprocess
import sys

import pytest

SCRIPT = r'''
import json, sys
import numpy as np
import loom

rng = np.random.default_rng(7)
x = rng.standard_normal((37, 129)).astype(np.float32)
y = rng.uniform(0.5, 2.0, (37, 129)).astype(np.float64)
h = rng.uniform(-4, 4, 1000).astype(np.float16)
i = rng.integers(-1000, 1000, 777).astype(np.int32)
u = rng.integers(0, 200, 777).astype(np.uint8)
c = (rng.standard_normal(300) + 1j * rng.standard_normal(300)).astype(np.complex64)

def cases(xp):
    X, Y, H, I, U, C = (xp.asarray(v) for v in (x, y, h, i, u, c))
    return {
        "elem_f32": xp.exp(X) * xp.sin(X) + xp.tanh(X) - xp.sqrt(xp.abs(X)),
        "elem_f64": xp.log(Y) / (Y + 1.5) + xp.arctan2(Y, Y + 1),
        "elem_f16": H * H + xp.cos(H),
        "ints": (I * 7 + 3) ^ (I >> 2) | (I % 5),
        "uint8": U // 3 + (U > 100),
        "where": xp.where(X > 0, X, -2 * X),
        "cast": (X * 100).astype(np.int16),
        "sum_rows": X.sum(axis=1),
        "sum_cols": Y.sum(axis=0),
        "max_all": X.max(),
        "mean_f16": H.mean(),
        "argmax_rows": X.argmax(axis=1),
        "var_cols": Y.var(axis=0),
        "cumsum": xp.cumsum(I),
        "complex": C * xp.conj(C) + xp.exp(C),
    }

want = cases(np)
got = cases(loom)
out = {"ok": {}, "bits": {}}
for k in want:
    g = loom.asnumpy(got[k])
    w = np.asarray(want[k])
    ok = g.shape == w.shape and g.dtype == w.dtype
    if ok:
        tol = {np.float16: 2e-3, np.float32: 2e-5, np.complex64: 2e-5}.get(w.dtype.type, 1e-12)
        ok = bool(np.allclose(g, w, rtol=tol, atol=tol, equal_nan=True)) if w.dtype.kind in "fc" else bool((g == w).all())
    out["ok"][k] = ok
    out["bits"][k] = g.tobytes().hex()
gen = loom.random.default_rng(3) if hasattr(loom.random, "default_rng") else None
if gen is not None:
    out["bits"]["random"] = loom.asnumpy(gen.random(1000, dtype=np.float32)).tobytes().hex()
out["stats"] = loom.stats()
print(json.dumps(out))
'''


def _run(tmp_path, cache):
    env = dict(os.environ, LOOM_HOST_DISK_CACHE="1", LOOM_CACHE_DIR=str(cache), LOOM_STRICT_CONVERSION="1")
    env.pop("LOOM_DEVICE", None)
    p = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_second_process_compiles_nothing(tmp_path):
    cache = tmp_path / "cache"
    first = _run(tmp_path, cache)
    assert all(first["ok"].values()), {k: v for k, v in first["ok"].items() if not v}
    assert first["stats"]["kernels_compiled"] > 0
    entries = [p for p in cache.rglob("*") if p.is_file()]
    assert len(entries) >= 1
    second = _run(tmp_path, cache)
    assert all(second["ok"].values()), {k: v for k, v in second["ok"].items() if not v}
    assert second["stats"]["kernels_compiled"] == 0, second["stats"]
    assert second["stats"]["cache_hits"] >= first["stats"]["kernels_compiled"]
    assert second["bits"] == first["bits"]


def test_off_by_environment(tmp_path):
    cache = tmp_path / "cache"
    env = dict(os.environ, LOOM_HOST_DISK_CACHE="0", LOOM_CACHE_DIR=str(cache), LOOM_DEVICE="host")  # host kernels only
    code = "import loom, numpy as np; print(float((loom.asarray(np.arange(5.0)) * 3).sum()))"
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "30.0", p.stderr
    assert not [q for q in cache.rglob("*") if q.is_file()] if cache.exists() else True
