"""Order statistics and counting on a GPU array, side by side with CuPy and torch in one run (median ms of
CUDA-event-free wall times after a synchronize; each library warmed up for 0.5 s first): quantile / percentile /
median (sort-based, python/loom/_order_stats.py), bincount and histogram (scatter-add), digitize and interp
(searchsorted), cov (centred matmul). Before this, each of them copied the array to the host and ran NumPy.
  python3 bench/bench_order_stats.py [--out results.json]
"""
import json
import sys
import time

import numpy as np


def timeit(fn, sync, reps=10, warm_s=0.5):
    """Median ms of reps calls after warm_s seconds of calls (at least one): Loom's CUDA JIT links a new kernel
    at level 0 and tiers it up in the background (LOOM_CUDA_JIT_TIERS), so one warm-up call timed the
    unoptimized code (digitize 1.97 ms against 0.86 tiered up, H100, 2026-12-05)."""
    t0 = time.perf_counter()
    fn(); sync()
    while time.perf_counter() - t0 < warm_s:
        fn(); sync()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); sync(); ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e3


def main():
    import loom
    import os
    libs = {"loom": (loom, lambda: loom.cuda.Device().synchronize()),
            "loom_before": (loom, lambda: loom.cuda.Device().synchronize())}  # LOOM_SORT_ENGINE=numpy: the host round trip
    try:
        import cupy
        libs["cupy"] = (cupy, lambda: cupy.cuda.Device().synchronize())
    except Exception:
        pass
    try:
        import torch
        libs["torch"] = (torch, torch.cuda.synchronize)
    except Exception:
        pass
    r = np.random.default_rng(0)
    big = r.standard_normal(1 << 24).astype(np.float32)
    rows = r.standard_normal((4096, 4096)).astype(np.float32)
    ints = r.integers(0, 1000, 1 << 24)
    bins = np.sort(r.standard_normal(100))
    feats = r.standard_normal((64, 1 << 16)).astype(np.float32)
    cases = {
        "quantile_all_2^24": lambda xp, d: xp.quantile(d["big"], 0.9) if xp.__name__ != "torch" else xp.quantile(d["big"], 0.9),
        "percentile_rows_4096^2": lambda xp, d: xp.percentile(d["rows"], [5, 50, 95], axis=1) if xp.__name__ != "torch"
        else xp.quantile(d["rows"], xp.tensor([0.05, 0.5, 0.95], device="cuda"), dim=1),
        "median_rows_4096^2": lambda xp, d: xp.median(d["rows"], axis=1) if xp.__name__ != "torch" else xp.median(d["rows"], dim=1),
        "bincount_2^24_1000": lambda xp, d: xp.bincount(d["ints"]),
        "digitize_2^24_100": lambda xp, d: xp.digitize(d["big"], d["bins"]) if xp.__name__ != "torch"
        else xp.bucketize(d["big"], d["bins"], right=True),
        "cov_64x65536": lambda xp, d: xp.cov(d["feats"]),
        "histogram_2^24_100": lambda xp, d: xp.histogram(d["big"], bins=100)[0] if xp.__name__ != "torch"
        else xp.histc(d["big"], bins=100),
        "interp_2^24_100": lambda xp, d: xp.interp(d["big"], d["bins"], d["bins"] * 2) if xp.__name__ != "torch"
        else (_ for _ in ()).throw(NotImplementedError("no torch.interp")),
    }
    rows_out = []
    for name, fn in cases.items():
        row = {"name": name}
        for lib, (xp, sync) in libs.items():
            if lib == "torch":
                dev = {"big": xp.from_numpy(big).cuda(), "rows": xp.from_numpy(rows).cuda(), "ints": xp.from_numpy(ints).cuda(),
                       "bins": xp.from_numpy(bins.astype(np.float32)).cuda(), "feats": xp.from_numpy(feats).cuda()}
            else:
                dev = {"big": xp.asarray(big), "rows": xp.asarray(rows), "ints": xp.asarray(ints), "bins": xp.asarray(bins),
                       "feats": xp.asarray(feats)}
            os.environ["LOOM_SORT_ENGINE"] = "numpy" if lib == "loom_before" else "auto"
            try:
                if lib.startswith("loom"):
                    f = lambda: loom.eval(*[v for v in (fn(xp, dev),) ])
                else:
                    f = lambda: fn(xp, dev)
                row[lib] = timeit(f, sync)
            except Exception as e:  # a peer without the call
                row[lib] = f"n/a ({type(e).__name__}: {str(e)[:60]})"
        rows_out.append(row)
        print(name, " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items() if k != "name"), flush=True)
    if "--out" in sys.argv:
        json.dump({"rows": rows_out}, open(sys.argv[sys.argv.index("--out") + 1], "w"), indent=1)


if __name__ == "__main__":
    main()
