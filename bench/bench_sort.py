"""bench_sort.py: sort / argsort / unique / searchsorted against NumPy on the host, and against CuPy and
PyTorch on a GPU (each peer that imports; same inputs, same run).

Bytes first. Loom's device sort is a bitonic network (python/loom/_sortnet.py): for rows padded to
N = 2^m it runs m(m+1)/2 elementwise steps, each reading and writing every key (and, for argsort and
stable sorts, an int32 index) once. 2^24 float32 keys: 300 steps x 16.8M x 8 B (sort: key read +
write) = 40 GB, ~10 ms at the H200's ~4 TB/s of a streaming kernel, plus ~300 launches and the Python
cost of building each step (~0.1 ms each on the host side, hidden behind the GPU when it is slower);
argsort moves 16 B per element per step (~20 ms). CuPy's radix sort (CUB) makes ~4 passes of 8-16 B
per element for float32: ~1 ms for 2^24 -- the network is expected ~10-20x behind it at 2^24 and
closer for short rows (1000 x 1000: 55 steps of 1024-padded rows, ~1 ms). On the host loom sorts with
NumPy's own sorts on the host buffer (the network runs there only under LOOM_SORT_ENGINE=network,
reported as its own column for small sizes).

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
          + (" | network on host ms" if not GPU else "") + " | ok |")
    print("|---|---|" + "---|---|" * len(peer_names) + ("---|" if not GPU else "") + "---|")
    for r in rows:
        cells = [f"{r[p + '_ms']:.3f} | {r[p + '_ms'] / r['loom_ms']:.2f}x" if p + "_ms" in r else "- | -" for p in peer_names]
        extra = (f" | {r['network_on_host_ms']:.1f}" if "network_on_host_ms" in r else " | -") if not GPU else ""
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
