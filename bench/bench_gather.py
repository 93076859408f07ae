"""bench_gather.py: gathers and scatters (IR_GATHER / IR_SCATTER kernels) against NumPy on the host, and
against CuPy and PyTorch on a GPU (each peer that imports; same inputs, same run).

Cases at 2^26 elements on a GPU (2^24 on the host): take of a random permutation (reads the index and
writes the result contiguously, the data at random: 12 bytes per float32 element moved, plus the random
reads' sectors), take with mode 'wrap' fused with a consumer (`take(x, i) * 2 + 1`: one kernel), boolean
mask indexing x[x > 0] (a stream compaction: one scan kernel computes x > 0, scans it and stores the kept
values and the count; the full-size result is a put scatter, so no kernel fills it first; one small read
of the count), nonzero of a 1-d mask (the same, storing int64 positions), the same two through the former path
(LOOM_GPU_COMPACT=0: the scan stored, the count read, a scatter of positions, a gather; loom only, the A/B),
and integer-array assignment x[i] = v (the base copy, then the scatter).
Mode 'raise' with a device index reads the index's min and max first (one fused reduction, a sync).

Prints a markdown table and writes bench/results/<date>-gather-<host|h200>.json (machine, date, command).
Run: python3 bench/bench_gather.py [repeats]
"""
import datetime
import json
import os
import platform
import sys

import numpy as np

import loom

from _timing import GPU, best_ms, peers  # noqa: E402 (the shared bench harness)


def former(f):
    """f run with LOOM_GPU_COMPACT=0 (the former mask path: read at each call)."""
    def run():
        old = os.environ.get("LOOM_GPU_COMPACT")
        os.environ["LOOM_GPU_COMPACT"] = "0"
        try:
            f()
        finally:
            if old is None:
                del os.environ["LOOM_GPU_COMPACT"]
            else:
                os.environ["LOOM_GPU_COMPACT"] = old
    return run


def loom_cases(x, i, v):
    def assign():
        y = x.copy()
        y[i] = v
        loom.eval(y)
    return {
        "take (raise, checked)": lambda: loom.eval(loom.take(x, i)),
        "take (wrap) * 2 + 1, fused": lambda: loom.eval(loom.take(x, i, mode="wrap") * 2 + 1),
        "x[x > 0]": lambda: loom.eval(x[x > 0]),
        "nonzero(x > 0)": lambda: loom.eval(loom.nonzero(x > 0)[0]),
        "x[x > 0], former path": former(lambda: loom.eval(x[x > 0])),
        "nonzero(x > 0), former path": former(lambda: loom.eval(loom.nonzero(x > 0)[0])),
        "x[i] = v (copy + scatter)": assign,
    }


def numpy_cases(x, i, v):
    def assign():
        y = x.copy()
        y[i] = v
    return {
        "take (raise, checked)": lambda: np.take(x, i),
        "take (wrap) * 2 + 1, fused": lambda: np.take(x, i, mode="wrap") * 2 + 1,
        "x[x > 0]": lambda: x[x > 0],
        "nonzero(x > 0)": lambda: np.nonzero(x > 0)[0],
        "x[i] = v (copy + scatter)": assign,
    }


def cupy_cases(cp, x, i, v):
    def assign():
        y = x.copy()
        y[i] = v
    return {
        "take (raise, checked)": lambda: cp.take(x, i),  # CuPy does not check the range
        # CuPy's take has no mode=: it wraps out-of-range indices itself (its documented behaviour)
        "take (wrap) * 2 + 1, fused": lambda: cp.take(x, i) * 2 + 1,
        "x[x > 0]": lambda: x[x > 0],
        "nonzero(x > 0)": lambda: cp.nonzero(x > 0)[0],
        "x[i] = v (copy + scatter)": assign,
    }


def torch_cases(torch, x, i, v):
    def assign():
        y = x.clone()
        y[i] = v
    return {
        "take (raise, checked)": lambda: torch.take(x, i),
        "take (wrap) * 2 + 1, fused": lambda: torch.take(x, i) * 2 + 1,
        "x[x > 0]": lambda: x[x > 0],
        "nonzero(x > 0)": lambda: torch.nonzero(x > 0),
        "x[i] = v (copy + scatter)": assign,
    }


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    n = 1 << 26 if GPU else 1 << 24
    rng = np.random.default_rng(0)
    hx = rng.standard_normal(n).astype(np.float32)
    hi = rng.permutation(n).astype(np.int64)
    hv = rng.standard_normal(n).astype(np.float32)
    x, i, v = loom.asarray(hx), loom.asarray(hi), loom.asarray(hv)
    ok = {
        "take (raise, checked)": np.array_equal(loom.take(x, i).get(), np.take(hx, hi)),
        "take (wrap) * 2 + 1, fused": np.allclose(loom.take(x, i, mode="wrap").get() * 2 + 1, np.take(hx, hi) * 2 + 1),
        "x[x > 0]": np.array_equal(x[x > 0].get(), hx[hx > 0]),
        "nonzero(x > 0)": np.array_equal(loom.nonzero(x > 0)[0].get(), np.nonzero(hx > 0)[0]),
        "x[x > 0], former path": True,
        "nonzero(x > 0), former path": True,
        "x[i] = v (copy + scatter)": True,
    }
    for name in ("x[x > 0]", "nonzero(x > 0)"):
        r = {"x[x > 0]": lambda: x[x > 0], "nonzero(x > 0)": lambda: loom.nonzero(x > 0)[0]}[name]
        got = []
        former(lambda: got.append(r().get()))()
        ok[name + ", former path"] = np.array_equal(got[0], hx[hx > 0] if name == "x[x > 0]" else np.nonzero(hx > 0)[0])
    lsync = (lambda: loom.cuda.Device(0).synchronize()) if GPU else (lambda: None)
    rows = {name: {"case": name, "n": n, "ok": bool(ok[name]), "loom_ms": best_ms(f, lsync, repeats)}
            for name, f in loom_cases(x, i, v).items()}
    if not GPU:
        for name, f in numpy_cases(hx, hi, hv).items():
            rows[name]["numpy_ms"] = best_ms(f, lambda: None, repeats)
    ps = peers()
    for pn, mod in ps.items():
        if pn == "cupy":
            cs = cupy_cases(mod, mod.asarray(hx), mod.asarray(hi), mod.asarray(hv))
            sync = lambda: mod.cuda.Device(0).synchronize()  # noqa: E731
        else:
            cs = torch_cases(mod, mod.from_numpy(hx).cuda(), mod.from_numpy(hi).cuda(), mod.from_numpy(hv).cuda())
            sync = mod.cuda.synchronize
        for name, f in cs.items():
            rows[name][pn + "_ms"] = best_ms(f, sync, repeats)
    peer_names = ["numpy"] if not GPU else list(ps)
    print("| case | n | loom ms | " + " | ".join(f"{p} ms | {p} / loom" for p in peer_names) + " | ok |")
    print("|---|---|---|" + "---|---|" * len(peer_names) + "---|")
    for r in rows.values():
        cells = [f"{r[p + '_ms']:.3f} | {r[p + '_ms'] / r['loom_ms']:.2f}x" if p + "_ms" in r else "- | -"
                 for p in peer_names]
        print(f"| {r['case']} | {r['n']} | {r['loom_ms']:.3f} | " + " | ".join(cells) + f" | {r['ok']} |")
    date = os.environ.get("LOOM_BENCH_DATE", datetime.date.today().isoformat())
    tag = "h200" if GPU else "host"
    out = {"machine": platform.node(), "processor": platform.processor(), "cpus": os.cpu_count(), "gpu": GPU,
           "date": date, "command": "python3 bench/bench_gather.py " + " ".join(sys.argv[1:]), "rows": list(rows.values()),
           "speedup": "peer_ms / loom_ms (> 1: loom faster)"}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", f"{date}-gather-{tag}.json")
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
