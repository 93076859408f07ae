"""run.py: the workload suite: every workload of workloads.py under Loom and its peers, in one run.

    python bench/suite/run.py --machine cpu    # this 2-core box: loom, loom_lazy, numpy, numexpr, numba,
                                                # jax, torch, torch_compile
    python bench/suite/run.py --machine h200   # GPU: loom, loom_lazy, torch, torch_compile, jax, cupy,
                                                # cupy_fuse (bench/suite/gpu.sh calls it)

Per workload: the inputs (inputs.py), a float64 reference (NumPy on the host; on the GPU the same
expression through torch in float64 on the device, see README.md), then per library: build, first call
(compile), correctness against the reference (a mismatch is reported, not timed), then the median time
per call (host: wall clock, each call synchronized; GPU: CUDA events of the library around batches of
calls, JAX: wall clock of a batch ended by block_until_ready). Bytes that must move: every input read
once, every output written once. Copy bandwidth is measured in the same run.

Writes bench/results/<date>-suite-<machine>.json (the issue-11 format plus per-library GB/s, fraction of
copy, errors and notes), a markdown table (.md) and a chart of Loom's ratio to the best peer (.png).
"""
import argparse
import datetime
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

from bench.suite import libs as L  # noqa: E402
from bench.suite import workloads as W  # noqa: E402
from bench.suite.inputs import device_inputs, host_inputs  # noqa: E402


class Env:
    def __init__(self, machine):
        self.machine = machine   # the sizes of workloads.DIMS: cpu, h200 (any GPU) or test
        self.device = "cuda" if machine != "cpu" else "cpu"
        self.torch = None


# ---- reference and comparison -------------------------------------------------------------------------
def reference(env, w, master):
    """The workload in float64 (float inputs upcast unless the workload says not to)."""
    if env.device == "cpu":
        ns = L.NumpyLib(env).ns
        args = [a.astype(np.float64) if a.dtype.kind == "f" and w.upcast_ref else a for a in master]
        with np.errstate(all="ignore"):
            return tuple(np.asarray(o) for o in L.as_tuple(w.fn(ns, *args)))
    t = env.torch
    ns = L.TorchNS(t, "cuda")
    args = [a.to(t.float64) if a.is_floating_point() and w.upcast_ref else a for a in master]
    return tuple(t.as_tensor(o, device="cuda") for o in L.as_tuple(w.fn(ns, *args)))


def _tol(w, dtype_name, reduced):
    if w.tol is not None:
        return w.tol
    base = {"float16": 5e-3, "float32": 1e-4, "float64": 1e-10}.get(dtype_name, 1e-4)
    return base * (10 if reduced else 1)


def compare(env, w, got, ref, expect, in_size):
    """(None, note) when got matches ref, else (a message, note). The tolerance follows the dtype NumPy
    gives the output (`expect`); a library that writes another dtype gets a note."""
    got = L.as_tuple(got)
    if len(got) != len(ref):
        return f"{len(got)} outputs, expected {len(ref)}", None
    notes = []
    for k, (g, r, e) in enumerate(zip(got, ref, expect)):
        gd = str(getattr(g, "dtype", type(g).__name__)).replace("torch.", "")
        if gd != e.name:
            notes.append(f"output {k} is {gd}, NumPy gives {e.name}")
        msg = (_compare_torch if env.device == "cuda" else _compare_numpy)(env, w, g, r, e, in_size)
        if msg:
            return f"output {k}: {msg}", "; ".join(notes) or None
    return None, "; ".join(notes) or None


def _compare_numpy(env, w, g, r, expect, in_size):
    g = np.asarray(g)
    if g.shape != r.shape:
        return f"shape {g.shape}, expected {r.shape}"
    if r.dtype.kind == "f":
        g64 = g.astype(np.float64)
        if not np.array_equal(np.isnan(g64), np.isnan(r)):
            return "NaN in different places"
        fin = np.isfinite(r)
        if not np.array_equal(g64[np.isinf(r)], r[np.isinf(r)]):   # NaN places are equal (above)
            return "infinities differ"
        scale = float(np.max(np.abs(r[fin]), initial=0.0)) or 1e-30
        err = float(np.max(np.abs(g64[fin] - r[fin]), initial=0.0)) / scale
        tol = _tol(w, expect.name, r.size < in_size)
        return None if err <= tol else f"normwise error {err:.3g} > {tol:g} ({expect.name})"
    diff = np.max(np.abs(g.astype(np.int64) - r.astype(np.int64)), initial=0)
    return None if diff <= w.int_tol else f"integers differ by up to {diff}"


def _to_torch(env, x):
    t = env.torch
    if isinstance(x, t.Tensor):
        return x
    try:
        return t.from_dlpack(x)
    except Exception:  # noqa: BLE001
        h = x.get() if hasattr(x, "get") else np.asarray(x)
        return t.as_tensor(np.asarray(h), device="cuda")


def _compare_torch(env, w, g, r, expect, in_size):
    t = env.torch
    g = _to_torch(env, g)
    if tuple(g.shape) != tuple(r.shape):
        return f"shape {tuple(g.shape)}, expected {tuple(r.shape)}"
    if r.is_floating_point():
        g64 = g.to(t.float64)
        if not t.equal(t.isnan(g64), t.isnan(r)):
            return "NaN in different places"
        fin = t.isfinite(r)
        if not t.equal(g64[t.isinf(r)], r[t.isinf(r)]):   # NaN places are equal (above)
            return "infinities differ"
        rf = r[fin]
        scale = float(rf.abs().max()) if rf.numel() else 1e-30
        err = float((g64[fin] - rf).abs().max()) / (scale or 1e-30) if rf.numel() else 0.0
        tol = _tol(w, expect.name, r.numel() < in_size)
        return None if err <= tol else f"normwise error {err:.3g} > {tol:g} ({expect.name})"
    diff = int((g.to(t.int64) - r.to(t.int64)).abs().max()) if r.numel() else 0
    return None if diff <= w.int_tol else f"integers differ by up to {diff}"


# ---- timing -------------------------------------------------------------------------------------------
class Timed:
    """One library's calls on one workload, timed in batches: k back-to-back calls per sample, k chosen
    so a sample lasts >= target_s. Host: wall clock, every call synchronized. GPU: the library's CUDA
    events around the batch (JAX: wall clock of the batch, ended by block_until_ready)."""

    def __init__(self, lib, f, args, device):
        self.lib, self.f, self.args, self.device = lib, f, args, device
        self.samples, self.error = [], None
        self.target_s = 1e-3 if device == "cpu" else 4e-3
        self.k = 1
        self.k = max(1, min(10000, int(self.target_s / max(self._batch(), 1e-7))))

    def _batch(self):
        lib, f, args, k = self.lib, self.f, self.args, self.k
        if self.device == "cpu":
            t0 = time.perf_counter()
            for _ in range(k):
                lib.sync(f(*args))
            return (time.perf_counter() - t0) / k
        if lib.gpu_timer == "events":
            e0, e1 = lib.event(), lib.event()
            e0.record()
            for _ in range(k):
                out = f(*args)
            if lib.is_loom:
                lib.loom.eval(*L.as_tuple(out))
            e1.record()
            e1.synchronize()
            return e0.elapsed_time(e1) / 1e3 / k
        t0 = time.perf_counter()
        for _ in range(k):
            out = f(*args)
        lib.sync(out)
        return (time.perf_counter() - t0) / k

    def sample(self):
        if self.error is None:
            try:
                self.samples.append(self._batch())
            except Exception as e:  # noqa: BLE001 (one library failing while timed: keep the others)
                self.error = f"{type(e).__name__} while timed: {e}"[:300]

    def result(self):
        return statistics.median(self.samples), min(self.samples)


def time_round_robin(timed, min_time, min_rounds=5, max_rounds=25):
    """Samples taken in rounds over the libraries (A B C A B C ...), so that a change of the machine's
    load during the workload falls on every library alike: only ratios in one run mean anything on a
    shared box. Each round starts one library further on (A B C, B C A, C A B, ...): a library's threads
    may keep a core busy after its calls return (torch's OpenMP workers spin ~6.5 ms on the host), which
    taxes whoever runs next, so no library always follows the same one."""
    end = time.perf_counter() + min_time * max(1, len(timed))
    rounds = 0
    while rounds < max_rounds and (rounds < min_rounds or time.perf_counter() < end):
        shift = rounds % max(1, len(timed))
        for t in timed[shift:] + timed[:shift]:
            t.sample()
        rounds += 1
    return rounds


def time_host(f, args, sync, min_time):
    """(median, min) seconds per call of one function on the host (copy bandwidth)."""
    lib = type("Plain", (), {"sync": staticmethod(sync)})()
    t = Timed(lib, lambda: f(*args), (), "cpu")
    time_round_robin([t], min_time, min_rounds=10, max_rounds=50)
    return t.result()


def copy_timer(env, nbytes):
    """A copy of nbytes / 2 bytes (nbytes moved), timed in the same rounds as the libraries: the
    workload's own copy ceiling under the same load (the host is shared; its bandwidth moves)."""
    n = max(1, nbytes // 8)
    if env.device == "cpu":
        src = np.ones(n, np.float32)
        dst = np.empty_like(src)
        lib = type("Copy", (), {"sync": staticmethod(lambda o: None), "name": "copy"})()
        return Timed(lib, lambda: np.copyto(dst, src), (), "cpu")
    t = env.torch
    src = t.ones(n, device="cuda")
    dst = t.empty_like(src)
    lib = type("Copy", (), {"gpu_timer": "events", "is_loom": False, "name": "copy",
                            "event": lambda self: t.cuda.Event(enable_timing=True)})()
    return Timed(lib, lambda: dst.copy_(src), (), "cuda")


def measure_copy(env, min_time):
    """Best copy bandwidth (read + write) over the ways at hand, at a size like the workloads'."""
    res = {}
    if env.device == "cpu":
        n = W.DIMS[env.machine]["N"] * 2   # 32 MB of float32 in, 32 MB out
        src = np.ones(n, np.float32)
        dst = np.empty_like(src)
        s = time_host(lambda: np.copyto(dst, src), (), lambda o: None, min_time)[0]
        res["numpy_copyto"] = 2 * src.nbytes / s / 1e9
        if env.torch is not None:
            t = env.torch
            ts, td = t.from_numpy(src), t.from_numpy(dst)
            s = time_host(lambda: td.copy_(ts), (), lambda o: None, min_time)[0]
            res["torch_copy_"] = 2 * src.nbytes / s / 1e9
    else:
        t = env.torch
        src = t.ones(1 << 28, device="cuda")
        dst = t.empty_like(src)
        lib = type("CopyLib", (), {"gpu_timer": "events", "is_loom": False,
                                   "event": lambda self: t.cuda.Event(enable_timing=True)})()
        tm = Timed(lib, lambda: dst.copy_(src), (), "cuda")
        time_round_robin([tm], 0.0, min_rounds=7, max_rounds=7)
        s = tm.result()[0]
        res["torch_copy_"] = 2 * src.numel() * 4 / s / 1e9
        del src, dst
    return max(res.values()), res


# ---- one workload -------------------------------------------------------------------------------------
def out_dtypes(w):
    """The dtypes of the workload's outputs as NumPy gives them (run on test-size inputs)."""
    ns = L.NumpyLib(None).ns
    with np.errstate(all="ignore"):
        return [np.asarray(o).dtype for o in L.as_tuple(w.fn(ns, *host_inputs(w, "test")))]


def free_gpu(env):
    gc.collect()
    if env.device != "cuda":
        return
    for mod, fn in (("torch", lambda m: m.cuda.empty_cache()),
                    ("cupy", lambda m: m.get_default_memory_pool().free_all_blocks()),
                    ("loom", lambda m: m.get_default_memory_pool().free_all_blocks())):
        if mod in sys.modules:
            try:
                fn(sys.modules[mod])
            except Exception:  # noqa: BLE001
                pass


def run_workload(env, w, libs, args_ns, t_start):
    size = env.machine
    master = host_inputs(w, size) if env.device == "cpu" else device_inputs(w, size, env.torch)
    in_bytes = sum(int(a.nbytes) if hasattr(a, "nbytes") else a.numel() * a.element_size() for a in master)
    in_size = max(int(np.prod(tuple(a.shape), dtype=np.int64)) for a in master)
    rec = {"name": w.name, "group": w.group, "source": w.source, "bytes": None, "kernels": None, "ms": {}, "ms_min": {},
           "GBps": {}, "fraction_of_copy": {}, "first_call_s": {}, "errors": {}, "notes": {},
           "memory_bound": w.memory_bound}
    try:
        ref = reference(env, w, master)
    except Exception as e:  # noqa: BLE001
        rec["errors"]["reference"] = f"{type(e).__name__}: {e}"[:300]
        return rec
    expect = out_dtypes(w)
    rec["bytes"] = in_bytes + sum(int(np.prod(tuple(r.shape), dtype=np.int64)) * e.itemsize
                                  for r, e in zip(ref, expect))
    timed = []
    for lib in libs:
        name = lib.name
        rec["ms"][name] = None
        elapsed = time.perf_counter() - t_start
        if args_ns.budget_s and elapsed > args_ns.budget_s and not lib.is_loom and name in (
                "torch_compile", "jax", "cupy_fuse"):
            rec["errors"][name] = f"skipped: time budget of {args_ns.budget_s:.0f} s spent"
            continue
        if args_ns.budget_s and elapsed > 1.3 * args_ns.budget_s and not lib.is_loom:
            rec["errors"][name] = f"skipped: time budget of {args_ns.budget_s:.0f} s spent"
            continue
        args = out = f = None
        try:
            args = lib.prepare(master)
            f = lib.build(w)
            t0 = time.perf_counter()
            out = f(*args)
            lib.sync(out)
            rec["first_call_s"][name] = round(time.perf_counter() - t0, 4)
            if lib.is_loom and name == "loom":
                rec["kernels"] = lib.kernels()
            if hasattr(lib, "check_used"):
                lib.check_used(f)
            msg, note = compare(env, w, out, ref, expect, in_size)
            if note:
                rec["notes"][name] = note
            note = getattr(lib, "notes", {}).get(w.name)
            if note:
                rec["notes"][name] = "; ".join(filter(None, (rec["notes"].get(name), note)))
            if msg:
                rec["errors"][name] = "MISMATCH " + msg
                continue
            out = None
            timed.append(Timed(lib, f, args, env.device))
        except L.NotExpressible as e:
            rec["errors"][name] = f"not expressible: {e}"[:300]
        except Exception as e:  # noqa: BLE001
            tb = traceback.extract_tb(e.__traceback__)
            where = f" ({os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
            rec["errors"][name] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[
                :280] + where
        finally:
            del args, out, f
            free_gpu(env)
    copy = copy_timer(env, rec["bytes"])
    rec["rounds"] = time_round_robin(timed + [copy], args_ns.min_time)
    rec["copy_GBps"] = round(rec["bytes"] / copy.result()[0] / 1e9, 2)
    for t in timed:
        if t.error or not t.samples:
            rec["errors"][t.lib.name] = t.error or "no samples"
            continue
        s, s_min = t.result()
        name = t.lib.name
        rec["ms"][name] = round(s * 1e3, 5)
        rec["ms_min"][name] = round(s_min * 1e3, 5)
        rec["GBps"][name] = round(rec["bytes"] / s / 1e9, 2)
    timed.clear()
    free_gpu(env)
    return rec


def summarize(res):
    peers_all = set()
    for r in res["workloads"]:
        ms = r["ms"]
        peers = {k: v for k, v in ms.items() if v and not k.startswith("loom")}
        peers_all |= set(ms) - {"loom", "loom_lazy"}
        if peers:
            best = min(peers, key=peers.get)
            r["best_peer"] = best
            r["loom_over_best"] = round(peers[best] / ms["loom"], 3) if ms.get("loom") else None
        else:
            r["best_peer"], r["loom_over_best"] = None, None
        # the same on the best samples: on a loaded shared box the medians carry the load's noise
        mn = r.get("ms_min", {})
        pmin = {k: v for k, v in mn.items() if v and not k.startswith("loom") and ms.get(k)}
        r["loom_over_best_min"] = (round(min(pmin.values()) / mn["loom"], 3)
                                   if pmin and mn.get("loom") and ms.get("loom") else None)
        for k, v in r["GBps"].items():
            r["fraction_of_copy"][k] = round(v / (r.get("copy_GBps") or res["copy_GBps"]), 3)
    ratios = [r["loom_over_best"] for r in res["workloads"] if r.get("loom_over_best")]
    s = {"workloads": len(res["workloads"]), "with_ratio": len(ratios)}
    rmin = [r["loom_over_best_min"] for r in res["workloads"] if r.get("loom_over_best_min")]
    if rmin:
        s["geomean_loom_over_best_peer_min"] = round(math.exp(sum(map(math.log, rmin)) / len(rmin)), 3)
        s["below_0.9_min"] = sorted(r["name"] for r in res["workloads"] if r.get("loom_over_best_min") and
                                    r["loom_over_best_min"] < 0.9)
    if ratios:
        s["geomean_loom_over_best_peer"] = round(math.exp(sum(map(math.log, ratios)) / len(ratios)), 3)
        s["below_0.9"] = sorted(r["name"] for r in res["workloads"] if r.get("loom_over_best") and
                                r["loom_over_best"] < 0.9)
        s["at_least_0.9"] = len(ratios) - len(s["below_0.9"])
    for p in sorted(peers_all):
        rs = [r["ms"][p] / r["ms"]["loom"] for r in res["workloads"] if r["ms"].get(p) and r["ms"].get("loom")]
        if rs:
            s[f"geomean_loom_over_{p}"] = round(math.exp(sum(map(math.log, rs)) / len(rs)), 3)
            s[f"n_{p}"] = len(rs)
    mb = [r for r in res["workloads"] if r["memory_bound"] and r["fraction_of_copy"].get("loom") is not None]
    s["memory_bound_loom_below_0.85_of_copy"] = sorted(r["name"] for r in mb if r["fraction_of_copy"]["loom"] < 0.85)
    res["summary"] = s


def lib_versions(libs):
    v = {}
    for lib in libs:
        mod = {"loom": "loom", "loom_lazy": "loom", "numpy": "numpy", "numexpr": "numexpr", "numba": "numba",
               "jax": "jax", "torch": "torch", "torch_compile": "torch", "cupy": "cupy", "cupy_fuse": "cupy"}[lib.name]
        v[lib.name] = getattr(sys.modules.get(mod), "__version__", "?")
    return v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--machine", choices=["cpu", "h100", "h200", "test"], default="cpu",
                    help="names the results; h100 and h200 run the same GPU sizes")
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--table", choices=["suite", "probe", "fresh", "fresh2"], default="suite",
                    help="suite: workloads.py; probe: workloads_probe.py (unseen workloads and shapes); "
                    "fresh: workloads_fresh.py (a later set of unseen workloads, in neither); "
                    "fresh2: workloads_fresh2.py (a fourth set, in none of the three)")
    ap.add_argument("--libs", default="", help="comma-separated library names (default: all of the machine)")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--date", default=os.environ.get("LOOM_BENCH_DATE") or datetime.date.today().isoformat())
    ap.add_argument("--min-time", type=float, default=0.3, help="host: seconds of timed calls per library")
    ap.add_argument("--budget-s", type=float, default=0.0,
                    help="after this many seconds skip torch_compile/jax/cupy_fuse; after 1.3x every peer")
    a = ap.parse_args(argv)
    if a.machine not in ("h100", "h200"):
        # torch's and Numba's OpenMP workers spin-wait after each call by default, taking the cores from the
        # library timed next in the round (2026-12-04, this 2-core box: Loom's silu 2.09 -> 4.72 ms and JAX's
        # softmax 3.31 -> 12.6 ms right after torch); passive waits leave the cores to it. Set before torch
        # and Numba are imported; every library is timed under the same setting.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        os.environ.setdefault("KMP_BLOCKTIME", "0")
    if a.machine != "cpu":
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    env = Env({"test": "cpu", "h100": "h200"}.get(a.machine, a.machine))
    if a.machine == "test":
        env.machine = "test"
    try:
        import torch
        env.torch = torch
    except ImportError:
        if env.device == "cuda":
            sys.exit("run.py --machine h200 needs torch (inputs and the float64 reference are made with it)")
    classes = L.GPU_LIBS if env.device == "cuda" else L.CPU_LIBS
    wanted = set(a.libs.split(",")) if a.libs else None
    libs, unavailable = [], {}
    for cls in classes:
        if wanted and cls.name not in wanted:
            continue
        try:
            libs.append(cls(env))
        except Exception as e:  # noqa: BLE001
            unavailable[cls.name] = f"{type(e).__name__}: {e}"[:300]
            print(f"suite: {cls.name} unavailable: {unavailable[cls.name]}", flush=True)
    names = [n for n in a.only.split(",") if n] or [w.name for w in W.table(a.table)]
    t_start = time.perf_counter()
    copy_gbps, copy_detail = measure_copy(env, a.min_time)
    print(f"suite: copy {copy_gbps:.1f} GB/s {copy_detail}", flush=True)
    res = {"machine": a.machine, "table": a.table, "date": a.date, "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
           "copy_GBps": round(copy_gbps, 2), "copy_detail": {k: round(v, 2) for k, v in copy_detail.items()},
           "host": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "loadavg_start": os.getloadavg()},
           "libs": lib_versions(libs), "unavailable": unavailable, "workloads": []}
    os.makedirs(a.out_dir, exist_ok=True)
    base = os.path.join(a.out_dir, f"{a.date}-{a.table}-{a.machine}")
    for n in names:
        w = W.lookup(n)
        t0 = time.perf_counter()
        rec = run_workload(env, w, libs, a, t_start)
        res["workloads"].append(rec)
        with open(base + ".json", "w") as fh:   # kept after every workload: a run cut short still reports
            json.dump(dict(res, partial=True), fh, indent=1)
        ms = " ".join(f"{k}={v:.3f}" if v else f"{k}=-" for k, v in rec["ms"].items())
        print(f"suite: {n:24s} {time.perf_counter() - t0:6.1f}s k={rec['kernels']} {ms}", flush=True)
        for k, e in rec["errors"].items():
            print(f"         {k}: {e}", flush=True)
    res["host"]["loadavg_end"] = os.getloadavg()
    res["wall_s"] = round(time.perf_counter() - t_start, 1)
    per = sorted(r["copy_GBps"] for r in res["workloads"] if r.get("copy_GBps"))
    if per:   # the ceiling at the top: the median of the per-workload copies (same rounds, same load)
        res["copy_GBps_start"] = res["copy_GBps"]
        res["copy_GBps"] = per[len(per) // 2]
    summarize(res)
    with open(base + ".json", "w") as fh:
        json.dump(res, fh, indent=1)
    from bench.suite import report
    report.write_markdown(res, base + ".md")
    try:
        report.write_chart(res, base + ".png")
    except ImportError as e:
        print(f"suite: no chart ({e})")
    print(f"suite: wrote {base}.json/.md/.png in {res['wall_s']} s; summary {json.dumps(res['summary'])}")


if __name__ == "__main__":
    main()
