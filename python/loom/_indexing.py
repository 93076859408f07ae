"""_indexing.py: a[key] and a[key] = value, indexing of traced values as graph nodes, where and nonzero.

Basic indexing makes views. Advanced indexing (integer and boolean arrays) is lazy and on the device:
a gather node (_core.gather, IR_GATHER) reads a at computed positions inside the fused kernel of its
consumers (`a[idx] * 2 + b` is one kernel), and an assignment is a scatter node (_core.scatter) that
writes a's new value (kernels: a's old value, then the values at their flat positions). Integer indices
are checked as NumPy does (IndexError naming the first bad one found): host index arrays (lists, NumPy)
on the host for free, device ones by one small fused min/max reduction read at the call (a sync, no
transfer of the indices). Repeated indices in an assignment store one of their values (which one is
unspecified: NumPy leaves it undefined for fancy assignment too).

Integer-array indexing of an evaluated host array by host index arrays (no masks) is NumPy's own
(_host_gather: an advanced index always copies, so NumPy's new result is adopted zero-copy, ~2 us against
the graph's ~15 of Python); a lone integer index array on any other array (a GPU or pending one) takes
one gather with no general key analysis (_take_first).

Boolean masks (a[mask], nonzero, where(c)) are a stream compaction (_compact): one kernel computes the
mask from its producers (`x > 0` is never stored), scans it (the scan kernel; on GPUs the single-pass
decoupled look-back scan) and writes each kept value at its rank, scattering into an array of the full
size n (passes/fuse_gather.c joins those scatter stores to the scan kernel, so the ranks never reach
memory; the scatters put into unspecified arrays, so no kernel fills them first); the same kernel writes
the last rank, the count, into a one-element array, read back once for the result's shape. Allocating n
up front (rather than counting first) keeps it to one pass over the data and one sync; the result is the first `count` elements of that array, a view when it keeps at least
a quarter of it, else a copy (so a sparse result does not hold the whole buffer). a[mask] with a mask of
a's whole shape compacts a's values directly; other masks compact the flat positions, which a gather
then reads. LOOM_GPU_COMPACT=0 (read at each call, for A/B runs) takes the former path: the scan of the
mask stored, its last element read, then a scatter of positions and a gather.
"""
import builtins
import operator
import os

import numpy

from . import _core
from ._common import _from_numpy, _check_scalar_store, _OPS, _code, _INTEGER_CODES
from ._ndarray import ndarray, _operand
from ._creation import asarray, _adopt, _host_np


def _is_advanced(key):
    k = key if isinstance(key, tuple) else (key,)
    for e in k:
        if isinstance(e, (ndarray, numpy.ndarray, list)):
            return True
        if isinstance(e, (bool, numpy.bool_)):
            return True
    return False


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
    """a[key]: basic indexing makes a view (a graph node for a tracer); advanced indexing a copy. Inside
    @loom.fuse integer-array indexing is a gather of the trace whose traced indices wrap around when out of
    bounds, as CuPy's integer-array indexing does (a trace cannot read indices to raise NumPy's IndexError;
    indices known on the host are still checked); a boolean mask makes a shape that depends on the data
    and cannot be traced."""
    if _is_advanced(key):
        if self._tracer:
            k = key if isinstance(key, tuple) else (key,)
            if builtins.any(isinstance(e, (bool, numpy.bool_)) or (isinstance(e, (ndarray, numpy.ndarray)) and
                            e.dtype == numpy.bool_) or (isinstance(e, list) and builtins.any(isinstance(v, (bool, numpy.bool_))
                                                                                           for v in e)) for e in k):
                raise TypeError("@loom.fuse: boolean-mask indexing makes a shape that depends on the values and "
                                "cannot be traced: use loom.where(mask, x, 0) inside the fused function, or index "
                                "outside it")
            return _advanced_index(self, key, traced=True)
        r = _host_gather(self, key)
        if r is None and type(key) is ndarray and self.ndim and key.dtype.kind in "iu" and not key._tracer:
            r = _take_first(self, key)
        return _advanced_getitem(self, key) if r is None else r
    if self._tracer:
        return _lazy_index(self, key)
    k = key if isinstance(key, tuple) else (key,)
    if not builtins.any(e is Ellipsis for e in k):
        k = k + (Ellipsis,)
    return self._numpy_view(lambda a: a[k])


def _host_index(e):
    """e, an element of an advanced key, as NumPy indexes with it on the host: ints, slices, None and
    Ellipsis as they are, integer index arrays (loom ones evaluated and in host memory, NumPy ones, lists
    of ints) as NumPy arrays; None for anything else (booleans: loom's masks follow the array API where
    an empty mask selects nothing; GPU or pending arrays; other objects)."""
    t = type(e)
    if t is int or t is slice or e is None or e is Ellipsis:
        return e
    if t is ndarray:
        if e._lazy or e._device[0] != 0 or e._dtype_code not in _INTEGER_CODES:
            return None
        return _host_np(e)
    if t is list:
        try:
            e = numpy.asarray(e)
        except (TypeError, ValueError):  # loom arrays refusing conversion, ragged lists: loom's own path
            return None
        t = numpy.ndarray
    if t is numpy.ndarray and e.dtype.kind in "iu":
        return e
    return None


def _host_gather(a, key):
    """a[key] by NumPy for an evaluated host array a and an advanced key of integer index arrays with
    ints, slices, None and Ellipsis (_host_index), else None. An advanced index always copies, so NumPy's
    result is new memory, wrapped zero-copy; NumPy's semantics and errors (IndexError for an index out of
    bounds, shape mismatches) are loom's. ~2 us where the gather graph costs ~15 in Python."""
    if a._lazy or a._device[0] != 0 or type(a) is not ndarray:
        return None
    if type(key) is tuple:
        hk = tuple(_host_index(e) for e in key)
        if builtins.any(h is None and e is not None for h, e in zip(hk, key)):
            return None
    else:
        hk = _host_index(key)
        if hk is None:
            return None
    return _adopt(_host_np(a)[hk], a._device)


def _take_first(a, idx):
    """a[idx] for a loom integer array idx alone (a of at least one dimension, neither traced): what
    _advanced_index builds for that key (the range check, negative indices from the end, one gather along
    axis 0) without its general key analysis (~12 us of Python a call)."""
    n = a.shape[0]
    _check_indices([(idx, None, n, 0)])
    i = idx if idx._dtype_code == _I64_CODE else _core.cast(idx, _I64_CODE)
    if idx.dtype.kind == "i":
        i = _core.where(_b("lt", i, 0), _b("add", i, n), i)
    return _take(a, i, 0, "clip")


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
        if isinstance(value, ndarray) and value._tracer:
            raise TypeError("@loom.fuse values cannot be stored")
        if seq:
            value = _from_numpy(numpy.asarray(raw, dtype=self.dtype), copy=True, device=self._device)
        elif not isinstance(raw, (ndarray, numpy.ndarray)):  # a scalar: NumPy's fancy store decides (300 -> int8 raises,
            slot = numpy.zeros(1, dtype=self.dtype)  # numpy.int64(300) wraps to 44)
            slot[[0]] = raw
            value = _operand(slot[0])
        _advanced_setitem(self, key, value)
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
    if type(condition) is ndarray and type(x) is ndarray and type(y) is ndarray:  # three arrays: no operand
        return _core.where(condition, x, y)                                      # to convert or check
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
    """The indices of the non-zero elements, one int64 array per axis (numpy.nonzero): the flat positions
    (a compaction of the point indices by a != 0, on the device; one small read of the count) unravelled
    per axis (lazy: fused into the consumers of each axis's array)."""
    a = asarray(a)
    if a.ndim == 0:
        numpy.nonzero(numpy.zeros(()))  # NumPy 2's error for 0-d arrays
        return nonzero(a.reshape(1))
    flat = _flat_positions(a)
    if a.ndim == 1:
        return (flat,)
    out, step = [], 1
    for n in reversed(a.shape):
        q = _b("floordiv", flat, step) if step > 1 else flat
        out.append(_b("mod", q, n))
        step *= n
    return tuple(reversed(out))


# ---- gathers and scatters -----------------------------------------------------------------------------
_MODES = {"raise": 0, "wrap": 1, "clip": 2}
_I64_CODE = _code("int64")


def _b(name, x, y):
    return _core.binary(_OPS[name], x, y)


def _i64():
    return _code("int64")


def _mode_code(mode):
    if mode not in _MODES:
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    return _MODES[mode]


def _index_arg(idx, device):
    """(loom int64-or-int array, host copy or None) of an index argument: a loom array stays on its device,
    lists / NumPy arrays / ints are converted (their host copy kept: range checks cost nothing)."""
    if isinstance(idx, ndarray):
        if idx.dtype.kind not in "iub":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        return idx, None
    h = numpy.asarray(idx)
    if h.dtype.kind == "f" and h.size == 0 or h.dtype.kind == "b":
        h = h.astype(numpy.intp)
    if h.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return _from_numpy(h, copy=True, device=device), h


def _bad_index_error(bad, axis, n):
    return IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")


_HOST_CHECK_MAX = 1 << 16  # index arrays up to this size in host memory are checked by NumPy in place


def _check_indices(items):
    """NumPy's IndexError for the first (idx, host, n, axis) whose index leaves [-n, n): host arrays are
    checked on the host; device arrays by one fused min/max reduction each, read together (one sync). A
    small evaluated index array in host memory is read in place (an evaluation costs ~20 us; M[i, i] of
    1024 indices took 57 us against NumPy's 4)."""
    pending = []
    for idx, h, n, axis in items:
        if h is None and 0 < idx.size <= _HOST_CHECK_MAX and not (idx._on_gpu or idx._lazy or idx._tracer):
            h = idx._np()
        if h is not None:
            if h.size:
                bad = h[(h < -n) | (h >= n)]
                if bad.size:
                    raise _bad_index_error(int(bad.flat[0]), axis, n)
        elif idx.size:
            pending.append((idx.min(), idx.max(), n, axis))
    if not pending:
        return
    _core.eval(*[v for p in pending for v in p[:2]])
    for lo, hi, n, axis in pending:
        lo, hi = int(lo), int(hi)
        if hi >= n:
            raise _bad_index_error(hi, axis, n)
        if lo < -n:
            raise _bad_index_error(lo, axis, n)


def _reshape_lazy(x, shape):
    shape = tuple(shape)
    return x if x.shape == shape else _core.movement(0, x, shape, None, None)


def _take(a, idx, axis, mode):
    """numpy.take(a, idx, axis) with idx a loom integer array already checked (mode 'raise'): one gather
    node of shape a.shape[:axis] + idx.shape + a.shape[axis + 1:]. The data (not the result) is reshaped
    so the index fills the axis, so the gather stays fusable with its consumers."""
    pre, n, post = a.shape[:axis], a.shape[axis], a.shape[axis + 1:]
    k = idx.ndim
    if n == 0 and idx.size and numpy.prod(pre + post, dtype=numpy.int64):
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if k == 0:  # one position: a gather of one, the axis then dropped
        r = _core.gather(a, _reshape_lazy(idx, (1,) * a.ndim), axis, _mode_code(mode))
        return _core.movement(5, r, [axis], None, None)
    data = _reshape_lazy(a, pre + (1,) * (k - 1) + (n,) + post)
    ix = _reshape_lazy(idx, (1,) * len(pre) + idx.shape + (1,) * len(post))
    return _core.gather(data, ix, axis + k - 1, _mode_code(mode))


def _normalize_axis(axis, ndim):
    try:
        i = operator.index(axis)
    except TypeError:
        raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer") from None
    if not -ndim <= i < ndim:
        raise numpy.exceptions.AxisError(i, ndim)
    return i + ndim if i < 0 else i


def _take_api(a, indices, axis=None, mode="raise"):
    """numpy.take on the device: a lazy gather (no host round trip but the range check of device indices
    in mode 'raise', one small reduction read at the call)."""
    a = asarray(a)
    code = _mode_code(mode)
    if axis is None:
        a, axis = _reshape_lazy(a, (a.size,)), 0
    else:
        axis = _normalize_axis(axis, a.ndim)
    idx, h = _index_arg(indices, a._device)
    if code == 0:
        _check_indices([(idx, h, a.shape[axis], axis)])
    return _take(a, idx, axis, mode)


def _take_along_axis_api(arr, indices, axis=-1):
    """numpy.take_along_axis on the device: one gather node (indices broadcast with arr off the axis)."""
    arr = asarray(arr)
    idx, h = _index_arg(indices, arr._device)
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = _reshape_lazy(arr, (arr.size,)), 0
    elif idx.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = _normalize_axis(axis, arr.ndim)
    _check_indices([(idx, h, arr.shape[axis], axis)])
    for i, (u, v) in enumerate(zip(arr.shape, idx.shape)):
        if i != axis and u != v and u != 1 and v != 1:
            raise ValueError(f"shape mismatch: indexing arrays could not be broadcast together with shapes "
                             f"{arr.shape} {idx.shape}")
    return _core.gather(arr, idx, axis, 0)


def _compact_on():
    """LOOM_GPU_COMPACT: "0" takes the former mask path (stored scan, then scatter and gather)."""
    return os.environ.get("LOOM_GPU_COMPACT", "1") != "0"


_SCATTER_PUT = 2  # loom_scatter's op 2: sets into an unspecified base (no kernel fills it first)


def _compact_graph(m, values):
    """The lazy nodes of _compact: the full-size scatters of values (one per value) and the one-element
    count, all stored by one scan kernel (fuse_gather.c). The scatters put into unspecified bases (op 2):
    only the first `count` elements of a full array are ever read, and the count's slot is always
    written, so nothing fills them first (one pass over the data in all)."""
    n = m.shape[0]
    acc = _code("int32") if n < 2**31 else _i64()
    ranks = _core.scan(0, _core.cast(m, acc), 0, acc)
    dest = _core.where(m, _b("sub", ranks, 1), -1)  # -1: not kept (IR_SCATTER writes nothing)
    fulls = [_core.scatter(_core.movement(2, _core.const(0, v._dtype_code), (n,), None, None), dest, v, _SCATTER_PUT)
             for v in values]
    last = _b("sub", _core.iota((n,)), n - 1)  # 0 at the last point only: the count's slot
    count_box = _core.scatter(_core.movement(2, _core.const(0, acc), (1,), None, None), last, ranks, _SCATTER_PUT)
    return fulls, count_box


# the host's row compaction (_compact_rows): at least this many points, rows of at least _ROWS_MIN_POINTS
_ROWS_MIN_N = 1 << 16
_ROWS_MIN_POINTS = 1 << 14


def _host_rows(m):
    """The rows _compact_rows cuts a host mask of n points into (four per host thread, as the host runtime
    cuts O ranges, so a busy core holds up less; each of at least _ROWS_MIN_POINTS), or 0: a GPU mask, a
    small one, one thread, or LOOM_HOST_COMPACT_ROWS=0 (A/B)."""
    n = m.shape[0]
    if m._device[0] != 0 or n < _ROWS_MIN_N or os.environ.get("LOOM_HOST_COMPACT_ROWS", "1") == "0":
        return 0
    threads = _core.config_info()["num_threads"]
    r = builtins.min(4 * threads, n // _ROWS_MIN_POINTS)
    return r if r > 1 and threads > 1 else 0


def _compact_rows(m, values, rows):
    """_compact on the host over `rows` rows of n // rows points (the cores scan rows at once; one row of
    n would take one core): a first evaluation counts each row's kept points (a row reduction) and
    computes the tail's (the last n % rows < rows points) mask and values; the exclusive sum of the
    counts is each row's first slot; a second evaluation, one scan kernel over the rows, scatters each kept
    value of row r to its slot + rank - 1 in an array of exactly the count (no full-size array, no
    copy), and the tail's kept values are written after them on the host. Two reads of the mask's
    producers against one, for the cores and exact sizes."""
    n = m.shape[0]
    width = n // rows
    main = rows * width
    i64 = _i64()

    def as_rows(a):  # a's first rows * width points as the rows
        return _reshape_lazy(a[:main] if main < n else a, (rows, width))

    grid = as_rows(m)
    counts = _core.reduce(0, grid, (1,), False, i64)
    first = [counts]
    if main < n:
        first += [m[main:]] + [v[main:] for v in values]
    _core.eval(*first)
    c = counts._np()
    slots = numpy.zeros((rows, 1), numpy.int64)
    numpy.cumsum(c[:-1], out=slots[1:, 0])
    kept = int(c.sum())
    tails = []
    if main < n:
        tmask = first[1]._np()
        tails = [t._np()[tmask] for t in first[2:]]
    total = kept + (len(tails[0]) if tails else 0)
    acc = _code("int32") if width < 2**31 else i64
    rank = _core.scan(0, _core.cast(grid, acc), 1, acc)
    base_slot = _from_numpy(slots, copy=False, device=m._device)
    dest = _core.where(grid, _b("add", _core.cast(_b("sub", rank, 1), i64), base_slot), -1)
    outs = []
    for v in values:
        base = _core.movement(2, _core.const(0, v._dtype_code), (total,), None, None)
        outs.append(_core.scatter(base, dest, as_rows(v), _SCATTER_PUT))
    _core.eval(*outs)
    for o, t in zip(outs, tails):
        if len(t):
            o._np()[kept:] = t  # the result is new: no other array sees this write
    return outs


def _compact(m, values):
    """Stream compaction: for a lazy bool mask m of shape (n,), n >= 1, and lazy arrays `values` of shape
    (n,), the arrays of the values at m's true points, in order (shape (count,)). One evaluation: a scan
    kernel over m (int32 ranks while n fits) whose stores scatter each kept value to its rank - 1 in an
    array of n elements and the last rank (the count) into a one-element array; then one read of the
    count. The results are the first count elements: views, or copies when under a quarter is kept.
    Large host masks take _compact_rows instead (every core; exact sizes)."""
    rows = _host_rows(m)
    if rows:
        return _compact_rows(m, values, rows)
    fulls, count_box = _compact_graph(m, values)
    n = m.shape[0]
    _core.eval(*fulls, count_box)
    count = int(count_box[0])
    return [f[:count] if 4 * count >= n else f[:count].copy() for f in fulls]


def _flat_positions(a):
    """The flat (row-major) positions of a's non-zero elements, int64, on the device: a compaction of the
    point indices (_compact), or with LOOM_GPU_COMPACT=0 ranks by an inclusive scan of the mask stored,
    the count read back (one small sync), then a scatter of each true point's index to its rank (the
    others are skipped: index -1)."""
    m = a if a.dtype == numpy.bool_ else _b("ne", a, 0)
    m = _reshape_lazy(m, (a.size,))
    if a.size == 0:
        return _from_numpy(numpy.zeros(0, numpy.int64), copy=True, device=a._device)
    if _compact_on():
        return _compact(m, [_core.iota((a.size,))])[0]
    ranks = _core.scan(0, _core.cast(m, _i64()), 0, -1)
    count = int(ranks[-1])
    base = _core.movement(2, _core.const(0, _i64()), (count,), None, None)
    dest = _core.where(m, _b("sub", ranks, 1), -1)
    return _core.scatter(base, dest, _core.iota((a.size,)), 0)


def _expand_key(key, a, device):
    """The key as a list of ('basic', slice or None) / ('int', i) / ('arr', loom int array, host copy or
    None, span) items with the Ellipsis expanded: a boolean array of k dims becomes one 'arr' item of the
    flat positions of its true elements spanning k dims; a 0-d boolean adds a unit axis indexed by [0] or
    []."""
    k = key if isinstance(key, tuple) else (key,)
    items, nreal, nell = [], 0, 0
    for e in k:
        if e is Ellipsis:
            nell += 1
            items.append(("ell",))
        elif e is None or isinstance(e, slice):
            items.append(("basic", e))
            nreal += e is not None
        elif isinstance(e, (bool, numpy.bool_)) or (isinstance(e, (ndarray, numpy.ndarray)) and e.dtype == numpy.bool_) \
                or (isinstance(e, list) and len(e) and builtins.all(isinstance(v, (bool, numpy.bool_)) for v in e)):
            m = e if isinstance(e, ndarray) else numpy.asarray(e)
            if m.ndim == 0:
                items.append(("basic", None))  # a new unit axis, indexed by [0] (True) or [] (False)
                items.append(("bool0", _from_numpy(numpy.arange(int(bool(m))), copy=True, device=device)))
                continue
            items.append(("mask", m))
            nreal += m.ndim
        elif isinstance(e, (ndarray, numpy.ndarray, list, tuple)):
            idx, h = _index_arg(e, device)
            items.append(("arr", idx, h, 1, False))
            nreal += 1
        else:
            try:
                items.append(("int", operator.index(e)))
            except TypeError:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer "
                                 "or boolean arrays are valid indices") from None
            nreal += 1
    if nell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if nreal > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but {nreal} were indexed")
    out, dim = [], 0
    for it in items:
        if it[0] == "ell" or it[0] == "bool0" or (it[0] == "basic" and it[1] is None):
            if it[0] == "ell":
                out.extend([("basic", slice(None))] * (a.ndim - nreal))
                dim += a.ndim - nreal
            else:
                out.append(it)
            continue
        if it[0] == "mask":
            m = it[1]
            shape = a.shape[dim:dim + m.ndim]
            bad = [i for i in range(m.ndim) if m.shape[i] not in (shape[i], 0)]
            if bad:
                raise IndexError(f"boolean index did not match indexed array along axis {dim + bad[0]}; size of axis "
                                 f"is {shape[bad[0]]} but size of corresponding boolean axis is {m.shape[bad[0]]}")
            if tuple(m.shape) != tuple(shape):
                # The array API standard (2024.12, "Boolean array indexing"): each mask dimension equals the
                # array's "or is 0"; a mask of size 0 selects nothing (NumPy raises IndexError instead)
                flat = _from_numpy(numpy.zeros(0, numpy.int64), copy=True, device=device)
            elif isinstance(m, ndarray):
                flat = _flat_positions(m)
            else:
                flat = _from_numpy(numpy.flatnonzero(m), copy=True, device=device)
            out.append(("arr", flat, None, m.ndim, True))
            dim += m.ndim
            continue
        out.append(it)
        dim += it[3] if it[0] == "arr" else 1
    return out + [("basic", slice(None))] * (a.ndim - dim)


def _advanced(a, key, device, traced=False):
    """(view, [(first view dim, span, loom index, may be negative)], broadcast shape) for an advanced key:
    the view applies the key's slices and new axes; integers become 0-d index arrays; every index is
    range-checked (IndexError), but traced ones (traced: inside @loom.fuse, where they wrap)."""
    items = _expand_key(key, a, device)
    view_key, advs, checks, vdim, adim = [], [], [], 0, 0
    for it in items:
        if it[0] == "bool0":  # indexes the unit axis the None before it made
            advs.append((vdim - 1, 1, it[1], False))
            continue
        if it[0] == "basic":
            view_key.append(it[1])
            if it[1] is not None:
                adim += 1
            vdim += 1
            continue
        if it[0] == "int":
            idx, h = _index_arg(it[1], device)
            it = ("arr", idx, h, 1, False)
        _, idx, h, span, ok = it
        if not ok and not (traced and idx._tracer):
            checks.append((idx, h, a.shape[adim], adim))
        advs.append((vdim, span, idx, not ok and idx.dtype.kind == "i"))
        view_key.extend([slice(None)] * span)
        vdim += span
        adim += span
    _check_indices(checks)
    try:
        bshape = numpy.broadcast_shapes(*[x.shape for _, _, x, _ in advs])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes " +
                         "".join(f"{x.shape} " for _, _, x, _ in advs)) from None  # NumPy's trailing space
    view = _lazy_index(a, tuple(view_key)) if a._lazy else a[tuple(view_key)]
    return view, advs, bshape


def _advanced_index(a, key, device=None, traced=False):
    """a[key] for an advanced key: one gather of the view along its advanced dims merged into one (moved
    first when they are not adjacent, as NumPy orders the result), at the flat index they make. traced
    (inside @loom.fuse): each traced index wraps modulo its axis' length before the merge."""
    view, advs, bshape = _advanced(a, key, a._device if device is None else device, traced)
    first, last = advs[0][0], advs[-1][0] + advs[-1][1]
    adjacent = builtins.all(advs[i][0] + advs[i][1] == advs[i + 1][0] for i in range(len(advs) - 1))
    dims = [d for v, s, _, _ in advs for d in range(v, v + s)]
    lin, mult = None, 1
    for v, s, idx, neg in reversed(advs):
        ext = int(numpy.prod(view.shape[v:v + s], dtype=numpy.int64))
        i = idx if idx.dtype == numpy.int64 else _core.cast(idx, _i64())
        if traced and idx._tracer:   # CuPy's wrap: i mod ext (Python's modulo: negatives from the end too)
            i = _b("mod", i, ext) if ext else i
        elif neg:
            i = _core.where(_b("lt", i, 0), _b("add", i, ext), i)
        term = i if mult == 1 else _b("mul", i, mult)
        lin = term if lin is None else _b("add", term, lin)
        mult *= ext
    if lin.shape != bshape:
        lin = _core.movement(2, lin, bshape, None, None)
    if adjacent:
        data = _reshape_lazy(view, view.shape[:first] + (mult,) + view.shape[last:])
        axis = first
    else:
        rest = [d for d in range(view.ndim) if d not in dims]
        moved = _core.movement(1, view, dims + rest, None, None)
        data = _reshape_lazy(moved, (mult,) + tuple(view.shape[d] for d in rest))
        axis = 0
    return _take(data, lin, axis, "clip")


def _whole_mask(a, key):
    """The loom bool array of a's whole shape that key is (alone or as a one-element tuple), else None."""
    k = key[0] if isinstance(key, tuple) and len(key) == 1 else key
    if isinstance(k, ndarray) and k.dtype == numpy.bool_ and k.ndim >= 1 and tuple(k.shape) == tuple(a.shape):
        return k
    return None


def _advanced_getitem(a, key):
    m = _whole_mask(a, key)
    if m is not None and _compact_on():  # a[mask]: a's values compacted directly (no positions, no gather)
        if a.size == 0:
            return _reshape_lazy(a, (0,))
        return _compact(_reshape_lazy(m, (a.size,)), [_reshape_lazy(a, (a.size,))])[0]
    return _advanced_index(a, key)


def _scatter_into(a, flat, values):
    """a.flat[flat] = values (broadcast to flat's shape) in place: a scatter node written over a (a lazy
    a simply becomes it)."""
    if a._tracer:
        raise TypeError("@loom.fuse: in-place scatter into a traced value is not supported")
    r = _core.scatter(a, flat, values, 0)
    if a._lazy:
        _core.become(a, r)
        return
    if not a.flags.c_contiguous:  # the scatter writes C-ordered memory: a new array, then copied over
        _core.eval(r)
    _core.assign(a, r)


def _advanced_setitem(a, key, value):
    """a[key] = value for an advanced key: the flat positions are the same key applied to an iota of a's
    shape (gathers of an iota compute positions, no memory), then one scatter."""
    k = key if isinstance(key, tuple) else (key,)
    if len(k) == 1 and isinstance(k[0], ndarray) and k[0].dtype == numpy.bool_ and k[0].shape == a.shape and \
            (not isinstance(value, ndarray) or value.size == 1):
        v = value.reshape(()) if isinstance(value, ndarray) else value
        if a._lazy:
            _core.become(a, _core.cast(_core.where(k[0], v, a), a._dtype_code))
        else:
            _core.assign(a, _core.where(k[0], v, a))
        return
    flat = _advanced_index(_core.iota(a.shape), key, a._device)
    vshape = value.shape if isinstance(value, ndarray) else ()
    try:
        numpy.broadcast_shapes(vshape, flat.shape)
        ok = len(vshape) <= len(flat.shape) or builtins.all(n == 1 for n in vshape[:len(vshape) - len(flat.shape)])
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"shape mismatch: value array of shape {vshape} could not be broadcast to indexing "
                         f"result of shape {flat.shape}")
    if isinstance(value, ndarray) and value.ndim > flat.ndim:
        value = value.reshape(value.shape[value.ndim - flat.ndim:])
    _scatter_into(a, flat, value)


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
