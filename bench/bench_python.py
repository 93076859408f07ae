"""bench_python.py: a cached @loom.fuse expression of 4 float64 inputs over 10^7 elements vs NumPy,
and the host time per cached call on 1000 float32 elements (loom arrays and NumPy arrays; best of
rounds of back-to-back calls), the per-call overhead issue 4 bounds on the GPU.

Prints a markdown table and writes bench/results/<date>-python-host.json (machine, date, command).
Target (issue 4): loom >= 2x NumPy on the host CPU. Run: python3 bench/bench_python.py [n] [repeats]
"""
import datetime
import json
import os
import platform
import sys
import time

import numpy as np

import loom


@loom.fuse(kernel_name="bench4")
def fused(a, b, c, d):
    return a * b + c * d - loom.exp(a) / (d + 1.0)


def numpy_expr(a, b, c, d):
    return a * b + c * d - np.exp(a) / (d + 1.0)


def best_of(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), sorted(times)[len(times) // 2]


def per_call_us(fn, calls=2000, rounds=15):
    """Best over rounds of (wall time of `calls` back-to-back calls) / calls, in us."""
    for _ in range(200):
        fn()
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return best * 1e6


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10**7
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rng = np.random.default_rng(0)
    np_args = [rng.random(n) for _ in range(4)]
    lm_args = [loom.asarray(x) for x in np_args]
    ok = np.allclose(fused(*np_args), numpy_expr(*np_args), rtol=1e-9, atol=1e-12)
    fused(*lm_args).get()  # warm: trace + compile
    small_np = [x[:1000].astype(np.float32) for x in np_args]
    small = [loom.asarray(x) for x in small_np]
    fused(*small)
    rows = []
    t_np, m_np = best_of(lambda: numpy_expr(*np_args), repeats)
    t_lm, m_lm = best_of(lambda: fused(*lm_args), repeats)
    t_lmn, m_lmn = best_of(lambda: fused(*np_args), repeats)
    s0, s1, s2, s3 = small
    t_small = per_call_us(lambda: fused(s0, s1, s2, s3))
    n0, n1, n2, n3 = small_np
    t_small_np = per_call_us(lambda: fused(n0, n1, n2, n3))
    gbytes = 5 * 8 * n / 1e9
    rows.append(("numpy", t_np, m_np, gbytes / t_np, 1.0))
    rows.append(("loom @fuse (loom arrays)", t_lm, m_lm, gbytes / t_lm, t_np / t_lm))
    rows.append(("loom @fuse (NumPy in/out)", t_lmn, m_lmn, gbytes / t_lmn, t_np / t_lmn))
    print(f"# loom Python host benchmark: a*b + c*d - exp(a)/(d+1), float64, n = {n}, best of {repeats}")
    print(f"results equal NumPy: {ok}\n")
    print("| variant | best ms | median ms | GB/s | speedup vs NumPy |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, t, m, bw, sp in rows:
        print(f"| {name} | {t * 1e3:.2f} | {m * 1e3:.2f} | {bw:.2f} | {sp:.2f}x |")
    print(f"\nhost time per cached @fuse call, 4 float32 inputs of 1000 elements (kernel included), best of "
          f"15 rounds of 2000 calls: loom arrays {t_small:.2f} us, NumPy arrays {t_small_np:.2f} us")
    speedup = t_np / t_lm
    print(f"target >= 2x NumPy: {'MET' if speedup >= 2 else 'NOT MET'} ({speedup:.2f}x)")
    now = datetime.datetime.now()
    out = {
        "benchmark": "python-host",
        "date": now.isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                    "cpus": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__},
        "command": "python3 " + " ".join(sys.argv),
        "n": n, "repeats": repeats, "equal_to_numpy": bool(ok),
        "numpy_ms": t_np * 1e3, "loom_fuse_ms": t_lm * 1e3, "loom_fuse_numpy_io_ms": t_lmn * 1e3,
        "speedup": speedup, "target_speedup": 2.0, "small_call_us": t_small, "small_call_numpy_io_us": t_small_np,
        "stats": loom.stats(),
    }
    here = os.path.dirname(os.path.abspath(__file__))
    os.makedirs(os.path.join(here, "results"), exist_ok=True)
    path = os.path.join(here, "results", f"{now.date().isoformat()}-python-host.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=2)
    print(f"wrote {os.path.relpath(path)}")


if __name__ == "__main__":
    main()
