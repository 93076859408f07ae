"""_math.py: elementwise functions (NumPy's ufuncs as loom functions: _UFUNCS maps NumPy's names to
them), rounding, clip, fmod and float_power, gradient, and the products and comparisons loom computes on
the host for now.
"""
import builtins

import numpy

from . import _core, _creation
from ._common import _np_dtype_of, _OPS, _code, _from_numpy, _kind, _norm_axis, _trace_like
from ._ndarray import ndarray, _operand, _finish, _host, _python_int
from ._creation import asarray, asnumpy


def _make_unary(opname, npname):
    op = _OPS[opname]

    def f(x, out=None, *, dtype=None, casting="same_kind"):
        if type(x) is ndarray and out is None and dtype is None:  # the common call: the node itself
            return _core.unary(op, x)
        x = _operand(x)
        if dtype is not None:
            x = _core.cast(x, _code(dtype)) if isinstance(x, ndarray) else asarray(x, dtype)
        if not isinstance(x, ndarray):
            x = asarray(x)
        return _finish(_core.unary(op, x), out, casting)

    f.__name__ = npname
    f.__doc__ = f"loom.{npname}(x, out=None): elementwise, like numpy.{npname}"
    return f


def _make_binary(opname, npname):
    op = _OPS[opname]

    def f(a, b, out=None, *, dtype=None, casting="same_kind"):
        if type(a) is ndarray and type(b) is ndarray and out is None and dtype is None:  # the common call
            return _core.binary(op, a, b)  # (two arrays: no operand to convert)
        a, b = _ufunc_operands(npname, a, b, dtype, casting, opname)
        r = _core.binary(op, a, b)
        if dtype is not None and r._dtype_code != _code(dtype):  # comparisons: bool whatever the loop
            r = _core.cast(r, _code(dtype))
        return _finish(r, out, casting)

    f.__name__ = npname
    f.__doc__ = f"loom.{npname}(a, b, out=None): elementwise with broadcasting, like numpy.{npname}"
    return f


_UNARY = {"negative": "neg", "absolute": "abs", "sign": "sign", "exp": "exp", "exp2": "exp2",
          "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
          "sqrt": "sqrt", "rsqrt": "rsqrt", "cbrt": "cbrt", "sin": "sin", "cos": "cos", "tan": "tan",
          "arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh", "cosh": "cosh",
          "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "floor": "floor",
          "ceil": "ceil", "trunc": "trunc", "rint": "rint", "isnan": "isnan", "isinf": "isinf",
          "isfinite": "isfinite", "logical_not": "logical_not", "invert": "bitwise_not",
          "erf": "erf", "erfc": "erfc"}  # erf, erfc: as scipy.special / cupyx.scipy.special
_BINARY = {"add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "truediv",
           "floor_divide": "floordiv", "remainder": "mod", "power": "pow", "maximum": "maximum",
           "minimum": "minimum", "fmax": "fmax", "fmin": "fmin", "arctan2": "atan2", "hypot": "hypot",
           "copysign": "copysign", "equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
           "greater": "gt", "greater_equal": "ge", "logical_and": "logical_and",
           "logical_or": "logical_or", "logical_xor": "logical_xor", "bitwise_and": "bitwise_and",
           "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor", "left_shift": "left_shift",
           "right_shift": "right_shift"}

_UFUNCS = {}
for _n, _o in _UNARY.items():
    _UFUNCS[_n] = globals()[_n] = _make_unary(_o, _n)


def _make_rounding(npname, inner):
    def f(x, out=None, **kw):
        x = asarray(x)
        # NumPy >= 2.? keeps integer dtypes for floor/ceil/trunc (a no-op); follow the installed NumPy
        if x.dtype.kind in "biu" and getattr(numpy, npname)(numpy.zeros(0, x.dtype)).dtype == x.dtype:
            return _finish(x.copy(), out)
        return inner(x, out, **kw)

    f.__name__ = npname
    f.__doc__ = inner.__doc__
    return f


for _n in ("floor", "ceil", "trunc", "rint"):
    _UFUNCS[_n] = globals()[_n] = _make_rounding(_n, _UFUNCS[_n])
for _n, _o in _BINARY.items():
    _UFUNCS[_n] = globals()[_n] = _make_binary(_o, _n)
_UFUNCS.update(divide=_UFUNCS["true_divide"], abs=_UFUNCS["absolute"])


def positive(x, out=None):
    x = asarray(x)
    if x.dtype == numpy.bool_:
        raise TypeError("The numpy boolean positive, the unary + operator, is not supported")
    return _finish(x.copy(), out)


def square(x, out=None):
    x = asarray(x)
    if x.dtype == numpy.bool_:  # NumPy's square(bool) is int8's loop
        x = x.astype(numpy.int8)
    return _finish(_core.binary(_OPS["mul"], x, x), out)


reciprocal = _make_unary("reciprocal", "reciprocal")  # ints: 1 / x truncated, bool -> int8 (NumPy 2)


def fabs(x, out=None):
    x = asarray(x)
    if _kind(x.dtype) == "c":
        raise TypeError("ufunc 'fabs' not supported for the input types (complex): use absolute")
    if _kind(x.dtype) != "f":  # NumPy's float loop: int8 -> float16, int16 -> float32, ...
        x = x.astype(numpy.result_type(x.dtype, numpy.float16))
    return _finish(_core.unary(_OPS["abs"], x), out)


def around(a, decimals=0, out=None):
    """Rounds half to even at `decimals` digits as NumPy does: rint(a * 10**d) / 10**d for d > 0,
    rint(a / 10**-d) * 10**-d for d < 0 (integers too: computed in float64, cast back)."""
    a = asarray(a)
    decimals = int(decimals)
    if a.dtype == numpy.bool_:  # NumPy's rint loop for bool is float16's; other decimals cannot cast back
        if decimals != 0:
            raise TypeError("Cannot cast ufunc 'multiply' output from dtype('float64') to dtype('bool') with "
                            "casting rule 'same_kind' (round a bool array with decimals=0, or convert it first)")
        a = _core.cast(a, _code(numpy.float16))
    if decimals == 0:
        r = _core.unary(_OPS["rint"], a) if _kind(a.dtype) in "fc" else a.copy()
    elif _kind(a.dtype) in "fc":
        if decimals > 0:
            s = 10.0 ** decimals
            r = _core.binary(_OPS["truediv"], _core.unary(_OPS["rint"], a * s), s)
        else:
            s = 10.0 ** -decimals
            r = _core.binary(_OPS["mul"], _core.unary(_OPS["rint"], _core.binary(_OPS["truediv"], a, s)), s)
    elif decimals > 0:
        r = a.copy()
    else:
        s = 10 ** -decimals
        f = _core.binary(_OPS["truediv"], a, float(s))
        r = _core.cast(_core.binary(_OPS["mul"], _core.unary(_OPS["rint"], f), float(s)), a._dtype_code)
    return _finish(r, out)


round_ = around
_UFUNCS.update(positive=positive, square=square, reciprocal=reciprocal, fabs=fabs)
from ._complex import conjugate as _conjugate  # noqa: E402 (it imports this module's siblings)
_UFUNCS.update(conjugate=_conjugate, conj=_conjugate)


def _ufunc_operands(name, a, b, dtype, casting, opname=None):
    """The operands of a binary ufunc call with NumPy's dtype= semantics: Python scalars stay weak
    (NEP 50; ints beyond int64 as _python_int says for loom op `opname`); with dtype= the array operands
    are cast to it first (the loop runs in that dtype), under the casting rule."""
    a, b = _operand(a), _operand(b)
    if not isinstance(a, ndarray) and not isinstance(b, ndarray):
        a = asarray(a)
    if dtype is None:
        return _python_int(opname, a, b), _python_int(opname, b, a)
    code, dt = _code(dtype), _np_dtype_of(dtype)
    ops = []
    for i, x in enumerate((a, b)):
        if isinstance(x, ndarray) and x.dtype != dt:
            if not numpy.can_cast(x.dtype, dt, casting):
                raise TypeError(f"Cannot cast ufunc '{name}' input {i} from {x.dtype!r} to {dt!r} with casting "
                                f"rule {casting!r}")
            x = _core.cast(x, code)
        ops.append(x)
    return _python_int(opname, ops[0], ops[1]), _python_int(opname, ops[1], ops[0])


def fmod(a, b, out=None, *, dtype=None, casting="same_kind"):
    """loom.fmod(a, b, out=None): the remainder of C's fmod (it has the sign of a), elementwise with
    broadcasting, like numpy.fmod. Built from loom's exact remainder (the sign of b): for floats
    ``fmod(a, b) = copysign(remainder(|a|, |b|), a)``, which is exact (remainder of non-negative operands
    is fmod's); for integers the floor remainder r becomes r - b where r != 0 and a, b differ in sign.
    Division by zero gives NaN for floats and 0 for integers, as NumPy."""
    a, b = _ufunc_operands("fmod", a, b, dtype, casting)
    r = _core.binary(_OPS["mod"], a, b)
    if r.dtype.kind == "f":
        code = r._dtype_code  # |a| in the result dtype: abs(int8(-128)) must not wrap
        a = _core.cast(a, code) if isinstance(a, ndarray) else a
        b = _core.cast(b, code) if isinstance(b, ndarray) else b
        rem = _core.binary(_OPS["mod"], _core.unary(_OPS["abs"], a), _core.unary(_OPS["abs"], b))
        r = _core.binary(_OPS["copysign"], rem, a)
    elif r.dtype.kind == "i":
        signs_differ = _core.binary(_OPS["ne"], _core.binary(_OPS["lt"], a, 0), _core.binary(_OPS["lt"], b, 0))
        fix = _core.binary(_OPS["logical_and"], _core.binary(_OPS["ne"], r, 0), signs_differ)
        r = _core.where(fix, _core.cast(_core.binary(_OPS["sub"], r, b), r._dtype_code), r)
    return _finish(r, out, casting)  # unsigned: remainder and fmod agree


def _is_complex_operand(x):
    if isinstance(x, (ndarray, numpy.ndarray, numpy.generic)):
        return x.dtype.kind == "c"
    if isinstance(x, (list, tuple)):
        return numpy.asarray(x).dtype.kind == "c"
    return isinstance(x, complex)


def float_power(a, b, out=None, *, dtype=None, casting="same_kind"):
    """loom.float_power(a, b, out=None): a ** b computed in float64 whatever the input dtypes, or in
    complex128 when an operand is complex, like numpy.float_power (its loops are dd->d and DD->D)."""
    loop = numpy.dtype(numpy.complex128 if any(_is_complex_operand(x) for x in (a, b)) else numpy.float64)
    if dtype is not None:
        d = _np_dtype_of(dtype)
        if d not in (numpy.dtype(numpy.float64), numpy.dtype(numpy.complex128)) or not numpy.can_cast(loop, d, casting):
            raise TypeError(f"No loop matching the specified signature and casting was found for ufunc float_power "
                            f"(dtype={d}; float_power computes in float64 or complex128)")
        loop = d
    a, b = _ufunc_operands("float_power", a, b, loop, casting)
    return _finish(_core.binary(_OPS["pow"], a, b), out, casting)


_UFUNCS.update(fmod=fmod, float_power=float_power)


# ---- more ufuncs: angles, log-sum-exp, quotient and remainder, parts of floats ----------------------------
def _float_operands(*ops):
    """Operands as NumPy's float loops see them: when the array operands are all bool/integer, they are
    cast to the smallest float that holds them (int8 -> float16, int16 -> float32, wider -> float64; a
    Python float operand makes it float64, as NEP 50 promotes)."""
    ops = [_operand(x) for x in ops]
    if not any(isinstance(x, ndarray) for x in ops):
        ops[0] = asarray(ops[0])
    arrs = [x.dtype for x in ops if isinstance(x, ndarray)]
    rt = numpy.result_type(*arrs)
    if _kind(rt) not in "biu":  # the common float (complex) loop: every array operand cast to it
        code = _code(rt)
        return [_core.cast(x, code) if isinstance(x, ndarray) and x.dtype != rt else x for x in ops]
    floor = numpy.float64 if any(isinstance(x, float) for x in ops) else numpy.float16
    # NumPy's loop: the first float type every input casts to safely (uint8 and int8 both fit float16)
    code = _code(numpy.result_type(*(numpy.result_type(d, floor) for d in arrs)))
    return [_core.cast(x, code) if isinstance(x, ndarray) else x for x in ops]


def _u(name, x):
    return _core.unary(_OPS[name], x)


def _b(name, x, y):
    return _core.binary(_OPS[name], x, y)


def deg2rad(x):
    """Degrees to radians: x * (pi / 180) in x's float type (numpy.deg2rad)."""
    (x,) = _float_operands(x)
    return _b("mul", x, numpy.pi / 180.0)


def rad2deg(x):
    """Radians to degrees: x * (180 / pi) in x's float type (numpy.rad2deg)."""
    (x,) = _float_operands(x)
    return _b("mul", x, 180.0 / numpy.pi)


def logaddexp(a, b):
    """log(exp(a) + exp(b)) without overflow: ``max(a, b) + log1p(exp(-|a - b|))``, and a + log(2) where
    a == b (so that inf + inf stays inf), NaN where either is NaN (numpy.logaddexp)."""
    a, b = _float_operands(a, b)
    m = _b("maximum", a, b)
    r = _b("add", m, _u("log1p", _u("exp", _u("neg", _u("abs", _b("sub", a, b))))))
    return _core.where(_b("eq", a, b), _b("add", a, numpy.log(2.0)), r)


def logaddexp2(a, b):
    """log2(2**a + 2**b) without overflow: ``max(a, b) + log1p(2**-|a - b|) / log(2)``, and a + 1 where
    a == b (numpy.logaddexp2)."""
    a, b = _float_operands(a, b)
    m = _b("maximum", a, b)
    t = _u("log1p", _u("exp2", _u("neg", _u("abs", _b("sub", a, b)))))
    r = _b("add", m, _b("mul", t, 1.0 / numpy.log(2.0)))
    return _core.where(_b("eq", a, b), _b("add", a, 1.0), r)


def _divmod(a, b, dtype=None, casting="same_kind"):
    """(floor_divide(a, b), remainder(a, b)), as numpy.divmod."""
    return (_UFUNCS["floor_divide"]._impl(a, b, dtype=dtype, casting=casting),
            _UFUNCS["remainder"]._impl(a, b, dtype=dtype, casting=casting))


def modf(x):
    """(fractional part, integral part), both with x's sign: modf(-2.0) = (-0.0, -2.0), modf(inf) =
    (0.0, inf) (numpy.modf)."""
    (x,) = _float_operands(x)
    t = _u("trunc", x)
    frac = _core.where(_u("isinf", x), 0.0, _b("sub", x, t))
    return _b("copysign", frac, x), t


def signbit(x):
    """True where the sign bit is set: negative numbers, -0.0 and NaNs with the sign bit (numpy.signbit)."""
    x = _operand(x)
    x = x if isinstance(x, ndarray) else asarray(x)
    if _kind(x.dtype) == "c":
        raise TypeError("ufunc 'signbit' not supported for the input types (complex)")
    if _kind(x.dtype) in "bu":
        return _b("ne", x, x)  # never set
    if _kind(x.dtype) == "i":
        return _b("lt", x, 0)
    return _b("lt", _b("copysign", _core.const(1, x._dtype_code), x), 0)


def heaviside(x1, x2):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0, NaN where x1 is NaN (numpy.heaviside)."""
    x1, x2 = _float_operands(x1, x2)
    r = _core.where(_b("lt", x1, 0), 0, _core.where(_b("gt", x1, 0), 1, x2))
    return _core.where(_u("isnan", x1), x1, r) if _kind(r.dtype) in "fc" else r


def ldexp(x1, x2):
    """``x1 * 2**x2`` (numpy.ldexp) as three exact power-of-two scalings: the exponent is clamped to the
    span that can still change the result (``|x2|`` beyond max exponent + subnormal digits gives 0 or inf
    anyway) and split in three parts of one sign, each 2**part representable in x1's dtype."""
    x2 = _operand(x2)
    x2 = x2 if isinstance(x2, ndarray) else asarray(x2)
    if _kind(x2.dtype) not in "biu":
        raise TypeError("ufunc 'ldexp' not supported for the input types: the exponent must be an integer")
    (x1,) = _float_operands(x1)
    fi = numpy.finfo(numpy.float32 if x1.dtype.kind == "c" else x1.dtype)
    span = fi.maxexp - fi.minexp + fi.nmant + 2
    n = _core.clip(_core.cast(x2, _code(numpy.int64)), -span, span)
    q = _b("floordiv", n, 3)
    f64 = _code(numpy.float64)
    scale = lambda e: _core.cast(_u("exp2", _core.cast(e, f64)), x1._dtype_code)  # noqa: E731
    r = _b("mul", _b("mul", x1, scale(q)), scale(q))
    return _b("mul", r, scale(_b("sub", n, _b("mul", q, 2))))


def _host_ufunc_impl(name, nin):
    """An implementation that computes numpy.<name> on host copies (functions that need bit-level or
    iterative kernels loom lacks: the README lists them)."""
    def impl(*args, dtype=None, casting="same_kind"):
        vals = [_operand(x) for x in args]
        dev = next((x._device for x in vals if isinstance(x, ndarray)), None)
        host = [x._np() if isinstance(x, ndarray) else x for x in vals]
        r = getattr(numpy, name)(*host, dtype=dtype, casting=casting)
        wrap = lambda v: _from_numpy(numpy.asarray(v), copy=True, device=dev)  # noqa: E731
        return tuple(wrap(v) for v in r) if isinstance(r, tuple) else wrap(r)
    impl.__doc__ = f"loom.{name}: like numpy.{name}, computed by NumPy on a host copy"
    return impl


_FLOAT_BITS_GRAPH_ON_HOST = False  # tests set it to check the graph forms against NumPy on the host


def _float_bits_impl(name, nin):
    """frexp / nextafter / spacing: for GPU arrays exact float arithmetic over graph ops (_float_bits: lazy,
    fused, no host round trip); on the host NumPy's own loops (2-3x faster there than the float64 steps)."""
    host = _host_ufunc_impl(name, nin)

    def impl(*args):  # _float_bits: imported below, after the names it takes from this module
        if _FLOAT_BITS_GRAPH_ON_HOST or _trace_like() is not None or \
                any(isinstance(v, ndarray) and v._on_gpu for v in map(_operand, args)):
            return getattr(_float_bits, name)(*args)
        return host(*args)
    impl.__doc__ = f"loom.{name}: like numpy.{name} (graph ops for GPU arrays, NumPy's loop on the host)"
    return impl


def _euclid_steps(limit):
    """Euclid's algorithm on values of magnitude <= limit ends within this many remainder steps (Lame:
    k steps need the smaller value >= F(k + 1)), plus one for a first step that swaps the pair."""
    f0, f1, k = 1, 2, 1
    while f1 <= limit:
        f0, f1, k = f1, f0 + f1, k + 1
    return k + 2


def _euclid_impl(name):
    """gcd / lcm: on a GPU, Euclid's algorithm unrolled over graph ops (one fused kernel; as many steps as
    the dtype's range, or a Python scalar operand's magnitude, can take: gcd(x, 12) takes 7); on the host
    NumPy's loop (an unrolled Euclid would be scalar divisions there)."""
    host = _host_ufunc_impl(name, 2)

    def impl(x1, x2, dtype=None, casting="same_kind"):
        a, b = _operand(x1), _operand(x2)
        on_gpu = any(isinstance(v, ndarray) and v._on_gpu for v in (a, b))
        if not on_gpu or dtype is not None:
            return host(x1, x2, dtype=dtype, casting=casting)
        dt = numpy.result_type(*(v.dtype if isinstance(v, ndarray) else v for v in (a, b)))
        lo, hi = (int(numpy.iinfo(dt).min), int(numpy.iinfo(dt).max)) if dt.kind in "iu" else (0, -1)
        if dt.kind not in "iu" or not all(isinstance(v, ndarray) or type(v) is int and lo <= v <= hi for v in (a, b)):
            return host(x1, x2, dtype=dtype, casting=casting)  # NumPy's loops and errors
        return _gcd_lcm(a, b, dt, name == "lcm")
    impl.__doc__ = f"loom.{name}: like numpy.{name} (Euclid's algorithm on the device for GPU arrays)"
    return impl


def _gcd_lcm(a, b, dt, lcm):
    """gcd (or lcm) of integers a, b (loom arrays or Python ints) in dtype dt, as graph ops, as NumPy's
    loops compute them: the gcd of |a| and |b| taken in the unsigned type of dt's width (|INT_MIN| is
    2^(bits-1) there), by Euclid's remainder steps with the zero divisor guarded, cast back to dt; the lcm
    |a| / gcd * |b| in that unsigned type too (0 where the gcd is 0), cast back (wrapping as NumPy's)."""
    code = _code(dt)
    ucode = _code(numpy.dtype(f"uint{8 * dt.itemsize}"))
    limit = 1 << (8 * dt.itemsize)
    for v in (a, b):
        if isinstance(v, int):
            limit = builtins.min(limit, builtins.abs(v))
    sa = _core.cast(a, code) if isinstance(a, ndarray) else _core.const(a, code)
    sb = _core.cast(b, code) if isinstance(b, ndarray) else _core.const(b, code)
    ua, ub = _core.cast(_u("abs", sa), ucode), _core.cast(_u("abs", sb), ucode)
    p, q = ua, ub
    for _ in range(_euclid_steps(limit)):
        nz = _b("ne", q, 0)
        r = _b("mod", p, _core.where(nz, q, 1))
        p, q = _core.where(nz, q, p), _core.where(nz, r, 0)
    if lcm:
        zero = _b("eq", p, 0)
        p = _core.where(zero, 0, _b("mul", _b("floordiv", ua, _core.where(zero, 1, p)), ub))
    return _core.cast(p, code)


# ---- differences ------------------------------------------------------------------------------------------
def _axis_spacing(d, n):
    """One spacing argument of gradient for an axis of length n: a Python scalar (uniform), or a 1-d
    array of n coordinates, returned as its n - 1 differences (float64 for integer coordinates), or as
    one float64 scalar when they are all equal."""
    if numpy.ndim(d) == 0 and not isinstance(d, ndarray):
        return d
    d = asarray(d)
    if d.ndim == 0:
        return d.get()[()]
    if d.ndim != 1:
        raise ValueError("distances must be either scalars or 1d")
    if d.shape[0] != n:
        raise ValueError("when 1d, distances must match the length of the corresponding dimension")
    if d.dtype.kind in "biu":
        d = d.astype(numpy.float64)
    diffs = d[1:] - d[:-1]
    if n > 1 and bool((diffs == diffs[0]).all()):
        return diffs[0].get()[()]  # a NumPy scalar: strong, as in NumPy
    return diffs


def gradient(f, *varargs, axis=None, edge_order=1):
    """``loom.gradient(f, *varargs, axis=None, edge_order=1)``: the gradient of f by second-order central
    differences inside and first- or second-order one-sided differences at the edges, with uniform
    (scalars) or coordinate-array spacings per axis, like numpy.gradient. Integer inputs give float64;
    returns one array per axis (a tuple, or the array itself for one axis)."""
    f = asarray(f)
    n = f.ndim
    if axis is None:
        axes = tuple(range(n))
    else:
        axes = tuple(_norm_axis(a, n) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis in gradient")
    if not varargs:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and numpy.ndim(varargs[0]) == 0:
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    if f.dtype == numpy.bool_:
        raise TypeError("gradient: boolean arrays are not supported (subtraction of booleans); convert "
                        "them to a numeric dtype first")
    otype = numpy.float64 if f.dtype.kind in "iu" else f.dtype
    if f.dtype.kind in "iu":
        f = f.astype(numpy.float64)
    outs = []
    for ax, d in zip(axes, spacing):
        length = f.shape[ax]
        if length < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        dx = _axis_spacing(d, length)
        uniform = not isinstance(dx, ndarray)

        def at(s):
            key = [slice(None)] * n
            key[ax] = s
            return tuple(key)

        def along(v):  # a 1-d coefficient array shaped to broadcast along ax
            return v.reshape(tuple(-1 if i == ax else 1 for i in range(n)))

        out = _creation.empty_like(f, dtype=otype)
        if uniform:
            out[at(slice(1, -1))] = (f[at(slice(2, None))] - f[at(slice(None, -2))]) / (2.0 * dx)
        else:
            d1, d2 = dx[:-1], dx[1:]
            a = along(-d2 / (d1 * (d1 + d2)))
            b = along((d2 - d1) / (d1 * d2))
            c = along(d1 / (d2 * (d1 + d2)))
            out[at(slice(1, -1))] = a * f[at(slice(None, -2))] + b * f[at(slice(1, -1))] + c * f[at(slice(2, None))]
        if edge_order == 1:
            out[at(0)] = (f[at(1)] - f[at(0)]) / (dx if uniform else dx[0])
            out[at(-1)] = (f[at(-1)] - f[at(-2)]) / (dx if uniform else dx[-1])
        else:
            if uniform:
                a, b, c = -1.5 / dx, 2.0 / dx, -0.5 / dx
            else:
                d1, d2 = dx[0], dx[1]
                a = -(2.0 * d1 + d2) / (d1 * (d1 + d2))
                b = (d1 + d2) / (d1 * d2)
                c = -d1 / (d2 * (d1 + d2))
            out[at(0)] = a * f[at(0)] + b * f[at(1)] + c * f[at(2)]
            if uniform:
                a, b, c = 0.5 / dx, -2.0 / dx, 1.5 / dx
            else:
                d1, d2 = dx[-2], dx[-1]
                a = d2 / (d1 * (d1 + d2))
                b = -(d2 + d1) / (d1 * d2)
                c = (2.0 * d2 + d1) / (d2 * (d1 + d2))
            out[at(-1)] = a * f[at(-3)] + b * f[at(-2)] + c * f[at(-1)]
        outs.append(out)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _clip_bounds(x, lo, hi):
    """The bounds of clip(x, lo, hi) as NumPy 2's np.clip takes them: for an integer x, a Python int
    bound at or past the end of x's range on its side is dropped (clip(int16, 1e30, 2**64) is
    maximum(x, 1e30)); then, where the result is float or complex (x's dtype with the bounds, NEP 50),
    a Python int outside [-2**63, 2**64) (what the core takes) becomes a float, as NumPy converts it to
    the loop's dtype; any other out-of-range int goes on (OverflowError, as NumPy's)."""
    if _kind(x.dtype) in "iu":
        info = numpy.iinfo(x.dtype)
        lo = None if type(lo) is int and lo <= info.min else lo
        hi = None if type(hi) is int and hi >= info.max else hi
    big = [type(v) is int and not -(1 << 63) <= v < (1 << 64) for v in (lo, hi)]
    if builtins.any(big):
        kinds = [type(v)(0) if type(v) in (bool, int, float, complex) else getattr(v, "dtype", None)
                 for v, b in zip((lo, hi), big) if v is not None and not b]
        try:
            kind = numpy.result_type(x.dtype, *[k for k in kinds if k is not None]).kind
        except (TypeError, ValueError):
            kind = "?"
        if kind in "fc":
            lo, hi = (float(v) if b else v for v, b in zip((lo, hi), big))
    return lo, hi


def clip(a, a_min=None, a_max=None, out=None, **kw):
    a_min = kw.pop("min", a_min)
    a_max = kw.pop("max", a_max)
    a = asarray(a)
    a_min, a_max = _clip_bounds(a, a_min, a_max)
    lo = None if a_min is None else _operand(a_min)
    hi = None if a_max is None else _operand(a_max)
    return _finish(_core.clip(a, lo, hi), out)


# ---- closeness and equality, on the arrays' device -------------------------------------------------------
def _time_kind(v):
    return _kind(getattr(v, "dtype", numpy.dtype("f8"))) in "mM"


def array_equal(a1, a2, equal_nan=False):
    """Whether a1 and a2 have one shape and equal elements (numpy.array_equal): an all() of the element
    compare on the device, one bool read back; equal_nan=True counts NaN at the same place as equal."""
    a, b = asarray(a1), asarray(a2)
    if a.shape != b.shape:
        return False
    if _time_kind(a) or _time_kind(b):
        return bool(numpy.array_equal(asnumpy(a), asnumpy(b), equal_nan=equal_nan))
    same = equal(a, b)  # noqa: F821 (the ufunc objects below)
    if equal_nan and (_kind(a.dtype) in "fc" or _kind(b.dtype) in "fc"):
        same = logical_or(same, logical_and(isnan(a), isnan(b)))  # noqa: F821
    from ._reductions import all as _all  # (it imports this module)
    return bool(_all(same))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``abs(a - b) <= atol + rtol * abs(b)`` elementwise (numpy.isclose), on the device: b (and so the
    difference) in an inexact dtype (an integer b is taken as float: no overflow of ``abs(b)`` at the
    integer minimum),
    infinities close only to themselves, NaN close to NaN only with equal_nan. Python scalars stay
    weak (a float32 array is compared in float32, as NumPy 2 does)."""
    operands = (a, b, rtol, atol)
    if builtins.any(_time_kind(v) for v in operands if isinstance(v, (ndarray, numpy.ndarray))):
        return _from_numpy(numpy.isclose(*[asnumpy(v) if isinstance(v, ndarray) else v for v in operands],
                                         equal_nan=equal_nan), copy=True)
    x = a if type(a) in (bool, int, float, complex) else asarray(a)
    if type(b) in (bool, int):
        y = float(b)
    elif type(b) in (float, complex):
        y = b
    else:
        y = asarray(b)
        y = y.astype(numpy.result_type(y.dtype, 1.0), copy=False)
    if not isinstance(x, ndarray) and not isinstance(y, ndarray):
        x = asarray(x)
    tol = add(atol, multiply(rtol, absolute(y)))  # noqa: F821
    near = logical_and(less_equal(absolute(subtract(x, y)), tol), isfinite(y))  # noqa: F821
    r = logical_or(near, equal(x, y))  # noqa: F821
    if equal_nan:
        r = logical_or(r, logical_and(isnan(x), isnan(y)))  # noqa: F821
    return r


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether isclose holds everywhere (numpy.allclose): an all() on the device, one bool read back."""
    from ._reductions import all as _all
    return bool(_all(isclose(a, b, rtol, atol, equal_nan)))


# ---- the ufunc objects (loom.ufunc): one per NumPy name, aliases share it ------------------------------
from ._ufunc import ufunc  # noqa: E402
from . import _bits  # noqa: E402

_NIN = dict({n: 1 for n in _UNARY}, **{n: 2 for n in _BINARY}, positive=1, square=1, reciprocal=1, fabs=1,
            conjugate=1, fmod=2, float_power=2)
_ALIASES = {"divide": "true_divide", "abs": "absolute", "conj": "conjugate"}
for _n, _f in list(_UFUNCS.items()):
    if _n not in _ALIASES:
        _UFUNCS[_n] = globals()[_n] = ufunc(_n, _NIN[_n], 1, _f)
_UFUNCS["true_divide"].__name__ = "divide"  # NumPy 2's name (true_divide is its alias)
for _n, _t in _ALIASES.items():
    _UFUNCS[_n] = globals()[_n] = _UFUNCS[_t]
divide = true_divide  # noqa: F821
mod = remainder  # noqa: F821
abs = absolute  # noqa: F821
bitwise_not = invert  # noqa: F821
conj = conjugate = _UFUNCS["conjugate"]
for _n, _f, _nin, _nout in (("deg2rad", deg2rad, 1, 1), ("radians", deg2rad, 1, 1), ("rad2deg", rad2deg, 1, 1),
                            ("degrees", rad2deg, 1, 1), ("logaddexp", logaddexp, 2, 1),
                            ("logaddexp2", logaddexp2, 2, 1), ("divmod", _divmod, 2, 2), ("modf", modf, 1, 2),
                            ("signbit", signbit, 1, 1), ("heaviside", heaviside, 2, 1), ("ldexp", ldexp, 2, 1),
                            ("bitwise_count", _bits._bitwise_count, 1, 1)):
    _UFUNCS[_n] = globals()[_n] = ufunc(_n, _nin, _nout, _f)
from . import _float_bits  # noqa: E402
for _n, _nin, _nout in (("frexp", 1, 2), ("nextafter", 2, 1), ("spacing", 1, 1)):
    _UFUNCS[_n] = globals()[_n] = ufunc(_n, _nin, _nout, _float_bits_impl(_n, _nin))
for _n in ("gcd", "lcm"):
    _UFUNCS[_n] = globals()[_n] = ufunc(_n, 2, 1, _euclid_impl(_n))

__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
__all__ += [_n for _n, _v in list(globals().items()) if not _n.startswith("_") and isinstance(_v, ufunc)]
_UFUNCS_PUBLIC = {_n: _v for _n, _v in list(globals().items()) if not _n.startswith("_") and isinstance(_v, ufunc)}
