# SPDX-License-Identifier: Apache-2.0
"""dask_gpu.py: Dask on GPUs with loom chunks vs CuPy chunks, on 1 and 2 GPUs (issue 18).

One worker process per GPU (dask_cuda.LocalCUDACluster when dask-cuda is installed; otherwise the same
layout by hand: a distributed SpecCluster whose Nanny i runs with CUDA_VISIBLE_DEVICES=i), one thread
per worker; the same cluster and the same Dask settings for both libraries. The arrays are made on the
workers (random chunks, never on the client) and persisted before anything is timed: CuPy chunks from
cupy.random, loom chunks the same CuPy chunks copied once into loom memory (not timed); one array is
held at a time. Workloads (each checked against the CuPy result, warmed up once, then timed
LOOM_DASK_BENCH_REPS times; medians reported, minima too):
  - normalized: ((x - x.mean(0)) / x.std(0)).sum(1)           (reductions + elementwise; memory-bound)
  - blockwise:  (exp(-x*x) * 2 + x * 3 - 1).sum()              (one fused kernel per chunk in loom)
  - compute:    (sin(x)**2 + cos(x)**2 * tanh(x) + exp(-x*x)*log1p(x*x)).sum()  (math-heavy, for scaling)
  - rechunk:    (x.rechunk((2 * rows, cols // 2)) * 2 + 1).sum()  (data movement between chunks, then a fused pass)
A timed run is end to end, as a user sees it: the client builds the graph, Dask optimizes and schedules
it, the workers run it, the result comes back. Where the time goes, per workload and library:
  - "build_s" / "optimize_s": the client's graph construction (meta arrays included) and dask.optimize;
  - "tasks" (tasks run, from the task stream) and "tasks_per_chunk"; "worker_busy_s": the summed task
    durations in the workers (for a library that only enqueues GPU work, less than the GPU's time);
  - "chunk": Dask's own chunk steps on one chunk in the worker, without Dask around them (blockwise and
    compute: the expression's sum with keepdims; normalized: mean_chunk, moment_chunk and the final pass),
    "call_s" until the calls return (what holds the worker's thread per chunk) and "done_s" until the
    device has finished (what the GPU needs per chunk); loom's task-end evaluation included; the same
    chunk steps run back to back without waiting ("pipe_call_s" / "pipe_done_s", per chunk): a library
    that only enqueues has pipe_call_s well below pipe_done_s, one whose calls wait for the device has
    them close (the end-to-end time is then Dask's scheduling plus the GPU's, not the larger of the two);
  - "loom_kernels_per_chunk" (loom's counters in the workers over one run, chunk tasks and tree tasks) and
    "loom_compiled_while_timed" (kernels compiled during the timed runs: 0 after the warm-up);
  - "dask_overhead_s": a graph of the same chunk count doing nothing (first element of each chunk, summed).
LOOM_DASK_BENCH_CHUNK_MB may list several chunk sizes (the array size stays LOOM_DASK_BENCH_GB): a sweep,
every size reported; "headline_chunk_mb" names the one quoted in the README and why.
Prints a line per workload as it goes and a summary table per cluster (end to end for both libraries,
the ratio, GB/s, tasks and loom kernels per chunk, loom's back-to-back call/done per chunk), and writes
bench/results/<date>-dask-gpu.json. Exits 0 with a message (writing nothing)
when there is no GPU or dask / distributed / cupy are missing.

Host mode (LOOM_DASK_BENCH_HOST=1, no GPU needed): the same on a distributed.LocalCluster of one worker
process with one thread per core, NumPy chunks vs loom chunks (the same values, made on the
worker), default 1 GB in chunks of 64 MB; writes bench/results/<date>-dask-host.json.

Environment: LOOM_DASK_BENCH_GB (array size per run; default 32 on one GPU and 200 over two, the
issue's figures), LOOM_DASK_BENCH_GPUS ("1,2": GPU counts to run), LOOM_DASK_BENCH_REPS (default 5),
LOOM_DASK_BENCH_CHUNK_MB (comma-separated; default 1024, 64 in host mode), LOOM_DASK_BENCH_SPLIT_EVERY
(comma-separated Dask settings, each run for both libraries: "default" is Dask's split_every, N is
split_every={0: N, 1: N}; default "32,default"), LOOM_DASK_BENCH_HOST (1: host mode),
LOOM_DASK_BENCH_BUDGET_S (seconds for a cluster's run: sizes that would pass it are skipped and listed).
Chunk sizes 1024 and 4096 MB on one H200, Loom vs CuPy, in one call (expected ~100 s; the budget skips
what would not fit):
    LOOM_DASK_BENCH_GPUS=1 LOOM_DASK_BENCH_CHUNK_MB=1024,4096 LOOM_DASK_BENCH_SPLIT_EVERY=32 \
    LOOM_DASK_BENCH_REPS=3 LOOM_DASK_BENCH_BUDGET_S=140 python bench/dask_gpu.py The JSON is
written after every chunk size (a run stopped by a time limit keeps what it measured); the headline is
the first setting listed.
"""
import datetime
import json
import os
import pathlib
import platform
import statistics
import sys
import time

T0 = time.perf_counter()  # the run's start (LOOM_DASK_BENCH_BUDGET_S counts from here)
HEADLINE_MB = 1024
HEADLINE_WHY = ("1 GB chunks: within Dask's array guidance (chunks of 100 MB or more; fewer, larger chunks "
                "cost less scheduling) and the size class of Dask's own GPU examples (10000 x 10000 float64), "
                "32 chunks per GPU; split_every={0: 32, 1: 32} for both libraries: Dask's default 4 splits a "
                "full 2-d reduction 2 ways per level (31 tree tasks for 32 chunks); every size and setting of "
                "the run is reported beside it")


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
    r = loom.asarray(x).copy()  # loom-owned memory, so the peer's chunk can be freed
    loom.eval(r)
    return r


def _worker_facts():
    import os
    import loom
    s = loom.stats()
    return {"CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "gpus_seen": loom.cuda.runtime.getDeviceCount(), "kernels": s["kernels_launched"],
            "compiled": s["kernels_compiled"]}


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
    chunk_rows = max(1, int(chunk_mb * 2**20) // (8 * cols))
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
        # twice the rows, half the columns: every new chunk joins pieces of two old ones (getitem + concatenate)
        "rechunk": lambda: (x.rechunk((2 * x.chunks[0][0], max(1, x.shape[1] // 2))) * 2 + 1).sum(),
    }


def _chunk_steps(b, xp):
    """Each workload's chunk steps as Dask's optimized graph runs them on one chunk b (library xp): the
    elementwise chain and the sum's chunk step (keepdims), or mean_chunk, moment_chunk and the final
    pass (with b's first rows standing in for the global mean and std)."""
    from dask.array.reductions import mean_chunk, moment_chunk
    m, s = b[:1], b[1:2]
    return {
        "normalized": lambda: (mean_chunk(b, axis=(0,), keepdims=True), moment_chunk(b, axis=(0,), keepdims=True),
                               ((b - m) / s).sum(axis=1, keepdims=True)),
        "blockwise": lambda: (xp.exp(-b * b) * 2 + b * 3 - 1).sum(axis=(0, 1), keepdims=True),
        "compute": lambda: (xp.sin(b) ** 2 + xp.cos(b) ** 2 * xp.tanh(b) + xp.exp(-b * b) * xp.log1p(b * b))
        .sum(axis=(0, 1), keepdims=True),
        "rechunk": lambda: (xp.concatenate([b[:, : b.shape[1] // 2], b[:, : b.shape[1] // 2]], axis=0) * 2 + 1)
        .sum(axis=(0, 1), keepdims=True),
    }


def _time_chunk(b, reps):
    """{workload: {"call_s", "done_s"}}: medians over reps of one chunk's steps in this worker, until the
    calls return (loom: with its task-end evaluation, as in a task) and until the device has finished."""
    import numpy
    mod = type(b).__module__.split(".")[0]
    if mod == "loom":
        import loom as xp
        from loom._dask import _finished_result as end_of_task

        def sync():
            xp.cuda.Device().synchronize() if b._on_gpu else None
    elif mod == "cupy":
        import cupy as xp

        def end_of_task(r):
            return r

        def sync():
            xp.cuda.Device().synchronize()
    else:
        xp = numpy

        def end_of_task(r):
            return r

        def sync():
            pass
    out = {}
    for name, f in _chunk_steps(b, xp).items():
        end_of_task(f())
        sync()
        calls, dones = [], []
        for _ in range(reps):
            t = time.perf_counter()
            r = end_of_task(f())
            calls.append(time.perf_counter() - t)
            sync()
            dones.append(time.perf_counter() - t)
            del r
        # back to back, as a worker's thread runs its tasks: the calls of `reps` chunks, then one wait.
        # A library that only enqueues returns long before the device is done (pipe_call_s << pipe_done_s);
        # one whose calls wait for the device (for its own work or earlier work) shows
        # pipe_call_s ~ pipe_done_s, even where call_s (after an idle device) looked small.
        t = time.perf_counter()
        held = [end_of_task(f()) for _ in range(reps)]
        pipe_call = time.perf_counter() - t
        sync()
        pipe_done = time.perf_counter() - t
        del held
        out[name] = {"call_s": statistics.median(calls), "done_s": statistics.median(dones),
                     "pipe_call_s": pipe_call / reps, "pipe_done_s": pipe_done / reps}
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


def _stats(client, key):
    return sum(f[key] for f in client.run(_worker_facts).values())


def _timed(client, make, reps):
    """(end-to-end seconds of each rep, client graph-construction seconds of each rep)."""
    total, build = [], []
    for _ in range(reps):
        t = time.perf_counter()
        e = make()
        build.append(time.perf_counter() - t)
        client.compute(e, sync=True)
        total.append(time.perf_counter() - t)
    return total, build


def _optimize_s(make, reps=3):
    import dask
    ts = []
    for _ in range(reps):
        e = make()
        t = time.perf_counter()
        dask.optimize(e)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def _task_stream_run(client, make):
    """One more run under the task stream: (tasks run, summed task durations, kernels launched)."""
    from distributed import get_task_stream
    k0 = _stats(client, "kernels")
    with get_task_stream(client) as ts:
        client.compute(make(), sync=True)
    k1 = _stats(client, "kernels")
    spans = [ss["stop"] - ss["start"] for d in ts.data for ss in d["startstops"] if ss["action"] == "compute"]
    return len(spans), sum(spans), k1 - k0


def _measure(client, x, reps):
    """Per workload: the result, the timed runs and where their time goes; one chunk's steps timed in a
    worker; the do-nothing graph of the same chunks (Dask's own share)."""
    import dask.array as da
    from distributed import wait
    xp = client.persist(x)
    wait(xp)
    out = {}
    for name, make in workloads(xp, da).items():
        res = _host(client.compute(make(), sync=True))  # also the warm-up (compiles)
        c0 = _stats(client, "compiled")
        total, build = _timed(client, make, reps)
        compiled = _stats(client, "compiled") - c0
        tasks, busy, kernels = _task_stream_run(client, make)
        out[name] = {"result": res, "s": statistics.median(total), "min_s": min(total),
                     "build_s": statistics.median(build), "optimize_s": _optimize_s(make),
                     "tasks": tasks, "worker_busy_s": busy, "kernels": kernels, "compiled_while_timed": compiled}
    chunk = client.submit(_time_chunk, client.futures_of(xp)[0], reps, pure=False).result()
    noop = lambda: xp.map_blocks(_first_element, chunks=((1,) * xp.numblocks[0], (1,))).sum()  # noqa: E731
    client.compute(noop(), sync=True)
    overhead = statistics.median(_timed(client, noop, reps)[0])
    return out, chunk, overhead


def run_one_size(client, gb, chunk_mb, reps, peer, host, where):
    """The peer's array (CuPy, or NumPy) persisted, its workloads checked and timed, released; then the
    loom array (a copy of the same chunks) likewise: one array at a time, so 200 GB fit two GPUs."""
    import numpy as np
    xc, xl = arrays(gb, chunk_mb, host=host)
    nchunks = xc.npartitions
    ref, peer_chunk, peer_over = _measure(client, xc, reps)
    client.run(_free_pools)
    got, loom_chunk, loom_over = _measure(client, xl, reps)
    client.run(_free_pools)
    size = {"chunk_mb": xc.nbytes / nchunks / 2**20, "chunks": nchunks, "gb": xc.nbytes / 2**30,
            "dask_overhead_s": {peer: peer_over, "loom": loom_over}, "workloads": {}}
    for name in ref:
        p, g = ref[name], got[name]
        ok = bool(np.allclose(g["result"], p["result"], rtol=1e-9,
                              atol=1e-6 * max(1.0, float(np.abs(p["result"]).max()))))
        w = size["workloads"][name] = {
            "match": ok, f"{peer}_s": p["s"], "loom_s": g["s"], f"loom_vs_{peer}": p["s"] / g["s"],
            f"{peer}_min_s": p["min_s"], "loom_min_s": g["min_s"], "loom_GBps": xc.nbytes / 1e9 / g["s"],
            f"{peer}_GBps": xc.nbytes / 1e9 / p["s"],
            "tasks": g["tasks"], f"{peer}_tasks": p["tasks"], "tasks_per_chunk": g["tasks"] / nchunks,
            "build_s": {peer: p["build_s"], "loom": g["build_s"]},
            "optimize_s": {peer: p["optimize_s"], "loom": g["optimize_s"]},
            "worker_busy_s": {peer: p["worker_busy_s"], "loom": g["worker_busy_s"]},
            "loom_kernels_per_chunk": g["kernels"] / nchunks, "loom_compiled_while_timed": g["compiled_while_timed"],
            "chunk": {peer: peer_chunk[name], "loom": loom_chunk[name]}}
        print(f"  {where} {size['chunk_mb']:6.0f} MB x{nchunks:4d}  {name:10s} {peer} {p['s']:.3f} s  loom {g['s']:.3f} s"
              f"  loom/{peer} {w[f'loom_vs_{peer}']:.2f}x  tasks {g['tasks']} ({w['tasks_per_chunk']:.2f}/chunk)"
              f"  build+opt {peer} {p['build_s'] + p['optimize_s']:.3f} loom {g['build_s'] + g['optimize_s']:.3f} s"
              f"  busy {peer} {p['worker_busy_s']:.3f} loom {g['worker_busy_s']:.3f} s"
              f"  chunk call/done {peer} {peer_chunk[name]['call_s'] * 1e3:.2f}/{peer_chunk[name]['done_s'] * 1e3:.2f}"
              f" loom {loom_chunk[name]['call_s'] * 1e3:.2f}/{loom_chunk[name]['done_s'] * 1e3:.2f} ms"
              f"  back-to-back call/done {peer} {peer_chunk[name]['pipe_call_s'] * 1e3:.2f}/"
              f"{peer_chunk[name]['pipe_done_s'] * 1e3:.2f} loom {loom_chunk[name]['pipe_call_s'] * 1e3:.2f}/"
              f"{loom_chunk[name]['pipe_done_s'] * 1e3:.2f} ms"
              f"  {w['loom_kernels_per_chunk']:.2f} kernels/chunk compiled {g['compiled_while_timed']} match={ok}",
              flush=True)
    print(f"  {where} {size['chunk_mb']:6.0f} MB  dask overhead (same chunks, no work): {peer} {peer_over:.3f} s"
          f"  loom {loom_over:.3f} s", flush=True)
    return size


def _split_settings():
    """The dask.config settings to run, from LOOM_DASK_BENCH_SPLIT_EVERY (comma-separated; "default":
    Dask's own split_every, 4; N: split_every={0: N, 1: N}, each axis N partials at a time; Dask's int
    form N would split each axis of a full 2-d reduction int(sqrt(N)) ways)."""
    out = []
    for v in os.environ.get("LOOM_DASK_BENCH_SPLIT_EVERY", "32,default").split(","):
        v = v.strip()
        if v:
            out.append({} if v == "default" else {"split_every": {0: int(v), 1: int(v)}})
    return out


def _headline(out):
    """The headline: the first Dask setting listed at HEADLINE_MB chunks (else at the first size)."""
    sizes = out["sizes"]
    head = [s for s in sizes if round(s["chunk_mb"]) == HEADLINE_MB] or \
        [s for s in sizes if s["chunk_mb"] == sizes[0]["chunk_mb"]]
    head = head[0]
    out["headline"] = {"chunk_mb": head["chunk_mb"], "dask_config": head["dask_config"],
                       "why": HEADLINE_WHY if round(head["chunk_mb"]) == HEADLINE_MB else "the first size asked for"}
    out["workloads"] = head["workloads"]  # the headline's figures, where earlier files had them


def _summary(out, peer):
    """The figures the issue asks for, one line per chunk size, Dask setting and workload: end to end for
    both libraries, the ratio, GB/s (array bytes / end-to-end time), tasks and loom kernels per chunk (loom's
    counters in the workers), and whether loom's chunk calls wait for the device (back-to-back call/done)."""
    print(f"\n  summary ({out['gb']:g} GB, {'host' if not out['gpus'] else str(out['gpus']) + ' GPU'}; "
          f"target loom/{peer} >= 1.5 on the fused workloads)")
    print(f"  {'chunk MB':>8} {'chunks':>6} {'dask config':>24} {'workload':>10} {peer + ' s':>8} {'loom s':>8} "
          f"{'ratio':>6} {peer + ' GB/s':>10} {'loom GB/s':>9} {'tasks/ch':>8} {'kern/ch':>7} {'loom call/done ms':>18}")
    for size in out["sizes"]:
        cfg = ",".join(f"{k}={v}" for k, v in size.get("dask_config", {}).items()).replace(" ", "") or "defaults"
        for name, w in size["workloads"].items():
            c = w["chunk"]["loom"]
            print(f"  {size['chunk_mb']:8.0f} {size['chunks']:6d} {cfg[:24]:>24} {name:>10} {w[peer + '_s']:8.3f} "
                  f"{w['loom_s']:8.3f} {w['loom_vs_' + peer]:6.2f} {w[peer + '_GBps']:10.3g} {w['loom_GBps']:9.3g} "
                  f"{w['tasks_per_chunk']:8.2f} {w['loom_kernels_per_chunk']:7.2f} "
                  f"{c['pipe_call_s'] * 1e3:8.2f}/{c['pipe_done_s'] * 1e3:.2f}"
                  + ("" if w["match"] else "  MISMATCH"))
    print(flush=True)


def _budget():
    """LOOM_DASK_BENCH_BUDGET_S: seconds for one run (cluster, every setting and size); a size whose
    estimate (the longest size so far) would pass it is skipped and named in the JSON. Unset: no limit."""
    v = os.environ.get("LOOM_DASK_BENCH_BUDGET_S")
    return float(v) if v else None


def run(n, gb, chunk_mbs, reps, host=False, written=None):
    """One cluster of n GPUs (host mode: one host worker), every Dask setting and chunk size in turn;
    written(out) after each size, so a run cut short by a time limit leaves what it measured."""
    import dask
    from distributed import Client
    peer = "numpy" if host else "cupy"
    cluster, how = make_host_cluster() if host else make_cluster(n)
    client = Client(cluster)
    try:
        facts = client.run(_worker_facts)
        where = "host" if host else f"{n} GPU"
        out = {"gpus": 0 if host else n, "cluster": how, "workers": facts, "gb": gb,
               "dask_version": dask.__version__, "sizes": [], "skipped_for_budget": []}
        budget, longest = _budget(), 0.0
        for settings in _split_settings():
            print(f"  {where}  dask.config {settings or 'defaults'} (both libraries)", flush=True)
            with dask.config.set(settings):
                for mb in chunk_mbs:
                    spent = time.perf_counter() - T0
                    if budget is not None and out["sizes"] and spent + longest > budget:
                        print(f"  {where} {mb:6.0f} MB {settings or 'defaults'}: skipped (budget {budget:g} s, "
                              f"{spent:.0f} s spent, a size takes ~{longest:.0f} s)", flush=True)
                        out["skipped_for_budget"].append({"chunk_mb": mb, "dask_config": {k: str(v) for k, v in
                                                                                        settings.items()}})
                        continue
                    t = time.perf_counter()
                    size = run_one_size(client, gb, mb, reps, peer, host, where)
                    size["dask_config"] = {k: str(v) for k, v in settings.items()}
                    size["bench_s"] = time.perf_counter() - t
                    longest = max(longest, size["bench_s"])
                    out["sizes"].append(size)
                    _headline(out)
                    if written is not None:
                        written(out)
        _summary(out, peer)
        return out
    finally:
        client.close()
        cluster.close()


def _chunk_sizes(default):
    return [float(v) for v in os.environ.get("LOOM_DASK_BENCH_CHUNK_MB", default).split(",") if v.strip()]


def main_host():
    for mod in ("dask.array", "distributed"):
        try:
            __import__(mod)
        except ImportError:
            _skip(f"{mod} is not installed (pyproject's dask group)")
    reps = int(os.environ.get("LOOM_DASK_BENCH_REPS", "5"))
    gb = float(os.environ.get("LOOM_DASK_BENCH_GB", "1"))
    sizes = _chunk_sizes("64")
    print(f"dask_gpu (host mode): {gb:g} GB of float64, chunks of {sizes} MB", flush=True)
    run(0, gb, sizes, reps, host=True, written=lambda out: _write("dask-host", {"runs": [out]}))


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
    reps = int(os.environ.get("LOOM_DASK_BENCH_REPS", "5"))
    sizes = _chunk_sizes(str(HEADLINE_MB))
    results = []
    for n in counts:
        gb = float(os.environ.get("LOOM_DASK_BENCH_GB", "32" if n == 1 else "200"))
        print(f"dask_gpu: {n} GPU(s), {gb:g} GB of float64, chunks of {sizes} MB", flush=True)
        results.append(run(n, gb, sizes, reps,
                           written=lambda out: _write("dask-gpu", {"runs": results + [out], "scaling_loom": None})))
    by_n = {r["gpus"]: r for r in results}
    scaling = None
    if 1 in by_n and 2 in by_n:  # throughput per GB at the headline size, so different sizes compare
        scaling = {k: (by_n[2]["gb"] / by_n[2]["workloads"][k]["loom_s"]) / (by_n[1]["gb"] / by_n[1]["workloads"][k]["loom_s"])
                   for k in by_n[1]["workloads"]}
        print("scaling 1 -> 2 GPUs (loom, GB/s ratio): " + ", ".join(f"{k} {v:.2f}x" for k, v in scaling.items()))
    _write("dask-gpu", {"runs": results, "scaling_loom": scaling})


if __name__ == "__main__":
    main()
