# SPDX-License-Identifier: Apache-2.0
"""dtype_ops.py: host elementwise / reduction / sort calls over 8 dtypes, Loom vs NumPy vs torch (2 threads),
best of 3 at 2^22 points; prints the pairs where Loom is below 0.9x the best peer. A discovery tool (session
27 found float16 comparisons 20x slow, float / integer division 5-15x, small-int sorts 5-17x with it), not a
suite: `PYTHONPATH=.bench-peers .venv/bin/python bench/sweep/dtype_ops.py`."""
import time
import warnings

import numpy as np
import torch

import loom

warnings.filterwarnings("ignore"); torch.set_num_threads(2)
N = 1 << 22
r = np.random.default_rng(0)
dts = ["float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64"]
def ops(xp):
    T = xp is torch
    return {
     "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
     "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
     "maximum": lambda a, b: xp.maximum(a, b), "where": lambda a, b: xp.where(a > b, a, b),
     "less": lambda a, b: a < b, "abs": lambda a, b: abs(a), "sqrt": lambda a, b: xp.sqrt(abs(a) if not T else a.abs().float()),
     "exp": lambda a, b: xp.exp(a * 0 if not T else (a * 0).float()), "floor": lambda a, b: xp.floor(a) if (T and a.is_floating_point()) or (not T) else a,
     "clip": lambda a, b: xp.clip(a, 1, 50), "sum": lambda a, b: a.sum(), "max": lambda a, b: a.max(),
     "argmax": lambda a, b: a.argmax(), "cumsum": lambda a, b: xp.cumsum(a, 0) if T else xp.cumsum(a),
     "rowmax16": lambda a, b: a.reshape(-1, 16).max(1) if not T else a.reshape(-1, 16).amax(1),
     "colsum": lambda a, b: a.reshape(-1, 1024).sum(0), "sort": lambda a, b: xp.sort(a[: N // 16]),
     "tof32": lambda a, b: a.astype(np.float32) if not T else a.float(),
    }
def tm(f, sync):
    o = f(); sync(o); b = 1e9
    for _ in range(3):
        s = time.perf_counter(); o = f(); sync(o); b = min(b, time.perf_counter() - s)
    return b * 1e3
sync_l = lambda o: loom.eval(o)
sync_n = lambda o: None
for dt in dts:
    a = (r.random(N) * 100 + 1).astype(dt); b = (r.random(N) * 100 + 1).astype(dt)
    la, lb = loom.asarray(a), loom.asarray(b); loom.eval(la, lb)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    Lo, No, To = ops(loom), ops(np), ops(torch)
    for name in Lo:
        try: tl = tm(lambda: Lo[name](la, lb), sync_l)
        except Exception: tl = float("nan")
        try: tn = tm(lambda: No[name](a, b), sync_n)
        except Exception: tn = float("nan")
        try: tt = tm(lambda: To[name](ta, tb), sync_n)
        except Exception: tt = float("nan")
        best = np.nanmin([tn, tt])
        if best / tl < 0.9: print("%-8s %-9s loom %7.2f numpy %7.2f torch %7.2f ratio %.2f" % (dt, name, tl, tn, tt, best / tl), flush=True)
