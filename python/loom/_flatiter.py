"""_flatiter.py: ndarray.flat, CuPy's flatiter (moved out of _ndarray.py, which re-exports it)."""
import numpy

from ._ndarray import ndarray
from ._host_fallback import _host_update
from . import _creation, _selection


class _FlatIter:
    """a.flat: the elements of a in C order, indexable as a 1-d array (CuPy's flatiter): an int, a slice
    or Ellipsis (CuPy's set; other keys are an IndexError); assigning a value of another size repeats
    it cyclically, as NumPy does."""

    __slots__ = ("base", "_pos")

    def __init__(self, a):
        self.base = a
        self._pos = 0

    def __len__(self):
        return self.base.size

    def __iter__(self):
        return self

    def __next__(self):
        if self._pos >= self.base.size:
            raise StopIteration
        self._pos += 1
        return self.base.ravel()[self._pos - 1]

    @staticmethod
    def _key(key):
        if key is Ellipsis:
            return slice(None)
        if isinstance(key, slice) or (isinstance(key, (int, numpy.integer)) and not isinstance(key, (bool, numpy.bool_))):
            return key
        if isinstance(key, (list, ndarray, numpy.ndarray)):  # integer arrays, as NumPy takes them
            k = numpy.asarray(key.get() if isinstance(key, ndarray) else key)
            if k.dtype.kind in "iu" or (k.size == 0 and k.dtype.kind == "f"):
                return k.astype(numpy.intp)
        raise IndexError(f"unsupported iterator index: {key!r} (a.flat takes an int, a slice, Ellipsis or an "
                         "integer array)")

    def __getitem__(self, key):
        return self.base.ravel()[self._key(key)]

    def __setitem__(self, key, value):
        a = self.base
        key = self._key(key)
        if isinstance(value, ndarray):
            n = (len(range(*key.indices(a.size))) if isinstance(key, slice) else
                 key.size if isinstance(key, numpy.ndarray) else 1)
            value = value.ravel()
            if value.size != n and value.size:  # NumPy repeats the values over the positions
                value = _selection.take(value, _creation.arange(n) % value.size)
        if a.flags.c_contiguous and not a._lazy:
            a.reshape(a.size)[key] = value  # a view of a's memory
            return
        v = value._np() if isinstance(value, ndarray) else value
        _host_update(a, lambda h: h.flat.__setitem__(key, v))

    def copy(self):
        return self.base.flatten()
