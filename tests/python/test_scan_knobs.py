"""The look-back scan's shape knobs (codegen/lower_scan_lookback.c: LOOM_GPU_SCAN_LB_BLOCK / _ITEMS / _BACKOFF,
read once per process, so each setting runs in a child process with its own LOOM_CACHE_DIR).

Without a GPU: every setting's scan kernels (float32, int32 -> int64, float64, complex128, a fused 2x+1
producer) compile to PTX for sm_90 whose look-back tile has the shape asked for (the staged tile's shared
array, the .maxntid bound, the nanosleep) and, where ptxas is installed, assemble. With a CUDA device the
same child also checks the values against NumPy (integers exactly, floats against the float64 cumsum
within a bound scaled by the running magnitudes) around tile boundaries, and with LOOM_GPU_SCAN_LB_GRID.
Host results never depend on the knobs (checked against NumPy under a non-default setting).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import loom

PTXAS = shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
GPU = loom.cuda.is_available()


def items_of(block, asked, value_size):
    """codegen.h cg_scan_lb_items_of, written again here: half for complex128; the staged tile (a pad
    slot per 32) and the thread slots within 44 KB (ptxas: 48 KB of static shared memory an entry)."""
    k = asked // 2 if value_size > 8 else asked
    while k > 1 and value_size * (block * k + block * k // 32 + block) > 45056:
        k //= 2
    return max(k, 1)


CHILD = r"""
import json, os, re, subprocess, sys
import numpy as np
import loom
out = {"ptx": {}, "gpu": {}}
n = int(sys.argv[1])
cases = {  # name: (input dtype, fused)
    "f32": ("float32", False), "i32": ("int32", False), "f64": ("float64", False),
    "c128": ("complex128", False), "fused": ("float32", True)}
rng = np.random.default_rng(7)
for name, (dt, fused) in cases.items():
    if dt == "int32":
        h = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int32)
    elif dt == "complex128":
        h = (rng.random(n) - 0.5 + 1j * (rng.random(n) - 0.5)).astype(dt)
    else:
        h = (rng.random(n) * 4 - 1).astype(dt)
    x = loom.asarray(h)
    y = loom.cumsum(x * 2 + 1) if fused else loom.cumsum(x, dtype=np.int64 if dt == "int32" else None)
    out["ptx"][name] = loom.inspect(y, what="ptx", ptx_arch="sm_90")["ptx"]
    if loom.cuda.is_available():
        v = h * 2 + 1 if fused else h
        got = y.get()
        if dt == "int32":
            ok = bool(np.array_equal(got, np.cumsum(v, dtype=np.int64)))
            err = 0.0
        else:
            ref = np.cumsum(v.astype(np.complex128 if dt == "complex128" else np.float64))
            mag = np.cumsum(np.abs(v).astype(np.float64)) + 1
            err = float(np.max(np.abs(got - ref) / mag))
            ok = err <= (1e-5 if dt == "float32" else 1e-13)
        out["gpu"][name] = [ok, err]
print(json.dumps(out))
"""


def run_child(env, n):
    with tempfile.TemporaryDirectory() as cache:
        e = {k: v for k, v in os.environ.items() if not k.startswith("LOOM_GPU_SCAN")}
        e.update(env, LOOM_CACHE_DIR=cache)
        p = subprocess.run([sys.executable, "-c", CHILD, str(n)], env=e, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def lookback_entry(ptx):
    """The text of the look-back entry (the `_scanp` kernel) of a kernel's PTX."""
    m = re.search(r"\.entry\s+(\w+_scanp)\(.*?(?=\.entry|\Z)", ptx, re.S)
    assert m, "no look-back (_scanp) entry in the PTX"
    return m.group(0)


def assemble(ptx, tmp):
    if not PTXAS:
        return
    path = os.path.join(tmp, "k.ptx")
    with open(path, "w") as fh:
        fh.write(ptx)
    p = subprocess.run([PTXAS, "-arch=sm_90", path, "-o", os.path.join(tmp, "k.cubin")], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]


SIZE = {"f32": 4, "i32": 8, "f64": 8, "c128": 16, "fused": 4}  # bytes of a scanned value

# (block, items, backoff): the sweep's settings (bench/scan_sweep.py), the extremes of each knob
SETTINGS = [(256, 8, 0), (256, 16, 0), (512, 16, 0), (256, 32, 0), (512, 8, 0), (1024, 8, 0), (128, 32, 0),
            (256, 16, 64), (1024, 4, 0), (128, 16, 0), (256, 4, 0), (64, 1, 0), (64, 32, 0), (1024, 32, 0),
            (1024, 1, 0), (512, 2, 500)]


@pytest.mark.parametrize("block,items,backoff", SETTINGS)
def test_knob_setting_compiles_and_scans(block, items, backoff, tmp_path):
    env = {"LOOM_GPU_SCAN_LB_BLOCK": str(block), "LOOM_GPU_SCAN_LB_ITEMS": str(items)}
    if backoff:
        env["LOOM_GPU_SCAN_LB_BACKOFF"] = str(backoff)
    # three tiles and a bit of the tile asked for (the look-back runs across tiles); GPU: bigger
    n = (1 << 22) + 3 if GPU else 3 * block * items + 5
    out, err = run_child(env, n)
    assert "ignored" not in err, err
    for name, ptx in out["ptx"].items():
        assert not ptx.startswith("unavailable"), ptx[:200]
        e = lookback_entry(ptx)
        k = items_of(block, items, SIZE[name])
        # the staged tile: block * k values and a pad slot per 32 (bytes: one ld.shared / st.shared array)
        sizes = [int(s) for s in re.findall(r"\.shared \.align \d+ \.b8 \S*scanlb\S*tile\S*\[(\d+)\]", ptx)]
        want = (block * k + block * k // 32) * SIZE[name]
        assert want in sizes, (name, sizes, want)
        if block != 256:
            assert re.search(r"\.maxntid\s+%d\b" % block, e), f"{name}: no .maxntid {block}"
        assert ("nanosleep" in e) == bool(backoff), name
        assemble(ptx, str(tmp_path))
    for name, (ok, e) in out["gpu"].items():
        assert ok, (name, e)


def test_bad_knob_values_warn_and_use_defaults():
    out, err = run_child({"LOOM_GPU_SCAN_LB_BLOCK": "300", "LOOM_GPU_SCAN_LB_ITEMS": "0"}, 5000)
    assert "LOOM_GPU_SCAN_LB_BLOCK=300 ignored" in err and "LOOM_GPU_SCAN_LB_ITEMS=0 ignored" in err
    sizes = [int(s) for s in re.findall(r"\.shared \.align \d+ \.b8 \S*scanlb\S*tile\S*\[(\d+)\]", out["ptx"]["f32"])]
    assert (4096 + 128) * 4 in sizes  # the default 256 x 16


@pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")
def test_grid_cap_persistent_blocks():
    out, _ = run_child({"LOOM_GPU_SCAN_LB_GRID": "7", "LOOM_GPU_SCAN_LB_ITEMS": "16"}, (1 << 21) + 11)
    for name, (ok, e) in out["gpu"].items():
        assert ok, (name, e)


def test_host_results_ignore_knobs():
    code = ("import numpy as np, loom; x = np.arange(-5000, 70003, dtype=np.int32); "
            "print(int(np.array_equal(np.asarray(loom.cumsum(loom.asarray(x)).get()), np.cumsum(x))))")
    with tempfile.TemporaryDirectory() as cache:
        e = dict(os.environ, LOOM_GPU_SCAN_LB_BLOCK="1024", LOOM_GPU_SCAN_LB_ITEMS="32", LOOM_CACHE_DIR=cache)
        p = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "1", p.stderr[-2000:]
