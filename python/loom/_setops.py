"""_setops.py: set operations on 1-d arrays (intersect1d, setdiff1d, setxor1d, union1d) and
array_equiv: CuPy's cupy/_logic/truth.py and cupy/lib/_arraysetops.

Each is NumPy's sort-based algorithm written with loom's own sort, unique, isin, comparisons and
boolean selection (the results have data-dependent sizes, so the selections end in a compaction).
"""
import numpy

from ._creation import asarray
from . import _manipulation


def _sorting():
    from . import _sorting  # late: the sort kernels live in _sorting (another module's concern)
    return _sorting


def array_equiv(a1, a2):
    """True when a1 and a2 broadcast to one shape and are equal everywhere, like numpy.array_equiv
    (a Python bool)."""
    a, b = asarray(a1), asarray(a2)
    try:
        numpy.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return False
    return bool((a == b).all())


def _unique_or_ravel(x, assume_unique):
    x = asarray(x).ravel()
    return x if assume_unique else _sorting().unique(x)


def union1d(ar1, ar2):
    """The sorted unique values in either array, like numpy.union1d."""
    return _sorting().unique(_manipulation.concatenate([asarray(ar1).ravel(), asarray(ar2).ravel()]))


def setdiff1d(ar1, ar2, assume_unique=False):
    """The unique values of ar1 that are not in ar2 (sorted unless assume_unique), like numpy.setdiff1d."""
    a = _unique_or_ravel(ar1, assume_unique)
    from ._selection import isin
    return a[isin(a, ar2, assume_unique=assume_unique, invert=True)]


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted unique values that are in exactly one of the arrays, like numpy.setxor1d."""
    aux = _manipulation.concatenate([_unique_or_ravel(ar1, assume_unique), _unique_or_ravel(ar2, assume_unique)])
    if aux.size == 0:
        return aux
    aux = _sorting().sort(aux)
    edge = asarray(numpy.array([True]))
    flag = _manipulation.concatenate([edge, aux[1:] != aux[:-1], edge])
    return aux[flag[1:] & flag[:-1]]


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted unique values in both arrays; with return_indices also the indices of their first
    occurrences in ar1 and ar2, like numpy.intersect1d."""
    srt = _sorting()
    a, b = asarray(ar1).ravel(), asarray(ar2).ravel()
    if not assume_unique:
        if return_indices:
            a, ind1 = srt.unique(a, return_index=True)
            b, ind2 = srt.unique(b, return_index=True)
        else:
            a, b = srt.unique(a), srt.unique(b)
    aux = _manipulation.concatenate([a, b])
    if return_indices:
        order = srt.argsort(aux, kind="stable")
        aux = aux[order]
    else:
        aux = srt.sort(aux)
    same = aux[1:] == aux[:-1]
    common = aux[:-1][same]
    if not return_indices:
        return common
    first = order[:-1][same]
    second = order[1:][same] - a.size
    if not assume_unique:
        first, second = ind1[first], ind2[second]
    return common, first, second


__all__ = ["array_equiv", "union1d", "setdiff1d", "setxor1d", "intersect1d"]
