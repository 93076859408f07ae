"""User kernels: CuPy's ElementwiseKernel and ReductionKernel on loom's snippet compiler.

Approach: the kernels are made and run by loom._core (uk_* there) on the extension's own LoomContext,
the one every loom array lives on, so arguments are passed as LoomArray descriptors of their memory:
a loom array on a GPU is read (and an out= written) on the device, with no host round trip. Pending
(lazy) loom arrays are evaluated first, in one evaluation, on the launch's stream. NumPy arrays are
accepted as host arrays, read in place; when every array argument is NumPy the results are NumPy
arrays, else loom arrays on the arguments' device. Python scalars become 0-d arrays of their param's
type (a type placeholder takes the dtype an array argument bound it to, else NumPy's default for the
scalar); NumPy scalars keep their dtype. Lists and CUDA Array Interface objects go through
loom.asarray. Semantics follow CuPy: placeholders bound from the outputs first, then the inputs;
broadcasting of non-raw arguments; `size` only when every ndarray argument is raw (scalars do not
count) and then required ("Loop size is undecided."), a raw output not given allocated with `size`
points; output arguments written in place; `stream=` (a loom.cuda.Stream) runs the call on that stream; caching by signature (in C).
ReductionKernel(identity=None): CuPy value-initializes the reduce type then (`T a = T();`), i.e. 0;
loom passes the identity "0". ElementwiseKernel loop_prep / after_loop are passed to libloom's
loom_elementwise_kernel_create_ex; a libloom without it raises NotImplementedError.
Introspection: kernel.kernel_ir(*args, ...), .llvm_ir(...) and .ptx(...) take the arguments of a call
(same keywords) and return the text of the kernel that call would run (loom_user_kernel_dump); nothing
runs and pending arguments stay pending.
"""
import numpy as _np

from . import _core

_DUMP_KERNELS, _DUMP_LLVM, _DUMP_PTX = 1, 2, 3  # LoomDumpKind
_UNKNOWN = -128
_NO_RETURN, _RETURN_TUPLE = 1, 2
_DTYPES = list(_core.dtype_names)


def _param_raw(params):
    """Per param of a CuPy parameter list: whether it is declared raw (CuPy's rule for size=)."""
    return tuple(len(w) >= 3 and w[0] == "raw" for w in (p.split() for p in str(params or "").split(",")) if w)


def _param_codes(params):
    """Per param of a CuPy parameter list ("raw T x, float32 y"): its loom dtype code, -1 - letter for
    a type placeholder (one capital letter), or _UNKNOWN (the C parser reports bad names)."""
    out = []
    for p in str(params or "").split(","):
        w = p.split()
        if not w:
            continue
        if w[0] == "raw" and len(w) >= 3:
            w = w[1:]
        t = w[0]
        if len(t) == 1 and "A" <= t <= "Z":
            out.append(-1 - (ord(t) - ord("A")))
            continue
        try:
            name = _np.dtype(t).name
        except TypeError:
            name = None
        out.append(_DTYPES.index(name) if name in _DTYPES else _UNKNOWN)
    return tuple(out)


def _check_kernel_name(name):
    """A kernel's name becomes a symbol of the generated code: it must be a C identifier (CuPy's rule)."""
    if isinstance(name, str) and "\x00" in name:
        raise ValueError(f"Invalid kernel name {name!r}: it contains a NUL byte")
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        raise ValueError(f"Invalid kernel name {name!r}: use a C identifier (ASCII letters, digits and '_', "
                         "not starting with a digit)")


def _stream_spec(stream):
    """None (the current stream) or (kind, index, handle, restore) for loom._core."""
    if stream is None:
        return None
    from . import cuda
    if not isinstance(stream, cuda.Stream):
        raise TypeError("stream must be a loom.cuda.Stream (or ExternalStream), got %s" % type(stream).__name__)
    stream._check()
    if not _core.has_stream_api():
        return None
    key = stream._key_now()
    cur = cuda._stream_stack().get(key, cuda.Stream.null)
    if cur is stream:
        return None
    return (key[0], key[1], stream._handle(), None if cur._closed else cur._handle())


def _convert(x):
    """Other argument objects (lists, NumPy arrays, CUDA Array Interface or DLPack objects) as loom arrays;
    anything else is CuPy's TypeError, on every device (not asarray's ValueError for an object dtype)."""
    from . import _creation
    if not (isinstance(x, (list, tuple, _np.ndarray, _np.generic)) or hasattr(x, "__cuda_array_interface__")
            or hasattr(x, "__dlpack__") or hasattr(x, "__cupy_get_ndarray__") or hasattr(x, "__array__")):
        raise TypeError(f"Unsupported type {type(x)}")
    return _creation.asarray(x)


_core.uk_configure(_convert, _stream_spec)


def _axes(axis):
    if axis is None:
        return None
    return (int(axis),) if isinstance(axis, (int, _np.integer)) else tuple(int(a) for a in axis)


def _outs(out):
    if out is None:
        return None
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


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


class ElementwiseKernel(_core.UserKernel, _Introspect):
    """CuPy's ElementwiseKernel: `operation` is C code run once per point of the broadcast arguments.
    Call: ``kernel(*inputs[, *outputs], size=None, stream=None)`` (loom._core.UserKernel's own call: the
    per-call path runs in C)."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True, preamble="",
                 no_return=False, return_tuple=False, loop_prep="", after_loop="", options=(), **kwargs):
        _check_kernel_name(name)
        flags = (_NO_RETURN if no_return else 0) | (_RETURN_TUPLE if return_tuple else 0)
        codes = _param_codes(in_params) + _param_codes(out_params)
        _core.uk_elementwise(self, str(in_params), str(out_params), str(operation), str(name),
                                       str(preamble or ""), str(loop_prep or ""), str(after_loop or ""),
                                       bool(reduce_dims), codes, flags, _param_raw(in_params) + _param_raw(out_params))
        self.name = name
        self.in_params, self.out_params = in_params, out_params
        self.operation, self.preamble = operation, preamble
        self.loop_prep, self.after_loop = loop_prep, after_loop
        self.no_return, self.return_tuple = no_return, return_tuple
        self.reduce_dims = reduce_dims
        self.nin = len(_param_codes(in_params))
        self.nout = len(_param_codes(out_params))
        self.nargs = self.nin + self.nout
        from .cuda import _cxx_elementwise  # texture fetches: run as CUDA C++ (RawModule), not loom's snippets
        if _cxx_elementwise.uses_textures(operation, preamble):
            self.__class__ = _cxx_elementwise.texture_kernel_class(type(self))

    def _dump(self, kind, args, kwargs):
        size = kwargs.pop("size", None)
        kwargs.pop("stream", None)
        if kwargs:
            raise TypeError("%s: unexpected keyword arguments %s" % (self.name, sorted(kwargs)))
        return _core.uk_dump(self, kind, args, None, size, None, False)


class ReductionKernel(_Introspect):
    """CuPy's ReductionKernel: map_expr per point, reduce_expr to combine (associative), post_map_expr.
    Call: ``kernel(*inputs, out=None, axis=None, keepdims=False, stream=None)``. identity=None is CuPy's
    value-initialized reduce type, 0."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name="reduce_kernel",
                 reduce_type=None, reduce_dims=True, preamble="", options=(), **kwargs):
        _check_kernel_name(name)
        codes = _param_codes(in_params) + _param_codes(out_params)
        ident = "0" if identity is None else str(identity)
        self._k = _core.uk_reduction(str(in_params), str(out_params), str(map_expr), str(reduce_expr),
                                     str(post_map_expr), ident, str(name),
                                     None if reduce_type is None else str(reduce_type), str(preamble or ""),
                                     bool(reduce_dims), codes)
        self.name = name
        self.in_params, self.out_params = in_params, out_params
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity, self.reduce_type, self.preamble = identity, reduce_type, preamble
        self.nin = len(_param_codes(in_params))
        self.nout = len(_param_codes(out_params))

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        return _core.uk_call(self._k, args, _outs(out), None, _axes(axis), keepdims,
                             None if stream is None else _stream_spec(stream))

    def _dump(self, kind, args, kwargs):
        out, axis, keepdims = kwargs.pop("out", None), kwargs.pop("axis", None), kwargs.pop("keepdims", False)
        kwargs.pop("stream", None)
        if kwargs:
            raise TypeError("%s: unexpected keyword arguments %s" % (self.name, sorted(kwargs)))
        return _core.uk_dump(self._k, kind, args, _outs(out), None, _axes(axis), keepdims)
