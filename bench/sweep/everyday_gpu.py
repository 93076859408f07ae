# SPDX-License-Identifier: Apache-2.0
"""everyday_gpu.py: the everyday NumPy calls of everyday_calls.py and everyday_calls2.py (their cases and
data, imported) on a GPU: Loom vs CuPy vs torch (CUDA), each on its own copies of the inputs on the device,
best of REPS (20) after a warm-up, every call followed by a device synchronization (so launch and host
costs count, as a user's loop pays them). Prints ms and ratio = best peer / Loom (> 1: Loom faster).
A discovery tool, not a suite:
    python3 bench/sweep/everyday_gpu.py [NAME...]      (on the GPU machine, after scripts/gpu_all.sh)
torch runs with torch.set_default_device("cuda"), so the cases' torch.zeros / randn / linspace are on the
GPU too; a case a library cannot run prints nan for it."""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import everyday_calls as e1  # noqa: E402
import everyday_calls2 as e2  # noqa: E402

import loom  # noqa: E402
import torch  # noqa: E402

try:
    import cupy
except ImportError:
    cupy = None

torch.set_default_device("cuda")
REPS = int(os.environ.get("REPS", "20"))


def _arrays(o, kind):
    out, stack = [], [o]
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, kind):
            out.append(v)
    return out


def loom_sync(o):
    outs = _arrays(o, loom.ndarray)
    if outs:
        loom.eval(*outs)
    loom.cuda.Device().synchronize()


def cupy_sync(o):
    cupy.cuda.Device().synchronize()


def torch_sync(o):
    torch.cuda.synchronize()


def best_ms(f, sync):
    sync(f())
    sync(f())
    best = 1e9
    for _ in range(REPS):
        t = time.perf_counter()
        o = f()
        sync(o)
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def run(mod, only):
    on = {"loom": {k: loom.asarray(v) for k, v in mod.base.items()},
          "torch": {k: torch.from_numpy(v).cuda() for k, v in mod.base.items()}}
    libs = [("loom", loom, loom_sync), ("torch", torch, torch_sync)]
    if cupy is not None:
        on["cupy"] = {k: cupy.asarray(v) for k, v in mod.base.items()}
        libs.append(("cupy", cupy, cupy_sync))
    for name, fn in mod.cases.items():
        if only and name not in only:
            continue
        ms, notes = {}, []
        for lib, xp, sync in libs:
            try:
                if fn(xp, on[lib]) is None:
                    raise TypeError("not expressible")
                ms[lib] = best_ms(lambda: fn(xp, on[lib]), sync)
            except Exception as e:  # a library without the call
                ms[lib] = float("nan")
                if lib == "loom":
                    notes.append(f"LOOMERR {type(e).__name__}: {str(e)[:80]}")
        peers = [v for k, v in ms.items() if k != "loom" and v == v]
        ratio = min(peers) / ms["loom"] if peers and ms["loom"] == ms["loom"] else float("nan")
        cells = " ".join(f"{k} {v:8.3f}" for k, v in ms.items())
        print(f"{name:16s} {cells}  ratio {ratio:.2f} {' '.join(notes)}", flush=True)


if __name__ == "__main__":
    only = sys.argv[1:]
    print(f"# bench/sweep/everyday_gpu.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{torch.cuda.get_device_name()}, ms (best of {REPS}, a device sync after each call); "
          "ratio = best of CuPy / torch over Loom", flush=True)
    for mod in (e1, e2):
        run(mod, only)
