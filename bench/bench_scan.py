"""bench_scan.py: cumulative sums (loom_scan kernels) against NumPy on the host, and against CuPy and
PyTorch on a GPU (each peer that imports; same inputs, same run).

Bytes first: a scan reads its input once and writes its output once (8 bytes per float32 element,
12 for int32 -> int64); on the H200 (4.8 TB/s) 2^26 float32 elements move 537 MB, 0.11 ms at peak. Loom's
GPU scans: rows of up to 16K points one block each (one pass: read + write); longer rows are cut into
parts (a fold pass, then a scan pass from the fold of the earlier parts: 1.5x the bytes of a one-pass
scan, ~0.17 ms at peak for 2^26 float32). CuPy (CUB's decoupled look-back) moves 1x. On the host a
row is a sequential dependency chain (one add per element per core, as NumPy's loop); rows and
columns are spread over the cores.

Prints a markdown table and writes bench/results/<date>-scan-<host|h200>.json (machine, date, command).
Run: python3 bench/bench_scan.py [repeats]
"""
import sys

import numpy as np

import loom
from _timing import GPU, best_ms, loom_sync, peers, write_results


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 10
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
    ps = peers()
    rows = []
    rng = np.random.default_rng(0)
    for name, shape, dt, axis, fused in cases:
        h = (rng.random(shape) * 4 - 1).astype(dt) if dt != np.int32 else rng.integers(-100, 100, shape, dtype=dt)
        x = loom.asarray(h)
        f = (lambda: loom.eval(loom.cumsum(x * 2 + 1, axis=axis))) if fused else (lambda: loom.eval(loom.cumsum(x, axis=axis)))
        res = loom.cumsum(x * 2 + 1 if fused else x, axis=axis).get()
        want = np.cumsum(h * 2 + 1 if fused else h, axis=axis)
        ok = np.allclose(res, want, rtol=1e-4 if dt == np.float32 else 1e-9,
                         atol=1e-4 * float(np.abs(h).sum(axis=axis).max()) if dt != np.int32 else 0)
        nbytes = h.nbytes + want.nbytes
        row = {"case": name, "shape": list(shape), "dtype": np.dtype(dt).name, "axis": axis, "bytes": nbytes, "ok": bool(ok),
               "loom_ms": best_ms(f, loom_sync, repeats)}
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
    peer_names = ["numpy"] if not GPU else list(ps)
    print(f"| case | shape | loom ms | loom GB/s | " + " | ".join(f"{p} ms | loom / {p}" for p in peer_names) + " | ok |")
    print("|---|---|---|---|" + "---|---|" * len(peer_names) + "---|")
    for r in rows:
        cells = [f"{r[p + '_ms']:.3f} | {r[p + '_ms'] / r['loom_ms']:.2f}x" if p + "_ms" in r else "- | -" for p in peer_names]
        print(f"| {r['case']} | {tuple(r['shape'])} | {r['loom_ms']:.3f} | {r['bytes'] / r['loom_ms'] / 1e6:.0f} | "
              + " | ".join(cells) + f" | {r['ok']} |")
    write_results("scan", rows)


if __name__ == "__main__":
    main()
