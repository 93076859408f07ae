"""_array.py: loom.ndarray and the array functions, a thin layer over loom._core.

Approach: _core builds lazy graph nodes (shape and dtype checks happen there, at the calling line)
and evaluates them; this module turns NumPy-style arguments (dtypes, axes, keys, out=) into _core
calls. View geometry of materialized arrays (basic indexing, reshape, transpose) is computed by NumPy
on a zero-copy view of the loom buffer and handed back to _core.view, so views follow NumPy exactly.
A view of a pending array first evaluates it (a view must see later in-place writes to its base).
Values traced by @loom.fuse ("tracers") cannot be evaluated; their indexing and reshapes become
graph nodes instead.
"""
import builtins
import mmap
import operator

import numpy

from . import _core

try:
    from numpy.exceptions import AxisError
except ImportError:  # NumPy < 1.25
    AxisError = numpy.AxisError

_DTYPES = tuple(numpy.dtype(n) for n in _core.dtype_names)
_CODE = {d: i for i, d in enumerate(_DTYPES)}
_OPS = _core.ops


def _code(dtype):
    """The _core dtype code of a NumPy-style dtype (TypeError for dtypes loom lacks)."""
    try:
        d = numpy.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"loom: {dtype!r} is not a dtype ({e})") from None
    code = _CODE.get(d.newbyteorder("=") if d.byteorder not in "=|" else d)
    if code is None:
        raise TypeError(f"loom does not support dtype {d} (supported: {', '.join(_core.dtype_names)})")
    return code


def _default_dtype(dtype, fallback):
    return _code(fallback if dtype is None else dtype)


# ---------------------------------------------------------------------------------------------------
class _Flags:
    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, c, f, own):
        self.c_contiguous, self.f_contiguous, self.owndata = c, f, own

    def __getitem__(self, name):
        return {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous,
                "OWNDATA": self.owndata}[name.upper()]

    def __repr__(self):
        return (f"  C_CONTIGUOUS : {self.c_contiguous}\n  F_CONTIGUOUS : {self.f_contiguous}\n"
                f"  OWNDATA : {self.owndata}")


def _contig(shape, strides, itemsize, order):
    dims = list(zip(shape, strides))
    if order == "C":
        dims.reverse()
    expect = itemsize
    for n, s in dims:
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


class ndarray(_core.Array):
    """A loom array (CuPy's ndarray API). Values may be pending: they are computed when observed."""

    __slots__ = ()
    __array_priority__ = 100

    def __new__(cls, shape, dtype=float, memptr=None, strides=None, order="C"):
        if memptr is not None or strides is not None or order != "C":
            raise NotImplementedError("loom.ndarray(): memptr, strides and order='F' are not supported")
        return _core.empty(_shape_tuple(shape), _code(dtype), False, *_cur())

    # ---- attributes ------------------------------------------------------------------------------
    @property
    def dtype(self):
        return _DTYPES[self._dtype_code]

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def device(self):
        from . import cuda
        return cuda._device_of(self._device)

    @property
    def _on_gpu(self):
        return self._device[0] == 1

    @property
    def T(self):
        return self.transpose()

    @property
    def flags(self):
        sh, st, it = self.shape, self.strides, self.itemsize
        return _Flags(_contig(sh, st, it, "C"), _contig(sh, st, it, "F"), True)

    @property
    def data(self):
        return _MemPtr(self)

    @property
    def __cuda_array_interface__(self):
        """Version 3 of the CUDA Array Interface (GPU arrays only). Pending values are evaluated; the
        stream field is the current loom Stream when one is in use (the consumer orders its reads
        after it), else None after synchronizing loom's default stream."""
        if not self._on_gpu:
            # CuPy has no host arrays; a loom array on the host has no CUDA memory to describe.
            raise AttributeError("__cuda_array_interface__: this loom array lives in host memory "
                                 "(no CUDA device is in use); use __dlpack__ or __array__ instead")
        if self._tracer:
            raise TypeError("@loom.fuse: a traced value has no memory to describe")
        from . import cuda
        _core.eval(self)
        s = cuda.get_current_stream(self._device[1])
        stream = s.ptr if s._h is not None else None
        if stream is None:
            _core.device_synchronize(*self._device)
        c = _contig(self.shape, self.strides, self.itemsize, "C")
        return {"shape": self.shape, "typestr": self.dtype.str, "descr": [("", self.dtype.str)],
                "data": ((self._ptr or 0) if self.size else 0, False),
                "strides": None if c else self.strides, "version": 3, "stream": stream}

    # ---- observation ---------------------------------------------------------------------------------
    def _np(self):
        """A zero-copy NumPy view (evaluates a pending array); a host copy for a GPU array."""
        if self._on_gpu:
            return numpy.asarray(memoryview(_core.to_device(self, 0, 0)))
        return numpy.asarray(memoryview(self))

    def get(self, stream=None, order="C", out=None, blocking=True):
        a = self._np()
        if out is not None:
            out[...] = a
            return out
        if self._on_gpu and order in ("C", "K", "A"):
            return a  # already a fresh host copy
        return numpy.array(a, order=order, copy=True)

    def __array__(self, dtype=None, copy=None):
        if self._on_gpu:
            raise TypeError("Implicit conversion to a NumPy array is not allowed: this loom array is on "
                            f"{self.device}. Please use `.get()` (or loom.asnumpy) to copy it to the host.")
        a = self._np()
        if dtype is not None and numpy.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def __repr__(self):
        return repr(self._np())

    def __str__(self):
        return str(self._np())

    def __format__(self, spec):
        return format(self._np(), spec)

    def __bool__(self):
        return bool(self._np())

    def __float__(self):
        return float(self._np())

    def __int__(self):
        return int(self._np())

    def __complex__(self):
        return complex(self._np())

    def __index__(self):
        return operator.index(self._np()[()]) if self.ndim == 0 else operator.index(self._np())

    def item(self, *args):
        return self._np().item(*args)

    def tolist(self):
        return self._np().tolist()

    def __reduce__(self):
        return (array, (self.get(),))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    # ---- interop ---------------------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        fn = _UFUNCS.get(ufunc.__name__)
        if fn is None or method != "__call__":
            return NotImplemented
        if out is not None:
            if len(out) != 1:
                return NotImplemented
            kwargs["out"] = out[0]
        return fn(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from . import _API
        fn = _API.get(func.__name__)
        if fn is None or fn is func:
            return NotImplemented
        return fn(*args, **kwargs)

    # ---- shape ----------------------------------------------------------------------------------------
    def reshape(self, *shape, order="C"):
        if order not in ("C", "A"):
            raise NotImplementedError("reshape: only order='C' is supported")
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        shape = _shape_tuple(shape)
        if self._tracer:
            return _core.movement(0, self, shape, None, None)
        try:
            return self._numpy_view(lambda a: a.reshape(shape))
        except ValueError:
            raise
        except _NotAView:
            return _core.movement(0, self, shape, None, None)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
            axes = axes[0]
        axes = None if axes is None or axes == () else tuple(operator.index(a) for a in axes)
        if self._tracer:
            return _core.movement(1, self, axes, None, None)
        return self._numpy_view(lambda a: a.transpose(axes))

    def swapaxes(self, a1, a2):
        if self._tracer:
            perm = list(range(self.ndim))
            a1, a2 = _norm_axis(a1, self.ndim), _norm_axis(a2, self.ndim)
            perm[a1], perm[a2] = perm[a2], perm[a1]
            return _core.movement(1, self, perm, None, None)
        return self._numpy_view(lambda a: a.swapaxes(a1, a2))

    def ravel(self, order="C"):
        return self.reshape(-1)

    def flatten(self, order="C"):
        return self.reshape(-1).copy()

    def squeeze(self, axis=None):
        if self._tracer:
            return _core.movement(5, self, None if axis is None else _axes_tuple(axis), None, None)
        return self._numpy_view(lambda a: a.squeeze(axis))

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        code = _code(dtype)
        if code == self._dtype_code and not copy:
            return self
        return _core.cast(self, code)

    def copy(self, order="C"):
        return _core.cast(self, self._dtype_code)

    def view(self, dtype=None):
        if dtype is None or numpy.dtype(dtype) == self.dtype:
            return self._numpy_view(lambda a: a.view())
        raise NotImplementedError("view(dtype): reinterpreting loom memory as another dtype is not supported")

    def fill(self, value):
        self[...] = value

    def _geometry_base(self):
        """A NumPy array with this GPU array's shape and strides over untouched anonymous memory
        (no physical pages): NumPy computes view geometry on it, no data is read."""
        _core.eval(self)
        shape, strides, it = self.shape, self.strides, self.itemsize
        lo = hi = 0
        if self.size:
            for n, s in zip(shape, strides):
                lo += builtins.min(0, (n - 1) * s)
                hi += builtins.max(0, (n - 1) * s)
        mm = mmap.mmap(-1, hi - lo + it)
        return numpy.ndarray(shape, self.dtype, buffer=mm, offset=-lo, strides=strides)

    def _numpy_view(self, fn):
        """fn(numpy view) -> the same geometry as a loom view of this array's memory."""
        base = self._geometry_base() if self._on_gpu else self._np()
        v = fn(base)
        if not isinstance(v, numpy.ndarray):
            v = numpy.asarray(v)
        if v.size and not numpy.may_share_memory(v, base):
            raise _NotAView()
        if not v.size and base.size and v.base is None:
            raise _NotAView()
        off = v.__array_interface__["data"][0] - base.__array_interface__["data"][0] if v.size else 0
        return _core.view(self, off, v.shape, v.strides)

    # ---- indexing --------------------------------------------------------------------------------------
    def __getitem__(self, key):
        if _is_advanced(key):
            if self._tracer:
                raise TypeError("@loom.fuse: boolean or integer-array indexing cannot be traced")
            k = _key_to_numpy(key)
            return _from_numpy(self._np()[k], copy=True, device=self._device)
        if self._tracer:
            return _lazy_index(self, key)
        k = key if isinstance(key, tuple) else (key,)
        if not builtins.any(e is Ellipsis for e in k):
            k = k + (Ellipsis,)
        return self._numpy_view(lambda a: a[k])

    def __setitem__(self, key, value):
        if self._tracer:
            raise TypeError("@loom.fuse: item assignment to a traced value is not supported; "
                            "return a new array (e.g. loom.where) instead")
        value = _operand(value)
        if _is_advanced(key):
            k = _key_to_numpy(key)
            if isinstance(value, ndarray) and value._tracer:
                raise TypeError("@loom.fuse values cannot be stored")
            v = value._np() if isinstance(value, ndarray) else value
            _core.flush()  # pending values read this memory through the graph: compute them first
            if self._on_gpu:  # through a host copy: the C API has no scatter yet
                h = self._np()
                h[k] = v
                _core.assign(self, _from_numpy(h, copy=True, device=self._device))
                return
            self._np()[k] = v
            return
        if self._lazy:
            _core.eval(self)
        target = self if key is Ellipsis or key == () else self[key]
        _core.assign(target, value)

    # ---- arithmetic -------------------------------------------------------------------------------------
    def __neg__(self): return negative(self)
    def __pos__(self): return positive(self)
    def __abs__(self): return absolute(self)
    def __invert__(self): return invert(self)
    def __add__(self, o): return _binop("add", self, o)
    def __radd__(self, o): return _binop("add", o, self)
    def __sub__(self, o): return _binop("sub", self, o)
    def __rsub__(self, o): return _binop("sub", o, self)
    def __mul__(self, o): return _binop("mul", self, o)
    def __rmul__(self, o): return _binop("mul", o, self)
    def __truediv__(self, o): return _binop("truediv", self, o)
    def __rtruediv__(self, o): return _binop("truediv", o, self)
    def __floordiv__(self, o): return _binop("floordiv", self, o)
    def __rfloordiv__(self, o): return _binop("floordiv", o, self)
    def __mod__(self, o): return _binop("mod", self, o)
    def __rmod__(self, o): return _binop("mod", o, self)
    def __pow__(self, o): return _binop("pow", self, o)
    def __rpow__(self, o): return _binop("pow", o, self)
    def __and__(self, o): return _binop("bitwise_and", self, o)
    def __rand__(self, o): return _binop("bitwise_and", o, self)
    def __or__(self, o): return _binop("bitwise_or", self, o)
    def __ror__(self, o): return _binop("bitwise_or", o, self)
    def __xor__(self, o): return _binop("bitwise_xor", self, o)
    def __rxor__(self, o): return _binop("bitwise_xor", o, self)
    def __lshift__(self, o): return _binop("left_shift", self, o)
    def __rlshift__(self, o): return _binop("left_shift", o, self)
    def __rshift__(self, o): return _binop("right_shift", self, o)
    def __rrshift__(self, o): return _binop("right_shift", o, self)
    def __eq__(self, o): return _binop("eq", self, o)
    def __ne__(self, o): return _binop("ne", self, o)
    def __lt__(self, o): return _binop("lt", self, o)
    def __le__(self, o): return _binop("le", self, o)
    def __gt__(self, o): return _binop("gt", self, o)
    def __ge__(self, o): return _binop("ge", self, o)
    __hash__ = None

    def __matmul__(self, o): return matmul(self, o)
    def __rmatmul__(self, o): return matmul(o, self)

    def _inplace(self, name, o):
        r = _binop(name, self, o)
        if r is NotImplemented:
            return r
        if not numpy.can_cast(r.dtype, self.dtype, "same_kind"):
            raise TypeError(f"Cannot cast ufunc '{_NP_NAME.get(name, name)}' output from {r.dtype!r} to "
                            f"{self.dtype!r} with casting rule 'same_kind'")
        if r.shape != self.shape:
            raise ValueError(f"non-broadcastable output operand with shape {self.shape} doesn't match the "
                             f"broadcast shape {r.shape}")
        if self._lazy:
            _core.become(self, _core.cast(r, self._dtype_code))
        else:
            _core.assign(self, r)
        return self

    def __iadd__(self, o): return self._inplace("add", o)
    def __isub__(self, o): return self._inplace("sub", o)
    def __imul__(self, o): return self._inplace("mul", o)
    def __itruediv__(self, o): return self._inplace("truediv", o)
    def __ifloordiv__(self, o): return self._inplace("floordiv", o)
    def __imod__(self, o): return self._inplace("mod", o)
    def __ipow__(self, o): return self._inplace("pow", o)
    def __iand__(self, o): return self._inplace("bitwise_and", o)
    def __ior__(self, o): return self._inplace("bitwise_or", o)
    def __ixor__(self, o): return self._inplace("bitwise_xor", o)
    def __ilshift__(self, o): return self._inplace("left_shift", o)
    def __irshift__(self, o): return self._inplace("right_shift", o)

    # ---- methods that are functions -----------------------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False): return sum(self, axis, dtype, out, keepdims)
    def prod(self, axis=None, dtype=None, out=None, keepdims=False): return prod(self, axis, dtype, out, keepdims)
    def mean(self, axis=None, dtype=None, out=None, keepdims=False): return mean(self, axis, dtype, out, keepdims)
    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return var(self, axis, dtype, out, ddof, keepdims)
    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return std(self, axis, dtype, out, ddof, keepdims)
    def min(self, axis=None, out=None, keepdims=False): return amin(self, axis, out, keepdims)
    def max(self, axis=None, out=None, keepdims=False): return amax(self, axis, out, keepdims)
    def any(self, axis=None, out=None, keepdims=False): return any(self, axis, out, keepdims)
    def all(self, axis=None, out=None, keepdims=False): return all(self, axis, out, keepdims)
    def argmin(self, axis=None, out=None, keepdims=False): return argmin(self, axis, out, keepdims)
    def argmax(self, axis=None, out=None, keepdims=False): return argmax(self, axis, out, keepdims)
    def clip(self, min=None, max=None, out=None): return clip(self, min, max, out)
    def round(self, decimals=0, out=None): return around(self, decimals, out)
    def conj(self): return self
    def dot(self, b, out=None): return dot(self, b, out)
    def nonzero(self): return nonzero(self)


class _NotAView(Exception):
    pass


class _MemPtr:
    """A stand-in for cupy.cuda.MemoryPointer on the host: .ptr is the address of the first element."""

    def __init__(self, a):
        _core.eval(a)
        self.ptr = a._ptr
        self.mem = a


# ---- helpers ----------------------------------------------------------------------------------------
def _shape_tuple(shape):
    if isinstance(shape, (int, numpy.integer)):
        return (operator.index(shape),)
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, not {shape!r}") from None


def _norm_axis(axis, ndim):
    a = operator.index(axis)
    if a < -ndim or a >= ndim:
        raise AxisError(f"axis {a} is out of bounds for array of dimension {ndim}")
    return a + ndim if a < 0 else a


def _axes_tuple(axis):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(operator.index(a) for a in axis)
    return (operator.index(axis),)


def _is_advanced(key):
    k = key if isinstance(key, tuple) else (key,)
    for e in k:
        if isinstance(e, (ndarray, numpy.ndarray, list)):
            return True
        if isinstance(e, (bool, numpy.bool_)):
            return True
    return False


def _key_to_numpy(key):
    k = key if isinstance(key, tuple) else (key,)
    out = tuple(e._np() if isinstance(e, ndarray) else e for e in k)
    return out if isinstance(key, tuple) else out[0]


def _lazy_index(x, key):
    """Basic indexing of a traced value as graph nodes (slice, then squeeze ints, then add Nones)."""
    k = key if isinstance(key, tuple) else (key,)
    nell = builtins.sum(1 for e in k if e is Ellipsis)
    if nell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    nreal = builtins.sum(1 for e in k if e is not None and e is not Ellipsis)
    if nreal > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but {nreal} were indexed")
    if nell == 0:
        k = k + (Ellipsis,)
    i = k.index(Ellipsis)
    k = k[:i] + (slice(None),) * (x.ndim - nreal) + k[i + 1:]
    starts, stops, steps, squeeze, newaxes = [], [], [], [], []
    axis = 0
    out_pos = 0
    for e in k:
        if e is None:
            newaxes.append(out_pos)
            out_pos += 1
            continue
        n = x.shape[axis]
        if isinstance(e, slice):
            starts.append(e.start)
            stops.append(e.stop)
            steps.append(1 if e.step is None else operator.index(e.step))
            out_pos += 1
        else:
            j = operator.index(e)
            if j < -n or j >= n:
                raise IndexError(f"index {j} is out of bounds for axis {axis} with size {n}")
            j = j + n if j < 0 else j
            starts.append(j)
            stops.append(j + 1)
            steps.append(1)
            squeeze.append(axis)
        axis += 1
    y = _core.movement(3, x, starts, stops, steps)
    if squeeze:
        y = _core.movement(5, y, squeeze, None, None)
    for p in newaxes:
        y = _core.movement(4, y, p, None, None)
    return y


def _cur():
    """(kind, index) of the current device (see loom.cuda)."""
    from . import cuda
    return cuda._current_key()


def _from_numpy(a, copy=True, device=None):
    """A loom array from NumPy data: copy=False is a zero-copy host array; copy=True copies onto
    `device` ((kind, index); None: the current device)."""
    a = numpy.asarray(a)
    if a.dtype.byteorder not in "=|" or a.dtype not in _CODE:
        _code(a.dtype)  # raises TypeError for unsupported dtypes
        a = a.astype(a.dtype.newbyteorder("="))
    if builtins.any(s % a.itemsize for s in a.strides):
        a = numpy.ascontiguousarray(a)
    if copy:
        kind, index = _cur() if device is None else device
        if kind != 0:
            return _core.to_device(_core.from_buffer(a, False), kind, index)
    return _core.from_buffer(a, copy)


def _operand(x):
    """An operand for _core: loom arrays and Python scalars as they are; NumPy scalars as strong
    constants; NumPy arrays and lists converted (copied)."""
    if isinstance(x, numpy.generic):  # before float: numpy.float64 is a float subclass
        if x.dtype not in _CODE:
            _code(x.dtype)
        v = x.item()
        return _core.const(int(v) if isinstance(v, bool) else v, _CODE[x.dtype])
    if isinstance(x, (ndarray, bool, int, float)):
        return x
    if isinstance(x, complex):
        raise TypeError("loom does not support complex numbers")
    if isinstance(x, (numpy.ndarray, list, tuple)):
        return _from_numpy(numpy.asarray(x), copy=True)
    if hasattr(x, "__cuda_array_interface__") or hasattr(x, "__dlpack__"):
        return asarray(x)
    raise TypeError(f"loom: unsupported operand type {type(x).__name__}")


_NP_NAME = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
            "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "eq": "equal",
            "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}


def _binop(name, a, b):
    try:
        a, b = _operand(a), _operand(b)
    except TypeError:
        return NotImplemented
    return _core.binary(_OPS[name], a, b)


def _finish(r, out):
    if out is None:
        return r
    if not isinstance(out, ndarray):
        raise TypeError(f"out must be a loom.ndarray, not {type(out).__name__}")
    if out.shape != r.shape:
        raise ValueError(f"output array has shape {out.shape}; the result has shape {r.shape}")
    if not numpy.can_cast(r.dtype, out.dtype, "same_kind"):
        raise TypeError(f"Cannot cast output from {r.dtype!r} to {out.dtype!r} with casting rule 'same_kind'")
    if out._lazy:
        _core.become(out, _core.cast(r, out._dtype_code))
    else:
        _core.assign(out, r)
    return out


def _make_unary(opname, npname):
    op = _OPS[opname]

    def f(x, out=None, *, dtype=None, casting="same_kind"):
        x = _operand(x)
        if dtype is not None:
            x = _core.cast(x, _code(dtype)) if isinstance(x, ndarray) else asarray(x, dtype)
        if not isinstance(x, ndarray):
            x = asarray(x)
        return _finish(_core.unary(op, x), out)

    f.__name__ = npname
    f.__doc__ = f"loom.{npname}(x, out=None): elementwise, like numpy.{npname}"
    return f


def _make_binary(opname, npname):
    op = _OPS[opname]

    def f(a, b, out=None, *, dtype=None, casting="same_kind"):
        a, b = _operand(a), _operand(b)
        if not isinstance(a, ndarray) and not isinstance(b, ndarray):
            a = asarray(a)
        r = _core.binary(op, a, b)
        if dtype is not None:
            r = _core.cast(r, _code(dtype))
        return _finish(r, out)

    f.__name__ = npname
    f.__doc__ = f"loom.{npname}(a, b, out=None): elementwise with broadcasting, like numpy.{npname}"
    return f


_UNARY = {"negative": "neg", "absolute": "abs", "sign": "sign", "exp": "exp", "exp2": "exp2",
          "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
          "sqrt": "sqrt", "rsqrt": "rsqrt", "cbrt": "cbrt", "sin": "sin", "cos": "cos", "tan": "tan",
          "arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh", "cosh": "cosh",
          "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "floor": "floor",
          "ceil": "ceil", "trunc": "trunc", "rint": "rint", "isnan": "isnan", "isinf": "isinf",
          "isfinite": "isfinite", "logical_not": "logical_not", "invert": "bitwise_not"}
_BINARY = {"add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "truediv",
           "floor_divide": "floordiv", "remainder": "mod", "power": "pow", "maximum": "maximum",
           "minimum": "minimum", "fmax": "fmax", "fmin": "fmin", "arctan2": "atan2", "hypot": "hypot",
           "copysign": "copysign", "equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
           "greater": "gt", "greater_equal": "ge", "logical_and": "logical_and",
           "logical_or": "logical_or", "logical_xor": "logical_xor", "bitwise_and": "bitwise_and",
           "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor", "left_shift": "left_shift",
           "right_shift": "right_shift"}

_UFUNCS = {}
for _n, _o in _UNARY.items():
    _UFUNCS[_n] = globals()[_n] = _make_unary(_o, _n)


def _make_rounding(npname, inner):
    def f(x, out=None, **kw):
        x = asarray(x)
        # NumPy >= 2.? keeps integer dtypes for floor/ceil/trunc (a no-op); follow the installed NumPy
        if x.dtype.kind in "biu" and getattr(numpy, npname)(numpy.zeros(0, x.dtype)).dtype == x.dtype:
            return _finish(x.copy(), out)
        return inner(x, out, **kw)

    f.__name__ = npname
    f.__doc__ = inner.__doc__
    return f


for _n in ("floor", "ceil", "trunc", "rint"):
    _UFUNCS[_n] = globals()[_n] = _make_rounding(_n, _UFUNCS[_n])
for _n, _o in _BINARY.items():
    _UFUNCS[_n] = globals()[_n] = _make_binary(_o, _n)
divide = true_divide  # noqa: F821
mod = remainder  # noqa: F821
abs = absolute  # noqa: F821
bitwise_not = invert  # noqa: F821
_UFUNCS.update(divide=divide, abs=abs)


def positive(x, out=None):
    x = asarray(x)
    if x.dtype == numpy.bool_:
        raise TypeError("The numpy boolean positive, the unary + operator, is not supported")
    return _finish(x.copy(), out)


def square(x, out=None):
    x = asarray(x)
    return _finish(_core.binary(_OPS["mul"], x, x), out)


def reciprocal(x, out=None):
    x = asarray(x)
    one = _core.const(1, x._dtype_code)
    op = "truediv" if x.dtype.kind == "f" else "floordiv"
    return _finish(_core.cast(_core.binary(_OPS[op], one, x), x._dtype_code), out)


def fabs(x, out=None):
    x = asarray(x)
    if x.dtype.kind != "f":  # NumPy's float loop: int8 -> float16, int16 -> float32, ...
        x = x.astype(numpy.result_type(x.dtype, numpy.float16))
    return _finish(_core.unary(_OPS["abs"], x), out)


def around(a, decimals=0, out=None):
    a = asarray(a)
    if decimals == 0:
        r = _core.unary(_OPS["rint"], a) if a.dtype.kind == "f" else a.copy()
    elif a.dtype.kind == "f":
        s = 10.0 ** decimals
        r = _core.binary(_OPS["truediv"], _core.unary(_OPS["rint"], a * s), s)
    else:
        raise NotImplementedError("around: decimals != 0 for integer arrays")
    return _finish(r, out)


round_ = around
_UFUNCS.update(positive=positive, square=square, reciprocal=reciprocal, fabs=fabs)


def where(condition, x=None, y=None):
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    c, x, y = _operand(condition), _operand(x), _operand(y)
    if not builtins.any(isinstance(v, ndarray) for v in (c, x, y)):
        c = asarray(c)
    return _core.where(c, x, y)


def clip(a, a_min=None, a_max=None, out=None, **kw):
    a_min = kw.pop("min", a_min)
    a_max = kw.pop("max", a_max)
    a = asarray(a)
    lo = None if a_min is None else _operand(a_min)
    hi = None if a_max is None else _operand(a_max)
    return _finish(_core.clip(a, lo, hi), out)


# ---- reductions -------------------------------------------------------------------------------------
_RED = {"sum": 0, "prod": 1, "min": 2, "max": 3, "mean": 4, "any": 5, "all": 6, "argmin": 7, "argmax": 8}


def _reduce(name, a, axis, dtype, out, keepdims):
    a = asarray(a)
    r = _core.reduce(_RED[name], a, _axes_tuple(axis), keepdims, -1 if dtype is None else _code(dtype))
    return _finish(r, out)


def sum(a, axis=None, dtype=None, out=None, keepdims=False):
    return _reduce("sum", a, axis, dtype, out, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    return _reduce("prod", a, axis, dtype, out, keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    return _reduce("mean", a, axis, dtype, out, keepdims)


def amin(a, axis=None, out=None, keepdims=False):
    return _reduce("min", a, axis, None, out, keepdims)


def amax(a, axis=None, out=None, keepdims=False):
    return _reduce("max", a, axis, None, out, keepdims)


min = amin
max = amax


def any(a, axis=None, out=None, keepdims=False):
    return _reduce("any", a, axis, None, out, keepdims)


def all(a, axis=None, out=None, keepdims=False):
    return _reduce("all", a, axis, None, out, keepdims)


def _arg(name, a, axis, out, keepdims):
    a = asarray(a)
    if axis is None:
        r = _core.reduce(_RED[name], a, None, False, -1)
        if keepdims:
            r = r.reshape((1,) * a.ndim)
    else:
        r = _core.reduce(_RED[name], a, (operator.index(axis),), keepdims, -1)
    return _finish(r, out)


def argmin(a, axis=None, out=None, keepdims=False):
    return _arg("argmin", a, axis, out, keepdims)


def argmax(a, axis=None, out=None, keepdims=False):
    return _arg("argmax", a, axis, out, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    a = asarray(a)
    m = mean(a, axis, dtype, None, True)
    d = a - m
    n = a.size if axis is None else int(numpy.prod([a.shape[_norm_axis(x, a.ndim)] for x in _axes_tuple(axis)]))
    s = sum(d * d, axis, None, None, keepdims)
    return _finish(_core.binary(_OPS["truediv"], s, float(builtins.max(n - ddof, 0))), out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _finish(sqrt(var(a, axis, dtype, None, ddof, keepdims)), out)  # noqa: F821


def count_nonzero(a, axis=None, keepdims=False):
    a = asarray(a)
    return sum(_core.binary(_OPS["ne"], a, False if a.dtype == numpy.bool_ else 0), axis, None, None, keepdims)


# ---- creation ---------------------------------------------------------------------------------------
def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0):
    if isinstance(obj, ndarray):
        r = obj.astype(obj.dtype if dtype is None else dtype, copy=copy is not False)
    elif _has_cai(obj):
        r = _from_cai(obj)
        if dtype is not None or copy:
            r = r.astype(r.dtype if dtype is None else dtype, copy=True)
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, numpy.ndarray):
        r = from_dlpack(obj)
        if dtype is not None or copy:
            r = r.astype(r.dtype if dtype is None else dtype, copy=True)
    else:
        r = _from_numpy(numpy.asarray(obj, dtype=dtype), copy=True)
    if ndmin > r.ndim:
        r = r.reshape((1,) * (ndmin - r.ndim) + r.shape)
    return r


def asarray(a, dtype=None, order=None):
    """Loom arrays as they are; objects with __cuda_array_interface__ or a CUDA __dlpack__ (CuPy,
    PyTorch) zero-copy; anything else (NumPy, lists) copied onto the current device."""
    if isinstance(a, ndarray):
        return a if dtype is None or numpy.dtype(dtype) == a.dtype else a.astype(dtype)
    if _has_cai(a):
        r = _from_cai(a)
    elif hasattr(a, "__dlpack__") and hasattr(a, "__dlpack_device__") and not isinstance(a, numpy.ndarray) \
            and a.__dlpack_device__()[0] == 2:
        r = from_dlpack(a)
    else:
        return array(a, dtype, copy=True)
    return r if dtype is None or numpy.dtype(dtype) == r.dtype else r.astype(dtype)


def _has_cai(obj):
    if isinstance(obj, (ndarray, numpy.ndarray)):
        return False
    try:
        return hasattr(obj, "__cuda_array_interface__")
    except Exception:
        return False


def _from_cai(obj):
    """A zero-copy loom array over an object's __cuda_array_interface__ (v2 or v3) on the current
    device; the producer's stream is synchronized first."""
    from . import cuda
    cai = obj.__cuda_array_interface__
    if not cuda._available():
        raise ValueError("__cuda_array_interface__: this machine has no CUDA device loom can use")
    if cai.get("mask") is not None:
        raise NotImplementedError("__cuda_array_interface__: masked arrays are not supported")
    dt = numpy.dtype(cai["typestr"])
    if dt.byteorder not in "=|" and dt.newbyteorder("=") != dt:
        raise TypeError(f"__cuda_array_interface__: byte order of {cai['typestr']} is not native")
    code = _code(dt.newbyteorder("="))
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    ptr = int(cai["data"][0] or 0)
    dev = cuda.get_device_id()
    cuda._sync_foreign_stream(cai.get("stream"), dev)
    return _core.from_pointer(ptr, shape, None if strides is None else tuple(int(s) for s in strides), code,
                              1, dev, obj)


asanyarray = asarray
ascontiguousarray = asarray


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if isinstance(a, ndarray):
        return a.get(out=out, order=order)
    r = numpy.asarray(a, order=order)
    if out is not None:
        out[...] = r
        return out
    return r


def empty(shape, dtype=float, order="C"):
    return _core.empty(_shape_tuple(shape), _code(dtype), False, *_cur())


def zeros(shape, dtype=float, order="C"):
    return _core.empty(_shape_tuple(shape), _code(dtype), True, *_cur())


def full(shape, fill_value, dtype=None, order="C"):
    if dtype is None:
        dtype = numpy.asarray(fill_value.get() if isinstance(fill_value, ndarray) else fill_value).dtype
    a = _core.empty(_shape_tuple(shape), _code(dtype), False, *_cur())
    _core.assign(a, _operand(fill_value))
    return a


def ones(shape, dtype=float, order="C"):
    return full(shape, 1, dtype)


def _like_shape(a, shape):
    return a.shape if shape is None else shape


def empty_like(a, dtype=None, order="K", subok=None, shape=None):
    return empty(_like_shape(a, shape), a.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, order="K", subok=None, shape=None):
    return zeros(_like_shape(a, shape), a.dtype if dtype is None else dtype)


def ones_like(a, dtype=None, order="K", subok=None, shape=None):
    return ones(_like_shape(a, shape), a.dtype if dtype is None else dtype)


def full_like(a, fill_value, dtype=None, order="K", subok=None, shape=None):
    return full(_like_shape(a, shape), fill_value, a.dtype if dtype is None else dtype)


def arange(start, stop=None, step=1, dtype=None):
    return _from_numpy(numpy.arange(start, stop, step, dtype=dtype), copy=True)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    r = numpy.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    if retstep:
        return _from_numpy(r[0], copy=True), r[1]
    return _from_numpy(r, copy=True)


def eye(N, M=None, k=0, dtype=float, order="C"):
    return _from_numpy(numpy.eye(N, M, k, dtype), copy=True)


def identity(n, dtype=float):
    return eye(n, dtype=dtype)


def from_dlpack(x, *, device=None, copy=None):
    if isinstance(x, ndarray):
        return x
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} has no __dlpack__ method")
    dev = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
    if dev[0] not in (1, 2):
        raise BufferError(f"from_dlpack: device type {dev[0]} is neither the host (1) nor CUDA (2)")
    if dev[0] == 2:
        from . import cuda
        if not cuda._available():
            raise BufferError("from_dlpack: a CUDA tensor, but this machine has no CUDA device loom can use")
        # The producer orders its work before the legacy default stream (1); loom then waits for that
        # stream on the host, so the data is ready whichever stream loom runs on.
        cap = x.__dlpack__(stream=1)
        cuda._sync_foreign_stream(1, dev[1])
        return _core.from_dlpack_capsule(cap)
    try:
        cap = x.__dlpack__(stream=None)
    except TypeError:
        cap = x.__dlpack__()
    return _core.from_dlpack_capsule(cap)


# ---- shape functions --------------------------------------------------------------------------------
def reshape(a, newshape, order="C"):
    return asarray(a).reshape(newshape, order=order)


def transpose(a, axes=None):
    return asarray(a).transpose(axes)


def ravel(a, order="C"):
    return asarray(a).ravel()


def squeeze(a, axis=None):
    return asarray(a).squeeze(axis)


def swapaxes(a, axis1, axis2):
    return asarray(a).swapaxes(axis1, axis2)


def expand_dims(a, axis):
    a = asarray(a)
    if a._tracer:
        return _core.movement(4, a, operator.index(axis), None, None)
    return a._numpy_view(lambda v: numpy.expand_dims(v, axis))


def broadcast_to(a, shape):
    a = asarray(a)
    shape = _shape_tuple(shape)
    if a._tracer:
        return _core.movement(2, a, shape, None, None)
    return a._numpy_view(lambda v: numpy.broadcast_to(v, shape))


def astype(a, dtype, copy=True):
    return asarray(a).astype(dtype, copy=copy)


def copy(a, order="K"):
    return asarray(a).copy()


def shape(a):
    return asarray(a).shape


def ndim(a):
    return asarray(a).ndim


def size(a):
    return asarray(a).size


def result_type(*args):
    return numpy.result_type(*[a.dtype if isinstance(a, ndarray) else a for a in args])


def can_cast(from_, to, casting="safe"):
    return numpy.can_cast(from_.dtype if isinstance(from_, ndarray) else from_, to, casting)


# ---- host fallbacks (computed by NumPy on the host, returned as new loom arrays) --------------------------
def _host(fn, *arrays, **kw):
    args = [a._np() if isinstance(a, ndarray) else a for a in arrays]
    dev = next((a._device for a in arrays if isinstance(a, ndarray)), None)
    return _from_numpy(fn(*args, **kw), copy=True, device=dev)


def matmul(a, b, out=None):
    return _finish(_host(numpy.matmul, asarray(a), asarray(b)), out)


def dot(a, b, out=None):
    return _finish(_host(numpy.dot, asarray(a), asarray(b)), out)


def concatenate(arrays, axis=0, out=None, dtype=None):
    return _finish(_host(lambda *xs: numpy.concatenate(xs, axis=axis, dtype=dtype), *map(asarray, arrays)), out)


def stack(arrays, axis=0, out=None):
    return _finish(_host(lambda *xs: numpy.stack(xs, axis=axis), *map(asarray, arrays)), out)


def nonzero(a):
    return tuple(_from_numpy(i, copy=True) for i in numpy.nonzero(asarray(a)._np()))


def array_equal(a1, a2, equal_nan=False):
    return bool(numpy.array_equal(asnumpy(a1), asnumpy(a2), equal_nan=equal_nan))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(numpy.allclose(asnumpy(a), asnumpy(b), rtol, atol, equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _from_numpy(numpy.isclose(asnumpy(a), asnumpy(b), rtol, atol, equal_nan), copy=True)


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and _n not in ("builtins", "operator", "numpy")]
