"""bench_sort.py: sort / argsort / unique / searchsorted against NumPy on the host, and against CuPy and
PyTorch on a GPU (each peer that imports; same inputs, same run).

Bytes first. On a GPU loom sorts with a device radix sort (loom_sort: codegen/gpu_radix.c's library
kernels; python/loom/_sortnet.py picks it for one row, rows of >= 2048 keys, or shorter rows where its
cost model prefers it, such as 1000 x 1000): one histogram kernel
reads the keys once, then one sweep per key byte reads and writes every key (and argsort's int64 index)
once, with a decoupled look-back for the tiles' offsets: for 2^26 float32 keys 4 sweeps x 2^26 x 8 B
(sort) + 256 MiB of histogram reads = 2.4 GB, ~0.6 ms at the H200's ~4 TB/s; argsort adds 16 B per key
per sweep (~1.7 ms). CUB's onesweep (CuPy, torch.sort) moves the same bytes, so the target is >= 0.8x
of both at 2^26. The bitonic network (m(m+1)/2 elementwise steps over rows padded to 2^m) is kept for
many short rows and runs under LOOM_SORT_ENGINE=network: reported as its own column on the GPU up to
2^22 keys. Rows that fit one block (<= 8192 keys; 1000 x 1000, 10^4 x 100) sort in one launch, a block
a row (codegen/gpu_radix_rows.c). With LOOM_BENCH_SORT_LEGACY=1 the radix cases also run the first pass
design (LOOM_RADIX_LEGACY=1: keys held through the look-back, 91-136 registers, 1-2 blocks a
multiprocessor) as the "legacy pass" column, for A/B against the default single-sweep pass (64 registers,
4 blocks; codegen/gpu_radix.c); it is off by default (~85 s on the H200; the default run is ~30 s). The
pass's shape is tuned by bench/sort_sweep.py. On the host loom sorts with NumPy's own sorts on the host
buffer (the network runs there only under LOOM_SORT_ENGINE=network, reported as its own column for small
sizes).

Prints a markdown table and writes bench/results/<date>-sort-<host|h200>.json (machine, date, command).
Run: python3 bench/bench_sort.py [repeats]
"""
import datetime
import json
import os
import platform
import sys

import numpy as np

import loom
from _timing import GPU, best_ms, peers


def loom_op(op, x):
    if op == "sort":
        return loom.sort(x, axis=-1)
    if op == "argsort":
        return loom.argsort(x, axis=-1)
    if op == "unique":
        return loom.unique(x)
    raise ValueError(op)


def numpy_op(op, h):
    if op == "sort":
        return np.sort(h, axis=-1)
    if op == "argsort":
        return np.argsort(h, axis=-1, kind="stable")
    return np.unique(h)


def peer_op(name, mod, op, x):
    if name == "cupy":
        return {"sort": lambda: mod.sort(x, axis=-1), "argsort": lambda: mod.argsort(x, axis=-1),
                "unique": lambda: mod.unique(x)}[op]
    return {"sort": lambda: mod.sort(x, dim=-1), "argsort": lambda: mod.argsort(x, dim=-1, stable=True),
            "unique": lambda: mod.unique(x)}[op]


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    big = 1 << 24 if GPU else 1 << 22
    cases = [  # name, op, shape, dtype
        (f"sort f32 2^{big.bit_length() - 1}", "sort", (big,), np.float32),
        (f"argsort f32 2^{big.bit_length() - 1}", "argsort", (big,), np.float32),
        ("sort f32 1000 x 1000 rows", "sort", (1000, 1000), np.float32),
        ("argsort i64 1000 x 1000 rows", "argsort", (1000, 1000), np.int64),
        ("sort f32 2^20", "sort", (1 << 20,), np.float32),
        ("unique i32 2^20 (1000 values)", "unique", (1 << 20,), np.int32),
    ]
    if GPU:  # the radix sort's sizes, 2^20 .. 2^26, and rows on both sides of the engine threshold
        for k in (20, 22, 24, 26):
            cases.append((f"radix sort f32 2^{k}", "sort", (1 << k,), np.float32))
            cases.append((f"radix argsort f32 2^{k}", "argsort", (1 << k,), np.float32))
        cases += [("radix sort f64 2^26", "sort", (1 << 26,), np.float64),
                  ("radix sort i32 2^26", "sort", (1 << 26,), np.int32),
                  ("radix sort u8 2^26", "sort", (1 << 26,), np.uint8),
                  ("unique i32 2^26 (1000 values)", "unique", (1 << 26,), np.int32),
                  ("radix sort f32 2^14 x 4096 rows", "sort", (1 << 14, 4096), np.float32),
                  ("block sort f32 10^4 x 100 rows", "sort", (10_000, 100), np.float32),
                  ("block argsort f32 100 x 4096 rows", "argsort", (100, 4096), np.float32),
                  ("block sort f32 2^16 x 1024 rows", "sort", (1 << 16, 1024), np.float32)]
    ps = peers()
    lsync = (lambda: loom.cuda.Device(0).synchronize()) if GPU else (lambda: None)
    rows = []
    rng = np.random.default_rng(0)
    for name, op, shape, dt in cases:
        if np.dtype(dt).kind == "f":
            h = rng.standard_normal(shape).astype(dt)
        else:
            h = rng.integers(0, 1000 if op == "unique" else 1 << 30, shape).astype(dt)
        x = loom.asarray(h)
        loom.eval(x)
        res = loom_op(op, x).get()
        ok = bool(np.array_equal(res, numpy_op(op, h)))
        nbytes = h.nbytes
        row = {"case": name, "op": op, "shape": list(shape), "dtype": np.dtype(dt).name, "bytes": nbytes, "ok": ok,
               "loom_ms": best_ms(lambda: loom.eval(loom_op(op, x)), lsync, repeats)}
        if not GPU:
            row["numpy_ms"] = best_ms(lambda: numpy_op(op, h), lambda: None, repeats)
            if h.size <= 1 << 20:  # the device network run on the host (what a GPU runs), for reference
                os.environ["LOOM_SORT_ENGINE"] = "network"
                try:
                    row["network_on_host_ms"] = best_ms(lambda: loom.eval(loom_op(op, x)), lsync, 1)
                finally:
                    del os.environ["LOOM_SORT_ENGINE"]
        legacy = os.environ.get("LOOM_BENCH_SORT_LEGACY", "0") not in ("", "0")
        if legacy and GPU and name.startswith("radix") and "rows" not in name:  # A/B: the first pass design
            os.environ["LOOM_RADIX_LEGACY"] = "1"
            try:
                row["legacy_ok"] = bool(np.array_equal(loom_op(op, x).get(), numpy_op(op, h)))
                row["legacy_ms"] = best_ms(lambda: loom.eval(loom_op(op, x)), lsync, repeats)
            finally:
                del os.environ["LOOM_RADIX_LEGACY"]
        if GPU and h.size <= 1 << 22:  # the bitonic network on the GPU, for reference
            os.environ["LOOM_SORT_ENGINE"] = "network"
            try:
                row["network_ms"] = best_ms(lambda: loom.eval(loom_op(op, x)), lsync, repeats)
            finally:
                del os.environ["LOOM_SORT_ENGINE"]
        for pn, mod in ps.items():
            if pn == "cupy":
                xc = mod.asarray(h)
                row["cupy_ms"] = best_ms(peer_op(pn, mod, op, xc), lambda: mod.cuda.Device(0).synchronize(), repeats)
            else:
                xt = mod.from_numpy(h).cuda()
                row["torch_ms"] = best_ms(peer_op(pn, mod, op, xt), mod.cuda.synchronize, repeats)
        rows.append(row)
        print(row, flush=True)
    peer_names = ["numpy"] if not GPU else list(ps)
    print("| case | loom ms | " + " | ".join(f"{p} ms | {p} / loom" for p in peer_names)
          + (" | network on host ms" if not GPU else " | network ms | legacy pass ms") + " | ok |")
    print("|---|---|" + "---|---|" * len(peer_names) + ("---|---|" if not GPU else "---|---|---|"))
    for r in rows:
        cells = [f"{r[p + '_ms']:.3f} | {r[p + '_ms'] / r['loom_ms']:.2f}x" if p + "_ms" in r else "- | -" for p in peer_names]
        net = "network_on_host_ms" if not GPU else "network_ms"
        extra = f" | {r[net]:.3f}" if net in r else " | -"
        if GPU:
            extra += f" | {r['legacy_ms']:.3f}" + ("" if r["legacy_ok"] else " (wrong)") if "legacy_ms" in r else " | -"
        print(f"| {r['case']} | {r['loom_ms']:.3f} | " + " | ".join(cells) + extra + f" | {r['ok']} |")
    date = os.environ.get("LOOM_BENCH_DATE", datetime.date.today().isoformat())
    tag = "h200" if GPU else "host"
    out = {"machine": platform.node(), "processor": platform.processor(), "cpus": os.cpu_count(), "gpu": GPU,
           "date": date, "command": "python3 bench/bench_sort.py " + " ".join(sys.argv[1:]), "rows": rows,
           "speedup": "peer_ms / loom_ms (> 1: loom faster)"}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", f"{date}-sort-{tag}.json")
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
