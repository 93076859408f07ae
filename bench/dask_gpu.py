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
Each workload is also reported as kernels per chunk (loom's counters in the workers, the whole graph
over the number of chunks: the chunk tasks' kernels plus the tree reduction's on the small partials),
"chunk_s" (one chunk's expression timed in the worker, without Dask: what the device needs per chunk,
for each library) and "dask_overhead_s" (a graph of the same tasks doing nothing: first element of
each chunk, summed), so that a gap to the hardware shows whether it lies in the kernels or in Dask.
Prints a table and writes bench/results/<date>-dask-gpu.json. Exits 0 with a message (writing nothing)
when there is no GPU or dask / distributed / cupy are missing.

Host mode (LOOM_DASK_BENCH_HOST=1, no GPU needed): the same workloads on a distributed.LocalCluster of
one worker process with one thread per core, NumPy chunks vs loom chunks (the same values, made on
the worker), default 1 GB in chunks of 64 MB; writes bench/results/<date>-dask-host.json.

Environment: LOOM_DASK_BENCH_GB (array size per run; default 32 on one GPU and 200 over two, the
issue's figures; use less for a quick check), LOOM_DASK_BENCH_GPUS ("1,2": GPU counts to run),
LOOM_DASK_BENCH_REPS (default 3), LOOM_DASK_BENCH_CHUNK_MB (default 1024; 64 in host mode),
LOOM_DASK_BENCH_HOST (1: host mode).
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


def make_host_cluster():
    """(cluster, how): one worker process, one thread per core (NumPy runs one chunk per thread; loom's
    host backend spreads each chunk over the cores as well)."""
    from distributed import LocalCluster
    threads = os.cpu_count() or 1
    return LocalCluster(n_workers=1, threads_per_worker=threads, processes=True, dashboard_address=None,
                        memory_limit=0, silence_logs=40), f"distributed.LocalCluster (1 process, {threads} threads)"


def _numpy_chunk(block_id, rows, cols, seed):
    import numpy
    return numpy.random.default_rng(seed + block_id[0]).standard_normal((rows, cols))


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


def arrays(gb, chunk_mb, seed=1, host=False):
    """(peer, loom): the peer's chunks (CuPy, or NumPy in host mode) made on the workers, and loom chunks
    that are copies of them."""
    import dask.array as da
    import loom
    if host:
        import numpy
        make, meta = _numpy_chunk, numpy.empty((0, 0))
    else:
        import cupy
        make, meta = _cupy_chunk, cupy.empty((0, 0))
    cols = 4096
    chunk_rows = max(1, (chunk_mb << 20) // (8 * cols))
    nchunks = max(1, int(gb * 2**30) // (chunk_rows * cols * 8))
    xc = da.map_blocks(make, rows=chunk_rows, cols=cols, seed=seed, chunks=((chunk_rows,) * nchunks, (cols,)),
                       dtype="float64", meta=meta)
    xl = xc.map_blocks(_to_loom, dtype="float64", meta=loom.empty((0, 0)))
    return xc, xl


def workloads(x, xp):
    return {
        "normalized": lambda: ((x - x.mean(0)) / x.std(0)).sum(1),
        "blockwise": lambda: (xp.exp(-x * x) * 2 + x * 3 - 1).sum(),
        "compute": lambda: (xp.sin(x) ** 2 + xp.cos(x) ** 2 * xp.tanh(x) + xp.exp(-x * x) * xp.log1p(x * x)).sum(),
    }


def _chunk_exprs(b, xp):
    """One chunk's share of each workload, written with the chunk library xp (the normalized one with the
    chunk's own mean and std: its three passes)."""
    return {
        "normalized": lambda: ((b - b.mean(0)) / b.std(0)).sum(1),
        "blockwise": lambda: (xp.exp(-b * b) * 2 + b * 3 - 1).sum(),
        "compute": lambda: (xp.sin(b) ** 2 + xp.cos(b) ** 2 * xp.tanh(b) + xp.exp(-b * b) * xp.log1p(b * b)).sum(),
    }


def _time_chunk(b, reps):
    """{workload: best seconds} of one chunk's expressions in this worker, without Dask, the result
    finished (loom: evaluated; CuPy: the device synchronized)."""
    import numpy
    mod = type(b).__module__.split(".")[0]
    if mod == "loom":
        import loom as xp

        def finish(r):
            xp.eval(r)
            xp.cuda.Device().synchronize() if b._on_gpu else None
    elif mod == "cupy":
        import cupy as xp

        def finish(r):
            xp.cuda.Device().synchronize()
    else:
        xp = numpy

        def finish(r):
            pass
    out = {}
    for name, f in _chunk_exprs(b, xp).items():
        finish(f())
        best = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            finish(f())
            best = min(best, time.perf_counter() - t)
        out[name] = best
    return out


def _first_element(b):
    return b[:1, :1]


def _host(v):
    import numpy as np
    if hasattr(v, "get"):
        v = v.get()
    return np.asarray(v)


def _free_pools():
    import loom
    loom.get_default_memory_pool().free_all_blocks()
    try:
        import cupy
        cupy.get_default_memory_pool().free_all_blocks()
    except ImportError:
        pass


def _timed(client, make, reps):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        client.compute(make(), sync=True)
        best = min(best, time.perf_counter() - t)
    return best


def _measure(client, x, reps):
    """Per workload: the result, the best time of reps, and one chunk's time in the worker; and the time
    of a graph of the same chunk tasks doing nothing (Dask's own share)."""
    import dask.array as da
    from distributed import wait
    xp = client.persist(x)
    wait(xp)
    res, times = {}, {}
    for name, make in workloads(xp, da).items():
        res[name] = _host(client.compute(make(), sync=True))  # also the warm-up (compiles)
        times[name] = _timed(client, make, reps)
    chunk = client.submit(_time_chunk, client.futures_of(xp)[0], reps, pure=False).result()
    noop = lambda: xp.map_blocks(_first_element, chunks=((1,) * xp.numblocks[0], (1,))).sum()  # noqa: E731
    client.compute(noop(), sync=True)
    overhead = _timed(client, noop, reps)
    return xp, res, times, chunk, overhead


def run(n, gb, chunk_mb, reps, host=False):
    """One cluster of n GPUs (host mode: one host worker). The peer's array (CuPy, or NumPy) is
    persisted, its workloads checked and timed, released; then the loom array (one copy of the same
    chunks) likewise: one array at a time, so 200 GB fit two GPUs of 141 GB."""
    import dask.array as da
    import numpy as np
    from distributed import Client
    peer = "numpy" if host else "cupy"
    cluster, how = make_host_cluster() if host else make_cluster(n)
    client = Client(cluster)
    try:
        facts = client.run(_worker_facts)
        xc, xl = arrays(gb, chunk_mb, host=host)
        out = {"gpus": 0 if host else n, "cluster": how, "workers": facts, "gb": xc.nbytes / 2**30,
               "chunks": xc.npartitions, "chunk_mb": xc.nbytes / xc.npartitions / 2**20, "workloads": {}}
        xp, ref, peer_t, peer_chunk, peer_over = _measure(client, xc, reps)
        del xp
        client.run(_free_pools)
        xp, got, loom_t, loom_chunk, loom_over = _measure(client, xl, reps)
        out["dask_overhead_s"] = {peer: peer_over, "loom": loom_over}
        where = "host" if host else f"{n} GPU"
        for name, make in workloads(xp, da).items():
            ok = bool(np.allclose(got[name], ref[name], rtol=1e-9,
                                  atol=1e-6 * max(1.0, float(np.abs(ref[name]).max()))))
            k0 = sum(f["kernels"] for f in client.run(_worker_facts).values())
            client.compute(make(), sync=True)
            k1 = sum(f["kernels"] for f in client.run(_worker_facts).values())
            w = out["workloads"][name] = {
                "match": ok, f"{peer}_s": peer_t[name], "loom_s": loom_t[name],
                f"loom_vs_{peer}": peer_t[name] / loom_t[name],
                "loom_GBps": xc.nbytes / 1e9 / loom_t[name],
                "loom_kernels_per_chunk": (k1 - k0) / xc.npartitions,
                "chunk_s": {peer: peer_chunk[name], "loom": loom_chunk[name]}}
            print(f"  {where}  {name:10s} {peer} {w[f'{peer}_s']:.3f} s  loom {w['loom_s']:.3f} s  "
                  f"loom/{peer} {w[f'loom_vs_{peer}']:.2f}x  {w['loom_GBps']:.1f} GB/s  "
                  f"{w['loom_kernels_per_chunk']:.2f} kernels/chunk  one chunk: {peer} "
                  f"{peer_chunk[name] * 1e3:.2f} ms, loom {loom_chunk[name] * 1e3:.2f} ms  match={ok}", flush=True)
        print(f"  {where}  dask overhead (same tasks, no work): {peer} {peer_over:.3f} s  loom {loom_over:.3f} s",
              flush=True)
        del xp
        client.run(_free_pools)
        return out
    finally:
        client.close()
        cluster.close()


def main_host():
    for mod in ("dask.array", "distributed"):
        try:
            __import__(mod)
        except ImportError:
            _skip(f"{mod} is not installed (pyproject's dask group)")
    reps = int(os.environ.get("LOOM_DASK_BENCH_REPS", "3"))
    chunk_mb = int(os.environ.get("LOOM_DASK_BENCH_CHUNK_MB", "64"))
    gb = float(os.environ.get("LOOM_DASK_BENCH_GB", "1"))
    print(f"dask_gpu (host mode): {gb:g} GB of float64, chunks of {chunk_mb} MB", flush=True)
    _write("dask-host", {"runs": [run(0, gb, chunk_mb, reps, host=True)]})


def _write(kind, payload):
    date = os.environ.get("LOOM_BENCH_DATE", datetime.date.today().isoformat())
    path = pathlib.Path(__file__).resolve().parent / "results" / f"{date}-{kind}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"date": date, "host": platform.node(), **payload}, indent=1))
    print(f"dask_gpu: wrote {path}")
    if os.environ.get("OUT"):
        pathlib.Path(os.environ["OUT"], path.name).write_text(path.read_text())


def main():
    if os.environ.get("LOOM_DASK_BENCH_HOST") == "1":
        return main_host()
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
    _write("dask-gpu", {"runs": results, "scaling_loom": scaling})


if __name__ == "__main__":
    main()
