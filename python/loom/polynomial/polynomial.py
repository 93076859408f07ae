"""loom.polynomial.polynomial: power series (numpy.polynomial.polynomial's polyvander and polycompanion),
computed on the device."""
from .. import _creation
from .._manipulation import stack, concatenate, moveaxis
from . import polyutils as pu


def polyvander(x, deg):
    """The Vandermonde matrix of x up to degree deg: [..., i] = x**i, the powers by repeated products as
    NumPy forms them (so the values match its roundings); x is at least 1-d and inexact (x + 0.0)."""
    ideg = pu._as_int(deg, "deg")
    if ideg < 0:
        raise ValueError("deg must be non-negative")
    x = _creation.array(x, copy=False, ndmin=1) + 0.0
    cols = [x * 0 + 1]
    if ideg > 0:
        cols.append(x)
    for _ in range(2, ideg + 1):
        cols.append(cols[-1] * x)
    return moveaxis(stack(cols), 0, -1)  # NumPy's layout: the degree axis outermost in memory


def polycompanion(c):
    """The companion matrix of the power series c (trailing zeros dropped): ones below the diagonal and
    -c[:-1] / c[-1] in the last column; ValueError below degree 1."""
    [c] = pu.as_series([c])
    if len(c) < 2:
        raise ValueError("Series must have maximum degree of at least 1.")
    if len(c) == 2:
        return (-c[0] / c[1]).reshape(1, 1)
    n = len(c) - 1
    sub = _creation.eye(n, n - 1, k=-1, dtype=c.dtype)
    last = 0 - c[:-1] / c[-1]
    return concatenate([sub, last.reshape(n, 1)], axis=1)


__all__ = ["polyvander", "polycompanion"]
