"""_covariance.py: cov and corrcoef of loom arrays on their device: the variables centred by their means
(in the input's memory order, _centred_product), one product of the centred rows with their conjugate transpose (matmul: cuBLAS
on NVIDIA GPUs, the host BLAS on the host), scaled by 1 / (samples - ddof); corrcoef divides by the outer
product of the standard deviations and clips to [-1, 1], as NumPy does. NumPy's argument checks and dtype
rules; weights (fweights, aweights) and non-loom inputs go to NumPy (_statistics.py)."""
import warnings

import numpy

from . import _core
from ._common import _OPS, _kind
from ._ndarray import ndarray
from ._creation import asarray


def _rows(v, rowvar):
    """v as a 2-d (variables x observations) array: a view, in v's dtype (the cast is left to the product)."""
    x = asarray(v)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x2 = x.reshape((1, x.size)) if x.ndim < 2 else x
    return x2.T if not rowvar and x.ndim == 2 else x2


def _centred_product(x, dtype, fact):
    """x (variables x observations) centred by each variable's mean, times its conjugate transpose, scaled
    by 1 / fact: NumPy's cov after its argument handling.

    The work follows x's memory: where the observations are the slow axis (X.T of a C-ordered X, or
    rowvar=False) the centring runs on the (observations x variables) array as it lies and the product
    is t^H t of that one centred buffer, so no transposed copy is made. The means are a reduction of
    their own, evaluated before the map that subtracts them: fused into one kernel, a reduction along a
    strided axis walks the rows once per column (4096 x 64 float32: 0.24 ms against 0.055). The scale
    is a Python float, which the product takes as its alpha (passes/calls.c), and a real product of a
    buffer with its own transpose is the host BLAS's syrk (runtime/host_blas.c)."""
    from ._reductions import mean
    from ._products import matmul, _cast
    with numpy.errstate(divide="ignore"):
        scale = float(numpy.true_divide(1, fact))
    cplx = dtype.kind == "c"
    t = x.T if not x._lazy and not x._tracer and x.ndim == 2 and abs(x.strides[0]) < abs(x.strides[1]) else None
    if t is not None:  # observations x variables in memory order
        t = _cast(t, dtype)
        m = mean(t, axis=0, keepdims=True)
        if not t._tracer:
            _core.eval(m)
        tc = t - m
        if not tc._tracer:
            _core.eval(tc)
        return matmul(tc.T, tc.conj() if cplx else tc) * scale  # X X^H with X = tc^T
    x = _cast(x, dtype)
    xc = x - mean(x, axis=1, keepdims=True)
    if not xc._tracer:
        _core.eval(xc)
    xt = xc.T.conj() if cplx else xc.T
    return matmul(xc, xt) * scale


def cov_or_none(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    """numpy.cov of loom arrays without weights on their device, or None for NumPy's."""
    if fweights is not None or aweights is not None or not isinstance(m, ndarray) or \
            (y is not None and not isinstance(y, ndarray)):
        return None
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    if m.ndim > 2 or (y is not None and y.ndim > 2):
        raise ValueError(("m" if m.ndim > 2 else "y") + " has more than 2 dimensions")
    if dtype is None:
        dtype = numpy.result_type(m.dtype, numpy.float64) if y is None else \
            numpy.result_type(m.dtype, y.dtype, numpy.float64)
    dtype = numpy.dtype(dtype)
    if dtype.kind not in "fc":
        return None
    x = _rows(m, rowvar)
    if x.shape[0] == 0:
        return asarray(numpy.array([]).reshape(0, 0))
    if y is not None:
        from ._products import _cast
        yy = asarray(y)
        yy = yy.reshape((1, yy.size)) if yy.ndim < 2 else yy
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        from ._manipulation import concatenate
        x = concatenate((_cast(x, dtype), _cast(yy, dtype)), axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    fact = x.shape[1] - ddof
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
        fact = 0.0
    return _centred_product(x, dtype, fact).squeeze()


def corrcoef_or_none(x, y=None, rowvar=True, dtype=None):
    """numpy.corrcoef of loom arrays on their device (cov_or_none, then the standard deviations), or None."""
    c = cov_or_none(x, y, rowvar, dtype=dtype)
    if c is None:
        return None
    if c.ndim != 2:
        return c / c  # a scalar covariance: nan where it is nan, inf or 0, else 1
    from ._selection import diagonal
    d = diagonal(c)
    std = _core.unary(_OPS["sqrt"], d.real if _kind(c.dtype) == "c" else d)
    c = c / std.reshape((std.shape[0], 1))
    c = c / std.reshape((1, std.shape[0]))
    from ._math import clip
    if _kind(c.dtype) == "c":
        return clip(c.real, -1, 1) + 1j * clip(c.imag, -1, 1)
    return clip(c, -1, 1)
