"""loom.lib.stride_tricks: views of an array's memory with chosen geometry (as_strided,
sliding_window_view), as CuPy's: no copy; the geometry is NumPy's, computed without reading data."""
import numpy

from .._creation import asarray


def as_strided(x, shape=None, strides=None):
    """A view of x's memory with the given shape and strides in bytes (numpy.lib.stride_tricks.as_strided;
    as there, the caller keeps the view inside x's memory: nothing checks it)."""
    x = asarray(x)
    return x._numpy_view(lambda v: numpy.lib.stride_tricks.as_strided(v, shape=shape, strides=strides))


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """Every window of window_shape over the given axes of x, as one view (numpy's sliding_window_view:
    the window dimensions last). writeable=True is refused as CuPy refuses it: windows overlap, so a write
    through one lands in others, and loom's parallel writes to overlapping elements are unordered."""
    if writeable:
        raise NotImplementedError("sliding_window_view(writeable=True) is not supported: the windows overlap "
                                  "and parallel writes through them are unordered; write to x instead")
    x = asarray(x)
    return x._numpy_view(lambda v: numpy.lib.stride_tricks.sliding_window_view(v, window_shape, axis))


__all__ = ["as_strided", "sliding_window_view"]
