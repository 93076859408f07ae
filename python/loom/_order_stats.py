"""_order_stats.py: quantile, percentile, histogram, bincount, digitize and interp on the array's device.

Where the array sorts on its device (_sorting._on_network: GPU arrays, or any array under
LOOM_SORT_ENGINE=network), quantile / percentile sort along the axis there and read the one or two
order statistics each q needs: the positions and weights are NumPy's own (numpy.lib's _QuantileMethods
for linear, lower, higher, nearest and midpoint, computed on the host from n and q alone), and the
interpolation is NumPy's _lerp written with loom ops (a + (b - a) * t below t = 0.5, b - (b - a) * (1 - t)
from it), so the results are NumPy's bits; a slice holding a NaN gives its last sorted value (NaN) as
NumPy does. bincount is a scatter-add on the device (one small read of the index range for the length and
the check of negatives); digitize is searchsorted on the device after NumPy checks the bins (a host copy
of them: bins are short); histogram and interp are described at their functions. Everything else
(weights, the other methods, nan* forms, tuples of axes) is NumPy's on a host copy, as before
(_statistics.py, _numeric.py).
"""
import builtins
import operator

import numpy

from . import _core
from ._common import _OPS, _code, _kind, _norm_axis, _from_numpy
from ._ndarray import ndarray, _finish
from ._creation import asarray

_DEVICE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _b(name, x, y):
    return _core.binary(_OPS[name], x, y)


def _on_device(x):
    from . import _sorting
    return isinstance(x, ndarray) and _sorting._on_network(x)


def _searches_here(x):
    """Whether searchsorted-based functions of x (digitize, interp) run as Loom kernels: on x's device, or
    on the host for as many queries as take the host's binary search (_sorting._HOST_SEARCH_MIN_QUERIES)."""
    from . import _sorting
    return _on_device(x) or (isinstance(x, ndarray) and _sorting._host_binary_for(x))


def _min_max(x):
    """x's smallest and largest elements as NumPy scalars: one fused evaluation and one small read."""
    from . import _reductions
    lo, hi = _reductions.min(x), _reductions.max(x)
    _core.eval(lo, hi)
    return lo.get()[()], hi.get()[()]


def _added_at(idx, values, length, dtype, device):
    """A new (length,) array of dtype on device holding the sum of values at each index of idx (a
    scatter-add into zeros; indices outside [0, length) add nothing)."""
    zeros = _from_numpy(numpy.zeros(length, dtype), copy=True, device=device)
    return _core.scatter(zeros, idx, values, 1)  # op 1: add


def _device_quantile_ok(a, axis, method, weights, q, interpolation):
    return (_on_device(a) and weights is None and interpolation is None and method in _DEVICE_METHODS
            and not isinstance(q, ndarray) and a.size > 0 and a.ndim > 0 and _kind(a.dtype) in "iuf"
            and (axis is None or isinstance(axis, (int, numpy.integer))))


def _positions(n, q, method):
    """(index0, index1, t) per element of the float64 array q, as NumPy's _quantile computes them: the two
    order statistics read and the interpolation weight (t None: the discrete methods read index0 only)."""
    vi = (n - 1) * q
    if method == "lower":
        return numpy.floor(vi).astype(numpy.intp), None, None
    if method == "higher":
        return numpy.ceil(vi).astype(numpy.intp), None, None
    if method == "nearest":
        return numpy.around(vi).astype(numpy.intp), None, None
    if method == "midpoint":
        vi = 0.5 * (numpy.floor(vi) + numpy.ceil(vi))
    vi = numpy.asarray(vi, dtype=numpy.float64)
    prev = numpy.floor(vi)
    nxt = prev + 1
    above = vi >= n - 1
    prev[above] = -1
    nxt[above] = -1
    below = vi < 0
    prev[below] = 0
    nxt[below] = 0
    gamma = numpy.asarray(vi - prev.astype(numpy.intp))
    if method == "midpoint":
        g = numpy.full(gamma.shape, 0.5)
        numpy.copyto(g, 0., where=vi % 1 == 0, casting="unsafe")
        gamma = g
    return prev.astype(numpy.intp), nxt.astype(numpy.intp), numpy.asarray(gamma, dtype=numpy.float64)


def _quantile_device(a, q, axis, out, method, keepdims, percent):
    from . import _sorting
    weak = type(q) in (int, float)
    qa = numpy.true_divide(q, 100) if percent else numpy.asanyarray(q)
    if qa.dtype.kind not in "iuf" or numpy.any(numpy.isnan(qa)) or not (qa.size == 0 or (qa.min() >= 0 and qa.max() <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]" if percent
                         else "Quantiles must be in the range [0, 1]")
    int_q = qa.dtype.kind in "iu"  # quantile(a, 0) or (a, 1): NumPy's integer virtual indices (a's dtype)
    qa = numpy.asarray(qa, dtype=numpy.float64)
    x = asarray(a)
    flat = axis is None
    ax = x.ndim - 1 if flat else _norm_axis(int(axis), x.ndim)
    srt = _sorting.sort(x.reshape(-1) if flat else x, axis=-1 if flat else ax)
    ax_s = srt.ndim - 1 if flat else ax
    n = srt.shape[ax_s]
    pre = (slice(None),) * ax_s

    def at(i):
        i = int(i) % n
        return srt[pre + (slice(i, i + 1),)]

    if int_q and method == "linear":
        i0, i1, t = ((n - 1) * qa.ravel()).astype(numpy.intp), None, None
    else:
        i0, i1, t = _positions(n, qa.ravel(), method)
    nan_last = _core.unary(_OPS["isnan"], at(n - 1)) if _kind(x.dtype) == "f" else None
    results = []
    for k in range(qa.size):
        if t is None:
            r = at(i0[k])
        else:
            lo, hi, tk = at(i0[k]), at(i1[k]), t[k]
            tw = float(tk) if weak else asarray(numpy.float64(tk))
            one_minus = 1 - tw if weak else asarray(numpy.float64(1 - tk))
            diff = _b("sub", hi, lo)
            r = _b("sub", hi, _b("mul", diff, one_minus)) if tk >= 0.5 else _b("add", lo, _b("mul", diff, tw))
        if nan_last is not None:
            r = _core.where(nan_last, _core.cast(at(n - 1), r._dtype_code), r)
        results.append(r)
    if flat:
        shape = (1,) * x.ndim if keepdims else ()
    else:
        shape = tuple(d if i != ax_s else 1 for i, d in enumerate(srt.shape)) if keepdims else \
            tuple(d for i, d in enumerate(srt.shape) if i != ax_s)
    results = [r.reshape(shape) for r in results]
    if qa.ndim == 0:
        r = results[0]
    else:
        from ._manipulation import stack
        r = stack(results, axis=0).reshape(qa.shape + shape)
    return r if out is None else _finish(r, out, "unsafe")


def quantile_or_none(a, q, axis, out, method, keepdims, weights, interpolation, percent):
    """The device quantile / percentile, or None where NumPy's host one must run (see the module)."""
    if not _device_quantile_ok(a, axis, method, weights, q, interpolation):
        return None
    return _quantile_device(a, q, axis, out, method, keepdims, percent)


def bincount_or_none(x, weights=None, minlength=0):
    """numpy.bincount as a scatter-add on x's device (int64 counts; float64 sums of weights, added in an
    unspecified order as CuPy's are), or None for NumPy's (host arrays, non-integer or non-1-d x, weights
    of another shape or dtype kind, which NumPy then rejects or handles)."""
    if not _on_device(x) or x.ndim != 1 or _kind(x.dtype) not in "iu" or x.dtype == numpy.uint64:
        return None
    if weights is not None:
        w = weights if isinstance(weights, ndarray) else None
        if w is None or w.shape != x.shape or _kind(w.dtype) not in "iufb":
            return None
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    hi = -1
    if x.size:
        lo, hi = (int(v) for v in _min_max(x))
        if lo < 0:
            raise ValueError("'list' argument must have no negative elements")
    length = builtins.max(hi + 1, minlength)
    if weights is None:
        return _added_at(_core.cast(x, _code("int64")), 1, length, numpy.int64, x._device)
    return _added_at(_core.cast(x, _code("int64")), _core.cast(weights, _code("float64")), length, numpy.float64, x._device)


def digitize_or_none(x, bins, right=False):
    """numpy.digitize as searchsorted on x's device after NumPy validates a host copy of the bins (1-d,
    monotonic), or None for NumPy's (host arrays of few points, complex x)."""
    if not _searches_here(x) or _kind(x.dtype) not in "iuf":
        return None
    from . import _sorting
    hb = bins.get() if isinstance(bins, ndarray) else numpy.asarray(bins)
    numpy.digitize(numpy.zeros(0, dtype=hb.dtype if hb.dtype.kind in "iuf" else numpy.float64), hb, right)
    side = "left" if right else "right"
    if hb.size >= 2 and not numpy.all(hb[:-1] <= hb[1:]):  # non-increasing (NumPy checked it is monotonic)
        rev = _from_numpy(numpy.ascontiguousarray(hb[::-1]), copy=True, device=x._device)
        return _b("sub", len(hb), _sorting.searchsorted(rev, x, side=side))
    return _sorting.searchsorted(_from_numpy(hb, copy=True, device=x._device), x, side=side)


def histogram_or_none(a, bins=10, range=None, density=None, weights=None):
    """numpy.histogram of an array on its device (GPU, or LOOM_SORT_ENGINE=network), or None for NumPy's
    (host arrays, string bins, complex data or weights, 64-bit integers: their float64 edges round).
    The edges are NumPy's (numpy.histogram_bin_edges on the two values it reads, min and max: one small
    sync), so are its checks. Each value's bin is the one whose edges hold it in the edges' dtype (the last
    bin closed), as NumPy's corrected arithmetic gives: for equal bins an estimate from the arithmetic,
    then corrected twice against the edges read at it (a gather of the short edges array); for given
    edges a device searchsorted. The counts are a scatter-add (int64; the weights' dtype with weights,
    summed in float64 in an unspecified order)."""
    if not _on_device(a) or isinstance(bins, str) or _kind(a.dtype) not in "iufb" or a.dtype.itemsize > 4 and \
            _kind(a.dtype) in "iu":
        return None
    if weights is not None and (not isinstance(weights, ndarray) or weights.shape != a.shape or _kind(weights.dtype) not in "iufb"):
        return None
    x = asarray(a).reshape(-1)
    if x.dtype == numpy.bool_:
        x = x.astype(numpy.uint8)
    host_bins = bins.get() if isinstance(bins, ndarray) else bins
    if range is None and numpy.ndim(host_bins) == 0 and x.size:
        proxy = numpy.array(_min_max(x), dtype=x.dtype)
    else:
        proxy = numpy.zeros(0, dtype=x.dtype)
    edges = numpy.histogram_bin_edges(proxy, host_bins, range)  # NumPy's edges and errors
    nb = len(edges) - 1
    et = edges.dtype
    dev = x._device
    edges_dev = _from_numpy(edges, copy=True, device=dev)
    v = _core.cast(x, _code(et.name))
    first, last = asarray(edges[:1].reshape(())), asarray(edges[-1:].reshape(()))
    keep = _b("logical_and", _b("ge", v, first), _b("le", v, last))
    i64 = _code("int64")
    if numpy.ndim(host_bins) == 0:  # equal bins
        f64 = _code("float64")
        span = float(edges[-1]) - float(edges[0])
        est = _b("mul", _b("sub", _core.cast(v, f64), float(edges[0])), nb / span if span else 0.0)
        idx = _core.cast(_core.binary(_OPS["minimum"], _core.binary(_OPS["maximum"], est, 0.0), nb - 1.0), i64)
        for _ in builtins.range(2):
            lo_edge = _core.gather(edges_dev, idx, 0, 2)
            idx = _core.where(_b("lt", v, lo_edge), _b("sub", idx, 1), idx)
            idx = _core.binary(_OPS["maximum"], idx, 0)
            hi_edge = _core.gather(edges_dev, _b("add", idx, 1), 0, 2)
            up = _b("logical_and", _b("ge", v, hi_edge), _b("lt", idx, nb - 1))
            idx = _core.where(up, _b("add", idx, 1), idx)
    else:
        from . import _sorting
        idx = _b("sub", _sorting.searchsorted(edges_dev, v, side="right"), 1)
        idx = _core.where(_b("eq", v, last), nb - 1, idx)
    idx = _core.where(keep, idx, -1)  # -1: not stored (outside the range, NaN)
    if weights is None:
        n = _added_at(idx, 1, nb, numpy.int64, dev)
    else:
        w = asarray(weights).reshape(-1)
        n = _core.cast(_added_at(idx, _core.cast(w, _code("float64")), nb, numpy.float64, dev), _code(w.dtype.name))
    if density:
        db = asarray(numpy.array(numpy.diff(edges), float))
        from . import _reductions
        n = _b("truediv", _b("truediv", n, db), _reductions.sum(n))
    return n, edges_dev


def interp_or_none(x, xp, fp, left=None, right=None, period=None):
    """numpy.interp on x's device (GPU, or LOOM_SORT_ENGINE=network; the host for many points), or None for
    NumPy's (host arrays of few points, period=, complex fp). NumPy's C loop in float64, point for point: the interval from a device
    searchsorted of xp (j with xp[j] <= x < xp[j + 1]), left / right outside [xp[0], xp[-1]], fp[j] at a
    sample point, else slope * (x - xp[j]) + fp[j], recomputed from the right end when that is NaN
    (infinite slopes), and fp[j] where that is NaN too and fp[j] == fp[j + 1]; NaN x gives NaN."""
    if period is not None or not _searches_here(x) or _kind(x.dtype) == "c":
        return None
    hfp = fp.get() if isinstance(fp, ndarray) else numpy.asarray(fp)
    if numpy.iscomplexobj(hfp):
        return None
    if any(isinstance(v, ndarray) for v in (left, right)):
        return None
    f64 = _code("float64")
    dx = _core.cast(xp if isinstance(xp, ndarray) else _from_numpy(numpy.asarray(xp, numpy.float64), copy=True, device=x._device), f64)
    dy = _core.cast(fp if isinstance(fp, ndarray) else _from_numpy(numpy.asarray(hfp, numpy.float64), copy=True, device=x._device), f64)
    if dx.ndim != 1 or dy.ndim != 1:
        raise ValueError("object too deep for desired array")
    n = dx.shape[0]
    if dy.shape[0] != n:
        raise ValueError("fp and xp are not of the same length.")
    if n == 0:
        raise ValueError("array of sample points is empty")
    v = _core.cast(x.reshape(-1), f64)  # a gather's indices have the rank of its data (xp's: 1)
    lval = dy[0:1].reshape(()) if left is None else float(left)
    rval = dy[n - 1:n].reshape(()) if right is None else float(right)
    first, last = dx[0:1].reshape(()), dx[n - 1:n].reshape(())
    if n == 1:
        return _core.where(_b("lt", v, first), lval, _core.where(_b("gt", v, first), rval, dy.reshape(()))).reshape(x.shape)
    from . import _sorting
    j = _b("sub", _sorting.searchsorted(dx, v, side="right"), 1)
    x0 = _core.gather(dx, j, 0, 2)
    x1 = _core.gather(dx, _b("add", j, 1), 0, 2)
    y0 = _core.gather(dy, j, 0, 2)
    y1 = _core.gather(dy, _b("add", j, 1), 0, 2)
    slope = _b("truediv", _b("sub", y1, y0), _b("sub", x1, x0))
    r = _b("add", _b("mul", slope, _b("sub", v, x0)), y0)
    r2 = _b("add", _b("mul", slope, _b("sub", v, x1)), y1)
    nan = _core.unary(_OPS["isnan"], r)
    r = _core.where(nan, _core.where(_b("logical_and", _core.unary(_OPS["isnan"], r2), _b("eq", y0, y1)), y0, r2), r)
    r = _core.where(_b("eq", x0, v), y0, r)  # a sample point (the last one included)
    r = _core.where(_b("gt", v, last), rval, r)
    r = _core.where(_b("lt", v, first), lval, r)
    return _core.where(_core.unary(_OPS["isnan"], v), v, r).reshape(x.shape)
