"""cupy._core.internal: the helpers of CuPy's internals that cupy.testing and the tests call."""
import math as _math
import operator as _operator

from .. import _shim


def prod(args):
    """The product of a sequence of ints (1 for an empty one)."""
    return _math.prod(_operator.index(a) for a in args)


def get_size(size):
    """CuPy's size argument as a shape tuple (None: ()), by loom's own shape normalisation."""
    from loom._common import _shape_tuple
    return () if size is None else _shape_tuple(size)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy._core.internal.{name}")
