"""_indexing.py: a[key] and a[key] = value (basic indexing makes views; advanced indexing goes through
NumPy, via the host for a GPU array), indexing of traced values as graph nodes, where and nonzero.
"""
import builtins
import operator

import numpy

from . import _core
from ._common import _from_numpy, _check_scalar_store
from ._ndarray import ndarray, _operand
from ._creation import asarray


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


def _getitem(self, key):
    """a[key]: basic indexing makes a view (a graph node for a tracer); advanced indexing a copy."""
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


def _setitem(self, key, value):
    """a[key] = value: writes through a view (basic) or through NumPy (advanced; via the host on a GPU)."""
    if self._tracer:
        _setitem_traced(self, key, value)
        return
    raw = value
    seq = isinstance(value, (list, tuple))  # NumPy converts these to the array's dtype (below), not alone
    if not seq:
        value = _operand(value)
    if type(value) is int and self.dtype.kind in "fc" and not -2**63 <= value < 2**64:
        value = float(value)  # NumPy converts a Python int to the float dtype (2**70 into float64)
    elif type(value) is int and self.dtype.kind == "b":
        value = value != 0  # into a bool array NumPy stores any Python int's truth value (2**64: True)
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
    target = self if key is Ellipsis or (isinstance(key, tuple) and key == ()) else self[key]
    _check_scalar_store(raw, self.dtype)  # after the index (NumPy's IndexError comes first)
    if seq or (isinstance(value, ndarray) and value.ndim > 0):
        if _selects_one_element(key, self.ndim):
            value = _element_value(raw, value, self.dtype)
        elif seq:
            value = _sequence_value(raw, target, self)
    extra = value.ndim - target.ndim if isinstance(value, ndarray) else 0
    if extra > 0 and all(n == 1 for n in value.shape[:extra]):  # NumPy drops leading length-1 axes
        value = value.reshape(value.shape[extra:])
    if self.dtype.kind != "c":  # complex into a real array: NumPy's rules
        if isinstance(value, complex):
            raise TypeError("float() argument must be a string or a real number, not 'complex'")
        if isinstance(value, ndarray) and value.dtype.kind == "c":
            import warnings
            from ._ndarray import _ComplexWarning
            warnings.warn("Casting complex values to real discards the imaginary part", _ComplexWarning,
                          stacklevel=3)
    _core.assign(target, value)


def _selects_one_element(key, ndim):
    """True for a key of one integer per axis (a[i, j] of a 2-d array; () of a 0-d one): NumPy stores
    into that element as a scalar, not through a 0-d view (a[..., j] or a[i, ...] are views)."""
    k = key if isinstance(key, tuple) else (key,)
    if len(k) != ndim:
        return False
    for e in k:
        if e is None or e is Ellipsis or isinstance(e, (slice, bool, numpy.bool_)):
            return False
        try:
            operator.index(e)
        except TypeError:
            return False
    return True


def _sequence_value(raw, target, a):
    """A list or tuple stored through a view, as NumPy reads it: at most as deep as the view (ValueError,
    before any conversion), its elements converted to a's dtype as Python scalars: OverflowError for an int
    out of range (300 into int8; never a wrapped 44), ValueError for NaN into ints, TypeError for complex
    into reals, any int's truth into bool (an array value would be cast instead: -1 into uint8 is 255)."""
    depth = numpy.asarray(raw, dtype=object).ndim
    if depth > target.ndim:
        raise ValueError("setting an array element with a sequence. The requested array would exceed the "
                         f"maximum number of dimension of {target.ndim}.")
    return _from_numpy(numpy.asarray(raw, dtype=a.dtype), copy=True, device=a._device)


def _element_value(raw, value, dtype):
    """The value NumPy stores when `raw` (converted: `value`, of one or more dimensions) is stored into one
    element, or NumPy's error. NumPy converts it as a scalar of the dtype: an array or sequence is
    ValueError 'setting an array element with a sequence' (TypeError into complex dtypes), except into
    bool, which takes its truth (a size-1 array, a non-empty list; a larger array's truth is the ValueError).
    NumPy 2.4 and 2.5 share that code; rather than copy the rule, the installed NumPy decides it on a 0-d
    array of the dtype: given NumPy data or a sequence, it stores that and its result is the value; given a
    loom array, it stores an array of the same shape and dtype (zero strides: no copy) and, accepted,
    loom's own store of the one element follows (loom's cast to bool is the same truth)."""
    import warnings
    if isinstance(raw, (numpy.ndarray, list, tuple)):
        probe = raw
    else:
        probe = numpy.broadcast_to(numpy.zeros((), dtype=value.dtype), value.shape)
    slot = numpy.zeros((), dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # only the outcome counts here; loom's store warns as NumPy's
        slot[()] = probe
    if probe is raw:
        return _operand(slot[()])
    return value.reshape(()) if value.size == 1 else value


def _setitem_traced(self, key, value):
    """a[...] = value or a[:] = value on a @loom.fuse tracer: the whole of a takes value's broadcast,
    cast (NumPy's unsafe setitem cast) to a's dtype; the fused call writes it into the caller's array.
    Assignment to a part of a traced value is refused."""
    k = key if isinstance(key, tuple) else (key,)
    whole = builtins.sum(e is Ellipsis for e in k) <= 1 and builtins.sum(e is not Ellipsis for e in k) <= self.ndim \
        and builtins.all(e is Ellipsis or (isinstance(e, slice) and e == slice(None)) for e in k)
    if not whole:
        raise TypeError("@loom.fuse: item assignment to a part of a traced value is not supported (only "
                        "x[...] = v and x[:] = v); return a new array (e.g. loom.where) instead")
    value = _operand(value)
    if isinstance(value, ndarray):
        extra = value.ndim - self.ndim
        if extra > 0 and builtins.all(n == 1 for n in value.shape[:extra]):  # NumPy drops leading 1-axes
            value = value.reshape(value.shape[extra:])
    v = _core.where(True, value, self)  # value, broadcast, as a node of the trace graph
    if v.shape != self.shape:
        raise ValueError(f"could not broadcast input array from shape {value.shape} into shape {self.shape}")
    _core.become(self, _core.cast(v, self._dtype_code))


def where(condition, x=None, y=None):
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    c, x, y = _operand(condition), _operand(x), _operand(y)
    if not builtins.any(isinstance(v, ndarray) for v in (c, x, y)):
        c = asarray(c)
    if all(type(v) in (bool, int) for v in (x, y)):  # Python ints (and a bool): int64 (NEP 50), so each must fit it
        for v in (x, y):
            if not -2**63 <= v < 2**63:
                raise OverflowError(f"Python integer {v} out of bounds for int64")
    else:  # beside a Python float or a float array, a Python int past int64 is a float there (NumPy's)
        def floaty(o):
            return type(o) in (float, complex) or (isinstance(o, ndarray) and o.dtype.kind in "fc")
        x, y = (float(v) if type(v) is int and not -2**63 <= v < 2**63 and floaty(o) else v
                for v, o in ((x, y), (y, x)))
    # a Python int beside an integer or bool operand must fit its dtype (int64 beside a bool), checked
    # before the shapes as NumPy 2.5 does: ir_elem's validation (ir/graph_elementwise.c) raises that
    return _core.where(c, x, y)


def nonzero(a):
    return tuple(_from_numpy(i, copy=True) for i in numpy.nonzero(asarray(a)._np()))


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
