"""_statistics.py: NaN-ignoring reductions (nansum ... nanargmax), average and ptp as fused loom graphs
(a where() that replaces NaNs by the reduction's identity feeds loom's reductions: one kernel), and
the order statistics and histograms: median, quantile and percentile (one axis or all, five methods)
sort on a GPU array's device, histogram, bincount and digitize scatter and search there (_order_stats.py);
the rest (their nan* forms, histogram2d, histogramdd, and those cases on host arrays, where NumPy works
on the buffer itself) compute through NumPy on a host copy (README's list); cov and corrcoef of loom
arrays are a centred matmul on their device (_covariance.py).

nancumsum and nancumprod are scan kernels (_sorting.py).

NaN-only slices give NaN as NumPy does; NumPy's RuntimeWarning for them is not raised (it would need
the values at the calling line, before the lazy graph runs; CuPy does not raise it either).
"""
import builtins

import numpy

from . import _core
from ._common import _OPS, _code, _kind, _norm_axis, _axes_tuple
from ._ndarray import _finish, _host_function
from ._creation import asarray
from . import _reductions


def _u(name, x):
    return _core.unary(_OPS[name], x)


def _b(name, x, y):
    return _core.binary(_OPS[name], x, y)


def _has_nan(a):
    return _kind(a.dtype) in "fc"


def _replace_nan(a, value):
    """a with NaNs replaced by value (a itself for dtypes without NaN)."""
    return _core.where(_u("isnan", a), value, a) if _has_nan(a) else a


def _count(a, axis, keepdims):
    """The number of elements reduced per result element."""
    if axis is None:
        return a.size
    n = 1
    for x in _axes_tuple(axis):
        n *= a.shape[_norm_axis(x, a.ndim)]
    return n


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """The sum treating NaNs as zero (numpy.nansum); fused."""
    a = asarray(a)
    return _reductions.sum(_replace_nan(a, 0), axis, dtype, out, keepdims)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    """The product treating NaNs as one (numpy.nanprod); fused."""
    a = asarray(a)
    return _reductions.prod(_replace_nan(a, 1), axis, dtype, out, keepdims)


def _nan_extreme(a, axis, out, keepdims, fn, fill):
    a = asarray(a)
    if not _has_nan(a):
        return fn(a, axis, out, keepdims)
    if _kind(a.dtype) == "c":  # NumPy's: fmin / fmax folded (a NaN in either part loses to any number)
        import loom
        uf = loom.fmin if fn is _reductions.amin else loom.fmax
        return uf.reduce(a, axis=axis, out=out, keepdims=keepdims)
    r = fn(_core.where(_u("isnan", a), fill, a), axis, None, keepdims)
    all_nan = _reductions.all(_u("isnan", a), axis, None, keepdims)
    return _finish(_core.where(all_nan, numpy.nan, r), out)


def nanmax(a, axis=None, out=None, keepdims=False):
    """The maximum ignoring NaNs, NaN for an all-NaN slice (numpy.nanmax); fused."""
    return _nan_extreme(a, axis, out, keepdims, _reductions.amax, -numpy.inf)


def nanmin(a, axis=None, out=None, keepdims=False):
    """The minimum ignoring NaNs, NaN for an all-NaN slice (numpy.nanmin); fused."""
    return _nan_extreme(a, axis, out, keepdims, _reductions.amin, numpy.inf)


def _nan_arg(a, axis, out, keepdims, fn, fill):
    a = asarray(a)
    if not _has_nan(a):
        return fn(a, axis, out, keepdims)
    nan = _u("isnan", a)
    if bool(_reductions.any(_reductions.all(nan, axis, None, False))):
        raise ValueError("All-NaN slice encountered")
    return fn(_core.where(nan, fill, a), axis, out, keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """The index of the maximum ignoring NaNs; ValueError for an all-NaN slice (numpy.nanargmax)."""
    return _nan_arg(a, axis, out, keepdims, _reductions.argmax, -numpy.inf)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """The index of the minimum ignoring NaNs; ValueError for an all-NaN slice (numpy.nanargmin)."""
    return _nan_arg(a, axis, out, keepdims, _reductions.argmin, numpy.inf)


def _nan_count(a, axis, keepdims):
    return _reductions.sum(_u("logical_not", _u("isnan", a)), axis, None, None, keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """The mean of the non-NaN elements, NaN for an all-NaN slice (numpy.nanmean); fused."""
    a = asarray(a)
    if not _has_nan(a):
        return _reductions.mean(a, axis, dtype, out, keepdims)
    s = _reductions.sum(_replace_nan(a, 0), axis, dtype, None, keepdims)
    part = numpy.float32 if s.dtype == numpy.complex64 else numpy.float64 if s.dtype.kind == "c" else s.dtype
    n = _core.cast(_nan_count(a, axis, keepdims), _code(part))
    return _finish(_b("truediv", s, n), out)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """The variance of the non-NaN elements (divisor count - ddof; NaN where that is <= 0)
    (numpy.nanvar); fused."""
    a = asarray(a)
    if not _has_nan(a):
        return _reductions.var(a, axis, dtype, out, ddof, keepdims)
    nan = _u("isnan", a)
    m = nanmean(a, axis, dtype, None, True)
    d = _core.where(nan, 0, _b("sub", a, m))
    if _kind(d.dtype) == "c":
        re, im = _u("real", d), _u("imag", d)
        d2 = _b("add", _b("mul", re, re), _b("mul", im, im))
    else:
        d2 = _b("mul", d, d)
    s = _reductions.sum(d2, axis, None, None, keepdims)
    dof = _b("sub", _core.cast(_nan_count(a, axis, keepdims), _code(s.dtype)), float(ddof))
    return _finish(_core.where(_b("le", dof, 0), numpy.nan, _b("truediv", s, dof)), out)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """The standard deviation of the non-NaN elements (numpy.nanstd); fused."""
    return _finish(_u("sqrt", nanvar(a, axis, dtype, None, ddof, keepdims)), out)


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min along axis (numpy.ptp); fused."""
    a = asarray(a)
    return _finish(_b("sub", _reductions.amax(a, axis, None, keepdims), _reductions.amin(a, axis, None, keepdims)),
                   out)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """The weighted mean along axis, sum(a * w) / sum(w) (numpy.average); ZeroDivisionError when the
    weights along an axis sum to zero (this reads the sums at the call)."""
    a = asarray(a)
    if weights is None:
        avg = _reductions.mean(a, axis, None, None, keepdims)
        scl = _count(a, axis, keepdims)
        scl = _core.cast(_core.const(scl, _code(numpy.int64)), avg._dtype_code)
        if returned:
            from ._manipulation import broadcast_to
            return avg, broadcast_to(scl, avg.shape).copy()
        return avg
    w = asarray(weights)
    rt = numpy.result_type(a.dtype, w.dtype, numpy.float64) if _kind(a.dtype) in "biu" else \
        numpy.result_type(a.dtype, w.dtype)
    if a.shape != w.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.ndim != 1:
            raise TypeError("1D weights expected when shapes of a and weights differ.")
        ax = _norm_axis(axis, a.ndim)
        if w.shape[0] != a.shape[ax]:
            raise ValueError("Length of weights not compatible with specified axis.")
        w = w.reshape(tuple(-1 if i == ax else 1 for i in range(a.ndim)))
        from ._manipulation import broadcast_to
        w = broadcast_to(w, a.shape)
    code = _code(rt)
    scl = _reductions.sum(_core.cast(w, code), axis, None, None, keepdims)
    if bool(_reductions.any(_b("eq", scl, 0))):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = _b("truediv", _reductions.sum(_b("mul", _core.cast(a, code), _core.cast(w, code)), axis, None, None,
                                        keepdims), scl)
    if returned:
        if scl.shape != avg.shape:
            from ._manipulation import broadcast_to
            scl = broadcast_to(scl, avg.shape).copy()
        return avg, scl
    return avg


for _name in ("median", "percentile", "quantile", "nanmedian", "nanpercentile", "nanquantile", "histogram", "histogram2d", "histogramdd", "histogram_bin_edges", "bincount",
              "digitize", "corrcoef", "cov"):
    globals()[_name] = _host_function(_name, __name__)
del _name

_host_median = globals()["median"]  # NumPy's, made by the loop above


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.median: on a GPU array (any LOOM_SORT_ENGINE=network array) along one axis or all, the
    array sorted on its device (_sortnet.py), the mean of the middle one or two elements (NumPy's dtype
    rules: ints give float64), NaN where a slice holds one (it sorts last); axis tuples and empty
    arrays go through NumPy on a host copy."""
    from . import _sorting
    x = asarray(a)
    if (isinstance(axis, (tuple, list)) or x.size == 0 or x.ndim == 0 or _kind(x.dtype) == "c"
            or not _sorting._on_network(x)):
        return _host_median(a, axis=axis, out=out, overwrite_input=overwrite_input, keepdims=keepdims)
    flat = axis is None
    ax = x.ndim - 1 if flat else _norm_axis(axis, x.ndim)
    srt = _sorting.sort(x.reshape(-1) if flat else x, axis=-1 if flat else ax)
    nd = srt.ndim
    n = srt.shape[-1 if flat else ax]
    ax_s = nd - 1 if flat else ax
    mid = slice(n // 2, n // 2 + 1) if n % 2 else slice(n // 2 - 1, n // 2 + 1)
    r = _reductions.mean(srt[(slice(None),) * ax_s + (mid,)], axis=ax_s, keepdims=True)
    if _has_nan(x):
        last = srt[(slice(None),) * ax_s + (slice(n - 1, n),)]
        r = _core.where(_u("isnan", last), _core.cast(last, r._dtype_code), r)
    if flat:
        r = r.reshape((1,) * x.ndim if keepdims else ())
    elif not keepdims:
        r = r.reshape(tuple(d for i, d in enumerate(r.shape) if i != ax_s))
    return r if out is None else _finish(r, out, "unsafe")


_host_quantile, _host_percentile = globals()["quantile"], globals()["percentile"]
_host_bincount, _host_digitize = globals()["bincount"], globals()["digitize"]


def _writable(a):
    from ._ndarray import ndarray
    return isinstance(a, ndarray) and not a._tracer


def _overwriting(np_fn, a, q, out, kw):
    """np_fn(a, q, overwrite_input=True, **kw) by NumPy on a's own memory (a host copy written back for a
    GPU array): NumPy partitions the input in place, as overwrite_input allows (CuPy does the same)."""
    from ._host_fallback import _host_update, _from_host, _to_host
    res = []
    kw = {k: _to_host(v) for k, v in kw.items()}
    _host_update(a, lambda h: res.append(np_fn(h, _to_host(q), overwrite_input=True, **kw)))
    r = _from_host(res[0], a._device)
    return r if out is None else _finish(r, out, "unsafe")


def _quantile_call(percent, a, q, axis, out, overwrite_input, method, keepdims, weights, interpolation):
    """quantile (percent False) or percentile: the device path (_order_stats.py), else NumPy's: in place on
    a's own memory with overwrite_input (_overwriting), or on a host copy."""
    from . import _order_stats
    r = _order_stats.quantile_or_none(a, q, axis, out, method, keepdims, weights, interpolation, percent)
    if r is not None:
        return r
    kw = dict(axis=axis, method=method, keepdims=keepdims, weights=weights)
    if interpolation is not None:
        kw["interpolation"] = interpolation
    if overwrite_input and _writable(a):
        return _overwriting(numpy.percentile if percent else numpy.quantile, a, q, out, kw)
    return (_host_percentile if percent else _host_quantile)(a, q, out=out, overwrite_input=overwrite_input, **kw)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
             interpolation=None):
    """numpy.quantile: on a GPU array (any LOOM_SORT_ENGINE=network array), for one axis or all and the
    methods linear, lower, higher, nearest and midpoint, sorted on its device and interpolated there with
    NumPy's positions and formula (_order_stats.py); otherwise NumPy's on a host copy."""
    return _quantile_call(False, a, q, axis, out, overwrite_input, method, keepdims, weights, interpolation)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
               interpolation=None):
    """numpy.percentile: quantile of q / 100 (see quantile: on the device where the array sorts there)."""
    return _quantile_call(True, a, q, axis, out, overwrite_input, method, keepdims, weights, interpolation)


def bincount(x, weights=None, minlength=0):
    """numpy.bincount: on a GPU array (any LOOM_SORT_ENGINE=network array) a scatter-add on its device
    (_order_stats.py); otherwise NumPy's on a host copy."""
    from . import _order_stats
    r = _order_stats.bincount_or_none(x, weights, minlength)
    if r is None and weights is None:
        r = _split_bincount(x, minlength)
    return r if r is not None else _host_bincount(x, weights, minlength)


_BINCOUNT_SPLIT_MIN = 1 << 18  # points a part of the threaded host bincount gets at least


def _split_bincount(x, minlength):
    """numpy.bincount of a large 1-d host integer array without weights as NumPy's on contiguous parts in
    loom.config.num_threads threads (NumPy's releases the GIL), the parts' counts added (exact integers:
    the same result). 2^22 int64 in [0, 1000) on 2 Zen 4 cores: 6.4 -> 3.5 ms (torch 3.5). None: not such a
    call (NumPy's, serial, then decides and validates)."""
    from ._ndarray import ndarray
    from ._config import config
    from ._host_fallback import _from_host
    threads = config.num_threads or 1
    if (not isinstance(x, ndarray) or x.ndim != 1 or x.dtype.kind not in "iu" or x.dtype == numpy.uint64
            or threads < 2 or x.size < 2 * _BINCOUNT_SPLIT_MIN or x._device[0] != 0):  # host arrays
        return None
    h = x._np()
    from ._host_parts import in_parts
    counts = []  # integer counts: their order of addition does not matter
    in_parts(h.size, lambda lo, hi: counts.append(numpy.bincount(h[lo:hi], None, minlength)),
             builtins.min(threads, h.size // _BINCOUNT_SPLIT_MIN))  # a negative value raises NumPy's ValueError here
    out = numpy.zeros(builtins.max(c.size for c in counts), dtype=counts[0].dtype)
    for c in counts:
        out[:c.size] += c
    return _from_host(out, x._device)


def digitize(x, bins, right=False):
    """numpy.digitize: on a GPU array (any LOOM_SORT_ENGINE=network array, or a host array of many points)
    searchsorted on its device after NumPy's checks of the bins (_order_stats.py); otherwise NumPy's on a
    host copy."""
    from . import _order_stats
    r = _order_stats.digitize_or_none(x, bins, right)
    return r if r is not None else _host_digitize(x, bins, right)


_host_cov, _host_corrcoef = globals()["cov"], globals()["corrcoef"]


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """numpy.cov: of loom arrays without weights, on their device (centred rows, one matmul:
    _covariance.py); otherwise NumPy's on a host copy."""
    from . import _covariance
    r = _covariance.cov_or_none(m, y, rowvar, bias, ddof, fweights, aweights, dtype)
    if r is not None:
        return r
    return _host_cov(m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """numpy.corrcoef: of loom arrays, on their device (cov, then the standard deviations: _covariance.py);
    otherwise NumPy's on a host copy."""
    from . import _covariance
    r = _covariance.corrcoef_or_none(x, y, rowvar, dtype)
    return r if r is not None else _host_corrcoef(x, y, rowvar, dtype=dtype)


_host_histogram = globals()["histogram"]


def histogram(a, bins=10, range=None, density=None, weights=None):
    """numpy.histogram: of a GPU array (any LOOM_SORT_ENGINE=network array) on its device with NumPy's
    edges and bin rule (_order_stats.py), the edges returned as an array on that device; otherwise
    NumPy's on a host copy."""
    from . import _order_stats
    r = _order_stats.histogram_or_none(a, bins, range, density, weights)
    return r if r is not None else _host_histogram(a, bins, range, density, weights)


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
