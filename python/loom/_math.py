"""_math.py: elementwise functions (NumPy's ufuncs as loom functions: _UFUNCS maps NumPy's names to
them), rounding, clip, fmod and float_power, gradient, and the products and comparisons loom computes on
the host for now.
"""
import numpy

from . import _core, _creation
from ._common import _OPS, _code, _from_numpy, _kind, _norm_axis
from ._ndarray import ndarray, _operand, _finish, _host, _python_int
from ._creation import asarray, asnumpy


def _make_unary(opname, npname):
    op = _OPS[opname]

    def f(x, out=None, *, dtype=None, casting="same_kind"):
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
          "isfinite": "isfinite", "logical_not": "logical_not", "invert": "bitwise_not"}
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
divide = true_divide  # noqa: F821
mod = remainder  # noqa: F821
abs = absolute  # noqa: F821
bitwise_not = invert  # noqa: F821
_UFUNCS.update(divide=divide, abs=abs)


def positive(x, out=None):
    x = asarray(x)
    if x.dtype == numpy.bool_:
        raise TypeError("The numpy boolean positive, the unary + operator, is not supported")
    return _finish(x.copy(), out)


def square(x, out=None):
    x = asarray(x)
    return _finish(_core.binary(_OPS["mul"], x, x), out)


def _complex_reciprocal(x):
    """NumPy's complex reciprocal loop (Smith's form on the larger part), as fused graph ops."""
    u = lambda name, a: _core.unary(_OPS[name], a)  # noqa: E731
    b = lambda name, a, c: _core.binary(_OPS[name], a, c)  # noqa: E731
    re, im = u("real", x), u("imag", x)
    small = b("le", u("abs", im), u("abs", re))
    r1 = b("truediv", im, re)
    d1 = b("add", re, b("mul", im, r1))
    r2 = b("truediv", re, im)
    d2 = b("add", b("mul", re, r2), im)
    out_re = _core.where(small, b("truediv", 1, d1), b("truediv", r2, d2))
    out_im = _core.where(small, u("neg", b("truediv", r1, d1)), b("truediv", -1, d2))
    return b("complex", out_re, out_im)


def reciprocal(x, out=None):
    x = asarray(x)
    if x.dtype.kind == "c":
        return _finish(_complex_reciprocal(x), out)
    one = _core.const(1, x._dtype_code)
    op = "truediv" if _kind(x.dtype) in "fc" else "floordiv"
    return _finish(_core.cast(_core.binary(_OPS[op], one, x), x._dtype_code), out)


def fabs(x, out=None):
    x = asarray(x)
    if _kind(x.dtype) == "c":
        raise TypeError("ufunc 'fabs' not supported for the input types (complex): use absolute")
    if _kind(x.dtype) != "f":  # NumPy's float loop: int8 -> float16, int16 -> float32, ...
        x = x.astype(numpy.result_type(x.dtype, numpy.float16))
    return _finish(_core.unary(_OPS["abs"], x), out)


def around(a, decimals=0, out=None):
    a = asarray(a)
    if decimals == 0:
        r = _core.unary(_OPS["rint"], a) if _kind(a.dtype) in "fc" else a.copy()
    elif _kind(a.dtype) in "fc":
        s = 10.0 ** decimals
        r = _core.binary(_OPS["truediv"], _core.unary(_OPS["rint"], a * s), s)
    else:
        raise NotImplementedError("around: decimals != 0 for integer arrays")
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
    code, dt = _code(dtype), numpy.dtype(dtype)
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
    fmod(a, b) = copysign(remainder(|a|, |b|), a), which is exact (remainder of non-negative operands
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


def float_power(a, b, out=None, *, dtype=None, casting="same_kind"):
    """loom.float_power(a, b, out=None): a ** b computed in float64 whatever the input dtypes, like
    numpy.float_power (complex results are not supported: loom has no complex dtypes)."""
    if dtype is not None and _code(dtype) != _code(numpy.float64):
        raise TypeError(f"No loop matching the specified signature and casting was found for ufunc float_power "
                        f"(dtype={numpy.dtype(dtype)}; loom's float_power computes in float64)")
    a, b = _ufunc_operands("float_power", a, b, numpy.float64, casting)
    return _finish(_core.binary(_OPS["pow"], a, b), out, casting)


_UFUNCS.update(fmod=fmod, float_power=float_power)


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
    """loom.gradient(f, *varargs, axis=None, edge_order=1): the gradient of f by second-order central
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


def clip(a, a_min=None, a_max=None, out=None, **kw):
    a_min = kw.pop("min", a_min)
    a_max = kw.pop("max", a_max)
    a = asarray(a)
    lo = None if a_min is None else _operand(a_min)
    hi = None if a_max is None else _operand(a_max)
    return _finish(_core.clip(a, lo, hi), out)


# ---- host fallbacks (computed by NumPy on the host, returned as new loom arrays) --------------------------
def matmul(a, b, out=None):
    return _finish(_host(numpy.matmul, asarray(a), asarray(b)), out)


def dot(a, b, out=None):
    return _finish(_host(numpy.dot, asarray(a), asarray(b)), out)


def array_equal(a1, a2, equal_nan=False):
    return bool(numpy.array_equal(asnumpy(a1), asnumpy(a2), equal_nan=equal_nan))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(numpy.allclose(asnumpy(a), asnumpy(b), rtol, atol, equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _from_numpy(numpy.isclose(asnumpy(a), asnumpy(b), rtol, atol, equal_nan), copy=True)


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
