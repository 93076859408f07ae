"""profile_probe.py: run suite or probe workloads with Loom on the GPU under a profiler (ncu / nsys).

Each workload is traced with @loom.fuse, warmed up (compile, JIT tier-up: run with LOOM_CUDA_JIT_TIERS=0 to
skip it), then called `--calls` times between cuProfilerStart and cuProfilerStop, so a profiler started with
`--profile-from-start off` sees only those calls. Example (the GPU machine):

  ncu --profile-from-start off --section SpeedOfLight --section Occupancy --section WarpStateStats \
      python3 bench/suite/profile_probe.py gelu_tanh,silu
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from bench.suite import inputs as I  # noqa: E402
from bench.suite import workloads as W  # noqa: E402


def main():
    import loom
    import torch
    names = sys.argv[1].split(",")
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    cuda = ctypes.CDLL("libcuda.so.1")
    for name in names:
        w = W.lookup(name)  # any table's
        args = [loom.asarray(t) for t in I.device_inputs(w, "h200", torch)]
        f = loom.fuse(kernel_name=w.name)(lambda *a, w=w: w.fn(loom, *a))
        for _ in range(20):
            out = f(*args)
            loom.eval(*(out if isinstance(out, tuple) else (out,)))
        loom.cuda.Device().synchronize()
        cuda.cuProfilerStart()
        for _ in range(calls):
            out = f(*args)
            loom.eval(*(out if isinstance(out, tuple) else (out,)))
        loom.cuda.Device().synchronize()
        cuda.cuProfilerStop()
        print(f"{name}: kernels {loom.stats()['last_eval_kernels']}", flush=True)


if __name__ == "__main__":
    main()
