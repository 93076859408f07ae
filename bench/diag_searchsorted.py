"""diag_searchsorted.py: where the time of a device searchsorted / digitize goes (DIAGNOSIS.md, session 25:
digitize of 2^24 float32 queries in 100 float64 edges took 1.97 ms on an H100 where the binary search
predicted 0.1-0.2). Per variant: the median wall time of 20 calls after a synchronize, and per call the
kernels launched and compiled, host<->device copies and the bytes moved (loom.stats()).

    python3 bench/diag_searchsorted.py [n_log2]      (the GPU machine; LOOM_SORT_ENGINE=network on a host)
"""
import os
import statistics
import sys
import time

import numpy as np

import loom


def sync():
    if loom.cuda.is_available():
        loom.cuda.Device().synchronize()


def measure(name, f, calls=20):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.5:  # warm: compiles, and the JIT's background tier-up (LOOM_CUDA_JIT_TIERS)
        loom.eval(f())
        sync()
    before = loom.stats()
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        loom.eval(f())
        sync()
        times.append(time.perf_counter() - t)
    after = loom.stats()
    per = {k: (after[k] - before[k]) / calls for k in ("kernels_launched", "kernels_compiled", "copies_to_host",
                                                       "bytes_to_host", "copies_to_device", "bytes_to_device")}
    print(f"{name:44s} {statistics.median(times) * 1e3:8.3f} ms  " +
          " ".join(f"{k}={v:g}" for k, v in per.items()), flush=True)


def main():
    n = 1 << int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
    r = np.random.default_rng(0)
    big = r.standard_normal(n).astype(np.float32)
    edges64 = np.sort(r.standard_normal(100))
    x = loom.asarray(big)
    e64 = loom.asarray(edges64)
    e32 = loom.asarray(edges64.astype(np.float32))
    measure("copy of the queries (x * 1)", lambda: x * 1)
    measure("searchsorted f32 edges, f32 queries", lambda: loom.searchsorted(e32, x))
    measure("searchsorted f64 edges, f32 queries", lambda: loom.searchsorted(e64, x))
    measure("digitize (device f64 edges)", lambda: loom.digitize(x, e64))
    measure("digitize (host f64 edges)", lambda: loom.digitize(x, edges64))
    os.environ["LOOM_SEARCHSORTED_BINARY"] = "0"
    measure("searchsorted f32, LOOM_SEARCHSORTED_BINARY=0", lambda: loom.searchsorted(e32, x))
    os.environ.pop("LOOM_SEARCHSORTED_BINARY")
    measure("interp (device f64 edges)", lambda: loom.interp(x, e64, e64 * 2))
    measure("histogram bins=100", lambda: loom.histogram(x, bins=100)[0])
    measure("histogram bins=edges", lambda: loom.histogram(x, bins=e64)[0])


if __name__ == "__main__":
    main()
