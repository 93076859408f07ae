"""_selection.py: choosing elements (take, choose, select, diagonal, compress, extract) and placing them
(put, place, putmask, fill_diagonal), with the index helpers (diag_indices, tril_indices, ...).

On the device, as loom graphs: diagonal (a strided view), select and choose (chains of where: one
fused kernel), putmask with a same-shaped or broadcastable value (a where written back). Through NumPy
on the host (gathers and scatters with data-dependent positions or sizes need kernels loom lacks; the
README lists them): take, take_along_axis, compress, extract, put, place, putmask with a cycled value,
fill_diagonal, isin, and the index helpers' results (tiny integer arrays).
"""
import builtins

import numpy

from . import _core
from ._common import _OPS, _code
from ._ndarray import ndarray, _operand, _finish, _host_call, _host_function, _host_update
from ._creation import asarray


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


def take(a, indices, axis=None, out=None, mode="raise"):
    """The elements of a at `indices` along axis (of the flattened array for axis=None), like numpy.take
    (mode 'raise', 'wrap' or 'clip'). Through NumPy on the host."""
    return _finish(_host_call(numpy.take, asarray(a), indices, axis=axis, mode=mode), out)


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


def compress(condition, a, axis=None, out=None):
    """The slices of a along axis where condition is true (numpy.compress). Through NumPy on the host
    (the result's size depends on the values)."""
    return _finish(_host_call(numpy.compress, condition, asarray(a), axis=axis), out)


def extract(condition, arr):
    """The elements of arr where condition is true, flattened (numpy.extract). Through NumPy on the host."""
    return _host_call(numpy.extract, condition, asarray(arr))


def put(a, ind, v, mode="raise"):
    """a.flat[ind] = v in place, v repeated as needed (numpy.put). Through NumPy on the host."""
    ind, v = _np_or_value(ind), _np_or_value(v)
    _host_update(a, lambda h: numpy.put(h, ind, v, mode=mode))


def place(arr, mask, vals):
    """arr[mask] = vals in place, vals cycled (numpy.place). Through NumPy on the host."""
    mask, vals = _np_or_value(mask), _np_or_value(vals)
    _host_update(arr, lambda h: numpy.place(h, mask, vals))


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
    mh, vh = m._np(), _np_or_value(v)
    _host_update(a, lambda h: numpy.putmask(h, mh, vh))


def fill_diagonal(a, val, wrap=False):
    """Writes val on the main diagonal of a in place (numpy.fill_diagonal). Through NumPy on the host."""
    val = _np_or_value(val)
    _host_update(a, lambda h: numpy.fill_diagonal(h, val, wrap))


def take_along_axis(arr, indices, axis=-1):
    """arr's elements at indices along axis (numpy.take_along_axis; axis=-1 by default as NumPy 2.3+ and
    the array API; None: the flattened array). Through NumPy on the host."""
    return _host_call(numpy.take_along_axis, asarray(arr), indices, axis)


def put_along_axis(arr, indices, values, axis):
    """arr[indices along axis] = values in place (numpy.put_along_axis). Through NumPy on the host."""
    indices, values = _np_or_value(indices), _np_or_value(values)
    _host_update(arr, lambda h: numpy.put_along_axis(h, indices, values, axis))


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


for _name in ("tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from", "isin", "in1d",
              "unravel_index", "ravel_multi_index", "flatnonzero", "argwhere", "ix_", "mask_indices"):
    if hasattr(numpy, _name):
        globals()[_name] = _host_function(_name, __name__)
del _name

__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
