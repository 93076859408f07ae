"""CuPy's RawModule and RawKernel on libloom's loom_raw_* C API, through loom._core.

Approach: the code (PTX, LLVM IR text or bitcode, cubin, or CUDA C++ compiled by NVRTC or clang-19, kept in
the disk cache of loom.cuda.compiler) becomes a LoomRawModule on loom._core's context (the one loom arrays
live on); CuPy's name_expressions travel to NVRTC as options and come back in the PTX's comment header
(lowered names, the compile log: _ptx_header). A RawKernel compiles at its first use. Parameter lists are
read at creation, so a call is checked before it reaches the GPU: a wrong count, an array for a scalar (or the
reverse) or a NumPy scalar of the wrong width raises TypeError. Arguments: loom arrays (pending values
are evaluated first, on the launch's stream; passed as device addresses, no copy) or other objects with
__cuda_array_interface__; NumPy scalars keep their dtype; Python ints and floats take the parameter's
own type (range-checked: CuPy would pass int64 / float64, which only works by accident for narrower
parameters), Python complex the cuFloatComplex / cuDoubleComplex parameter's, MemoryPointers their
address; where a cubin's parameters are not known yet, bool, int64, float64 and complex128 as CuPy does.
NumPy arrays are refused (raw kernels read device memory). The launch goes on `stream` (a loom.cuda.Stream,
or an ExternalStream / anything with .ptr: a foreign CUstream, after loom's own work on the device
is done), else on the current loom stream.
"""
import os
import re

from . import _core

# loom's CUDA C++ headers for raw kernels (cupy/complex.cuh, cupy/carray.cuh), on every module's include path
_INCLUDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")

# the headers raw kernels can include (#include <cupy/complex.cuh>): loom's own, for CuPy's code
HEADERS = tuple(sorted("cupy/" + f for f in os.listdir(os.path.join(_INCLUDE_DIR, "cupy")) if f.endswith(".cuh")))

_FORMATS = {"auto": 0, "ptx": 1, "llvm": 2, "ll": 2, "llvm-ir": 2, "bitcode": 3, "bc": 3, "cubin": 4,
            "fatbin": 4, "cuda": 5, "cu": 5}
_KIND_NAMES = ("pointer", "int", "float", "int_or_pointer", "any")


_CUCOMPLEX_INCLUDE = re.compile(r'#\s*include\s*[<"]cuComplex\.h[>"]')
_NAME_EXPRESSION_OPTION = "-loom-name-expression="  # loom.h: CuPy's name_expressions, compiled by NVRTC
_HEADER_NAME = "// loom-name-expression: "  # the PTX's header lines (runtime/cuda/cuda_nvrtc.c)
_HEADER_LOG = "// loom-compile-log: "


def _ptx_header(ptx):
    """({name expression: lowered name}, the compiler's log) from the comment lines that start the PTX."""
    mapping, log = {}, []
    for line in ptx.splitlines():
        if line.startswith(_HEADER_NAME):
            lowered, _, expr = line[len(_HEADER_NAME):].partition(" ")
            mapping[expr] = lowered
        elif line.startswith(_HEADER_LOG):
            log.append(line[len(_HEADER_LOG):])
        elif line.strip():
            break
    return mapping, "\n".join(log)


class RawModule:
    """RawModule(code=None, path=None, options=(), backend='nvrtc', ..., name_expressions=None, format=None).

    code: str (PTX, LLVM IR or CUDA C++) or bytes (also LLVM bitcode or a cubin); the format is sniffed
    unless format= ('ptx', 'llvm', 'bitcode', 'cubin', 'cuda') names it. CUDA C++ is compiled by NVRTC
    (where clang-19 is not on PATH, or with name_expressions) or clang-19; backend is accepted for CuPy
    compatibility, but for backend='nvcc' with name_expressions (a ValueError, as CuPy). name_expressions:
    template instances ('my_sqrt<int>') to compile; get_function / get_global take them as names. A CUDA
    C++ error is loom.cuda.compiler.CompileException; a file that is not there and a kernel the module
    lacks are loom.cuda.driver.CUDADriverError (CUDA_ERROR_FILE_NOT_FOUND, CUDA_ERROR_NOT_FOUND)."""

    def __init__(self, code=None, path=None, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, name_expressions=None, jitify=False, format=None):
        from .cuda import driver
        if (code is None) == (path is None):
            raise TypeError("RawModule: give exactly one of code= and path=")
        if path is not None:
            try:
                with open(path, "rb") as f:
                    code = f.read()
            except FileNotFoundError:
                raise driver.CUDADriverError(driver.CUDA_ERROR_FILE_NOT_FOUND,
                                             f"RawModule: no file {os.fspath(path)!r}") from None
        if translate_cucomplex and isinstance(code, str):  # cuComplex.h's API on loom's complex type
            code = _CUCOMPLEX_INCLUDE.sub("#include <cupy/cuComplex_bridge.h>", code)
        data = code.encode("utf-8") if isinstance(code, str) else bytes(code)
        if not data:
            raise ValueError("RawModule: the code is empty")
        fmt = _FORMATS.get(str(format).lower() if format is not None else "auto")
        if fmt is None:
            raise ValueError("RawModule: format must be one of %s" % ", ".join(sorted(_FORMATS)))
        names = tuple(name_expressions or ())
        for n in names:
            if not isinstance(n, str) or not n or "\n" in n:
                raise TypeError(f"RawModule: name_expressions must be non-empty one-line strings, got {n!r}")
        if names and backend == "nvcc":
            raise ValueError("RawModule: name_expressions need backend='nvrtc' (NVRTC names template instances; "
                             "nvcc cannot)")
        opts = tuple(str(o) for o in options) + ("-I" + _INCLUDE_DIR,)  # <cupy/complex.cuh> & co: loom's own
        opts += tuple(_NAME_EXPRESSION_OPTION + n for n in names)
        self.code, self.options, self.backend = code, tuple(options), backend
        self.name_expressions = names or None
        from .cuda import compiler
        self._m, cache, key = None, None, None
        if fmt in (_FORMATS["auto"], _FORMATS["cuda"]):  # CUDA C++ (maybe): the disk cache first
            cache = compiler._backend()
            key = compiler._cache_key(data, opts) if cache is not None else None
            stored = cache.load(key) if key is not None else None
            payload = compiler._decode_cache_payload(stored, len(names)) if stored is not None else None
            if payload is not None:
                try:
                    self._m = _core.raw_module(payload[1], _FORMATS["ptx"], opts)
                except (ValueError, TypeError):  # an entry that is not PTX after all: compile again
                    self._m = None
        if self._m is None:
            try:
                self._m = _core.raw_module(data, fmt, opts)
            except ValueError as e:
                if "could not compile" not in str(e):
                    raise
                raise compiler.CompileException(str(e), code if isinstance(code, str) else "", "kernel.cu",
                                                self.options, backend) from None
            if key is not None and _core.raw_module_format(self._m) == _FORMATS["cuda"]:
                mapping, _ = _ptx_header(_core.raw_module_text(self._m, 0))
                cache.save(key, compiler._encode_cache_payload([mapping[n] for n in names],
                                                               _core.raw_module_text(self._m, 0).encode("utf-8")),
                           code)
        try:
            text = _core.raw_module_text(self._m, 0)
        except NotImplementedError:  # a cubin: no PTX
            text = ""
        self._mapping, self._log = _ptx_header(text)
        self._functions = {}

    @property
    def ptx(self):
        """The module's PTX (NotImplementedError for a cubin)."""
        return _core.raw_module_text(self._m, 0)

    @property
    def kernel_names(self):
        return _core.raw_module_text(self._m, 1).split()

    @property
    def mapping(self):
        """{name expression: lowered (mangled) name} of the name_expressions."""
        return dict(self._mapping)

    def compile(self, log_stream=None):
        """Compiles the module (done at creation) and writes the compiler's messages (NVRTC's warnings) to
        log_stream."""
        if log_stream is not None and self._log:
            log_stream.write(self._log + "\n")

    def get_function(self, name):
        if name not in self._functions:
            self._functions[name] = RawKernel(None, name, _module=self)
        return self._functions[name]

    def _lookup(self, name):
        """The loom function of kernel `name` (a name expression's lowered name); CUDADriverError if none."""
        try:
            return _core.raw_get_function(self._m, self._mapping.get(name, str(name)))
        except ValueError as e:
            from .cuda import driver
            raise driver.KernelNotFoundError(str(e)) from None

    def get_global(self, name):
        """A MemoryPointer to the module's global variable `name` (__device__ or __constant__; a name
        expression or an extern "C" / mangled name) on the current device."""
        from .cuda import memory
        from .cuda.device import get_device_id
        dev = get_device_id()
        ptr, size = _core.raw_module_global(self._m, self._mapping.get(name, str(name)), dev)
        return memory.MemoryPointer(memory.UnownedMemory(ptr, size, self, dev), 0)


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


# CUfunction_attribute values (cuda.h) of RawKernel.attributes, under CuPy's names
_ATTRIBUTES = {"max_threads_per_block": 0, "shared_size_bytes": 1, "const_size_bytes": 2, "local_size_bytes": 3,
               "num_regs": 4, "ptx_version": 5, "binary_version": 6, "cache_mode_ca": 7,
               "max_dynamic_shared_size_bytes": 8, "preferred_shared_memory_carveout": 9}


class _PointerArgument:
    """A MemoryPointer passed to a raw kernel: its address, as a device array of bytes would pass it."""

    def __init__(self, p):
        self._p = p
        self.device = p.device
        self.__cuda_array_interface__ = {"data": (int(p.ptr), False), "shape": (int(p.size),), "typestr": "|u1",
                                         "version": 3, "strides": None}


class RawKernel:
    """RawKernel(code, name, options=(), backend='nvrtc', ...): kernel(grid, block, args, shared_mem=0,
    stream=None). The code is compiled at the first use (a call, compile(), params, attributes), as in
    CuPy, so a CompileException comes from there."""

    def __init__(self, code, name, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False, _module=None, format=None):
        self._module, self._fn = _module, None
        self.name = name
        self.code, self.options, self.backend, self._format = code, tuple(options), backend, format
        if _module is not None:  # a module's kernel: an unknown name fails here (CUDA_ERROR_NOT_FOUND)
            self._fn = _module._lookup(name)

    @property
    def module(self):
        if self._module is None:
            self._module = RawModule(code=self.code, options=self.options, backend=self.backend, format=self._format)
        return self._module

    @property
    def _f(self):
        if self._fn is None:
            self._fn = self.module._lookup(self.name)
        return self._fn

    def compile(self, log_stream=None):
        """Compiles the kernel now (else at the first call); the compiler's messages go to log_stream."""
        self._f
        self.module.compile(log_stream)

    @property
    def params(self):
        """[(kind, size)] of the parameters, kind in 'pointer', 'int', 'float', 'int_or_pointer', 'any';
        None when unknown (a cubin not loaded yet)."""
        p = _core.raw_params(self._f)
        return None if p is None else [(_KIND_NAMES[k], s) for k, s in p]

    def _attribute(self, attr):
        """cuFuncGetAttribute of the kernel on the current device (the module is loaded there)."""
        import ctypes
        from .cuda.device import _driver, get_device_id
        handle = _core.raw_function_handle(self._f, get_device_id())
        lib = _driver()
        value = ctypes.c_int(0)
        r = lib.cuFuncGetAttribute(ctypes.byref(value), ctypes.c_int(attr), ctypes.c_void_p(handle)) if lib else -1
        if r != 0:
            from .cuda.driver import CUDADriverError
            raise CUDADriverError(r, f"cuFuncGetAttribute({attr}) of kernel {self.name!r}")
        return value.value

    @property
    def attributes(self):
        """{name: value} of the kernel's CUDA function attributes (CuPy's names) on the current device."""
        return {k: self._attribute(a) for k, a in _ATTRIBUTES.items()}

    def __getattr__(self, name):
        if name in _ATTRIBUTES:
            return self._attribute(_ATTRIBUTES[name])
        raise AttributeError(f"'RawKernel' object has no attribute {name!r}")

    def __call__(self, grid, block, args, shared_mem=0, stream=None, **kwargs):
        if not isinstance(args, (tuple, list)):
            raise TypeError("args must be a tuple")
        from .cuda.memory import MemoryPointer
        args = tuple(_PointerArgument(a) if isinstance(a, MemoryPointer) else a for a in args)
        f = self._f
        if _core.raw_params(f) is None:  # a cubin not loaded yet: load it, so that arguments take its sizes
            from . import cuda
            if cuda.is_available():
                _core.raw_function_handle(f, cuda.get_device_id())
        spec, ext = _stream_args(stream)
        _core.raw_launch(f, grid, block, int(shared_mem), args, spec, ext)
