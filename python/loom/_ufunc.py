"""_ufunc.py: loom.ufunc, NumPy's universal-function object over loom's elementwise functions.

A ufunc wraps one elementwise implementation (a function of nin operands that builds graph nodes and
takes dtype=/casting= itself or not) and adds NumPy's calling convention and methods:
  __call__   positional or keyword out= (an array, or a tuple of nout), where= (positions where the
             mask is False keep out's values), dtype= / signature= (NumPy's loop selection: dtype= fixes
             the outputs' dtype, the loop is the one NumPy's resolve_dtypes picks for the operands under
             casting=, its absence a TypeError as in NumPy; operands are cast to the loop's inputs and
             the result is the loop's output dtype), casting=, order=;
  reduce     add/multiply/maximum/minimum/logical_and/logical_or run as loom's fused reductions; any
             other binary ufunc reduces through NumPy on a host copy (the README lists it);
  outer      the operands broadcast against each other, on the device (one fused elementwise kernel);
  accumulate add/multiply/maximum/minimum run as loom's scan kernels (loom_scan); other ufuncs through
             NumPy on a host copy;
  reduceat   through NumPy on the host;
  at         add.at / subtract.at of an integer index array on a GPU array: one scatter-add on the device;
             the rest through NumPy on a host copy; `at` writes the caller's array in place as NumPy does.
nin, nout, nargs, types (NumPy's loops restricted to loom's dtypes), identity and signature (None:
loom has no generalized ufuncs) are NumPy's.
"""
import inspect

import numpy

from . import _core
from ._common import _np_dtype_of, _CODE, _code, _contiguous
from ._ndarray import ndarray, _operand, _finish

_NO_VALUE = object()
_COMPARISONS = frozenset(("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"))
_SCANS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}  # accumulate: loom_scan
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "amax", "minimum": "amin",
               "logical_and": "all", "logical_or": "any"}


def _loom_char(c):
    try:
        return numpy.dtype(c) in _CODE
    except TypeError:
        return False


def _np_ufunc(name):
    f = getattr(numpy, name, None)
    return f if isinstance(f, numpy.ufunc) else None


class ufunc:
    """A loom universal function (numpy.ufunc's interface): elementwise over broadcast operands, lazy
    and fusable like every loom operation."""

    def __init__(self, name, nin, nout, impl, doc=None):
        self.__name__ = name
        self.nin, self.nout, self.nargs = nin, nout, nin + nout
        self._nin_one_out = nin if nout == 1 else -1  # the argument count of the common call (one output)
        self._impl = impl
        params = inspect.signature(impl).parameters
        self._takes_dtype = "dtype" in params
        self._takes_casting = "casting" in params
        self._casting_default = params["casting"].default if self._takes_casting else None
        npf = _np_ufunc(name)
        self._numpy = npf
        self.identity = npf.identity if npf is not None else None
        self.types = [t for t in (npf.types if npf is not None else ())
                      if all(_loom_char(c) for c in t.replace("->", ""))]
        self.ntypes = len(self.types)
        self.signature = None
        self.__doc__ = doc or impl.__doc__ or f"loom.{name}: elementwise, like numpy.{name}"

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"

    # ---- call ---------------------------------------------------------------------------------------
    def _outs(self, args, out):
        """The out= argument as a tuple of nout entries (None: a new array)."""
        if len(args) > self.nin:
            if out is not None:
                raise TypeError(f"{self.__name__}: cannot specify 'out' as both a positional and keyword argument")
            out = args[self.nin:]
            if len(out) > self.nout:
                raise TypeError(f"{self.__name__}() takes from {self.nin} to {self.nargs} positional arguments but "
                                f"{len(args)} were given")
            out = out + (None,) * (self.nout - len(out))  # NumPy: the outputs not given positionally are new
        if out is None:
            return (None,) * self.nout
        if not isinstance(out, tuple):
            out = (out,)
        if len(out) != self.nout:
            raise ValueError(f"{self.__name__}: out must have {self.nout} entries (got {len(out)})")
        for o in out:
            if o is not None and not isinstance(o, ndarray):
                raise TypeError(f"return arrays must be of ArrayType (loom.ndarray), not {type(o).__name__}")
        return out

    def __call__(self, *args, out=None, where=True, dtype=None, casting="same_kind", order="K", subok=True,
                 signature=None, **kwargs):
        if (out is None and dtype is None and where is True and signature is None and not kwargs
                and len(args) == self._nin_one_out and order == "K"):  # the common call, first
            # casting= passed on only when it is not impl's own default (the common call: one call less work)
            res = self._impl(*args, casting=casting) if self._takes_casting and casting is not self._casting_default \
                else self._impl(*args)
            if not isinstance(res, tuple) and (getattr(res, "ndim", 0) <= 1 or not _all_fortran(args)):
                return res
        if kwargs:
            raise TypeError(f"{self.__name__}() got an unexpected keyword argument {next(iter(kwargs))!r}")
        if len(args) < self.nin:
            raise TypeError(f"{self.__name__}() takes from {self.nin} to {self.nargs} positional arguments but "
                            f"{len(args)} were given")
        outs = self._outs(args, out)
        args = args[:self.nin]
        kw = {}
        loop = None
        if dtype is not None or signature is not None:
            sig = self._signature(dtype, signature)
            args = tuple(_operand(x) for x in args)
            loop = self._loop(args, sig, casting)
            if loop is not None:  # NumPy's loop: operands cast to its inputs, the result to its outputs
                args = _loop_operands(args, loop[:self.nin])
            else:  # NumPy cannot tell (no NumPy ufunc of this name): the loop runs in the output dtype
                dtype = next(d for d in sig[::-1] if d is not None)
                if self._takes_dtype:
                    kw["dtype"] = dtype
                else:
                    args = tuple(_cast_operand(self.__name__, i, x, dtype, casting) for i, x in enumerate(args))
                loop = (None,) * self.nin + (_np_dtype_of(dtype),) * self.nout
        if self._takes_casting:
            kw["casting"] = casting
        res = self._impl(*args, **kw)
        res = res if isinstance(res, tuple) else (res,)
        if loop is not None:
            res = tuple(r if r.dtype == d else _core.cast(r, _code(d)) for r, d in zip(res, loop[self.nin:]))
        if where is not True:
            mask = _operand(where)
            res = tuple(_core.where(mask, r, o if o is not None else r) for r, o in zip(res, outs))
        if order in ("F", "f") or (order in ("A", "a", "K", "k") and _all_fortran(args)):
            from ._manipulation import _copy
            res = tuple(_copy(r, r._dtype_code, "F") if r.ndim > 1 and o is None else r for r, o in zip(res, outs))
        res = tuple(_finish(r, o, casting) for r, o in zip(res, outs))
        return res[0] if self.nout == 1 else res

    def _signature(self, dtype, signature):
        """The call's signature as a tuple of nargs dtypes or None (NumPy's: dtype= fixes the outputs;
        signature= a tuple, a 'ii->i' string or, as dtype=, one dtype)."""
        if dtype is not None and signature is not None:
            raise TypeError(f"{self.__name__}: cannot specify both 'signature' and 'dtype'")
        if dtype is not None:
            return (None,) * self.nin + (_np_dtype_of(dtype),) * self.nout
        if isinstance(signature, str) and "->" in signature:
            ins, outs = signature.replace(",", "").split("->")
            signature = tuple(ins) + tuple(outs)
        if not isinstance(signature, (tuple, list)):
            return (None,) * self.nin + (numpy.dtype(signature),) * self.nout
        if len(signature) != self.nargs:
            raise ValueError(f"{self.__name__}: a type-tuple must be specified of length {self.nargs} (got "
                             f"{len(signature)})")
        return tuple(None if d is None else numpy.dtype(d) for d in signature)

    def _loop(self, args, sig, casting):
        """The dtypes of NumPy's loop for operands `args` under signature `sig` and `casting` (inputs then
        outputs), as numpy.ufunc.resolve_dtypes finds it: TypeError where NumPy has no such loop
        (equal(..., dtype=float32): comparisons only have bool outputs) or cannot cast an operand to it.
        Python scalars are NEP 50's weak scalars there. None when NumPy has no ufunc of this name."""
        npf = self._numpy
        if npf is None or not hasattr(npf, "resolve_dtypes"):
            return None
        ops = tuple(x.dtype if isinstance(x, ndarray) else
                    numpy.dtype(bool) if isinstance(x, bool) else type(x) for x in args)
        outs = (None,) * self.nout
        try:  # NumPy's order: the loop (or no loop), then Python ints converted to it, then the casting rule
            loop = npf.resolve_dtypes(ops + outs, signature=sig, casting="unsafe")
            # a comparison of an integer array with a Python int past its range is answered (NumPy 2 compares
            # them exactly); beside a bool array the int goes through a C long as everywhere else
            exact_cmp = self.__name__ in _COMPARISONS and any(
                isinstance(y, ndarray) and y.dtype.kind in "iu" for y in args)
            for x, d in zip(args, loop):
                if isinstance(x, int) and not isinstance(x, bool) and not exact_cmp:
                    _python_int_into(x, d)
            npf.resolve_dtypes(ops + outs, signature=sig, casting=casting)
        except TypeError as e:  # numpy's UFuncTypeError / no-loop error: the same class, loom's function name
            raise TypeError(f"loom.{self.__name__}: {e}") from None
        if not all(d in _CODE for d in loop):
            return None
        return loop

    # ---- methods ------------------------------------------------------------------------------------
    def _need_binary(self, method):
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary functions")

    def _host_numpy(self, method):
        if self._numpy is None:
            raise NotImplementedError(f"loom.{self.__name__}.{method}: not available (NumPy has no such ufunc)")
        return getattr(self._numpy, method)

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
        """Reduces `array` along `axis` (None: all axes) by repeated application, like numpy.ufunc.reduce.
        add, multiply, maximum, minimum, logical_and and logical_or are loom's fused reductions; the
        others compute through NumPy on a host copy."""
        from . import _reductions
        from ._creation import asarray, full
        self._need_binary("reduce")
        out = out[0] if isinstance(out, tuple) else out
        a = asarray(array)
        name = _REDUCTIONS.get(self.__name__)
        if where is not True:
            fill = initial if initial is not _NO_VALUE else self.identity
            if fill is None:
                raise ValueError(f"reduction operation '{self.__name__}' does not have an identity, so to use a "
                                 "where mask one has to specify 'initial'")
            a = _core.where(_operand(where), a, _core.cast(_operand(fill), a._dtype_code)
                            if isinstance(_operand(fill), ndarray) else fill)
        if name is None:
            kw = {} if initial is _NO_VALUE else {"initial": initial}
            h = self._host_numpy("reduce")(a._np(), axis=axis, dtype=dtype, keepdims=keepdims, **kw)
            return _finish(asarray(h), out)
        axes = tuple(range(a.ndim)) if axis is None else axis
        axes = axes if isinstance(axes, tuple) else (axes,)
        from ._common import _norm_axis
        axes = tuple(_norm_axis(x, a.ndim) for x in axes)
        count = 1
        for x in axes:
            count *= a.shape[x]
        fn = getattr(_reductions, name)
        if name in ("amax", "amin"):
            if count == 0 and initial is _NO_VALUE:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
            if count == 0:
                shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape)) if keepdims else \
                    tuple(n for i, n in enumerate(a.shape) if i not in axes)
                return _finish(full(shape, initial, dtype or a.dtype), out)
            r = fn(a, axes, None, keepdims)
            if dtype is not None:
                r = _core.cast(r, _code(dtype))
        elif name in ("all", "any"):
            r = fn(a, axes, None, keepdims)
        else:
            r = fn(a, axes, dtype, None, keepdims)
        if initial is not _NO_VALUE:
            r = _core.cast(self(r, initial), r._dtype_code)
        return _finish(r, out)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        """The running reduction along `axis`, like numpy.ufunc.accumulate: add, multiply, maximum and
        minimum run as loom's scan kernels on the array's device (loom_scan, fused with the expression
        they scan); other ufuncs (and bool maximum/minimum) through NumPy on a host copy."""
        from ._creation import asarray
        self._need_binary("accumulate")
        out = out[0] if isinstance(out, tuple) else out
        a = asarray(array)
        scan = _SCANS.get(self.__name__)
        if scan and axis is not None and a.ndim > 0 and not (scan in ("max", "min") and a.dtype.kind in "bc"):
            from ._common import _norm_axis
            from ._sorting import _scan
            return _finish(_scan(scan, a, _norm_axis(axis, a.ndim), dtype), out)
        h = self._host_numpy("accumulate")(a._np(), axis=axis, dtype=dtype)
        return _finish(_device_result(h, a), out)

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        """Reductions over the slices indices[i]:indices[i+1] along `axis`, like numpy.ufunc.reduceat
        (through NumPy on a host copy)."""
        from ._creation import asarray, asnumpy
        self._need_binary("reduceat")
        out = out[0] if isinstance(out, tuple) else out
        a = asarray(array)
        h = self._host_numpy("reduceat")(a._np(), asnumpy(indices), axis=axis, dtype=dtype)
        return _finish(_device_result(h, a), out)

    def outer(self, A, B, **kwargs):
        """op(a, b) for every pair of elements: result shape A.shape + B.shape, like numpy.ufunc.outer
        (one elementwise kernel over broadcast views)."""
        from ._creation import asarray
        self._need_binary("outer")
        a, b = asarray(A), asarray(B)
        return self(a.reshape(a.shape + (1,) * b.ndim), b, **kwargs)

    def at(self, a, indices, b=None):
        """Unbuffered in-place a[indices] = op(a[indices], b): repeated indices apply repeatedly, like
        numpy.ufunc.at. add / subtract of an index array into a GPU array: one scatter-add on the device
        (_added_at_on_device); otherwise through NumPy on the host (on a host copy for a GPU array, written
        back)."""
        from ._creation import asnumpy
        from ._ndarray import _host_update
        if not isinstance(a, ndarray):
            raise TypeError(f"{self.__name__}.at: the first argument must be a loom array, not {type(a).__name__}")
        if (b is None) != (self.nin == 1):
            raise ValueError(f"{self.__name__}.at: {'no' if self.nin == 1 else 'a'} second operand expected")
        if a._on_gpu and self.__name__ in ("add", "subtract") and _added_at_on_device(a, indices, b,
                                                                                     self.__name__ == "subtract"):
            return
        key = tuple(_host_index(k) for k in indices) if isinstance(indices, tuple) else _host_index(indices)
        args = () if b is None else (asnumpy(b) if isinstance(b, ndarray) else b,)
        fn = self._host_numpy("at")
        _host_update(a, lambda h: fn(h, key, *args))


_AT_DTYPES = frozenset(numpy.dtype(t) for t in ("int32", "int64", "uint32", "uint64", "float32", "float64"))


def _added_at_on_device(a, indices, b, negate):
    """add.at / subtract.at(a, indices, b) as one scatter-add on a's device (atomic adds: repeated indices
    add repeatedly; floats add in an unspecified order, as CuPy's and torch's index_add_): for an integer
    index array along a's first axis of a C-contiguous a of a dtype with device atomics, b broadcast to
    a[indices]. NumPy's IndexError for an index outside [-n, n) from one small read. False: anything else
    (NumPy on a host copy then, with its errors)."""
    from ._common import _from_numpy
    if isinstance(indices, tuple):
        if len(indices) != 1:
            return False
        indices = indices[0]
    if a.dtype not in _AT_DTYPES or a.ndim == 0 or not a.flags.c_contiguous or isinstance(indices, (slice, int)):
        return False
    if isinstance(indices, ndarray):
        idx = indices if indices._device == a._device else _core.to_device(indices, *a._device)
    else:
        h = numpy.asarray(indices)
        if h.dtype.kind not in "iu":
            return False
        idx = _from_numpy(h, copy=True, device=a._device)
    if idx.dtype.kind not in "iu" or idx.dtype == numpy.uint64:
        return False
    if isinstance(b, ndarray):
        vals, bdt = (b if b._device == a._device else _core.to_device(b, *a._device)), b.dtype
    elif isinstance(b, (bool, int, float, complex)):  # a Python scalar is weak (NEP 50)
        vals, bdt = None, numpy.result_type(a.dtype, b)
    else:
        h = numpy.asarray(b)
        vals, bdt = _from_numpy(h, copy=True, device=a._device), h.dtype
    if not numpy.can_cast(numpy.result_type(a.dtype, bdt), a.dtype, "same_kind"):
        return False  # NumPy's casting error
    if vals is None:  # the scalar as a 0-d array of a's dtype on a's device (NumPy's OverflowError past it)
        vals = _from_numpy(numpy.asarray(b, dtype=a.dtype), copy=True, device=a._device)
    vals = _core.cast(vals, a._dtype_code)
    n = a.shape[0]
    idx = _core.cast(idx, _code("int64"))
    if idx.size:
        from ._order_stats import _min_max
        lo, hi = (int(v) for v in _min_max(idx))
        bad = lo if lo < -n else (hi if hi >= n else None)
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for axis 0 with size {n}")
    idx = _core.where(_core.binary(_core.ops["lt"], idx, 0), _core.binary(_core.ops["add"], idx, n), idx)
    if idx.size == 0:
        return True
    row = a.size // n
    if a.ndim > 1:  # a's rows: each index names row consecutive elements
        offs = _core.iota((row,), idx)
        idx = _core.binary(_core.ops["add"], _core.binary(_core.ops["mul"], idx.reshape(idx.shape + (1,)), row), offs)
    if negate:
        vals = _core.unary(_core.ops["neg"], vals)
    from ._manipulation import broadcast_to
    vals = broadcast_to(vals, tuple(idx.shape[:-1]) + a.shape[1:]).reshape(idx.shape) if a.ndim > 1 else \
        broadcast_to(vals, idx.shape)
    flat = a.reshape(a.size)
    _core.assign(a, _core.scatter(flat, idx, vals, 1).reshape(a.shape))  # op 1: add
    return True


def _host_index(k):
    return k.get() if isinstance(k, ndarray) else k


def _device_result(h, like):
    from ._common import _from_numpy
    return _from_numpy(numpy.asarray(h), copy=True, device=like._device)


def _all_fortran(args):
    """Whether the array operands of more than one dimension are all F- and not C-contiguous (and there is
    one): order='K' then gives an F-ordered result, as NumPy's."""
    found = False
    for x in args:
        if isinstance(x, ndarray) and x.ndim > 1:
            if x._lazy:  # a pending value (a tracer too) is C-contiguous: its geometry need not be read
                return False
            shape, strides, itemsize = x.shape, x.strides, x.itemsize
            if _contiguous(shape, strides, itemsize, "C") or not _contiguous(shape, strides, itemsize, "F"):
                return False
            found = True
    return found


def _python_int_into(v, d):
    """NumPy's conversion of a Python int operand to loop dtype d: OverflowError where it cannot hold it
    (a bool loop takes it through a C long first)."""
    if d.kind in "iu":
        info = numpy.iinfo(d)
        if not info.min <= v <= info.max:
            raise OverflowError(f"Python integer {v} out of bounds for {d}")
    elif d.kind == "b" and not -2**63 <= v < 2**63:
        raise OverflowError("Python int too large to convert to C long")


def _loop_operands(args, dtypes):
    """The operands cast to the loop's input dtypes; Python scalars stay weak beside an array (NEP 50: they
    take its dtype), alone they become 0-d arrays of the loop's dtype."""
    if not any(isinstance(x, ndarray) for x in args):
        from ._creation import asarray
        args = (asarray(args[0], dtypes[0]),) + tuple(args[1:])
    return tuple(_core.cast(x, _code(d)) if isinstance(x, ndarray) and x.dtype != d else x
                 for x, d in zip(args, dtypes))


def _cast_operand(name, i, x, dtype, casting):
    """Operand i of ufunc `name` cast to the loop dtype (Python scalars stay weak)."""
    x = _operand(x)
    if not isinstance(x, ndarray):
        return x
    dt = _np_dtype_of(dtype)
    if x.dtype != dt:
        if not numpy.can_cast(x.dtype, dt, casting):
            raise TypeError(f"Cannot cast ufunc '{name}' input {i} from {x.dtype!r} to {dt!r} with casting rule "
                            f"{casting!r}")
        x = _core.cast(x, _code(dt))
    return x
