"""bench_graph_build.py: the lazy API's fixed costs (issue 11's "Lazy API" targets).

Measures, on the current device (the host, or the GPU when loom picks one):
  * graph building: the cost per operation of building chains of 10, 100 and 1000 binary ops
    (`x = x * a + b` ...: array-array and array-scalar operators) from Python, nothing evaluated;
  * the 10-op lazy expression on 1000 float32 elements, built and evaluated per call (`.get()` is not
    timed in, only loom.eval, so the figure is loom's, not NumPy's copy), fresh scalars each call;
  * the same expression through @loom.fuse, per call.
Best of rounds of back-to-back calls (the machine is shared), in microseconds.

Targets (issue 11): building <= 0.5 us per op; the 10-op expression <= 8 us per call on the H200.

Run: python bench/bench_graph_build.py [--json PATH] [--label TEXT]
"""
import argparse
import datetime
import json
import os
import platform
import sys
import time

import numpy as np

import loom

N_SMALL = 1000


CLOCK = time.perf_counter_ns


def best_per_call(fn, calls, rounds):
    """Best over rounds of (time of `calls` back-to-back calls) / calls, in microseconds. The clock is
    wall time, or with --cpu the process's CPU time (on a shared, loaded machine wall time mostly
    measures the other tenants)."""
    for _ in range(max(10, calls // 10)):
        fn()
    best = float("inf")
    for _ in range(rounds):
        t = CLOCK()
        for _ in range(calls):
            fn()
        best = min(best, (CLOCK() - t) / calls)
    return best / 1e3


def chain(x, a, b, nops):
    """nops binary operators (a mix: array*array, array+scalar, scalar*array, array-array, array/scalar)."""
    for i in range(nops // 5):
        x = x * a
        x = x + 0.5
        x = 2.0 * x
        x = x - b
        x = x / 3.0
    return x


def expr10(a, b, s):
    """10 ops: a realistic elementwise body with scalars."""
    return ((a * s + b) * (a - b) + 1.5) / (b * b + 2.0) - a * 0.25


@loom.fuse(kernel_name="bench_build_expr10")
def fused10(a, b, s):
    return ((a * s + b) * (a - b) + 1.5) / (b * b + 2.0) - a * 0.25


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write the results as JSON here")
    ap.add_argument("--label", default="", help="a label for this run (e.g. before/after)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cpu", action="store_true", help="time with the process's CPU time instead of wall time")
    args = ap.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.process_time_ns

    rng = np.random.default_rng(0)
    an = rng.random(N_SMALL, dtype=np.float32)
    bn = rng.random(N_SMALL, dtype=np.float32) + 0.5
    a, b = loom.asarray(an), loom.asarray(bn)
    loom.eval(a, b)
    dev = a.device if hasattr(a, "device") else None
    results = {}

    # ---- graph building: per op, nothing evaluated -------------------------------------------------
    for nops in (10, 100, 1000):
        calls = max(2, 20000 // nops)
        def build():
            chain(a, a, b, nops)
        us = best_per_call(build, calls, args.rounds)
        results[f"build_{nops}_us_per_op"] = us / nops
    # a 1000-op chain passes the default graph bound (256 nodes): the figure above includes the evaluations
    # of the flushes; with a bound past the chain it is the building alone
    old = loom.set_graph_bound(4096)
    try:
        results["build_1000_bound4096_us_per_op"] = best_per_call(lambda: chain(a, a, b, 1000), 20, args.rounds) / 1000
    finally:
        loom.set_graph_bound(old)
    loom.eval()  # nothing pending of interest: the chains were dropped

    # ---- the 10-op expression per call, evaluated ----------------------------------------------------
    ref = ((an * np.float32(1.25) + bn) * (an - bn) + 1.5) / (bn * bn + 2.0) - an * 0.25
    got = expr10(a, b, 1.25).get()
    ok = bool(np.allclose(got, ref, rtol=1e-5))
    scalars = [1.0 + i / 1000 for i in range(1000)]
    it = iter(())

    def lazy_call():
        nonlocal it
        try:
            s = next(it)
        except StopIteration:
            it = iter(scalars)
            s = next(it)
        r = expr10(a, b, s)
        loom.eval(r)
        return r
    results["expr10_build_eval_us"] = best_per_call(lazy_call, 2000, args.rounds)

    def lazy_build_only():
        return expr10(a, b, 1.25)
    results["expr10_build_only_us"] = best_per_call(lazy_build_only, 2000, args.rounds)

    def same_call():
        r = expr10(a, b, 1.25)
        loom.eval(r)
        return r
    results["expr10_same_scalar_us"] = best_per_call(same_call, 2000, args.rounds)

    def sync():
        if hasattr(loom, "cuda") and a._on_gpu:
            loom.cuda.Device().synchronize()

    # ---- @loom.fuse per call --------------------------------------------------------------------------
    fok = bool(np.allclose(fused10(a, b, 1.25).get(), ref, rtol=1e-5))

    def fuse_call():
        return fused10(a, b, 1.25)
    results["fuse10_us"] = best_per_call(fuse_call, 2000, args.rounds)
    sync()
    st = loom.stats()

    print(f"# loom lazy API fixed costs ({args.label or 'run'}), device {dev}, {N_SMALL} float32 elements, "
          f"{'CPU' if args.cpu else 'wall'} time")
    print(f"results equal NumPy: lazy {ok}, @fuse {fok}\n")
    print("| measure | us |")
    print("| --- | ---: |")
    for k, v in results.items():
        print(f"| {k} | {v:.3f} |")
    print(f"\nstats: compiled {st['kernels_compiled']}, cache_hits {st['cache_hits']}, "
          f"launched {st['kernels_launched']}")
    if args.json:
        out = {"benchmark": "graph-build", "label": args.label,
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                           "cpus": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__},
               "device": str(dev), "clock": "cpu" if args.cpu else "wall",
               "command": "python " + " ".join(sys.argv), "equal_to_numpy": ok and fok,
               "results_us": results, "stats": st}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
