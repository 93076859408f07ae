"""_temporal.py: datetime64 and timedelta64 arrays, kept as int64 containers.

Approach. The C core has no time dtypes; a datetime64[unit] or timedelta64[unit] array is an int64 loom
array (the same memory, the same values as NumPy's: ticks since 1970-01-01, NaT is the smallest int64)
whose class says its dtype: one subclass of loom.ndarray per time dtype (made on first use, no extra slots,
so a plain int64 array is re-typed in place by __class__ assignment). _core refuses these subclasses as
operands of any computation (python/src/array.c container_array), so an operation not listed here raises
TypeError instead of computing with the int64 values as if they were numbers.

What these arrays do (the subset, each as NumPy does it):
  * creation: from NumPy arrays and scalars, lists (loom.array / asarray with a time dtype), the CUDA Array
    Interface (typestr '<M8[s]' ...), and empty / zeros of a time dtype; export: get(), asnumpy,
    __cuda_array_interface__ (typestr '<M8[s]' ...), repr, tolist, item, pickling. DLPack has no time
    type: __dlpack__ raises BufferError.
  * copy, astype (to another unit: floor division or multiplication as NumPy, NaT kept; to integer
    dtypes: the ticks), view (as int64 or another time dtype), reshape / transpose / ravel / squeeze /
    flatten / swapaxes / diagonal / T, indexing and assignment (values converted to the array's unit).
  * comparisons (== != < <= > >=; NaT compares unequal to everything), +, - (NumPy decides which kinds
    combine and the result's unit: datetime - datetime is timedelta, datetime + timedelta is datetime,
    Python and loom integers count in the other operand's unit), timedelta * int / float, timedelta / int /
    float (truncating, as NumPy), timedelta / timedelta (float64), // and % of timedeltas, -, +, abs;
    NaT propagates. loom.isnat.
  * not done: reductions, sorting, and the other ufuncs (TypeError from _core, naming the dtype); calendar
    conversions between years / months and the other units (NumPy's TypeError).
"""
import numpy

from . import _core
from ._common import _np_dtype_of, _CODE
from ._ndarray import ndarray

_I8 = numpy.dtype(numpy.int64)
_NAT = numpy.iinfo(numpy.int64).min  # NaT's int64 value
_CLASSES: dict = {}


def is_time(dtype):
    return isinstance(dtype, numpy.dtype) and dtype.kind in "Mm"


def check_time_dtype(d):
    """d as a native-order time dtype with a unit (ValueError for the generic unit: no values to hold)."""
    d = d.newbyteorder("=") if d.byteorder not in "=|" else d
    if numpy.datetime_data(d)[0] == "generic":
        raise TypeError(f"loom: {d} has no unit; give one, e.g. {d.str[1:3]}[s] or {d.str[1:3]}[ns]")
    return d


def _class_of(dtype):
    cls = _CLASSES.get(dtype)
    if cls is None:
        cls = type("ndarray", (_TimeArray,), {"__slots__": (), "_tdtype": dtype, "__module__": "loom",
                                              "__qualname__": f"ndarray[{dtype}]"})
        _CLASSES[dtype] = cls
    return cls


def wrap(ints, dtype):
    """The int64 loom array `ints` (a fresh object: views, results) re-typed as an array of time dtype."""
    if ints.dtype != _I8:
        raise TypeError(f"loom: a {dtype} array is made of int64 values, not {ints.dtype}")
    ints.__class__ = _class_of(check_time_dtype(_np_dtype_of(dtype)))
    return ints


def from_numpy(a, convert):
    """A loom time array from NumPy time array a; convert(int64 NumPy array) makes the loom int64 array."""
    d = check_time_dtype(a.dtype)
    if a.dtype != d:
        a = a.astype(d)
    return wrap(convert(a.view(_I8)), d)


def _retag(method):
    def m(self, *args, **kwargs):
        r = getattr(self._ints(), method)(*args, **kwargs)
        return wrap(r, self._tdtype) if isinstance(r, ndarray) else r
    m.__name__ = method
    m.__doc__ = f"NumPy's ndarray.{method}: the same on the int64 values, the time dtype kept."
    return m


# ---- unit conversion ----------------------------------------------------------------------------------
def _factor(src, dst):
    """(mul, div): one tick of src is mul/div ticks of dst (one of them 1); NumPy's TypeError for units
    with no fixed ratio (years and months against days and shorter)."""
    us, cs = numpy.datetime_data(src)
    ud, cd = numpy.datetime_data(dst)
    a = numpy.timedelta64(cs, us)
    b = numpy.timedelta64(cd, ud)
    try:
        ratio = a / b  # NumPy raises TypeError where the units have no fixed ratio
    except TypeError:
        raise TypeError(f"loom: cannot convert {src} values to {dst} (years and months have no fixed length "
                        "in days; convert them with NumPy)") from None
    if ratio >= 1:
        return int(a // b), 1
    return 1, int(b // a)


def _convert(ints, src, dst):
    """int64 ticks of src as ticks of dst: multiplied, or floor-divided (NumPy's casts), NaT kept."""
    if ints is None or numpy.datetime_data(src) == numpy.datetime_data(dst):
        return ints
    mul, div = _factor(src, dst)
    if isinstance(ints, (int, numpy.integer)):
        v = int(ints)
        return v if v == _NAT else (v * mul if div == 1 else v // div)
    from ._indexing import where
    v = ints * mul if div == 1 else ints // div
    return where(ints == _NAT, _NAT, v)


# ---- operands of the operators ------------------------------------------------------------------------
def _split(x):
    """(int64 values, dtype) of an operand: time arrays and NumPy time values -> their ticks; integers and
    floats (Python, NumPy, loom arrays) -> (x, their dtype). None where loom does not take x."""
    if isinstance(x, _TimeArray):
        return x._ints(), x._tdtype
    if isinstance(x, str):  # a date, as NumPy parses it beside a datetime64 array ('2020-01-01', 'NaT')
        x = numpy.datetime64(x)
    if isinstance(x, ndarray):
        return x, x.dtype
    if isinstance(x, (numpy.generic, numpy.ndarray)) and x.dtype.kind in "Mm":
        d = check_time_dtype(x.dtype)
        v = numpy.asarray(x).astype(d).view(_I8)
        if v.ndim == 0:
            return int(v), d
        from ._creation import asarray
        return asarray(v), d
    if isinstance(x, (bool, numpy.bool_)):
        return int(x), numpy.dtype(bool)
    if isinstance(x, (int, numpy.integer)):
        return int(x), _I8
    if isinstance(x, (float, numpy.floating)):
        return float(x), numpy.dtype(numpy.float64)
    if isinstance(x, (numpy.ndarray, list, tuple)):
        from ._creation import asarray
        a = asarray(x)
        return _split(a)
    return None


def _probe(name, da, db):
    """NumPy's result dtype of `a name b` for these dtypes (its TypeError where it has no such loop)."""
    fn = {"add": numpy.add, "sub": numpy.subtract, "mul": numpy.multiply, "truediv": numpy.true_divide,
          "floordiv": numpy.floor_divide, "mod": numpy.remainder}[name]
    return fn(numpy.empty(0, da), numpy.empty(0, db)).dtype


def _isnat(v):
    """Where v (int64 ticks: a loom array or a Python int) is NaT; a Python bool for an int."""
    return (v == _NAT) if not isinstance(v, (int, float)) else (isinstance(v, int) and v == _NAT)


def _nat_where(mask, v, dtype):
    from ._indexing import where
    if mask is False:
        return v
    return where(mask, _NAT if dtype.kind in "Mm" else (numpy.nan if dtype.kind == "f" else 0), v)


def _either(m1, m2):
    """m1 | m2 of NaT masks: loom bool arrays or Python bools (False: no NaT, nothing to mask)."""
    if m1 is False:
        return m2
    if m2 is False:
        return m1
    return m1 | m2


def _nat_mask(v, d):
    if d.kind not in "Mm":
        return False
    return _isnat(v)


def _result(v, dtype):
    from ._creation import asarray
    if not isinstance(v, ndarray):
        v = asarray(numpy.asarray(v, dtype=numpy.float64 if dtype.kind == "f" else _I8))
    if dtype.kind in "Mm":
        return wrap(v.astype(_I8, copy=False), dtype)
    return v.astype(dtype, copy=False)


def _trunc_div(a, b):
    """a / b rounded toward zero (int64 operands; b != 0)."""
    from ._indexing import where
    q = a // b
    return where(((q * b) != a) & ((a < 0) != (b < 0)), q + 1, q)


def _arith(name, a, b):
    """a name b for operands of which at least one is a time value (NotImplemented for other operands)."""
    sa, sb = _split(a), _split(b)
    if sa is None or sb is None:
        return NotImplemented
    (va, da), (vb, db) = sa, sb
    rd = _probe(name, da, db)
    from ._indexing import where
    if name in ("add", "sub"):
        if da.kind == "f" or db.kind == "f":
            raise TypeError(f"ufunc {name} cannot use operands with types {da!r} and {db!r}")
        unit = rd if rd.kind in "Mm" else None  # M - M: timedelta of the common unit
        cu = numpy.dtype(rd.str.replace("m8", "M8")) if (da.kind == "M" and db.kind == "M") else rd
        va2 = _convert(va, da, cu) if da.kind in "Mm" else va
        vb2 = _convert(vb, db, cu) if db.kind in "Mm" else vb
        v = va2 + vb2 if name == "add" else va2 - vb2
        mask = _either(_nat_mask(va, da), _nat_mask(vb, db))
        return _result(_nat_where(mask, v, unit), unit)
    if name == "mul":
        t, td, f, fd = (va, da, vb, db) if da.kind == "m" else (vb, db, va, da)
        mask = _isnat(t)
        if fd.kind == "f":
            p = t.astype(numpy.float64) * f if isinstance(t, ndarray) else float(t) * f
            bad = _either(mask, ~_finite(p))
            p = _to_int(p)
            return _result(_nat_where(bad, p, rd), rd)
        return _result(_nat_where(mask, t * f, rd), rd)
    if name in ("truediv", "floordiv", "mod") and da.kind == "m" and db.kind == "m":
        cu = rd if rd.kind == "m" else numpy.result_type(da, db)
        va2, vb2 = _convert(va, da, cu), _convert(vb, db, cu)
        mask = _either(_isnat(va), _isnat(vb))
        if name == "truediv":
            q = _to_float(va2) / _to_float(vb2)
            return _result(_nat_where(mask, q, rd), rd)
        zero = vb2 == 0
        safe = where(zero, 1, vb2) if isinstance(zero, ndarray) else (1 if zero else vb2)
        if name == "floordiv":  # NaT or a zero divisor: 0, as NumPy (with its RuntimeWarning)
            return _result(_nat_where(_either(mask, zero), va2 // safe, rd), rd)
        return _result(_nat_where(_either(mask, zero), va2 % safe, rd), rd)
    if name in ("truediv", "floordiv") and da.kind == "m" and db.kind in "biuf":
        mask = _isnat(va)
        if db.kind == "f":
            q = _to_float(va) / vb
            bad = _either(mask, ~_finite(q))
            return _result(_nat_where(bad, _to_int(q), rd), rd)
        zero = vb == 0
        safe = where(zero, 1, vb) if isinstance(zero, ndarray) else (1 if zero else vb)
        return _result(_nat_where(_either(mask, zero), _trunc_div(va, safe) if isinstance(va, ndarray) or
                                  isinstance(safe, ndarray) else _py_trunc(va, safe), rd), rd)
    raise TypeError(f"loom: {name} of {da} and {db} is not supported (loom's datetime arithmetic: "
                    "+ - of datetimes and timedeltas, timedelta * / // % numbers and timedeltas)")


def _py_trunc(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _to_float(v):
    return v.astype(numpy.float64) if isinstance(v, ndarray) else float(v)


def _to_int(v):
    if isinstance(v, ndarray):
        from ._indexing import where
        from ._math import isfinite
        return where(isfinite(v), v, 0.0).astype(_I8)
    return int(v) if v == v and abs(v) != float("inf") else 0


def _finite(v):
    if isinstance(v, ndarray):
        from ._math import isfinite
        return isfinite(v)
    return v == v and abs(v) != float("inf")


_COMPARE = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__"}


def _compare(name, a, b):
    sa, sb = _split(a), _split(b)
    if sa is None or sb is None:
        return NotImplemented
    (va, da), (vb, db) = sa, sb
    if da.kind not in "Mm" or db.kind not in "Mm" or da.kind != db.kind:
        if name in ("eq", "ne"):  # NumPy: values of different kinds are never equal
            from ._creation import full
            shape = numpy.broadcast_shapes(_shape(va), _shape(vb))
            return full(shape, name == "ne", dtype=bool)
        raise TypeError(f"'{name}' of {da} and {db}: loom compares datetimes with datetimes and timedeltas "
                        "with timedeltas, as NumPy")
    cu = numpy.promote_types(da, db)
    va2, vb2 = _convert(va, da, cu), _convert(vb, db, cu)
    r = getattr(va2, _COMPARE[name])(vb2) if isinstance(va2, ndarray) else getattr(vb2, _COMPARE[_SWAP[name]])(va2)
    mask = _either(_isnat(va), _isnat(vb))
    if mask is False:
        return r
    from ._indexing import where
    return where(mask, name == "ne", r)


_SWAP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _shape(v):
    return v.shape if isinstance(v, ndarray) else ()


def _op(name, reflected=False):
    if name in _COMPARE:
        def m(self, other):
            return _compare(name, self, other)
    elif reflected:
        def m(self, other):
            return _arith(name, other, self)
    else:
        def m(self, other):
            return _arith(name, self, other)
    return m


class _TimeArray(ndarray):
    """An array of datetime64 or timedelta64 values, kept as int64 (module docstring)."""

    __slots__ = ()
    _tdtype = None

    @property
    def dtype(self):
        return self._tdtype

    def _ints(self):
        """The int64 values: a plain loom view of the same memory."""
        v = _core.view(self, 0, self.shape, self.strides, _CODE[_I8])
        v._base = self.base if self.base is not None else self
        return v

    def _np(self):
        return self._ints()._np().view(self._tdtype)

    def __dlpack__(self, *args, **kwargs):
        raise BufferError(f"DLPack has no {self._tdtype.name} type; export the int64 values (a.view('i8')) "
                          "or use __cuda_array_interface__")

    def view(self, dtype=None, type=None):
        if type is not None:
            raise TypeError("view(type=...): loom arrays have no subclasses")
        d = self._tdtype if dtype is None else _np_dtype_of(dtype)
        if is_time(d):
            return wrap(self._ints().view(_I8), check_time_dtype(d))
        return self._ints().view(d)

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        d = _np_dtype_of(dtype)
        if d == self._tdtype:
            if not copy:
                from . import _manipulation
                if _manipulation._satisfies(self, order):
                    return self
            return wrap(self._ints().astype(_I8, order=order, copy=True), d)
        if is_time(d):
            if d.kind != self._tdtype.kind:
                raise TypeError(f"Cannot cast {self._tdtype} to {d}: loom converts between units of one kind")
            d = check_time_dtype(d)
            return wrap(_convert(self._ints(), self._tdtype, d).astype(_I8, order=order, copy=True), d)
        if d.kind in "iu":
            return self._ints().astype(d, order=order, copy=True)
        raise TypeError(f"loom: astype from {self._tdtype} to {d} is not supported (to integers: the ticks; "
                        "to another unit of the same kind)")

    def copy(self, order="C"):
        return wrap(self._ints().copy(order), self._tdtype)

    reshape = _retag("reshape")
    transpose = _retag("transpose")
    swapaxes = _retag("swapaxes")
    ravel = _retag("ravel")
    flatten = _retag("flatten")
    squeeze = _retag("squeeze")
    diagonal = _retag("diagonal")
    __getitem__ = _retag("__getitem__")

    def __setitem__(self, key, value):
        if isinstance(value, _TimeArray):
            if value._tdtype.kind != self._tdtype.kind:
                raise TypeError(f"Cannot assign {value._tdtype} values to a {self._tdtype} array")
            v = _convert(value._ints(), value._tdtype, self._tdtype)
        elif isinstance(value, ndarray):
            if value.dtype.kind not in "biu":
                raise TypeError(f"Cannot assign {value.dtype} values to a {self._tdtype} array")
            v = value
        else:  # NumPy converts: strings, NumPy time values of any unit, integers, NaT
            v = numpy.asarray(value).astype(self._tdtype, casting="same_kind" if not isinstance(
                value, (int, list, tuple, str)) else "unsafe").view(_I8)
            v = int(v) if v.ndim == 0 else v
        self._ints()[key] = v

    def fill(self, value):
        self[...] = value

    __eq__ = _op("eq")
    __ne__ = _op("ne")
    __lt__ = _op("lt")
    __le__ = _op("le")
    __gt__ = _op("gt")
    __ge__ = _op("ge")
    __hash__ = None
    __add__ = _op("add")
    __radd__ = _op("add", True)
    __sub__ = _op("sub")
    __rsub__ = _op("sub", True)
    __mul__ = _op("mul")
    __rmul__ = _op("mul", True)
    __truediv__ = _op("truediv")
    __rtruediv__ = _op("truediv", True)
    __floordiv__ = _op("floordiv")
    __rfloordiv__ = _op("floordiv", True)
    __mod__ = _op("mod")
    __rmod__ = _op("mod", True)

    def _inplace(self, name, other):
        r = _arith(name, self, other)
        if r is NotImplemented:
            return NotImplemented
        if r.dtype.kind != self._tdtype.kind:  # NumPy's same_kind rule for an in-place result
            raise TypeError(f"Cannot cast ufunc '{name}' output from {r.dtype} to {self._tdtype} in place")
        self[...] = r
        return self

    def __iadd__(self, other):  # type: ignore[misc]  # in place: same_kind, as NumPy
        return self._inplace("add", other)

    def __isub__(self, other):  # type: ignore[misc]  # in place: same_kind, as NumPy
        return self._inplace("sub", other)

    def __imul__(self, other):  # type: ignore[misc]  # in place: same_kind, as NumPy
        return self._inplace("mul", other)

    def __neg__(self):
        if self._tdtype.kind != "m":
            raise TypeError(f"loom: negative of {self._tdtype} is not defined (NumPy's ufunc negative has no loop)")
        i = self._ints()
        return wrap(_nat_where(_isnat(i), -i, self._tdtype), self._tdtype)

    def __pos__(self):
        if self._tdtype.kind != "m":
            raise TypeError(f"loom: positive of {self._tdtype} is not defined")
        return self.copy()

    def __abs__(self):
        if self._tdtype.kind != "m":
            raise TypeError(f"loom: absolute of {self._tdtype} is not defined")
        i = self._ints()
        from ._indexing import where
        return wrap(where(i < 0, _nat_where(_isnat(i), -i, self._tdtype), i), self._tdtype)


def isnat(x):
    """NumPy's isnat: True where a datetime64 or timedelta64 array holds NaT (TypeError for other dtypes)."""
    if isinstance(x, _TimeArray):
        return x._ints() == _NAT
    if isinstance(x, ndarray) or not (isinstance(x, (numpy.generic, numpy.ndarray)) and x.dtype.kind in "Mm"):
        raise TypeError("ufunc 'isnat' is only defined for numpy.datetime64 and numpy.timedelta64.")
    from ._creation import asarray
    return isnat(asarray(x))


__all__ = ["isnat"]
