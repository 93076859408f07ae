"""loom.linalg: norm (built from loom reductions, so it fuses with the expression it reads); det,
slogdet, cond and matrix_rank computed by NumPy (LAPACK) on a host copy: loom has no factorization
kernels yet (README's list of host-computed functions)."""
import numpy

from ._common import _from_numpy
from ._creation import asarray
from ._math import absolute, sqrt
from ._reductions import amax, amin, sum


def norm(x, ord=None, axis=None, keepdims=False):
    x = asarray(x)
    x0 = x
    if x.dtype.kind == "c":  # the vector norms and Frobenius read |x| (float32 for complex64, as NumPy)
        x = absolute(x)
    elif x.dtype.kind != "f":
        x = x.astype(numpy.float64)
    if axis is None and ord is None:
        r = sqrt(sum(x * x, axis=None, keepdims=keepdims))
        if keepdims:
            return r.reshape((1,) * x.ndim)
        return r
    if isinstance(axis, int) or (axis is None and x.ndim == 1):
        ax = axis
        if ord is None or ord == 2:
            return sqrt(sum(x * x, axis=ax, keepdims=keepdims))
        if ord == numpy.inf:
            return amax(absolute(x), axis=ax, keepdims=keepdims)
        if ord == -numpy.inf:
            return amin(absolute(x), axis=ax, keepdims=keepdims)
        if ord == 1:
            return sum(absolute(x), axis=ax, keepdims=keepdims)
        if ord == 0:
            return sum((x != 0).astype(x.dtype), axis=ax, keepdims=keepdims)
        return sum(absolute(x) ** ord, axis=ax, keepdims=keepdims) ** (1.0 / ord)
    if ord in (None, "fro"):
        return sqrt(sum(x * x, axis=axis, keepdims=keepdims))
    return _from_numpy(numpy.asarray(numpy.linalg.norm(x0.get(), ord, axis, keepdims)), copy=True)


def _host_linalg(name):
    fn = getattr(numpy.linalg, name)

    def f(*args, **kw):
        from ._ndarray import _host_call
        return _host_call(fn, *args, **kw)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"loom.linalg.{name}: like numpy.linalg.{name}, computed by NumPy (LAPACK) on a host copy; "
                 "the result a loom array on the input's device")
    return f


det = _host_linalg("det")
slogdet = _host_linalg("slogdet")
cond = _host_linalg("cond")
matrix_rank = _host_linalg("matrix_rank")
