"""Cold start of host kernels with and without the kernel disk cache (runtime/host_disk.c).

Runs the sample program of tests/python/test_host_disk_cache.py (23 distinct host kernels: math of every
float dtype, integer ops, row / column / full reductions, arg-reductions, var, scans, where, casts,
float16, complex) in fresh processes: with LOOM_HOST_DISK_CACHE=0 (the JIT compiles every kernel), with
the disk cache on and an empty folder (compiled as images and stored), and again on the filled folder
(loaded). Prints wall time, kernels compiled, compile time and cache hits per run.
    .venv/bin/python bench/bench_host_disk.py [repeats]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = open(os.path.join(HERE, "..", "tests", "python", "test_host_disk_cache.py")).read()
SCRIPT = re.search(r"SCRIPT = r'''(.*?)'''", SRC, re.S).group(1)


def run(disk, folder):
    env = dict(os.environ, LOOM_HOST_DISK_CACHE=disk, LOOM_CACHE_DIR=folder)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    st = json.loads(p.stdout.strip().splitlines()[-1])["stats"]
    return wall, st["kernels_compiled"], st["compile_ms"], st["cache_hits"]


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    folder = tempfile.mkdtemp(prefix="loom_bench_disk_")
    print("| run | wall s | kernels compiled | compile ms | cache hits |\n| --- | ---: | ---: | ---: | ---: |")
    runs = [("JIT, disk off", "0"), ("disk on, empty folder", "1")] + [("disk on, filled folder", "1"),
                                                                      ("JIT, disk off", "0")] * repeats
    for label, disk in runs:
        w, n, ms, hits = run(disk, folder)
        print(f"| {label} | {w:.2f} | {n} | {ms:.0f} | {hits} |")


if __name__ == "__main__":
    main()
