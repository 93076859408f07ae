"""_manipulation.py: shapes and dtypes of arrays (reshape, transpose, ravel, squeeze, expand_dims,
broadcast_to, astype, copy, result_type, can_cast) and joining arrays (concatenate, stack, on the host
for now). Views share memory with their base as NumPy's do; a tracer's reshapes are graph nodes.
"""
import operator

import numpy

from . import _core
from ._common import _shape_tuple
from ._ndarray import ndarray, _finish, _host
from ._creation import asarray


def reshape(a, newshape, order="C"):
    return asarray(a).reshape(newshape, order=order)


def transpose(a, axes=None):
    return asarray(a).transpose(axes)


def ravel(a, order="C"):
    return asarray(a).ravel()


def squeeze(a, axis=None):
    return asarray(a).squeeze(axis)


def swapaxes(a, axis1, axis2):
    return asarray(a).swapaxes(axis1, axis2)


def expand_dims(a, axis):
    a = asarray(a)
    if a._tracer:
        return _core.movement(4, a, operator.index(axis), None, None)
    return a._numpy_view(lambda v: numpy.expand_dims(v, axis))


def broadcast_to(a, shape):
    a = asarray(a)
    shape = _shape_tuple(shape)
    if a._tracer:
        return _core.movement(2, a, shape, None, None)
    return a._numpy_view(lambda v: numpy.broadcast_to(v, shape))


def astype(a, dtype, copy=True):
    return asarray(a).astype(dtype, copy=copy)


def copy(a, order="K"):
    return asarray(a).copy()


def shape(a):
    return asarray(a).shape


def ndim(a):
    return asarray(a).ndim


def size(a):
    return asarray(a).size


def result_type(*args):
    return numpy.result_type(*[a.dtype if isinstance(a, ndarray) else a for a in args])


def can_cast(from_, to, casting="safe"):
    return numpy.can_cast(from_.dtype if isinstance(from_, ndarray) else from_, to, casting)


def concatenate(arrays, axis=0, out=None, dtype=None):
    return _finish(_host(lambda *xs: numpy.concatenate(xs, axis=axis, dtype=dtype), *map(asarray, arrays)), out)


def stack(arrays, axis=0, out=None):
    return _finish(_host(lambda *xs: numpy.stack(xs, axis=axis), *map(asarray, arrays)), out)


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
