"""User kernels: CuPy's ElementwiseKernel and ReductionKernel on loom's snippet compiler.

Approach: the kernels are compiled and run by libloom's C API (loom_elementwise_kernel_* and
loom_reduction_kernel_* in include/loom/loom.h) through ctypes, on a libloom context of this module's
own (the extension loom._core does not export these calls yet). The library is the libloom next to
loom/_core (or $LOOM_LIBRARY). Arguments are NumPy arrays or loom arrays (host memory; a loom array is
materialized and passed as NumPy); results are NumPy arrays when every array argument is NumPy, else
loom arrays. Semantics follow CuPy: type placeholders bound from the outputs first, then the inputs;
broadcasting of non-raw arguments; `size` when every argument is raw; caching by signature (in C).
Introspection: kernel.kernel_ir(*args, ...), .llvm_ir(...) and .ptx(...) take the arguments of a call
(same keywords) and return the text of the kernel that call would run (loom_user_kernel_dump); nothing
runs. CuPy's identity=None is not accepted (CuPy documents identity as a required str) and
ElementwiseKernel's loop_prep / after_loop are not supported (NotImplementedError).
"""
import ctypes as _ct
import glob as _glob
import os as _os
import threading as _threading

import numpy as _np

_MAX_RANK = 16
_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64"]
_ERRORS = {1: ValueError, 2: ValueError, 3: TypeError, 4: ValueError, 5: MemoryError, 6: NotImplementedError,
           7: RuntimeError, 8: RuntimeError}


class _LoomArray(_ct.Structure):
    _fields_ = [("data", _ct.c_void_p), ("dtype", _ct.c_int), ("ndim", _ct.c_int32),
                ("shape", _ct.c_int64 * _MAX_RANK), ("strides", _ct.c_int64 * _MAX_RANK),
                ("device", _ct.c_int), ("device_index", _ct.c_int32)]


_lib_state = {}
_lib_lock = _threading.Lock()


def _find_library():
    env = _os.environ.get("LOOM_LIBRARY")
    if env:
        return env
    here = _os.path.dirname(_os.path.abspath(__file__))
    for pat in ("libloom.so", "libloom*.so*", "libloom.dylib"):
        hits = sorted(_glob.glob(_os.path.join(here, pat)))
        if hits:
            return hits[0]
    raise ImportError("loom user kernels need libloom next to loom/_core (or set LOOM_LIBRARY)")


def _lib():
    with _lib_lock:
        if "lib" in _lib_state:
            return _lib_state["lib"], _lib_state["ctx"]
        lib = _ct.CDLL(_find_library())
        P = _ct.POINTER
        lib.loom_context_create.argtypes = [P(_ct.c_void_p)]
        lib.loom_last_error.restype = _ct.c_char_p
        lib.loom_last_error.argtypes = [_ct.c_void_p]
        cs = _ct.c_char_p
        lib.loom_elementwise_kernel_create.argtypes = [_ct.c_void_p, cs, cs, cs, cs, cs, _ct.c_int, P(_ct.c_void_p)]
        lib.loom_reduction_kernel_create.argtypes = [_ct.c_void_p, cs, cs, cs, cs, cs, cs, cs, cs, cs, _ct.c_int,
                                                     P(_ct.c_void_p)]
        lib.loom_user_kernel_destroy.argtypes = [_ct.c_void_p]
        lib.loom_user_kernel_destroy.restype = None
        lib.loom_user_kernel_info.argtypes = [_ct.c_void_p, P(_ct.c_int32), P(_ct.c_int32), P(_ct.c_int)]
        lib.loom_elementwise_kernel_call.argtypes = [_ct.c_void_p, _ct.c_int32, P(_LoomArray), _ct.c_int32,
                                                     P(_LoomArray), _ct.c_int64]
        lib.loom_reduction_kernel_call.argtypes = [_ct.c_void_p, _ct.c_int32, P(_LoomArray), _ct.c_int32,
                                                   P(_LoomArray), _ct.c_int32, P(_ct.c_int32), _ct.c_int]
        lib.loom_user_kernel_dump.argtypes = [_ct.c_void_p, _ct.c_int, _ct.c_int32, P(_LoomArray), _ct.c_int32,
                                              P(_LoomArray), _ct.c_int64, _ct.c_int32, P(_ct.c_int32), _ct.c_int,
                                              P(_ct.c_void_p)]
        lib.loom_free_string.argtypes = [_ct.c_void_p, _ct.c_void_p]
        lib.loom_free_string.restype = None
        lib.loom_array_free.argtypes = [_ct.c_void_p, P(_LoomArray)]
        lib.loom_array_free.restype = None
        ctx = _ct.c_void_p()
        if lib.loom_context_create(_ct.byref(ctx)) != 0:
            raise RuntimeError("loom: cannot create a context for user kernels")
        _lib_state["lib"], _lib_state["ctx"] = lib, ctx
        return lib, ctx


def _raise(lib, ctx, status):
    msg = (lib.loom_last_error(ctx) or b"").decode("utf-8", "replace")
    raise _ERRORS.get(status, RuntimeError)(msg)


def _enc(s):
    return None if s is None else str(s).encode("utf-8")


def _describe(a):
    """A _LoomArray viewing NumPy array a (which must stay alive)."""
    d = _LoomArray()
    name = a.dtype.name
    if name not in _DTYPES:
        raise TypeError("loom user kernels do not support dtype %s" % name)
    if a.ndim > _MAX_RANK:
        raise ValueError("loom supports at most %d dims" % _MAX_RANK)
    d.data = a.ctypes.data if a.size else None
    d.dtype = _DTYPES.index(name)
    d.ndim = a.ndim
    for i in range(a.ndim):
        d.shape[i] = a.shape[i]
        if a.strides[i] % a.itemsize:
            raise ValueError("array strides must be multiples of the item size")
        d.strides[i] = a.strides[i] // a.itemsize
    return d


def _is_loom(x):
    try:
        from . import _array
        return isinstance(x, _array.ndarray)
    except Exception:  # pragma: no cover - the package without its extension
        return False


def _to_numpy(x, param_type):
    if _is_loom(x):
        from . import _array
        return _array.asnumpy(x), True
    if isinstance(x, _np.ndarray):
        return x, False
    # Python or NumPy scalars: a 0-d array of the param's dtype, or NumPy's own dtype for placeholders
    dt = param_type if param_type in _DTYPES or param_type in ("float", "int", "double", "half") else None
    return (_np.asarray(x, dtype=dt) if dt else _np.asarray(x)), False


def _parse_types(params):
    """The type names of a CuPy parameter list ("raw T x, float32 y" -> ["T", "float32"])."""
    out = []
    for p in params.split(","):
        w = p.split()
        if not w:
            continue
        if w[0] == "raw":
            w = w[1:]
        out.append(w[0] if len(w) >= 2 else None)
    return out


def _wrap_out(lib, ctx, d, owned, as_loom):
    """A NumPy (or loom) array for output descriptor d; owned: loom allocated it (copied, then freed)."""
    if not owned:
        return None
    shape = tuple(d.shape[i] for i in range(d.ndim))
    dt = _np.dtype(_DTYPES[d.dtype])
    n = int(_np.prod(shape)) if shape else 1
    if d.data and n:
        buf = (_ct.c_char * (n * dt.itemsize)).from_address(d.data)
        res = _np.frombuffer(buf, dtype=dt, count=n).reshape(shape).copy()
    else:
        res = _np.zeros(shape, dtype=dt)
    lib.loom_array_free(ctx, _ct.byref(d))
    if as_loom:
        from . import _array
        return _array.asarray(res)
    return res


class _UserKernel:
    def __init__(self, handle, in_params, out_params, name):
        self._h = handle
        self.name = name
        self.in_params = in_params
        self.out_params = out_params
        self._in_types = _parse_types(in_params)
        self._out_types = _parse_types(out_params)
        self.nin = len(self._in_types)
        self.nout = len(self._out_types)

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and "lib" in _lib_state:
            _lib_state["lib"].loom_user_kernel_destroy(h)

    def _prepare(self, args, outs):
        keep, any_loom = [], False
        ins = (_LoomArray * max(1, self.nin))()
        for i, a in enumerate(args):
            arr, is_loom = _to_numpy(a, self._in_types[i])
            any_loom |= is_loom
            keep.append(arr)
            ins[i] = _describe(arr)
        od = (_LoomArray * max(1, self.nout))()
        given = []
        for j in range(self.nout):
            o = outs[j] if outs is not None and j < len(outs) else None
            if o is None:
                given.append(None)
                continue
            if _is_loom(o):
                raise TypeError("%s: out= must be a NumPy array here (loom arrays are immutable to ctypes)" % self.name)
            if not isinstance(o, _np.ndarray) or not o.flags.writeable:
                raise TypeError("%s: out params must be writeable NumPy arrays" % self.name)
            keep.append(o)
            given.append(o)
            od[j] = _describe(o)
        return keep, any_loom, ins, od, given


_DUMP_KERNELS, _DUMP_LLVM, _DUMP_PTX = 1, 2, 3  # LoomDumpKind


def _axes(axis):
    if axis is None:
        return 0, None
    ax = (axis,) if isinstance(axis, int) else tuple(axis)
    if not ax:  # axis=(): reduce nothing
        return 0, (_ct.c_int32 * 1)()
    return len(ax), (_ct.c_int32 * len(ax))(*ax)


class _Introspect:
    """kernel_ir / llvm_ir / ptx of the kernel one call would run (the same arguments as the call)."""

    def kernel_ir(self, *args, **kwargs):
        """Loom's kernel IR (text) for a call with these arguments."""
        return self._dump(_DUMP_KERNELS, args, kwargs)

    def llvm_ir(self, *args, **kwargs):
        """The optimized LLVM IR for the host CPU for a call with these arguments."""
        return self._dump(_DUMP_LLVM, args, kwargs)

    def ptx(self, *args, **kwargs):
        """PTX for sm_90 (compiled without a GPU) for a call with these arguments."""
        return self._dump(_DUMP_PTX, args, kwargs)

    def _dump_call(self, lib, kind, ins, od, size, nax, axes, keepdims):
        text = _ct.c_void_p()
        st = lib.loom_user_kernel_dump(self._h, kind, self.nin, ins, self.nout, od, size, nax, axes, keepdims,
                                       _ct.byref(text))
        lib_ctx = _lib()[1]
        if st:
            _raise(lib, lib_ctx, st)
        try:
            return _ct.string_at(text.value).decode("utf-8", "replace")
        finally:
            lib.loom_free_string(lib_ctx, text)


class ElementwiseKernel(_UserKernel, _Introspect):
    """CuPy's ElementwiseKernel: `operation` is C code run once per point of the broadcast arguments."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True, preamble="",
                 no_return=False, return_tuple=False, loop_prep="", after_loop="", **kwargs):
        if loop_prep or after_loop:
            raise NotImplementedError("loom's ElementwiseKernel does not support loop_prep / after_loop (CuPy's raw "
                                      "CUDA code around the loop): compute per point in `operation`, or use RawKernel")
        lib, ctx = _lib()
        h = _ct.c_void_p()
        st = lib.loom_elementwise_kernel_create(ctx, _enc(in_params), _enc(out_params), _enc(operation), _enc(name),
                                                _enc(preamble), int(bool(reduce_dims)), _ct.byref(h))
        if st:
            _raise(lib, ctx, st)
        super().__init__(h, in_params, out_params, name)
        self.operation = operation
        self.preamble = preamble
        self.no_return = no_return
        self.return_tuple = return_tuple

    def _split(self, args):
        if len(args) == self.nin:
            return args, None
        if len(args) == self.nin + self.nout:
            return args[:self.nin], args[self.nin:]
        raise TypeError("Wrong number of arguments for %s: %d inputs (+ %d optional outputs) expected, got %d"
                        % (self.name, self.nin, self.nout, len(args)))

    def _dump(self, kind, args, kwargs):
        lib, _ = _lib()
        size = kwargs.pop("size", None)
        kwargs.pop("stream", None)
        if kwargs:
            raise TypeError("%s: unexpected keyword arguments %s" % (self.name, sorted(kwargs)))
        ins_, outs = self._split(args)
        keep, _, ins, od, _ = self._prepare(ins_, outs)
        try:
            return self._dump_call(lib, kind, ins, od, -1 if size is None else int(size), 0, None, 0)
        finally:
            del keep

    def __call__(self, *args, size=None, stream=None, **kwargs):
        lib, ctx = _lib()
        if len(args) == self.nin:
            outs = None
        elif len(args) == self.nin + self.nout:
            outs = args[self.nin:]
            args = args[:self.nin]
        else:
            raise TypeError("Wrong number of arguments for %s: %d inputs (+ %d optional outputs) expected, got %d"
                            % (self.name, self.nin, self.nout, len(args)))
        keep, any_loom, ins, od, given = self._prepare(args, outs)
        st = lib.loom_elementwise_kernel_call(self._h, self.nin, ins, self.nout, od, -1 if size is None else int(size))
        if st:
            _raise(lib, ctx, st)
        res = [g if g is not None else _wrap_out(lib, ctx, od[j], True, any_loom) for j, g in enumerate(given)]
        del keep
        if self.no_return:
            return None
        if len(res) == 1 and not self.return_tuple:
            return res[0]
        return tuple(res)


class ReductionKernel(_UserKernel, _Introspect):
    """CuPy's ReductionKernel: map_expr per point, reduce_expr to combine (associative), post_map_expr."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name="reduce_kernel",
                 reduce_type=None, reduce_dims=True, preamble="", options=(), **kwargs):
        lib, ctx = _lib()
        h = _ct.c_void_p()
        st = lib.loom_reduction_kernel_create(ctx, _enc(in_params), _enc(out_params), _enc(map_expr),
                                              _enc(reduce_expr), _enc(post_map_expr), _enc(identity), _enc(name),
                                              _enc(reduce_type), _enc(preamble), int(bool(reduce_dims)), _ct.byref(h))
        if st:
            _raise(lib, ctx, st)
        super().__init__(h, in_params, out_params, name)
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity = identity

    def _dump(self, kind, args, kwargs):
        lib, _ = _lib()
        out, axis, keepdims = kwargs.pop("out", None), kwargs.pop("axis", None), kwargs.pop("keepdims", False)
        kwargs.pop("stream", None)
        if kwargs:
            raise TypeError("%s: unexpected keyword arguments %s" % (self.name, sorted(kwargs)))
        if len(args) != self.nin:
            raise TypeError("Wrong number of arguments for %s: %d expected, got %d" % (self.name, self.nin, len(args)))
        outs = None if out is None else ((out,) if not isinstance(out, (tuple, list)) else tuple(out))
        keep, _, ins, od, _ = self._prepare(args, outs)
        nax, axes = _axes(axis)
        try:
            return self._dump_call(lib, kind, ins, od, -1, nax, axes, int(bool(keepdims)))
        finally:
            del keep

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None, **kwargs):
        lib, ctx = _lib()
        if len(args) != self.nin:
            raise TypeError("Wrong number of arguments for %s: %d expected, got %d" % (self.name, self.nin, len(args)))
        outs = None if out is None else ((out,) if not isinstance(out, (tuple, list)) else tuple(out))
        keep, any_loom, ins, od, given = self._prepare(args, outs)
        if axis is None:
            nax, axes = 0, None
        else:
            ax = (axis,) if isinstance(axis, int) else tuple(axis)
            nax, axes = len(ax), (_ct.c_int32 * max(1, len(ax)))(*ax)
            if nax == 0:  # axis=(): reduce nothing
                axes = (_ct.c_int32 * 1)()
        st = lib.loom_reduction_kernel_call(self._h, self.nin, ins, self.nout, od, nax, axes, int(bool(keepdims)))
        if st:
            _raise(lib, ctx, st)
        res = [g if g is not None else _wrap_out(lib, ctx, od[j], True, any_loom) for j, g in enumerate(given)]
        del keep
        return res[0] if len(res) == 1 else tuple(res)
