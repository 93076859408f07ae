"""sort_sweep.py: the device radix sort's shape settings timed in one run on a GPU, beside CuPy and PyTorch
(same process, same inputs), every setting's result checked against NumPy on the host copy.

What it varies (compile-time switches of codegen/gpu_radix.c, read per sort by cg_radix_tuning; the
runtime keeps one module per distinct setting, so one process times them all; see gpu_radix.h):
  LOOM_GPU_RADIX_ITEMS4      keys per thread when keys and values are <= 4 bytes (default 16: 4096-key tiles)
  LOOM_GPU_RADIX_ITEMS8      keys per thread when one of them is 8 bytes (default 8: 2048-key tiles; 12 for 8-byte keys)
  LOOM_GPU_RADIX_BLOCKS_PER_SM  the pass kernel's launch bound (default 4: <= 64 registers a thread; 3 for 8-byte keys)
  LOOM_GPU_RADIX_HIST_PARTS  copies of the histogram kernel's block counts (default 4; 2 for 8-byte keys)
  LOOM_GPU_RADIX_HIST_TILES  tiles per histogram block (runtime; default: ~1024 blocks)
  LOOM_GPU_RADIX_RANK=match  peers of a digit from one match.any instead of 8 wave ballots (the default)
  LOOM_GPU_RADIX_RANK=early  every item's peers found before the wave counters' dependent chain (the
                             default for keys-only sorts); =chain: each item's match inside the chain
                             (the previous default; argsort's default)
  LOOM_GPU_RADIX_RANK=smem   early counts: the tile's digit counts per wave first (shared atomics), published
                             and scanned, then each item's tile slot from one returning shared atomic of its
                             highest peer (codegen/gpu_radix_rank.c; no counter chain between items)
  LOOM_GPU_RADIX_RANK=atomic,chain  the default ranking with each counter taken by one returning shared atomic
                             of the highest peer (no load-store chain, no count conflicts)
  LOOM_RADIX_LEGACY=1        the first pass design (keys held through the look-back, values in a 2nd round)
  LOOM_GPU_RADIX_ROWS=0      rows that fit one block go the previous way (tile sweep, or the network where
                             the cost model picked it) instead of the block row sort
Cases: float32 / int32 / float64 sort and float32 argsort at 2^26, float32 at 2^24 and int32 in [0, 1000) at
2^24 (the tile sweep);
short rows (1000 x 1000, 10^4 x 100, 100 x 10^4, int64 argsort 1000 x 1000) with the block row sort on
and off. A setting applies to the cases it changes (ITEMS4 to <= 4-byte ones, ITEMS8 to float64).

Correctness: sort results must equal numpy.sort of the host copy bit for bit; argsort results must be a
permutation that puts the keys in numpy.sort's order with ties in index order (stable). A wrong setting
is reported "WRONG" and never named best.

Prints a markdown table, the best setting per key width (the lowest geometric mean over its 2^26 cases,
with the ratio to CuPy and torch), and writes bench/results/<date>-sort-sweep-<h200|host>.{json,md}.
A time budget (default 110 s, argument 2; the row cases run after it, ~5 s) skips the remaining
settings (for every case: settings are the outer loop), reported as skipped.
Run: python3 bench/sort_sweep.py [repeats=5] [budget_s=110]
"""
import math
import os
import sys
import time

import numpy as np

import loom
from _sweep import table, write_report  # noqa: E402 (bench/ is first on sys.path)
from _timing import GPU, best_ms, peers  # noqa: E402

KNOBS = ("LOOM_GPU_RADIX_ITEMS4", "LOOM_GPU_RADIX_ITEMS8", "LOOM_GPU_RADIX_BLOCKS_PER_SM", "LOOM_GPU_RADIX_HIST_PARTS",
         "LOOM_GPU_RADIX_HIST_TILES", "LOOM_GPU_RADIX_RANK", "LOOM_RADIX_LEGACY", "LOOM_GPU_RADIX_ROWS")

# name, env, which tile cases it applies to ("4": widest element <= 4 bytes, "8": float64, "all")
SETTINGS = [
    ("default", {}, "all"),
    ("smem rank", {"LOOM_GPU_RADIX_RANK": "smem"}, "all"),
    # ptxas (sm_90): no spill at 80 registers; 92 SASS a key a pass with the tile's fixed cost (16 at 4: 98)
    ("smem rank items4=20 bound=3", {"LOOM_GPU_RADIX_RANK": "smem", "LOOM_GPU_RADIX_ITEMS4": "20",
                                     "LOOM_GPU_RADIX_BLOCKS_PER_SM": "3"}, "4"),
    ("smem rank items4=24 bound=3", {"LOOM_GPU_RADIX_RANK": "smem", "LOOM_GPU_RADIX_ITEMS4": "24",
                                     "LOOM_GPU_RADIX_BLOCKS_PER_SM": "3"}, "4"),
    ("atomic rank", {"LOOM_GPU_RADIX_RANK": "atomic,chain"}, "all"),
    ("match rank", {"LOOM_GPU_RADIX_RANK": "match"}, "all"),
    ("early rank", {"LOOM_GPU_RADIX_RANK": "early"}, "all"),
    ("chain rank", {"LOOM_GPU_RADIX_RANK": "chain"}, "all"),
    ("early rank bound=3", {"LOOM_GPU_RADIX_RANK": "early", "LOOM_GPU_RADIX_BLOCKS_PER_SM": "3"}, "all"),
    ("items4=12", {"LOOM_GPU_RADIX_ITEMS4": "12"}, "4"),
    ("items4=20 bound=3", {"LOOM_GPU_RADIX_ITEMS4": "20", "LOOM_GPU_RADIX_BLOCKS_PER_SM": "3"}, "4"),
    ("items4=24 bound=2", {"LOOM_GPU_RADIX_ITEMS4": "24", "LOOM_GPU_RADIX_BLOCKS_PER_SM": "2"}, "4"),
    ("items4=16 bound=3", {"LOOM_GPU_RADIX_BLOCKS_PER_SM": "3"}, "4"),
    ("items8=12 bound=3", {"LOOM_GPU_RADIX_ITEMS8": "12", "LOOM_GPU_RADIX_BLOCKS_PER_SM": "3"}, "8"),
    ("items8=16 bound=2", {"LOOM_GPU_RADIX_ITEMS8": "16", "LOOM_GPU_RADIX_BLOCKS_PER_SM": "2"}, "8"),
    ("items4=8", {"LOOM_GPU_RADIX_ITEMS4": "8"}, "4"),
    ("items4=32 bound=2", {"LOOM_GPU_RADIX_ITEMS4": "32", "LOOM_GPU_RADIX_BLOCKS_PER_SM": "2"}, "4"),
    ("items8=6", {"LOOM_GPU_RADIX_ITEMS8": "6"}, "8"),
    ("hist_parts=1", {"LOOM_GPU_RADIX_HIST_PARTS": "1"}, "all"),
    ("hist_tiles=4", {"LOOM_GPU_RADIX_HIST_TILES": "4"}, "all"),
    ("hist_tiles=64", {"LOOM_GPU_RADIX_HIST_TILES": "64"}, "all"),
    ("legacy", {"LOOM_RADIX_LEGACY": "1"}, "all"),
]

# name, op, shape, dtype, width group ("4" / "8"); the 2^26 ones pick the best setting
TILE_CASES = [
    ("sort f32 2^26", "sort", (1 << 26,), np.float32, "4"),
    ("sort i32 2^26", "sort", (1 << 26,), np.int32, "4"),
    ("argsort f32 2^26", "argsort", (1 << 26,), np.float32, "4"),
    ("sort f64 2^26", "sort", (1 << 26,), np.float64, "8"),
    ("sort f32 2^24", "sort", (1 << 24,), np.float32, "4"),
    ("argsort f32 2^24", "argsort", (1 << 24,), np.float32, "4"),
    # low entropy: 3 of 4 digits equal in every key (many lanes of a wave on one digit: shared-atomic
    # conflicts in LOOM_GPU_RADIX_RANK=smem's counts)
    ("sort i32 2^24 [0,1000)", "sort", (1 << 24,), np.int32, "4"),
]
ROW_CASES = [
    ("sort f32 1000 x 1000", "sort", (1000, 1000), np.float32),
    ("argsort f32 1000 x 1000", "argsort", (1000, 1000), np.float32),
    ("sort f32 10^4 x 100", "sort", (10_000, 100), np.float32),
    ("argsort i64 1000 x 1000", "argsort", (1000, 1000), np.int64),
    ("sort f32 100 x 10^4", "sort", (100, 10_000), np.float32),
]


def make_input(shape, dt, rng, name=""):
    if "[0,1000)" in name:
        return rng.integers(0, 1000, shape, dtype=dt)
    if np.dtype(dt).kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)


def reference(h):
    """numpy.sort along the last axis (every sort kind gives these bits for data without -0.0 / NaN)."""
    return np.sort(h, axis=-1)


def check(op, h, ref, res):
    """Whether loom's result is right: the sorted bits, or a stable permutation into that order."""
    if op == "sort":
        return bool(res.shape == ref.shape and np.array_equal(res.view(np.uint8), ref.view(np.uint8)))
    idx = res.astype(np.int64, copy=False)
    if idx.shape != h.shape or idx.min(initial=0) < 0 or idx.max(initial=0) >= h.shape[-1]:
        return False
    got = np.take_along_axis(h, idx, axis=-1)
    if not np.array_equal(got, ref):
        return False
    seen = np.zeros(h.shape, bool)
    np.put_along_axis(seen, idx, True, axis=-1)
    if not seen.all():  # every position once
        return False
    tie = got[..., 1:] == got[..., :-1]
    return bool(np.all(~tie | (idx[..., 1:] > idx[..., :-1])))  # equal keys in index order


def loom_op(op, x):
    return loom.sort(x, axis=-1) if op == "sort" else loom.argsort(x, axis=-1)


def peer_fn(name, mod, op, x):
    if name == "cupy":
        return (lambda: mod.sort(x, axis=-1)) if op == "sort" else (lambda: mod.argsort(x, axis=-1))
    return (lambda: mod.sort(x, dim=-1)) if op == "sort" else (lambda: mod.argsort(x, dim=-1, stable=True))


class Env:
    """os.environ with the sweep's knobs set to `env` (the others unset) inside a with block."""

    def __init__(self, env):
        self.env = env

    def __enter__(self):
        self.saved = {k: os.environ.get(k) for k in KNOBS}
        for k in KNOBS:
            os.environ.pop(k, None)
        os.environ.update(self.env)

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def time_loom(op, x, h, ref, repeats, sync):
    """(ms, ok) of loom's op under the current environment (the first call compiles the setting's module)."""
    try:
        ok = check(op, h, ref, loom_op(op, x).get())
    except Exception as e:  # a setting that fails to build or launch is reported, not fatal
        return None, f"error: {e}"
    return best_ms(lambda: loom.eval(loom_op(op, x)), sync, repeats), ok


def peer_times(ps, op, h, repeats):
    out = {}
    for pn, mod in ps.items():
        if pn == "cupy":
            xc = mod.asarray(h)
            out["cupy_ms"] = best_ms(peer_fn(pn, mod, op, xc), lambda: mod.cuda.Device(0).synchronize(), repeats)
            del xc
        else:
            xt = mod.from_numpy(h).cuda()
            out["torch_ms"] = best_ms(peer_fn(pn, mod, op, xt), mod.cuda.synchronize, repeats)
            del xt
    return out


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 110.0
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    ps = peers()
    sync = (lambda: loom.cuda.Device(0).synchronize()) if GPU else (lambda: None)
    tile_cases = TILE_CASES if GPU else [(n.replace("2^26", "2^20").replace("2^24", "2^18"), op,
                                          (s[0] >> 6,), dt, w) for n, op, s, dt, w in TILE_CASES]
    rows = []
    prepared = []  # every case's input on the device, reference and peers' times, before any setting
    for name, op, shape, dt, width in tile_cases:
        h = make_input(shape, dt, rng, name)
        x = loom.asarray(h)
        loom.eval(x)
        base = {"case": name, "op": op, "shape": list(shape), "dtype": np.dtype(dt).name, "width": width}
        base.update(peer_times(ps, op, h, repeats))
        prepared.append((base, op, h, reference(h), x))
    print(f"inputs, references and peers: {time.perf_counter() - t0:.0f} s", flush=True)
    # settings outermost: when the budget runs out, the last settings are skipped for every case
    for sname, env, applies in SETTINGS:
        for base, op, h, ref, x in prepared:
            if applies != "all" and applies != base["width"]:
                continue
            row = dict(base, setting=sname, env=env)
            if time.perf_counter() - t0 > budget:
                row.update(ms=None, ok="skipped (time budget)")
            else:
                with Env(env):
                    row["ms"], row["ok"] = time_loom(op, x, h, ref, repeats, sync)
            rows.append(row)
            print({k: v for k, v in row.items() if k != "env"}, flush=True)
    del prepared
    for name, op, shape, dt in ROW_CASES:
        h = make_input(shape, dt, rng)
        ref = reference(h)
        x = loom.asarray(h)
        loom.eval(x)
        base = {"case": name, "op": op, "shape": list(shape), "dtype": np.dtype(dt).name, "width": "rows"}
        base.update(peer_times(ps, op, h, repeats))
        for sname, env in (("block rows", {}), ("no block rows", {"LOOM_GPU_RADIX_ROWS": "0"})):
            row = dict(base, setting=sname, env=env)
            with Env(env):
                row["ms"], row["ok"] = time_loom(op, x, h, ref, repeats, sync)
            rows.append(row)
            print({k: v for k, v in row.items() if k != "env"}, flush=True)
    report(rows, repeats, budget, time.perf_counter() - t0)


def ratio(r, peer):
    return r[peer + "_ms"] / r["ms"] if r.get("ms") and r.get(peer + "_ms") else None


def best_per_width(rows):
    """{width: (setting, geometric mean ms, {case: ms})} over the width's 2^26 cases, correct settings only."""
    out = {}
    for width in ("4", "8"):
        cases = sorted({r["case"] for r in rows if r["width"] == width and "2^26" in r["case"]})
        by = {}
        for r in rows:
            if r["width"] == width and r["case"] in cases:
                by.setdefault(r["setting"], {})[r["case"]] = r
        best = None
        for s, got in by.items():
            if len(got) != len(cases) or any(g["ok"] is not True for g in got.values()):
                continue
            gm = math.exp(sum(math.log(g["ms"]) for g in got.values()) / len(got))
            if best is None or gm < best[1]:
                best = (s, gm, {c: g["ms"] for c, g in got.items()})
        if best:
            out[width] = best
    return out


def report(rows, repeats, budget, took):
    cells = []
    for r in rows:
        ms = f"{r['ms']:.3f}" if r.get("ms") else "-"
        c = [r["case"], r["setting"], ms]
        for p in ("cupy", "torch"):
            q = ratio(r, p)
            c += [f"{r[p + '_ms']:.3f}" if p + "_ms" in r else "-", f"{q:.2f}x" if q else "-"]
        c.append("ok" if r["ok"] is True else ("WRONG" if r["ok"] is False else str(r["ok"])))
        cells.append(c)
    lines = table(["case", "setting", "loom ms", "cupy ms", "cupy / loom", "torch ms", "torch / loom", "ok"], cells)
    best = best_per_width(rows)
    lines.append("")
    names = {"4": "keys and values <= 4 bytes (f32/i32 sort, f32 argsort)", "8": "8-byte keys (f64 sort)"}
    for w, (s, gm, per) in best.items():
        env = next(r["env"] for r in rows if r["setting"] == s)
        detail = ", ".join(f"{c} {ms:.3f} ms" for c, ms in sorted(per.items()))
        lines.append(f"best for {names[w]}: **{s}** {env or '(defaults)'}: geometric mean {gm:.3f} ms ({detail})")
    wrong = sorted({f"{r['case']} / {r['setting']}" for r in rows if r["ok"] is False})
    lines.append("wrong results: " + (", ".join(wrong) if wrong else "none"))
    lines.append(f"sweep took {took:.0f} s (budget {budget:.0f} s), best of {repeats}")
    text = "\n".join(lines)
    print(text)
    write_report("sort", "Radix sort shape sweep",
                 {"command": "python3 bench/sort_sweep.py " + " ".join(sys.argv[1:]), "rows": rows,
                  "best": {w: {"setting": s, "geomean_ms": gm, "cases_ms": per} for w, (s, gm, per) in best.items()},
                  "seconds": took, "speedup": "peer_ms / loom_ms (> 1: loom faster)"}, text, GPU)


if __name__ == "__main__":
    main()
