"""Host (CPU) FFTs: NumPy's pocketfft, run on several threads, with long 1-D transforms split in two.

Approach. numpy.fft releases the GIL, so a transform with independent batch rows is cut into
loom.config.num_threads contiguous parts along a batch axis, each part transformed by numpy.fft in a pool
thread straight into its slice of the output (out=). A long 1-D complex transform (n = n1 * n2, both
factors >= 64, n1 ~ sqrt(n) / 4) takes the four-step (Bailey) route: transforms of length n1 down the columns
of x viewed as (n1, n2), a multiply by the twiddles exp(-+2 pi i k1 j2 / n) (computed in float64 from
k1 * j2 mod n, cached), transforms of length n2 along the rows, and a blocked transpose into the output;
each step is threaded over rows or columns. A long real transform packs the real signal into a complex
one of half the length (x[2m] + i x[2m + 1]), four-steps that, and untangles the two halves (the inverse
does the reverse). norm= is folded into the twiddles (one scale, no extra pass). The four-step works in
complex128 whatever the input (numpy's complex64 transforms are slower), in work buffers kept for the
next call (no fresh pages to fault in). fft / fft2 / fftn of a real input are its rfftn (half the work)
and the other half mirrored, X[k] = conj(X[-k]).

Contract: transform(name, a, *args) returns exactly what numpy.fft.<name>(a, *args) returns (dtype, shape,
values to within the FFT's rounding). Anything unusual (unsupported dtypes, bad n / axis / norm, small
transforms, lengths without two factors >= 64) goes to numpy.fft itself, which also raises its errors.
"""
import itertools
import math
import threading
from collections import OrderedDict

import numpy

from . import _host_parts

_MIN_THREADED_POINTS = 1 << 16   # a transform smaller than this (in output points) runs in the calling thread
_MIN_FOUR_STEP = 1 << 18         # a 1-D complex transform at least this long takes the four-step route
_MIN_FACTOR = 64                 # ... when it has a factor pair n1 * n2 with both factors >= this
_COLUMN_BLOCK = 64               # columns per numpy call of the four-step's column transforms
_TILE = 128                      # the four-step's transpose copies tiles of _TILE x _TILE points
_TWIDDLE_CACHE_BYTES = 128 << 20  # the twiddle tables kept (least recently used dropped first)
_SCRATCH_BYTES = 128 << 20        # the four-step's free work buffers kept for the next call
_WORK_IN_DOUBLE = True            # the four-step computes in complex128 (see _complex_four_step)

_FLOATS = (numpy.float32, numpy.float64)
_COMPLEXES = (numpy.complex64, numpy.complex128)
_NORMS = (None, "backward", "ortho", "forward")
_ONE_AXIS = {"fft": (False, False), "ifft": (False, True), "rfft": (True, False), "irfft": (True, True)}
_MANY_AXES = {"fftn": "fft", "fft2": "fft", "ifftn": "ifft", "ifft2": "ifft",
              "rfftn": "rfft", "rfft2": "rfft", "irfftn": "irfft", "irfft2": "irfft"}


def transform(name, a, *args):
    """numpy.fft.<name>(a, *args) of the host array a, faster where it can be (the module's approach)."""
    r = None
    if name in _ONE_AXIS:
        r = _one_axis(name, a, *args)
    elif name in _MANY_AXES:
        r = _many_axes(name, a, *args)
    return r if r is not None else getattr(numpy.fft, name)(a, *args)


# ---- threads: _host_parts.py -------------------------------------------------------------------------
_threads = _host_parts.threads
_in_parts = _host_parts.in_parts


def _quiet():
    """No floating-point warnings from the glue arithmetic (NaN / inf inputs warn in numpy's transforms
    themselves, as numpy.fft does)."""
    return numpy.errstate(invalid="ignore", over="ignore")


# ---- argument checks -----------------------------------------------------------------------------------
def _plain_int(v):
    return isinstance(v, (int, numpy.integer)) and not isinstance(v, (bool, numpy.bool_))


def _result_dtype(real_in, inverse, dtype):
    single = dtype in (numpy.float32, numpy.complex64)
    if real_in and inverse:  # irfft: real output
        return numpy.dtype(numpy.float32 if single else numpy.float64)
    return numpy.dtype(numpy.complex64 if single else numpy.complex128)


def _accepts(a, real_in, inverse):
    """Whether a's dtype is one this module transforms (rfft: real; irfft, fft, ifft: any of the four)."""
    if not isinstance(a, numpy.ndarray) or a.ndim == 0 or a.size == 0:
        return False
    if real_in and not inverse:
        return a.dtype in _FLOATS
    return a.dtype in _FLOATS + _COMPLEXES


def _one_axis(name, a, n=None, axis=-1, norm=None):
    real_in, inverse = _ONE_AXIS[name]
    if not _accepts(a, real_in, inverse) or norm not in _NORMS or not _plain_int(axis):
        return None
    if not -a.ndim <= axis < a.ndim:
        return None
    axis = int(axis) % a.ndim
    if n is None:
        n = 2 * (a.shape[axis] - 1) if (real_in and inverse) else a.shape[axis]
    if not _plain_int(n) or n < 1:
        return None
    if name == "fft" and a.dtype in _FLOATS:
        return _real_to_full(a, [int(n)], [axis], norm)
    return _pass(name, a, int(n), axis, norm)


def _many_axes(name, a, s=None, axes=None, norm=None):
    """numpy's n-dimensional transforms, as its passes of 1-D transforms (last axis first; irfftn: the
    others first), each pass through _pass. None (numpy decides) for deprecated or odd s / axes."""
    one = _MANY_AXES[name]
    if not isinstance(a, numpy.ndarray) or norm not in _NORMS or (s is not None and axes is None):
        return None
    if axes is None:
        axes = list(range(a.ndim))
    try:
        axes = [int(ax) for ax in axes if _plain_int(ax) or _fail()]
        if s is not None:
            s = [int(n) for n in s if _plain_int(n) or _fail()]
    except (TypeError, ValueError):
        return None
    if not axes or any(not -a.ndim <= ax < a.ndim for ax in axes):
        return None
    axes = [ax % a.ndim for ax in axes]
    if s is None:
        s = [a.shape[ax] for ax in axes]
        if one == "irfft":
            s[-1] = 2 * (s[-1] - 1)
    if len(s) != len(axes) or any(n < 1 for n in s):
        return None
    real_in, inverse = _ONE_AXIS[one]
    if not _accepts(a, real_in, inverse):
        return None
    if one == "fft" and a.dtype in _FLOATS and len(set(axes)) == len(axes):
        return _real_to_full(a, s, axes, norm)
    x = a
    if one == "irfft":
        for ax, n in zip(axes[:-1], s[:-1]):
            x = _pass("ifft", x, n, ax, norm)
        return _pass("irfft", x, s[-1], axes[-1], norm)
    if one == "rfft":
        x = _pass("rfft", x, s[-1], axes[-1], norm)
        axes, s, one = axes[:-1], s[:-1], "fft"
    for ax, n in reversed(list(zip(axes, s))):
        x = _pass(one, x, n, ax, norm)
    return x


def _real_to_full(a, s, axes, norm):
    """fftn of the real a over the distinct axes (lengths s): its rfftn (half the work), then the other
    half filled by the symmetry X[k] = conj(X[-k mod s]); numpy's complex passes when small."""
    points = a.size // math.prod(a.shape[ax] for ax in axes) * math.prod(s) if a.size else 0
    threads = _threads() if points >= _MIN_THREADED_POINTS else 1
    if threads == 1:
        x = a
        for ax, n in reversed(list(zip(axes, s))):
            x = numpy.fft.fft(x, n, ax, norm)
        return x
    x = _pass("rfft", a, s[-1], axes[-1], norm)
    for ax, n in reversed(list(zip(axes[:-1], s[:-1]))):
        x = _pass("fft", x, n, ax, norm)
    return _hermitian_full(x, axes, s[-1], threads)


def _hermitian_full(half, axes, n, threads):
    """The full spectrum (n points along axes[-1]) of a real input from its rfftn half over axes:
    full[k] = half[k] where k_last < m = n // 2 + 1, else conj(half[-k mod the length]) on every
    transformed axis; threaded over the last axis' positions."""
    nd, last, m = half.ndim, axes[-1], half.shape[axes[-1]]
    full = numpy.empty(half.shape[:last] + (n,) + half.shape[last + 1:], half.dtype)

    def on(axis_slices):
        idx = [slice(None)] * nd
        for ax, sl in axis_slices:
            idx[ax] = sl
        return tuple(idx)

    def columns(lo, hi):
        if lo < min(hi, m):
            full[on([(last, slice(lo, min(hi, m)))])] = half[on([(last, slice(lo, min(hi, m)))])]
        lo = max(lo, m)
        if lo >= hi:
            return
        for mirrored in itertools.product((False, True), repeat=len(axes) - 1):
            # dest positions k in lo:hi along the last axis read n - k; along another transformed axis,
            # 0 reads 0 and 1.. reads length - 1 .. 1 (mirrored)
            dest = [(last, slice(lo, hi))]
            src = [(last, slice(n - lo, n - hi, -1))]
            for ax, flip in zip(axes[:-1], mirrored):
                dest.append((ax, slice(1, None) if flip else slice(0, 1)))
                src.append((ax, slice(None, 0, -1) if flip else slice(0, 1)))
            numpy.conjugate(half[on(src)], out=full[on(dest)])

    _in_parts(n, columns, threads)
    return full


def _fail():
    raise TypeError


# ---- one pass over one axis ----------------------------------------------------------------------------
def _pass(name, a, n, axis, norm):
    """numpy.fft.<name>(a, n, axis, norm) with a valid n >= 1 and axis in [0, a.ndim)."""
    real_in, inverse = _ONE_AXIS[name]
    if a.size == 0:
        return getattr(numpy.fft, name)(a, n, axis, norm)
    out_len = n // 2 + 1 if (real_in and not inverse) else n
    batch = a.size // a.shape[axis]
    threads = _threads() if batch * out_len >= _MIN_THREADED_POINTS else 1  # small: no config lookup (~8 us)
    if threads == 1:
        return getattr(numpy.fft, name)(a, n, axis, norm)
    long_len = n // 2 if real_in else n
    if (not real_in or n % 2 == 0) and _factors(long_len) is not None:  # beats threaded rows at any batch
        return _rows_four_step(name, a, n, axis, norm, threads)
    if batch == 1:
        return getattr(numpy.fft, name)(a, n, axis, norm)
    return _threaded(name, a, n, axis, norm, out_len, threads)


def _threaded(name, a, n, axis, norm, out_len, threads):
    """The batch cut along the batch axis that splits best, each part transformed in its own thread."""
    real_in, inverse = _ONE_AXIS[name]
    shape = a.shape[:axis] + (out_len,) + a.shape[axis + 1:]
    out = numpy.empty(shape, _result_dtype(real_in, inverse, a.dtype))
    batch_axes = [d for d in range(a.ndim) if d != axis]
    split = next((d for d in batch_axes if a.shape[d] >= threads), max(batch_axes, key=lambda d: a.shape[d]))
    fn = getattr(numpy.fft, name)

    def part(lo, hi):
        cut = (slice(None),) * split + (slice(lo, hi),)
        fn(a[cut], n, axis, norm, out=out[cut])

    _in_parts(a.shape[split], part, threads)
    return out


def _factors(n):
    """(n1, n2) with n1 * n2 == n and both >= _MIN_FACTOR, n1 the divisor nearest below sqrt(n) / 4 (the
    length-n1 column transforms are the strided, costlier pass: measured fastest there, 10-20% over
    sqrt(n) at 2^20..2^24), else the smallest above it up to sqrt(n); None when there is none."""
    if n < _MIN_FOUR_STEP:
        return None
    root = math.isqrt(n)
    below = range(max(root // 4, _MIN_FACTOR), _MIN_FACTOR - 1, -1)
    above = range(max(root // 4 + 1, _MIN_FACTOR), root + 1)
    n1 = next((d for d in itertools.chain(below, above) if n % d == 0), None)
    return None if n1 is None else (n1, n // n1)


def _scale(norm, n, inverse):
    """The factor that turns the unnormalized n-point transform into numpy's for norm."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") != inverse else 1.0


def _rows_four_step(name, a, n, axis, norm, threads):
    """The transform of each of a's rows along axis, one after the other, each by the four-step (long rows
    are cache-unfriendly as one numpy call: 2 x 2^22 points took 202 ms on 2 threads, 92 ms this way)."""
    real_in, inverse = _ONE_AXIS[name]
    dtype = _result_dtype(real_in, inverse, a.dtype)
    rows = numpy.moveaxis(a, axis, -1)
    lead = rows.shape[:-1]
    rows = rows.reshape(-1, rows.shape[-1])
    out_len = n // 2 + 1 if (real_in and not inverse) else n
    out = numpy.empty((rows.shape[0], out_len), dtype)
    for r in range(rows.shape[0]):
        if not real_in:
            _complex_four_step(_fitted(rows[r], n, dtype), out[r], inverse, _scale(norm, n, inverse), threads)
        elif not inverse:
            _real_forward(_fitted(rows[r], n, rows.dtype), out[r], _scale(norm, n, False), threads)
        else:
            half = _fitted(rows[r], n // 2 + 1, _result_dtype(False, False, a.dtype))
            _real_inverse(half, out[r], 2.0 * _scale(norm, n, True), threads)
    return numpy.moveaxis(out.reshape(lead + (out_len,)), -1, axis)


def _fitted(v, n, dtype):
    """The 1-D v cropped or zero-padded to n, of dtype, C-contiguous (v itself when it already is)."""
    m = min(n, v.shape[0])
    if v.shape[0] == n and v.dtype == dtype and v.flags.c_contiguous:
        return v
    r = numpy.empty(n, dtype)
    r[:m] = v[:m]
    r[m:] = 0
    return r


# ---- the four-step complex transform -------------------------------------------------------------------
_twiddle_lock = threading.Lock()
_twiddle_cache: OrderedDict = OrderedDict()


def _cached(key, make):
    with _twiddle_lock:
        hit = _twiddle_cache.get(key)
        if hit is not None:
            _twiddle_cache.move_to_end(key)
            return hit
    table = make()
    if table.nbytes > _TWIDDLE_CACHE_BYTES:
        return table  # used once, not kept
    with _twiddle_lock:
        _twiddle_cache[key] = table
        total = sum(t.nbytes for t in _twiddle_cache.values())
        while total > _TWIDDLE_CACHE_BYTES:
            _, old = _twiddle_cache.popitem(last=False)
            total -= old.nbytes
    return table


def _unit_roots(k, n, sign, scale, dtype):
    """scale * exp(sign * 2 pi i k / n) for the int64 array k, as dtype: with m = k mod n = a * 2^b + c
    (c < 2^b ~ sqrt(n)), the product of two small float64 tables, exp(. a 2^b / n) * exp(. c / n), each
    from cos / sin of the exact m (a product of two correctly rounded roots: within a few float64 ulps)."""
    bits = (n.bit_length() + 1) // 2
    tables = _root_tables(n, bits, sign)
    m = k % n
    r = numpy.take(tables[0], m >> bits)
    r *= numpy.take(tables[1], m & ((1 << bits) - 1))
    if scale != 1.0:
        r *= scale
    return r.astype(dtype, copy=False)


def _root_tables(n, bits, sign):
    """exp(sign 2 pi i a 2^bits / n) for a in 0..n >> bits, and exp(sign 2 pi i c / n) for c < 2^bits."""
    def roots(m):
        angle = m.astype(numpy.float64) * (sign * 2.0 * math.pi / n)
        return numpy.cos(angle) + 1j * numpy.sin(angle)
    return (roots(numpy.arange((n >> bits) + 1, dtype=numpy.int64) << bits),
            roots(numpy.arange(1 << bits, dtype=numpy.int64)))


def _twiddles(n1, n2, inverse, scale, dtype, threads):
    """(n1, n2) table scale * exp(-+2 pi i k1 j2 / n), -+ as the direction (cached)."""
    def make():
        n = n1 * n2
        table = numpy.empty((n1, n2), dtype)
        j2 = numpy.arange(n2, dtype=numpy.int64)

        def rows(lo, hi):
            k1 = numpy.arange(lo, hi, dtype=numpy.int64)[:, None]
            table[lo:hi] = _unit_roots(k1 * j2, n, 1.0 if inverse else -1.0, scale, dtype)

        _in_parts(n1, rows, threads)
        return table
    return _cached(("four-step", n1, n2, inverse, scale, numpy.dtype(dtype).char), make)


def _complex_four_step(x, out, inverse, scale, threads):
    """out[:] = scale * the unnormalized DFT (inverse: the sign flipped) of the contiguous complex x, out
    contiguous of x's length and dtype, by the four-step algorithm (the module's approach). The steps run
    in complex128 whatever the dtype: numpy's complex64 transforms are slower (no SIMD) and less exact."""
    n = x.shape[0]
    n1, n2 = _factors(n)
    sub = numpy.fft.ifft if inverse else numpy.fft.fft
    plain = "forward" if inverse else "backward"  # no scaling in either direction
    work = numpy.dtype(numpy.complex128 if _WORK_IN_DOUBLE else out.dtype)
    grid = x.reshape(n1, n2)
    cols, spectra = _borrow((n1, n2), work), _borrow((n1, n2), work)
    twiddles = _twiddles(n1, n2, inverse, scale, work, threads)

    def columns(lo, hi):  # length-n1 transforms down the columns lo:hi
        for b in range(lo, hi, _COLUMN_BLOCK):
            e = min(hi, b + _COLUMN_BLOCK)
            sub(grid[:, b:e].astype(work), None, 0, plain, out=cols[:, b:e])

    def rows(lo, hi):  # twiddled, then length-n2 transforms along the rows lo:hi
        with _quiet():
            numpy.multiply(cols[lo:hi], twiddles[lo:hi], out=cols[lo:hi])
        sub(cols[lo:hi], None, 1, plain, out=spectra[lo:hi])

    result = out.reshape(n2, n1)

    def transposed(lo, hi):  # result[k2, k1] = spectra[k1, k2] for k2 in lo:hi, in cache-sized tiles
        for b in range(lo, hi, _TILE):
            e = min(hi, b + _TILE)
            for c in range(0, n1, _TILE):
                result[b:e, c:c + _TILE] = spectra[c:c + _TILE, b:e].T

    try:
        _in_parts(n2, columns, threads)
        _in_parts(n1, rows, threads)
        _in_parts(n2, transposed, threads)
    finally:
        _give_back(cols)
        _give_back(spectra)


_scratch_lock = threading.Lock()
_scratch: OrderedDict = OrderedDict()  # (shape, dtype char) -> a free work buffer of the four-step


def _borrow(shape, dtype):
    """A work buffer (uninitialized): one given back earlier when there is one (no fresh pages to fault in)."""
    with _scratch_lock:
        free = _scratch.pop((shape, dtype.char), None)
    return free if free is not None else numpy.empty(shape, dtype)


def _give_back(buf):
    """Keeps buf for the next _borrow, the least recently given back dropped past _SCRATCH_BYTES."""
    with _scratch_lock:
        _scratch[(buf.shape, buf.dtype.char)] = buf
        while sum(b.nbytes for b in _scratch.values()) > _SCRATCH_BYTES:
            _scratch.popitem(last=False)


# ---- real transforms through a complex one of half the length ------------------------------------------
def _half_weights(n, inverse, dtype):
    """The untangling weights of a real n-point transform (n even, h = n / 2): forward u_k =
    (1 - i exp(-2 pi i k / n)) / 2 for k in 0..h; inverse v_k = (1 + i exp(2 pi i k / n)) / 2, k in 0..h-1."""
    def make():
        h = n // 2
        k = numpy.arange(h if inverse else h + 1, dtype=numpy.int64)
        roots = _unit_roots(k, n, 1.0 if inverse else -1.0, 1.0, numpy.complex128)
        w = 0.5 * (1 + 1j * roots) if inverse else 0.5 * (1 - 1j * roots)
        return w.astype(dtype)
    return _cached(("real", n, inverse, numpy.dtype(dtype).char), make)


def _real_forward(x, out, scale, threads):
    """out (n / 2 + 1 points) = scale * the unnormalized rfft of the contiguous real x (n even)."""
    n = x.shape[0]
    h = n // 2
    z = numpy.empty(h + 1, out.dtype)  # Z = DFT of x[0::2] + i x[1::2], then Z[h] = Z[0]
    _complex_four_step(x.view(out.dtype), z[:h], False, scale, threads)
    z[h] = z[0]
    mirrored = z[::-1]  # mirrored[k] = Z[h - k]
    weights = _half_weights(n, False, out.dtype)

    def untangle(lo, hi):  # X[k] = conj(Z[h-k]) + u_k (Z[k] - conj(Z[h-k]))
        with _quiet():
            c = numpy.conj(mirrored[lo:hi])
            d = numpy.subtract(z[lo:hi], c)
            d *= weights[lo:hi]
            numpy.add(d, c, out=out[lo:hi])

    _in_parts(h + 1, untangle, threads)


def _real_inverse(spectrum, out, scale, threads):
    """out (n points, n even) = scale / 2 * the unnormalized irfft of spectrum (n / 2 + 1 points,
    contiguous complex; the imaginary parts of its first and last points are ignored, as numpy does)."""
    n = out.shape[0]
    h = n // 2
    z = numpy.empty(h, spectrum.dtype)  # Z[k] = conj(X[h-k]) + v_k (X[k] - conj(X[h-k])), k < h
    mirrored = spectrum[::-1]  # mirrored[k] = X[h - k]
    weights = _half_weights(n, True, spectrum.dtype)

    def tangle(lo, hi):
        with _quiet():
            c = numpy.conj(mirrored[lo:hi])
            d = numpy.subtract(spectrum[lo:hi], c)
            d *= weights[lo:hi]
            numpy.add(d, c, out=z[lo:hi])

    _in_parts(h, tangle, threads)
    first, last = float(spectrum[0].real), float(spectrum[h].real)
    z[0] = complex(0.5 * (first + last), 0.5 * (first - last))  # Python floats: inf - inf is nan, silently
    _complex_four_step(z, out.view(spectrum.dtype), True, scale, threads)
