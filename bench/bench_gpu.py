"""bench_gpu.py: the reference side of the GPU benchmark (CuPy and PyTorch on the same shapes).

Prints "key value" lines that gpu_bench.sh merges with bench_gpu's into bench/results/<date>-h200.json.
Medians of 20 timed runs after 3 warm-ups, timed with CUDA events.
"""
import statistics
import subprocess
import sys
import time

import cupy as cp
import torch

N = 1 << 28


def med_ms(fn, reps=20):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(3):
        fn()
    ts = []
    for _ in range(reps):
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return statistics.median(ts)


def main():
    x = cp.random.standard_normal(N, dtype=cp.float32)
    y = cp.random.standard_normal(N, dtype=cp.float32)
    out = cp.empty_like(x)
    gb = 3 * 4 * N / 1e6
    print("copy_GBps_cupy %.1f" % (2 * 4 * N / 1e6 / med_ms(lambda: out.__setitem__(slice(None), x))))

    def loom_bench_fused(a, b):
        return 2 * a + cp.exp(b)

    fused = cp.fuse(loom_bench_fused)
    print("cupy_fuse_elementwise_GBps %.1f" % (gb / med_ms(lambda: fused(x, y))))
    ek = cp.ElementwiseKernel("float32 a, float32 b", "float32 o", "o = 2 * a + expf(b)", "loom_bench_ek")
    print("cupy_elementwise_kernel_GBps %.1f" % (gb / med_ms(lambda: ek(x, y, out))))
    print("cupy_unfused_elementwise_GBps %.1f" % (gb / med_ms(lambda: 2 * x + cp.exp(y))))

    tx, ty = torch.as_tensor(x, device="cuda"), torch.as_tensor(y, device="cuda")
    print("torch_eager_elementwise_GBps %.1f" % (gb / med_ms(lambda: 2 * tx + torch.exp(ty))))
    tc = torch.compile(lambda a, b: 2 * a + torch.exp(b))
    t0 = time.perf_counter()
    tc(tx, ty)
    torch.cuda.synchronize()
    print("torch_compile_first_call_ms %.1f" % ((time.perf_counter() - t0) * 1e3))
    print("torch_compile_elementwise_GBps %.1f" % (gb / med_ms(lambda: tc(tx, ty))))

    print("cupy_sum_all_GBps %.1f" % (4 * N / 1e6 / med_ms(lambda: x.sum())))
    print("torch_sum_all_GBps %.1f" % (4 * N / 1e6 / med_ms(lambda: tx.sum())))
    m = x.reshape(16384, 16384)
    tm = tx.reshape(16384, 16384)
    for ax in (0, 1):
        print("cupy_sum_axis%d_GBps %.1f" % (ax, 4 * N / 1e6 / med_ms(lambda: m.sum(axis=ax))))
        print("torch_sum_axis%d_GBps %.1f" % (ax, 4 * N / 1e6 / med_ms(lambda: tm.sum(dim=ax))))
    s = tx[: 16384 * 4096].reshape(16384, 4096)
    print("torch_softmax_GBps %.1f" % (2 * 4 * 16384 * 4096 / 1e6 / med_ms(lambda: torch.softmax(s, dim=-1))))

    # cold compile of a new ElementwiseKernel (a unique body so that CuPy's caches miss): in this
    # process, after the work above, and in a fresh process that has only made one array (as Loom's
    # cold figure is taken); the two have differed by up to 1.8x on the H200
    print("cupy_cold_compile_ms %.1f" % cupy_cold_ms())
    fresh = subprocess.run([sys.executable, __file__, "--cupy-cold"], capture_output=True, text=True)
    print(fresh.stdout.strip() or "cupy_cold_compile_fresh_process_ms failed: " + fresh.stderr[-300:])


def cupy_cold_ms():
    import cupy as cp
    a = cp.ones(1000, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    ts = []
    for i in range(9):
        k = cp.ElementwiseKernel("float32 a", "float32 o", "o = a * %d.5f + sinf(a) * %d" % (i, int(time.time_ns() % 100000)),
                                 "loom_bench_cold_%d_%d" % (i, time.time_ns()))
        t0 = time.perf_counter()
        k(a)
        cp.cuda.Device().synchronize()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


if __name__ == "__main__":
    if sys.argv[1:] == ["--cupy-cold"]:
        print("cupy_cold_compile_fresh_process_ms %.1f" % cupy_cold_ms())
    else:
        main()
