"""_float_bits.py: frexp, nextafter and spacing (numpy.frexp / nextafter / spacing, bit for bit) as graph
ops, so they stay lazy, fuse with what surrounds them and run on every device.

Approach: the graph has no bit reinterpretation of a pending value (ndarray.view(dtype) needs memory, so
it evaluates its array), so the bits are never read; every quantity NumPy takes from the bits is found
with exact float arithmetic instead, in float64 (float16 and float32 values, their neighbours and their
spacings are all normal float64 numbers, so no step meets a subnormal or a device that flushes them):
  - the exponent e of |x| = m * 2**e, m in [0.5, 1): floor(log2|x|) + 1, then one correction each way
    (log2 may round across a power of two), m = |x| * 2**-e being an exact scaling; float64 subnormals
    are scaled by 2**64 first;
  - the neighbour of x towards y: x +/- 2**k, exact, where 2**k is the unit in the last place of x's
    binade in x's own dtype (2**(max(e - 1, minexp) - nmant)), halved when the step goes towards zero
    from a power of two above the smallest normal; past the largest finite value the sum rounds to inf,
    as the bit increment NumPy does overflows into inf;
  - powers of two from exp2 of integers, as ldexp (_math.py) makes them, split in two factors where one
    would be a float64 subnormal.
Zeros, infinities and NaNs are chosen with where from the operands themselves, so NaN results keep the
bits NumPy returns (its float16 loops return the default NaN 0x7e00). bfloat16 keeps ml_dtypes' loops on a
host copy (_math._host_ufunc_impl).
"""
import numpy

from . import _core
from ._common import _code, _is_bf16
from ._creation import asarray
from ._math import _b, _host_ufunc_impl, _u
from ._ndarray import ndarray, _operand

_F64 = _code(numpy.float64)
_I32 = _code(numpy.int32)  # numpy.intc: frexp's exponent dtype


def _float_args(name, *xs):
    """The operands cast to the float loop NumPy's ufunc `name` picks for them (NEP 50: a Python scalar
    takes the arrays' dtype; bool and integer arrays the first float type that holds them, float64
    beside a Python int for bool), all loom arrays of that dtype t; no loop (complex) is NumPy's
    TypeError. Returns (arrays, t); t None for bfloat16 (ml_dtypes' own loops: the host path)."""
    ops = [_operand(x) for x in xs]
    if not any(isinstance(x, ndarray) for x in ops):
        ops[0] = asarray(ops[0])
    kinds = tuple(x.dtype if isinstance(x, ndarray) else numpy.dtype(bool) if isinstance(x, bool) else type(x)
                  for x in ops)
    npf = getattr(numpy, name)
    try:
        t = npf.resolve_dtypes(kinds + (None,) * npf.nout)[0]
    except TypeError as e:  # numpy's UFuncTypeError, loom's function name
        raise TypeError(f"loom.{name}: {e}") from None
    if _is_bf16(t):
        return ops, None
    code = _code(t)
    return [(x if x.dtype == t else _core.cast(x, code)) if isinstance(x, ndarray) else _core.const(x, code)
            for x in ops], t


def _wide(x):
    """x as float64 (exact for float16 / float32)."""
    return x if x.dtype == numpy.float64 else _core.cast(x, _F64)


def _pow2(k, split):
    """2.0**k (float64) of an int32 array k; split: |k| may pass 1022, so two exact factors."""
    if not split:
        return _u("exp2", _core.cast(k, _F64))
    h = _b("floordiv", k, 2)
    return _b("mul", _pow2(h, False), _pow2(_b("sub", k, h), False))


def _exponent(a, t):
    """(m, e) with a = m * 2**e, m in [0.5, 1) (float64), e int32, of a float64 array a of positive finite
    values of dtype t."""
    f64 = t == numpy.float64
    if f64:  # a subnormal float64: scaled into the normal range first
        sub = _b("lt", a, float(numpy.finfo(numpy.float64).tiny))
        a = _core.where(sub, _b("mul", a, 2.0**64), a)
    e = _b("add", _core.cast(_u("floor", _u("log2", a)), _I32), 1)
    m = _b("mul", a, _pow2(_u("neg", e), f64))
    big = _b("ge", m, 1.0)
    m, e = _core.where(big, _b("mul", m, 0.5), m), _b("add", e, _core.cast(big, _I32))
    small = _b("lt", m, 0.5)
    m, e = _core.where(small, _b("mul", m, 2.0), m), _b("sub", e, _core.cast(small, _I32))
    if f64:
        e = _b("sub", e, _b("mul", _core.cast(sub, _I32), 64))
    return m, e


def _step(xw, away, t):
    """The distance (float64, positive) from xw, float64 values of dtype t, finite and nonzero, to the
    neighbour in t that is farther from zero (away True) or nearer to it (away False; None: always
    farther): the unit in the last place of xw's binade, half that below a power of two."""
    fi = numpy.finfo(t)
    m, e = _exponent(_u("abs", xw), t)
    binade = _b("sub", e, 1)
    k = _b("sub", _b("maximum", binade, fi.minexp), fi.nmant)
    if away is not None:
        half = _b("logical_and", _b("logical_and", _u("logical_not", away), _b("eq", m, 0.5)),
                  _b("gt", binade, fi.minexp))
        k = _b("sub", k, _core.cast(half, _I32))
    return _pow2(k, t == numpy.float64)


def _finite_nonzero(xw):
    """(mask, xw with 1.0 where the mask is False): the values the arithmetic paths may see."""
    ok = _b("logical_and", _u("isfinite", xw), _b("ne", xw, 0.0))
    return ok, _core.where(ok, xw, 1.0)


def frexp(x):
    """(mantissa, exponent) with x = mantissa * 2**exponent, |mantissa| in [0.5, 1) and x's dtype, the
    exponent int32; zeros, infinities and NaNs give (x, 0) (numpy.frexp)."""
    (x,), t = _float_args("frexp", x)
    if t is None:
        return _host_ufunc_impl("frexp", 1)(x)
    xw = _wide(x)
    ok, safe = _finite_nonzero(xw)
    m, e = _exponent(_u("abs", safe), t)
    mant = _core.cast(_b("copysign", m, safe), _code(t))
    return _core.where(ok, mant, x), _core.where(ok, e, 0)


def nextafter(x1, x2):
    """The next value of x1's dtype after x1 towards x2 (numpy.nextafter): NaN where either is NaN, x2
    where they are equal (x1 for float16, as NumPy's half loop), +/- the smallest subnormal from a zero,
    the largest finite value from an infinity, inf past the largest finite value."""
    (x, y), t = _float_args("nextafter", x1, x2)
    if t is None:
        return _host_ufunc_impl("nextafter", 2)(x, y)
    code = _code(t)
    fi = numpy.finfo(t)
    xw, yw = _wide(x), _wide(y)
    up = _b("gt", yw, xw)
    ok, safe = _finite_nonzero(xw)
    step = _step(safe, _b("eq", up, _b("gt", safe, 0.0)), t)
    # the sign stays x's (-tiny towards zero is -0.0, as the bits' decrement gives)
    r = _core.cast(_b("copysign", _b("add", safe, _core.where(up, step, _u("neg", step))), safe), code)
    tiny = float(fi.smallest_subnormal)
    r = _core.where(_b("eq", xw, 0.0), _core.cast(_core.where(up, tiny, -tiny), code), r)
    big = float(fi.max)
    r = _core.where(_u("isinf", xw), _core.cast(_core.where(_b("gt", xw, 0.0), big, -big), code), r)
    # equal operands give x2 (x1 for float16, as NumPy's half loop): they differ at most in a zero's sign,
    # so x1 is written copysign(x2, x1), which no select rewrite may replace by x2 (a GPU's does)
    r = _core.where(_b("eq", xw, yw), _b("copysign", y, x) if t == numpy.float16 else y, r)
    if t == numpy.float16:  # NumPy's half loop: the default NaN
        return _core.where(_b("logical_or", _u("isnan", x), _u("isnan", y)), _core.const(float("nan"), code), r)
    # x1 + x2, as C's nextafter returns it on a NaN: y's NaN if it is one, else x's
    return _core.where(_u("isnan", y), y, _core.where(_u("isnan", x), x, r))


def spacing(x):
    """The distance from x to its neighbour (numpy.spacing): for float32 and float64 the neighbour
    farther from zero, signed as x (spacing(-1.0) < 0; +/-0.0 give the smallest subnormal, +/-max +/-inf);
    for float16, as NumPy's half loop, nextafter(x, inf) - x (always positive). inf and NaN give NaN (the
    default NaN; a float32 / float64 NaN keeps its own, as x - x does)."""
    (x,), t = _float_args("spacing", x)
    if t is None:
        return _host_ufunc_impl("spacing", 1)(x)
    code = _code(t)
    fi = numpy.finfo(t)
    xw = _wide(x)
    ok, safe = _finite_nonzero(xw)
    nan = _core.const(float("nan"), code)
    if t == numpy.float16:
        s = _step(safe, _b("gt", safe, 0.0), t)
        s = _core.where(_b("eq", safe, float(fi.max)), numpy.inf, s)
        r = _core.where(ok, _core.cast(s, code), float(fi.smallest_subnormal))
        return _core.where(_u("isfinite", x), r, nan)
    s = _b("copysign", _step(safe, None, t), safe)
    s = _core.where(_b("eq", _u("abs", safe), float(fi.max)), _b("copysign", numpy.inf, safe), s)
    r = _core.where(ok, _core.cast(s, code), float(fi.smallest_subnormal))
    return _core.where(_u("isnan", x), x, _core.where(_u("isinf", x), nan, r))
