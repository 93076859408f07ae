"""bench_overhead.py: the host CPU time of one small call, per path (issues 11 and 12: the per-call overhead).

The workloads are bench_python_gpu.py's (the H200 figures) and bench_graph_build.py's, on 1000 float32
elements, so the kernel itself is negligible and what is timed is the host's dispatch path: the Python
binding, loom_eval (plan look-up, outputs from the pool, the device's schedule runner, the launch), the
results' wrapping and the freeing of the previous call's results.
  fuse4      @loom.fuse of bench_python_gpu.py (4 inputs, 1 output), per call
  lazy10     bench_python_gpu.py's ten_ops(x) built and loom.eval'ed per call (constant scalars)
  build10    the same expression built only (nothing evaluated)
  expr10_new bench_graph_build.py's expr10 with a new Python scalar every call (the structure repeats)
  eval_only  lazy10 - build10: the evaluation of the built expression (plan hit, outputs, run, wrapping)

It runs on loom's current device: the host, or a GPU. With the mock HIP library of the tests
(tests/c/mock_hip.c: launches are recorded, not run) the GPU device's host path (runtime/gpu/: pool,
streams, launch policy, parameter packing) is timed on a machine without a GPU:
    LOOM_DEVICE=hip LOOM_HIP_LIBRARY=build/tests/libmock_hip.so python bench/bench_overhead.py
(the mock's own launch costs ~0.1 us where the real driver's costs 2-3 us.)

Timing: the process's CPU time (time.process_time_ns; --wall for wall time), best of --rounds rounds of
back-to-back calls (the machine is shared: the best round is the least disturbed). Prints a markdown
table; --json writes the figures with the machine and command.
Run: python bench/bench_overhead.py [--rounds 7] [--calls 2000] [--json PATH] [--label TEXT]
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

N = 1000


@loom.fuse(kernel_name="bench4")
def fused4(a, b, c, d):
    return a * b + c * d - loom.exp(a) / (d + 1.0)


def ten_ops(x):
    return ((((x * 2 + 1) * x - 3) / 4 + x) * 0.5 - x) * 1.25 + 2


def expr10(a, b, s):
    return ((a * s + b) * (a - b) + 1.5) / (b * b + 2.0) - a * 0.25


def per_call_us(fn, calls, rounds, clock, sync):
    for _ in range(max(20, calls // 10)):
        fn()
    sync()
    best = float("inf")
    for _ in range(rounds):
        t = clock()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (clock() - t) / calls)
    return best / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--wall", action="store_true", help="wall time instead of the process's CPU time")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    clock = time.perf_counter_ns if args.wall else time.process_time_ns

    rng = np.random.default_rng(0)
    host = [rng.random(N, dtype=np.float32) + np.float32(0.5) for _ in range(4)]
    xs = [loom.asarray(h) for h in host]
    loom.eval(*xs)
    x0, x1, x2, x3 = xs
    on_gpu = x0._device[0] != 0  # (kind, index): 0 is the host

    def sync():
        if on_gpu:
            loom.cuda.Device().synchronize()

    mock = on_gpu and "mock" in os.environ.get("LOOM_HIP_LIBRARY", "")
    if not mock:  # the mock runs no kernel
        want = host[0] * host[1] + host[2] * host[3] - np.exp(host[0]) / (host[3] + np.float32(1))
        np.testing.assert_allclose(fused4(*xs).get(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ten_ops(x0).get(), ten_ops(host[0]), rtol=1e-5, atol=1e-5)

    res = {}
    res["fuse4"] = per_call_us(lambda: fused4(x0, x1, x2, x3), args.calls, args.rounds, clock, sync)
    res["lazy10"] = per_call_us(lambda: loom.eval(ten_ops(x0)), args.calls, args.rounds, clock, sync)
    res["build10"] = per_call_us(lambda: ten_ops(x0), args.calls, args.rounds, clock, sync)
    scalars = [1.0 + i / 1000 for i in range(1000)]
    state = [0]

    def new_scalar():
        state[0] = (state[0] + 1) % len(scalars)
        loom.eval(expr10(x0, x1, scalars[state[0]]))
    res["expr10_new"] = per_call_us(new_scalar, max(200, args.calls // 4), args.rounds, clock, sync)

    res["eval_only"] = res["lazy10"] - res["build10"]  # derived: the evaluation and the results' wrapping
    st = loom.stats()

    dev = "GPU (mock HIP)" if mock else "GPU" if on_gpu else "host"
    print(f"# loom per-call host overhead ({args.label or 'run'}): device {dev}, {N} float32 elements, "
          f"{'wall' if args.wall else 'CPU'} time, best of {args.rounds} rounds")
    print("| call | us |")
    print("| --- | ---: |")
    for k, v in res.items():
        print(f"| {k} | {v:.2f} |")
    print(f"stats: compiled {st['kernels_compiled']}, cache_hits {st['cache_hits']}, launched {st['kernels_launched']}")
    if args.json:
        out = {"benchmark": "overhead", "label": args.label, "device": dev,
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                           "cpus": os.cpu_count(), "load": os.getloadavg(), "python": platform.python_version()},
               "clock": "wall" if args.wall else "cpu", "command": "python " + " ".join(sys.argv),
               "results_us": res, "stats": st}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
