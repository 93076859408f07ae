"""_shape_base.py: splitting arrays (split, array_split, hsplit, vsplit, dsplit), broadcasting objects
(broadcast, broadcast_shapes), applying a function along axes (apply_along_axis, apply_over_axes),
layout requirements (require, isfortran, asarray_chkfinite) and row_stack: CuPy's
cupy/_manipulation/{split,dims,kind}.py and cupy/lib/_shape_base.py.

Splits are basic-slice views (no copy, fused like any view); apply_along_axis calls the function once
per 1-d slice, as NumPy and CuPy do, and stacks the results.
"""
import operator
import warnings

import numpy

from ._common import _np_dtype_of, _norm_axis
from ._creation import asarray, empty
from . import _manipulation


def array_split(ary, indices_or_sections, axis=0):
    """Views of ary split along axis into sections: an int N gives N parts whose sizes differ by at most
    one (the first ones longer); a sequence gives the split points (clipped to the axis, unordered points
    give empty parts), like numpy.array_split."""
    a = asarray(ary)
    axis = _norm_axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(indices_or_sections, (int, numpy.integer)) and not isinstance(indices_or_sections, bool):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        points = [0]
        for s in sizes:
            points.append(points[-1] + s)
    else:
        points = [0] + [operator.index(i) for i in indices_or_sections] + [n]
    out = []
    for start, stop in zip(points[:-1], points[1:]):
        key = [slice(None)] * a.ndim
        key[axis] = slice(start, stop)
        out.append(a[tuple(key)])
    return out


def split(ary, indices_or_sections, axis=0):
    """Like array_split, but an int N must divide the axis length, as numpy.split requires."""
    a = asarray(ary)
    if isinstance(indices_or_sections, (int, numpy.integer)) and not isinstance(indices_or_sections, bool):
        ax = _norm_axis(axis, a.ndim)
        if indices_or_sections <= 0 or a.shape[ax] % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
    return array_split(a, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """split along the second axis (the first for 1-d arrays), like numpy.hsplit."""
    a = asarray(ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """split along the first axis of an array of 2 or more dimensions, like numpy.vsplit."""
    a = asarray(ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """split along the third axis of an array of 3 or more dimensions, like numpy.dsplit."""
    a = asarray(ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, 2)


def broadcast_shapes(*shapes):
    """The shape that arrays of these shapes broadcast to (ValueError when they do not), like
    numpy.broadcast_shapes."""
    return numpy.broadcast_shapes(*shapes)


class broadcast:
    """The broadcast of arrays (CuPy's cupy.broadcast): .shape, .size, .nd / .ndim, .numiter and .values
    (the arrays as broadcast views). ValueError when the shapes do not broadcast."""

    def __init__(self, *arrays):
        self.values = tuple(_manipulation.broadcast_arrays(*arrays))
        self.shape = numpy.broadcast_shapes(*(v.shape for v in self.values)) if self.values else ()
        self.size = int(numpy.prod(self.shape, dtype=numpy.int64))
        self.nd = self.ndim = len(self.shape)
        self.numiter = len(self.values)


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """Deprecated alias of vstack (NumPy 2 warns the same way)."""
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.", DeprecationWarning, stacklevel=2)
    return _manipulation.vstack(tup, dtype=dtype, casting=casting)


def isfortran(a):
    """True when a is Fortran-contiguous and not C-contiguous, like numpy.isfortran."""
    return bool(a.flags.f_contiguous and not a.flags.c_contiguous)


_REQUIREMENTS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
                 "FORTRAN": "F", "O": "O", "OWNDATA": "O"}


def require(a, dtype=None, requirements=None):
    """a as an array of dtype that meets the requirements ('C'/'C_CONTIGUOUS', 'F'/'F_CONTIGUOUS',
    'O'/'OWNDATA'), copied only when needed, like CuPy's cupy.require: 'C' and 'F' together, another
    flag (NumPy's 'A', 'W', 'E': every loom array is aligned and writeable) or an unknown dtype are a
    ValueError."""
    if dtype is not None:
        try:
            dtype = _np_dtype_of(dtype)
        except TypeError:
            raise ValueError(f"require: incorrect dtype {dtype!r}") from None
    if requirements is None:
        reqs = set()
    else:
        if isinstance(requirements, str):
            requirements = [requirements]
        try:
            reqs = {_REQUIREMENTS[str(r).upper()] for r in requirements}
        except KeyError as e:
            raise ValueError(f"require: incorrect flag requirement {e.args[0]!r} (loom takes 'C', 'F' and 'O' "
                             "or their long names, as CuPy)") from None
    if "C" in reqs and "F" in reqs:
        raise ValueError("Cannot specify both C and Fortran contiguous.")
    order = "C" if "C" in reqs else "F" if "F" in reqs else None
    r = asarray(a, dtype=dtype, order=order)
    if "O" in reqs and r is a:
        r = r.copy(order="K")
    return r


def asarray_chkfinite(a, dtype=None, order=None):
    """asarray that raises ValueError when the array holds inf or NaN, like numpy.asarray_chkfinite."""
    r = asarray(a, dtype=dtype, order=order)
    if r.dtype.kind in "fc" and r.size:
        from ._math import isfinite
        if not bool(isfinite(r).all()):
            raise ValueError("array must not contain infs or NaNs")
    return r


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to each 1-d slice of arr along axis (one call per slice, as NumPy and CuPy do); the
    results, arrays or scalars, are stacked where that axis was, like numpy.apply_along_axis."""
    a = asarray(arr)
    axis = _norm_axis(axis, a.ndim)
    moved = _manipulation.moveaxis(a, axis, -1)
    outer = moved.shape[:-1]
    if any(s == 0 for s in outer):
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    out = None
    for idx in numpy.ndindex(*outer):
        r = asarray(func1d(moved[idx], *args, **kwargs))
        if out is None:
            out = empty(outer + r.shape, r.dtype)
        out[idx] = r
    # the result's own axes go where axis was
    perm = list(range(axis)) + list(range(len(outer), out.ndim)) + list(range(axis, len(outer)))
    return out.transpose(perm)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied over each of axes in turn, keeping the number of dimensions (a reduced axis
    stays as length 1), like numpy.apply_over_axes."""
    val = asarray(a)
    n = val.ndim
    if numpy.ndim(axes) == 0:
        axes = (axes,)
    for axis in axes:
        axis = axis + n if axis < 0 else axis
        res = func(val, axis)
        if res.ndim == val.ndim:
            val = res
        else:
            res = _manipulation.expand_dims(res, axis)
            if res.ndim != val.ndim:
                raise ValueError("function is not returning an array of the correct shape")
            val = res
    return val


__all__ = ["array_split", "split", "hsplit", "vsplit", "dsplit", "broadcast_shapes", "broadcast", "row_stack",
           "isfortran", "require", "asarray_chkfinite", "apply_along_axis", "apply_over_axes"]
