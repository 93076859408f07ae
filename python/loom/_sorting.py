"""_sorting.py: sorting, searching, sets and cumulative sums (the array API standard's sort, argsort,
searchsorted, unique_all/counts/inverse/values, cumulative_sum, cumulative_prod; CuPy's sort,
argsort, cumsum, cumprod, unique, searchsorted).

Cumulative sums and products (cumsum, cumprod, nancumsum, nancumprod, cumulative_sum, cumulative_prod)
are lazy graph nodes (loom_scan) computed by a scan kernel on the array's own device, fused with the
expression they scan and with an elementwise consumer.

HOST-COMPUTED: sort, argsort, searchsorted and unique* have no device kernel yet (issue 15). Each one
evaluates its input, computes with NumPy on a host copy and returns a new loom array on the input's
device. The results are exactly NumPy's (stable sorts, NaNs last; unique keeps each NaN distinct as the
standard asks).
"""
import collections

import numpy

from . import _core
from ._common import _norm_axis
from ._ndarray import ndarray, _host, _finish

UniqueAllResult = collections.namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _arr(x):
    from ._creation import asarray
    return asarray(x)


def _argsort_np(a, axis, descending, stable):
    if a.ndim == 0:
        raise ValueError("sort/argsort: x must be at least 1-dimensional")
    if not descending:
        return numpy.argsort(a, axis=axis, kind="stable" if stable else None)
    # stable descending: the ascending stable order of the reversed array, mapped back and reversed
    ax = _norm_axis(axis, a.ndim)
    n = a.shape[ax]
    rev = numpy.flip(a, axis=ax)
    order = numpy.argsort(rev, axis=ax, kind="stable")
    return numpy.flip(n - 1 - order, axis=ax)


def argsort(a, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """Indices that sort a along axis (stable by default; descending keeps equal elements in order)."""
    if order is not None:
        raise ValueError("argsort: order= (structured arrays) is not supported")
    x = _arr(a)
    if axis is None:
        x, axis = x.reshape(-1), -1
    return _host(lambda h: _argsort_np(h, axis, descending, stable or kind == "stable").astype(numpy.int64), x)


def sort(a, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """A sorted copy of a along axis (axis=None: of the flattened array)."""
    if order is not None:
        raise ValueError("sort: order= (structured arrays) is not supported")
    x = _arr(a)
    if axis is None:
        x, axis = x.reshape(-1), -1

    def f(h):
        if not descending:
            return numpy.sort(h, axis=axis, kind="stable")
        return numpy.take_along_axis(h, _argsort_np(h, axis, True, True), axis=axis)
    return _host(f, x)


def searchsorted(x1, x2, /, side="left", sorter=None):
    """Indices where x2's elements would be inserted in the sorted 1-d x1 (side 'left' or 'right')."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', not {side!r}")
    a = _arr(x1)
    if a.ndim != 1:
        raise ValueError("searchsorted: x1 must be 1-dimensional")
    s = None if sorter is None else (sorter.get() if isinstance(sorter, ndarray) else numpy.asarray(sorter))
    v = x2 if isinstance(x2, ndarray) else _arr(x2)
    return _host(lambda h, q: numpy.searchsorted(h, q, side=side, sorter=s).astype(numpy.int64), a, v)


def _unique(x, **kw):
    h = _arr(x)
    hv = h.get().reshape(-1)
    return h, numpy.unique(hv, equal_nan=False, **kw)


def _dev(h, v):
    from ._common import _from_numpy
    return _from_numpy(numpy.array(v, copy=True, order="C"), copy=True, device=h._device)  # keeps 0-d


def unique_values(x, /):
    h, v = _unique(x)
    return _dev(h, v)


def unique_counts(x, /):
    h, (v, c) = _unique(x, return_counts=True)
    return UniqueCountsResult(_dev(h, v), _dev(h, c.astype(numpy.int64)))


def unique_inverse(x, /):
    h, (v, inv) = _unique(x, return_inverse=True)
    return UniqueInverseResult(_dev(h, v), _dev(h, inv.astype(numpy.int64).reshape(h.shape)))


def unique_all(x, /):
    h, (v, i, inv, c) = _unique(x, return_index=True, return_inverse=True, return_counts=True)
    return UniqueAllResult(_dev(h, v), _dev(h, i.astype(numpy.int64)), _dev(h, inv.astype(numpy.int64).reshape(h.shape)),
                           _dev(h, c.astype(numpy.int64)))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True):
    """numpy.unique (CuPy's): sorted unique elements and, on request, indices, inverse and counts."""
    h = _arr(ar)
    r = numpy.unique(h.get(), return_index, return_inverse, return_counts, axis, equal_nan=equal_nan)
    if isinstance(r, tuple):
        return tuple(_dev(h, numpy.asarray(p)) for p in r)
    return _dev(h, r)


_SCAN = {"sum": 0, "prod": 1, "min": 2, "max": 3}  # LoomReduceOp codes (loom_scan)


def _scan(name, x, axis, dtype):
    """loom_scan: the inclusive scan of x along axis, a lazy graph node computed by a device kernel (the
    elementwise expression x comes from is computed in the scan's loads)."""
    from ._common import _code
    return _core.scan(_SCAN[name], x, axis, -1 if dtype is None else _code(dtype))


def _numpy_scan(name, a, axis, dtype, out):
    """numpy.cumsum / cumprod: axis=None scans the flattened array (a 0-d array becomes shape (1,))."""
    x = _arr(a)
    if axis is None or x.ndim == 0:  # NumPy scans a 0-d array as shape (1,), along axis None, 0 or -1
        x, axis = x.reshape(-1), 0 if axis is None else axis
    r = _scan(name, x, _norm_axis(axis, x.ndim), dtype)
    return r if out is None else _finish(r, out, "unsafe")


def _cumulative(name, x, axis, dtype, include_initial, identity, fname, out):
    h = _arr(x)
    if h.ndim == 0:  # NumPy 2 scans a 0-d array as shape (1,)
        h = h.reshape(1)
    if axis is None:
        if h.ndim > 1:
            raise ValueError(f"{fname}: axis must be given for arrays of more than one dimension")
        axis = 0
    ax = _norm_axis(axis, h.ndim)
    r = _scan(name, h, ax, dtype)
    if include_initial:
        from ._creation import full_like
        from ._manipulation import concatenate
        shape = list(r.shape)
        shape[ax] = 1
        r = concatenate([full_like(r, identity, shape=tuple(shape)), r], axis=ax)
    return r if out is None else _finish(r, out, "unsafe")


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative sums along axis (include_initial: a leading 0); integer sums widen as sum() does.
    A device kernel (loom_scan), fused with the expression it scans."""
    return _cumulative("sum", x, axis, dtype, include_initial, 0, "cumulative_sum", out)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative products along axis (include_initial: a leading 1); a device kernel (loom_scan)."""
    return _cumulative("prod", x, axis, dtype, include_initial, 1, "cumulative_prod", out)


def cumsum(a, axis=None, dtype=None, out=None):
    """numpy.cumsum (axis=None: of the flattened array); a device kernel (loom_scan). Floats on the host
    have NumPy's bits (the same sequential order); GPUs add in a tree order within blocks."""
    return _numpy_scan("sum", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """numpy.cumprod (axis=None: of the flattened array); a device kernel (loom_scan)."""
    return _numpy_scan("prod", a, axis, dtype, out)


def _nan_to(a, v):
    x = _arr(a)
    if x.dtype.kind not in "fc":
        return x
    from ._indexing import where
    from ._math import isnan
    return where(isnan(x), v, x)


def nancumsum(a, axis=None, dtype=None, out=None):
    """numpy.nancumsum: cumsum with NaNs counted as 0 (the replacement is fused into the scan kernel)."""
    return _numpy_scan("sum", _nan_to(a, 0), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """numpy.nancumprod: cumprod with NaNs counted as 1 (fused into the scan kernel)."""
    return _numpy_scan("prod", _nan_to(a, 1), axis, dtype, out)


__all__ = ["argsort", "sort", "searchsorted", "unique_values", "unique_counts", "unique_inverse", "unique_all",
           "unique", "cumulative_sum", "cumulative_prod", "cumsum", "cumprod", "nancumsum", "nancumprod"]
# the standard's names (loom's own); the CuPy names below them fill gaps the CuPy layer leaves
OWNED = __all__[:8]
