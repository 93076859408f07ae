"""profile_searchsorted.py: one device searchsorted of 2^24 float32 queries in 100 edges between cuProfilerStart/Stop (ncu --profile-from-start off)."""
import ctypes, loom, numpy as np
cuda = ctypes.CDLL("libcuda.so.1")
x = loom.asarray(np.random.rand(1 << 24).astype(np.float32)); e = loom.asarray(np.sort(np.random.rand(100)).astype(np.float32))
for _ in range(3):
    loom.eval(loom.searchsorted(e, x))
loom.cuda.Device().synchronize()
cuda.cuProfilerStart()
loom.eval(loom.searchsorted(e, x))
loom.cuda.Device().synchronize()
cuda.cuProfilerStop()
