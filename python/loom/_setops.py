"""_setops.py: set operations on 1-d arrays (intersect1d, setdiff1d, setxor1d, union1d) and
array_equiv: CuPy's cupy/_logic/truth.py and cupy/lib/_arraysetops.

Each is NumPy's sort-based algorithm written with loom's own sort, unique, isin, comparisons and
boolean selection (the results have data-dependent sizes, so the selections end in a compaction).
The steps between the sorts run as traced stages (loom.fuse: _sorting.sorted_select, _stage here): their
inputs are new buffers every call (a sort's or unique's results), which in the ordinary lazy graph are new
inputs and so new plans every call; a traced stage rebinds its inputs and reuses its plan.
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


_STAGES: dict = {}  # stage function -> its Fusion


def _stage(fn):
    """fn as a loom.fuse function (one per stage; traced once per signature)."""
    f = _STAGES.get(fn)
    if f is None:
        from ._fuse import Fusion
        f = _STAGES[fn] = Fusion(fn, fn.__name__)
    return f


def _cat_stage(a, b):
    """concatenate([a, b]) of two 1-d arrays as one gather each (traceable; concatenate is not)."""
    from . import _core
    from ._common import _code
    code = _code(numpy.result_type(a.dtype, b.dtype))
    na = a.shape[0]
    i = _core.iota((na + b.shape[0],), a)
    ga = _core.gather(_core.cast(a, code), i, 0, 2)  # mode 2: clip (the other side's points)
    gb = _core.gather(_core.cast(b, code), _core.binary(_core.ops["sub"], i, na), 0, 2)
    return _core.where(_core.binary(_core.ops["lt"], i, na), ga, gb)


def _select_stage(v, m):
    fulls, count = _sorting().compact_traced(m, [v], v)
    return fulls[0], count


def _take_stage(ind, pos, off):
    from ._indexing import _take
    return _take(ind, pos - off, 0, "clip")


def _shift_stage(pos, off):
    return pos - off


def _cat(a, b):
    return _stage(_cat_stage)(a, b) if a.size and b.size else _manipulation.concatenate([a, b])


def _select(v, m):
    """v[m] (1-d) through one traced compaction, trimmed to its count."""
    if v.size == 0:
        return v
    full, count = _stage(_select_stage)(v, m)
    k = int(count[0])
    return _sorting()._prefix(full, k)


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
    return _select(a, isin(a, ar2, assume_unique=assume_unique, invert=True))


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted unique values that are in exactly one of the arrays, like numpy.setxor1d."""
    srt = _sorting()
    aux = _cat(_unique_or_ravel(ar1, assume_unique), _unique_or_ravel(ar2, assume_unique))
    if aux.size == 0:
        return aux
    return srt.sorted_select(srt.sort(aux), None, srt.KEEP_SINGLE)[0]


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
    aux = _cat(a, b)
    if not return_indices:
        return srt.sorted_select(srt.sort(aux), None, srt.KEEP_REPEAT)[0]
    aux, order = srt.sort_index(aux)
    common, first, second = srt.sorted_select(aux, order, srt.KEEP_REPEAT)
    if assume_unique:
        return common, first, _stage(_shift_stage)(second, a.size)
    return common, _stage(_take_stage)(ind1, first, 0), _stage(_take_stage)(ind2, second, a.size)


__all__ = ["array_equiv", "union1d", "setdiff1d", "setxor1d", "intersect1d"]
