"""loom.polynomial.polyutils: coefficient series as lists of 1-d loom arrays (numpy.polynomial.polyutils'
contract: as_series, trimseq, trimcoef)."""
import operator

import numpy

from .._ndarray import ndarray
from .._creation import array, asarray


def _last_nonzero(mask):
    """Index of the last True of a 1-d host mask, -1 when there is none."""
    nz = numpy.flatnonzero(mask)
    return int(nz[-1]) if nz.size else -1


def _as_int(x, desc):
    """x as a Python int when it is integral by type (operator.index), else NumPy's TypeError."""
    try:
        return operator.index(x)
    except TypeError as e:
        raise TypeError(f"{desc} must be an integer, received {x}") from e


def trimseq(seq):
    """seq without its trailing zeros, the first element kept when all are zero (a view of seq)."""
    if len(seq) == 0:
        return seq
    if not isinstance(seq, ndarray):
        return numpy.polynomial.polyutils.trimseq(seq)
    if seq.ndim != 1:
        raise ValueError("The truth value of an array with more than one element is ambiguous. "
                         "trimseq takes a 1-d coefficient series")
    last = _last_nonzero((seq != 0).get())
    return seq if last == len(seq) - 1 else seq[:max(last, 0) + 1]


def _rows(alist):
    """The series of alist as 1-d (at least) loom arrays, with the trimmed length of each when alist is one
    loom array (one host read of its nonzero mask for all rows)."""
    if isinstance(alist, ndarray):
        if alist.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        rows = [alist[i].reshape(-1) if alist.ndim == 1 else alist[i] for i in range(alist.shape[0])]
        mask = (alist != 0).get()
        if alist.ndim == 1:
            mask = mask.reshape(-1, 1)
        keep = [max(_last_nonzero(m), 0) + 1 if m.ndim == 1 else None for m in mask]
        return rows, keep
    rows = [array(a, copy=False, ndmin=1) if isinstance(a, ndarray) else asarray(numpy.array(a, ndmin=1))
            for a in alist]
    return rows, [None] * len(rows)


def as_series(alist, trim=True):
    """alist (a 1-d or 2-d array, or a sequence of array-likes) as a list of 1-d loom arrays of one common
    inexact dtype (numpy.polyutils.as_series: a 1-d array gives one series per element; trim drops
    trailing zeros; ValueError for empty or more-dimensional series or dtypes without a common type)."""
    rows, keep = _rows(alist)
    for a in rows:
        if a.size == 0:
            raise ValueError("Coefficient array is empty")
        if a.ndim != 1:
            raise ValueError("Coefficient array is not 1-d")
    if trim:
        rows = [a[:k] if k is not None else trimseq(a) for a, k in zip(rows, keep)]
    try:
        dtype = numpy.common_type(*[numpy.empty(0, a.dtype) for a in rows])
    except TypeError as e:
        raise ValueError("Coefficient arrays have no common type") from e
    return [a.astype(dtype, copy=True) for a in rows]


def trimcoef(c, tol=0):
    """c without its trailing coefficients of absolute value at most tol ([0] when none is left), in the
    dtype as_series gives."""
    if tol < 0:
        raise ValueError("tol must be non-negative")
    [c] = as_series([c])
    last = _last_nonzero((abs(c) > tol).get())
    if last < 0:
        return c[:1] * 0
    return c[:last + 1].copy()


__all__ = ["as_series", "trimseq", "trimcoef"]
