"""CuPy's RawModule and RawKernel on libloom's loom_raw_* C API (through ctypes, as _kernels.py does).

Approach: the code (PTX, LLVM IR text or bitcode, cubin, or CUDA C++ compiled by clang-19) becomes a
LoomRawModule on the user-kernel context of _kernels.py; parameter lists are read at creation, so a
call is checked before it reaches the GPU: a wrong count, an array for a scalar (or the reverse) or a
NumPy scalar of the wrong width raises TypeError. Python ints and floats take the parameter's own
type (range-checked); NumPy scalars must match it. Arrays must be loom (or __cuda_array_interface__)
arrays on a CUDA device. The launch goes to `stream` (a loom.cuda.Stream or anything with .ptr), else
the current loom stream.
"""
import ctypes as _ct

import numpy as _np

from . import _kernels

_FORMATS = {"auto": 0, "ptx": 1, "llvm": 2, "ll": 2, "llvm-ir": 2, "bitcode": 3, "bc": 3, "cubin": 4,
            "fatbin": 4, "cuda": 5, "cu": 5}
_POINTER, _INT, _FLOAT, _INT_OR_POINTER, _ANY = range(5)
_MAX_PARAMS = 256


class _Value(_ct.Union):
    _fields_ = [("i", _ct.c_int64), ("u", _ct.c_uint64), ("f", _ct.c_double)]


class _RawArg(_ct.Structure):
    _fields_ = [("kind", _ct.c_int), ("dtype", _ct.c_int), ("array", _ct.c_void_p), ("value", _Value)]


def _lib():
    lib, ctx = _kernels._lib()
    if not getattr(lib, "_loom_raw_ready", False):
        P, vp = _ct.POINTER, _ct.c_void_p
        lib.loom_raw_module_create.argtypes = [vp, vp, _ct.c_size_t, _ct.c_int, P(_ct.c_char_p), _ct.c_int32, P(vp)]
        lib.loom_raw_module_destroy.argtypes = [vp]
        lib.loom_raw_module_destroy.restype = None
        lib.loom_raw_module_format.argtypes = [vp]
        for name in ("loom_raw_module_ptx", "loom_raw_module_kernels"):
            getattr(lib, name).argtypes = [vp, P(vp)]
        lib.loom_free_string.argtypes = [vp, vp]
        lib.loom_free_string.restype = None
        lib.loom_raw_module_get_function.argtypes = [vp, _ct.c_char_p, P(vp)]
        lib.loom_raw_function_params.argtypes = [vp, P(_ct.c_int32), P(_ct.c_int), P(_ct.c_int32), _ct.c_int32]
        lib.loom_raw_function_name.argtypes = [vp]
        lib.loom_raw_function_name.restype = _ct.c_char_p
        lib.loom_raw_function_launch_on.argtypes = [vp, P(_ct.c_uint32), P(_ct.c_uint32), _ct.c_uint32, vp,
                                                    _ct.c_int32, _ct.c_int32, P(_RawArg)]
        lib._loom_raw_ready = True
    return lib, ctx


def _raise(lib, ctx, status, type_error=False):
    msg = (lib.loom_last_error(ctx) or b"").decode("utf-8", "replace")
    if type_error and status == 1:
        raise TypeError(msg)
    raise _kernels._ERRORS.get(status, RuntimeError)(msg)


def _take_string(lib, ctx, fn, h):
    p = _ct.c_void_p()
    st = fn(h, _ct.byref(p))
    if st:
        _raise(lib, ctx, st)
    try:
        return _ct.string_at(p.value).decode("utf-8", "replace")
    finally:
        lib.loom_free_string(ctx, p)


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
        lib, ctx = _lib()
        opts = [str(o).encode("utf-8") for o in options]
        carr = (_ct.c_char_p * max(1, len(opts)))(*opts)
        h = _ct.c_void_p()
        buf = _ct.create_string_buffer(data, len(data))
        st = lib.loom_raw_module_create(ctx, _ct.cast(buf, _ct.c_void_p), len(data), fmt, carr, len(opts),
                                        _ct.byref(h))
        if st:
            _raise(lib, ctx, st)
        self._h = h
        self.code, self.options, self.backend = code, tuple(options), backend
        self.name_expressions = name_expressions
        self._functions = {}

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and "lib" in _kernels._lib_state:
            _kernels._lib_state["lib"].loom_raw_module_destroy(h)

    @property
    def ptx(self):
        """The module's PTX (NotImplementedError for a cubin)."""
        lib, ctx = _lib()
        return _take_string(lib, ctx, lib.loom_raw_module_ptx, self._h)

    @property
    def kernel_names(self):
        lib, ctx = _lib()
        return _take_string(lib, ctx, lib.loom_raw_module_kernels, self._h).split()

    def get_function(self, name):
        if name not in self._functions:
            self._functions[name] = RawKernel(None, name, _module=self)
        return self._functions[name]


def _scalar_dtype(x, kind, size):
    """The NumPy dtype a Python scalar takes for a parameter (kind, size); None: not allowed."""
    if isinstance(x, bool):
        x = int(x)
    if isinstance(x, int):
        if kind in (_INT, _INT_OR_POINTER) or (kind == _ANY and size in (1, 2, 4, 8)):
            return _np.dtype("int%d" % (8 * size)) if size in (1, 2, 4, 8) else None
        if kind == _FLOAT:
            return _np.dtype("float%d" % (8 * size)) if size in (2, 4, 8) else None
        return None
    if kind in (_FLOAT, _ANY) and size in (2, 4, 8):
        return _np.dtype("float%d" % (8 * size))
    return None


class RawKernel:
    """RawKernel(code, name, options=(), backend='nvcc', ...): kernel(grid, block, args, shared_mem=0,
    stream=None)."""

    def __init__(self, code, name, options=(), backend="nvcc", translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False, _module=None, format=None):
        self.module = _module if _module is not None else RawModule(code=code, options=options, backend=backend,
                                                                    format=format)
        lib, ctx = _lib()
        h = _ct.c_void_p()
        st = lib.loom_raw_module_get_function(self.module._h, str(name).encode("utf-8"), _ct.byref(h))
        if st:
            _raise(lib, ctx, st)
        self._h = h
        self.name = name
        self.code, self.options, self.backend = code, tuple(options), backend

    @property
    def params(self):
        """[(kind, size)] of the parameters, kind in 'pointer', 'int', 'float', 'int_or_pointer', 'any';
        None when unknown (a cubin not loaded yet)."""
        lib, _ = _lib()
        n = _ct.c_int32()
        kinds = (_ct.c_int * _MAX_PARAMS)()
        sizes = (_ct.c_int32 * _MAX_PARAMS)()
        lib.loom_raw_function_params(self._h, _ct.byref(n), kinds, sizes, _MAX_PARAMS)
        if n.value < 0:
            return None
        names = ("pointer", "int", "float", "int_or_pointer", "any")
        return [(names[kinds[i]], sizes[i]) for i in range(n.value)]

    def _args(self, args):
        lib, _ = _lib()
        n = _ct.c_int32()
        kinds = (_ct.c_int * _MAX_PARAMS)()
        sizes = (_ct.c_int32 * _MAX_PARAMS)()
        lib.loom_raw_function_params(self._h, _ct.byref(n), kinds, sizes, _MAX_PARAMS)
        known = n.value >= 0
        if known and len(args) != n.value:
            raise TypeError("kernel '%s' takes %d argument%s, got %d" % (self.name, n.value, "" if n.value == 1 else "s",
                                                                           len(args)))
        out = (_RawArg * max(1, len(args)))()
        keep = []
        for i, a in enumerate(args):
            kind, size = (kinds[i], sizes[i]) if known else (_ANY, 0)
            cai = getattr(a, "__cuda_array_interface__", None) if not isinstance(a, (_np.ndarray, _np.generic)) else None
            if cai is not None:
                d = _kernels._LoomArray()
                d.data = cai["data"][0] or None
                d.dtype = 0
                d.ndim = 0
                d.device = 1  # LOOM_DEVICE_CUDA
                d.device_index = int(getattr(getattr(a, "device", None), "id", 0) or 0)
                keep.append(d)
                out[i].kind = 0
                out[i].array = _ct.addressof(d)
                continue
            if isinstance(a, _np.ndarray):
                if a.ndim == 0:
                    a = a[()]
                else:
                    raise TypeError("kernel '%s' argument %d is a NumPy array: raw kernels take loom GPU arrays"
                                    % (self.name, i))
            if isinstance(a, _np.generic):
                dt = a.dtype
            elif isinstance(a, (bool, int, float)):
                dt = _scalar_dtype(a, kind, size) if known else _np.dtype("int64" if isinstance(a, int) else "float64")
                if dt is None:
                    raise TypeError("kernel '%s' argument %d: the parameter is %s of %d bytes, got %r"
                                    % (self.name, i, ("a pointer", "an integer", "a floating-point scalar",
                                                      "a pointer or 64-bit integer", "a value")[kind], size, a))
                if dt.kind in "iu":
                    info = _np.iinfo(dt)
                    if not info.min <= int(a) <= info.max:
                        raise TypeError("kernel '%s' argument %d: %d does not fit the %s parameter" % (self.name, i, a, dt))
            else:
                raise TypeError("kernel '%s' argument %d: unsupported type %s" % (self.name, i, type(a).__name__))
            if dt.name not in _kernels._DTYPES:
                raise TypeError("kernel '%s' argument %d: dtype %s is not supported" % (self.name, i, dt))
            out[i].kind = 1
            out[i].dtype = _kernels._DTYPES.index(dt.name)
            v = _np.asarray(a, dtype=dt)[()]
            if dt.kind == "f":
                out[i].value.f = float(v)
            elif dt.kind == "u":
                out[i].value.u = int(v)
            else:
                out[i].value.i = int(v)
        return out, keep

    def __call__(self, grid, block, args, shared_mem=0, stream=None, **kwargs):
        def dims(x, what):
            t = (x,) if isinstance(x, int) else tuple(x)
            if not 1 <= len(t) <= 3:
                raise ValueError("%s must have 1 to 3 dimensions" % what)
            return (_ct.c_uint32 * 3)(*(list(t) + [1] * (3 - len(t))))
        if not isinstance(args, (tuple, list)):
            raise TypeError("args must be a tuple")
        g, b = dims(grid, "grid"), dims(block, "block")
        raw, keep = self._args(tuple(args))
        if stream is None:
            try:
                from . import cuda
                stream = cuda.get_current_stream()
            except Exception:  # pragma: no cover - no CUDA part in this build
                stream = None
        ptr = getattr(stream, "ptr", stream) if stream is not None else None
        lib, ctx = _lib()
        st = lib.loom_raw_function_launch_on(self._h, g, b, int(shared_mem), ptr or None, -1, len(args), raw)
        del keep
        if st:
            _raise(lib, ctx, st, type_error=True)
