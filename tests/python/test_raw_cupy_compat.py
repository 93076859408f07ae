"""CuPy's RawModule / RawKernel features beyond plain kernels (issue 13): name expressions (template instances
compiled and named by NVRTC), the compile log, CuPy's error types (CompileException, CUDADriverError), lazy
RawKernel compiles, complex scalar and MemoryPointer arguments, get_global and kernel attributes.

Host part: needs libnvrtc (a CUDA toolkit), no GPU; lowered names are checked against the Itanium C++ ABI's
manglings written out by hand. GPU part (skipped without a CUDA device): launches compared with NumPy."""
import ctypes
import io
import os

import numpy as np
import pytest

import loom
from loom import RawKernel, RawModule
from loom.cuda import compiler, driver


def _nvrtc():
    for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    return os.path.exists(os.path.join(home, "lib64", "libnvrtc.so"))


needs_nvrtc = pytest.mark.skipif(not _nvrtc(), reason="no libnvrtc (CUDA toolkit) on this machine")
needs_gpu = pytest.mark.skipif(not loom.cuda.is_available() or loom.cuda.runtime.is_hip, reason="needs a CUDA device")

TEMPLATES = r"""
namespace mylib { enum class Tag { A, B }; }
template<typename T>
__global__ void my_sqrt(T* input, int N) {
  unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x < N) input[x] *= input[x];
}
template<typename Tv, typename Tp> __global__ void multi_param() { }
template<typename T> __global__ void ptr_param(T* p) { }
template<typename T, int N> __global__ void non_type_param() { }
template<mylib::Tag t> __global__ void enum_param() { }
__global__ void plain(double* input, int N) { }
"""

# name expression -> its Itanium ABI mangling (written by hand from the ABI's rules, not read from NVRTC)
LOWERED = {
    "my_sqrt<int>": "_Z7my_sqrtIiEvPT_i",
    "my_sqrt<float>": "_Z7my_sqrtIfEvPT_i",
    "multi_param<float, double>": "_Z11multi_paramIfdEvv",
    "multi_param<float,double>": "_Z11multi_paramIfdEvv",
    "ptr_param<float *>": "_Z9ptr_paramIPfEvPT_",
    "non_type_param<float, 3>": "_Z14non_type_paramIfLi3EEvv",
    "enum_param<mylib::Tag::B>": "_Z10enum_paramILN5mylib3TagE1EEvv",
    "plain": "_Z5plainPdi",
}

COMPLEX_ARGS = r"""
#include <cuComplex.h>
extern "C" __global__ void add_scalar(cuDoubleComplex* a, cuDoubleComplex s, cuDoubleComplex* out, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) out[i] = cuCadd(a[i], s);
}
extern "C" __global__ void add_scalarf(cuFloatComplex* a, cuFloatComplex s, cuFloatComplex* out, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) out[i] = cuCaddf(a[i], s);
}
"""


class _FakeGpuArray:
    """Stands in for a GPU array where none exists (only its address is read)."""
    __cuda_array_interface__ = {"data": (0x10000, False), "shape": (4,), "typestr": "<c16", "version": 3}


@pytest.fixture
def nvrtc(monkeypatch):
    monkeypatch.setenv("LOOM_RAW_CUDA_COMPILER", "nvrtc")


@needs_nvrtc
def test_name_expressions_lowered_names():
    # name expressions reach NVRTC whatever the CUDA C++ compiler would be (clang-19 cannot name instances)
    m = RawModule(code=TEMPLATES, name_expressions=list(LOWERED), options=("-std=c++17",))
    assert m.mapping == LOWERED
    assert sorted(m.kernel_names) == sorted(set(LOWERED.values()))
    assert m.get_function("my_sqrt<int>").params == [("int_or_pointer", 8), ("int", 4)]
    assert m.get_function("multi_param<float,double>").params == []  # an entry with no parameters
    assert m.get_function("enum_param<mylib::Tag::B>").params == []
    # the same kernel through its mangled name, and the PTX still starts with a valid header
    assert m.get_function("_Z7my_sqrtIfEvPT_i").params == [("int_or_pointer", 8), ("int", 4)]
    assert ".entry _Z7my_sqrtIiEvPT_i" in m.ptx


@needs_nvrtc
def test_missing_kernel_is_cuda_driver_error():
    m = RawModule(code=TEMPLATES, name_expressions=["my_sqrt<int>"])
    for name in ("my_sqrt<double>", "nope"):
        with pytest.raises(driver.CUDADriverError, match="CUDA_ERROR_NOT_FOUND: named symbol not found") as e:
            m.get_function(name)
        assert isinstance(e.value, ValueError) and e.value.status == 500
    plain = RawModule(code=TEMPLATES, options=("-std=c++17",))  # without name expressions no instance exists
    with pytest.raises(driver.CUDADriverError, match="named symbol not found"):
        plain.get_function("my_sqrt<int>")


@needs_nvrtc
def test_name_expression_errors():
    with pytest.raises(ValueError, match="nvrtc"):
        RawModule(code=TEMPLATES, name_expressions=["my_sqrt<int>"], backend="nvcc")
    with pytest.raises(TypeError, match="name_expressions"):
        RawModule(code=TEMPLATES, name_expressions=["my_sqrt<int>\nx"])
    with pytest.raises(compiler.CompileException):  # an instance that does not compile
        RawModule(code=TEMPLATES, name_expressions=["my_sqrt<no_such_type>"])


@needs_nvrtc
def test_compile_log_and_compile_exception(nvrtc):
    src = "extern \"C\" __global__ void k(float *x) { int unused; x[0] = X; }"
    log = io.StringIO()
    m = RawModule(code=src, options=("-DX=1.0f",))
    m.compile(log_stream=log)
    assert "warning" in log.getvalue() and "unused" in log.getvalue()
    log = io.StringIO()
    RawKernel(src, "k", options=("-DX=2.0f",)).compile(log_stream=log)
    assert "warning" in log.getvalue()
    quiet = io.StringIO()
    RawModule(code="extern \"C\" __global__ void k(float *x) { x[0] = 1; }").compile(log_stream=quiet)
    assert quiet.getvalue() == ""
    with pytest.raises(compiler.CompileException, match="precision not supported") as e:
        RawModule(code="#error precision not supported\n__global__ void k() {}", options=("-DP=3",))
    assert isinstance(e.value, ValueError) and e.value.options == ("-DP=3",)
    out = io.StringIO()
    e.value.dump(out)
    assert "0001 #error precision not supported" in out.getvalue()


@needs_nvrtc
def test_raw_kernel_compiles_at_first_use(nvrtc):
    k = RawKernel("extern \"C\" __global__ void k(float *x) { x[0] = undefined_name; }", "k")  # no error yet
    with pytest.raises(compiler.CompileException, match="undefined_name"):
        k((1,), (1,), (_FakeGpuArray(),))
    k = RawKernel("extern \"C\" __global__ void k(float *x) { x[0] = 1; }", "nope")
    with pytest.raises(driver.CUDADriverError, match="CUDA_ERROR_NOT_FOUND"):
        k.params


def test_missing_file_is_cuda_driver_error(tmp_path):
    with pytest.raises(driver.CUDADriverError, match="CUDA_ERROR_FILE_NOT_FOUND") as e:
        RawModule(path=str(tmp_path / "missing.cubin"))
    assert e.value.status == 301


@needs_nvrtc
@pytest.mark.skipif(loom.cuda.is_available(), reason="checks the host's errors")
def test_complex_and_pointer_arguments_are_checked(nvrtc):
    m = RawModule(code=COMPLEX_ARGS)
    k, kf = m.get_function("add_scalar"), m.get_function("add_scalarf")
    assert k.params == [("int_or_pointer", 8), ("any", 16), ("int_or_pointer", 8), ("int", 4)]
    assert kf.params[1] == ("any", 8)
    x = _FakeGpuArray()
    # right sizes pass the checks and stop at the missing driver
    for kern, s in ((k, 1 + 2j), (k, np.complex128(1 + 2j)), (kf, 1 + 2j), (kf, np.complex64(1 - 1j))):
        with pytest.raises(NotImplementedError, match="CUDA driver"):
            kern((1,), (4,), (x, s, x, 4))
    with pytest.raises(TypeError, match="argument 1"):  # complex64 for a cuDoubleComplex
        k((1,), (4,), (x, np.complex64(1), x, 4))
    with pytest.raises(TypeError, match="argument 3"):  # complex for an int
        k((1,), (4,), (x, 1j, x, 2j))
    ptr = loom.cuda.alloc(64)
    with pytest.raises(NotImplementedError, match="CUDA driver"):  # a MemoryPointer is a pointer argument
        k((1,), (4,), (ptr, 1j, ptr, 4))
    with pytest.raises(NotImplementedError, match="CUDA driver"):
        m.get_global("nope")
    with pytest.raises(NotImplementedError, match="CUDA driver"):
        k.attributes


def test_cache_payload_format():
    names = ["_Z6kernelIffEvv", "_Z6kernelIfdEvv"]
    p = compiler._encode_cache_payload(names, b"// PTX text")
    assert compiler._decode_cache_payload(p, 2) == (names, b"// PTX text")
    assert compiler._decode_cache_payload(compiler._encode_cache_payload([], b"x"), 0) == ([], b"x")
    assert compiler._decode_cache_payload(p, 1) is None  # another count of names
    for foreign in (b"", b"\x7fELF cubin", b"//\n// Generated by NVIDIA\n", compiler._cache_payload_magic):
        assert compiler._decode_cache_payload(foreign, 1) is None
    for size in range(len(p) - len(b"// PTX text")):  # any cut inside the header
        assert compiler._decode_cache_payload(p[:size], 2) is None


class _CountingBackend(compiler.DiskKernelCacheBackend):
    def __init__(self, path):
        super().__init__(path)
        self.saves = 0

    def save(self, name, binary, source=None):
        self.saves += 1
        super().save(name, binary, source)


@needs_nvrtc
def test_disk_cache_reuses_and_rejects(tmp_path, monkeypatch):
    backend = _CountingBackend(tmp_path)
    monkeypatch.setattr(compiler, "_kernel_cache_backend", backend)
    expr = "non_type_param<float, 3>"
    m = RawModule(code=TEMPLATES, name_expressions=[expr], options=("-std=c++17",))
    assert backend.saves == 1 and m.mapping == {expr: LOWERED[expr]}
    m = RawModule(code=TEMPLATES, name_expressions=[expr], options=("-std=c++17",))  # from the cache
    assert backend.saves == 1 and m.mapping == {expr: LOWERED[expr]}
    assert m.get_function(expr).params == []
    RawModule(code=TEMPLATES, name_expressions=[expr], options=("-std=c++14",))  # other options: another entry
    assert backend.saves == 2
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2
    # a torn entry (digest mismatch) and a bare PTX entry (valid digest, no payload) are compiled again
    for f in files:
        path = tmp_path / f
        data = path.read_bytes()
        path.write_bytes(data[:-10])
    RawModule(code=TEMPLATES, name_expressions=[expr], options=("-std=c++17",))
    assert backend.saves == 3
    (valid,) = [f for f in files if backend.load(f[:-len(".cubin")]) is not None]  # the one just rewritten
    names, ptx = compiler._decode_cache_payload(backend.load(valid[:-len(".cubin")]), 1)
    assert names == [LOWERED[expr]] and b".entry " + LOWERED[expr].encode() in ptx
    (tmp_path / valid).write_bytes(compiler._hash_hexdigest(ptx).encode("ascii") + ptx)  # bare PTX, valid digest
    RawModule(code=TEMPLATES, name_expressions=[expr], options=("-std=c++17",))
    assert backend.saves == 4
    monkeypatch.setattr(compiler, "_kernel_cache_backend", compiler.MemoryKernelCacheBackend())
    RawModule(code=TEMPLATES, name_expressions=[expr])
    assert sorted(os.listdir(tmp_path)) == files  # in-memory: nothing written


@needs_nvrtc
@pytest.mark.parametrize("use_nvrtc", [True, False])
def test_translate_cucomplex(monkeypatch, use_nvrtc):
    if not use_nvrtc and not __import__("shutil").which("clang-19"):
        pytest.skip("clang-19 not on PATH")
    monkeypatch.setenv("LOOM_RAW_CUDA_COMPILER", "nvrtc" if use_nvrtc else "clang")
    src = COMPLEX_ARGS + r"""
extern "C" __global__ void mixed(cuComplex* a, cuComplex s, cuDoubleComplex* up, float* absf) {
    a[0] = cuCadd(a[0], s);  // the double function on float values: converts once translated
    up[0] = cuComplexFloatToDouble(make_cuFloatComplex(cuCrealf(s), cuCimagf(cuConjf(s))));
    absf[0] = cuCabsf(cuCfmaf(a[0], s, s));
}
"""
    m = RawModule(code=src, translate_cucomplex=True)
    # clang marks pointers (.ptr), NVRTC does not: compare sizes, and the complex scalars' kind
    params = m.get_function("add_scalar").params
    assert [size for _, size in params] == [8, 16, 8, 4] and params[1][0] == "any"
    assert m.get_function("mixed").params[1] == ("any", 8)
    with pytest.raises(compiler.CompileException):  # without the translation cuCadd takes no cuComplex
        RawModule(code=src)


# ---- on a CUDA device ---------------------------------------------------------------------------------
@needs_gpu
@needs_nvrtc
def test_template_instances_run():
    src = "#include <cupy/complex.cuh>\n" + TEMPLATES
    names = ["my_sqrt<int>", "my_sqrt<float>", "my_sqrt<complex<double>>"]
    m = RawModule(code=src, name_expressions=names, options=("-std=c++17",))
    rng = np.random.default_rng(0)
    for name, dt in zip(names, (np.int32, np.float32, np.complex128)):
        ref: np.ndarray = (rng.standard_normal(10) * 5).astype(dt)
        if dt == np.complex128:
            ref = ref + 1j * rng.standard_normal(10)
        x = loom.asarray(ref)
        m.get_function(name)((1,), (16,), (x, 10))
        np.testing.assert_allclose(loom.asnumpy(x), ref * ref, rtol=1e-6)


@needs_gpu
@needs_nvrtc
def test_complex_scalars_run():
    m = RawModule(code=COMPLEX_ARGS)
    n = 100
    ref = np.arange(n) + 1j * np.arange(n)[::-1]
    for name, dt, scalars in (("add_scalar", np.complex128, (2 + 3j, np.complex128(-1.5 + 0.25j))),
                              ("add_scalarf", np.complex64, (2 + 3j, np.complex64(0.5 - 2j)))):
        a = loom.asarray(ref.astype(dt))
        for s in scalars:
            out = loom.zeros(n, dtype=dt)
            m.get_function(name)((1,), (128,), (a, s, out, n))
            np.testing.assert_array_equal(loom.asnumpy(out), ref.astype(dt) + np.array(s, dtype=dt))


@needs_gpu
@needs_nvrtc
def test_const_memory_attributes_and_memory_pointer():
    src = r"""
extern "C" {
__constant__ float some_array[100];
__global__ void multiply_by_const(float* x, int N) {
    int id = threadIdx.x + blockIdx.x * blockDim.x;
    if (id < N) x[id] *= some_array[id];
}
__global__ void affine(void* p, int N) {
    double* a = (double*)p;
    int i = threadIdx.x;
    if (i < N) a[i] = 3.0 * a[i] - 8.0;
}
}
"""
    m = RawModule(code=src)
    ptr = m.get_global("some_array")
    assert ptr.size == 400
    const = loom.ndarray((100,), loom.float32, ptr)
    data = np.arange(100, dtype=np.float32)
    const[...] = loom.asarray(data)
    out = loom.full(100, 2, dtype=loom.float32)
    m.get_function("multiply_by_const")((1,), (100,), (out, np.int32(100)))
    np.testing.assert_array_equal(loom.asnumpy(out), 2 * data)
    k = m.get_function("affine")
    attrs = k.attributes
    assert attrs["max_threads_per_block"] > 0 and attrs["num_regs"] > 0 and attrs["shared_size_bytes"] == 0
    assert k.max_threads_per_block == attrs["max_threads_per_block"]
    mem = loom.cuda.alloc(100 * 8)
    b = loom.ndarray((100,), loom.float64, memptr=mem)
    b[...] = loom.arange(100, dtype=loom.float64)
    k((1,), (100,), (mem, 100))
    np.testing.assert_array_equal(loom.asnumpy(b), 3.0 * np.arange(100) - 8.0)
    with pytest.raises(ValueError, match="no global variable named 'nope'"):
        m.get_global("nope")
