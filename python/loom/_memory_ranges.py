"""_memory_ranges.py: where arrays lie in memory (numpy.shares_memory, may_share_memory, byte_bounds) and
the who() listing of the arrays in a namespace, as CuPy's cupy/_misc. Addresses only: no array data is read,
so all of it works for GPU arrays too (pending arrays are evaluated first: their memory exists then)."""
import sys

import numpy

from . import _core
from ._ndarray import ndarray


class _Extent:
    """The address pattern of an array (pointer, shape, strides, item size) in NumPy's array interface,
    so that NumPy's overlap solver can reason about it: only addresses are examined, never the memory
    (which may be a GPU's)."""

    def __init__(self, ptr, shape, strides, itemsize):
        self.__array_interface__ = {"data": (ptr, False), "shape": shape, "strides": strides,
                                    "typestr": f"|V{itemsize}", "version": 3}


def _memory_of(x):
    """(device key, NumPy array with x's addresses) for a loom or NumPy array; None for anything else
    (a scalar or a list has no memory a loom array could share)."""
    if isinstance(x, ndarray):
        if x._tracer:
            raise TypeError("@loom.fuse: a traced value has no memory to compare")
        if x.size == 0:
            return x._device, None
        _core.eval(x)
        return x._device, numpy.asarray(_Extent(x._ptr, x.shape, x.strides, x.itemsize))
    if isinstance(x, numpy.ndarray):
        return (0, 0), x
    try:  # another host buffer (bytearray, memoryview, ...): NumPy's view of it has its addresses
        memoryview(x)
    except TypeError:
        return None  # a scalar or a list has no memory a loom array could share
    return (0, 0), numpy.asarray(x)


def _overlap(np_test, a, b, max_work):
    ma, mb = _memory_of(a), _memory_of(b)
    if ma is None or mb is None or ma[0] != mb[0] or ma[1] is None or mb[1] is None:
        return False
    return bool(np_test(ma[1], mb[1]) if max_work is None else np_test(ma[1], mb[1], max_work=max_work))


def shares_memory(a, b, max_work=None):
    """True when a and b have an element's memory in common (numpy.shares_memory: exact by default;
    max_work bounds the search as NumPy's does, numpy.exceptions.TooHardError beyond it). Pending
    arrays are evaluated first; arrays on different devices never share memory."""
    return _overlap(numpy.shares_memory, a, b, max_work)


def may_share_memory(a, b, max_work=None):
    """True when the address ranges of a and b overlap (numpy.may_share_memory: by default the bounds
    only, so it can answer True where shares_memory answers False)."""
    return _overlap(numpy.may_share_memory, a, b, max_work)


def byte_bounds(a):
    """(low, high): the first byte address a reaches and one past the last (numpy.lib.array_utils.byte_bounds;
    for an empty array both are a.data.ptr)."""
    if not isinstance(a, ndarray):
        raise TypeError(f"byte_bounds takes a loom array, not {type(a).__name__}")
    ptr = a.data.ptr or 0
    if a.size == 0:
        return ptr, ptr
    low = high = ptr
    for n, s in zip(a.shape, a.strides):
        if s < 0:
            low += (n - 1) * s
        else:
            high += (n - 1) * s
    return low, high + a.itemsize


def who(vardict=None):
    """Prints the loom arrays of vardict (default: the caller's globals) as a table of name, shape, bytes
    and dtype, then the total bytes (an array bound to several names counted once), as numpy.who did."""
    if vardict is None:
        vardict = sys._getframe(1).f_globals
    rows, first_name, total = [], {}, 0
    for name, value in vardict.items():
        if not isinstance(value, ndarray):
            continue
        alias = first_name.setdefault(id(value), name)
        if alias == name:
            total += value.nbytes
        label = name if alias == name else f"{name} ({alias})"
        rows.append((label, " x ".join(str(n) for n in value.shape), str(value.nbytes), value.dtype.name))
    if rows:
        w = [max(10, *(len(r[i]) for r in rows)) for i in range(3)]
        head = f"Name {' ' * w[0]} Shape {' ' * w[1]} Bytes {' ' * w[2]} Type"
        print(head + "\n" + "=" * (len(head) + 5) + "\n")
        for label, shape, nbytes, dt in rows:
            print(f"{label} {' ' * (w[0] - len(label) + 4)} {shape} {' ' * (w[1] - len(shape) + 5)} "
                  f"{nbytes} {' ' * (w[2] - len(nbytes) + 5)} {dt}")
    print(f"\nUpper bound on total bytes  =       {total}")


__all__ = ["shares_memory", "may_share_memory", "byte_bounds", "who"]
