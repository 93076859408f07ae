"""_sorting.py: sorting, searching, sets and cumulative sums (the array API standard's sort, argsort,
searchsorted, unique_all/counts/inverse/values, cumulative_sum, cumulative_prod; CuPy's sort,
argsort, cumsum, cumprod, unique, searchsorted).

Cumulative sums and products (cumsum, cumprod, nancumsum, nancumprod, cumulative_sum, cumulative_prod)
are lazy graph nodes (loom_scan) computed by a scan kernel on the array's own device, fused with the
expression they scan and with an elementwise consumer.

Sorting (sort, argsort, lexsort, partition, argpartition, ndarray.sort/argsort), unique* and
searchsorted run on the array's own device: on a GPU (CUDA, HIP) through _sortnet.sort_rows: the device
radix sort (loom_sort) for long rows or one row, else the sorting network (one elementwise kernel per
step); both stable (ties keep their order); on the host through NumPy's sorts on
the host buffer (O(n log n) library code, as the host's BLAS; LOOM_SORT_ENGINE=network runs the
network on the host too). Results equal NumPy's: NaN last, -0.0 == 0.0, argsort ties by index; unique
keeps each NaN distinct in the standard's unique_* and merges them in numpy.unique(equal_nan=True).
unique with axis=, searchsorted with sorter= and the nan* order statistics still go through NumPy.

unique on the device: one sort, then one traced stage (_runs_stage, a loom.fuse function: the sort's
results are new buffers every call, which the ordinary lazy graph takes as new inputs and so plans anew
every call; a traced stage rebinds them and reuses its plan) whose one scan kernel computes the
first-of-run flags, compacts the runs' values, first indices and inverse, and writes the run count, read
once. The set operations (_setops.py) select from their sorted arrays through the same stage.
"""
import collections

import os

import numpy

from . import _core
from ._common import _norm_axis
from ._ndarray import ndarray, _finish
from ._creation import _adopt, _host_np, asarray
from . import _sortnet

UniqueAllResult = collections.namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _arr(x):
    return asarray(x)


def _argsort_np(a, axis, descending, stable):
    if a.ndim == 0:
        raise ValueError("sort/argsort: x must be at least 1-dimensional")
    if not descending:
        return numpy.argsort(a, axis=axis, kind="stable" if stable else None)
    # stable descending: the ascending stable order of the reversed array, mapped back and reversed
    ax = _norm_axis(axis, a.ndim)
    n = a.shape[ax]
    rev = numpy.flip(a, axis=ax)
    order = numpy.argsort(rev, axis=ax, kind="stable")
    return numpy.flip(n - 1 - order, axis=ax)


def _host(fn, *arrays):
    """fn computed by NumPy on the host (the arrays as NumPy arrays), its result a new NumPy array (a
    sort's, argsort's, ...: nothing else refers to it) as a loom array on the arrays' device: zero-copy on
    the host (_creation._adopt)."""
    args = [(_host_np(a) if a._device[0] == 0 else a._np()) if isinstance(a, ndarray) else a for a in arrays]
    dev = next((a._device for a in arrays if isinstance(a, ndarray)), None)
    return _adopt(fn(*args), dev)


def _on_network(x):
    """Whether x sorts on its device (_sortnet.sort_rows: the radix sort or the network, as it picks): on
    GPUs, or everywhere under LOOM_SORT_ENGINE=network (on the host NumPy's O(n log n) sorts run on the
    host buffer itself)."""
    eng = _sortnet._engine()
    return eng == "network" or (eng != "numpy" and x._device[0] != 0)


def _rows(x, ax):
    """x with axis ax moved last and the other axes flattened: (R x n view or expression, moved shape)."""
    from ._manipulation import moveaxis
    m = moveaxis(x, ax, -1) if ax != x.ndim - 1 else x
    n = m.shape[-1]
    r = 1
    for d in m.shape[:-1]:
        r *= d
    return m.reshape(r, n), m.shape


def _unrows(y, moved_shape, ax):
    from ._manipulation import moveaxis
    y = y.reshape(moved_shape)
    return moveaxis(y, -1, ax) if ax != len(moved_shape) - 1 else y


def _join(keys, dtype):
    """The sorted values from their key components (a complex key's parts back into one)."""
    if len(keys) == 3:  # complex: (class, real, imag)
        from ._common import _code
        return _core.cast(_core.binary(_core.ops["complex"], keys[1], keys[2]), _code(dtype))
    return keys[0]


def _net_sort(x, axis, descending, stable, want_index):
    """(sorted values, int64 indices or None) of x along axis through the device network."""
    ax = _norm_axis(axis, x.ndim)
    x2, moved = _rows(x, ax)
    keys, nans = _sortnet.key_parts(x2)
    out, idx, _ = _sortnet.sort_rows(keys, nans, descending, stable or want_index)
    vals = _unrows(_join(out, x.dtype), moved, ax)
    return vals, (None if idx is None else _unrows(idx, moved, ax))


def _stable_kind(kind, stable):
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise ValueError(f"sort kind must be one of 'quicksort', 'heapsort', 'stable' (got {kind!r})")
    return bool(stable) if stable is not None else kind in ("stable", "mergesort")


def _check_sortable(x, name):
    if x.ndim == 0:
        from ._common import AxisError
        raise AxisError(f"{name}: axis -1 is out of bounds for array of dimension 0 (flatten it, or pass axis=None)")


def argsort(a, axis=-1, kind=None, order=None, *, descending=False, stable=None):
    """Indices that sort a along axis (axis=None: of the flattened array). Always stable: equal elements
    keep their order (so every kind gives NumPy's stable result); descending keeps them in order too."""
    if order is not None:
        raise ValueError("argsort: order= (structured arrays) is not supported")
    _stable_kind(kind, stable)
    x = _arr(a)
    if axis is None:
        x, axis = x.reshape(-1), -1
    if x.ndim == 0:  # NumPy sorts a 0-d array as one element: [0]
        _norm_axis(axis, 1)
        x, axis = x.reshape(1), 0
    if _on_network(x):
        return _net_sort(x, axis, descending, True, True)[1]
    return _host(lambda h: _argsort_np(h, axis, descending, True).astype(numpy.int64), x)


def sort(a, axis=-1, kind=None, order=None, *, descending=False, stable=None):
    """A sorted copy of a along axis (axis=None: of the flattened array). kind='stable' (or stable=True)
    keeps equal elements (-0.0 and 0.0, NaNs) in their order; ints and bools sort alike either way."""
    if order is not None:
        raise ValueError("sort: order= (structured arrays) is not supported")
    st = _stable_kind(kind, stable)
    x = _arr(a)
    if axis is None:
        x, axis = x.reshape(-1), -1
    _check_sortable(x, "sort")
    if _on_network(x):
        from ._common import _kind
        return _net_sort(x, axis, descending, st and _kind(x.dtype) in "fc", False)[0]

    def f(h):
        if not descending:
            # NumPy's stable sort of bools and 8- / 16-bit integers is a radix sort (2^18 int8: 0.34 ms
            # against 7.5 for its default); their sorted values do not depend on stability
            small = h.dtype.kind in "biu" and h.dtype.itemsize <= 2
            return numpy.sort(h, axis=axis, kind="stable" if st or small else None)
        return numpy.take_along_axis(h, _argsort_np(h, axis, True, True), axis=axis)
    return _host(f, x)


def lexsort(keys, axis=-1):
    """numpy.lexsort: the stable order that sorts by the last key, then the one before it, ...; keys a
    sequence of arrays of one shape or an array whose first axis indexes the keys."""
    if isinstance(keys, ndarray) and keys.ndim == 0:
        from ._common import AxisError
        raise AxisError("lexsort: keys must be a sequence of arrays or an array of at least 1 dimension")
    ks = [_arr(k) for k in keys] if not isinstance(keys, ndarray) else [keys[i] for i in range(keys.shape[0])]
    if not ks:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = ks[0].shape
    if any(k.shape != shape for k in ks):
        raise ValueError("all keys need to be the same shape")
    if len(shape) == 0 or not _on_network(ks[0]):
        return _host(lambda *hs: numpy.lexsort(hs, axis=axis).astype(numpy.int64), *ks)
    ax = _norm_axis(axis, len(shape))
    comps, nans = [], []
    for k in reversed(ks):
        k2, moved = _rows(k, ax)
        c, n = _sortnet.key_parts(k2)
        comps += c
        nans += n
    _, idx, _ = _sortnet.sort_rows(comps, nans, False, True)
    return _unrows(idx, moved, ax)


def sort_complex(a):
    """numpy.sort_complex: a sorted copy of the flattened last axis, as complex (real part first, then
    imaginary); int8/int16/uint8/uint16 give complex64, other real dtypes complex128."""
    x = _arr(a)
    _check_sortable(x, "sort_complex")
    from ._common import _kind
    if _kind(x.dtype) != "c":
        x = x.astype(numpy.complex64 if x.dtype.char in "bhBH" else numpy.complex128)
    return sort(x, axis=-1)


def _kth_check(x, kth, axis, name):
    n = x.shape[_norm_axis(axis, x.ndim)]
    for k in numpy.atleast_1d(numpy.asarray(kth.get() if isinstance(kth, ndarray) else kth)).ravel():
        if not isinstance(k.item(), int):
            raise TypeError(f"{name}: kth must be an integer or a sequence of integers")
        if not -n <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy.partition: a copy where the element at each kth position is the one a sort puts there,
    smaller ones before it and larger ones after (loom returns the fully sorted copy, which is such an
    arrangement)."""
    x = _arr(a)
    if axis is None:
        x, axis = x.reshape(-1), -1
    _check_sortable(x, "partition")
    _kth_check(x, kth, axis, "partition")
    return sort(x, axis, order=order)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy.argpartition: the indices of partition's arrangement (loom's: the stable sorting order)."""
    x = _arr(a)
    if axis is None:
        x, axis = x.reshape(-1), -1
    _check_sortable(x, "argpartition")
    _kth_check(x, kth, axis, "argpartition")
    return argsort(x, axis, order=order)


def _row(x):
    """x flattened into one row (1 x size)."""
    return x.reshape(1, -1)


def _empty_like_dev(x, shape, dtype, zero=False):
    from ._common import _code
    return _core.empty(tuple(shape), _code(dtype), zero, *x._device)


# searchsorted counts (n x m compares in one reduction) while n * m <= this * (n + m) * log2(n + m)^2,
# the element-steps of the merge's two sorting networks (a compare is cheaper than a network step)
_SEARCH_COUNT_RATIO = 8


# a binary search per query (log2(n) dependent gathers from a, all in one elementwise kernel) for sorted
# arrays longer than _SEARCH_BINARY_MIN (below, n compares in one reduction are as cheap) and up to
# _SEARCH_BINARY_MAX, or longer ones searched by few queries; else the sort-merge of a and the queries
# (LOOM_SEARCHSORTED_BINARY=0, read per call: never the binary search, for A/B runs and the merge's tests)
_SEARCH_BINARY_MIN = 32
_SEARCH_BINARY_MAX = 1 << 20
# On a GPU the binary search wins at any length: 2^22 queries in 2^22 sorted float32 took 1.86 ms by the
# sort-merge on an H100 (2026-12-06; torch's binary search 0.40), and the search's top levels stay in L2
_SEARCH_BINARY_MAX_GPU = 1 << 40
# On the host (NumPy's engine), many queries take the binary search too, for any length of a: one kernel
# on every core without branches. 2-core Zen 4, 2026-12-05 (float32, random queries): 2^22 queries in 2^22
# sorted values 266 ms (NumPy 1261, torch 580-630), 2^22 in 1000 30 ms (NumPy 254), 2^16 in 2^16 1.9 (7.5);
# 2^13 queries about even (0.54 / 0.57 ms: ~0.45 ms of graph and plan a call), 2^11 NumPy's (0.18 / 0.47).
# Fewer queries, sorter= or LOOM_SORT_ENGINE=numpy stay NumPy's.
_HOST_SEARCH_MIN_QUERIES = 1 << 14


_BINARY_TRACES: dict = {}  # side -> the Fusion of _binary_stage, made on first use


def _binary_stage(a1, q, left):
    return _binary_search_graph(a1, q, a1.shape[0], "left" if left else "right")


def _binary_search(a1, q, n, side):
    """_binary_search_graph through a cached trace (loom.fuse; one per side, keyed by the arrays' dtypes,
    shapes and device): the ~7 + 5 log2(n) graph nodes, the passes and the plan were ~0.9 ms of host work a
    call on an H100's host (bench/suite/DIAGNOSIS.md, session 25), the search kernel itself 0.2 ms for 2^24
    queries. Inside a trace (a caller's loom.fuse) the graph is built inline."""
    if a1._tracer or q._tracer:
        return _binary_search_graph(a1, q, n, side)
    f = _BINARY_TRACES.get(side)
    if f is None:
        from ._fuse import Fusion
        f = _BINARY_TRACES[side] = Fusion(_binary_stage, "searchsorted")
    return f(a1, q, side == "left")


def _binary_search_graph(a1, q, n, side):
    """The answers for the 1-d queries q in the sorted a1 (n >= 1, one dtype): for each query the largest
    count c such that the first c elements of a order before it (side 'left') or not after it ('right'),
    NumPy's order (NaN last; complex by class, then parts: _sortnet's keys), found bit by bit from the
    highest power of two (a gather of a[c + step - 1] and one compare a step)."""
    from ._common import _code
    i64 = _code("int64")
    qk, nans = _sortnet.key_parts(q)
    pos = _core.cast(_core.binary(_core.ops["mul"], _core.iota(q.shape, q), 0), i64)
    step = 1 << (n.bit_length() - 1)
    while step:
        cand = _core.binary(_core.ops["add"], pos, step)
        s = _core.gather(a1, _core.binary(_core.ops["sub"], cand, 1), 0, 2)  # clipped: cand <= n decides
        sk, _ = _sortnet.key_parts(s)
        if side == "left":
            go = _sortnet._before(sk, qk, None, None, nans, False)
        else:
            go = _core.unary(_core.ops["logical_not"], _sortnet._before(qk, sk, None, None, nans, False))
        go = _core.binary(_core.ops["logical_and"], _core.binary(_core.ops["le"], cand, n), go)
        pos = _core.where(go, cand, pos)
        step >>= 1
    return pos


def _binary_enabled():
    return os.environ.get("LOOM_SEARCHSORTED_BINARY", "1") != "0"


def _host_binary_for(q):
    """Whether the queries q (a loom array) are many enough for the binary search kernel where NumPy's
    searchsorted would otherwise run (_HOST_SEARCH_MIN_QUERIES; not under LOOM_SORT_ENGINE=numpy)."""
    return q.size >= _HOST_SEARCH_MIN_QUERIES and _sortnet._engine() != "numpy" and _binary_enabled()


def _net_searchsorted(a, v, side, binary_always=False):
    """searchsorted of every element of v in the sorted 1-d a on a's device: for few pairs (a short a),
    one kernel counts the elements of a ordered before each query (n x m compares); otherwise a and v
    are sorted together (queries before equal elements of a for side='left', after them for 'right'),
    each query's answer is the number of a's elements before it (a scan), and a second sort by query
    position brings the answers back in v's order."""
    from ._common import _code, _kind
    dt = numpy.result_type(a.dtype, v.dtype) if _kind(a.dtype) != "b" or _kind(v.dtype) != "b" else a.dtype
    a1 = _core.cast(a, _code(dt))
    q = _core.cast(v.reshape(-1), _code(dt))
    n, m = a.shape[0], q.shape[0]
    if m == 0 or n == 0:
        return _empty_like_dev(a, v.shape, "int64", zero=True)
    ak, nans = _sortnet.key_parts(a1)
    lg = max(1, (n + m - 1).bit_length())
    top = _SEARCH_BINARY_MAX_GPU if a._on_gpu else _SEARCH_BINARY_MAX
    if (binary_always or n > _SEARCH_BINARY_MIN and (n <= top or m <= n // 8)) and _binary_enabled():
        return _binary_search(a1, q, n, side).reshape(v.shape)
    if n * m <= _SEARCH_COUNT_RATIO * (n + m) * lg * lg:
        qk = [k.reshape(m, 1) for k in _sortnet.key_parts(q)[0]]
        if side == "left":
            hit = _sortnet._before(ak, qk, None, None, nans, False)  # a[i] before the query
        else:
            hit = _core.unary(_core.ops["logical_not"], _sortnet._before(qk, ak, None, None, nans, False))
        r = _core.reduce(0, _core.cast(hit, _code("int64")), (1,), False, _code("int64"))
        return r.reshape(v.shape)
    both = _empty_like_dev(a, (1, n + m), dt)
    _core.assign(both[:, :n], _row(a1))
    _core.assign(both[:, n:], _row(q))
    tag = _empty_like_dev(a, (1, n + m), "uint8")
    _core.assign(tag[:, :n], 1 if side == "left" else 0)
    _core.assign(tag[:, n:], 0 if side == "left" else 1)
    bk, bn = _sortnet.key_parts(both)
    _, idx, _ = _sortnet.sort_rows(bk + [tag], bn + [False], False, True)
    is_a = _core.binary(_core.ops["lt"], idx, n)
    before = _core.binary(_core.ops["sub"], _core.scan(0, _core.cast(is_a, _code("int64")), 1, -1),
                          _core.cast(is_a, _code("int64")))
    back = _core.where(is_a, n + m, _core.binary(_core.ops["sub"], idx, n))
    _, _, (ans,) = _sortnet.sort_rows([back], [False], False, False, payloads=(before,))
    return ans[0, :m].reshape(v.shape)


def searchsorted(x1, x2, /, side="left", sorter=None):
    """Indices where x2's elements would be inserted in the sorted 1-d x1 (side 'left' or 'right'), in
    NumPy's order (NaN last). On the array's device; sorter= goes through NumPy."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', not {side!r}")
    a = _arr(x1)
    if a.ndim != 1:
        raise ValueError("searchsorted: x1 must be 1-dimensional")
    v = x2 if isinstance(x2, ndarray) else _arr(x2)
    if sorter is None and _on_network(a):
        return _net_searchsorted(a, v, side)
    if sorter is None and _host_binary_for(v):
        return _net_searchsorted(a, v, side, binary_always=True)
    s = None if sorter is None else (sorter.get() if isinstance(sorter, ndarray) else numpy.asarray(sorter))
    return _host(lambda h, q: numpy.searchsorted(h, q, side=side, sorter=s).astype(numpy.int64), a, v)


_SCATTER_PUT, _GATHER_CLIP = 2, 2  # loom_scatter's op 2 (into an unspecified base), loom_gather's mode 2


def _bb(name, a, b):
    return _core.binary(_core.ops[name], a, b)


def _differs(srt, other, merge_nan):
    """srt != other elementwise, two NaNs equal when merge_nan (numpy.unique's equal_nan)."""
    from ._math import isnan
    d = _bb("ne", srt, other)
    if merge_nan:
        d = _bb("logical_and", d, _core.unary(_core.ops["logical_not"], _bb("logical_and", isnan(srt), isnan(other))))
    return d


def put_into(idx, values, size, dtype, like):
    """A new (size,) array of dtype holding values at idx (skipping index -1): a PUT scatter (its base's
    elements unspecified, so no kernel fills it; passes/fuse_gather.c), its base built in like's graph (a
    trace's: a constant-only base would be made, stored and kept as an input of the trace)."""
    base = _core.cast(_core.iota((size,), like), dtype)
    return _core.scatter(base, idx, values, _SCATTER_PUT)


def compact_traced(m, values, like):
    """The stream compaction of _indexing._compact_graph, buildable inside a trace (like: a tracer of it):
    the values at m's true points (m a bool (n,) expression, n >= 1) scattered to their ranks in full-size
    arrays, and the count in a one-element array; one scan kernel. Returns (fulls, count)."""
    from ._common import _code
    n = m.shape[0]
    acc = _code("int32") if n < 2**31 else _code("int64")
    rank = _core.scan(0, _core.cast(m, acc), 0, acc)
    dest = _core.where(m, _bb("sub", rank, 1), -1)
    fulls = [put_into(dest, v, n, v._dtype_code, like) for v in values]
    last = _bb("sub", _core.iota((n,), like), n - 1)  # 0 at the last point only: the count's slot
    return fulls, put_into(last, rank, 1, acc, like)


def _runs_stage(srt, imag, perm, cplx, merge_nan, keep, want_index, want_inverse, want_counts):
    """The stage after unique's sort, traced once per signature by loom.fuse (_runs): srt the sorted values
    (n,), perm their original positions (int64, n; srt itself when none is wanted). One scan kernel computes
    the first-of-run flag (srt[i] != srt[i - 1]) in its loads, scans it and scatters each run's value (its
    first index, its start and end positions) to the run's number, and the run count into a one-element
    array (the stream compaction of _indexing._compact, passes/fuse_gather.c); the inverse scatters each
    element's run number to its original position. Returns (values, [index], [inverse], [counts], count):
    full-size arrays of which the first `count` elements are the result (the inverse: all n).
    keep (the set operations' selections on a sorted array, same kernel): KEEP_FIRST the first element of
    every run (unique), KEEP_SINGLE the elements of runs of one (setxor1d), KEEP_REPEAT each element equal
    to the next (intersect1d), whose index output is then perm[i] and perm[i + 1] (two arrays).
    cplx: srt holds a complex sort's real parts and imag its imaginary parts (joined here, in the stage);
    else imag is unused."""
    from ._common import _code
    if cplx:
        srt = _core.binary(_core.ops["complex"], srt, imag)
    n = srt.shape[0]
    acc = _code("int32") if n < 2**31 else _code("int64")
    i = _core.cast(_core.iota((n,), srt), acc)  # the point index, in the traced graph (computed in the kernel)
    first = _bb("logical_or", _differs(srt, _core.gather(srt, _bb("sub", i, 1), 0, _GATHER_CLIP), merge_nan),
                _bb("eq", i, 0))
    if keep != KEEP_FIRST:
        last = _bb("logical_or", _differs(srt, _core.gather(srt, _bb("add", i, 1), 0, _GATHER_CLIP), merge_nan),
                   _bb("eq", i, n - 1))
        first = _bb("logical_and", first, last) if keep == KEEP_SINGLE else \
            _core.unary(_core.ops["logical_not"], last)
    rank = _core.scan(0, _core.cast(first, acc), 0, acc)  # run number + 1
    dest = _core.where(first, _bb("sub", rank, 1), -1)  # -1: not a run's first element (nothing stored)

    def put(idx, values, size, dtype):
        return put_into(idx, values, size, dtype, srt)

    i64 = _code("int64")
    outs = [put(dest, srt, n, srt._dtype_code)]
    if want_index:
        perm = _core.cast(perm, i64)
        outs.append(put(dest, perm, n, i64))
        if keep == KEEP_REPEAT:
            outs.append(put(dest, _core.gather(perm, _bb("add", i, 1), 0, _GATHER_CLIP), n, i64))
    if want_inverse:
        perm = _core.cast(perm, i64)
        outs.append(put(perm, _core.cast(_bb("sub", rank, 1), i64), n, i64))
    if want_counts:  # a run's count: its last position - its first + 1
        last = _bb("logical_or", _differs(srt, _core.gather(srt, _bb("add", i, 1), 0, _GATHER_CLIP), merge_nan),
                   _bb("eq", i, n - 1))
        starts = put(dest, _core.cast(i, i64), n, i64)
        ends = put(_core.where(last, _bb("sub", rank, 1), -1), _core.cast(i, i64), n, i64)
        outs.append(_bb("add", _bb("sub", ends, starts), 1))
    outs.append(put(_bb("sub", i, n - 1), rank, 1, acc))  # the last rank (the run count): slot 0 at the last point
    return tuple(outs)


KEEP_FIRST, KEEP_SINGLE, KEEP_REPEAT = 0, 1, 2
_RUNS: list = []  # the one Fusion of _runs_stage, made on first use


def _runs():
    """_runs_stage as a loom.fuse function: each signature (dtypes, sizes, flags) is traced once, and every
    later call rebinds its inputs to the new sort's buffers and evaluates the kept plan (no new plan, no
    pass pipeline: the sort's output is a new buffer each call, which in the ordinary lazy graph is a new
    input, hence new nodes and a new plan every call)."""
    if not _RUNS:
        from ._fuse import Fusion
        _RUNS.append(Fusion(_runs_stage, "unique_runs"))
    return _RUNS[0]


def _prefix(f, k):
    """f's first k elements: a view when it keeps a quarter of f or more, else a copy (a device copy, no
    graph) so that a few values do not hold the whole buffer."""
    v = f[:k]
    return v if 4 * k >= f.shape[0] else _core.to_device(v, *v._device)


def sort_index(x):
    """(sorted copy of the 1-d x, its stable int64 order) from one sort."""
    if _on_network(x):
        return _net_sort(x, 0, False, True, True)
    order = argsort(x, kind="stable")
    return _host(lambda h, o: h[o], x, order), order


def sorted_select(srt, perm, keep):
    """The set operations' selection on the sorted 1-d srt (perm: its original positions, or None) through
    the traced runs stage: [values] or [values, perm[i], perm[i + 1]] (KEEP_REPEAT with perm) of the kept
    elements, trimmed to their count (one read)."""
    if srt.shape[0] == 0:
        return [srt] + ([] if perm is None else [perm, perm])
    want = perm is not None
    outs = _runs()(srt, srt, perm if want else srt, False, False, keep, want, False, False)
    k = int(outs[-1][0])
    return [_prefix(o, k) for o in outs[:-1]]


def _net_unique(h, return_index, return_inverse, return_counts, equal_nan):
    """numpy.unique of the flattened h on its device: one stable sort (carrying the original positions when
    the index or the inverse is wanted), then one traced stage (_runs_stage: the first-of-run flags and the
    compaction of each run's value, index and count in one scan kernel; the inverse a scatter by the
    sort's order). The number of unique values is read at the call (the result's shape)."""
    from ._common import _kind
    x = _row(h)
    keys, nans = _sortnet.key_parts(x)
    want_perm = bool(return_index or return_inverse)
    out, perm, _ = _sortnet.sort_rows(keys, nans, False, want_perm)
    parts = [o.reshape(-1) for o in (out[1:] if len(out) == 3 else out * 2)]  # complex: joined in the stage
    p = perm.reshape(-1) if want_perm else parts[0]
    merge = bool(equal_nan and _kind(h.dtype) in "fc")
    outs = _runs()(parts[0], parts[1], p, len(out) == 3, merge, KEEP_FIRST, bool(return_index), bool(return_inverse), bool(return_counts))
    k = int(outs[-1][0])
    res = [_prefix(outs[0], k)]
    j = 1
    if return_index:
        res.append(_prefix(outs[j], k))
        j += 1
    if return_inverse:
        res.append(outs[j])
        j += 1
    if return_counts:
        res.append(_prefix(outs[j], k))
    return res


def _unique(x, return_index=False, return_inverse=False, return_counts=False, equal_nan=False):
    """(flattened values, first indices, inverse (flat), counts) as requested, on x's device."""
    h = _arr(x)
    if h.size == 0 or not _on_network(h):
        r = numpy.unique(h.get().reshape(-1), return_index, return_inverse, return_counts, equal_nan=equal_nan)
        r = r if isinstance(r, tuple) else (r,)
        return h, [_dev(h, numpy.asarray(p).astype(numpy.int64) if i else p) for i, p in enumerate(r)]
    return h, _net_unique(h, return_index, return_inverse, return_counts, equal_nan)


def _dev(h, v):
    from ._common import _from_numpy
    return _from_numpy(numpy.array(v, copy=True, order="C"), copy=True, device=h._device)  # keeps 0-d


def unique_values(x, /):
    return _unique(x)[1][0]


def unique_counts(x, /):
    _, (v, c) = _unique(x, return_counts=True)
    return UniqueCountsResult(v, c)


def unique_inverse(x, /):
    h, (v, inv) = _unique(x, return_inverse=True)
    return UniqueInverseResult(v, inv.reshape(h.shape))


def unique_all(x, /):
    h, (v, i, inv, c) = _unique(x, return_index=True, return_inverse=True, return_counts=True)
    return UniqueAllResult(v, i, inv.reshape(h.shape), c)


def _inverse_ndim(shape):
    """The shape NumPy's unique(axis=None) gives the inverse (1-d, or the input's in NumPy 2.0.0)."""
    inv = numpy.unique(numpy.zeros((1, 1)), return_inverse=True)[1]
    return shape if inv.ndim == 2 else (-1,)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True):
    """numpy.unique (CuPy's): sorted unique elements and, on request, first indices, the inverse and the
    counts; on the array's device for axis=None (axis= goes through NumPy)."""
    h = _arr(ar)
    if axis is not None:
        r = numpy.unique(h.get(), return_index, return_inverse, return_counts, axis, equal_nan=equal_nan)
        if isinstance(r, tuple):
            return tuple(_dev(h, numpy.asarray(p)) for p in r)
        return _dev(h, r)
    _, res = _unique(h, return_index, return_inverse, return_counts, equal_nan)
    if return_inverse:
        i = 1 + int(return_index)
        res[i] = res[i].reshape(_inverse_ndim(h.shape))
    return tuple(res) if len(res) > 1 else res[0]


_SCAN = {"sum": 0, "prod": 1, "min": 2, "max": 3}  # LoomReduceOp codes (loom_scan)


def _scan(name, x, axis, dtype):
    """loom_scan: the inclusive scan of x along axis, a lazy graph node computed by a device kernel (the
    elementwise expression x comes from is computed in the scan's loads)."""
    from ._common import _code
    return _core.scan(_SCAN[name], x, axis, -1 if dtype is None else _code(dtype))


def _numpy_scan(name, a, axis, dtype, out):
    """numpy.cumsum / cumprod: axis=None scans the flattened array (a 0-d array becomes shape (1,))."""
    x = _arr(a)
    if axis is None or x.ndim == 0:  # NumPy scans a 0-d array as shape (1,), along axis None, 0 or -1
        x, axis = x.reshape(-1), 0 if axis is None else axis
    r = _scan(name, x, _norm_axis(axis, x.ndim), dtype)
    return r if out is None else _finish(r, out, "unsafe")


def _cumulative(name, x, axis, dtype, include_initial, identity, fname, out):
    h = _arr(x)
    if h.ndim == 0:  # NumPy 2 scans a 0-d array as shape (1,)
        h = h.reshape(1)
    if axis is None:
        if h.ndim > 1:
            raise ValueError(f"{fname}: axis must be given for arrays of more than one dimension")
        axis = 0
    ax = _norm_axis(axis, h.ndim)
    r = _scan(name, h, ax, dtype)
    if include_initial:
        from ._creation import full_like
        from ._manipulation import concatenate
        shape = list(r.shape)
        shape[ax] = 1
        r = concatenate([full_like(r, identity, shape=tuple(shape)), r], axis=ax)
    return r if out is None else _finish(r, out, "unsafe")


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative sums along axis (include_initial: a leading 0); integer sums widen as sum() does.
    A device kernel (loom_scan), fused with the expression it scans."""
    return _cumulative("sum", x, axis, dtype, include_initial, 0, "cumulative_sum", out)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative products along axis (include_initial: a leading 1); a device kernel (loom_scan)."""
    return _cumulative("prod", x, axis, dtype, include_initial, 1, "cumulative_prod", out)


def cumsum(a, axis=None, dtype=None, out=None):
    """numpy.cumsum (axis=None: of the flattened array); a device kernel (loom_scan). Floats on the host
    have NumPy's bits (the same sequential order); GPUs add in a tree order within blocks."""
    return _numpy_scan("sum", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """numpy.cumprod (axis=None: of the flattened array); a device kernel (loom_scan)."""
    return _numpy_scan("prod", a, axis, dtype, out)


def _nan_to(a, v):
    x = _arr(a)
    if x.dtype.kind not in "fc":
        return x
    from ._indexing import where
    from ._math import isnan
    return where(isnan(x), v, x)


def nancumsum(a, axis=None, dtype=None, out=None):
    """numpy.nancumsum: cumsum with NaNs counted as 0 (the replacement is fused into the scan kernel)."""
    return _numpy_scan("sum", _nan_to(a, 0), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """numpy.nancumprod: cumprod with NaNs counted as 1 (fused into the scan kernel)."""
    return _numpy_scan("prod", _nan_to(a, 1), axis, dtype, out)


__all__ = ["argsort", "sort", "searchsorted", "unique_values", "unique_counts", "unique_inverse", "unique_all",
           "unique", "lexsort", "partition", "argpartition", "sort_complex", "cumulative_sum", "cumulative_prod", "cumsum", "cumprod", "nancumsum", "nancumprod"]
# the standard's names (loom's own); the CuPy names below them fill gaps the CuPy layer leaves
OWNED = __all__[:8]
