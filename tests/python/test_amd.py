"""AMD GPUs (the HIP device) from Python.

Without an AMD GPU (CI): loom.cuda keeps the host stand-in; kind 2 (HIP) is a device the binding accepts
and reports 0 of; DLPack capsules of kDLROCM (10) are imported as AMD arrays and exported with their
device (the export itself then says there is no AMD device); RawModule takes LLVM IR for amdgcn and AMD
code objects (sniffed), with parameter lists checked before any driver work.
LOOM_DEVICE picks the GPU kind (run in child processes: it is read once): hip without an AMD GPU makes
runtime.is_hip true and array creation a clear error with HIP's reason; host keeps the host; a bad value
names the valid ones. loom.from_dlpack takes ROCm tensors (kDLROCM) only where loom drives AMD GPUs.
With an AMD GPU (scripts/amd_all.sh on an MI300): loom.cuda.Device(0) is the AMD GPU, arrays round-trip,
elementwise and reduction results equal NumPy's, and a RawKernel for amdgcn runs.
"""
import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import loom
from loom import _core, cuda

HIP = 2
AMD_GPU = cuda._gpu_kind() == cuda._HIP and cuda._gpu_count() > 0

AMD_IR = r'''
target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @axpy(ptr addrspace(1) %y, ptr addrspace(1) %x, float %a, i32 %n) {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %b = mul i32 %g, 64
  %i = add i32 %b, %t
  %c = icmp slt i32 %i, %n
  br i1 %c, label %body, label %done
body:
  %px = getelementptr float, ptr addrspace(1) %x, i32 %i
  %vx = load float, ptr addrspace(1) %px
  %py = getelementptr float, ptr addrspace(1) %y, i32 %i
  %vy = load float, ptr addrspace(1) %py
  %m = fmul float %a, %vx
  %r = fadd float %m, %vy
  store float %r, ptr addrspace(1) %py
  br label %done
done:
  ret void
}
'''


def test_hip_is_a_device_kind():
    assert _core.device_count(HIP) == (cuda._gpu_count() if AMD_GPU else 0)
    with pytest.raises(ValueError, match="AMD/HIP"):
        _core.device_synchronize(7, 0)


@pytest.mark.skipif(AMD_GPU, reason="checks the machine without an AMD GPU")
def test_no_amd_gpu_keeps_the_host():
    if cuda._gpu_count() == 0:
        assert cuda.Device(0).compute_capability == "host"
    with pytest.raises(RuntimeError, match="no AMD device|no HIP runtime"):
        _core.device_synchronize(HIP, 0)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManaged(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


def _rocm_capsule(shape, keep):
    """A 'dltensor' capsule of a float32 array on ROCm device 0 (a made-up address: never read)."""
    n = len(shape)
    sh = (ctypes.c_int64 * n)(*shape)
    mt = _DLManaged()
    mt.dl_tensor.data = 0x10000
    mt.dl_tensor.device = _DLDevice(10, 0)
    mt.dl_tensor.ndim = n
    mt.dl_tensor.dtype = _DLDataType(2, 32, 1)
    mt.dl_tensor.shape = sh
    mt.dl_tensor.strides = None
    keep += [sh, mt]
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(ctypes.addressof(mt), b"dltensor", None)


@pytest.mark.skipif(AMD_GPU, reason="a made-up device address")
def test_dlpack_rocm_import_and_device():
    keep: list[object] = []
    x = _core.from_dlpack_capsule(_rocm_capsule((3, 4), keep))
    assert x.shape == (3, 4)
    assert x.__dlpack_device__() == (10, 0)
    with pytest.raises(RuntimeError, match="no AMD device|no HIP runtime"):
        x.__dlpack__()
    with pytest.raises(BufferError, match=r"\(10, 0\)"):
        x.__dlpack__(dl_device=(2, 0))
    del x


def test_raw_module_amdgcn_ir():
    m = loom.RawModule(code=AMD_IR)
    assert m.kernel_names == ["axpy"]
    k = m.get_function("axpy")
    with pytest.raises(TypeError, match="takes 4 arguments"):
        k((1,), (64,), (1, 2))


@pytest.mark.skipif(not AMD_GPU, reason="needs an AMD GPU (scripts/amd_all.sh)")
def test_on_the_amd_gpu():
    d = cuda.Device(0)
    assert d.compute_capability[0].isdigit()
    a = np.arange(100003, dtype=np.float32)
    with d:
        x = loom.asarray(a)
        assert x.__dlpack_device__() == (10, 0)
        y = loom.sqrt(x) * 2 + 1
        np.testing.assert_allclose(loom.asnumpy(y), np.sqrt(a) * 2 + 1, rtol=1e-6)
        np.testing.assert_allclose(float(loom.sum(x)), float(a.astype(np.float64).sum()), rtol=1e-5)
        b = loom.asarray(np.random.default_rng(0).standard_normal((300, 700)).astype(np.float32))
        hb = loom.asnumpy(b)
        np.testing.assert_allclose(loom.asnumpy(b.sum(axis=1)), hb.sum(axis=1), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(loom.asnumpy(b.max(axis=0)), hb.max(axis=0))
        yy = loom.asarray(np.ones(1000, np.float32))
        k = loom.RawModule(code=AMD_IR).get_function("axpy")
        k(((1000 + 63) // 64,), (64,), (yy, loom.asarray(np.arange(1000, dtype=np.float32)), np.float32(2), 1000))
        np.testing.assert_allclose(loom.asnumpy(yy), 1 + 2 * np.arange(1000, dtype=np.float32))


def _child(code, **env):
    """Runs code in a fresh interpreter with the environment changes env; (returncode, stdout + stderr)."""
    e = dict(os.environ)
    e.update(env)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e, capture_output=True, text=True,
                       timeout=300)
    return r.returncode, r.stdout + r.stderr


def test_runtime_is_hip_follows_the_selection():
    assert cuda.runtime.is_hip == (cuda._gpu_kind() == cuda._HIP)
    assert cuda.runtime.getDeviceCount() == cuda._gpu_count()


@pytest.mark.skipif(AMD_GPU, reason="checks the machine without an AMD GPU")
def test_loom_device_hip_without_an_amd_gpu():
    rc, out = _child("""
        import loom, numpy as np
        from loom import cuda
        print("is_hip", cuda.runtime.is_hip, "available", cuda.is_available(), "count", cuda.runtime.getDeviceCount())
        try:
            loom.asarray(np.arange(4))
        except cuda.CUDARuntimeError as e:
            print("error:", e)
        """, LOOM_DEVICE="hip")
    assert rc == 0, out
    assert "is_hip True available False count 0" in out
    assert "error: LOOM_DEVICE=hip asks for an AMD GPU (HIP), but: " in out
    assert ("no AMD device" in out and "no AMD GPU" in out) or "no HIP runtime" in out, out
    assert "Unset LOOM_DEVICE" in out


def test_loom_device_host_and_bad_values():
    rc, out = _child("""
        import loom, numpy as np
        from loom import cuda
        x = loom.asarray(np.arange(5.0))
        print("host", cuda.is_available(), cuda.runtime.is_hip, float(loom.sum(x * 2)), x.__dlpack_device__())
        """, LOOM_DEVICE="host")
    assert rc == 0, out
    assert "host False False 20.0 (1, 0)" in out
    rc, out = _child("""
        import loom, numpy as np
        try:
            loom.asarray(np.arange(4))
        except ValueError as e:
            print("error:", e)
        """, LOOM_DEVICE="opencl")
    assert rc == 0, out
    assert "LOOM_DEVICE='opencl' is not a device kind: use cuda, hip" in out


class _RocmTensor:
    """A producer of a ROCm DLPack tensor (device type 10), as PyTorch's ROCm build is."""

    def __init__(self):
        self.keep = []
        self.streams = []

    def __dlpack_device__(self):
        return (10, 0)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return _rocm_capsule((2, 3), self.keep)


@pytest.mark.skipif(AMD_GPU, reason="checks the machine without an AMD GPU")
def test_from_dlpack_of_a_rocm_tensor_needs_an_amd_gpu():
    t = _RocmTensor()
    with pytest.raises(BufferError, match="a ROCm tensor, but loom has no AMD GPU"):
        loom.from_dlpack(t)
    assert t.streams == []  # refused before asking the producer for anything


def test_from_dlpack_refuses_other_devices():
    class Other:
        def __dlpack_device__(self):
            return (4, 0)  # OpenCL

        def __dlpack__(self, stream=None):
            raise AssertionError("not to be called")

    with pytest.raises(BufferError, match=r"neither the host \(1\), CUDA \(2\) nor ROCm \(10\)"):
        loom.from_dlpack(Other())
