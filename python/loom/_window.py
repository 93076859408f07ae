"""_window.py: window functions (bartlett, blackman, hamming, hanning, kaiser), CuPy's
cupy/_math/window.py: float64 arrays of M points, each one fused elementwise kernel over an index
range, with NumPy's formulas (M < 1 gives an empty array, M == 1 a single 1). kaiser needs i0, which
loom computes on the host (loom.i0), so kaiser's Bessel values come from NumPy there.
"""
import numpy

from ._creation import arange, ones, empty


def _centered(M):
    """n = 1 - M, 3 - M, ..., M - 1 as float64 (NumPy's symmetric index), or None for M < 2."""
    return arange(1 - M, M, 2, dtype=numpy.float64)


def _trivial(M):
    if M < 1:
        return empty(0, numpy.float64)
    if M == 1:
        return ones(1, numpy.float64)
    return None


def bartlett(M):
    """The Bartlett (triangular) window of M points, like numpy.bartlett."""
    M = int(M)
    t = _trivial(M)
    if t is not None:
        return t
    n = _centered(M)
    from ._indexing import where
    return where(n <= 0, 1 + n / (M - 1), 1 - n / (M - 1))


def _cosine_window(M, a0, a1, a2=0.0):
    M = int(M)
    t = _trivial(M)
    if t is not None:
        return t
    from ._math import cos
    x = _centered(M) * (numpy.pi / (M - 1))
    r = a0 + a1 * cos(x)
    return r + a2 * cos(2 * x) if a2 else r


def blackman(M):
    """The Blackman window of M points, like numpy.blackman."""
    return _cosine_window(M, 0.42, 0.5, 0.08)


def hamming(M):
    """The Hamming window of M points, like numpy.hamming."""
    return _cosine_window(M, 0.54, 0.46)


def hanning(M):
    """The Hann window of M points, like numpy.hanning."""
    return _cosine_window(M, 0.5, 0.5)


def kaiser(M, beta):
    """The Kaiser window of M points with shape beta, like numpy.kaiser (the Bessel function i0 is
    computed on the host, as loom.i0 is)."""
    M = int(M)
    if M == 1:
        return ones(1, numpy.float64)
    if M < 1:
        return empty(0, numpy.float64)
    from ._math import sqrt
    from ._numeric import i0
    alpha = (M - 1) / 2.0
    n = arange(0, M, dtype=numpy.float64)
    return i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / i0(numpy.float64(beta))


__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]
