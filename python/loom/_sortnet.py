"""_sortnet.py: the sort engine of a loom array's own device: a bitonic sorting network whose every
step is one gather-free elementwise kernel, on any backend (host, CUDA, HIP) through the ordinary
fusion and code generation (no kernel-IR node of its own).

Approach. The rows to sort (the sort axis moved last, the other axes flattened: R rows of n) are
copied into buffers of R x N, N = 2^m >= n, whose tail (the pads) holds a value that orders after
every real element. The network is Batcher's bitonic sort in its "flip" form, every step ascending:
for each block size s = 2, 4, ..., N one flip step pairs element o of every block of s with element
s-1-o, then half-cleaners for j = s/4, ..., 1 pair element i with i ^ j; in each pair the lower
position takes the element that orders first. The partner of every element is a VIEW of the same
buffer -- reshaped to [R N/2h, 2, h] (h = s/2 or j) and reversed along both last axes (flip) or the
size-2 axis (half-cleaner) -- so a step is
`out = where(swap, partner, self)` over a reversed view: one fused kernel per step that reads each
array and writes it once, which the kernel IR expresses without gather or scatter stores.

Order (NumPy's): keys compare lexicographically (a complex number as key_parts says), NaN after every
number (before, when descending, as the standard's descending sort: the reverse of the ascending order
of the reversed row); -0.0 and 0.0 are equal. With an index array the original position breaks ties,
so the order is stable (argsort, kind='stable', and every sort with payloads); pads carry indices >= n
and so stay after equal real elements. Without one (sort of values, not stable) a pair swaps only
when strictly out of order, which keeps a permutation.

Cost: m(m+1)/2 steps, each one pass over the R x N keys, indices and payloads (the partner's read
hits the lines the step reads anyway): for 2^24 float32 keys with int32 indices, 300 passes of 16 B
per element read and written.

The radix engine. On GPU arrays `sort_rows` runs the device radix sort instead (loom_sort: library
kernels of codegen/gpu_radix.c, one histogram read and one sweep per key byte: 4 passes for float32)
when every key is real (a complex key's parts are) and a row has fewer than 2^30 keys, and the rows are
long (n >= RADIX_MIN_ROW) or there is one row, or a cost model says it is faster (_radix_cheaper): a
tile of the radix sort holds 2048-4096 keys of one row, so many short rows leave tiles mostly idle while
the network's m(m+1)/2 steps over them are few (2^16 rows of 1024); a few hundred short rows still sort
faster by radix, whose 2 + bytes launches beat the network's m(m+1)/2 (1000 rows of 1000: ~10x); one
row of any length takes the radix sort. Rows short enough for one block's shared memory (block_row_capacity:
up to 8192 keys) sort in a single launch, a block a row (the runtime's block row sort), which the cost
model prefers to the network for any number of such rows.
Several keys sort least significant first, each later sort carrying the permutation as its values
(keys gathered by it, loom_take_rows); payloads are gathered by the final permutation.
LOOM_SORT_ENGINE=network (or radix) forces an engine on GPUs.
"""
import os

import numpy

from . import _core
from ._common import _OPS, _code, _kind

_INT32_MAX = 2**31 - 1


def _b(name, a, b):
    return _core.binary(_OPS[name], a, b)


def _u(name, a):
    return _core.unary(_OPS[name], a)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


def _pad_value(dtype, descending):
    """A key value that orders after (ascending) or is the last of (descending) every real value of
    dtype: NaN / -inf for floats, the integer extremes, True / False for bool."""
    k = _kind(dtype)
    if k == "f":
        return -numpy.inf if descending else numpy.nan
    if k == "b":
        return not descending
    info = numpy.iinfo(dtype)
    return int(info.min if descending else info.max)


def _less(a, b, nan):
    """a strictly before b in ascending order, NaN last."""
    r = _b("lt", a, b)
    if nan:
        r = _b("logical_or", r, _b("logical_and", _u("isnan", b), _u("logical_not", _u("isnan", a))))
    return r


def _equal(a, b, nan):
    r = _b("eq", a, b)
    if nan:
        r = _b("logical_or", r, _b("logical_and", _u("isnan", a), _u("isnan", b)))
    return r


def _before(s_keys, p_keys, s_idx, p_idx, nans, descending):
    """Whether element s orders strictly before element p: keys lexicographically, then the index."""
    r = None if s_idx is None else _b("lt", s_idx, p_idx)
    for s, p, nan in reversed(list(zip(s_keys, p_keys, nans))):
        lt = _less(p, s, nan) if descending else _less(s, p, nan)
        r = lt if r is None else _b("logical_or", lt, _b("logical_and", _equal(s, p, nan), r))
    return r


def _step(arrays, items, lower, nkeys, has_idx, nans, descending, half, flip):
    """One compare-exchange step over every row: arrays (keys, then the index, then payloads; items:
    their item sizes) are C-contiguous buffers of R x N elements, viewed as [R N / 2half, 2, half]
    (pairs of half-blocks; the row boundaries fall between them); the partner of each element is that
    view reversed along the size-2 axis (a half-cleaner: i <-> i ^ half) or along both last axes (flip:
    o <-> 2half-1-o within each block); `lower` ([[True], [False]] on the device, broadcast) marks the
    first half-block of each pair. One shape pattern for every step keeps the compiled kernels few (the
    sizes are kernel parameters). The views are made from the buffers' geometry directly (_core.view:
    byte offsets and strides), which costs a fraction of ndarray.reshape + slicing per step."""
    rb = arrays[0].size // (2 * half)
    shape = (rb, 2, half)
    selfs, parts = [], []
    for a, it in zip(arrays, items):
        selfs.append(_core.view(a, 0, shape, (2 * half * it, half * it, it)))
        if flip:
            parts.append(_core.view(a, (2 * half - 1) * it, shape, (2 * half * it, -half * it, -it)))
        else:
            parts.append(_core.view(a, half * it, shape, (2 * half * it, -half * it, it)))
    si = selfs[nkeys] if has_idx else None
    pi = parts[nkeys] if has_idx else None
    sk, pk = selfs[:nkeys], parts[:nkeys]
    if has_idx:  # no ties: the lower element swaps iff the partner orders first, the upper iff it does not
        swap = _b("logical_xor", lower, _before(sk, pk, si, pi, nans, descending))
    else:  # ties possible: swap only a pair strictly out of order
        swap = _core.where(lower, _before(pk, sk, None, None, nans, descending),
                           _before(sk, pk, None, None, nans, descending))
    outs = [_core.where(swap, p, x) for x, p in zip(selfs, parts)]
    _core.eval(*outs)
    return outs


def _padded(x2, n_pad, fill):
    """x2 (R x n, any layout) copied into a new C-contiguous R x n_pad buffer on its device, the tail
    filled with `fill` (None: x2 has no tail)."""
    r, n = x2.shape
    out = _core.empty((r, n_pad), x2._dtype_code, False, *x2._device)
    if n == n_pad:
        _core.assign(out, x2)
    else:
        _core.assign(out[:, :n], x2)
        _core.assign(out[:, n:], fill)
    return out


def key_parts(x2):
    """The key components of x2 and whether each has NaN. A complex key is (class, real, imag), NumPy's
    order: the class 2 * isnan(real) + isnan(imag) first (R+Rj, R+nanj, nan+Rj, nan+nanj), then the
    parts (a NaN part ties with NaN)."""
    k = _kind(x2.dtype)
    if k == "c":
        re, im = _u("real", x2), _u("imag", x2)
        u8 = _code("uint8")
        cls = _b("add", _b("mul", _core.cast(_u("isnan", re), u8), 2), _core.cast(_u("isnan", im), u8))
        return [_core.cast(cls, u8), re, im], [False, True, True]
    return [x2], [k == "f"]


RADIX_MIN_ROW = 2048  # keys per row from which many rows sort by radix (one row always does)
_RADIX_MAX_ROW = 2**30
_SORT_DESCENDING, _SORT_INDEX = 1, 2  # loom.h's LOOM_SORT_* flags


def _engine():
    eng = os.environ.get("LOOM_SORT_ENGINE", "auto").strip().lower() or "auto"
    if eng not in ("auto", "network", "numpy", "radix"):
        raise ValueError(f"LOOM_SORT_ENGINE must be 'auto', 'network', 'radix' or 'numpy', not {eng!r}")
    return eng


_BLOCK_ROW_ROOM = 49152 - (8 * 1024 + 1024 + 64)  # shared bytes a block row sort stages its row in


def block_row_capacity(key_bytes, value_bytes):
    """Keys of the longest row the device sorts within one block (loom_radix_rows<I>, gpu_radix_rows.c: 256 I
    keys, I = 1, 2, 4 .. 32 whose keys and values fit the block's shared memory; runtime/gpu/gpu_sort.c
    picks it for rows this short unless LOOM_GPU_RADIX_ROWS=0): 8192 for 4-byte keys alone, 4096 for
    float32 argsort (int32 index) or float64, 2048 for float64 argsort; 0 when disabled."""
    if os.environ.get("LOOM_GPU_RADIX_ROWS", "").strip() == "0":
        return 0
    cap = 0
    for i in (1, 2, 4, 8, 16, 32):
        if 256 * i * (key_bytes + value_bytes) <= _BLOCK_ROW_ROOM:
            cap = 256 * i
    return cap


def _radix_cheaper(keys, r, n, extra_bytes):
    """Whether R rows of n keys sort faster by radix than by the network, from the costs measured on the
    H200 (bench/results/2026-12-02-0407-sort-h200.json): a radix pass takes ~50 ns per tile (a tile holds
    2048 or 4096 keys of one row, so a short row costs a whole tile) plus ~30 us of launches; a network
    step ~40 us of launches plus its bytes at ~3 TB/s (keys, the index and payloads read and written, rows
    padded to 2^m). 1000 rows of 1000 float32: radix ~0.2 ms, network 2.6 ms (measured 2.64); 2^16 rows of
    1024: radix ~13 ms, network ~12 ms (measured 10.1).
    Rows that fit one block (block_row_capacity) sort in one launch, a block a row: ~10 us plus ~2 ns per
    256-key slice of a row per digit pass (a prediction from the kernel's shape: a pass is ~4 barriers
    and I dependent wave ranks; bench/sort_sweep.py's row cases measure it), and the row read and written
    once: 1000 x 1000 float32 ~40 us, 2^16 x 1024 ~2 ms, 10^4 x 100 ~0.1 ms."""
    kb = [numpy.dtype(k.dtype).itemsize for k in keys]
    m = (n - 1).bit_length()
    network_us = m * (m + 1) // 2 * (40 + r * 2**m * (sum(kb) + extra_bytes) * 2 / 3e6)
    # values beside the keys: none, argsort's int32 index (one key), the int64 order (later keys of several)
    vbytes = 0 if len(kb) == 1 and not extra_bytes else 4 if len(kb) == 1 else 8
    if n <= block_row_capacity(max(kb), vbytes):  # one block launch per key (+ gathers for several keys)
        block_us = sum(10 + r * k * -(-n // 256) * 0.002 + r * n * (k + vbytes) * 2 / 3e6 for k in kb)
        return block_us < network_us
    tiles = r * -(-n // (4096 if max(kb) <= 4 else 2048))
    radix_us = 30 + sum(kb) * tiles * 0.05
    return radix_us < network_us


def use_radix(keys, r, n, extra_bytes=0):
    """Whether rows of these keys (R x n loom arrays) sort through the device radix sort: one row, rows of
    RADIX_MIN_ROW keys or more, or rows the radix sort does faster than the network (_radix_cheaper;
    extra_bytes: what the network moves along per key, the index and payloads)."""
    if keys[0]._device[0] == 0 or n >= _RADIX_MAX_ROW or any(_kind(k.dtype) == "c" for k in keys):
        return False
    eng = _engine()
    if eng == "network":
        return False
    return eng == "radix" or n >= RADIX_MIN_ROW or r == 1 or _radix_cheaper(keys, r, n, extra_bytes)


def _contig(x):
    """x itself when the radix sort can read it in place (C-contiguous), else a C-contiguous copy."""
    return x if x.flags.c_contiguous else _padded(x, x.shape[1], None)


def _radix_rows(keys, descending, want_index, payloads):
    """sort_rows through loom_sort: (keys, int64 index or None, payloads)."""
    flags = _SORT_DESCENDING if descending else 0
    ks = [_contig(k) for k in keys]
    if len(ks) == 1 and not want_index and not payloads:
        return [_core.radix_sort(ks[0], None, flags)[0]], None, []
    if len(ks) == 1 and not want_index and len(payloads) == 1 and numpy.dtype(payloads[0].dtype).itemsize in (4, 8):
        sk, sv = _core.radix_sort(ks[0], _contig(payloads[0]), flags)
        return [sk], None, [sv]
    sk, perm = _core.radix_sort(ks[-1], None, flags | _SORT_INDEX)
    for k in reversed(ks[:-1]):  # least significant key first: each sort stable, carrying the order
        sk, perm = _core.radix_sort(_core.take_rows(k, perm), perm, flags)
    out = [sk if i == 0 else _core.take_rows(k, perm) for i, k in enumerate(ks)]
    return out, (perm if want_index else None), [_core.take_rows(_contig(p), perm) for p in payloads]


def sort_rows(keys, nans, descending=False, stable=False, payloads=()):
    """Sorts the rows of the 2-d loom arrays `keys` (each R x n, on one device; compared
    lexicographically, keys[0] first; nans[i]: keys[i] has NaNs to order last) on their device.

    Returns (keys, index, payloads): the keys in sorted order (R x n each); index (int64, R x n) the
    original positions in sorted order when stable (ties then keep their order) or payloads are
    given, else None; payloads (each R x n, any dtype) moved along with their rows' keys.
    descending: the reverse of the ascending order of the reversed row (NaN first, equal elements in
    their original order)."""
    r, n = keys[0].shape
    dev = keys[0]._device
    has_idx = bool(stable or payloads)
    n_pad = _pow2(n)
    extra = (4 if has_idx else 0) + sum(numpy.dtype(p.dtype).itemsize for p in payloads)
    if r > 0 and n > 1 and use_radix(keys, r, n, extra):
        try:
            return _radix_rows(keys, descending, has_idx, payloads)
        except NotImplementedError as e:  # the device cannot build the kernels (no code-object linker, ...)
            import warnings
            warnings.warn(f"loom: the device radix sort is unavailable ({e}); sorting with the network",
                          RuntimeWarning, stacklevel=3)
    if r == 0 or n <= 1:
        idx = _core.empty((r, n), _code("int64"), True, *dev) if has_idx else None  # all 0
        return [_padded(k, n, None) for k in keys], idx, [_padded(p, n, None) for p in payloads]
    arrays = [_padded(k, n_pad, _pad_value(k.dtype, descending)) for k in keys]
    if has_idx:
        it = _code("int32") if n_pad <= _INT32_MAX else _code("int64")
        idx = _core.empty((r, n_pad), it, False, *dev)
        _core.assign(idx, _core.cast(_core.iota((n_pad,)), it))
        arrays.append(idx)
    for p in payloads:
        arrays.append(_padded(p, n_pad, 0))
    nk = len(keys)
    lower = _core.empty((2, 1), _code("bool"), False, *dev)  # a buffer, not an iota: the steps stay bundlable
    _core.assign(lower[:1], True)
    _core.assign(lower[1:], False)
    items = [numpy.dtype(a.dtype).itemsize for a in arrays]
    s = 2
    while s <= n_pad:
        arrays = _step(arrays, items, lower, nk, has_idx, nans, descending, s // 2, True)
        j = s // 4
        while j >= 1:
            arrays = _step(arrays, items, lower, nk, has_idx, nans, descending, j, False)
            j //= 2
        s *= 2
    out = [_core.view(a, 0, (r, n), (n_pad * it, it)) for a, it in zip(arrays, items)]
    idx = _core.cast(out[nk], _code("int64")) if has_idx else None
    return out[:nk], idx, out[nk + int(has_idx):]
