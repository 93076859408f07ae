"""bench_strided_views.py: strided, reversed and complex-part views on the host, Loom against NumPy and torch
in interleaved rounds (torch first in each round: its OpenMP workers spin after a call and tax whoever runs
next on a small box). Every Loom result is checked against NumPy first.

    PYTHONPATH=/abs/path/to/.bench-peers python bench/bench_strided_views.py [--rounds 9] [names...]

Prints per case the median ms of each library and the load average before and after. Reversed views are
torch.flip in torch (a copy: torch has no negative steps); fused complex parts are z.real views in torch and
NumPy. Shapes: 3001 x 1777 float32 (the probe table's PR x PC), 5332777 float32, 2^21 complex64.
"""
import argparse
import os
import statistics
import time

import numpy as np

import loom

try:
    import torch
    torch.set_num_threads(os.cpu_count() or 1)
except ImportError:  # torch is optional
    torch = None

R, C = 3001, 1777
_rng = np.random.default_rng(0)
XF = _rng.standard_normal((R, C)).astype(np.float32)
X1 = _rng.standard_normal(R * C).astype(np.float32)
CZ = (_rng.standard_normal(1 << 21) + 1j * _rng.standard_normal(1 << 21)).astype(np.complex64)


def _rev(xp, x, dim, step):
    """x reversed along dim with |step| (NumPy / Loom slicing; torch.flip then a positive step)."""
    if torch is not None and xp is torch:
        x = torch.flip(x, (dim,))
        return x[::step] if dim == 0 else x[:, ::step]
    return x[::-step] if dim == 0 else x[:, ::-step]


_fused = {}


def _real_sum(xp, z):
    if xp is loom:  # inside a kernel: the fused .real reads the complex input itself
        f = _fused.setdefault("real_sum", loom.fuse(lambda v: v.real.sum()))
        return f(z)
    return z.real.sum()


def _real_ew(xp, z):
    if xp is loom:
        f = _fused.setdefault("real_ew", loom.fuse(lambda v: v.real * 2.0 + 1.0))
        return f(z)
    return z.real * 2.0 + 1.0


CASES = {
    "col7_ew": (XF, lambda xp, x: x[:, ::7] * 2.0 + 1.0),
    "col7_sum1": (XF, lambda xp, x: x[:, ::7].sum(1)),
    "col12_ew": (XF, lambda xp, x: x[:, ::12] * 2.0 + 1.0),
    "s7_sum": (X1, lambda xp, x: x[::7].sum()),
    "s16_sum": (X1, lambda xp, x: x[::16].sum()),
    "rev_sum": (X1, lambda xp, x: _rev(xp, x, 0, 1).sum()),
    "sm2_sum": (X1, lambda xp, x: _rev(xp, x, 0, 2).sum()),
    "colm2_ew": (XF, lambda xp, x: _rev(xp, x, 1, 2) * 2.0 + 1.0),
    "colm3_sum1": (XF, lambda xp, x: _rev(xp, x, 1, 3).sum(1)),
    "colm2_max1": (XF, lambda xp, x: _rev(xp, x, 1, 2).max(1) if xp is not torch else _rev(xp, x, 1, 2).amax(1)),
    "colm7_ew": (XF, lambda xp, x: _rev(xp, x, 1, 7) * 2.0 + 1.0),
    "real_sum_fused": (CZ, _real_sum),
    "real_ew_fused": (CZ, _real_ew),
}


def _sample(f, sync):
    """ms per call over a batch of >= 5 ms (each call synchronized)."""
    t0 = time.perf_counter()
    sync(f())
    k = max(1, int(0.005 / max(time.perf_counter() - t0, 1e-6)))
    t0 = time.perf_counter()
    for _ in range(k):
        sync(f())
    return (time.perf_counter() - t0) / k * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    print("load", os.getloadavg())
    for name in a.names or list(CASES):
        data, fn = CASES[name]
        la = loom.asarray(data)
        want = fn(np, data)
        got = loom.asnumpy(fn(loom, la))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * np.sqrt(data.size))
        sides = {}
        if torch is not None:
            td = torch.from_numpy(data)
            sides["torch"] = (lambda td=td: fn(torch, td), lambda r: None)
        sides["numpy"] = (lambda: fn(np, data), lambda r: None)
        sides["loom"] = (lambda la=la: fn(loom, la), lambda r: loom.eval(r))
        ts = {k: [] for k in sides}
        for _ in range(a.rounds):
            for k, (f, sync) in sides.items():
                ts[k].append(_sample(f, sync))
        print(f"{name:15s} " + "  ".join(f"{k}={statistics.median(v):7.3f}" for k, v in ts.items()), flush=True)
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
