# SPDX-License-Identifier: Apache-2.0
"""small_calls.py: the per-call cost of everyday calls on tiny host arrays (100 elements, a 10 x 10
matrix), Loom vs NumPy (and torch where it has the call): where a Python program that loops over small
arrays pays. Each Loom result is evaluated inside the timed call (loom._core.eval), so a lazy result
counts its kernel. Best of 5 runs of n calls. A discovery tool, not a suite:
`PYTHONPATH=.bench-peers .venv/bin/python bench/sweep/small_calls.py [NAME...]` (run on a quiet machine).
`--gpu`: the arrays on GPU 0, against CuPy and torch (CUDA) instead of NumPy; each run of n calls ends with
a device synchronization (calls that launch kernels count their launches, not a wait for each); ratio =
the best of CuPy and torch / Loom."""
import sys
import time

import numpy as np

import loom

try:
    import torch
    torch.set_num_threads(2)
except ImportError:  # torch is optional
    torch = None


def best_us(f, n=2000, sync=None):
    f()
    best = 1e9
    for _ in range(5):
        if sync:
            sync()
        t = time.perf_counter()
        for _ in range(n):
            f()
        if sync:
            sync()
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


rng = np.random.default_rng(0)
H = dict(a=rng.random(100).astype(np.float32), b=rng.random(100).astype(np.float32), M=rng.random((10, 10)),
         i=np.arange(5))
CASES = {
    "add": lambda xp, a, b, M, i: a + b,
    "axpy": lambda xp, a, b, M, i: a * 2 + 1,
    "sum": lambda xp, a, b, M, i: a.sum(),
    "float(sum)": lambda xp, a, b, M, i: float(a.sum()),
    "a[3]": lambda xp, a, b, M, i: a[3],
    "float(a[3])": lambda xp, a, b, M, i: float(a[3]),
    "M[2,3]": lambda xp, a, b, M, i: M[2, 3],
    "a[1:50]": lambda xp, a, b, M, i: a[1:50],
    "M[1]": lambda xp, a, b, M, i: M[1],
    "M[:,None]": lambda xp, a, b, M, i: M[:, None],
    "M.T": lambda xp, a, b, M, i: M.T,
    "reshape": lambda xp, a, b, M, i: a.reshape(10, 10),
    "a[::2]+1": lambda xp, a, b, M, i: a[::2] + 1,
    "zeros": lambda xp, a, b, M, i: xp.zeros(100),
    "arange": lambda xp, a, b, M, i: xp.arange(100),
    "asarray(list)": lambda xp, a, b, M, i: xp.asarray([1.0, 2.0, 3.0]),
    "exp": lambda xp, a, b, M, i: xp.exp(a),
    "where": lambda xp, a, b, M, i: xp.where(a > 0.5, a, b),
    "argmax": lambda xp, a, b, M, i: int(a.argmax()),
    "M.sum(0)": lambda xp, a, b, M, i: M.sum(0),
    "a[i]": lambda xp, a, b, M, i: a[i],
    "a[a>0.5]": lambda xp, a, b, M, i: a[a > 0.5],
    "concatenate": lambda xp, a, b, M, i: xp.concatenate([a, b]) if xp is not torch else torch.cat([a, b]),
    "stack": lambda xp, a, b, M, i: xp.stack([a, b]),
    "dot": lambda xp, a, b, M, i: xp.dot(a, b),
    "M@M": lambda xp, a, b, M, i: M @ M,
    "trace": lambda xp, a, b, M, i: xp.trace(M),
    "sort": lambda xp, a, b, M, i: xp.sort(a),
    "cumsum": lambda xp, a, b, M, i: xp.cumsum(a, 0),
    "copy": lambda xp, a, b, M, i: a.copy() if xp is not torch else a.clone(),
    "setitem": lambda xp, a, b, M, i: a.__setitem__(3, 1.0),
    "any": lambda xp, a, b, M, i: bool((a > 2).any()),
    "tolist": lambda xp, a, b, M, i: a.tolist(),
    "clip": lambda xp, a, b, M, i: xp.clip(a, 0.2, 0.8),
    "outer": lambda xp, a, b, M, i: xp.outer(a[:10], b[:10]),
}


def loom_caller(f, L):
    """The call of case f on loom's arrays L, its result evaluated (a lazy result counts its kernel)."""
    def call():
        r = f(loom, **L)
        if isinstance(r, loom.ndarray):
            loom._core.eval(r)
    return call


def main(names):
    if names and names[0] == "--gpu":
        return main_gpu(names[1:])
    L = {k: loom.asarray(v) for k, v in H.items()}
    T = {k: torch.from_numpy(v.copy()) for k, v in H.items()} if torch is not None else None
    print(f"# bench/sweep/small_calls.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, us per call "
          "(best of 5); ratio = NumPy / Loom")
    for name in names or CASES:
        f = CASES[name]

        loom_call = loom_caller(f, L)
        tn = best_us(lambda: f(np, **H))
        tl = best_us(loom_call)
        tt = float("nan")
        if T is not None:
            try:
                tt = best_us(lambda: f(torch, **T))
            except Exception:  # noqa: BLE001 (torch lacks the call or spells it differently)
                pass
        print(f"{name:14s} loom {tl:8.2f} numpy {tn:8.2f} torch {tt:8.2f}  ratio {tn / tl:6.2f}", flush=True)


def main_gpu(names):
    import cupy
    with loom.cuda.Device(0):
        L = {k: loom.asarray(v) for k, v in H.items()}
    C = {k: cupy.asarray(v) for k, v in H.items()}
    T = {k: torch.from_numpy(v.copy()).cuda() for k, v in H.items()} if torch is not None else None
    print(f"# bench/sweep/small_calls.py --gpu, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, us per "
          "call (best of 5, a synchronization after each run of calls); ratio = best of CuPy, torch / Loom")
    for name in names or CASES:
        f = CASES[name]

        loom_call = loom_caller(f, L)
        res = {}
        for lib, fn, sync in [("loom", loom_call, lambda: loom.cuda.Device(0).synchronize()),
                              ("cupy", lambda f=f: f(cupy, **C), cupy.cuda.runtime.deviceSynchronize),
                              ("torch", lambda f=f: f(torch, **T), torch.cuda.synchronize)]:
            try:
                res[lib] = best_us(fn, 500, sync)
            except Exception:  # noqa: BLE001 (a library lacks the call or spells it differently)
                res[lib] = float("nan")
        peers = [v for k, v in res.items() if k != "loom" and v == v]
        ratio = min(peers) / res["loom"] if peers else float("nan")
        print(f"{name:14s} loom {res['loom']:8.2f} cupy {res['cupy']:8.2f} torch {res['torch']:8.2f}  "
              f"ratio {ratio:6.2f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
