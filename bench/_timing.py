"""_timing.py: the timing harness the bench_*.py scripts share (run as `python3 bench/bench_x.py`, which
puts bench/ first on sys.path): whether a GPU is there, the GPU peers that import, best-of-N wall time
with the device synchronized, and the results file with the machine, date and command.
"""
import datetime
import json
import os
import platform
import sys
import time

import loom

GPU = loom.cuda.is_available()


def peers():
    """The GPU peers that import and see a GPU ({} on the host): {"cupy": cupy, "torch": torch}."""
    p = {}
    if not GPU:
        return p
    try:
        import cupy
        p["cupy"] = cupy
    except Exception:
        pass
    try:
        import torch
        if torch.cuda.is_available():
            p["torch"] = torch
    except Exception:
        pass
    return p


def loom_sync():
    """Waits for loom's device 0 (nothing on the host)."""
    if GPU:
        loom.cuda.Device(0).synchronize()


def best_ms(fn, sync, repeats):
    """The best of `repeats` timed runs of fn() followed by sync(), in ms, after one warm-up run."""
    fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def write_results(kind, rows):
    """Writes bench/results/<date>-<kind>-<host|h200>.json (machine, date, command, rows); returns its path.
    LOOM_BENCH_DATE overrides the date."""
    date = os.environ.get("LOOM_BENCH_DATE", datetime.date.today().isoformat())
    tag = "h200" if GPU else "host"
    out = {"machine": platform.node(), "processor": platform.processor(), "cpus": os.cpu_count(), "gpu": GPU,
           "date": date, "command": " ".join(["python3", "bench/" + os.path.basename(sys.argv[0])] + sys.argv[1:]),
           "rows": rows, "speedup": "peer_ms / loom_ms (> 1: loom faster)"}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", f"{date}-{kind}-{tag}.json")
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
    print("wrote", path)
    return path
