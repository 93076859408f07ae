"""loom.RawModule / loom.RawKernel: parameter lists, LLVM IR and CUDA C++ (clang-19) to PTX, argument
checking (TypeError), and on a GPU CuPy's vector add and a two-function module from PTX, LLVM IR and
CUDA C++. Launch tests skip without a CUDA device."""
import shutil

import numpy as np
import pytest

import loom

try:
    RawModule, RawKernel = loom.RawModule, loom.RawKernel
except AttributeError:  # the package without the exports: the module itself
    from loom._raw import RawModule, RawKernel

PTX = r"""
.version 7.8
.target sm_90
.address_size 64
.visible .entry add_f32(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{
  .reg .pred %p<2>; .reg .b32 %r<5>; .reg .f32 %f<4>; .reg .b64 %rd<11>;
  ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; ld.param.u64 %rd3, [c]; ld.param.u32 %r2, [n];
  mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mov.u32 %r1, %tid.x; mad.lo.s32 %r1, %r3, %r4, %r1;
  setp.ge.s32 %p1, %r1, %r2; @%p1 bra DONE;
  cvta.to.global.u64 %rd4, %rd1; cvta.to.global.u64 %rd5, %rd2; cvta.to.global.u64 %rd6, %rd3;
  mul.wide.s32 %rd7, %r1, 4; add.s64 %rd8, %rd4, %rd7; add.s64 %rd9, %rd5, %rd7; add.s64 %rd10, %rd6, %rd7;
  ld.global.f32 %f1, [%rd8]; ld.global.f32 %f2, [%rd9]; add.f32 %f3, %f1, %f2; st.global.f32 [%rd10], %f3;
DONE:
  ret;
}
"""

LLVM = r"""
target triple = "nvptx64-nvidia-cuda"
define void @add_f32(ptr %a, ptr %b, ptr %c, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %ix = sext i32 %i to i64
  %pa = getelementptr float, ptr %a, i64 %ix
  %pb = getelementptr float, ptr %b, i64 %ix
  %pc = getelementptr float, ptr %c, i64 %ix
  %va = load float, ptr %pa
  %vb = load float, ptr %pb
  %s = fadd float %va, %vb
  store float %s, ptr %pc
  br label %done
done:
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @add_f32, !"kernel", i32 1}
"""

CUDA = r"""
extern "C" __global__ void test_sum(const float* x1, const float* x2, float* y, unsigned int N) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N) y[tid] = x1[tid] + x2[tid];
}
extern "C" __global__ void test_multiply(const float* x1, const float* x2, float* y, unsigned int N) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N) y[tid] = x1[tid] * x2[tid];
}
"""

has_clang = shutil.which("clang-19") is not None


def _gpu():
    try:
        return loom.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


class _FakeGpuArray:
    """Stands in for a GPU array where none exists (only its address is read)."""
    __cuda_array_interface__ = {"data": (0x10000, False), "shape": (4,), "typestr": "<f4", "version": 3}


def test_ptx_params_and_text():
    m = RawModule(code=PTX)
    assert m.kernel_names == ["add_f32"]
    assert m.ptx.strip() == PTX.strip()
    k = m.get_function("add_f32")
    assert k.params == [("int_or_pointer", 8)] * 3 + [("int", 4)]
    with pytest.raises(ValueError, match="no kernel named 'nope'"):
        m.get_function("nope")


def test_llvm_to_ptx():
    m = RawModule(code=LLVM)
    assert ".entry add_f32" in m.ptx
    assert m.get_function("add_f32").params == [("pointer", 8)] * 3 + [("int", 4)]
    with pytest.raises(ValueError, match="does not parse"):
        RawModule(code="define void @k() {\n ret i32 0\n}\n", format="llvm")


@pytest.mark.skipif(not has_clang, reason="clang-19 not on PATH")
def test_cuda_to_ptx():
    m = RawModule(code=CUDA, options=("-std=c++14",))
    assert sorted(m.kernel_names) == ["test_multiply", "test_sum"]
    assert m.get_function("test_sum").params == [("pointer", 8)] * 3 + [("int", 4)]
    with pytest.raises(ValueError, match="clang-19 could not compile"):
        RawModule(code="__global__ void k(float *x) { x[0] = nope; }", format="cuda")


def test_argument_checking():
    k = RawKernel(LLVM, "add_f32")
    x = _FakeGpuArray()
    with pytest.raises(TypeError, match="takes 4 arguments, got 3"):
        k((1,), (32,), (x, x, x))
    with pytest.raises(TypeError, match="NumPy array"):
        k((1,), (32,), (np.zeros(4, np.float32), x, x, 4))
    with pytest.raises(TypeError, match="argument 3"):
        k((1,), (32,), (x, x, x, np.int64(4)))  # a NumPy scalar must match the width
    with pytest.raises(TypeError, match="argument 3"):
        k((1,), (32,), (x, x, x, 4.5))
    with pytest.raises(TypeError, match="argument 0"):
        k((1,), (32,), (1, x, x, 4))
    with pytest.raises(TypeError, match="does not fit"):
        k((1,), (32,), (x, x, x, 2 ** 40))


@pytest.mark.skipif(_gpu(), reason="a CUDA device is present")
def test_launch_without_gpu():
    k = RawKernel(PTX, "add_f32")
    x = _FakeGpuArray()
    with pytest.raises(NotImplementedError, match="CUDA"):
        k((1,), (32,), (x, x, x, 4))


def _sources():
    out = [("ptx", PTX, "add_f32"), ("llvm", LLVM, "add_f32")]
    if has_clang:
        out.append(("cuda", CUDA, "test_sum"))
    return out


@pytest.mark.skipif(not _gpu(), reason="no CUDA device")
@pytest.mark.parametrize("fmt,code,name", _sources())
def test_vector_add_gpu(fmt, code, name):
    add = RawKernel(code, name)
    n = 25 * 5
    x1 = loom.arange(n, dtype=loom.float32).reshape(25, 5)
    x2 = loom.arange(n, dtype=loom.float32).reshape(25, 5)
    y = loom.zeros((25, 5), dtype=loom.float32)
    add((5,), (25,), (x1, x2, y, n))
    np.testing.assert_array_equal(loom.asnumpy(y), loom.asnumpy(x1) + loom.asnumpy(x2))


@pytest.mark.skipif(not _gpu() or not has_clang, reason="needs a CUDA device and clang-19")
def test_module_two_functions_gpu():
    mod = RawModule(code=CUDA)
    ker_sum, ker_times = mod.get_function("test_sum"), mod.get_function("test_multiply")
    n = 10
    x1 = loom.arange(n ** 2, dtype=loom.float32).reshape(n, n)
    x2 = loom.ones((n, n), dtype=loom.float32)
    y = loom.zeros((n, n), dtype=loom.float32)
    ker_sum((n,), (n,), (x1, x2, y, n ** 2))
    np.testing.assert_array_equal(loom.asnumpy(y), loom.asnumpy(x1) + 1)
    ker_times((n,), (n,), (x1, x2, y, n ** 2))
    np.testing.assert_array_equal(loom.asnumpy(y), loom.asnumpy(x1))


def test_module_errors():
    with pytest.raises(ValueError, match="format"):
        RawModule(code=PTX, format="nope")
    with pytest.raises(ValueError, match="empty"):
        RawModule(code="")
    with pytest.raises(TypeError, match="exactly one"):
        RawModule()
    k = RawKernel(PTX, "add_f32")
    x = _FakeGpuArray()
    with pytest.raises(ValueError, match="1 to 3"):
        k((1, 1, 1, 1), (32,), (x, x, x, 4))
    with pytest.raises(TypeError, match="tuple"):
        k((1,), (32,), x)
    with pytest.raises(TypeError, match="unsupported type"):
        k((1,), (32,), (x, x, x, "4"))


def test_launch_checks_before_the_device():
    # the argument checks run before any device is needed, with loom arrays too
    k = RawKernel(LLVM, "add_f32")
    a = loom.arange(4, dtype=loom.float32)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        k((1,), (4,), (a, a, a))
    with pytest.raises(TypeError, match="argument 3"):
        k((1,), (4,), (a, a, a, 1.5))


@pytest.mark.skipif(not _gpu(), reason="no CUDA device")
def test_pending_inputs_and_in_place_gpu():
    add = RawKernel(LLVM, "add_f32")
    n = 1000
    xn = np.arange(n, dtype=np.float32)
    x = loom.asarray(xn)
    x1 = x * 2  # pending: evaluated before the launch
    y = loom.zeros(n, dtype=loom.float32)
    p = y.__cuda_array_interface__["data"][0]
    w = y + 1  # pending and reading y: sees y's old value
    add(((n + 127) // 128,), (128,), (x1, x, y, n))
    assert y.__cuda_array_interface__["data"][0] == p
    np.testing.assert_array_equal(loom.asnumpy(y), xn * 3)
    np.testing.assert_array_equal(loom.asnumpy(w), np.ones(n, np.float32))
    s = loom.cuda.Stream()
    z = loom.empty(n, dtype=loom.float32)
    add(((n + 127) // 128,), (128,), (x, x + 1, z, np.int32(n)), stream=s)
    s.synchronize()
    np.testing.assert_array_equal(loom.asnumpy(z), xn * 2 + 1)
    assert loom.cuda.get_current_stream() is loom.cuda.Stream.null
