"""bench_dask_threads.py: Dask's threaded scheduler over loom chunks on the host, against NumPy chunks.

Dask's default scheduler for dask.array runs chunk tasks in a pool of threads: with loom holding the GIL
through an evaluation, the tasks' evaluations ran one at a time; with the GIL released around loom_eval
(python/src/eval.c) they overlap each other and the scheduler's Python code. Per workload and number of
threads (num_workers): the median wall time of `.compute()`, checked against the NumPy chunks' result.
Nothing is compiled inside the timed runs (one warm-up first; compiled_while_timed says so).

Environment: LOOM_DASK_THREADS_MB (array size, default 256), LOOM_DASK_THREADS_CHUNKS (chunks along
axis 0, default 16), LOOM_DASK_THREADS_REPS (default 5), LOOM_DASK_THREADS_WORKERS (default "1,2,4"),
LOOM_DASK_THREADS_WORKLOADS (names, comma-separated; default all). With LOOM_NUM_THREADS=1 each loom
evaluation runs on one core, so that Dask's threads, not loom's pool, spread the chunks over the cores:
there the GIL decides whether two chunks are computed at once.
Prints one line per (workload, library, workers) and a JSON summary last.
"""
import json
import os
import statistics
import sys
import time

import numpy as np

import loom

try:
    import dask
    import dask.array as da
except ImportError:  # the `dask` dependency group of pyproject.toml
    print("bench_dask_threads: dask is not installed; skipped")
    sys.exit(0)


def workloads(x):
    return {
        "blockwise": lambda: (da.sin(x) * 2.0 + da.exp(-abs(x)) * x) / (1.0 + x * x),
        "reduction": lambda: (da.exp(-abs(x)) * da.cos(x)).sum(axis=1),
        "normalized": lambda: ((x - x.mean(0)) / x.std(0)).sum(1),
    }


def time_compute(make, workers, reps):
    times = []
    for _ in range(reps):
        expr = make()
        t0 = time.perf_counter()
        r = expr.compute(scheduler="threads", num_workers=workers)
        if isinstance(r, loom.ndarray):
            r = loom.asnumpy(r)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), r


def main():
    mb = int(os.environ.get("LOOM_DASK_THREADS_MB", "256"))
    nchunks = int(os.environ.get("LOOM_DASK_THREADS_CHUNKS", "16"))
    reps = int(os.environ.get("LOOM_DASK_THREADS_REPS", "5"))
    worker_counts = [int(w) for w in os.environ.get("LOOM_DASK_THREADS_WORKERS", "1,2,4").split(",")]
    cols = 1024
    rows = max(nchunks, mb * (1 << 20) // (8 * cols))
    rows -= rows % nchunks
    xn = np.random.default_rng(0).standard_normal((rows, cols))
    chunks = (rows // nchunks, cols)
    arrays = {"numpy": da.from_array(xn, chunks=chunks),
              "loom": da.from_array(xn, chunks=chunks, asarray=loom.asarray)}
    results = {"mb": mb, "chunks": nchunks, "reps": reps, "cpus": os.cpu_count(),
               "loadavg": os.getloadavg()[0], "loom_threads": loom._core.config_info()["num_threads"], "runs": []}
    print(f"array {rows}x{cols} float64 ({rows * cols * 8 / 2**20:.0f} MB), {nchunks} chunks; "
          f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}")
    only = os.environ.get("LOOM_DASK_THREADS_WORKLOADS")
    for name in workloads(arrays["numpy"]):
        if only and name not in only.split(","):
            continue
        ref = None
        for lib in ("numpy", "loom"):
            make = workloads(arrays[lib])[name]
            time_compute(make, worker_counts[-1], 1)  # warm-up: compiles, caches
            for w in worker_counts:
                compiled = loom.stats()["kernels_compiled"]
                t, r = time_compute(make, w, reps)
                if ref is None:
                    ref = r
                else:
                    np.testing.assert_allclose(r, ref, rtol=1e-9, atol=1e-9)
                row = {"workload": name, "lib": lib, "workers": w, "median_s": t,
                       "compiled_while_timed": loom.stats()["kernels_compiled"] - compiled}
                results["runs"].append(row)
                print(f"{name:11s} {lib:6s} workers={w}: {t * 1e3:8.1f} ms")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
