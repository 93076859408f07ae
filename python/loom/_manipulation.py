"""_manipulation.py: shapes, layouts and dtypes of arrays (reshape, transpose, ravel, squeeze,
expand_dims, broadcast_to, astype, copy, result_type, can_cast) and joining arrays (concatenate, stack:
copy kernels or one select kernel on the arrays' device; small evaluated host arrays joined by NumPy,
its result adopted zero-copy, _host_views). Views share memory with their base as NumPy's do; a
tracer's reshapes are graph nodes.

Memory order (NumPy's order= argument: 'C', 'F', 'A', 'K'): a copy in C order is a pending graph node
(loom computes C-contiguous results); a copy in any other layout is written at once into a new array
allocated with that layout (_creation._empty_in_order), since a pending value has C strides. Tracers
(inside @loom.fuse) have no memory: their copies and reshapes take C order and the values NumPy gives.
"""
import builtins
import operator
import os

import numpy

from . import _core
from ._common import (_code, _dtype_at, _is_bf16, _np_dtype_of, _OPS, _shape_tuple, _layout_perm, _order_name, _contiguous,
                      _norm_axis, _cur)
from ._ndarray import ndarray, _finish, _host, _NotAView, _operand
from ._creation import asarray, empty, _empty_in_order, _adopt, _host_np


# ---- layouts (the ndarray methods reshape, ravel, flatten, astype and copy call these) ---------------------
def _satisfies(a, order):
    """True when a's layout already satisfies order as NumPy's astype(copy=False) asks: 'K' always, 'C'
    C-contiguous, 'F' F-contiguous, 'A' either."""
    o = _order_name(order)
    c = o in "CA" and _contiguous(a.shape, a.strides, a.itemsize, "C")
    f = o in "FA" and _contiguous(a.shape, a.strides, a.itemsize, "F")
    return o == "K" or c or f


def _copy(a, code, order):
    """A new array with a's values cast to dtype code, laid out as order asks (C, F, A, K)."""
    o = _order_name(order)
    # C order without reading a's geometry where the answer is known: C asked, a tracer (C order always),
    # one axis (every order's), a pending value ('K' and 'A' keep its C order)
    if o == "C" or a._tracer or a.ndim <= 1 or (a._lazy and o != "F"):
        return _core.cast(a, code)  # pending, C-contiguous
    perm = _layout_perm(a.shape, a.strides, a.itemsize, o)
    if perm == tuple(range(a.ndim)):
        return _core.cast(a, code)  # pending, C-contiguous
    dst = _empty_in_order(a.shape, _dtype_at(code), False, a._device, perm)
    if a.size:
        _core.assign(dst, a)
    return dst


_RESHAPE_HAS_COPY = tuple(int(p) for p in numpy.__version__.split(".")[:2]) >= (2, 1)


def _reshape_view(v, shape, order):
    """NumPy's reshape of view v when it needs no copy, else _NotAView, without copying v: a plain
    v.reshape copies an unviewable array (tile's and repeat's broadcasts, a full copy on the host for
    nothing) before the caller finds it is not a view. NumPy's own error for an impossible shape."""
    if not _RESHAPE_HAS_COPY:  # NumPy < 2.1: no copy= (the copy happens and is thrown away)
        return v.reshape(shape, order=order)
    try:
        return v.reshape(shape, order=order, copy=False)
    except ValueError:
        numpy.broadcast_to(numpy.zeros((), v.dtype), v.shape).reshape(shape, order=order)  # a bad shape raises
        raise _NotAView() from None


def _reshape(a, shape, order):
    """a.reshape(shape, order): a view when the memory allows (NumPy decides), else a copy. Order 'F'
    reads and writes the elements with the first index fastest: a.T reshaped to the reversed shape in C
    order, transposed back (an F-contiguous copy)."""
    o = _order_name(order, "CFAK")
    if o == "K":
        raise ValueError("order 'K' is not permitted for reshaping")
    if o == "A":
        o = "F" if _contiguous(a.shape, a.strides, a.itemsize, "F") and \
            not _contiguous(a.shape, a.strides, a.itemsize, "C") else "C"
    if a._tracer:
        if o == "C":
            return _core.movement(0, a, shape, None, None)
        t = _core.movement(0, _core.movement(1, a, None, None, None), shape[::-1], None, None)
        return _core.movement(1, t, None, None, None)
    if o == "C":  # a C-contiguous array's view, made in C (NotImplemented: -1 in shape, other layouts)
        v = _core.contiguous_view(a, shape)
        if v is NotImplemented and -1 in shape:
            v = _inferred_view(a, shape)
        if v is not NotImplemented:
            return a._view_of_me(v)
    try:
        return a._numpy_view(lambda v: _reshape_view(v, shape, o))
    except _NotAView:
        pass
    if o == "C":
        return _core.movement(0, a, shape, None, None)
    return _core.movement(0, a.transpose(), shape[::-1], None, None).transpose()


def _inferred_view(a, shape):
    """contiguous_view of a C-contiguous a for a shape of Python ints with one -1, the length NumPy infers
    put in its place; NotImplemented where NumPy's reshape decides (another negative, two -1s, a length that
    does not divide a's size, an empty shape product; a's own shape but for one axis at unit stride: NumPy's
    -1 reshape of a C-contiguous array gives C strides where contiguous_view keeps a's)."""
    known, at = 1, None
    for i, n in enumerate(shape):
        if n == -1 and at is None:
            at = i
        elif n < 0:
            return NotImplemented
        else:
            known *= n
    if at is None or known == 0 or a.size % known:
        return NotImplemented
    full = shape[:at] + (a.size // known,) + shape[at + 1:]
    if full == a.shape and (a.ndim != 1 or a.strides[0] != _dtype_at(a._dtype_code).itemsize):
        return NotImplemented
    return _core.contiguous_view(a, full)


def _ravel(a, order, copy):
    """a.ravel(order) (a view when the elements already lie contiguous in that order, else a copy) or,
    with copy, a.flatten(order) (always a copy). 'K' reads the axes in the order of their |strides|
    (an axis with a negative stride is still read forwards), as NumPy."""
    if type(order) is str and order == "C" and not copy and (
            a.ndim != 1 or a.strides[0] == _dtype_at(a._dtype_code).itemsize):
        # ravel()'s default: a C-contiguous array's view made in C (NotImplemented for other layouts, a
        # tracer, an empty array). One axis only at unit stride: contiguous_view keeps any stride there
        v = _core.contiguous_view(a, (a.size,))
        if v is not NotImplemented:
            return a._view_of_me(v)
    o = _order_name(order)
    if a._tracer:
        x = a if o != "F" else _core.movement(1, a, None, None, None)
        return _core.movement(0, x, (a.size,), None, None)
    perm = _layout_perm(a.shape, a.strides, a.itemsize, o)
    x = a if perm == tuple(range(a.ndim)) else a.transpose(perm)
    if not copy and _contiguous(x.shape, x.strides, x.itemsize, "C"):
        return x.reshape(-1)
    return _core.movement(0, x, (a.size,), None, None)


def reshape(a, newshape=None, order="C", *, shape=None, copy=None):
    """A view when the memory allows, else a copy (numpy.reshape; copy=True always copies, copy=False
    raises ValueError where a view is impossible)."""
    if (newshape is None) == (shape is None):
        raise TypeError("reshape: give the new shape once (shape= or the positional newshape)")
    a = asarray(a)
    shape = _shape_tuple(newshape if shape is None else shape)
    if copy is False:
        try:
            return a._numpy_view(lambda v: v.reshape(shape, order=order, copy=False))
        except _NotAView:
            raise ValueError("Unable to avoid creating a copy while reshaping.") from None
    r = _reshape(a, shape, order)
    return r.copy() if copy else r


def transpose(a, axes=None):
    return asarray(a).transpose(axes)


def ravel(a, order="C"):
    return _ravel(asarray(a), order, False)


def squeeze(a, axis=None):
    return asarray(a).squeeze(axis)


def swapaxes(a, axis1, axis2):
    return asarray(a).swapaxes(axis1, axis2)


def expand_dims(a, axis):
    a = asarray(a)
    if a._tracer:
        return _core.movement(4, a, operator.index(axis), None, None)
    if type(axis) is int and -a.ndim - 1 <= axis <= a.ndim:  # one axis: the view a[:, ..., None, ...] (C)
        v = _core.basic_view(a, (builtins.slice(None),) * (axis if axis >= 0 else a.ndim + 1 + axis) +
                             (None, Ellipsis))
        if v is not NotImplemented:
            return a._view_of_me(v)
    return a._numpy_view(lambda v: numpy.expand_dims(v, axis))


def broadcast_to(a, shape):
    a = asarray(a)
    shape = _shape_tuple(shape)
    if a._tracer:
        return _core.movement(2, a, shape, None, None)
    return a._numpy_view(lambda v: numpy.broadcast_to(v, shape))


def astype(a, dtype, copy=True):
    return asarray(a).astype(dtype, copy=copy)


def copy(a, order="K"):
    return asarray(a).copy(order)


def shape(a):
    return asarray(a).shape


def ndim(a):
    """The number of dimensions of a; of any other object as NumPy counts them (numpy.ndim: a scalar, None,
    a string, a set or a dict is 0-d), without copying it to the device."""
    if isinstance(a, ndarray):
        return a.ndim
    try:
        return numpy.ndim(a)
    except TypeError:  # loom arrays inside a list, which refuse NumPy's implicit conversion on a GPU
        return asarray(a).ndim


def size(a, axis=None):
    a = asarray(a)
    return a.size if axis is None else a.shape[_norm_axis(axis, a.ndim)]


def result_type(*args):
    vals = [a.dtype if isinstance(a, ndarray) else a for a in args]
    if builtins.any(isinstance(v, (numpy.dtype, type, str)) and _is_bf16(_np_dtype_of(v)) for v in vals):
        # bfloat16 by loom's own promotion (ml_dtypes' lattice), not the installed ml_dtypes' answer
        # (0.6 has no bfloat16 + float16 rule and makes bfloat16 with a Python int float32): the dtype
        # of a lazy operation on empty operands, which compiles nothing
        r = None
        for v in vals:
            x = v if isinstance(v, (bool, int, float, complex)) else empty((0,), numpy.dtype(v))
            r = x if r is None else _core.binary(_OPS["add"], r, x)
        return r.dtype if isinstance(r, ndarray) else numpy.result_type(r)
    return numpy.result_type(*vals)


def can_cast(from_, to, casting="safe"):
    return numpy.can_cast(from_.dtype if isinstance(from_, ndarray) else from_, to, casting)


def copyto(dst, src, casting="same_kind", where=True):
    """Writes src (broadcast to dst's shape, cast under the casting rule) into the loom array dst, where
    `where` is True (a mask broadcast to dst's shape), like numpy.copyto."""
    if not isinstance(dst, ndarray):
        raise TypeError(f"copyto: the destination must be a loom array, not {type(dst).__name__}")
    src = _operand(src)
    if isinstance(src, ndarray):
        if not numpy.can_cast(src.dtype, dst.dtype, casting):
            raise TypeError(f"Cannot cast array data from {src.dtype!r} to {dst.dtype!r} according to the rule "
                            f"{casting!r}")
    elif not numpy.can_cast(numpy.result_type(src, dst.dtype), dst.dtype, casting):  # NEP 50 for scalars
        raise TypeError(f"Cannot cast scalar from {numpy.result_type(src, dst.dtype)!r} to {dst.dtype!r} according "
                        f"to the rule {casting!r}")
    if isinstance(where, (bool, int, float, complex, numpy.generic)) and not isinstance(where, numpy.ndarray):
        where = bool(where)  # a scalar mask is its truth value, as NumPy converts it
    if isinstance(where, bool) and not where:
        return
    if isinstance(where, bool):
        value = src
    else:
        mask = asarray(where)
        if mask.dtype != numpy.bool_:
            raise TypeError(f"copyto: where must be a boolean array, not {mask.dtype}")
        value = _core.where(mask, _core.cast(src, dst._dtype_code) if isinstance(src, ndarray) else src, dst)
    if isinstance(value, ndarray) and value.shape != dst.shape:
        numpy.broadcast_shapes(value.shape, dst.shape)  # ValueError as NumPy's
        if numpy.broadcast_shapes(value.shape, dst.shape) != dst.shape:
            raise ValueError(f"could not broadcast input array from shape {value.shape} into shape {dst.shape}")
    if dst._lazy:
        _core.eval(dst)
    _core.assign(dst, value)


def moveaxis(a, source, destination):
    """A view with the axes moved, like numpy.moveaxis."""
    return _view_by(asarray(a), lambda v: numpy.moveaxis(v, source, destination))


def rollaxis(a, axis, start=0):
    """Moves axis to position start (a view; numpy.rollaxis)."""
    return _view_by(asarray(a), lambda v: numpy.rollaxis(v, axis, start))


def flip(m, axis=None):
    """A view with the order of the elements along axis (all axes: None) reversed, like numpy.flip."""
    m = asarray(m)
    if m.ndim == 0 and axis is None:  # nothing to reverse (NumPy's m[()] is a scalar, not a view)
        return m.view()
    if m._tracer:   # inside @loom.fuse: the same view written as basic indexing with step -1 (what numpy.flip does)
        axes = range(m.ndim) if axis is None else numpy.lib.array_utils.normalize_axis_tuple(axis, m.ndim)
        return m[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(m.ndim))]
    return _view_by(m, lambda v: numpy.flip(v, axis))


def fliplr(m):
    """Reverses the order of the columns (a view; numpy.fliplr)."""
    m = asarray(m)
    return flip(m, 1) if m._tracer and m.ndim >= 2 else _view_by(m, numpy.fliplr)


def flipud(m):
    """Reverses the order of the rows (a view; numpy.flipud)."""
    m = asarray(m)
    return flip(m, 0) if m._tracer and m.ndim >= 1 else _view_by(m, numpy.flipud)


def rot90(m, k=1, axes=(0, 1)):
    """Rotates by 90 degrees k times in the plane of axes (a view; numpy.rot90)."""
    return _view_by(asarray(m), lambda v: numpy.rot90(v, k, axes))


def atleast_1d(*arys):
    """The arrays as views of at least 1 dimension (numpy.atleast_1d)."""
    r = [_view_by(asarray(a), numpy.atleast_1d) for a in arys]
    return r[0] if len(r) == 1 else r


def atleast_2d(*arys):
    """The arrays as views of at least 2 dimensions (numpy.atleast_2d)."""
    r = [_view_by(asarray(a), numpy.atleast_2d) for a in arys]
    return r[0] if len(r) == 1 else r


def atleast_3d(*arys):
    """The arrays as views of at least 3 dimensions (numpy.atleast_3d)."""
    r = [_view_by(asarray(a), numpy.atleast_3d) for a in arys]
    return r[0] if len(r) == 1 else r


def broadcast_arrays(*args):
    """Views of the arrays broadcast to their common shape (a tuple), like numpy.broadcast_arrays."""
    arrays = [asarray(a) for a in args]
    shape = numpy.broadcast_shapes(*(a.shape for a in arrays))
    return tuple(broadcast_to(a, shape) for a in arrays)


def _view_by(a, fn):
    """fn (a NumPy function returning a view of its argument) applied to a's memory: a loom view."""
    if a._tracer:
        raise TypeError(f"@loom.fuse: {getattr(fn, '__name__', 'this view')} of a traced value is not supported "
                        "yet; apply it to the arguments outside the fused function")
    return a._numpy_view(fn)


def roll(a, shift, axis=None):
    """a with its elements shifted along axis (the flattened array for None), those leaving one end
    entering at the other, like numpy.roll: written on the device, two copies per axis."""
    a = asarray(a)
    if axis is None:
        return roll(a.ravel(), shift, 0).reshape(a.shape)
    shifts, axes = numpy.broadcast_arrays(numpy.asarray(shift), numpy.asarray(axis))
    total = {}
    for sh, ax in zip(shifts.ravel().tolist(), axes.ravel().tolist()):
        ax = _norm_axis(ax, a.ndim)
        total[ax] = total.get(ax, 0) + sh
    r = a
    for ax, sh in total.items():
        n = a.shape[ax]
        k = sh % n if n else 0
        if k == 0:
            continue
        out = _empty_in_order(r.shape, r.dtype, False, r._device)

        def at(sl):
            return tuple(sl if i == ax else slice(None) for i in range(r.ndim))
        out[at(slice(0, k))] = r[at(slice(n - k, n))]
        out[at(slice(k, n))] = r[at(slice(0, n - k))]
        r = out
    return r if r is not a else a.copy()


def repeat(a, repeats, axis=None):
    """Each element repeated `repeats` times along axis (the flattened array for None), like
    numpy.repeat: a pending copy of a broadcast view for one count; per-element counts are computed
    by NumPy on the host."""
    a = asarray(a)
    if axis is None:
        a, axis = a.ravel(), 0
    axis = _norm_axis(axis, a.ndim)
    if numpy.ndim(repeats) != 0 or isinstance(repeats, ndarray):
        r = repeats.get() if isinstance(repeats, ndarray) else numpy.asarray(repeats)
        if r.dtype.kind == "u":  # the array API allows any integer dtype; NumPy's repeat casts counts to intp safely
            r = r.astype(numpy.int64)  # (a count past int64 becomes negative: NumPy's ValueError)
        if r.ndim == 1 and r.size not in (1, a.shape[axis]):
            raise ValueError(f"repeat: {r.size} counts for an axis of length {a.shape[axis]}: repeats must have the "
                             f"same length as the axis (operands could not be broadcast together with shape "
                             f"({a.shape[axis]},) ({r.size},))")
        if r.size != 1:
            return _host(lambda x: numpy.repeat(x, r, axis), a)
        repeats = r.reshape(())[()]
    repeats = operator.index(repeats)
    if repeats < 0:
        raise ValueError("repeats may not contain negative values.")
    x = expand_dims(a, axis + 1)
    shape = a.shape[:axis + 1] + (repeats,) + a.shape[axis + 1:]
    return _reshape(broadcast_to(x, shape), a.shape[:axis] + (a.shape[axis] * repeats,) + a.shape[axis + 1:], "C")


def tile(A, reps):
    """A repeated reps times per axis, like numpy.tile: a pending copy of a broadcast view."""
    A = asarray(A)
    reps = (reps,) if numpy.ndim(reps) == 0 else tuple(reps)
    reps = tuple(operator.index(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError("negative dimensions are not allowed")
    n = max(A.ndim, len(reps))
    reps = (1,) * (n - len(reps)) + reps
    A = A.reshape((1,) * (n - A.ndim) + A.shape)
    if all(r == 1 for r in reps):
        return A.copy()
    x = A.reshape(tuple(v for d in A.shape for v in (1, d)))
    b = broadcast_to(x, tuple(v for r, d in zip(reps, A.shape) for v in (r, d)))
    return _reshape(b, tuple(r * d for r, d in zip(reps, A.shape)), "C")


# joins of evaluated host arrays of up to this many bytes in all are NumPy's (a memcpy per piece): ~2 us
# less a call at any size (2026-12-06, 2-core host), which only tiny joins notice; larger ones keep
# loom's copy kernels (their threads, and the kernel counts that tests/python/test_fft_gpu15b.py's
# padding A/B reads: its 3 KB join must stay a kernel)
_HOST_JOIN_MAX_BYTES = 1 << 11


def _host_views(arrs):
    """The NumPy views of arrs, loom arrays already evaluated in host memory and _HOST_JOIN_MAX_BYTES at
    most in all, which NumPy then joins (its result, new memory, adopted zero-copy; NumPy's errors); None
    for anything else (pending or GPU arrays, tracers, larger joins: loom's kernels)."""
    nbytes = 0
    for a in arrs:
        if a._lazy or a._device[0] != 0 or type(a) is not ndarray:
            return None
        nbytes += a.size * _dtype_at(a._dtype_code).itemsize
    if nbytes > _HOST_JOIN_MAX_BYTES:
        return None
    return [_host_np(a) for a in arrs]


def _join_mismatch(arrs, nd, axis):
    """NumPy's ValueError for the first of arrs whose dimensions differ from the first one's (but along axis)."""
    for i, a in enumerate(arrs[1:], 1):
        if a.ndim != nd:
            raise ValueError("all the input arrays must have same number of dimensions, but the array at index 0 "
                             f"has {nd} dimension(s) and the array at index {i} has {a.ndim} dimension(s)")
        for k in builtins.range(nd):
            if k != axis and a.shape[k] != arrs[0].shape[k]:
                raise ValueError("all the input array dimensions except for the concatenation axis must match "
                                 f"exactly, but along dimension {k}, the array at index 0 has size "
                                 f"{arrs[0].shape[k]} and the array at index {i} has size {a.shape[k]}")


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Joins arrays along an existing axis (axis=None: of their flattened forms), like numpy.concatenate,
    on the arrays' device: each piece is written into its part of a new array (one copy kernel per
    non-empty piece, into which the piece's pending operations fuse; a single piece gives a pending
    copy). dtype= and casting= as NumPy's. Small evaluated host arrays are joined by NumPy itself
    (_host_views); arrays on different devices, or values traced by @loom.fuse, by NumPy on the host."""
    arrs = [asarray(a) for a in arrays]
    if not arrs:
        raise ValueError("need at least one array to concatenate")
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both were provided.")
    hs = _host_views(arrs) if out is None else None
    if hs is not None:
        return _adopt(numpy.concatenate(hs, axis=axis, dtype=None if dtype is None else _np_dtype_of(dtype),
                                        casting=casting))
    a0 = arrs[0]
    dev, code0 = a0._device, a0._dtype_code
    if a0._tracer or builtins.any(a._tracer or a._device != dev for a in arrs):
        nd = None if dtype is None else _np_dtype_of(dtype)
        r = _host(lambda *xs: numpy.concatenate(xs, axis=axis, dtype=nd, casting=casting), *arrs)
        return _finish(r, out, casting)
    if axis is None:
        arrs = [a.ravel() for a in arrs]
        axis = 0
    nd = arrs[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = _norm_axis(axis, nd)
    shape0 = arrs[0].shape
    rest0 = shape0[:axis] + shape0[axis + 1:]
    one_dtype, total = dtype is None and out is None, 0
    for a in arrs:  # one pass: the shapes (NumPy's errors from _join_mismatch) and whether one dtype
        sh = a.shape
        if builtins.len(sh) != nd or sh[:axis] + sh[axis + 1:] != rest0:
            _join_mismatch(arrs, nd, axis)
        total += sh[axis]
        if a._dtype_code != code0:
            one_dtype = False
    if one_dtype:
        rdt = arrs[0].dtype  # one dtype: the result's, and every cast rule allows it
    else:
        rdt = _np_dtype_of(dtype) if dtype is not None else (out.dtype if out is not None else
                                                              numpy.result_type(*[a.dtype for a in arrs]))
        for a in arrs:
            if not numpy.can_cast(a.dtype, rdt, casting=casting):
                raise TypeError(f"Cannot cast array data from {a.dtype!r} to {rdt!r} according to the rule "
                                f"{casting!r}")
    shape = shape0[:axis] + (total,) + shape0[axis + 1:]
    if out is not None:
        if not isinstance(out, ndarray):
            raise TypeError(f"out must be a loom array, not {type(out).__name__}")
        if out.shape != shape:
            raise ValueError(f"Output array is the wrong shape: {out.shape}, want {shape}")
    elif builtins.len(arrs) == 1:  # one piece: a pending copy of it, which fuses into what reads it
        return arrs[0].astype(rdt, copy=True)
    kind, index = arrs[0]._device
    if kind != 0:
        from . import cuda
    if kind != 0 and cuda.is_available():
        with cuda.Device(index):
            r = empty(shape, rdt)
    else:  # straight to _core (empty's argument checks cost more than the allocation)
        r = _core.empty(shape, code0 if one_dtype else _code(rdt), False, *_cur())
    lead = (builtins.slice(None),) * axis
    at = 0
    for a in arrs:
        n = a.shape[axis]
        if n and a.size:
            part = _core.basic_view(r, lead + (builtins.slice(at, at + n),))  # r is new: a view of it in C
            _core.assign(part, a if one_dtype or a.dtype == rdt else a.astype(rdt))
        at += n
    if out is not None:
        _core.assign(out, r)
        return out
    return r


_STACK_SELECT = os.environ.get("LOOM_STACK_SELECT", "1").strip() not in ("0", "")
_STACK_SELECT_MAX_PIECES = 8     # each output point reads every piece: a few, not many
_STACK_SELECT_MAX_RUN_BYTES = 512  # a piece's contiguous run in the output; longer runs: one copy a piece


def _interleaves(arrs, axis, out, dtype):
    """(result dtype, its code) when stack writes its pieces as one select kernel (_stack_select), else
    None: a few pieces, each of whose contiguous runs in the output is short (axis=-1 of 1-d pieces: runs
    of one element), where a copy per piece would store with a stride and every piece's copy would pass
    over the whole output."""
    if not _STACK_SELECT or not 1 < builtins.len(arrs) <= _STACK_SELECT_MAX_PIECES or arrs[0].size == 0:
        return None
    dev = arrs[0]._device
    if out is not None or builtins.any(a._tracer or a._device != dev for a in arrs):
        return None
    run = 1
    for d in arrs[0].shape[axis:]:
        run *= d
    rdt = _stack_dtype(arrs, dtype)
    return rdt if run * rdt[0].itemsize <= _STACK_SELECT_MAX_RUN_BYTES else None


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _stack_dtype(arrs, dtype):
    """(dtype, its code) of stack's result: dtype= or NumPy's result type of the pieces' (one dtype: theirs)."""
    if dtype is None:
        code0 = arrs[0]._dtype_code
        for a in arrs:
            if a._dtype_code != code0:
                break
        else:
            return arrs[0].dtype, code0
        rdt = numpy.result_type(*[a.dtype for a in arrs])
    else:
        rdt = _np_dtype_of(dtype)
    return rdt, _code(rdt)


def _stack_select(arrs, axis, shape, code):
    """stack along axis as one pending elementwise select over the output's shape: piece p where the
    new axis's index is p (a chain of wheres on an iota along it), each piece broadcast along the new
    axis and cast to dtype code. The output is written once, contiguously; the pieces' pending operations
    fuse."""
    # the new axis as a reshape node (the select reads the pieces; no view is made, nothing evaluated first)
    pieces = [_core.movement(0, a, shape, None, None) for a in arrs]
    pieces = [p if p._dtype_code == code else _core.cast(p, code) for p in pieces]
    k = builtins.len(pieces)
    index = _core.iota((k,) + (1,) * (builtins.len(shape) - axis - 1), pieces[0])
    r = pieces[-1]
    for p in builtins.range(k - 2, -1, -1):
        r = _core.where(_core.binary(_OPS["eq"], index, p), pieces[p], r)
    return r


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Joins arrays of one shape along a new axis, like numpy.stack, on the arrays' device (one select
    kernel, or through concatenate; small evaluated host arrays: NumPy's stack, _host_views); dtype= and
    casting= as NumPy's."""
    arrs = [asarray(a) for a in arrays]
    if not arrs:
        raise ValueError("need at least one array to stack")
    shape0 = arrs[0].shape
    for a in arrs:
        if a.shape != shape0:
            raise ValueError("all input arrays must have the same shape")
    axis = _norm_axis(axis, builtins.len(shape0) + 1)
    shape = shape0[:axis] + (1,) + shape0[axis:]
    hs = _host_views(arrs) if out is None else None
    if hs is not None:  # what numpy.stack does once it has checked the shapes and the axis
        grow = (builtins.slice(None),) * axis + (None,)
        return _adopt(numpy.concatenate([h[grow] for h in hs], axis=axis, casting=casting,
                                        dtype=None if dtype is None else _np_dtype_of(dtype)))
    select = _interleaves(arrs, axis, out, dtype)
    if select is not None:
        rdt, code = select
        mixed = casting not in _CASTINGS  # an unknown rule: NumPy's error from can_cast
        for a in arrs:
            if a._dtype_code != code or mixed:
                mixed = True
                if not numpy.can_cast(a.dtype, rdt, casting=casting):
                    raise TypeError(f"Cannot cast array data from {a.dtype!r} to {rdt!r} according to the rule "
                                    f"{casting!r}")
        if mixed and rdt.kind != "c" and any(a.dtype.kind == "c" for a in arrs):  # NumPy's cast warns (concatenate's path does)
            import warnings
            from ._ndarray import _ComplexWarning
            warnings.warn("Casting complex values to real discards the imaginary part", _ComplexWarning, stacklevel=2)
        return _stack_select(arrs, axis, shape, code)
    # a pending array gets the new axis as a pending reshape (a view would evaluate it first): its
    # operations then fuse into the copy that concatenate makes of it
    pieces = [_core.movement(0, a, shape, None, None) if a._lazy and not a._tracer else expand_dims(a, axis)
              for a in arrs]
    return concatenate(pieces, axis, out, dtype=dtype, casting=casting)


# the joins below go through concatenate: NumPy on the host, as it
def hstack(tup, *, dtype=None, casting="same_kind"):
    """Joins arrays column-wise: numpy.hstack, through concatenate on the host."""
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, 0 if arrs and arrs[0].ndim == 1 else 1, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Joins arrays row-wise: numpy.vstack, through concatenate on the host."""
    return concatenate([atleast_2d(a) for a in tup], 0, dtype=dtype, casting=casting)


def dstack(tup):
    """Joins arrays along the third axis: numpy.dstack, through concatenate on the host."""
    return concatenate([atleast_3d(a) for a in tup], 2)


def column_stack(tup):
    """Joins 1-d arrays as columns: numpy.column_stack, through concatenate on the host."""
    cols = []
    for a in tup:
        a = asarray(a)
        cols.append(a.reshape(a.size, 1) if a.ndim < 2 else a)
    return concatenate(cols, 1)


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
