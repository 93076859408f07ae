"""One-off H200 probe (session 11): f32 2^26 radix sort under untried knob combinations, CuPy in the same
process as the reference. Each setting runs in a child process (the knobs are read per sort, but a child
keeps the timings independent). Prints a markdown table."""
import os
import subprocess
import sys

CHILD = r'''
import time, numpy as np, loom, cupy
x = np.random.default_rng(0).random(1 << 26, dtype=np.float32)
lx, cx = loom.asarray(x), cupy.asarray(x)
def t(f, sync, n=10):
    f(); sync()
    best = 1e9
    for _ in range(n):
        sync(); a = time.perf_counter(); f(); sync(); best = min(best, time.perf_counter() - a)
    return best * 1e3
ls = t(lambda: loom.eval(loom.sort(lx)), loom.cuda.runtime.deviceSynchronize)
cs = t(lambda: cupy.sort(cx), cupy.cuda.runtime.deviceSynchronize)
ok = bool((loom.sort(lx).get() == np.sort(x)).all())
print(f"{ls:.3f} {cs:.3f} {ok}")
'''
SETTINGS = [("default (ballot, items4 16, 4 blocks/SM)", {}),
            ("match rank", {"LOOM_GPU_RADIX_RANK": "match"}),
            ("blocks/SM 3", {"LOOM_GPU_RADIX_BLOCKS_PER_SM": "3"}),
            ("blocks/SM 5", {"LOOM_GPU_RADIX_BLOCKS_PER_SM": "5"}),
            ("items4 12", {"LOOM_GPU_RADIX_ITEMS4": "12"}),
            ("items4 20, blocks/SM 3", {"LOOM_GPU_RADIX_ITEMS4": "20", "LOOM_GPU_RADIX_BLOCKS_PER_SM": "3"}),
            ("hist parts 8", {"LOOM_GPU_RADIX_HIST_PARTS": "8"}),
            ("hist parts 2", {"LOOM_GPU_RADIX_HIST_PARTS": "2"}),
            ("hist tiles 4", {"LOOM_GPU_RADIX_HIST_TILES": "4"}),
            ("ballot,early", {"LOOM_GPU_RADIX_RANK": "early"})]
print("| setting | loom ms | cupy ms | cupy / loom | ok |\n|---|---|---|---|---|")
for name, env in SETTINGS:
    r = subprocess.run([sys.executable, "-c", CHILD], env=dict(os.environ, **env), capture_output=True, text=True,
                       timeout=120)
    try:
        ls, cs, ok = r.stdout.split()[-3:]
        print(f"| {name} | {ls} | {cs} | {float(cs) / float(ls):.2f}x | {ok} |", flush=True)
    except ValueError:
        print(f"| {name} | error: {r.stderr.strip().splitlines()[-1:]} | | | |", flush=True)
