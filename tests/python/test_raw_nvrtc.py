"""RawModule's CUDA C++ through NVRTC (runtime/cuda/cuda_nvrtc.c; LOOM_RAW_CUDA_COMPILER=nvrtc, or clang-19
missing from PATH): PTX with the kernels' entries and parameter lists, the caller's options passed through,
the architecture option, NVRTC's log as the error. Needs libnvrtc (a CUDA toolkit); launches need a GPU."""
import ctypes.util
import os

import numpy as np
import pytest

import loom
from loom import RawKernel, RawModule


def _nvrtc():
    for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    return os.path.exists(os.path.join(home, "lib64", "libnvrtc.so"))


pytestmark = pytest.mark.skipif(not _nvrtc(), reason="no libnvrtc (CUDA toolkit) on this machine")

CUDA = r"""
extern "C" __global__ void scaled_add(const float* x, const float* y, float* out, unsigned int n) {
    unsigned int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) out[i] = SCALE * x[i] + y[i];
}
extern "C" __global__ void fill_index(long long* out, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) out[i] = i;
}
"""


@pytest.fixture(autouse=True)
def nvrtc(monkeypatch):
    monkeypatch.setenv("LOOM_RAW_CUDA_COMPILER", "nvrtc")


def test_entries_params_and_options():
    m = RawModule(code=CUDA, options=("-DSCALE=3.0f",))
    assert sorted(m.kernel_names) == ["fill_index", "scaled_add"]
    assert m.get_function("scaled_add").params == [("int_or_pointer", 8)] * 3 + [("int", 4)]
    assert m.get_function("fill_index").params == [("int_or_pointer", 8), ("int", 4)]
    assert ".target sm_90" in m.ptx  # loom's default architecture
    assert "3.0" in m.ptx or "0f40400000" in m.ptx  # the -D value reached the code (3.0f as PTX writes it)
    m80 = RawModule(code=CUDA, options=("-DSCALE=2.0f", "--gpu-architecture=sm_80"))
    assert ".target sm_80" in m80.ptx


def test_errors_carry_nvrtc_log():
    with pytest.raises(ValueError, match=r"NVRTC could not compile[\s\S]*nope"):
        RawModule(code="extern \"C\" __global__ void k(float *x) { x[0] = nope; }", format="cuda")
    with pytest.raises(ValueError, match="NVRTC could not compile"):
        RawModule(code=CUDA, options=("-DSCALE=1.0f", "--no-such-option"))


def test_toolkit_headers_and_cpp():
    src = r"""
#include <cuComplex.h>
template <typename T> __device__ T twice(T v) { return v + v; }
extern "C" __global__ void cabs2(const cuDoubleComplex* z, double* out) {
    out[threadIdx.x] = twice(cuCabs(z[threadIdx.x]));
}
__global__ void mangled(float *x) { x[0] = 1.0f; }
"""
    m = RawModule(code=src)
    assert "cabs2" in m.kernel_names
    assert m.get_function("mangled").params == [("int_or_pointer", 8)]  # found by its C++ name


@pytest.mark.skipif(not loom.cuda.is_available() or loom.cuda.runtime.is_hip, reason="needs a CUDA device")
def test_launch_on_gpu():
    m = RawModule(code=CUDA, options=("-DSCALE=2.0f",))
    n = 1000
    x = loom.arange(n, dtype=loom.float32)
    y = loom.ones(n, dtype=loom.float32)
    out = loom.zeros(n, dtype=loom.float32)
    m.get_function("scaled_add")(((n + 127) // 128,), (128,), (x, y, out, np.uint32(n)))
    np.testing.assert_array_equal(loom.asnumpy(out), 2 * np.arange(n, dtype=np.float32) + 1)
    idx = loom.zeros(n, dtype=loom.int64)
    RawKernel(CUDA.replace("SCALE", "1.0f"), "fill_index")(((n + 127) // 128,), (128,), (idx, np.int32(n)))
    np.testing.assert_array_equal(loom.asnumpy(idx), np.arange(n))
