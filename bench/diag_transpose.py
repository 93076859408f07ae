"""diag_transpose.py: why x.T * y of 20011 x 7777 float32 runs at 54 % of copy bandwidth on an H100 where
x.T + y of 8192 x 8192 runs at 90 % (DIAGNOSIS.md, session 26), and what channel-last rows of 3 cost against
rows of 4 (image_normalize_hwc). Per case: Loom's and torch.compile's median time of batches of calls
(one synchronize a batch), the bytes that must move and GB/s.

    python3 bench/diag_transpose.py time                 (the GPU machine, torch installed)
    python3 bench/diag_transpose.py loom [CASE,...]      (Loom alone: knob A/Bs)
    python3 bench/diag_transpose.py profile CASE[,CASE]  (under ncu --profile-from-start off: Loom's kernels)
"""
import ctypes
import statistics
import sys
import time

import numpy as np

import loom

# name: (kind, shape): "tmul" x stored (shape[1], shape[0]), x.T * y; "hwc" uint8 (H, W, C) normalized
CASES = {
    "tmul_20011x7777": ("tmul", (20011, 7777)),
    "tmul_20000x7776": ("tmul", (20000, 7776)),
    "tmul_20011x7776": ("tmul", (20011, 7776)),
    "tmul_20000x7777": ("tmul", (20000, 7777)),
    "tmul_20032x7808": ("tmul", (20032, 7808)),
    "tmul_7777x20011": ("tmul", (7777, 20011)),
    "tmul_8192x8192": ("tmul", (8192, 8192)),
    "tmul_12000x12000": ("tmul", (12000, 12000)),
    "tmul_8191x8193": ("tmul", (8191, 8193)),
    "hwc3_7001x5001": ("hwc", (7001, 5001, 3)),
    "hwc4_7001x5001": ("hwc", (7001, 5001, 4)),
    "hwc3_7000x5000": ("hwc", (7000, 5000, 3)),
}


def build(kind, shape, xp, asarray):
    r = np.random.default_rng(0)
    if kind == "tmul":
        x = asarray(r.standard_normal((shape[1], shape[0]), dtype=np.float32))
        y = asarray(r.standard_normal(shape, dtype=np.float32))
        return (lambda x, y: x.T * y), (x, y), 3 * 4 * shape[0] * shape[1]
    img = asarray(r.integers(0, 256, shape, dtype=np.uint8))
    c = shape[-1]
    mean = asarray(r.uniform(0.4, 0.5, c).astype(np.float32))
    std = asarray(r.uniform(0.2, 0.3, c).astype(np.float32))
    return (lambda i, m, s: (xp.astype(i, xp.float32) * (1.0 / 255.0) - m) / s), (img, mean, std), 5 * int(np.prod(shape))


def timed(call, sync, batch=10, rounds=15):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.5:
        call()
        sync()
    ts = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(batch):
            call()
        sync()
        ts.append((time.perf_counter() - t) / batch)
    return statistics.median(ts)


def time_loom(names):
    lsync = lambda: loom.cuda.Device().synchronize()  # noqa: E731
    for name in names:
        kind, shape = CASES[name]
        f, args, nbytes = build(kind, shape, loom, loom.asarray)
        lf = loom.fuse(kernel_name=name)(f)
        tl = timed(lambda: loom.eval(lf(*args)), lsync)
        print(f"{name:22s} {nbytes / 1e6:8.1f} MB {tl * 1e3:9.4f} ms {nbytes / tl / 1e9:7.0f} GB/s", flush=True)


def time_all(names):
    import torch
    tns = torch  # torch namespace shim for astype
    tns_astype = lambda a, dt: a.to(dt)  # noqa: E731

    class T:
        float32 = torch.float32
        astype = staticmethod(tns_astype)

    lsync = lambda: loom.cuda.Device().synchronize()  # noqa: E731
    tsync = torch.cuda.synchronize
    print(f"{'case':22s} {'MB':>8s} {'loom ms':>9s} {'GB/s':>7s} {'tc ms':>9s} {'GB/s':>7s} {'copy ms':>9s} {'ratio':>6s}")
    for name in names:
        kind, shape = CASES[name]
        f, args, nbytes = build(kind, shape, loom, loom.asarray)
        lf = loom.fuse(kernel_name=name)(f)
        tl = timed(lambda: loom.eval(lf(*args)), lsync)
        tf, targs, _ = build(kind, shape, T, lambda a: torch.as_tensor(a, device="cuda"))
        tc = torch.compile(tf, dynamic=False)
        tt = timed(lambda: tc(*targs), tsync)
        src = torch.empty(nbytes // 8, dtype=torch.float32, device="cuda")
        dst = torch.empty_like(src)
        tcp = timed(lambda: dst.copy_(src), tsync)
        print(f"{name:22s} {nbytes / 1e6:8.1f} {tl * 1e3:9.4f} {nbytes / tl / 1e9:7.0f} {tt * 1e3:9.4f} "
              f"{nbytes / tt / 1e9:7.0f} {tcp * 1e3:9.4f} {tt / tl:6.2f}", flush=True)
        del args, targs, src, dst
        torch.cuda.empty_cache()


def profile(names):
    cuda = ctypes.CDLL("libcuda.so.1")
    for name in names:
        kind, shape = CASES[name]
        f, args, _ = build(kind, shape, loom, loom.asarray)
        lf = loom.fuse(kernel_name=name)(f)
        for _ in range(20):
            loom.eval(lf(*args))
        loom.cuda.Device().synchronize()
        cuda.cuProfilerStart()
        loom.eval(lf(*args))
        loom.cuda.Device().synchronize()
        cuda.cuProfilerStop()
        print(f"{name}: kernels {loom.stats()['last_eval_kernels']}", flush=True)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "time"
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(CASES)
    {"profile": profile, "loom": time_loom}.get(mode, time_all)(names)
