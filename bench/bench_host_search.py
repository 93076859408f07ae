"""searchsorted, digitize and interp of host arrays: Loom (the binary search kernel on every core for 2^14
queries or more, python/loom/_sorting.py; NumPy's code below that) beside NumPy and torch.searchsorted in
one run; best of 5 calls after one warm-up (the first call compiles: ~36 ms, then the disk cache).
  PYTHONPATH=.bench-peers .venv/bin/python bench/bench_host_search.py
"""
import time

import numpy as np

import loom

try:
    import torch
except ImportError:
    torch = None


def best(f, k=5):
    f()
    t = 1e9
    for _ in range(k):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t * 1e3


def main():
    r = np.random.default_rng(0)
    big = r.standard_normal(1 << 22).astype(np.float32)
    srt = np.sort(r.standard_normal(1 << 22).astype(np.float32))
    if torch is not None:
        torch.set_num_threads(2)
    print(f"{'call':34s} {'loom ms':>9s} {'numpy ms':>9s} {'torch ms':>9s}  numpy/loom")
    for n, m in [(1 << 22, 1 << 22), (1000, 1 << 22), (1 << 16, 1 << 16), (100, 1 << 14), (100, 1 << 12)]:
        a = np.ascontiguousarray(srt[:: (1 << 22) // n][:n])
        q = big[:m]
        la, lq = loom.asarray(a), loom.asarray(q)
        tl = best(lambda: loom.eval(loom.searchsorted(la, lq)))
        tn = best(lambda: np.searchsorted(a, q))
        tt = float("nan")
        if torch is not None:
            ta, tq = torch.from_numpy(a), torch.from_numpy(q)
            tt = best(lambda: torch.searchsorted(ta, tq))
        assert np.array_equal(np.asarray(loom.searchsorted(la, lq)), np.searchsorted(a, q))
        print(f"{'searchsorted n=%d m=%d' % (n, m):34s} {tl:9.2f} {tn:9.2f} {tt:9.2f}  {tn / tl:5.2f}", flush=True)
    bins = np.sort(r.standard_normal(100))
    lb = loom.asarray(big)
    for name, lf, nf in [("digitize 2^22 in 100 bins", lambda: loom.eval(loom.digitize(lb, bins)), lambda: np.digitize(big, bins)),
                         ("interp 2^22 at 100 points", lambda: loom.eval(loom.interp(lb, bins, bins * 2)),
                          lambda: np.interp(big, bins, bins * 2))]:
        tl, tn = best(lf), best(nf)
        print(f"{name:34s} {tl:9.2f} {tn:9.2f} {'':>9s}  {tn / tl:5.2f}", flush=True)


if __name__ == "__main__":
    main()
