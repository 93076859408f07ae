# SPDX-License-Identifier: Apache-2.0
"""fresh_inputs.py: the per-call cost of everyday expressions when every call sees new arrays, as a real
loop does (a batch each step, a new parameter tensor), not the same arrays again as most benchmarks time.
Each call takes its inputs from a pool of 64 arrays made beforehand (loom arrays on the device, so every
call is a new graph input; NumPy / CuPy / torch arrays for the peers) and evaluates the result (loom: inside
the call; on a GPU a synchronization ends each run of calls). Best of 5 runs of n calls, us per call.
`PYTHONPATH=.bench-peers .venv/bin/python bench/sweep/fresh_inputs.py [--gpu] [NAME...]`; run it once more
with LOOM_PLAN_CACHE=0 for the figures without the structural plan cache (runtime/plan_cache.c).
ratio = the best peer / Loom."""
import os
import sys
import time

import numpy as np

import loom
from small_calls import best_us  # best of 5 runs of n calls, us per call (a sync around each run)

try:
    import torch
    torch.set_num_threads(2)
except ImportError:  # torch is optional
    torch = None

POOL = 64


def softmax(xp, x):
    e = xp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm(xp, x):
    mu = x.mean(axis=1, keepdims=True)
    d = x - mu
    return d / xp.sqrt((d * d).mean(axis=1, keepdims=True) + 1e-5)


def chain10(xp, x):
    y = x * 1.5 + 0.5
    y = xp.sin(y) * y - 0.25
    y = xp.abs(y) + xp.cos(y) * 0.1
    return xp.sqrt(y + 1.0) * 2.0 - y


def adam(xp, p, g):
    m = g * 0.1
    v = g * g * 0.001
    return p - 0.001 * (m / 0.1) / (xp.sqrt(v / 0.001) + 1e-8)


def adam_step(xp, p, g, m, v, t):
    """Adam with its bias corrections, step t: new Python scalars every call."""
    m2 = 0.9 * m + 0.1 * g
    v2 = 0.999 * v + 0.001 * g * g
    return p - 1e-3 * (m2 / (1 - 0.9 ** t)) / (xp.sqrt(v2 / (1 - 0.999 ** t)) + 1e-8), m2, v2


# name: (fn(xp, *arrays), shapes of the inputs, float dtype)
CASES = {
    "affine 16x16": (lambda xp, x: x * 2 + 1, [(16, 16)]),
    "chain10 1000": (chain10, [(1000,)]),
    "sum 1000": (lambda xp, x: x.sum(), [(1000,)]),
    "sum(0) 256x64": (lambda xp, x: x.sum(axis=0), [(256, 64)]),
    "var(1) 64x256": (lambda xp, x: x.var(axis=1), [(64, 256)]),
    "softmax 64x128": (softmax, [(64, 128)]),
    "layernorm 64x256": (layernorm, [(64, 256)]),
    "outer exp 64": (lambda xp, a, b: xp.exp(-(a[:, None] - b[None, :]) ** 2), [(64,), (64,)]),
    "adam 4096": (adam, [(4096,), (4096,)]),
    "where/clip 1000": (lambda xp, x, y: xp.where(x > y, x, y).clip(0.1, 0.9), [(1000,), (1000,)]),
    "argmax(1) 64x100": (lambda xp, x: x.argmax(axis=1), [(64, 100)]),
    # a new scalar every call (the step number t): a learning-rate schedule, Adam's bias corrections
    "sgd lr(t) 4096": (lambda xp, p, g, t: p - (0.01 / (1 + 1e-3 * t)) * g, [(4096,), (4096,)]),
    "adam step t 4096": (adam_step, [(4096,)] * 4),
}
STEPPED = {"sgd lr(t) 4096", "adam step t 4096"}  # fn takes the call number last


def pools(shapes):
    rng = np.random.default_rng(0)
    return [[rng.random(s).astype(np.float32) for s in shapes] for _ in range(POOL)]


def caller(fn, xp, pool, finish=None, stepped=False):
    k, t = [0], [1]

    def call():
        k[0] = (k[0] + 1) % POOL
        t[0] += 1
        r = fn(xp, *pool[k[0]], t[0]) if stepped else fn(xp, *pool[k[0]])
        if finish:
            finish(r)
    return call


def main(args):
    gpu = bool(args) and args[0] == "--gpu"
    names = args[1:] if gpu else args
    cache = os.environ.get("LOOM_PLAN_CACHE", "default")
    print(f"# bench/sweep/fresh_inputs.py{' --gpu' if gpu else ''}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"LOOM_PLAN_CACHE={cache}; us per call, new arrays each call (a pool of {POOL}), best of 5; "
          "ratio = best peer / Loom")
    if gpu:
        import cupy
        dev = loom.cuda.Device(0)
        dev.use()
        libs = [("loom", loom, lambda r: loom.eval(*(r if isinstance(r, tuple) else (r,))), dev.synchronize, loom.asarray),
                ("cupy", cupy, None, cupy.cuda.runtime.deviceSynchronize, cupy.asarray)]
        if torch is not None:
            libs.append(("torch", torch, None, torch.cuda.synchronize, lambda a: torch.from_numpy(a).cuda()))
        n = 300
    else:
        libs = [("loom", loom, lambda r: loom.eval(*(r if isinstance(r, tuple) else (r,))), None, loom.asarray),
                ("numpy", np, None, None, lambda a: a)]
        if torch is not None:
            libs.append(("torch", torch, None, None, torch.from_numpy))
        n = 1000
    for name in names or CASES:
        fn, shapes = CASES[name]
        host = pools(shapes)
        res = {}
        for lib, xp, finish, sync, conv in libs:
            pool = [[conv(a) for a in arrays] for arrays in host]
            if lib == "loom":
                loom.eval(*(a for arrays in pool for a in arrays))
            try:
                res[lib] = best_us(caller(fn, xp, pool, finish, name in STEPPED), n, sync)
            except Exception:  # noqa: BLE001 (a library lacks the call or spells it differently)
                res[lib] = float("nan")
        peers = [v for k, v in res.items() if k != "loom" and v == v]
        ratio = min(peers) / res["loom"] if peers else float("nan")
        cols = "  ".join(f"{k} {v:8.2f}" for k, v in res.items())
        print(f"{name:18s} {cols}  ratio {ratio:6.2f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
