"""A two-layer MLP training step written ONCE against the Python array API standard (issue 15's "done when":
forward, hand-written backward, SGD update), run on loom (host and GPU), NumPy, CuPy and PyTorch with the
same initial weights and data; the losses must agree, and loom's steps must not copy anything back to the
host (loom.stats()'s copies_to_host, counted in the runtime's one host/device copy path).

    python3 bench/mlp_array_api.py [--steps=N] [--batch=B] [--dims=IN,HIDDEN,OUT] [--host]

Writes bench/results/<date>-mlp-<machine>.{json,md}: per library the losses of every step, the median time
of a step (each library synchronized before its clock is read), and the ratio to PyTorch eager. The step
function sees only the namespace of its arrays (array_api_compat's wrappers for NumPy / CuPy / torch, loom's
own __array_namespace__), so one text serves every library.
"""
import datetime
import json
import os
import platform
import sys
import time

import numpy as np

try:
    import array_api_compat as _compat
except ImportError:  # scikit-learn vendors it (the GPU machine has scikit-learn but maybe not the package)
    from sklearn.externals import array_api_compat as _compat  # type: ignore[no-redef]


def mlp_step(params, x, y, lr):
    """One SGD step of relu(x @ w1 + b1) @ w2 + b2 under the mean squared error / 2. Returns (loss as a 0-d
    array of the library, new params). Only array API calls and operators."""
    w1, b1, w2, b2 = params
    xp = _compat.array_namespace(x, w1)
    n = x.shape[0]
    pre = x @ w1 + b1
    h = xp.maximum(pre, xp.zeros_like(pre))
    out = h @ w2 + b2
    diff = out - y
    loss = xp.sum(diff * diff) / (2 * n)
    d = diff / n
    gw2 = xp.matrix_transpose(h) @ d
    gb2 = xp.sum(d, axis=0)
    dh = (d @ xp.matrix_transpose(w2)) * xp.astype(h > 0, h.dtype)
    gw1 = xp.matrix_transpose(x) @ dh
    gb1 = xp.sum(dh, axis=0)
    return loss, (w1 - lr * gw1, b1 - lr * gb1, w2 - lr * gw2, b2 - lr * gb2)


def initial(batch, d_in, d_h, d_out, dtype, seed=0):
    """Data and weights as NumPy arrays (every library starts from these bits)."""
    r = np.random.default_rng(seed)
    x = (r.standard_normal((batch, d_in)) / np.sqrt(d_in)).astype(dtype)  # rows of norm ~1: lr 0.1 converges
    y = r.standard_normal((batch, d_out)).astype(dtype)
    w1 = (r.standard_normal((d_in, d_h)) / np.sqrt(d_in)).astype(dtype)
    w2 = (r.standard_normal((d_h, d_out)) / np.sqrt(d_h)).astype(dtype)
    return x, y, (w1, np.zeros(d_h, dtype), w2, np.zeros(d_out, dtype))


def train(to_lib, sync, data, steps, lr, timed_steps=0, between=lambda: None):
    """Runs `steps` steps from data (NumPy arrays moved in by to_lib); the losses stay library arrays until
    the end (no read-back inside the loop). Returns (losses as floats, median step ms of timed_steps more,
    what between() returned: it is called after the data's upload and again after the steps and the timed
    steps, before the losses are read)."""
    x, y, params = data
    x, y, params = to_lib(x), to_lib(y), tuple(to_lib(p) for p in params)
    sync(params)
    mark = between()
    losses = []
    for _ in range(steps):
        loss, params = mlp_step(params, x, y, lr)
        losses.append(loss)
    sync(params)
    times = []
    for _ in range(timed_steps):
        t = time.perf_counter()
        _, params = mlp_step(params, x, y, lr)
        sync(params)
        times.append((time.perf_counter() - t) * 1e3)
    marks = (mark, between())
    return [float(v) for v in losses], (sorted(times)[len(times) // 2] if times else None), marks


def libraries(gpu):
    """name -> (to_lib, sync) for the libraries present."""
    import loom
    libs = {}
    if gpu:
        def loom_sync(params):
            loom.eval(*params)
            loom.cuda.Device(0).synchronize()
        libs["loom"] = (lambda a: loom.asarray(a, device=loom.cuda.Device(0)), loom_sync)
    else:
        libs["loom"] = (lambda a: loom.asarray(a, device=loom.cpu), lambda params: loom.eval(*params))
    libs["numpy"] = (np.asarray, lambda params: None)
    if gpu:
        try:
            import cupy
            libs["cupy"] = (cupy.asarray, lambda params: cupy.cuda.Device().synchronize())
        except Exception:
            pass
    try:
        import torch
        dev = "cuda" if gpu and torch.cuda.is_available() else "cpu"
        libs["torch"] = (lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(dev),
                         (lambda params: torch.cuda.synchronize()) if dev == "cuda" else (lambda params: None))
    except Exception:
        pass
    return libs


def main():
    import loom
    args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    gpu = loom.cuda.is_available() and "--host" not in sys.argv
    steps = int(args.get("steps", 10))
    batch = int(args.get("batch", 4096 if gpu else 512))
    d_in, d_h, d_out = (int(v) for v in args.get("dims", "1024,4096,1024" if gpu else "256,1024,256").split(","))
    timed = int(args.get("timed", 20 if gpu else 5))
    data = initial(batch, d_in, d_h, d_out, np.float32)
    lr = 0.1
    rows, ref = [], None
    before = loom.stats()
    for name, (to_lib, sync) in libraries(gpu).items():
        if name == "numpy" and gpu:
            timed_here = 0  # the host's NumPy gives the reference losses only
        else:
            timed_here = timed
        losses, ms, (s0, s1) = train(to_lib, sync, data, steps, lr, timed_here,
                                     loom.stats if name == "loom" else (lambda: None))
        row = {"library": name, "losses": losses, "step_ms": ms}
        if s0 is not None:
            # between the data's upload and the losses' read-back at the end: every copy to the host there
            # would be a round trip inside a step
            row["copies_to_host"] = s1["copies_to_host"] - s0["copies_to_host"]
            row["library_calls"] = s1["library_calls"] - s0["library_calls"]
        rows.append(row)
        if name == "numpy":
            ref = losses
    for row in rows:
        row["max_rel_diff_vs_numpy"] = max(abs(a - b) / max(abs(b), 1e-30) for a, b in zip(row["losses"], ref))
    torch_ms = next((r["step_ms"] for r in rows if r["library"] == "torch"), None)
    for row in rows:
        row["torch_over_loom"] = None
        if row["library"] == "loom" and torch_ms and row["step_ms"]:
            row["torch_over_loom"] = round(torch_ms / row["step_ms"], 3)
    machine = "h200" if gpu else "host"
    date = os.environ.get("LOOM_BENCH_DATE") or datetime.date.today().isoformat()
    doc = {"machine": machine, "processor": platform.processor() or platform.machine(), "date": date,
           "command": "python3 bench/mlp_array_api.py " + " ".join(sys.argv[1:]), "batch": batch,
           "dims": [d_in, d_h, d_out], "steps": steps, "dtype": "float32", "rows": rows,
           "loom_stats_delta": {k: loom.stats()[k] - before[k] for k in before if isinstance(before[k], int)}}
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", f"{date}-mlp-{machine}")
    with open(out + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    lines = [f"# MLP step written once against the array API, {machine}, {date}", "",
             f"`{doc['command']}`: batch {batch}, dims {d_in}-{d_h}-{d_out}, float32, {steps} steps from the same "
             "weights; step ms = median of the timed steps (synchronized); loss diff = max relative difference of "
             "the per-step losses from NumPy's; loom copies to host: read-backs between the upload and the losses' "
             "read at the end (0: no round trip)", "",
             "| library | step ms | torch / loom | max loss rel diff vs NumPy | loom copies to host in the steps | "
             "loss step 1 | loss last |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['library']} | {r['step_ms'] if r['step_ms'] is None else round(r['step_ms'], 4)} | "
                     f"{r['torch_over_loom'] or ''} | {r['max_rel_diff_vs_numpy']:.2e} | {r.get('copies_to_host', '')} | "
                     f"{r['losses'][0]:.6g} | {r['losses'][-1]:.6g} |")
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    loom_row = rows[0]
    ok = all(r["max_rel_diff_vs_numpy"] < 1e-3 for r in rows) and loom_row["copies_to_host"] == 0
    print(f"mlp_array_api: losses agree and loom read back only the losses: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
