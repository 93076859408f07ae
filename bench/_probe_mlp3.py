"""Probe: which evaluations an array-API MLP training loop makes on the GPU (run with LOOM_DUMP=graph)."""
import sys, os
import numpy as np
import loom
sys.path.insert(0, os.path.dirname(__file__))
import mlp_array_api as m
dev = loom.cuda.Device(0)
B, I, H, O = 4096, 1024, 4096, 1024
x, y, p = m.initial(B, I, H, O, np.float32)
lp = tuple(loom.asarray(v, device=dev) for v in p); lx = loom.asarray(x, device=dev); ly = loom.asarray(y, device=dev)
loom.eval(*lp, lx, ly)
for i in range(8):
    s0 = loom.stats()
    print(f"=== step {i} begin", file=sys.stderr, flush=True)
    loss, q = m.mlp_step(lp, lx, ly, 0.1)
    print(f"=== step {i} built", file=sys.stderr, flush=True)
    lp = q
    loom.eval(*lp)
    s1 = loom.stats()
    print(f"=== step {i} end: library_calls {s1['library_calls'] - s0['library_calls']} plans {s1['plans_made'] - s0['plans_made']}", file=sys.stderr, flush=True)
