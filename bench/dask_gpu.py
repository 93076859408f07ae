# SPDX-License-Identifier: Apache-2.0
"""dask_gpu.py: Dask on GPUs with loom chunks vs CuPy chunks, on 1 and 2 GPUs (issue 18).

One worker process per GPU (dask_cuda.LocalCUDACluster when dask-cuda is installed; otherwise the same
layout by hand: a distributed SpecCluster whose Nanny i runs with CUDA_VISIBLE_DEVICES=i). The arrays
are made on the workers (random chunks, never on the client): CuPy chunks from cupy.random, loom chunks
the same CuPy chunks taken zero-copy (loom.asarray over __cuda_array_interface__) and copied once, so
both sides start from the same data and the copy is not timed; one array is held at a time. Workloads (each compared with the CuPy
result, then timed, best of LOOM_DASK_BENCH_REPS runs):
  - normalized: ((x - x.mean(0)) / x.std(0)).sum(1)           (reductions + elementwise; memory-bound)
  - blockwise:  (exp(-x*x) * 2 + x * 3 - 1).sum()              (one fused kernel per chunk in loom)
  - compute:    (sin(x)**2 + cos(x)**2 * tanh(x) + exp(-x*x)*log1p(x*x)).sum()  (math-heavy, for scaling)
Prints a table and writes bench/results/<date>-dask-gpu.json. Exits 0 with a message (writing nothing)
when there is no GPU or dask / distributed / cupy are missing.

Environment: LOOM_DASK_BENCH_GB (array size per run; default 32 on one GPU and 200 over two, the
issue's figures; use less for a quick check), LOOM_DASK_BENCH_GPUS ("1,2": GPU counts to run),
LOOM_DASK_BENCH_REPS (default 3), LOOM_DASK_BENCH_CHUNK_MB (default 1024).
"""
import datetime
import json
import os
import pathlib
import platform
import sys
import time


def _skip(why):
    print(f"dask_gpu: skipped: {why}")
    sys.exit(0)


def gpu_count():
    try:
        import loom
        return loom.cuda.runtime.getDeviceCount()
    except Exception:
        return 0


def make_cluster(n):
    """(cluster, how): one worker process per GPU, GPUs 0..n-1."""
    try:
        from dask_cuda import LocalCUDACluster
        return LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(map(str, range(n))), threads_per_worker=1,
                                dashboard_address=None, silence_logs=40), "dask_cuda.LocalCUDACluster"
    except ImportError:
        from distributed import Nanny, Scheduler, SpecCluster
        workers = {i: {"cls": Nanny, "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": str(i)},
                                                  "memory_limit": 0}} for i in range(n)}
        sched = {"cls": Scheduler, "options": {"dashboard_address": None}}
        return SpecCluster(workers=workers, scheduler=sched, silence_logs=40), "SpecCluster (CUDA_VISIBLE_DEVICES per Nanny)"


def _cupy_chunk(block_id, rows, cols, seed):
    import cupy
    rs = cupy.random.RandomState(seed + block_id[0])
    return rs.standard_normal((rows, cols), dtype=cupy.float64)


def _to_loom(x):
    import loom
    r = loom.asarray(x).copy()  # loom-owned memory, so the CuPy chunk can be freed
    loom.eval(r)
    return r


def _worker_facts():
    import os
    import loom
    return {"CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "gpus_seen": loom.cuda.runtime.getDeviceCount(), "kernels": loom.stats()["kernels_launched"]}


def arrays(gb, chunk_mb, seed=1):
    import cupy
    import dask.array as da
    import loom
    cols = 4096
    chunk_rows = max(1, (chunk_mb << 20) // (8 * cols))
    nchunks = max(1, int(gb * 2**30) // (chunk_rows * cols * 8))
    rows = nchunks * chunk_rows
    xc = da.map_blocks(_cupy_chunk, rows=chunk_rows, cols=cols, seed=seed, chunks=((chunk_rows,) * nchunks, (cols,)),
                       dtype="float64", meta=cupy.empty((0, 0)))
    xl = xc.map_blocks(_to_loom, dtype="float64", meta=loom.empty((0, 0)))
    return xc, xl


def workloads(x, xp):
    return {
        "normalized": lambda: ((x - x.mean(0)) / x.std(0)).sum(1),
        "blockwise": lambda: (xp.exp(-x * x) * 2 + x * 3 - 1).sum(),
        "compute": lambda: (xp.sin(x) ** 2 + xp.cos(x) ** 2 * xp.tanh(x) + xp.exp(-x * x) * xp.log1p(x * x)).sum(),
    }


def _host(v):
    import numpy as np
    if hasattr(v, "get"):
        v = v.get()
    return np.asarray(v)


def _free_pools():
    import cupy
    import loom
    cupy.get_default_memory_pool().free_all_blocks()
    loom.get_default_memory_pool().free_all_blocks()


def _timed(client, make, reps):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        client.compute(make(), sync=True)
        best = min(best, time.perf_counter() - t)
    return best


def run(n, gb, chunk_mb, reps):
    """One cluster of n GPUs. The CuPy array is persisted, its workloads checked and timed, released;
    then the loom array (one copy of the same chunks) likewise: one array at a time, so 200 GB fit
    two GPUs of 141 GB."""
    import dask.array as da
    import numpy as np
    from distributed import Client, wait
    cluster, how = make_cluster(n)
    client = Client(cluster)
    try:
        facts = client.run(_worker_facts)
        xc, xl = arrays(gb, chunk_mb)
        out = {"gpus": n, "cluster": how, "workers": facts, "gb": xc.nbytes / 2**30, "chunks": xc.npartitions,
               "chunk_mb": xc.nbytes / xc.npartitions / 2**20, "workloads": {}}
        ref, times = {}, {}
        xp = client.persist(xc)
        wait(xp)
        for name, make in workloads(xp, da).items():
            ref[name] = _host(client.compute(make(), sync=True))
            times[name] = {"cupy": _timed(client, make, reps)}
        del xp
        client.run(_free_pools)
        xp = client.persist(xl)
        wait(xp)
        for name, make in workloads(xp, da).items():
            got = _host(client.compute(make(), sync=True))
            ok = bool(np.allclose(got, ref[name], rtol=1e-9, atol=1e-6 * max(1.0, float(np.abs(ref[name]).max()))))
            times[name]["loom"] = _timed(client, make, reps)
            k0 = sum(f["kernels"] for f in client.run(_worker_facts).values())
            client.compute(make(), sync=True)
            k1 = sum(f["kernels"] for f in client.run(_worker_facts).values())
            w = out["workloads"][name] = {
                "match": ok, "cupy_s": times[name]["cupy"], "loom_s": times[name]["loom"],
                "loom_vs_cupy": times[name]["cupy"] / times[name]["loom"],
                "loom_GBps": xc.nbytes / 1e9 / times[name]["loom"],
                "loom_kernels_per_chunk": (k1 - k0) / xc.npartitions}
            print(f"  {n} GPU  {name:10s} cupy {w['cupy_s']:.3f} s  loom {w['loom_s']:.3f} s  "
                  f"loom/cupy {w['loom_vs_cupy']:.2f}x  {w['loom_GBps']:.0f} GB/s  "
                  f"{w['loom_kernels_per_chunk']:.1f} kernels/chunk  match={ok}", flush=True)
        del xp
        client.run(_free_pools)
        return out
    finally:
        client.close()
        cluster.close()


def main():
    n_gpus = gpu_count()
    if n_gpus == 0:
        _skip("no CUDA GPU")
    for mod in ("dask.array", "distributed", "cupy"):
        try:
            __import__(mod)
        except ImportError:
            _skip(f"{mod} is not installed (bring dask, distributed and dask-cuda as wheels)")
    counts = [int(c) for c in os.environ.get("LOOM_DASK_BENCH_GPUS", "1,2").split(",") if int(c) <= n_gpus]
    reps = int(os.environ.get("LOOM_DASK_BENCH_REPS", "3"))
    chunk_mb = int(os.environ.get("LOOM_DASK_BENCH_CHUNK_MB", "1024"))
    results = []
    for n in counts:
        gb = float(os.environ.get("LOOM_DASK_BENCH_GB", "32" if n == 1 else "200"))
        print(f"dask_gpu: {n} GPU(s), {gb:g} GB of float64, chunks of {chunk_mb} MB", flush=True)
        results.append(run(n, gb, chunk_mb, reps))
    by_n = {r["gpus"]: r for r in results}
    scaling = None
    if 1 in by_n and 2 in by_n:  # throughput per GB, so different sizes compare
        scaling = {k: (by_n[2]["gb"] / by_n[2]["workloads"][k]["loom_s"]) / (by_n[1]["gb"] / by_n[1]["workloads"][k]["loom_s"])
                   for k in by_n[1]["workloads"]}
        print("scaling 1 -> 2 GPUs (loom, GB/s ratio): " + ", ".join(f"{k} {v:.2f}x" for k, v in scaling.items()))
    date = os.environ.get("LOOM_BENCH_DATE", datetime.date.today().isoformat())
    path = pathlib.Path(__file__).resolve().parent / "results" / f"{date}-dask-gpu.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"date": date, "host": platform.node(), "runs": results, "scaling_loom": scaling},
                               indent=1))
    print(f"dask_gpu: wrote {path}")
    if os.environ.get("OUT"):
        pathlib.Path(os.environ["OUT"], path.name).write_text(path.read_text())


if __name__ == "__main__":
    main()
