"""Probe: the array-API MLP step timed four ways in loom (and torch), to find what the bench's loop adds."""
import sys, time, os
import numpy as np
import loom
try:
    import torch
except ImportError:
    torch = None
sys.path.insert(0, os.path.dirname(__file__))
import mlp_array_api as m
dev = loom.cuda.Device(0) if loom.cuda.is_available() else loom.cpu
B, I, H, O = (4096, 1024, 4096, 1024) if len(sys.argv) < 2 else (256, 64, 256, 64)
x, y, p = m.initial(B, I, H, O, np.float32)
def stats_delta(s0, s1, n):
    return {k: round((s1[k] - s0[k]) / n, 2) for k in s1 if isinstance(s1[k], (int, float)) and s1[k] != s0[k]}
def run(mode, n=20):
    lp = tuple(loom.asarray(v, device=dev) for v in p); lx = loom.asarray(x, device=dev); ly = loom.asarray(y, device=dev)
    loom.eval(*lp, lx, ly); (dev.synchronize() if dev is not loom.cpu else None)
    for _ in range(3):
        _l, q = m.mlp_step(lp, lx, ly, 0.1); loom.eval(*q)
    (dev.synchronize() if dev is not loom.cpu else None)
    ts, cpu = [], []
    s0 = loom.stats()
    for _ in range(n):
        t = time.perf_counter()
        loss, q = m.mlp_step(lp, lx, ly, 0.1)
        if mode == "fixed":
            loom.eval(*q)
        elif mode == "update":
            lp = q; loom.eval(*lp)
        elif mode == "update+loss":
            lp = q; loom.eval(loss, *lp)
        elif mode == "update,del":
            del loss; lp = q; loom.eval(*lp)
        t1 = time.perf_counter()
        (dev.synchronize() if dev is not loom.cpu else None)
        ts.append((time.perf_counter() - t) * 1e3); cpu.append((t1 - t) * 1e3)
    s1 = loom.stats()
    print(f"{mode:12s} step {sorted(ts)[n//2]:.4f} ms  cpu-to-eval-return {sorted(cpu)[n//2]:.4f} ms  {stats_delta(s0, s1, n)}", flush=True)
for mode in ("fixed", "update", "update+loss", "update,del", "fixed", "update"):
    run(mode)
if torch is None: sys.exit(0)
tp = [torch.from_numpy(v).cuda() for v in p]; tx = torch.from_numpy(x).cuda(); ty = torch.from_numpy(y).cuda()
for _ in range(3): m.mlp_step(tp, tx, ty, 0.1)
torch.cuda.synchronize(); ts = []
for _ in range(20):
    t = time.perf_counter(); _l, tp = m.mlp_step(tp, tx, ty, 0.1); torch.cuda.synchronize(); ts.append((time.perf_counter() - t) * 1e3)
print(f"torch update step {sorted(ts)[10]:.4f} ms")
