"""CuPy's RawModule and RawKernel on libloom's loom_raw_* C API, through loom._core.

Approach: the code (PTX, LLVM IR text or bitcode, cubin, or CUDA C++ compiled by clang-19) becomes a
LoomRawModule on loom._core's context (the one loom arrays live on); parameter lists are read at
creation, so a call is checked before it reaches the GPU: a wrong count, an array for a scalar (or the
reverse) or a NumPy scalar of the wrong width raises TypeError. Arguments: loom arrays (pending values
are evaluated first, on the launch's stream; passed as device addresses, no copy) or other objects with
__cuda_array_interface__; NumPy scalars keep their dtype; Python ints and floats take the parameter's
own type (range-checked: CuPy would pass int64 / float64, which only works by accident for narrower
parameters); where a cubin's parameters are not known yet, bool, int64 and float64 as CuPy does. NumPy
arrays are refused (raw kernels read device memory). The launch goes on `stream` (a loom.cuda.Stream,
or an ExternalStream / anything with .ptr: a foreign CUstream, after loom's own work on the device
is done), else on the current loom stream.
"""
import os

from . import _core

# loom's CUDA C++ headers for raw kernels (cupy/complex.cuh, cupy/carray.cuh), on every module's include path
_INCLUDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")

_FORMATS = {"auto": 0, "ptx": 1, "llvm": 2, "ll": 2, "llvm-ir": 2, "bitcode": 3, "bc": 3, "cubin": 4,
            "fatbin": 4, "cuda": 5, "cu": 5}
_KIND_NAMES = ("pointer", "int", "float", "int_or_pointer", "any")


class RawModule:
    """RawModule(code=None, path=None, options=(), backend='nvcc', ..., name_expressions=None, format=None).

    code: str (PTX, LLVM IR or CUDA C++) or bytes (also LLVM bitcode or a cubin); the format is sniffed
    unless format= ('ptx', 'llvm', 'bitcode', 'cubin', 'cuda') names it. backend is accepted for CuPy
    compatibility: CUDA C++ is always compiled by clang-19, never NVRTC or nvcc."""

    def __init__(self, code=None, path=None, options=(), backend="nvcc", translate_cucomplex=False,
                 enable_cooperative_groups=False, name_expressions=None, jitify=False, format=None):
        if (code is None) == (path is None):
            raise TypeError("RawModule: give exactly one of code= and path=")
        if path is not None:
            with open(path, "rb") as f:
                code = f.read()
        data = code.encode("utf-8") if isinstance(code, str) else bytes(code)
        if not data:
            raise ValueError("RawModule: the code is empty")
        fmt = _FORMATS.get(str(format).lower() if format is not None else "auto")
        if fmt is None:
            raise ValueError("RawModule: format must be one of %s" % ", ".join(sorted(_FORMATS)))
        opts = tuple(str(o) for o in options) + ("-I" + _INCLUDE_DIR,)  # <cupy/complex.cuh> & co: loom's own
        self._m = _core.raw_module(data, fmt, opts)
        self.code, self.options, self.backend = code, tuple(options), backend
        self.name_expressions = name_expressions
        self._functions = {}

    @property
    def ptx(self):
        """The module's PTX (NotImplementedError for a cubin)."""
        return _core.raw_module_text(self._m, 0)

    @property
    def kernel_names(self):
        return _core.raw_module_text(self._m, 1).split()

    def get_function(self, name):
        if name not in self._functions:
            self._functions[name] = RawKernel(None, name, _module=self)
        return self._functions[name]


def _stream_args(stream):
    """(spec, ext) for loom._core.raw_launch: a loom stream spec or a foreign CUstream address."""
    if stream is None:
        return None, None
    from . import cuda
    if isinstance(stream, cuda.ExternalStream) or not isinstance(stream, cuda.Stream):
        ptr = getattr(stream, "ptr", stream)
        return None, int(ptr or 0)
    stream._check()
    if not _core.has_stream_api():
        return None, None
    key = stream._key_now()
    cur = cuda._stream_stack().get(key, cuda.Stream.null)
    if cur is stream:
        return None, None
    return (key[0], key[1], stream._h, None if cur._closed else cur._h), None


class RawKernel:
    """RawKernel(code, name, options=(), backend='nvcc', ...): kernel(grid, block, args, shared_mem=0,
    stream=None)."""

    def __init__(self, code, name, options=(), backend="nvcc", translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False, _module=None, format=None):
        self.module = _module if _module is not None else RawModule(code=code, options=options, backend=backend,
                                                                    format=format)
        self._f = _core.raw_get_function(self.module._m, str(name))
        self.name = name
        self.code, self.options, self.backend = code, tuple(options), backend

    @property
    def params(self):
        """[(kind, size)] of the parameters, kind in 'pointer', 'int', 'float', 'int_or_pointer', 'any';
        None when unknown (a cubin not loaded yet)."""
        p = _core.raw_params(self._f)
        return None if p is None else [(_KIND_NAMES[k], s) for k, s in p]

    def __call__(self, grid, block, args, shared_mem=0, stream=None, **kwargs):
        if not isinstance(args, (tuple, list)):
            raise TypeError("args must be a tuple")
        spec, ext = _stream_args(stream)
        _core.raw_launch(self._f, grid, block, int(shared_mem), tuple(args), spec, ext)
