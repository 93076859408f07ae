"""_complex.py: complex numbers: the parts of an array (real, imag: views of its memory, as NumPy's),
conjugate, angle, and the complex predicates (iscomplexobj, isrealobj, iscomplex, isreal).

a.real and a.imag of a complex array are strided views of float32/float64 items inside the complex
memory (a pending array is evaluated first, as for every view), so writes through them reach the
array; values traced by @loom.fuse get graph ops instead (a trace has no memory). A real array's
.real is a view of itself and its .imag a new array of zeros (NumPy makes it read-only).
"""
import numpy

from . import _core
from ._common import _OPS
from ._ndarray import ndarray, _operand, _finish
from ._creation import asarray, zeros, ones


def _is_complex(a):
    return a.dtype.kind == "c"


def _part_dtype(a):
    return numpy.float32 if a.dtype == numpy.complex64 else numpy.float64


def _real(a):
    if a._tracer:
        return _core.unary(_OPS["real"], a)
    if not _is_complex(a):
        return a  # NumPy's and CuPy's a.real of a real array is a itself
    return a._numpy_view(lambda v: v.real, _part_dtype(a))


def _imag(a):
    if a._tracer:
        return _core.unary(_OPS["imag"], a)
    if not _is_complex(a):
        return zeros(a.shape, a.dtype)
    return a._numpy_view(lambda v: v.imag, _part_dtype(a))


def _set_part(a, value, imag):
    if imag and not _is_complex(a):
        raise TypeError("array does not have imaginary part to set")
    part = _imag(a) if imag else _real(a)
    part[...] = value


def real(val):
    """The real part: a view for loom arrays (numpy.real); other objects through NumPy."""
    if isinstance(val, ndarray):
        return val.real
    return asarray(numpy.real(val))


def imag(val):
    """The imaginary part: a view for complex loom arrays (numpy.imag)."""
    if isinstance(val, ndarray):
        return val.imag
    return asarray(numpy.imag(val))


def conjugate(x, out=None):
    """Complex conjugate, elementwise (a copy for real arrays; bool gives int8, as NumPy)."""
    x = _operand(x)
    if not isinstance(x, ndarray):
        x = asarray(x)
    return _finish(_core.unary(_OPS["conj"], x), out)


conj = conjugate


def angle(z, deg=False):
    """The counterclockwise angle from the positive real axis: arctan2(imag, real) (numpy.angle)."""
    z = asarray(z)
    if _is_complex(z):
        a = _core.binary(_OPS["atan2"], _core.unary(_OPS["imag"], z), _core.unary(_OPS["real"], z))
    else:
        a = _core.binary(_OPS["atan2"], 0, z)
    if deg:
        a = _core.binary(_OPS["mul"], a, 180.0 / numpy.pi)
    return a


def iscomplexobj(x):
    """True if x has a complex dtype (whatever its values)."""
    if isinstance(x, ndarray):
        return _is_complex(x)
    return numpy.iscomplexobj(x)


def isrealobj(x):
    return not iscomplexobj(x)


def iscomplex(x):
    """Elementwise: the imaginary part is nonzero (False everywhere for real dtypes)."""
    x = asarray(x)
    if not _is_complex(x):
        return zeros(x.shape, numpy.bool_)
    return _core.binary(_OPS["ne"], _core.unary(_OPS["imag"], x), 0)


def isreal(x):
    """Elementwise: the imaginary part is zero (True everywhere for real dtypes)."""
    x = asarray(x)
    if not _is_complex(x):
        return ones(x.shape, numpy.bool_)
    return _core.binary(_OPS["eq"], _core.unary(_OPS["imag"], x), 0)


__all__ = ["real", "imag", "conjugate", "conj", "angle", "iscomplexobj", "isrealobj", "iscomplex", "isreal"]
