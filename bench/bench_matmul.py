"""bench_matmul.py: matrix products of loom beside NumPy (host) or CuPy and PyTorch (GPU), same run.

Cases (issue 15, item 1): square products 4096^2 (and 8192^2 on a GPU) in float32 (TF32 off in every
library: torch.backends.cuda.matmul.allow_tf32 = False, CuPy's default), float16, bfloat16 (GPU) and
float64; a batched product (64 x 512 x 512 x 512); the fused epilogue relu(x @ w + b) (loom: one cuBLASLt
call with the BIAS+RELU epilogue) and gelu(x @ w + b) (tanh GELU: one cuBLASLt call with the GELU_BIAS
epilogue, passes/calls.c; torch.compile where it works); and a two-layer MLP training step (forward,
hand-written backward, SGD) of batch 4096, 1024 -> 4096 -> 1024, written once against the array API.
Each figure is the median of rounds of back-to-back calls ended by one synchronization (GPU) or one
evaluation (loom's lazy graph is evaluated inside each call: .get() is not timed on the GPU, loom.eval
is), in ms per call, with TFLOP/s from 2 m n k per product. Ratios are peer / loom (> 1: loom faster).
Complex squares too, complex64 and complex128 (on the host as well): each a library call in every library
(loom: cgemm / zgemm on the host, cuBLASLt's CUDA_C_32F / C_64F on the GPU; the peers cgemm / zgemm; half
the size on the host), with
TFLOP/s from 8 m n k real operations per complex product; a case of their own ("matmul N^2 complex", so
--only=complex runs just them) after the real squares of that size, and each complex row timed only
while at least COMPLEX_RESERVE_S of the budget is left, so they cannot eat the figures after them.
Writes bench/results/<date>-matmul-<h200|host>.{json,md} with the machine, date and command, rewritten after
every row (a run stopped from outside keeps what it measured); each row has its wall time (wall_s: data,
warm-ups, torch.compile's compile). --budget=S (default 110): past S seconds the remaining cases are skipped
and listed (`skipped`), so a run fits a 120 s bound. Operands are drawn once per shape (float32 normal) and
cast per dtype. loom's GPU products choose their cuBLASLt algorithm by timing on their first call
(LOOM_BLAS_AUTOTUNE, runtime/gpu/gpu_blas.c): in the warm-up, not in the figures.
Run: python3 bench/bench_matmul.py [--host] [--quick] [--only=WORD,...] [--budget=S]
"""
import datetime
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

import loom

COMPLEX_RESERVE_S = 30.0  # a complex row runs only while this much of the budget is left (not with --only)


def timed(fn, sync, min_time=0.25, rounds=5):
    """Median ms per call over rounds, after a warm-up call (which compiles, and picks loom's cuBLASLt
    algorithm by timing) and a calibration of at most 0.1 s (at least 2 calls). Slow calls (> 5 ms) get
    3 rounds, very slow ones (> 100 ms) 3 rounds of one call: a 8192^2 product's figure within ~0.5 s."""
    fn()
    sync()
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < 0.1 or n < 2:
        fn()
        n += 1
    sync()
    per = (time.perf_counter() - t0) / n
    if per > 5e-3:
        rounds = 3
    reps = 1 if per > 0.1 else max(1, int(min_time / rounds / max(per, 1e-6)))
    res = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        res.append((time.perf_counter() - t) / reps * 1e3)
    return sorted(res)[len(res) // 2]


def relu(xp, v):
    return xp.relu(v) if hasattr(xp, "relu") else xp.maximum(v, 0)


def mlp_step(xp, x, y, w1, b1, w2, b2, lr=1e-3):
    h = relu(xp, x @ w1 + b1)
    out = h @ w2 + b2
    d = (out - y) * (1.0 / x.shape[0])
    gw2 = h.T @ d
    gb2 = xp.sum(d, axis=0)
    dh = (d @ w2.T) * (h > 0)
    gw1 = x.T @ dh
    gb1 = xp.sum(dh, axis=0)
    return w1 - lr * gw1, b1 - lr * gb1, w2 - lr * gw2, b2 - lr * gb2


def gelu(xp, v):
    return 0.5 * v * (1 + xp.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))


def machine(gpu):
    if gpu:
        try:
            return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                  capture_output=True, text=True, timeout=20).stdout.strip() or "unknown GPU"
        except Exception:
            return "unknown GPU"
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"


def main():
    args = sys.argv[1:]
    gpu = loom.cuda.is_available() and "--host" not in args
    quick = "--quick" in args
    rng = np.random.default_rng(0)
    peers = {}
    if gpu:
        try:
            import cupy
            peers["cupy"] = cupy
        except Exception:
            pass
        try:
            import torch
            if torch.cuda.is_available():
                torch.backends.cuda.matmul.allow_tf32 = False
                torch.backends.cudnn.allow_tf32 = False
                peers["torch"] = torch
        except Exception:
            pass
    else:
        peers["numpy"] = np
    sync = {"loom": (lambda: loom.cuda.Device(0).synchronize()) if gpu else (lambda: None),
            "cupy": lambda: peers["cupy"].cuda.Device(0).synchronize(),
            "torch": lambda: peers["torch"].cuda.synchronize(), "numpy": lambda: None}

    def to(lib, a):
        if lib == "loom":
            return loom.asarray(a)
        if lib == "cupy":
            return peers["cupy"].asarray(a)
        if lib == "torch":
            t = peers["torch"]
            if a.dtype.name == "bfloat16":  # exact: the values are bfloat16 already
                return t.from_numpy(a.astype(np.float32)).to("cuda").to(t.bfloat16)
            return t.from_numpy(np.ascontiguousarray(a)).to("cuda")
        return a

    libs = ["loom"] + list(peers)
    rows = []
    skipped = []
    start = time.perf_counter()
    budget = float(next((a[len("--budget="):] for a in args if a.startswith("--budget=")), 110))
    date = os.environ.get("LOOM_BENCH_DATE", datetime.date.today().isoformat())

    # --only=WORD[,WORD]: the cases whose name contains one of the words (e.g. --only=gelu,MLP: the ones
    # that need torch.compile, in a call of their own within a time limit)
    only = [w for a in args if a.startswith("--only=") for w in a[len("--only="):].split(",") if w]

    def run(name, flops, make, body, dtypes, compiled=False, reserve=0.0):
        """reserve: seconds of the budget a row leaves for the cases after it (skipped when fewer are left)."""
        if only and not any(w in name for w in only):
            return
        for dt in dtypes:
            if time.perf_counter() - start > budget - (0 if only else reserve):
                skipped.append(f"{name} {dt}")
                print(f"bench_matmul: past the {budget:.0f} s budget: {name} {dt} skipped", flush=True)
                continue
            t_row = time.perf_counter()
            row = {"case": name, "dtype": dt}
            arrays = make(dt)
            for lib in libs:
                if lib == "cupy" and dt == "bfloat16":
                    continue
                xs = [to(lib, a) for a in arrays]
                xp = {"loom": loom, "cupy": peers.get("cupy"), "torch": peers.get("torch"), "numpy": np}[lib]
                if lib == "loom":
                    fn = lambda: loom.eval(*[r for r in _tuple(body(xp, *xs))])  # noqa: E731
                else:
                    fn = lambda: body(xp, *xs)  # noqa: E731
                try:
                    ms = timed(fn, sync[lib])
                except Exception as e:  # a peer without the dtype or op: noted, not fatal
                    row[lib + "_error"] = f"{type(e).__name__}: {e}"[:160]
                    continue
                row[lib + "_ms"] = round(ms, 4)
                row[lib + "_tflops"] = round(flops / ms / 1e9, 2)
            if compiled and "torch" in peers:  # torch.compile of the same body (Inductor fuses the epilogue)
                t = peers["torch"]
                xs = [to("torch", a) for a in arrays]
                try:
                    cfn = t.compile(lambda *v: body(t, *v), dynamic=False)
                    ms = timed(lambda: cfn(*xs), sync["torch"])
                    row["torch_compile_ms"] = round(ms, 4)
                    row["torch_compile_over_loom"] = round(ms / row["loom_ms"], 3) if "loom_ms" in row else None
                except Exception as e:
                    row["torch_compile_error"] = f"{type(e).__name__}: {e}"[:160]
            for lib in peers:
                if lib + "_ms" in row and "loom_ms" in row:
                    row[lib + "_over_loom"] = round(row[lib + "_ms"] / row["loom_ms"], 3)
            row["wall_s"] = round(time.perf_counter() - t_row, 1)
            rows.append(row)
            print(row, flush=True)
            write(rows, skipped, time.perf_counter() - start)
            del arrays

    base = {}

    def rand(shape, dt, i=0):
        """Operand i of shape in dtype dt: standard normal float32 values drawn once per (shape, i)."""
        key = (tuple(shape), i)
        if key not in base:
            base[key] = rng.standard_normal(shape, dtype=np.float32)
        a = base[key]
        if dt == "bfloat16":
            import ml_dtypes
            return a.astype(ml_dtypes.bfloat16)
        if dt in ("complex64", "complex128"):  # the imaginary part: the next operand's values
            c = np.empty(shape, dt)
            c.real, c.imag = a, rand(shape, "float32", i + 1)
            return c
        return a.astype(dt)

    def write(rows, skipped, wall):
        tag = ("h200" if gpu else "host") + ("-" + "-".join(only).lower() if only else "")
        out = {"machine": machine(gpu), "date": date, "command": "python3 bench/bench_matmul.py " + " ".join(args),
               "wall_s": round(wall, 1), "skipped": skipped, "loom_stats": loom.stats(), "rows": rows}
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
        os.makedirs(root, exist_ok=True)
        with open(os.path.join(root, f"{date}-matmul-{tag}.json"), "w") as f:
            json.dump(out, f, indent=1)
        with open(os.path.join(root, f"{date}-matmul-{tag}.md"), "w") as f:
            f.write(f"# Matrix products, {out['machine']}, {date}\n\n`{out['command']}`; ms per call (median), "
                    f"TFLOP/s; ratio = peer ms / loom ms (> 1: loom faster); {out['wall_s']} s in all\n\n")
            cols = ["case", "dtype"] + [c for lib in libs for c in (lib + "_ms", lib + "_tflops")] + \
                   [lib + "_over_loom" for lib in peers] + \
                   (["torch_compile_ms", "torch_compile_over_loom"] if "torch" in peers else []) + ["wall_s"]
            f.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
            for r in rows:
                f.write("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |\n")
            if skipped:
                f.write(f"\nSkipped past the {budget:.0f} s budget: {', '.join(skipped)}\n")
        return tag

    sizes = [4096] if quick or not gpu else [4096, 8192]
    float_dts = ["float32", "float16", "bfloat16", "float64"] if gpu else ["float32", "float64"]

    def squares(n):  # complex: 8 n^3 real operations (4 real products' multiply-adds)
        run(f"matmul {n}^2", 2.0 * n ** 3, lambda dt: (rand((n, n), dt), rand((n, n), dt, 2)),
            lambda xp, a, b: a @ b, float_dts)
        nc = n if gpu else n // 2  # the host: half the size (a 4096^2 zgemm is ~10 s on 2 cores)
        run(f"matmul {nc}^2 complex", 8.0 * nc ** 3, lambda dt: (rand((nc, nc), dt), rand((nc, nc), dt, 2)),
            lambda xp, a, b: a @ b, ["complex64", "complex128"], reserve=COMPLEX_RESERVE_S)

    squares(sizes[0])
    # the figures first (4096^2, the gelu epilogue beside torch.compile, the MLP step, 8192^2), then
    # the rest: a budget cuts from the end
    m, k, nn = (8192, 4096, 4096) if gpu else (2048, 1024, 1024)
    run(f"gelu(x@w+b) {m}x{k}x{nn}", 2.0 * m * k * nn,
        lambda dt: (rand((m, k), dt), rand((k, nn), dt), rand((nn,), dt)),
        lambda xp, x, w, b: gelu(xp, x @ w + b), ["float16", "float32"] if gpu else ["float32"], compiled=True)
    bt, d_in, d_h = (4096, 1024, 4096) if gpu else (512, 256, 1024)
    mlp_flops = 2.0 * bt * d_in * d_h * 6
    run(f"MLP step {bt}x{d_in}x{d_h}", mlp_flops,
        lambda dt: (rand((bt, d_in), dt), rand((bt, d_in), dt, 1), rand((d_in, d_h), dt) * 0.03, np.zeros(d_h, dt),
                    rand((d_h, d_in), dt) * 0.03, np.zeros(d_in, dt)),
        lambda xp, *a: mlp_step(xp, *a), ["float32"])
    for n in sizes[1:]:
        squares(n)
    run(f"relu(x@w+b) {m}x{k}x{nn}", 2.0 * m * k * nn,
        lambda dt: (rand((m, k), dt), rand((k, nn), dt), rand((nn,), dt)),
        lambda xp, x, w, b: relu(xp, x @ w + b),
        ["float32", "float16"] if gpu else ["float32"])
    bsz = 64 if gpu else 16
    run(f"batched {bsz}x512^3", 2.0 * bsz * 512 ** 3, lambda dt: (rand((bsz, 512, 512), dt), rand((bsz, 512, 512), dt, 1)),
        lambda xp, a, b: a @ b, ["float32", "float16"] if gpu else ["float32"])
    # the MLP step's products one by one, in the operand layouts the step uses (transposed views included):
    # where the step's gap to torch comes from (a product's algorithm or the work around them)
    h_dt = lambda dt: rand((bt, d_h), dt)  # noqa: E731
    parts = [("x@w1+b1 relu", lambda dt: (rand((bt, d_in), dt), rand((d_in, d_h), dt), np.zeros(d_h, dt)),
              lambda xp, x, w, b: relu(xp, x @ w + b)),
             ("h@w2", lambda dt: (h_dt(dt), rand((d_h, d_in), dt)), lambda xp, h, w: h @ w),
             ("h.T@d", lambda dt: (h_dt(dt), rand((bt, d_in), dt)), lambda xp, h, d: h.T @ d),
             ("d@w2.T", lambda dt: (rand((bt, d_in), dt), rand((d_h, d_in), dt)), lambda xp, d, w: d @ w.T),
             ("x.T@dh", lambda dt: (rand((bt, d_in), dt), h_dt(dt)), lambda xp, x, dh: x.T @ dh),
             ("sum(d, 0)", lambda dt: (h_dt(dt),), lambda xp, d: xp.sum(d, axis=0))]
    for pname, pmake, pbody in parts:
        pflops = 2.0 * bt * d_in * d_h if "@" in pname else 1.0 * bt * d_h
        run(f"MLP part {pname}", pflops, pmake, pbody, ["float32"])

    wall = time.perf_counter() - start
    tag = write(rows, skipped, wall)
    print(f"bench_matmul: wrote bench/results/{date}-matmul-{tag}.json and .md ({wall:.0f} s"
          + (f"; {len(skipped)} skipped past the budget" if skipped else "") + ")")
    return 0


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


if __name__ == "__main__":
    sys.exit(main())
