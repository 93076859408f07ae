"""bench_scan.py: cumulative sums (loom_scan kernels) against NumPy on the host, and against CuPy and
PyTorch on a GPU (each peer that imports; same inputs, same run).

Bytes first: a scan reads its input once and writes its output once (8 bytes per float32 element,
12 for int32 -> int64); on the H200 (4.8 TB/s) 2^26 float32 elements move 537 MB, 0.11 ms at peak. Loom's
GPU scans: rows of up to 16K points one block each (one pass: read + write); longer rows are cut into
parts (a fold pass, then a scan pass from the fold of the earlier parts: 1.5x the bytes of a one-pass
scan, ~0.17 ms at peak for 2^26 float32). CuPy (CUB's decoupled look-back) moves 1x. On the host a
row is a sequential dependency chain (one add per element per core, as NumPy's loop); rows and
columns are spread over the cores.

Few long rows (fewer than 512 rows of 4096+ points) take the single-pass decoupled look-back scan
(codegen/lower_scan_lookback.c: one read, one write; tiles taken from a ticket counter). On a GPU this
script also times every case with the two-entry split (LOOM_GPU_SCAN_LOOKBACK=0) in a child process with
its own LOOM_CACHE_DIR, in the same run: columns "split ms" and "split / loom" (> 1: the look-back scan
is faster).

GPU row scans read 4 chunks of a block's points before scanning them (codegen/lower_scan.c); A/B against
the chunk-at-a-time scan: LOOM_GPU_SCAN_CHUNKS=1 LOOM_CACHE_DIR=$(mktemp -d) python3 bench/bench_scan.py
(a fresh cache: compiled kernels are kept under the same key).

Prints a markdown table and writes bench/results/<date>-scan-<host|h200>.json (machine, date, command).
Run: python3 bench/bench_scan.py [repeats]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import loom
from _timing import GPU, best_ms, loom_sync, peers, write_results


def check(res, v, want_native, axis):
    """ok and the errors of a scan result. Integers: exact. Floats: against the float64 cumsum of the same
    values, each point within tol * (float64 cumsum of |v| up to it) -- the bound of a float32 scan that
    sums in any tree or blocked order; tol = 1e-4 for float32 (~840 ulps), 1e-12 for float64. NumPy's own
    float32 cumsum adds serially and drifts far past that at 2^26 points (a running sum of 2^27 absorbs
    every addend below 8: cumsum(2x+1) stalls at 1.34e8 of 2.01e8), so it is not the reference; a result
    that reproduces NumPy's serial bits (loom's host scans do, by design) is accepted as NumPy's answer.
    err_f64: loom's largest error over that scale; numpy_err_f64: NumPy's own."""
    if np.issubdtype(want_native.dtype, np.integer):
        return {"ok": bool(np.array_equal(res, want_native))}
    ref = np.cumsum(v.astype(np.float64), axis=axis)
    scale = np.maximum(np.cumsum(np.abs(v).astype(np.float64), axis=axis), np.finfo(np.float64).tiny)
    tol = 1e-4 if v.dtype == np.float32 else 1e-12
    err = float((np.abs(res.astype(np.float64) - ref) / scale).max())
    nerr = float((np.abs(want_native.astype(np.float64) - ref) / scale).max())
    same_as_numpy = bool(np.array_equal(res, want_native))
    return {"ok": bool(err <= tol or same_as_numpy), "err_f64": err, "numpy_err_f64": nerr,
            "same_bits_as_numpy": same_as_numpy}


CHILD = os.environ.get("BENCH_SCAN_CHILD") == "1"  # set: only loom's times and checks, as JSON (the split run)
if not CHILD:
    os.environ["LOOM_GPU_SCAN_LOOKBACK"] = "1"  # this process: the look-back scan (read at the first compile)


def split_times(repeats):
    """{case: {loom_ms, ok}} of the same cases with LOOM_GPU_SCAN_LOOKBACK=0 in a child process (a fresh
    kernel cache; the setting is read once per process)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, LOOM_GPU_SCAN_LOOKBACK="0", LOOM_CACHE_DIR=cache, BENCH_SCAN_CHILD="1")
        out = subprocess.run([sys.executable, os.path.abspath(__file__), str(repeats)], env=env, capture_output=True,
                             text=True, timeout=300)
    if out.returncode != 0:
        print(f"split run failed ({out.returncode}): {out.stderr[-2000:]}", file=sys.stderr)
        return {}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    split = split_times(repeats) if GPU and not CHILD else {}
    big = 1 << 26 if GPU else 1 << 24
    side = 8192 if GPU else 4096
    cases = [  # name, shape, dtype, axis, fused
        ("cumsum f32 1-d", (big,), np.float32, 0, False),
        ("cumsum f32 rows of 1024", (big // 1024, 1024), np.float32, 1, False),
        ("cumsum f32 columns", (side, side), np.float32, 0, False),
        ("cumsum i32 -> i64 1-d", (big,), np.int32, 0, False),
        ("cumsum f64 rows of 4096", (big // 8192, 4096), np.float64, 1, False),
        ("cumsum(2x+1) f32 1-d, fused", (big,), np.float32, 0, True),
    ]
    ps = {} if CHILD else peers()
    rows = []
    rng = np.random.default_rng(0)
    for name, shape, dt, axis, fused in cases:
        h = (rng.random(shape) * 4 - 1).astype(dt) if dt != np.int32 else rng.integers(-100, 100, shape, dtype=dt)
        x = loom.asarray(h)
        f = (lambda: loom.eval(loom.cumsum(x * 2 + 1, axis=axis))) if fused else (lambda: loom.eval(loom.cumsum(x, axis=axis)))
        res = loom.cumsum(x * 2 + 1 if fused else x, axis=axis).get()
        v = h * 2 + 1 if fused else h  # the scanned values, in the input's dtype (as loom computes them)
        want = np.cumsum(v, axis=axis)  # NumPy in the input's dtype: serial float32 sums drift (below)
        nbytes = h.nbytes + want.nbytes
        row = {"case": name, "shape": list(shape), "dtype": np.dtype(dt).name, "axis": axis, "bytes": nbytes}
        row.update(check(res, v, want, axis))
        row["loom_ms"] = best_ms(f, loom_sync, repeats)
        if CHILD:
            rows.append(row)
            continue
        if name in split:
            row["split_ms"] = split[name]["loom_ms"]
            row["split_ok"] = split[name]["ok"]
        if not GPU:
            row["numpy_ms"] = best_ms((lambda: np.cumsum(h * 2 + 1, axis=axis)) if fused else (lambda: np.cumsum(h, axis=axis)),
                                      lambda: None, repeats)
        for pn, mod in ps.items():
            if pn == "cupy":
                xc = mod.asarray(h)
                g = (lambda: mod.cumsum(xc * 2 + 1, axis=axis)) if fused else (lambda: mod.cumsum(xc, axis=axis))
                row["cupy_ms"] = best_ms(g, lambda: mod.cuda.Device(0).synchronize(), repeats)
            else:
                xt = mod.from_numpy(h).cuda()
                g = (lambda: mod.cumsum(xt * 2 + 1, dim=axis)) if fused else (lambda: mod.cumsum(xt, dim=axis))
                row["torch_ms"] = best_ms(g, mod.cuda.synchronize, repeats)
        rows.append(row)
    if CHILD:
        print(json.dumps({r["case"]: {"loom_ms": r["loom_ms"], "ok": r["ok"]} for r in rows}))
        return
    peer_names = ["numpy"] if not GPU else list(ps)
    if split:
        peer_names = ["split"] + peer_names
    print(f"| case | shape | loom ms | loom GB/s | " + " | ".join(f"{p} ms | loom / {p}" for p in peer_names) + " | err / f64 | ok |")
    print("|---|---|---|---|" + "---|---|" * len(peer_names) + "---|---|")
    for r in rows:
        cells = [f"{r[p + '_ms']:.3f} | {r[p + '_ms'] / r['loom_ms']:.2f}x" if p + "_ms" in r else "- | -" for p in peer_names]
        print(f"| {r['case']} | {tuple(r['shape'])} | {r['loom_ms']:.3f} | {r['bytes'] / r['loom_ms'] / 1e6:.0f} | "
              + " | ".join(cells) + f" | {r.get('err_f64', 0):.1e} | {r['ok']} |")
    write_results("scan", rows)


if __name__ == "__main__":
    main()
