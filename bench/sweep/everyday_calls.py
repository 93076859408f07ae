# SPDX-License-Identifier: Apache-2.0
"""everyday_calls.py: 60 everyday NumPy calls nobody benchmarked, Loom vs NumPy vs torch (CPU), best of 5
after a warm-up; prints ratio = best peer / Loom. A discovery tool (session 23 found concatenate at 0.04x
with it), not a suite: run `PYTHONPATH=.bench-peers .venv/bin/python bench/sweep/everyday_calls.py [NAME...]`."""
import time, sys, numpy as np
import loom, torch
torch.set_num_threads(2)
r = np.random.default_rng(0)
N = 1 << 22
a32 = r.standard_normal(N).astype(np.float32)
b32 = r.standard_normal(N).astype(np.float32)
M = r.standard_normal((2048, 2048)).astype(np.float32)
M64 = M.astype(np.float64)
I32 = r.integers(-1000, 1000, size=N).astype(np.int32)
I64 = r.integers(0, 1000, size=N).astype(np.int64)
U8 = r.integers(0, 255, size=(1024, 1024, 3)).astype(np.uint8)
C64 = (a32 + 1j * b32).astype(np.complex64)
T3 = r.standard_normal((64, 256, 256)).astype(np.float32)
cases = {
 "cumsum_1d": lambda xp, L: xp.cumsum(L["a32"]),
 "cumsum_ax0": lambda xp, L: xp.cumsum(L["M"], axis=0),
 "sort_rows": lambda xp, L: xp.sort(L["M"], axis=1),
 "argsort_1d": lambda xp, L: xp.argsort(L["a32"]),
 "argmax_ax0": lambda xp, L: xp.argmax(L["M"], axis=0),
 "var_ax0": lambda xp, L: xp.var(L["M"], axis=0),
 "std_ax1": lambda xp, L: xp.std(L["M"], axis=1),
 "mean_f64_ax0": lambda xp, L: xp.mean(L["M64"], axis=0),
 "prod_ax1": lambda xp, L: xp.prod(L["M"] * 0 + 1.0001, axis=1),
 "clip": lambda xp, L: xp.clip(L["a32"], -0.5, 0.5),
 "where_mask": lambda xp, L: xp.where(L["a32"] > 0, L["a32"], L["b32"]),
 "transpose_copy": lambda xp, L: xp.ascontiguousarray(L["M"].T),
 "flip_1d": lambda xp, L: xp.flip(L["a32"]) + 1,
 "roll": lambda xp, L: xp.roll(L["a32"], 7),
 "concat": lambda xp, L: xp.concatenate([L["a32"], L["b32"]]),
 "stack": lambda xp, L: xp.stack([L["a32"], L["b32"]], axis=1),
 "diff": lambda xp, L: xp.diff(L["a32"]),
 "tril": lambda xp, L: xp.tril(L["M"]),
 "outer": lambda xp, L: xp.outer(L["a32"][:2048], L["b32"][:2048]),
 "floordiv_i32": lambda xp, L: L["I32"] // 7,
 "mod_i32": lambda xp, L: L["I32"] % 7,
 "astype_f16": lambda xp, L: L["a32"].astype(xp.float16),
 "astype_i32": lambda xp, L: (L["a32"] * 100).astype(xp.int32),
 "u8_to_f32_chw": lambda xp, L: xp.transpose(L["U8"], (2, 0, 1)).astype(xp.float32) / 255.0,
 "complex_abs": lambda xp, L: xp.abs(L["C64"]),
 "hypot": lambda xp, L: xp.hypot(L["a32"], L["b32"]),
 "arctan2": lambda xp, L: xp.arctan2(L["a32"], L["b32"]),
 "logaddexp": lambda xp, L: xp.logaddexp(L["a32"], L["b32"]),
 "sign": lambda xp, L: xp.sign(L["a32"]),
 "round": lambda xp, L: xp.round(L["a32"] * 10),
 "isclose": lambda xp, L: xp.isclose(L["a32"], L["b32"]),
 "count_nonzero": lambda xp, L: xp.count_nonzero(L["a32"] > 0),
 "nansum": lambda xp, L: xp.nansum(L["a32"]),
 "nanmax_ax1": lambda xp, L: xp.nanmax(L["M"], axis=1),
 "max_all": lambda xp, L: xp.max(L["a32"]),
 "norm_rows": lambda xp, L: xp.linalg.norm(L["M"], axis=1),
 "matmul_512": lambda xp, L: L["M"][:512, :512] @ L["M"][:512, :512],
 "einsum_bij": lambda xp, L: xp.einsum("bij->bj", L["T3"]),
 "sum_t3_ax1": lambda xp, L: xp.sum(L["T3"], axis=1),
 "mean_t3_ax2": lambda xp, L: xp.mean(L["T3"], axis=2),
 "max_t3_ax0": lambda xp, L: xp.max(L["T3"], axis=0),
 "bincount": lambda xp, L: xp.bincount(L["I64"]),
 "searchsorted": lambda xp, L: xp.searchsorted(L["sorted"], L["b32"]),
 "take": lambda xp, L: xp.take(L["a32"], L["I64"]),
 "repeat": lambda xp, L: xp.repeat(L["a32"][:N // 4], 4),
 "tile": lambda xp, L: xp.tile(L["a32"][:N // 4], 4),
 "pad": lambda xp, L: xp.pad(L["M"], 3),
 "minimum_bcast": lambda xp, L: xp.minimum(L["M"], L["M"][0]),
 "pow_int": lambda xp, L: L["a32"] ** 3,
 "pow_half": lambda xp, L: xp.abs(L["a32"]) ** 0.5,
 "sigmoid_exp": lambda xp, L: 1 / (1 + xp.exp(-L["a32"])),
 "log_f32": lambda xp, L: xp.log(xp.abs(L["a32"]) + 1),
 "sin_f32": lambda xp, L: xp.sin(L["a32"]),
 "cumprod_small": lambda xp, L: xp.cumprod(L["M"][:, :16] * 0 + 1.01, axis=1),
 "all_ax0": lambda xp, L: xp.all(L["M"] > -10, axis=0),
 "mean_i32": lambda xp, L: xp.mean(L["I32"]),
 "median": lambda xp, L: xp.median(L["a32"]),
 "unique": lambda xp, L: xp.unique(L["I32"]),
 "boolmask": lambda xp, L: L["a32"][L["a32"] > 1],
 "nonzero": lambda xp, L: xp.nonzero(L["a32"] > 1)[0],
}
base = dict(a32=a32, b32=b32, M=M, M64=M64, I32=I32, I64=I64, U8=U8, C64=C64, T3=T3, sorted=np.sort(b32))
def tm(f, sync, reps=5):
    f(); sync(f())
    best = 1e9
    for _ in range(reps):
        t = time.perf_counter(); o = f(); sync(o); best = min(best, time.perf_counter() - t)
    return best * 1e3
if __name__ == "__main__":  # bench/sweep/everyday_gpu.py imports the cases and data
    Ln = {k: loom.asarray(v) for k, v in base.items()}
    Lt = {k: torch.from_numpy(v) for k, v in base.items()}
    only = sys.argv[1:] 
    for name, fn in cases.items():
        if only and name not in only: continue
        row = [name]
        try: tn = tm(lambda: fn(np, base), lambda o: None)
        except Exception as e: tn = float('nan')
        try: tl = tm(lambda: fn(loom, Ln), lambda o: loom.eval(*(o if isinstance(o, tuple) else (o,))))
        except Exception as e: tl = float('nan'); row.append("LOOMERR %s" % str(e)[:60])
        try:
            tt = tm(lambda: fn(torch, Lt), lambda o: None)
        except Exception as e: tt = float('nan')
        best = np.nanmin([tn, tt])
        print("%-16s loom %8.3f numpy %8.3f torch %8.3f  ratio %.2f %s" % (name, tl, tn, tt, best / tl, " ".join(row[1:])), flush=True)
