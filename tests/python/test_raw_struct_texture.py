"""Raw kernels with by-value struct arguments (NumPy structured scalars), CUDA vector types and textures in
clang-19's CUDA C++ (runtime/cuda/cuda_texture.c), loom.cuda.compiler.compile_with_cache and loom.cuda.texture.
Host checks: the PTX clang-19 writes (parameter sizes, the offsets it reads fields at, tex.* instructions)
against NumPy's struct layout, the bytes a record passes as, the argument checks and the host errors. GPU
checks (skipped here): launches compared with NumPy."""
import re
import shutil
import struct

import numpy as np
import pytest

import loom
from loom import _raw
from loom.cuda import compiler, texture

has_clang = shutil.which("clang-19") is not None
has_nvrtc = compiler._nvrtc_version() != (0, 0)
POINTER = ("pointer", "int_or_pointer")  # clang-19's LLVM IR knows a pointer; NVRTC's PTX has .u64


@pytest.fixture(params=["clang", "nvrtc"])
def cxx(request, monkeypatch):
    """Each CUDA C++ compiler in turn (NVRTC's vector types and texture functions are NVIDIA's own: the
    reference for clang-19's prelude)."""
    if not (has_clang if request.param == "clang" else has_nvrtc):
        pytest.skip(f"{request.param} is not here")
    monkeypatch.setenv("LOOM_RAW_CUDA_COMPILER", request.param)
    return request.param


def _gpu():
    try:
        return loom.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


class _FakeGpuArray:
    """Stands in for a GPU array where none exists (only its address is read)."""
    __cuda_array_interface__ = {"data": (0x10000, False), "shape": (4,), "typestr": "<f8", "version": 3}


STRUCT = """
struct custom_user_struct { int4 a; char b; double c[2]; short1 d; unsigned long long int e[3]; };
"""
# the layout NVCC / NVRTC give custom_user_struct (int4 is 16-byte aligned, short1 2-byte): NumPy's mirror
STRUCT_DTYPE = np.dtype({"names": list("abcde"),
                         "formats": [(np.int32, 4), np.int8, (np.float64, 2), np.int16, (np.uint64, 3)],
                         "offsets": [0, 16, 24, 40, 48], "itemsize": 80})


def _record():
    s = np.zeros(1, STRUCT_DTYPE)
    s["a"], s["b"], s["c"], s["d"], s["e"] = [0, 1, 2, 3], 4, [5.5, 6.5], 7, [8, 9, 2**63 + 10]
    return s


def _reference_bytes():
    """custom_user_struct's 80 bytes built field by field (padding zero), independently of NumPy."""
    buf = bytearray(80)
    struct.pack_into("<4i", buf, 0, 0, 1, 2, 3)
    struct.pack_into("<b", buf, 16, 4)
    struct.pack_into("<2d", buf, 24, 5.5, 6.5)
    struct.pack_into("<h", buf, 40, 7)
    struct.pack_into("<3Q", buf, 48, 8, 9, 2**63 + 10)
    return bytes(buf)


def test_record_passes_as_its_bytes():
    s = _record()
    ref = _reference_bytes()
    assert _raw._by_value_argument(s) == ref  # a one-element record array
    assert _raw._by_value_argument(s[0]) == ref  # a np.void scalar
    assert _raw._by_value_argument(s.reshape(())) == ref  # a 0-d record array
    assert _raw._by_value_argument(s[::1]) == ref
    plain = np.float64(2)
    assert _raw._by_value_argument(plain) is plain  # scalars keep their own path
    with pytest.raises(TypeError, match="one element"):
        _raw._by_value_argument(np.zeros(2, STRUCT_DTYPE))


def test_struct_parameter_layout_in_ptx(cxx):
    """clang-19 with loom's vector types lays the struct out as NumPy's mirror: the parameter's size is
    the itemsize and each field is read at its NumPy offset."""
    code = STRUCT + """
extern "C" __global__ void k(custom_user_struct s, double *x) {
  x[0] = s.a.w; x[1] = s.b; x[2] = s.c[1]; x[3] = s.d.x; x[4] = s.e[2];
}"""
    f = compiler.compile_with_cache(code).get_function("k")
    (k0, s0), (k1, s1) = f._kernel.params
    assert (k0, s0) == ("any", STRUCT_DTYPE.itemsize) and k1 in POINTER and s1 == 8
    ptx = f.module.raw_module.ptx
    assert re.search(r"\.param \.align 16 \.b8 k_param_0\[80\]", ptx)
    # the offsets of the loads from the parameter (a.w: at 12, or in a vector load of a at 0 or 8)
    offsets = {int(m or 0) for m in re.findall(r"ld\.param\.[\w.]+\s+[^\[]+\[k_param_0(?:\+(\d+))?\]", ptx)}
    fields = STRUCT_DTYPE.fields
    assert fields is not None
    assert offsets - {0, 8, 12} == {fields["b"][1], fields["c"][1] + 8, fields["d"][1], fields["e"][1] + 16}
    assert offsets & {0, 8, 12}


def test_vector_types_match_cuda(cxx):
    """sizeof / alignof of the prelude's vector types are CUDA's (vector_types.h)."""
    checks = {"char1": (1, 1), "char3": (3, 1), "uchar4": (4, 4), "short1": (2, 2), "short2": (4, 4),
              "short4": (8, 8), "int3": (12, 4), "int4": (16, 16), "uint2": (8, 8), "float2": (8, 8),
              "float4": (16, 16), "double1": (8, 8), "double2": (16, 16), "double3": (24, 8),
              "longlong2": (16, 16), "ulonglong3": (24, 8)}
    code = "".join(f"static_assert(sizeof({t}) == {s} && alignof({t}) == {a}, \"{t}\");\n"
                   for t, (s, a) in checks.items())
    code += 'extern "C" __global__ void k(float4 *o) { o[0] = make_float4(1.f, 2.f, 3.f, 4.f); }\n'
    assert "k" in compiler.compile_with_cache(code).raw_module.kernel_names


def test_texture_fetches_compile_to_tex_instructions(cxx):
    code = """
extern "C" __global__ void k(cudaTextureObject_t t, float *y) {
  int i = threadIdx.x;
  y[i] = tex1D<float>(t, float(i)) + tex2D<float>(t, 1.f, 2.f) + tex3D<float>(t, 1.f, 2.f, 3.f)
       + tex1Dfetch<float>(t, i) + tex2D<float4>(t, 0.f, 0.f).w + (float)tex1D<int>(t, 0.f);
}"""
    f = compiler.compile_with_cache(code).get_function("k")
    assert f._kernel.params[0] in [("int", 8), ("int_or_pointer", 8)]  # cudaTextureObject_t: a 64-bit handle
    ptx = f.module.raw_module.ptx
    for op in ("tex.1d.v4.f32.f32", "tex.2d.v4.f32.f32", "tex.3d.v4.f32.f32", "tex.1d.v4.f32.s32",
               "tex.1d.v4.s32.f32"):
        assert op in ptx, op


@pytest.mark.skipif(_gpu(), reason="a CUDA device is present (the host path is checked)")
def test_struct_argument_checks_on_host(cxx):
    f = compiler.compile_with_cache(STRUCT + 'extern "C" __global__ void k(custom_user_struct s, double *x) {}'
                                    ).get_function("k")
    small = np.zeros(1, np.dtype([("q", np.float64, (9,))]))
    with pytest.raises(TypeError, match="value of 80 bytes, got a by-value struct of 72 bytes"):
        f((1,), (1,), (small, _FakeGpuArray()))
    with pytest.raises(TypeError, match="one element"):
        f((1,), (1,), (np.zeros(3, STRUCT_DTYPE), _FakeGpuArray()))
    with pytest.raises(TypeError):  # a plain NumPy array of several elements is not a struct
        f((1,), (1,), (np.zeros(10), _FakeGpuArray()))
    with pytest.raises(NotImplementedError, match="no CUDA driver"):  # the checks passed: the launch needs a GPU
        f((1,), (1,), (_record(), _FakeGpuArray()))


class _Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        self.calls.append((grid, block, args, shared_mem))


def test_linear_launch_covers_size():
    rec = _Recorder()
    fn = compiler.Function(None, rec)
    fn.linear_launch(24, (1, 2))
    fn.linear_launch(1000, [3], shared_mem=16)
    fn.linear_launch(1000, (), block_max_size=256)
    fn.linear_launch(0, ())  # nothing to launch
    assert rec.calls == [(1, 24, (1, 2), 0), (8, 128, (3,), 16), (4, 256, (), 0)]
    with pytest.raises(ValueError):
        fn.linear_launch(-1, ())


def test_compile_with_cache_module(cxx):
    m = compiler._compile_module_with_cache('extern "C" __global__ void k(double *x, double b) { x[0] = b; }',
                                            extra_source="#define UNUSED 1", arch="90")
    assert isinstance(m, compiler.Module)
    assert m.get_function("k") is m.get_function("k")
    (k0, _), k1 = m.get_function("k")._kernel.params
    assert k0 in POINTER and k1 == ("float", 8)
    with pytest.raises(loom.cuda.driver.CUDADriverError):
        m.get_function("nope")
    with pytest.raises(compiler.CompileException):
        compiler.compile_with_cache('extern "C" __global__ void k() { undeclared(); }')
    with pytest.raises(TypeError):
        compiler.compile_with_cache(b"bytes")


def test_texture_descriptors():
    ch = texture.ChannelFormatDescriptor(32, 32, 0, 0, texture.cudaChannelFormatKindFloat)
    assert ch.get_channel_format() == {"x": 32, "y": 32, "z": 0, "w": 0, "f": 2}
    assert ch._element_bytes == 8
    for bad in ((32, 16, 0, 0, 2), (8, 0, 0, 0, 2), (0, 0, 0, 0, 1), (32, 32, 32, 0, 2), (32, 0, 0, 0, 7)):
        with pytest.raises(ValueError):
            texture.ChannelFormatDescriptor(*bad)
    td = texture.TextureDescriptor((texture.cudaAddressModeClamp,) * 2, texture.cudaFilterModeLinear,
                                   texture.cudaReadModeElementType, borderColors=(1, 2), normalizedCoords=True)
    d = td.get_texture_desc()
    assert d["addressMode"] == (1, 1) and d["filterMode"] == 1 and d["normalizedCoords"]
    s = td._struct()
    assert list(s.addressMode) == [1, 1, 0] and s.flags == 0x03 and list(s.borderColor)[:2] == [1.0, 2.0]
    with pytest.raises(ValueError):
        texture.TextureDescriptor((0, 0, 0, 0))
    with pytest.raises(TypeError):
        texture.ResourceDescriptor(texture.cudaResourceTypeArray)
    with pytest.raises(TypeError):
        texture.ResourceDescriptor(texture.cudaResourceTypeLinear, arr=np.zeros(4, np.float32), chDesc=ch)


def test_texture_object_is_a_64_bit_kernel_argument():
    t = object.__new__(texture.TextureObject)
    t.ptr = 0x123456789
    arg = _raw._by_value_argument(t)
    t.ptr = 0  # nothing to destroy
    assert isinstance(arg, np.uint64) and int(arg) == 0x123456789


@pytest.mark.skipif(_gpu(), reason="a CUDA device is present (the host errors are checked)")
def test_texture_needs_a_cuda_device():
    ch = texture.ChannelFormatDescriptor(32, 0, 0, 0, texture.cudaChannelFormatKindFloat)
    with pytest.raises(loom.cuda.CUDARuntimeError, match="needs a CUDA device") as e:
        texture.CUDAarray(ch, 64)
    assert e.value.status == 100  # cudaErrorNoDevice


# ---- on a CUDA device ----------------------------------------------------------------------------------
gpu = pytest.mark.skipif(not _gpu(), reason="no CUDA device")


@gpu
def test_struct_by_value_launch():
    code = STRUCT + """
extern "C" __global__ void k(const double *a, custom_user_struct s, double3 b, double *x) {
  int i = threadIdx.x;
  x[i] = a[i] + s.a.x + s.a.y + s.a.z + s.a.w + s.b + s.c[0] + s.c[1] + s.d.x + (double)(s.e[0] + s.e[1])
       + b.x + b.y + b.z;
}"""
    f = compiler.compile_with_cache(code).get_function("k")
    a_np = np.arange(24, dtype=np.float64)
    a, x = loom.asarray(a_np), loom.zeros(24, np.float64)
    b = np.array([0.25, 0.5, 1.0]).view(np.dtype({"names": list("xyz"), "formats": [np.float64] * 3}))
    f.linear_launch(24, (a, _record(), b, x))
    np.testing.assert_array_equal(loom.asnumpy(x), a_np + (6 + 4 + 12.0 + 7 + 17) + 1.75)


@gpu
@pytest.mark.parametrize("shape", [(64,), (32, 64), (19, 32, 64)])
def test_texture_fetch_launch(shape):
    data = np.random.default_rng(0).random(shape, dtype=np.float32)
    ch = texture.ChannelFormatDescriptor(32, 0, 0, 0, texture.cudaChannelFormatKindFloat)
    dims = list(reversed(shape)) + [0] * (3 - len(shape))
    arr = texture.CUDAarray(ch, *dims)
    arr.copy_from(loom.asarray(data))
    back = np.zeros_like(data)
    arr.copy_to(back)
    np.testing.assert_array_equal(back, data)
    res = texture.ResourceDescriptor(texture.cudaResourceTypeArray, cuArr=arr)
    tex = texture.TextureDescriptor((texture.cudaAddressModeClamp,) * len(shape), texture.cudaFilterModePoint,
                                    texture.cudaReadModeElementType)
    obj = texture.TextureObject(res, tex)
    fetch = {1: "tex1D<float>(t, i)", 2: "tex2D<float>(t, i % w, i / w)",
             3: "tex3D<float>(t, (i % (w * h)) % w, (i % (w * h)) / w, i / (w * h))"}[len(shape)]
    code = ('extern "C" __global__ void k(cudaTextureObject_t t, unsigned w, unsigned h, float *y, unsigned n) {'
            f" unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = {fetch}; }}")
    f = compiler.compile_with_cache(code).get_function("k")
    y = loom.zeros(data.size, np.float32)
    f.linear_launch(data.size, (obj, np.uint32(dims[0]), np.uint32(max(dims[1], 1)), y, np.uint32(data.size)))
    np.testing.assert_array_equal(loom.asnumpy(y), data.ravel())


# ---- ElementwiseKernel with texture fetches: CUDA C++ (loom.cuda._cxx_elementwise) ----------------------
TEX_OPS = {1: "T temp = tex1D<T>(texObj, float(i)); y = temp + x;",
           2: "T temp = tex2D<T>(texObj, (float)(i % width), (float)(i / width)); y = temp + x;",
           3: "T temp = tex3D<T>(texObj, (float)((i % (width * height)) % width), "
              "(float)((i % (width * height)) / width), (float)(i / (width * height))); y = temp + x;"}
TEX_PARAMS = {1: "T x, U texObj", 2: "T x, U texObj, uint64 width", 3: "T x, U texObj, uint64 width, uint64 height"}


def test_texture_kernels_take_the_cuda_cxx_path():
    from loom.cuda import _cxx_elementwise as cx
    plain = loom.ElementwiseKernel("T x", "T y", "y = x * 2", name="plain")
    assert type(plain).__call__ is loom._core.UserKernel.__call__  # loom's own compiler, C call path
    assert not cx.uses_textures("y = texture + x1D", "int tex = 1;")
    assert cx.uses_textures("y = tex1Dfetch<float>(t, i);") and cx.uses_textures("", "cudaTextureObject_t t;")
    k = loom.ElementwiseKernel(TEX_PARAMS[1], "T y", TEX_OPS[1], name="tex_k")
    assert isinstance(k, loom.ElementwiseKernel) and type(k).__call__ is not loom._core.UserKernel.__call__


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.skipif(_gpu(), reason="a CUDA device is present (the host path is checked)")
def test_texture_elementwise_kernel_compiles_on_host(cxx, dim):
    """The CUDA C++ the kernel becomes compiles (tex.Nd in its PTX); the launch then wants device arrays."""
    from loom.cuda import _cxx_elementwise as cx
    k = loom.ElementwiseKernel(TEX_PARAMS[dim], "T y", TEX_OPS[dim], name=f"tex{dim}_{cxx}")
    t = object.__new__(texture.TextureObject)
    t.ptr = 7
    try:
        with pytest.raises(TypeError, match="host array"):
            k(loom.arange(24, dtype=np.float32), t, *[np.uint64(4)] * (dim - 1))
    finally:
        t.ptr = 0
    fns = [f for key, f in cx._cache.items() if key[3] == f"tex{dim}_{cxx}"]
    assert len(fns) == 1
    ptx = fns[0].module.ptx
    assert f"tex.{dim}d.v4.f32.f32" in ptx
    assert len(re.findall(r"\.param \.[us]64 ", ptx)) == 3 + dim  # x, texObj, the extents, y, the size


@gpu
@pytest.mark.parametrize("dims", [(64, 0, 0), (64, 32, 0), (64, 32, 19)])
def test_texture_elementwise_kernel(dims):
    """CuPy's TestElementwiseKernelTexture, against NumPy."""
    width, height, depth = dims
    dim = 3 if depth else 2 if height else 1
    shape = (depth, height, width) if dim == 3 else (height, width) if dim == 2 else (width,)
    data = np.random.default_rng(1).random(shape, dtype=np.float32)
    ch = texture.ChannelFormatDescriptor(32, 0, 0, 0, texture.cudaChannelFormatKindFloat)
    arr = texture.CUDAarray(ch, width, height, depth)
    arr.copy_from(loom.asarray(data))
    res = texture.ResourceDescriptor(texture.cudaResourceTypeArray, cuArr=arr)
    tex = texture.TextureDescriptor((texture.cudaAddressModeClamp,) * 2, texture.cudaFilterModePoint,
                                    texture.cudaReadModeElementType)
    obj = texture.TextureObject(res, tex)
    k = loom.ElementwiseKernel(TEX_PARAMS[dim], "T y", TEX_OPS[dim], name=f"tex{dim}")
    x = np.arange(data.size, dtype=np.float32).reshape(shape)
    out = k(loom.asarray(x), obj, *[width, height][:dim - 1])
    np.testing.assert_allclose(loom.asnumpy(out), x + data)
