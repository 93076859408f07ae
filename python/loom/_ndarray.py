"""_ndarray.py: loom.ndarray, a thin layer over loom._core.Array, and the glue every array function
uses: operands for _core (_operand), binary operators (_binop), out= (_finish); host fallbacks (_host ...)
live in _host_fallback.py and a.flat in _flatiter.py, re-exported here.

Approach: _core builds lazy graph nodes (shape and dtype checks happen there, at the calling line)
and evaluates them; the array layer turns NumPy-style arguments (dtypes, axes, keys, out=) into _core
calls. View geometry of materialized arrays (basic indexing, reshape, transpose) is computed by NumPy
on a zero-copy view of the loom buffer and handed back to _core.view, so views follow NumPy exactly.
A view of a pending array first evaluates it (a view must see later in-place writes to its base).
Values traced by @loom.fuse ("tracers") cannot be evaluated; their indexing and reshapes become
graph nodes instead.

The array functions live by concept: _creation.py, _math.py (elementwise), _reductions.py,
_manipulation.py (shapes, joins), _indexing.py (indexing and searching). ndarray's methods call them
through their modules, imported at the end of this file (they import ndarray from here).
"""
import builtins
import mmap
import operator
import os
import warnings

import numpy

from . import _core
from ._common import (_np_dtype_of, _dtype_at, _CODE, _OPS, _bf16, _is_bf16, _BF16_CODE, _code, _shape_tuple, _norm_axis, _axes_tuple,
                      _cur, _from_numpy, _contiguous, _COMPLEX_CODES, _INEXACT_CODES)

try:
    from numpy.exceptions import ComplexWarning as _ComplexWarning
except ImportError:  # NumPy < 1.25
    _ComplexWarning = numpy.ComplexWarning


class _Flags:
    """a.flags: the memory-layout flags (read-only, as NumPy's for these three), by attribute or key."""
    __slots__ = ("_c", "_f", "_own")

    def __init__(self, c, f, own):
        self._c, self._f, self._own = c, f, own

    c_contiguous = property(lambda self: self._c)
    f_contiguous = property(lambda self: self._f)
    owndata = property(lambda self: self._own)
    fnc = property(lambda self: self._f and not self._c, doc="F-contiguous and not C-contiguous")
    forc = property(lambda self: self._f or self._c, doc="F- or C-contiguous")

    def __getitem__(self, name):
        return {"C_CONTIGUOUS": self._c, "F_CONTIGUOUS": self._f, "OWNDATA": self._own}[name.upper()]

    def __repr__(self):
        return (f"  C_CONTIGUOUS : {self._c}\n  F_CONTIGUOUS : {self._f}\n"
                f"  OWNDATA : {self._own}")


def _operator(name, reflected, dunder):
    """The Python method of binary operator `name` (reflected: `o OP self`) that the C slot of loom arrays
    falls back to (_core.set_operators, below the class): loom arrays and plain Python scalars never get
    here (the slot builds their node with no Python frame); an object overriding ufuncs (NEP 13) gets its
    __array_ufunc__ called with loom's ufunc, as NumPy's operators call theirs; the rest is converted by
    _binop (NotImplemented where loom cannot take it)."""
    if reflected:
        def method(self, o):
            f = _ufunc_override(o)
            return _binop(name, o, self) if f is None else f(o, _ufunc_of(name), "__call__", o, self)
    else:
        def method(self, o):
            f = _ufunc_override(o)
            return _binop(name, self, o) if f is None else f(o, _ufunc_of(name), "__call__", self, o)
    method.__name__ = method.__qualname__ = dunder
    return method


def _ufunc_override(o):
    """o's __array_ufunc__ when o, an object of another library, overrides ufuncs (NEP 13): a loom
    operator then calls it with loom's ufunc, as NumPy's operators call theirs. None otherwise (also for
    __array_ufunc__ = None, which asks Python to try o's reflected operator)."""
    if isinstance(o, (ndarray, numpy.ndarray, numpy.generic, int, float, complex)):
        return None
    return getattr(type(o), "__array_ufunc__", None)


def _ufunc_of(name):
    from ._math import _UFUNCS_PUBLIC
    return _UFUNCS_PUBLIC[_NP_NAME.get(name, name)]


class ndarray(_core.Array):
    """A loom array (CuPy's ndarray API). Values may be pending: they are computed when observed."""

    __slots__ = ("_base",)  # the array whose memory a view shares (NumPy's and CuPy's .base)
    __array_priority__ = 100

    def __new__(cls, shape, dtype=float, memptr=None, strides=None, order="C"):
        """CuPy's constructor: a new array (loom.empty) or, with memptr (a loom.cuda.MemoryPointer), an array
        over that memory, which it keeps alive; strides (bytes) default to order's contiguous ones and must
        keep every element inside the pointer's block."""
        if memptr is None and strides is None:
            return _creation.empty(shape, dtype, order)
        if memptr is None:
            _creation._check_new_strides(shape, dtype, strides)
        from .cuda import memory
        return memory._array_over(shape, dtype, memptr, strides, order)

    # ---- attributes ------------------------------------------------------------------------------
    @property
    def dtype(self):
        return _dtype_at(self._dtype_code)

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
        return self._device[0] != 0  # CUDA or HIP memory: any device but the host

    @property
    def T(self):
        if type(self) is ndarray:  # the view made in C at once (subclasses: their own transpose)
            v = _core.permuted_view(self, None)  # NotImplemented for a tracer
            if v is not NotImplemented:
                return self._view_of_me(v)
        return self.transpose()

    @property
    def flags(self):
        sh, st, it = self.shape, self.strides, self.itemsize
        # owndata: False for a view of another array's memory (its .base), as NumPy's and CuPy's
        return _Flags(_contiguous(sh, st, it, "C"), _contiguous(sh, st, it, "F"), self.base is None)

    @property
    def data(self):
        """A loom.cuda.MemoryPointer at the first element (CuPy's ndarray.data); it keeps the array alive."""
        from .cuda import memory
        return memory._array_pointer(self)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export: zero-copy on the array's own device (_core.Array.__dlpack__). As the DLPack 2023.12
        keywords ask, dl_device=(1, 0) (the host) of a GPU array exports a host copy (NumPy's
        from_dlpack(x, device="cpu"); copy=False refuses with BufferError), and copy=True exports a copy."""
        if dl_device is not None and self._on_gpu and tuple(dl_device) == (1, 0):
            if copy is False:
                raise BufferError("__dlpack__: a GPU array reaches the host only as a copy (copy=False was given)")
            return _core.Array.__dlpack__(_core.to_device(self, 0, 0), max_version=max_version)
        src = self.copy() if copy is True else self
        return _core.Array.__dlpack__(src, stream=stream, max_version=max_version, dl_device=dl_device)

    @property
    def __cuda_array_interface__(self):
        """The CUDA Array Interface (GPU arrays only), version loom.config.cuda_array_interface_version (3
        unless set; 2 has no stream entry). Pending values are evaluated. With a loom Stream in use the
        stream entry is its handle (the consumer orders its reads after it; version 2: synchronized here);
        on a default stream loom's work is synchronized and the entry is that default stream's CUDA handle
        (1, the legacy default stream; 2 for Stream.ptds), as CuPy exports it."""
        if not self._on_gpu:
            # CuPy has no host arrays; a loom array on the host has no CUDA memory to describe.
            raise AttributeError("__cuda_array_interface__: this loom array lives in host memory "
                                 "(no CUDA device is in use); use __dlpack__ or __array__ instead")
        if self._tracer:
            raise TypeError("@loom.fuse: a traced value has no memory to describe")
        from . import cuda
        from ._config import config
        version = config.cuda_array_interface_version
        _core.eval(self)
        s = cuda.get_current_stream(self._device[1])
        if s._h is not None and s.ptr:  # 0 is no CUDA handle (the interface forbids it)
            stream = s.ptr
            if version < 3:
                s.synchronize()
        else:
            _core.device_synchronize(*self._device)
            stream = s.ptr or cuda.stream._LEGACY_HANDLE
        c = _contiguous(self.shape, self.strides, self.itemsize, "C")
        cai = {"shape": self.shape, "typestr": self.dtype.str, "descr": [("", self.dtype.str)],
               "data": ((self._ptr or 0) if self.size else 0, False),
               "strides": None if c else self.strides, "version": version}
        if version >= 3:
            cai["stream"] = stream
        return cai

    # ---- observation ---------------------------------------------------------------------------------
    def _np(self):
        """A zero-copy NumPy view (evaluates a pending array); a host copy for a GPU array."""
        h = _core.to_device(self, 0, 0) if self._on_gpu else self
        if self._dtype_code == _BF16_CODE:  # no buffer format: the bits as uint16, seen as bfloat16
            h = _core.view(h, 0, h.shape, h.strides, _CODE[numpy.dtype(numpy.uint16)])
            return numpy.asarray(memoryview(_core.exportable(h))).view(_bf16())
        return numpy.asarray(memoryview(_core.exportable(h)))

    def get(self, stream=None, order="C", out=None, blocking=True):
        a = self._np()
        if out is not None:
            out[...] = a
            return out
        if self._on_gpu:  # a is a fresh host copy: copied again only where its layout is not the one asked
            if order == "A":
                order = "F" if self.flags.f_contiguous and not self.flags.c_contiguous else "C"
            if order == "K" or (order == "C" and a.flags.c_contiguous) or (order == "F" and a.flags.f_contiguous):
                return a
        return numpy.array(a, order=order, copy=True)

    def __array__(self, dtype=None, copy=None):
        if self._on_gpu:
            raise TypeError("Implicit conversion to a NumPy array is not allowed: this loom array is on "
                            f"{self.device}. Please use `.get()` (or loom.asnumpy) to copy it to the host.")
        if os.environ.get("LOOM_STRICT_CONVERSION", "0") not in ("", "0") and not self._export_ok:  # as on a GPU
            raise TypeError("Implicit conversion to a NumPy array is not allowed (LOOM_STRICT_CONVERSION=1: host "
                            "arrays refuse it as GPU arrays do). Please use `.get()` (or loom.asnumpy) to copy it "
                            "to the host.")
        a = self._np()
        if dtype is not None and _np_dtype_of(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        """NumPy's repr of the value. A pending array is evaluated first and says so in a trailing
        comment (``array([2., 2.])  # was pending: evaluated by repr``)."""
        pending = self._lazy and not self._tracer
        text = repr(self._np())
        return text + "  # was pending: evaluated by repr" if pending else text

    def __str__(self):
        return str(self._np())

    def __format__(self, spec):
        return format(self._np(), spec)

    def _scalar(self):
        """The element of a 0-d loom.ndarray of a dtype Python's memoryview reads (bool, integers, float32,
        float64) as the Python scalar that bool(), int(), float() and item() of NumPy's 0-d array agree with,
        read through a host view without making that NumPy array (float(a[3]) in a loop); None otherwise."""
        if self.ndim != 0 or self._dtype_code not in _MEMORYVIEW_CODES or type(self) is not ndarray:
            return None
        h = self if self._device[0] == 0 else _core.to_device(self, 0, 0)
        return memoryview(_core.exportable(h))[()]

    def __bool__(self):
        v = self._scalar()
        return bool(self._np() if v is None else v)

    def __float__(self):
        v = self._scalar()
        return float(self._np() if v is None else v)

    def __int__(self):
        v = self._scalar()
        return int(self._np() if v is None else v)

    def __complex__(self):
        return complex(self._np())

    def __index__(self):
        return operator.index(self._np()[()]) if self.ndim == 0 else operator.index(self._np())

    def item(self, *args):
        v = None if args else self._scalar()
        return self._np().item(*args) if v is None else v

    def tolist(self):
        return self._np().tolist()

    def tobytes(self, order="C"):
        """The raw bytes of the elements in `order` ('C', 'F', 'A' or 'K': NumPy's rules), from the host."""
        if isinstance(order, str) and order.upper() == "A":  # on this array's layout (a GPU array's host
            f = self.flags                                   # copy is C-contiguous)
            order = "F" if f.f_contiguous and not f.c_contiguous else "C"
        return self._np().tobytes(order)

    def __reduce__(self):
        return (_creation.array, (self.get(order="A"),))  # a Fortran-ordered array stays so

    def dumps(self):
        """The array pickled (NumPy's ndarray.dumps): pickle.loads gives it back."""
        import pickle
        return pickle.dumps(self)

    def dump(self, file):
        """Pickles the array into file, a path or a binary file (NumPy's ndarray.dump); loom.load(file,
        allow_pickle=True) or pickle.load reads it back."""
        import pickle
        if isinstance(file, (str, bytes)) or hasattr(file, "__fspath__"):
            with open(file, "wb") as f:
                pickle.dump(self, f)
        else:
            pickle.dump(self, file)

    def tofile(self, fid, sep="", format="%s"):
        """Writes the values to a file, binary or text (NumPy's ndarray.tofile), through a host copy."""
        self.get().tofile(fid, sep=sep, format=format)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    # ---- interop ---------------------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        fn = _math._UFUNCS.get(ufunc.__name__)
        if ufunc is numpy.matmul and method == "__call__":  # a gufunc in NumPy, a function in loom
            return _products.matmul(*inputs, **({"out": out[0]} if out else {}), **kwargs)
        if fn is None or not hasattr(fn, method if method != "__call__" else "nin"):
            return NotImplemented
        if out is not None:
            kwargs["out"] = out[0] if len(out) == 1 else out
        return fn(*inputs, **kwargs) if method == "__call__" else getattr(fn, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from . import _API
        if func.__name__ in _LIKE_CREATORS and getattr(func, "__module__", "") == "numpy":  # only via like= (NEP 35)
            return _create_like(self, func, args, kwargs)
        fn = _API.get(func.__name__)
        if fn is None or fn is func:
            return NotImplemented
        return fn(*args, **kwargs)

    # ---- shape ----------------------------------------------------------------------------------------
    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        if type(shape) is tuple and copy is None and type(order) is str and order == "C":
            # the common call: a C-contiguous array's view made in C, the shape checked there (Python ints
            # only, no -1); NotImplemented for anything else, which the general path below decides
            v = _core.contiguous_view(self, shape)
            if v is not NotImplemented:
                return self._view_of_me(v)
        if copy is not None:
            return _manipulation.reshape(self, shape, order, copy=copy)
        return _manipulation._reshape(self, _shape_tuple(shape), order)

    def transpose(self, *axes):
        if not axes:  # a.transpose(): the axes reversed
            axes = None
        elif len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
            axes = axes[0]  # a.transpose(None) or a.transpose((1, 0)); an explicit () must match ndim 0
        axes = None if axes is None else tuple(operator.index(a) for a in axes)
        if self._tracer:
            return _core.movement(1, self, axes, None, None)
        v = _core.permuted_view(self, axes)  # made in C; NotImplemented for axes NumPy refuses
        if v is not NotImplemented:
            return self._view_of_me(v)
        return self._numpy_view(lambda a: a.transpose(axes))

    def swapaxes(self, a1, a2):
        if self._tracer:
            perm = list(range(self.ndim))
            a1, a2 = _norm_axis(a1, self.ndim), _norm_axis(a2, self.ndim)
            perm[a1], perm[a2] = perm[a2], perm[a1]
            return _core.movement(1, self, perm, None, None)
        return self._numpy_view(lambda a: a.swapaxes(a1, a2))

    def ravel(self, order="C"):
        return _manipulation._ravel(self, order, False)

    def flatten(self, order="C"):
        return _manipulation._ravel(self, order, True)

    def squeeze(self, axis=None):
        if self._tracer:
            return _core.movement(5, self, None if axis is None else _axes_tuple(axis), None, None)
        return self._numpy_view(lambda a: a.squeeze(axis))

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        code = _code(dtype)
        if code == self._dtype_code and not copy and _manipulation._satisfies(self, order):
            return self
        if self._dtype_code in _COMPLEX_CODES and _dtype_at(code).kind not in "cb":  # to bool: nothing lost
            warnings.warn("Casting complex values to real discards the imaginary part", _ComplexWarning,
                          stacklevel=2)
        return _manipulation._copy(self, code, order)

    def copy(self, order="C"):
        return _manipulation._copy(self, self._dtype_code, order)

    def view(self, dtype=None, type=None):
        """A view of the same memory; with dtype, its bytes read as that dtype (NumPy's rules: another
        item size needs a contiguous last axis and changes its length)."""
        if type is not None:
            raise TypeError("view(type=...): loom arrays have no subclasses")
        if dtype is None or _np_dtype_of(dtype) == self.dtype:
            return self._numpy_view(lambda a: a.view())
        d = _np_dtype_of(dtype)
        if d.byteorder not in "=|":
            raise ValueError(f"view: dtype {d} is not in the native byte-order, which loom arrays use")
        if d.kind in "Mm":  # datetime64 / timedelta64: int64 containers (loom/_temporal.py)
            from . import _temporal
            return _temporal.wrap(self.view(numpy.int64), _temporal.check_time_dtype(d))
        code = _code(d)
        if self._tracer:
            raise TypeError("@loom.fuse: view(dtype) of a traced value is not supported (it has no memory)")
        base = self._geometry_base() if self._on_gpu else self._np()
        v = base.view(d)  # NumPy checks the shape and contiguity rules and raises its errors
        off = v.__array_interface__["data"][0] - base.__array_interface__["data"][0] if v.size else 0
        return self._view_of_me(_core.view(self, off, v.shape, v.strides, code))

    def fill(self, value):
        """Every element set to value, a scalar or a 0-d array (NumPy's rule: a sequence is ValueError)."""
        if getattr(value, "ndim", 0) != 0 or isinstance(value, (list, tuple)):
            raise ValueError("fill: the value must be a scalar or a 0-d array (setting an array element "
                             "with a sequence)")
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

    def _numpy_view(self, fn, dtype=None):
        """fn(numpy view) -> the same geometry as a loom view of this array's memory (dtype: a view
        of other items, as a.real of a complex array)."""
        base = self._geometry_base() if self._on_gpu else self._np()
        v = fn(base)
        if type(v) is numpy.ndarray:  # its geometry read from its buffer (C): None when not a view of base
            r = _core.view_of(self, base, v) if dtype is None else _core.view_of(self, base, v, _code(dtype))
            if r is None:
                raise _NotAView()
            if r is not NotImplemented:
                return self._view_of_me(r)
        if not isinstance(v, numpy.ndarray):
            v = numpy.asarray(v)
        if v.size and not numpy.may_share_memory(v, base):
            raise _NotAView()
        if not v.size and base.size and v.base is None:
            raise _NotAView()
        off = v.__array_interface__["data"][0] - base.__array_interface__["data"][0] if v.size else 0
        if dtype is not None:
            return self._view_of_me(_core.view(self, off, v.shape, v.strides, _code(dtype)))
        return self._view_of_me(_core.view(self, off, v.shape, v.strides))

    def _view_of_me(self, v):
        """v, a view of this array's memory, with .base set to the array that owns that memory."""
        b = getattr(self, "_base", None)  # self.base, without the property's call
        v._base = self if b is None else b
        return v

    @property
    def base(self):
        """The array whose memory this view shares (the owner, as NumPy collapses chains of views), or
        None for an array that owns its memory."""
        return getattr(self, "_base", None)

    # ---- complex parts (loom/_complex.py): views of the memory, as NumPy's ----------------------------
    @property
    def real(self):
        return _complex._real(self)

    @real.setter
    def real(self, value):
        _complex._set_part(self, value, False)

    @property
    def imag(self):
        return _complex._imag(self)

    @imag.setter
    def imag(self, value):
        _complex._set_part(self, value, True)

    # ---- indexing (loom/_indexing.py) ------------------------------------------------------------------
    def __getitem__(self, key):
        v = _core.basic_view(self, key)  # ints, slices, None, Ellipsis: a view made in C (NotImplemented: else)
        if v is NotImplemented:
            return _indexing._getitem(self, key)
        b = getattr(self, "_base", None)
        v._base = self if b is None else b
        return v

    def __setitem__(self, key, value):
        t = type(value)
        if (t is float or (t is int and -2**63 <= value < 2**64)) and self._dtype_code in _INEXACT_CODES:
            # a Python number into a float or complex array through a basic key (a[3] = 1.0): what _setitem
            # stores then (the value as it is into the view), with the view made in C; NotImplemented for
            # any other key or a tracer, which _setitem takes
            v = _core.basic_view(self, key)
            if v is not NotImplemented:
                _core.assign(v, value)
                return
        _indexing._setitem(self, key, value)

    # ---- arithmetic -------------------------------------------------------------------------------------
    def __pos__(self): return _math.positive(self)
    # The binary operators +, -, *, /, //, %, **, &, |, ^, <<, >>, the comparisons and -x, abs(x), ~x are C
    # slots of _core.Array (a node built with no Python frame); their Python fallbacks are _OPERATORS below
    # the class.
    def _object_compare(self, name, o):
        """a == o, a != o: elementwise. An operand loom cannot take is compared as NumPy compares object
        elements: each element's comparison defers to o's reflected __eq__ (for !=, o's own __ne__, else
        the negation of its __eq__); where that answers NotImplemented (None, Ellipsis, object(): the
        identity comparison) no element equals o. The object's answer is asked directly, never through
        whether its type defines __eq__: NoneType has its own __eq__ from Python 3.12 on. An object with
        __array_ufunc__ = None gets NotImplemented (Python asks it)."""
        r = None if o is None else _binop(name, self, o)
        if r is not None and r is not NotImplemented:
            return r
        t = type(o)
        if r is NotImplemented and getattr(t, "__array_ufunc__", 0) is None:
            return r
        negate = name == "ne" and t.__ne__ is object.__ne__  # object's __ne__ is "not __eq__"
        e = t.__eq__(o, self) if name == "eq" or negate else t.__ne__(o, self)
        if e is NotImplemented:
            return self._none_compare(name == "ne")
        if isinstance(e, (bool, numpy.bool_)):
            return self._none_compare(bool(e) != negate)
        return _math.logical_not(e) if negate else e
    __hash__ = None

    def _none_compare(self, value):
        """a == None / a != None: NumPy compares elementwise (nothing equals None)."""
        return _core.movement(2, _core.const(int(value), _CODE[numpy.dtype(bool)]), self.shape, None, None)

    def __matmul__(self, o): return _products.matmul(self, o)
    def __rmatmul__(self, o): return _products.matmul(o, self)

    def _inplace(self, name, o):
        if _ufunc_override(o) is not None:  # CuPy's rule: its ufunc cannot write into this array
            raise TypeError(f"unsupported operand type for in-place {_NP_NAME.get(name, name)}: loom.ndarray and "
                            f"{type(o).__name__} (which overrides ufuncs with __array_ufunc__)")
        try:
            r = _binop(name, self, o)
        except ValueError:
            # NumPy resolves the dtypes before the shapes: a result that cannot be cast back raises its
            # TypeError even when the shapes do not broadcast either (the dtypes of 0-d stand-ins decide)
            proxy = _binop(name, _dtype_stand_in(self), _dtype_stand_in(o))
            if proxy is not NotImplemented:
                self._check_inplace_cast(name, proxy.dtype)
            raise
        if r is NotImplemented:
            return r
        self._check_inplace_cast(name, r.dtype)
        if r.shape != self.shape:
            raise ValueError(f"non-broadcastable output operand with shape {self.shape} doesn't match the "
                             f"broadcast shape {r.shape}")
        if self._lazy:
            _core.become(self, _core.cast(r, self._dtype_code))
        else:
            _core.assign(self, r)
        return self

    def _check_inplace_cast(self, name, dtype):
        if not numpy.can_cast(dtype, self.dtype, "same_kind"):
            raise TypeError(f"Cannot cast ufunc '{_NP_NAME.get(name, name)}' output from {dtype!r} to "
                            f"{self.dtype!r} with casting rule 'same_kind'")

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

    def __divmod__(self, o): return _math.divmod(self, o)
    def __rdivmod__(self, o): return _math.divmod(o, self)

    # ---- methods that are functions -----------------------------------------------------------------------
    # the reductions call _reductions' functions under their public wrappers (which hand NumPy arrays to NumPy)
    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reductions._reduce("sum", self, axis, dtype, out, keepdims)
    def cumsum(self, axis=None, dtype=None, out=None):
        """Cumulative sum along axis (None: of the flattened array); loom.cumsum."""
        from ._sorting import cumsum
        return cumsum(self, axis, dtype, out)
    def cumprod(self, axis=None, dtype=None, out=None):
        """Cumulative product along axis (None: of the flattened array); loom.cumprod."""
        from ._sorting import cumprod
        return cumprod(self, axis, dtype, out)
    def sort(self, axis=-1, kind=None, order=None):
        """Sorts in place along axis (loom.sort on the array's device, written back)."""
        from ._sorting import sort
        r = sort(self, axis, kind, order)
        _core.assign(self, r)
    def argsort(self, axis=-1, kind=None, order=None):
        """The indices that sort the array along axis (loom.argsort)."""
        from ._sorting import argsort
        return argsort(self, axis, kind, order)
    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """Partitions in place along axis (loom.partition's arrangement, written back)."""
        from ._sorting import partition
        _core.assign(self, partition(self, kth, axis, kind, order))
    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        """Indices that partition the array around kth along axis (loom.argpartition)."""
        from ._sorting import argpartition
        return argpartition(self, kth, axis, kind, order)
    def searchsorted(self, v, side="left", sorter=None):
        """Where the values v would be inserted to keep this sorted 1-d array sorted (loom.searchsorted)."""
        from ._sorting import searchsorted
        return searchsorted(self, v, side, sorter)
    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reductions._reduce("prod", self, axis, dtype, out, keepdims)
    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reductions.mean(self, axis, dtype, out, keepdims)
    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return _reductions.var(self, axis, dtype, out, ddof, keepdims)
    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return _reductions.std(self, axis, dtype, out, ddof, keepdims)
    def min(self, axis=None, out=None, keepdims=False):
        return _reductions._reduce("min", self, axis, None, out, keepdims)
    def max(self, axis=None, out=None, keepdims=False):
        return _reductions._reduce("max", self, axis, None, out, keepdims)
    def any(self, axis=None, out=None, keepdims=False):
        return _reductions._reduce("any", self, axis, None, out, keepdims)
    def all(self, axis=None, out=None, keepdims=False):
        return _reductions._reduce("all", self, axis, None, out, keepdims)
    def argmin(self, axis=None, out=None, keepdims=False, *, dtype=None):  # dtype=: CuPy's index dtype
        r = _reductions._arg("argmin", self, axis, out, keepdims)
        return r if dtype is None else _index_dtype(r, dtype, out)
    def argmax(self, axis=None, out=None, keepdims=False, *, dtype=None):
        r = _reductions._arg("argmax", self, axis, out, keepdims)
        return r if dtype is None else _index_dtype(r, dtype, out)
    def clip(self, min=None, max=None, out=None): return _math.clip(self, min, max, out)
    def round(self, decimals=0, out=None): return _math.around(self, decimals, out)
    def conj(self): return self.conjugate()

    def conjugate(self):
        """The complex conjugate; a real (or bool) array is itself, as NumPy's and CuPy's method."""
        return _complex.conjugate(self) if self.dtype.kind == "c" else self

    def dot(self, b, out=None): return _products.dot(self, b, out)
    def nonzero(self): return _indexing.nonzero(self)
    def take(self, indices, axis=None, out=None, mode="raise"):
        return _selection.take(self, indices, axis, out, mode)
    def diagonal(self, offset=0, axis1=0, axis2=1): return _selection.diagonal(self, offset, axis1, axis2)
    def put(self, indices, values, mode="raise"): return _selection.put(self, indices, values, mode)
    def choose(self, choices, out=None, mode="raise"): return _selection.choose(self, choices, out, mode)
    def compress(self, condition, axis=None, out=None): return _selection.compress(condition, self, axis, out)
    def ptp(self, axis=None, out=None, keepdims=False): return _statistics.ptp(self, axis, out, keepdims)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        """The sum along the diagonal (a strided view summed: one reduction)."""
        return _reductions.sum(_selection.diagonal(self, offset, axis1, axis2), -1, dtype, out)

    @property
    def flat(self):
        """A flat iterator over the elements in C order (numpy.flatiter): indexing reads a flattened copy
        (or view), assignment writes this array."""
        return _FlatIter(self)

    def byteswap(self, inplace=False):
        """The bytes of every element reversed (through NumPy on the host: loom has no byte-shuffle op)."""
        if inplace:
            _host_update(self, lambda h: h.byteswap(True))
            return self
        return _from_numpy(self._np().byteswap(), copy=True, device=self._device)


# The Python fallbacks of the C operator slots (_core.set_operators), forward and reflected per operator
# in the order of python/src/core.h's OPERATOR_* (the comparisons have no reflected method: Python swaps).
_OPERATOR_NAMES = (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "truediv"), ("floordiv", "floordiv"),
                   ("mod", "mod"), ("pow", "pow"), ("bitwise_and", "and"), ("bitwise_or", "or"),
                   ("bitwise_xor", "xor"), ("left_shift", "lshift"), ("right_shift", "rshift"))
_OPERATORS = tuple(m for name, d in _OPERATOR_NAMES
                   for m in (_operator(name, False, f"__{d}__"), _operator(name, True, f"__r{d}__")))
_OPERATORS += tuple(m for name in ("lt", "le", "gt", "ge") for m in (_operator(name, False, f"__{name}__"), None))
_OPERATORS += (lambda self, o: self._object_compare("eq", o), None,
               lambda self, o: self._object_compare("ne", o), None)
_OPERATORS += (lambda self: _math.negative(self), lambda self: _math.absolute(self), lambda self: _math.invert(self))
_core.set_operators(_OPERATORS)


def _index_dtype(r, dtype, out):
    """CuPy's dtype= of argmin / argmax: the indices in that integer dtype (with out=, out's dtype rules)."""
    if dtype is None or out is not None:
        return r
    d = _np_dtype_of(dtype)
    if d.kind not in "iu":
        raise TypeError(f"argmin/argmax: dtype must be an integer dtype, not {d}")
    return r.astype(d, copy=False)


# dtypes whose elements a memoryview reads as Python scalars (not float16, complex, bfloat16): _scalar
_MEMORYVIEW_CODES = frozenset(_CODE[numpy.dtype(n)] for n in ("bool", "int8", "int16", "int32", "int64", "uint8",
                                                             "uint16", "uint32", "uint64", "float32", "float64"))


class _NotAView(Exception):
    pass


# ---- glue for the array functions -------------------------------------------------------------------
def _operand(x):
    """An operand for _core: loom arrays and Python scalars as they are; NumPy scalars as strong
    constants; NumPy arrays and lists converted (copied)."""
    if isinstance(x, numpy.generic):  # before float: numpy.float64 is a float subclass
        if x.dtype not in _CODE:
            _code(x.dtype)
        v = x.item()
        return _core.const(int(v) if isinstance(v, bool) else v, _CODE[x.dtype])
    if isinstance(x, (ndarray, bool, int, float, complex)):
        return x
    if isinstance(x, (numpy.ndarray, list, tuple)):
        return _from_numpy(numpy.asarray(x), copy=True)
    if hasattr(x, "__cuda_array_interface__") or hasattr(x, "__dlpack__") or hasattr(x, "__cupy_get_ndarray__"):
        return _creation.asarray(x)
    if hasattr(x, "__array__"):  # array-likes (loom.poly1d, numpy.poly1d, ...), as NumPy converts them
        return _from_numpy(numpy.asarray(x), copy=True)
    raise TypeError(f"loom: unsupported operand type {type(x).__name__}")


_NP_NAME = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
            "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "eq": "equal",
            "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}


_COMPARISONS = frozenset(("eq", "ne", "lt", "le", "gt", "ge"))
_INT64_MIN, _UINT64_END = -(1 << 63), 1 << 64


def _python_int(name, x, other):
    """Python int operand x of the binary op `name` against operand `other`, made what loom's C layer
    takes (a weak scalar holds an int64) with NumPy 2's results: an int outside int64 is a strong uint64
    against a uint64 array when it fits, a float against a float array, and +-inf in a comparison with
    an integer (not bool) array (it lies beyond every value the array holds; for a bool array NumPy
raises OverflowError and so does loom, although CuPy answers); true division of an integer
    array divides by the int as a float64 (NumPy's integer true_divide loop is float64's, so uint8 / -2
    is -0.5 there). Else it is left as it is (loom raises NumPy's OverflowError)."""
    if type(x) is not int or not isinstance(other, ndarray):
        return x
    kind = other.dtype.kind
    if name == "truediv" and kind in "biu":
        return float(x)
    if _INT64_MIN <= x < -_INT64_MIN or name.startswith("logical_"):  # NumPy: a C long for logical ops
        return x
    if kind == "u" and other.dtype.itemsize == 8 and 0 <= x < _UINT64_END:
        return _core.const(x, _CODE[other.dtype])
    if kind == "f":  # NumPy converts the int to the array's float dtype (float16: 2**63 is inf)
        return _core.const(float(x), other._dtype_code) if not _is_bf16(other.dtype) else float(x)
    if kind == "c":  # and to a complex array's dtype
        return _core.const(complex(float(x)), other._dtype_code)
    if name in _COMPARISONS and kind in "iu":
        return numpy.inf if x > 0 else -numpy.inf
    loop = _int_loop_dtype(name, other.dtype)
    if loop is not None and loop.kind == "f" and loop in _CODE:  # a float loop (arctan2(int16, 2**70): float32's)
        return _core.const(float(x), _CODE[loop])
    return x


def _int_loop_dtype(name, dtype):
    """The dtype NumPy's loop of op `name` gives a Python int beside an array of `dtype` (None: unknown)."""
    f = getattr(numpy, _NP_NAME.get(name, "arctan2" if name == "atan2" else name), None)
    try:
        return f.resolve_dtypes((dtype, int, None))[1] if isinstance(f, numpy.ufunc) else None
    except (TypeError, ValueError, AttributeError):
        return None


def _binary_operands(name, a, b):
    """The operands of binary op `name` for _core (see _operand and _python_int)."""
    a, b = _operand(a), _operand(b)
    return _python_int(name, a, b), _python_int(name, b, a)


def _set_shape(a, shape):
    """a.shape = shape (the setter of _core.Array.shape): NumPy's in-place reshape, the same elements under
    the new shape (-1 inferred) without a copy; NumPy's ValueError / TypeError for a shape that does not
    fit, AttributeError where the memory would need a copy (an F-ordered or strided array)."""
    r = _manipulation.reshape(a, shape)
    if a._lazy:
        _core.become(a, r)
        return
    try:
        v = _manipulation.reshape(a, shape, copy=False)
    except ValueError:
        raise AttributeError("Incompatible shape for in-place modification. Use `.reshape()` to make a copy "
                             "with the desired shape.") from None
    _core.become(a, v)


def _dtype_stand_in(x):
    """A 0-d operand with x's dtype (Python scalars stay themselves: their weak promotion matters)."""
    if isinstance(x, ndarray):
        return _core.const(0, x._dtype_code)
    if isinstance(x, (numpy.ndarray, numpy.generic, list, tuple)):
        return numpy.zeros((), numpy.asarray(x).dtype)
    return x


def _binop(name, a, b):
    try:
        a, b = _binary_operands(name, a, b)
    except TypeError:
        return NotImplemented
    return _core.binary(_OPS[name], a, b)


def _finish(r, out, casting="same_kind"):
    """r, or r written into out (its dtype reached under the casting rule, NumPy's default same_kind)."""
    if out is None:
        return r
    if not isinstance(out, ndarray):
        raise TypeError(f"out must be a loom.ndarray, not {type(out).__name__}")
    if out.shape != r.shape:
        raise ValueError(f"output array has shape {out.shape}; the result has shape {r.shape}")
    if not numpy.can_cast(r.dtype, out.dtype, casting):
        raise TypeError(f"Cannot cast output from {r.dtype!r} to {out.dtype!r} with casting rule {casting!r}")
    if out._lazy:
        _core.become(out, _core.cast(r, out._dtype_code))
    else:
        _core.assign(out, r)
    return out


# NumPy's creation functions that take like= (NEP 35). None of them dispatches on its other arguments, so
# __array_function__ sees them only for numpy.<name>(..., like=<a loom array>); NumPy has taken like out
# of kwargs by then.
__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]


from ._host_fallback import (_LIKE_CREATORS, _create_like, _host, _to_host, _same_sequence, _from_host,  # noqa: E402,F401
                             _device_of_args, _host_call, _host_update, _host_function)
from . import _creation, _math, _reductions, _manipulation, _indexing, _complex  # noqa: E402 (they import ndarray)
from . import _selection, _statistics, _products  # noqa: E402
from ._flatiter import _FlatIter  # noqa: E402
