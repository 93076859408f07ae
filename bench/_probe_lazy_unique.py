"""One-off H200 probe (session 11): where the lazy 10-op call's host time goes, and what loom.unique launches."""
import time
import numpy as np
import loom

x = loom.asarray(np.ones(1000, np.float32))


def ten_ops(v):
    return ((((v * 2 + 1) * v - 3) / 4 + v) * 0.5 - v) * 1.25 + 2


for _ in range(2000):
    loom.eval(ten_ops(x))
loom.cuda.runtime.deviceSynchronize()
s0 = loom.stats()
t = time.perf_counter()
for _ in range(20000):
    loom.eval(ten_ops(x))
loom.cuda.runtime.deviceSynchronize()
dt = (time.perf_counter() - t) / 20000 * 1e6
s1 = loom.stats()
t = time.perf_counter()
for _ in range(20000):
    ten_ops(x)
bt = (time.perf_counter() - t) / 20000 * 1e6
print(f"lazy10 {dt:.2f} us/call, build {bt:.2f}; plans_made +{s1['plans_made'] - s0['plans_made']}, "
      f"launched +{s1['kernels_launched'] - s0['kernels_launched']}, compiled +{s1['kernels_compiled'] - s0['kernels_compiled']}")
r = np.random.default_rng(0).integers(0, 1000, 1 << 20).astype(np.int32)
u = loom.asarray(r)
for _ in range(3):
    loom.unique(u).get()
s0 = loom.stats()
t = time.perf_counter()
for _ in range(20):
    loom.unique(u).get()
dt = (time.perf_counter() - t) / 20 * 1e3
s1 = loom.stats()
print(f"unique i32 2^20: {dt:.3f} ms/call incl .get(); per call launched {(s1['kernels_launched'] - s0['kernels_launched']) / 20:.1f}, "
      f"library_calls {(s1['library_calls'] - s0['library_calls']) / 20:.1f}, plans {(s1['plans_made'] - s0['plans_made']) / 20:.1f}")
