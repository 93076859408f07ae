"""_selection.py: choosing elements (take, choose, select, diagonal, compress, extract) and placing them
(put, place, putmask, fill_diagonal), with the index helpers (diag_indices, tril_indices, ...).

On the device, as loom graphs: diagonal (a strided view), select and choose (chains of where: one
fused kernel), take, take_along_axis, compress, extract (gather nodes, fused with their consumers: see
_indexing.py), put, place, putmask, put_along_axis (scatter nodes, or a where over a gather of the cycled
values), flatnonzero and argwhere (a scan of the mask and a scatter; one small read of the count).
Through NumPy on the host: fill_diagonal, ravel_multi_index, ix_, mask_indices; isin, the triangle indices
and unravel_index on the arrays' device (_index_funcs.py).
"""
import builtins
import functools

import numpy

from . import _core
from ._common import _OPS, _code, _from_numpy, _norm_axis
from ._ndarray import ndarray, _operand, _finish, _host_function, _host_update
from ._creation import asarray
from . import _indexing
from ._index_funcs import *  # noqa: F401,F403  (isin, the triangle indices, unravel_index: on the device)
from ._index_funcs import __all__ as _index_funcs_all


def _b(name, x, y):
    return _core.binary(_OPS[name], x, y)


def _np_or_value(v):
    return v._np() if isinstance(v, ndarray) else v


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal (offset above/below the main one) of the axis1 x axis2 planes, as a view of a's
    memory with the diagonal as the last axis (numpy.diagonal; NumPy's view is read-only, loom's is
    writable)."""
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    if a._tracer:
        raise TypeError("@loom.fuse: diagonal of a traced value is not supported")
    return a._numpy_view(lambda v: v.diagonal(offset, axis1, axis2))


@functools.lru_cache(maxsize=None)
def _take_out_dtype_ok(a_dtype, out_dtype):
    """Whether numpy.take of an a_dtype array accepts an out of out_dtype: the rule changed between NumPy
    releases (2.4 wants out's dtype to cast safely to a's, 2.5 takes more), so the installed NumPy decides."""
    try:
        numpy.take(numpy.zeros(1, a_dtype), [0], out=numpy.zeros(1, out_dtype))
    except TypeError:
        return False
    return True


def take(a, indices, axis=None, out=None, mode="raise"):
    """The elements of a at `indices` along axis (of the flattened array for axis=None), like numpy.take
    (mode 'raise', 'wrap' or 'clip'): a lazy gather on the device, fused with its consumers. Mode 'raise'
    checks device indices by one small min/max reduction read at the call. A 0-d a takes as its one-element
    flattening (axis 0 or -1, as NumPy). out= must have the result's shape and a dtype the installed
    NumPy's take accepts for a's dtype, checked before the indices."""
    a = asarray(a)
    if a.ndim == 0 and axis is not None:
        _norm_axis(axis, 1)
        axis = None
    if out is None:
        return _indexing._take_api(a, indices, axis, mode)
    ishape = tuple(indices.shape) if isinstance(indices, ndarray) else numpy.shape(indices)
    ax = None if axis is None else _norm_axis(axis, a.ndim)
    want = ishape if ax is None else a.shape[:ax] + ishape + a.shape[ax + 1:]
    if isinstance(out, ndarray) and tuple(out.shape) != want:
        raise ValueError(f"take: out has shape {tuple(out.shape)}, the result has shape {want}")
    if isinstance(out, ndarray) and not _take_out_dtype_ok(a.dtype, out.dtype):
        raise TypeError(f"take: out's dtype {out.dtype} is refused for an array of {a.dtype} by the installed NumPy's "
                        "rule (NumPy 2.4: out's dtype must cast safely to the array's; 2.5 is laxer)")
    return _finish(_indexing._take_api(a, indices, axis, mode), out, casting="unsafe")


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] for every i with broadcasting (numpy.choose): a chain of where over the choices,
    one fused kernel. mode 'raise' checks the indices (this reads their extremes at the call), 'wrap'
    takes them modulo len(choices), 'clip' clips them."""
    a = asarray(a)
    if _kind_of(a) not in "biu":
        raise TypeError(f"choose: the index array must be of integer type, not {a.dtype}")
    choices = [_operand(c) for c in choices] if not isinstance(choices, ndarray) else \
        [choices[i] for i in range(choices.shape[0])]
    n = len(choices)
    if n == 0:
        raise ValueError("0-length sequence given to choose")
    if mode == "raise":
        if a.size and (int(a.min()) < 0 or int(a.max()) >= n):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = _b("mod", a, n)
    elif mode == "clip":
        a = _core.clip(a, 0, n - 1)
    else:
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    arrs = [c if isinstance(c, ndarray) else asarray(c) for c in choices]
    rt = numpy.result_type(*[c.dtype for c in arrs])
    code = _code(rt)
    r = _core.cast(arrs[-1], code)
    for i in range(n - 2, -1, -1):
        r = _core.where(_b("eq", a, i), _core.cast(arrs[i], code), r)
    shape = numpy.broadcast_shapes(a.shape, *[c.shape for c in arrs])
    return _finish(r if r.shape == shape else _broadcast(r, shape), out)


def _kind_of(a):
    return a.dtype.kind


def _broadcast(r, shape):
    from ._manipulation import broadcast_to
    return broadcast_to(r, shape).copy()


def select(condlist, choicelist, default=0):
    """choicelist[i] where condlist[i] is the first true condition, else default (numpy.select): a
    chain of where, one fused kernel."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(choicelist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    conds = [asarray(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != numpy.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    choices = [_operand(c) for c in choicelist] + [_operand(default)]
    arrs = [c for c in choices if isinstance(c, ndarray)]
    scalars = [c for c in choices if not isinstance(c, ndarray)]
    rt = numpy.result_type(*[c.dtype for c in arrs], *scalars) if arrs else numpy.result_type(*scalars)
    code = _code(rt)
    cast = lambda c: _core.cast(c, code) if isinstance(c, ndarray) else _core.const(c, code)  # noqa: E731
    r = cast(choices[-1])
    for c, v in zip(reversed(conds), reversed(choices[:-1])):
        r = _core.where(c, cast(v), r)
    shape = numpy.broadcast_shapes(*[c.shape for c in conds], *[c.shape for c in arrs])
    return r if r.shape == shape else _broadcast(r, shape)


def _positions(condition, device):
    """The flat positions of condition's true elements: on the device for a loom condition (a scan and a
    scatter; one small read of the count), on the host for host data."""
    if isinstance(condition, ndarray):
        return _indexing._flat_positions(condition.ravel())
    return _from_numpy(numpy.flatnonzero(numpy.asarray(condition)), copy=True, device=device)


def compress(condition, a, axis=None, out=None):
    """The slices of a along axis where condition is true (numpy.compress): the positions of the true
    entries (on the device; one small read of their count), then a gather. A condition longer than the
    axis is an IndexError where it selects past the end, as NumPy's."""
    a = asarray(a)
    cond = condition if isinstance(condition, ndarray) else numpy.asarray(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    if axis is None:
        a, axis = a.ravel(), 0
    axis = _indexing._normalize_axis(axis, a.ndim)
    n = a.shape[axis]
    if a.ndim == 1 and isinstance(cond, ndarray) and 1 <= cond.shape[0] <= n and _indexing._compact_on():
        # a's values compacted directly by the mask (one scan kernel, as a[mask]; no positions, no gather)
        m = cond if cond.dtype == numpy.bool_ else _indexing._b("ne", cond, 0)
        return _finish(_indexing._compact(m, [a[:cond.shape[0]] if cond.shape[0] < n else a])[0], out)
    idx = _positions(cond, a._device)
    if cond.shape[0] > n and idx.size:
        _indexing._check_indices([(idx, None, n, axis)])
    return _finish(_indexing._take(a, idx, axis, "clip"), out)


def extract(condition, arr):
    """The elements of arr where condition is true, flattened (numpy.extract: compress of the raveled
    arrays), on the device."""
    arr = asarray(arr)
    cond = condition if isinstance(condition, ndarray) else numpy.asarray(condition)
    if isinstance(cond, ndarray):  # lazy C-order reshapes: ravel reads the strides (evaluates a pending mask)
        return compress(_indexing._reshape_lazy(cond, (cond.size,)), _indexing._reshape_lazy(arr, (arr.size,)))
    return compress(cond.ravel(), arr.ravel())


def _flat_values(v, device):
    """v (a loom array, NumPy data or a scalar) as a loom 1-d array."""
    v = v if isinstance(v, ndarray) else asarray(numpy.asarray(v))
    return v.ravel()


def _cycled(vals, index):
    """vals.flat[index % vals.size] (vals cycled over positions, as put / place / putmask repeat them): a
    gather in mode 'wrap', lazy."""
    return _indexing._take(vals, index, 0, "wrap")


def put(a, ind, v, mode="raise"):
    """a.flat[ind] = v in place, v repeated as needed (numpy.put): a scatter on the device. Repeated
    indices store one of their values (NumPy: the last one; loom leaves it unspecified)."""
    if not isinstance(a, ndarray):
        raise TypeError(f"put() argument 1 must be loom.ndarray, not {type(a).__name__}")
    code = _indexing._mode_code(mode)
    idx, h = _indexing._index_arg(ind, a._device)
    idx = idx.ravel()
    n = a.size
    if idx.size == 0:
        return
    if n == 0:
        raise IndexError("cannot replace elements of an empty array")
    vals = _flat_values(v, a._device)
    if vals.size == 0:
        return
    i64 = _code("int64")
    idx = idx if idx.dtype == numpy.int64 else _core.cast(idx, i64)
    if code == 0:
        _indexing._check_indices([(idx, None if h is None else h.ravel(), n, 0)])
        flat = _core.where(_b("lt", idx, 0), _b("add", idx, n), idx)
    elif code == 1:
        flat = _b("mod", idx, n)
    else:
        flat = _core.clip(idx, 0, n - 1)
    values = vals if vals.size == idx.size else _cycled(vals, _core.iota((idx.size,)))
    _indexing._scatter_into(a, flat, _core.cast(values, a._dtype_code))


def place(arr, mask, vals):
    """arr[mask] = vals in place, vals cycled (numpy.place): on the device, with no read back: element i
    takes vals[(rank of i among the true elements) % len(vals)] (a scan of the mask and a gather)."""
    if not isinstance(arr, ndarray):
        raise TypeError(f"argument 1 must be loom.ndarray, not {type(arr).__name__}")
    m = asarray(mask)
    if m.size != arr.size:
        raise ValueError("place: mask and data must be the same size")
    vals = _flat_values(vals, arr._device)
    m = (m if m.dtype == numpy.bool_ else m != 0).reshape(arr.shape)
    if vals.size == 0:
        if bool(m.any()):
            raise ValueError("Cannot insert from an empty array!")
        return
    ranks = _core.scan(0, _core.cast(m.ravel(), _code("int64")), 0, -1)
    new = _cycled(vals, _b("sub", ranks, 1)).reshape(arr.shape)
    arr[...] = _core.where(m, _core.cast(new, arr._dtype_code), arr)


def putmask(a, mask, values):
    """a = where(mask, values, a) in place (numpy.putmask). A values array of a's shape (or one that
    broadcasts to it) is written on the device; values of another size are cycled through NumPy on the
    host, as NumPy does."""
    if not isinstance(a, ndarray):
        raise TypeError(f"putmask: the first argument must be a loom array, not {type(a).__name__}")
    m, v = asarray(mask), _operand(values)
    if m.shape != a.shape:
        raise ValueError("putmask: mask and data must be the same size")
    vs = v.shape if isinstance(v, ndarray) else ()
    try:
        same = numpy.broadcast_shapes(vs, a.shape) == a.shape and (v.size == a.size or v.size == 1
                                                                    if isinstance(v, ndarray) else True)
    except ValueError:
        same = False
    if same:
        vv = _core.cast(v, a._dtype_code) if isinstance(v, ndarray) else v
        a[...] = _core.where(m, vv, a)
        return
    vals = _flat_values(v, a._device)  # values of another size: cycled over a's flat positions
    if vals.size == 0:
        if bool(m.any()):
            raise ValueError("putmask: values must not be empty when the mask selects elements")
        return
    new = _cycled(vals, _core.iota((a.size,))).reshape(a.shape)
    a[...] = _core.where(m, _core.cast(new, a._dtype_code), a)


def fill_diagonal(a, val, wrap=False):
    """Writes val on the main diagonal of a in place (numpy.fill_diagonal). Through NumPy on the host."""
    val = _np_or_value(val)
    _host_update(a, lambda h: numpy.fill_diagonal(h, val, wrap))


def take_along_axis(arr, indices, axis=-1):
    """arr's elements at indices along axis (numpy.take_along_axis; axis=-1 by default as NumPy 2.3+ and
    the array API; None: the flattened array): one gather node on the device."""
    return _indexing._take_along_axis_api(arr, indices, axis)


def put_along_axis(arr, indices, values, axis):
    """arr[indices along axis] = values in place (numpy.put_along_axis): the flat positions are
    take_along_axis of an iota of arr's shape, then one scatter on the device."""
    if not isinstance(arr, ndarray):
        raise TypeError(f"put_along_axis: the array must be a loom array, not {type(arr).__name__}")
    flat = _indexing._take_along_axis_api(_core.iota(arr.shape), indices, axis)
    v = _operand(values)
    if isinstance(v, ndarray):
        try:
            numpy.broadcast_shapes(v.shape, flat.shape)
        except ValueError:
            raise ValueError(f"shape mismatch: value array of shape {v.shape} could not be broadcast to indexing "
                             f"result of shape {flat.shape}") from None
        v = _core.cast(v, arr._dtype_code)
    _indexing._scatter_into(arr, flat, v)


def flatnonzero(a):
    """The flat positions of a's non-zero elements (numpy.flatnonzero): a scan and a scatter on the device,
    one small read of the count."""
    return _indexing._flat_positions(asarray(a))


def _argwhere_stage(flat, *shape):
    """The (k, ndim) indices of the flat C-order positions `flat` in an array of `shape`: row i, column j
    is flat[i] // stride_j % shape_j, the column's stride and size picked by a chain of where over a
    column index (constants of the trace: no uploaded arrays)."""
    k, nd = flat.shape[0], len(shape)
    col = flat.reshape(k, 1)
    c = _core.iota((1, nd), flat)
    cs = numpy.cumprod((1,) + shape[:0:-1])[::-1]  # C strides in elements
    div, size = cs[-1].item(), shape[-1]
    for j in range(nd - 2, -1, -1):
        hit = _b("eq", c, j)
        div = _core.where(hit, cs[j].item(), div)
        size = _core.where(hit, shape[j], size)
    return _b("mod", _b("floordiv", col, div), size)


_ARGWHERE: list = []  # the Fusion of _argwhere_stage, made on first use


def argwhere(a):
    """The indices of a's non-zero elements, one row each (numpy.argwhere), on the device: the flat
    positions (a compaction), then one traced stage (loom.fuse: the positions are a new buffer each call,
    which the ordinary lazy graph would plan anew every call) that unravels them."""
    a = asarray(a)
    if a.ndim == 0:
        return _from_numpy(numpy.argwhere(numpy.asarray(bool(a))), copy=True, device=a._device)
    flat = _indexing._flat_positions(a)
    if flat.size == 0 or a.ndim == 1:
        return flat.reshape(flat.size, a.ndim)
    if not _ARGWHERE:
        from ._fuse import Fusion
        _ARGWHERE.append(Fusion(_argwhere_stage, "argwhere"))
    return _ARGWHERE[0](flat, *a.shape)


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an n x ... x n array: ndim copies of arange(n)."""
    from ._creation import arange
    idx = arange(n)
    return (idx,) * ndim


def diag_indices_from(arr):
    """The indices of the main diagonal of the n x ... x n array arr (numpy.diag_indices_from)."""
    arr = asarray(arr)
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if builtins.any(n != arr.shape[0] for n in arr.shape):
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(arr.shape[0], arr.ndim)


for _name in ("ravel_multi_index", "ix_", "mask_indices"):
    if hasattr(numpy, _name):
        globals()[_name] = _host_function(_name, __name__)
del _name

__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__] + _index_funcs_all
