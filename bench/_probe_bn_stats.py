"""_probe_bn_stats.py: BatchNorm statistics against plain sums over the same 268 MB on the GPU (is the one-pass
variance or the part entry's scalar loads what costs?). python bench/_probe_bn_stats.py on the device."""
import time, numpy as np, loom
def bench(f, *a, n=50):
    out = f(*a); loom.cuda.synchronize() if hasattr(loom.cuda, "synchronize") else None
    best = 1e9
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n): out = f(*a)
        if isinstance(out, tuple): [o.sum() for o in out]
        loom.asnumpy(out[0] if isinstance(out, tuple) else out).ravel()[:1]
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e3
r = np.random.default_rng(0)
x = loom.asarray(r.standard_normal((32, 256, 64, 128)).astype(np.float32))
y = loom.asarray(r.standard_normal((256, 262144)).astype(np.float32))
z = loom.asarray(r.standard_normal((8192, 8192)).astype(np.float32))
def bn(x):
    mu = loom.mean(x, axis=(0, 2, 3), keepdims=True)
    return mu, loom.mean((x - mu) ** 2, axis=(0, 2, 3), keepdims=True)
f_bn = loom.fuse(kernel_name="p_bn")(bn)
f_sum023 = loom.fuse(kernel_name="p_s023")(lambda x: loom.sum(x, axis=(0, 2, 3)))
f_rows = loom.fuse(kernel_name="p_rows")(lambda y: loom.sum(y, axis=1))
f_rowvar = loom.fuse(kernel_name="p_rowvar")(lambda y: loom.var(y, axis=1))
f_z = loom.fuse(kernel_name="p_z")(lambda z: loom.sum(z, axis=1))
for name, f, a in [("bn2d_stats", f_bn, x), ("sum(0,2,3)", f_sum023, x), ("rows 256x262144 sum", f_rows, y),
                   ("rows 256x262144 var", f_rowvar, y), ("rows 8192x8192 sum", f_z, z)]:
    ms = bench(f, a)
    print(f"{name:24s} {ms:.4f} ms  {268.4e6 / (ms * 1e-3) / 1e9:.0f} GB/s")
