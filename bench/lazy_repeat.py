"""lazy_repeat.py: one lazy workload repeated, for CPU timing or instruction counts (issue 11's per-op and
per-call host cost; bench/results/2026-12-03-lazy11-host.md).

Workloads (1000 float32 elements, the current device: the host, a GPU, or the mock HIP library):
  lazy10   bench_python_gpu.py's ten_ops(x) built and loom.eval'ed
  build10  the same expression built only
  expr10   bench_graph_build.py's expr10(a, b, 1.25) built and loom.eval'ed
  expr10b  the same built only
  chain100 100 binary operators (bench_graph_build.py's chain), built only

Run: python bench/lazy_repeat.py MODE N [ROUNDS]      best of ROUNDS rounds of N calls, CPU time, us/call
     python bench/lazy_repeat.py MODE N --count      N calls and nothing else after 300 warm-up calls (for
         valgrind --tool=callgrind: per call = (Ir with N=1500 - Ir with N=500) / 1000, main thread)
"""
import sys
import time

import numpy as np

import loom


def ten_ops(v):
    return ((((v * 2 + 1) * v - 3) / 4 + v) * 0.5 - v) * 1.25 + 2


def expr10(a, b, s):
    return ((a * s + b) * (a - b) + 1.5) / (b * b + 2.0) - a * 0.25


def chain(x, a, b):
    for _ in range(20):
        x = x * a
        x = x + 0.5
        x = 2.0 * x
        x = x - b
        x = x / 3.0
    return x


def main():
    mode, n = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(0)
    x = loom.asarray(np.ones(1000, np.float32) + np.float32(0.5))
    a = loom.asarray(rng.random(1000, dtype=np.float32))
    b = loom.asarray(rng.random(1000, dtype=np.float32) + np.float32(0.5))
    loom.eval(x, a, b)
    f = {"lazy10": lambda: loom.eval(ten_ops(x)), "build10": lambda: ten_ops(x),
         "expr10": lambda: loom.eval(expr10(a, b, 1.25)), "expr10b": lambda: expr10(a, b, 1.25),
         "chain100": lambda: chain(x, a, b)}[mode]
    if "--count" in sys.argv:
        for _ in range(300):
            f()
        for _ in range(n):
            f()
        return
    for _ in range(2000):
        f()
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    best = float("inf")
    for _ in range(rounds):
        t = time.process_time_ns()
        for _ in range(n):
            f()
        best = min(best, (time.process_time_ns() - t) / n / 1e3)
    print(f"{mode}: {best:.3f} us/call (CPU time, best of {rounds} rounds of {n})")


if __name__ == "__main__":
    main()
