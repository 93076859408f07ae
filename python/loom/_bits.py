"""_bits.py: bit counting and packing (CuPy's cupy/_binary): bitwise_count, packbits, unpackbits.

All three are graph ops, so they fuse with what surrounds them: bitwise_count is the classic SWAR
population count (pairs, nibbles, bytes, then one multiply that sums the bytes) in the unsigned type of
the input's width; packbits weighs groups of 8 truth values by 128, 64, ..., 1 and sums them (one
reduction); unpackbits shifts each byte right by 7, 6, ..., 0 and masks the low bit (a broadcast).
"""
import numpy

from . import _core
from ._common import _np_dtype_of, _code
from ._ndarray import ndarray, _finish
from ._creation import asarray


def _bitwise_count(x, out=None, *, dtype=None, casting="same_kind"):
    """loom.bitwise_count(x): the number of 1 bits in ``|x|`` (uint8), elementwise, like numpy.bitwise_count."""
    x = asarray(x)
    if x.dtype == numpy.bool_:  # NumPy's int8 loop
        x = x.astype(numpy.int8)
    if x.dtype.kind not in "iu":
        raise TypeError(f"ufunc 'bitwise_count' not supported for the input types ({x.dtype}): it counts the "
                        "bits of integers; convert the input to an integer dtype")
    if dtype is not None and _np_dtype_of(dtype) != numpy.uint8:
        raise TypeError(f"No loop matching the specified signature and casting was found for ufunc bitwise_count "
                        f"(dtype={_np_dtype_of(dtype)}; its result is uint8)")
    if x.dtype.kind == "i":
        x = abs(x)  # NumPy counts the bits of the magnitude; abs(min) wraps to min, whose magnitude bit it is
    bits = x.dtype.itemsize * 8
    u = numpy.dtype(f"u{x.dtype.itemsize}")
    v = _core.cast(x, _code(u))

    def c(pattern):  # the byte pattern repeated over the width, as a constant of v's dtype
        return u.type(int.from_bytes(bytes([pattern]) * u.itemsize, "little"))

    v = v - ((v >> u.type(1)) & c(0x55))
    v = (v & c(0x33)) + ((v >> u.type(2)) & c(0x33))
    v = (v + (v >> u.type(4))) & c(0x0F)
    if bits > 8:
        v = (v * c(0x01)) >> u.type(bits - 8)  # the top byte sums every byte (wrapping multiply)
    return _finish(_core.cast(v, _code(numpy.uint8)), out, casting)


def _bitorder(bitorder):
    if bitorder not in ("big", "little"):
        raise ValueError(f"bitorder must be either 'big' or 'little', got {bitorder!r}")
    return bitorder


def packbits(a, axis=None, bitorder="big"):
    """loom.packbits(a, axis=None, bitorder='big'): the truth values of an integer or boolean array packed
    8 to a uint8 along axis (the flattened array when axis is None), the last byte padded with zeros,
    like numpy.packbits."""
    a = asarray(a)
    if a.dtype.kind not in "biu":
        raise TypeError(f"Expected an input array of integer or boolean data type, got {a.dtype}")
    _bitorder(bitorder)
    if axis is None:
        a, axis = a.ravel(), 0
    a = a.swapaxes(axis, -1)
    n = a.shape[-1]
    nbytes = -(-n // 8)
    bits = _core.cast(a != 0, _code(numpy.uint8))
    if nbytes * 8 != n:
        from ._manipulation import concatenate
        from ._creation import zeros
        bits = concatenate([bits, zeros(a.shape[:-1] + (nbytes * 8 - n,), numpy.uint8)], axis=-1)
    bits = bits.reshape(a.shape[:-1] + (nbytes, 8))
    weights = numpy.array([128, 64, 32, 16, 8, 4, 2, 1], numpy.uint8)
    if bitorder == "little":
        weights = weights[::-1].copy()
    r = (bits * asarray(weights)).sum(axis=-1, dtype=numpy.uint8)
    return r.swapaxes(axis, -1) if r.ndim else r


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """loom.unpackbits(a, axis=None, count=None, bitorder='big'): each byte of a uint8 array as 8 bits
    (uint8 0/1) along axis (the flattened array when axis is None); count keeps that many bits (a
    negative count drops bits from the end; more than 8 * n pads with zeros), like numpy.unpackbits."""
    a = asarray(a)
    if a.dtype != numpy.uint8:
        raise TypeError(f"Expected an input array of unsigned byte data type, got {a.dtype}")
    _bitorder(bitorder)
    if axis is None:
        a, axis = a.ravel(), 0
    if a.ndim == 0:
        raise ValueError("unpackbits: a 0-d array has no axis to unpack along; pass a 1-d array")
    a = a.swapaxes(axis, -1)
    shifts = numpy.arange(7, -1, -1, dtype=numpy.uint8)
    if bitorder == "little":
        shifts = shifts[::-1].copy()
    bits = (a.reshape(a.shape + (1,)) >> asarray(shifts)) & numpy.uint8(1)
    n = a.shape[-1] * 8
    bits = bits.reshape(a.shape[:-1] + (n,))
    if count is not None:
        count = int(count)
        keep = count if count >= 0 else max(n + count, 0)
        if keep <= n:
            bits = bits[..., :keep]
        else:
            from ._manipulation import concatenate
            from ._creation import zeros
            bits = concatenate([bits, zeros(a.shape[:-1] + (keep - n,), numpy.uint8)], axis=-1)
    return bits.swapaxes(axis, -1)


__all__ = ["packbits", "unpackbits"]
