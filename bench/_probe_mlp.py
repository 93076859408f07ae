"""Probe: where an array-API MLP step spends its time on the GPU, loom beside torch, op by op."""
import sys, time, os
import numpy as np
import loom, torch
sys.path.insert(0, os.path.dirname(__file__))
import mlp_array_api as m

dev = loom.cuda.Device(0)
def tl(f, n=20):
    f(); dev.synchronize(); ts = []
    for _ in range(n):
        t = time.perf_counter(); r = f(); loom.eval(*(r if isinstance(r, tuple) else (r,))); dev.synchronize()
        ts.append((time.perf_counter() - t) * 1e3)
    return sorted(ts)[n // 2]
def tt(f, n=20):
    f(); torch.cuda.synchronize(); ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); torch.cuda.synchronize(); ts.append((time.perf_counter() - t) * 1e3)
    return sorted(ts)[n // 2]
B, I, H, O = 4096, 1024, 4096, 1024
r = np.random.default_rng(0)
A = {k: r.standard_normal(s).astype(np.float32) for k, s in
     dict(x=(B, I), w1=(I, H), h=(B, H), w2=(H, O), d=(B, O), dh=(B, H), b1=(H,)).items()}
L = {k: loom.asarray(v, device=dev) for k, v in A.items()}
T = {k: torch.from_numpy(v).cuda() for k, v in A.items()}
loom.eval(*L.values())
cases = {
 "x@w1": lambda X: X["x"] @ X["w1"],
 "x@w1+b1": lambda X: X["x"] @ X["w1"] + X["b1"],
 "relu(x@w1+b1)": lambda X: (lambda p: (p > 0) * p)(X["x"] @ X["w1"] + X["b1"]),
 "maximum(x@w1+b1,0)": lambda X: (lambda p: loom.maximum(p, loom.zeros_like(p)) if isinstance(p, loom.ndarray) else torch.maximum(p, torch.zeros_like(p)))(X["x"] @ X["w1"] + X["b1"]),
 "h@w2": lambda X: X["h"] @ X["w2"],
 "h.T@d": lambda X: X["h"].T @ X["d"],
 "d@w2.T": lambda X: X["d"] @ X["w2"].T,
 "d@w2.T*mask": lambda X: (X["d"] @ X["w2"].T) * (X["h"] > 0),
 "x.T@dh": lambda X: X["x"].T @ X["dh"],
 "sum(dh,0)": lambda X: X["dh"].sum(0),
 "sum(d*d)": lambda X: (X["d"] * X["d"]).sum(),
}
for name, f in cases.items():
    a = tl(lambda: f(L)); b = tt(lambda: f(T))
    print(f"{name:16s} loom {a:8.4f} ms  torch {b:8.4f} ms  torch/loom {b / a:5.3f}", flush=True)
x, y, p = m.initial(B, I, H, O, np.float32)
lp = tuple(loom.asarray(v, device=dev) for v in p); lx = loom.asarray(x, device=dev); ly = loom.asarray(y, device=dev)
tp = tuple(torch.from_numpy(v).cuda() for v in p); tx = torch.from_numpy(x).cuda(); ty = torch.from_numpy(y).cuda()
s0 = loom.stats()
a = tl(lambda: m.mlp_step(lp, lx, ly, 1e-3)[1])
s1 = loom.stats()
print("per step:", {k: round((s1[k] - s0[k]) / 21, 2) for k in s1 if isinstance(s1[k], (int, float)) and s1[k] != s0[k]})
b = tt(lambda: m.mlp_step(tp, tx, ty, 1e-3))
print(f"step loom {a:.4f} torch {b:.4f} ratio {b / a:.3f}")
os.environ["LOOM_EVAL_TRACE"] = "1"
