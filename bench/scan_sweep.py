"""scan_sweep.py: the single-pass look-back scan's shape knobs (codegen/lower_scan_lookback.c) timed on a GPU,
each setting in a fresh process with a fresh LOOM_CACHE_DIR (the knobs are read once per process and are part
of the target description, so of the kernel cache key), beside torch.cumsum (same inputs, parent process).

Knobs (unset = the default):
  LOOM_GPU_SCAN_LB_BLOCK    threads per block, a power of two 64..1024 (default 256)
  LOOM_GPU_SCAN_LB_ITEMS    points per thread for <= 8-byte accumulators, a power of two 1..32 (default 16;
                            halved for complex128 and while the staged tile exceeds 44 KB of shared memory)
  LOOM_GPU_SCAN_LB_BACKOFF  ns a look-back wave sleeps before re-reading an incomplete window (default 0)
  LOOM_GPU_SCAN_LB_GRID     at most this many blocks, each looping over tickets (runtime; default: one a tile)
  LOOM_GPU_SCAN_LOOKBACK=0  the two-entry split scan instead (a reference row)

Cases: cumsum float32 2^26, int32 -> int64 2^26, float64 2^25, cumsum(2x+1) float32 2^26 (fused producer).
Bytes first: 2^26 float32 in and out is 537 MB: 0.131 ms at the H200's ~4100 GB/s copy bandwidth.
Checks (every setting, every case) against NumPy: integers exact; floats against the float64 cumsum of the
same values, each point within tol * (float64 cumsum of |v| up to it), tol 1e-4 float32, 1e-12 float64
(bench_scan.py's bound). A setting that fails or errs is reported and never ranked first.

Prints a markdown table sorted by the geometric mean over the cases, writes
bench/results/<date>-scan-sweep-<h200|host>.{json,md}. The budget (argument 2, default 100 s) skips the
remaining settings once spent (settings are in order of expected interest).
Run: python3 bench/scan_sweep.py [repeats=10] [budget_s=100]
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from _sweep import table, write_report  # noqa: E402 (bench/ is first on sys.path)
from _timing import best_ms  # noqa: E402

KNOBS = ("LOOM_GPU_SCAN_LB_BLOCK", "LOOM_GPU_SCAN_LB_ITEMS", "LOOM_GPU_SCAN_LB_BACKOFF", "LOOM_GPU_SCAN_LB_GRID",
         "LOOM_GPU_SCAN_LOOKBACK")


def setting(block=None, items=None, backoff=None, grid=None, split=False):
    env = {}
    if block:
        env["LOOM_GPU_SCAN_LB_BLOCK"] = str(block)
    if items:
        env["LOOM_GPU_SCAN_LB_ITEMS"] = str(items)
    if backoff:
        env["LOOM_GPU_SCAN_LB_BACKOFF"] = str(backoff)
    if grid:
        env["LOOM_GPU_SCAN_LB_GRID"] = str(grid)
    if split:
        env["LOOM_GPU_SCAN_LOOKBACK"] = "0"
    name = "split (LOOKBACK=0)" if split else f"{block or 256}x{items or 8}" + (f" sleep{backoff}" if backoff else "") + (
        f" grid{grid}" if grid else "")
    return name, env


# in order of expected interest (the budget cuts the tail): bigger tiles first (fewer look-back steps)
SETTINGS = [setting(), setting(256, 16), setting(512, 16), setting(256, 32), setting(512, 8), setting(1024, 8),
            setting(128, 32), setting(256, 16, grid=1056), setting(256, 16, backoff=64), setting(512, 16, backoff=64),
            setting(256, 32, backoff=64), setting(1024, 4), setting(128, 16), setting(256, 4), setting(512, 16, grid=528),
            setting(256, 8, backoff=200), setting(split=True)]

CASES = [  # name, n, input dtype, output dtype, fused 2x+1
    ("cumsum f32 2^26", 1 << 26, np.float32, np.float32, False),
    ("cumsum i32->i64 2^26", 1 << 26, np.int32, np.int64, False),
    ("cumsum f64 2^25", 1 << 25, np.float64, np.float64, False),
    ("cumsum(2x+1) f32 2^26", 1 << 26, np.float32, np.float32, True),
]


def make_inputs(gpu, names_only=False):
    if names_only:
        return [n.replace("2^26", "2^20").replace("2^25", "2^19") if not gpu else n for n, *_ in CASES]
    rng = np.random.default_rng(0)
    out = []
    for name, n, dt, odt, fused in CASES:
        n = n if gpu else n >> 6
        h = rng.integers(-100, 100, n, dtype=dt) if dt == np.int32 else (rng.random(n) * 4 - 1).astype(dt)
        out.append((name.replace("2^26", "2^20").replace("2^25", "2^19") if not gpu else name, h, odt, fused))
    return out


def scanned(h, fused):
    return h * 2 + 1 if fused else h  # in the input's dtype, as loom computes them


def reference(v):
    """NumPy's answer for the scanned values v: (int64 cumsum, None) for integers; for floats the float64
    cumsum and the float64 cumsum of |v| (the error scale)."""
    if np.issubdtype(v.dtype, np.integer):
        return np.cumsum(v, dtype=np.int64), None
    v64 = v.astype(np.float64)
    scale = np.cumsum(np.abs(v64))
    np.maximum(scale, np.finfo(np.float64).tiny, out=scale)
    return np.cumsum(v64), scale


def check(res, v, ref=None, scale=None):
    """(ok, err): integers exact (int64 sums); floats within tol * cumsum|v| of the float64 cumsum
    (tol 1e-4 float32, 1e-12 float64: bench_scan.py's bound)."""
    if ref is None:
        ref, scale = reference(v)
    if scale is None:
        return bool(res.dtype == np.int64 and np.array_equal(res, ref)), 0.0
    d = np.subtract(ref, res, dtype=np.float64)
    np.abs(d, out=d)
    d /= scale
    err = float(d.max()) if d.size else 0.0
    return bool(err <= (1e-4 if v.dtype == np.float32 else 1e-12)), err


def save_cases(gpu, folder):
    """Inputs and NumPy references as .npy files in folder (each child maps them instead of recomputing)."""
    for i, (name, h, odt, fused) in enumerate(make_inputs(gpu)):
        ref, scale = reference(scanned(h, fused))
        np.save(os.path.join(folder, f"{i}-h.npy"), h)
        np.save(os.path.join(folder, f"{i}-ref.npy"), ref)
        if scale is not None:
            np.save(os.path.join(folder, f"{i}-scale.npy"), scale)


def load_cases(gpu, folder):
    out = []
    for i, (name, n, dt, odt, fused) in enumerate(CASES):
        f = os.path.join(folder, f"{i}-")
        scale = np.load(f + "scale.npy", mmap_mode="r") if os.path.exists(f + "scale.npy") else None
        out.append((make_inputs(gpu, names_only=True)[i], np.load(f + "h.npy"), odt, fused,
                    np.load(f + "ref.npy", mmap_mode="r"), scale))
    return out


def child(repeats, budget_left, folder):
    """One setting (this process's environment): {case: {ms, ok, err}} as the last stdout line."""
    import loom
    gpu = loom.cuda.is_available()
    sync = (lambda: loom.cuda.Device(0).synchronize()) if gpu else (lambda: None)
    out = {}
    t0 = time.perf_counter()
    for name, h, odt, fused, ref, scale in load_cases(gpu, folder):
        if time.perf_counter() - t0 > budget_left:
            out[name] = {"ms": None, "ok": "skipped (time budget)"}
            continue
        x = None
        try:
            x = loom.asarray(h)
            f = (lambda: loom.cumsum(x * 2 + 1)) if fused else (lambda: loom.cumsum(x, dtype=odt))
            res = f().get()
            ok, err = check(res, scanned(h, fused), ref, scale)
            ms = best_ms(lambda: loom.eval(f()), sync, repeats)
            out[name] = {"ms": ms, "ok": ok, "err": err}
        except Exception as e:  # a setting that fails to build or launch is reported, not fatal
            out[name] = {"ms": None, "ok": f"error: {str(e)[:200]}"}
        del x
    print(json.dumps(out))


def torch_times(repeats, folder):
    try:
        import torch
        if not torch.cuda.is_available():
            return {}
    except Exception:
        return {}
    out = {}
    for name, h, odt, fused, ref, scale in load_cases(True, folder):
        xt = torch.from_numpy(h).cuda()
        g = (lambda: torch.cumsum(xt * 2 + 1, 0)) if fused else (lambda: torch.cumsum(xt, 0, dtype=getattr(torch, np.dtype(odt).name)))
        res = g().cpu().numpy()
        ok, err = check(res, scanned(h, fused), ref, scale)
        out[name] = {"ms": best_ms(g, torch.cuda.synchronize, repeats), "ok": ok, "err": err}
        del xt
    torch.cuda.empty_cache()
    return out


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 100.0
    if os.environ.get("SCAN_SWEEP_CHILD") == "1":
        return child(repeats, budget, os.environ["SCAN_SWEEP_CASES"])
    t0 = time.perf_counter()
    import loom
    gpu = loom.cuda.is_available()
    folder = tempfile.mkdtemp(prefix="scan_sweep_")
    try:
        save_cases(gpu, folder)
        print(f"inputs and NumPy references: {time.perf_counter() - t0:.0f} s", flush=True)
        sweep(repeats, budget, t0, gpu, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def sweep(repeats, budget, t0, gpu, folder):
    torch = torch_times(repeats, folder) if gpu else {}
    print(f"torch: {json.dumps(torch)} ({time.perf_counter() - t0:.0f} s)", flush=True)
    results = []
    for sname, env in SETTINGS:
        left = budget - (time.perf_counter() - t0)
        if left <= 0:
            results.append({"setting": sname, "env": env, "cases": {}, "note": "skipped (time budget)"})
            continue
        with tempfile.TemporaryDirectory() as cache:
            cenv = {k: v for k, v in os.environ.items() if k not in KNOBS}
            cenv.update(env, LOOM_CACHE_DIR=cache, SCAN_SWEEP_CHILD="1", SCAN_SWEEP_CASES=folder)
            try:
                p = subprocess.run([sys.executable, os.path.abspath(__file__), str(repeats), str(max(left, 1.0))],
                                   env=cenv, capture_output=True, text=True, timeout=max(left, 1.0) + 60)
                cases = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {}
                note = "" if p.returncode == 0 else f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
                warn = [ln for ln in p.stderr.splitlines() if "ignored" in ln]
                note += "; ".join(warn)
            except Exception as e:
                cases, note = {}, f"error: {e}"
        results.append({"setting": sname, "env": env, "cases": cases, "note": note})
        print(sname, json.dumps(cases), note, flush=True)
    report(results, torch, repeats, budget, time.perf_counter() - t0, gpu)


def geomean(r, names):
    ms = [r["cases"].get(n, {}).get("ms") for n in names]
    if not ms or any(m is None for m in ms) or any(r["cases"][n]["ok"] is not True for n in names):
        return None
    return math.exp(sum(math.log(m) for m in ms) / len(ms))


def report(results, torch, repeats, budget, took, gpu):
    names = make_inputs(gpu, names_only=True)
    short = [n.replace("cumsum", "").strip() for n in names]
    for r in results:
        r["geomean_ms"] = geomean(r, names)
    ranked = sorted(results, key=lambda r: (r["geomean_ms"] is None, r["geomean_ms"] or 0))
    rows = []
    if torch:
        tg = math.exp(sum(math.log(torch[n]["ms"]) for n in names) / len(names))
        rows.append(["torch.cumsum", f"{tg:.3f}"] + [f"{torch[n]['ms']:.3f}" for n in names]
                    + [str(all(torch[n]["ok"] for n in names)), ""])
    for r in ranked:
        cells = []
        for n in names:
            c = r["cases"].get(n, {})
            if c.get("ms") is None:
                cells.append("-")
                continue
            t = f" ({torch[n]['ms'] / c['ms']:.2f}x)" if n in torch else ""
            cells.append(f"{c['ms']:.3f}{t}" + ("" if c["ok"] is True else " WRONG" if c["ok"] is False else f" {c['ok']}"))
        oks = [r["cases"].get(n, {}).get("ok") for n in names]
        ok = "ok" if all(o is True for o in oks) else ("WRONG" if any(o is False for o in oks) else r.get("note") or "incomplete")
        gm = f"{r['geomean_ms']:.3f}" if r["geomean_ms"] else "-"
        rows.append([r["setting"], gm] + cells + [ok, " ".join(f"{k}={v}" for k, v in r["env"].items())])
    lines = table(["setting", "geomean ms"] + [f"{s} ms" for s in short] + ["ok", "env"], rows)
    lines.append("")
    lines.append("(x): torch ms / loom ms (> 1: loom faster). "
                 f"sweep took {took:.0f} s (budget {budget:.0f} s), best of {repeats}, a fresh process and cache per setting")
    text = "\n".join(lines)
    print(text)
    write_report("scan", "Look-back scan knob sweep", {"command": "python3 bench/scan_sweep.py " + " ".join(sys.argv[1:]),
                                                       "torch": torch, "results": results, "seconds": took}, text, gpu)


if __name__ == "__main__":
    main()
