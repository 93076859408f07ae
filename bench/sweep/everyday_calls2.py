# SPDX-License-Identifier: Apache-2.0
"""everyday_calls2.py: a second set of everyday NumPy calls (none in everyday_calls.py), Loom vs NumPy vs
torch (CPU), best of 5 after a warm-up; prints ratio = best peer / Loom (torch where it has the call). A
discovery tool, not a suite: `PYTHONPATH=.bench-peers .venv/bin/python bench/sweep/everyday_calls2.py [NAME...]`."""
import time, sys, numpy as np
import loom, torch
torch.set_num_threads(2)
r = np.random.default_rng(1)
N = 1 << 22
a32 = r.standard_normal(N).astype(np.float32)
b32 = r.standard_normal(N).astype(np.float32)
a64 = a32.astype(np.float64)
M = r.standard_normal((2048, 2048)).astype(np.float32)
S = r.standard_normal((256, 256)).astype(np.float64) + 16 * np.eye(256)
I32 = r.integers(-1000, 1000, size=N).astype(np.int32)
I64 = r.integers(0, N, size=N // 4).astype(np.int64)
U32 = r.integers(0, 2**31, size=N).astype(np.uint32)
B = r.random(N) > 0.5
C64 = (a32 + 1j * b32).astype(np.complex64)
T3 = r.standard_normal((64, 256, 256)).astype(np.float32)
X = r.standard_normal((4096, 64)).astype(np.float32)
W = r.random(N).astype(np.float32)
cases = {
 "cumsum_ax1": lambda xp, L: xp.cumsum(L["M"], axis=1),
 "ptp_ax0": lambda xp, L: xp.ptp(L["M"], axis=0) if xp is not torch else None,
 "average_w": lambda xp, L: xp.average(L["a32"], weights=L["W"]) if xp is not torch else None,
 "cov": lambda xp, L: xp.cov(L["X"].T) if xp is not torch else torch.cov(L["X"].T),
 "corrcoef": lambda xp, L: xp.corrcoef(L["X"].T),
 "gradient": lambda xp, L: xp.gradient(L["a32"]),
 "percentile": lambda xp, L: xp.percentile(L["a32"], 90) if xp is not torch else torch.quantile(L["a32"][:1 << 20], 0.9),
 "histogram": lambda xp, L: xp.histogram(L["a32"], bins=64) if xp is not torch else torch.histogram(L["a32"], bins=64),
 "interp": lambda xp, L: xp.interp(L["a32"], L["xp"], L["fp"]) if xp is not torch else None,
 "convolve": lambda xp, L: xp.convolve(L["a32"][:1 << 16], L["b32"][:64]) if xp is not torch else None,
 "cross": lambda xp, L: xp.cross(L["X"][:, :3], L["X"][:, 3:6]),
 "dot_1d": lambda xp, L: xp.dot(L["a32"], L["b32"]),
 "vdot_c": lambda xp, L: xp.vdot(L["C64"], L["C64"]),
 "kron": lambda xp, L: xp.kron(L["M"][:64, :64], L["M"][:32, :32]),
 "trace": lambda xp, L: xp.trace(L["M"]),
 "diag": lambda xp, L: xp.diag(L["M"]) + 1,
 "argwhere": lambda xp, L: xp.argwhere(L["M"] > 2),
 "flatnonzero": lambda xp, L: xp.flatnonzero(L["a32"] > 1) if xp is not torch else None,
 "fancy_rows": lambda xp, L: L["M"][L["idx"]],
 "fancy_2d": lambda xp, L: L["M"][L["idx"], L["idx"]],
 "tensordot": lambda xp, L: xp.tensordot(L["T3"][:8], L["M"][:256, :256], axes=([2], [0])),
 "inner": lambda xp, L: xp.inner(L["X"], L["X"]),
 "solve": lambda xp, L: xp.linalg.solve(L["S"], L["S"][:, :8]),
 "inv": lambda xp, L: xp.linalg.inv(L["S"]),
 "det": lambda xp, L: xp.linalg.det(L["S"]),
 "qr": lambda xp, L: xp.linalg.qr(L["S"]),
 "svd": lambda xp, L: xp.linalg.svd(L["S"][:128, :128]),
 "eigh": lambda xp, L: xp.linalg.eigh(L["S"] + L["S"].T),
 "lstsq": lambda xp, L: xp.linalg.lstsq(L["X"], L["X"][:, 0], rcond=None) if xp is not torch else torch.linalg.lstsq(L["X"], L["X"][:, :1]),
 "fft_c": lambda xp, L: xp.fft.fft(L["C64"]),
 "rfft": lambda xp, L: xp.fft.rfft(L["a32"]),
 "fft2": lambda xp, L: xp.fft.fft2(L["M"]),
 "isin": lambda xp, L: xp.isin(L["I32"], L["I32"][:100]),
 "intersect1d": lambda xp, L: xp.intersect1d(L["I32"][:1 << 18], L["I32"][1 << 18:1 << 19]) if xp is not torch else None,
 "split": lambda xp, L: [s + 1 for s in xp.split(L["a32"], 8)],
 "moveaxis_copy": lambda xp, L: xp.moveaxis(L["T3"], 0, 2).copy() if xp is not torch else torch.movedim(L["T3"], 0, 2).contiguous(),
 "ravel_T": lambda xp, L: L["M"].T.ravel() if xp is not torch else L["M"].T.reshape(-1),
 "linspace": lambda xp, L: xp.linspace(0, 1, N),
 "arange_f": lambda xp, L: xp.arange(N, dtype=xp.float32) * 2,
 "eye": lambda xp, L: xp.eye(2048, dtype=xp.float32),
 "full": lambda xp, L: xp.full((2048, 2048), 3.0, dtype=xp.float32),
 "zeros_like_add": lambda xp, L: xp.zeros_like(L["M"]) + L["M"],
 "astype_bool": lambda xp, L: L["a32"].astype(xp.bool_ if xp is not torch else torch.bool),
 "bitand_shift": lambda xp, L: (L["U32"] >> 3) & 0xFF,
 "isnan_sum": lambda xp, L: xp.isnan(L["a32"]).sum(),
 "nan_to_num": lambda xp, L: xp.nan_to_num(L["a32"] / L["b32"]),
 "gcd": lambda xp, L: xp.gcd(L["I32"], 12),
 "complex_mul": lambda xp, L: L["C64"] * xp.conj(L["C64"]),
 "angle": lambda xp, L: xp.angle(L["C64"]),
 "sqrt_f64": lambda xp, L: xp.sqrt(xp.abs(L["a64"])),
 "exp_f64": lambda xp, L: xp.exp(L["a64"]),
 "tanh_f32": lambda xp, L: xp.tanh(L["a32"]),
 "softmax_rows": lambda xp, L: xp.exp(L["M"] - L["M"].max(axis=1, keepdims=True)) / xp.exp(L["M"] - L["M"].max(axis=1, keepdims=True)).sum(axis=1, keepdims=True) if xp is not torch else torch.softmax(L["M"], 1),
 "logical_xor": lambda xp, L: xp.logical_xor(L["B"], L["a32"] > 0),
 "any_all": lambda xp, L: xp.any(L["a32"] > 5),
 "minmax_i32": lambda xp, L: (xp.min(L["I32"]), xp.max(L["I32"])),
 "argmin_ax1": lambda xp, L: xp.argmin(L["M"], axis=1),
 "sum_bool": lambda xp, L: xp.sum(L["B"]),
 "cumsum_i32": lambda xp, L: xp.cumsum(L["I32"]),
 "setitem_mask": lambda xp, L: _setmask(xp, L),
 "setitem_slice": lambda xp, L: _setslice(xp, L),
 "put_scatter": lambda xp, L: _scatter(xp, L),
 "matmul_tall": lambda xp, L: L["X"].T @ L["X"],
 "matvec": lambda xp, L: L["M"] @ L["M"][0],
 "batched_matmul": lambda xp, L: L["T3"][:16, :, :64] @ L["T3"][:16, :64, :],
 "random_normal": lambda xp, L: _randn(xp),
 "triu_indices": lambda xp, L: xp.triu_indices(1024) if xp is not torch else torch.triu_indices(1024, 1024),
 "meshgrid_dist": lambda xp, L: _mesh(xp, L),
}
def _setmask(xp, L):
    c = L["a32"].clone() if xp is torch else L["a32"].copy()
    c[c < 0] = 0
    return c
def _setslice(xp, L):
    c = L["M"].clone() if xp is torch else L["M"].copy()
    c[:, ::2] = 1.0
    return c
def _scatter(xp, L):
    c = xp.zeros(N, dtype=xp.float32)
    if xp is torch:
        return c.index_add_(0, L["I64"], L["a32"][:N // 4])
    if xp is np:
        np.add.at(c, L["I64"], L["a32"][:N // 4]); return c
    xp.add.at(c, L["I64"], L["a32"][:N // 4]); return c
def _randn(xp):
    if xp is torch:
        return torch.randn(N)
    return xp.random.standard_normal(N, dtype=xp.float32) if xp is not np else np.random.default_rng().standard_normal(N, dtype=np.float32)
def _mesh(xp, L):
    g = xp.linspace(-1, 1, 1024, dtype=xp.float32)
    u, v = xp.meshgrid(g, g, indexing="ij")
    return xp.sqrt(u * u + v * v)
xpnt = np.sort(r.standard_normal(256)).astype(np.float32)
base = dict(a32=a32, b32=b32, a64=a64, M=M, S=S, I32=I32, I64=I64, U32=U32, B=B, C64=C64, T3=T3, X=X, W=W,
            xp=xpnt, fp=np.cumsum(np.abs(xpnt)).astype(np.float32), idx=r.integers(0, 2048, size=1024))
def tm(f, sync, reps=int(__import__("os").environ.get("REPS", "5"))):
    f(); sync(f())
    best = 1e9
    for _ in range(reps):
        t = time.perf_counter(); o = f(); sync(o); best = min(best, time.perf_counter() - t)
    return best * 1e3
def lsync(o):
    # an explicit stack, not a recursive closure: a closure that names itself is a reference cycle that
    # kept every output alive until Python's cyclic GC ran (fresh pages for each call's output)
    outs, stack = [], [o]
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, loom.ndarray):
            outs.append(v)
    if outs: loom.eval(*outs)
if __name__ == "__main__":  # bench/sweep/everyday_gpu.py imports the cases and data
    Ln = {k: loom.asarray(v) for k, v in base.items()}
    Lt = {k: torch.from_numpy(v) for k, v in base.items()}
    only = sys.argv[1:]
    for name, fn in cases.items():
        if only and name not in only: continue
        row = []
        try: tn = tm(lambda: fn(np, base), lambda o: None)
        except Exception as e: tn = float('nan'); row.append("NPERR %s" % str(e)[:40])
        try: tl = tm(lambda: fn(loom, Ln), lsync)
        except Exception as e: tl = float('nan'); row.append("LOOMERR %s: %s" % (type(e).__name__, str(e)[:80]))
        try:
            if fn(torch, Lt) is None: raise TypeError
            tt = tm(lambda: fn(torch, Lt), lambda o: None)
        except Exception as e: tt = float('nan')
        best = np.nanmin([tn, tt])
        print("%-16s loom %8.3f numpy %8.3f torch %8.3f  ratio %.2f %s" % (name, tl, tn, tt, best / tl, " ".join(row)), flush=True)
