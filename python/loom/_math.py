"""_math.py: elementwise functions (NumPy's ufuncs as loom functions: _UFUNCS maps NumPy's names to
them), rounding, clip, and the products and comparisons loom computes on the host for now.
"""
import numpy

from . import _core
from ._common import _OPS, _code, _from_numpy, _kind
from ._ndarray import ndarray, _operand, _finish, _host
from ._creation import asarray, asnumpy


def _make_unary(opname, npname):
    op = _OPS[opname]

    def f(x, out=None, *, dtype=None, casting="same_kind"):
        x = _operand(x)
        if dtype is not None:
            x = _core.cast(x, _code(dtype)) if isinstance(x, ndarray) else asarray(x, dtype)
        if not isinstance(x, ndarray):
            x = asarray(x)
        return _finish(_core.unary(op, x), out)

    f.__name__ = npname
    f.__doc__ = f"loom.{npname}(x, out=None): elementwise, like numpy.{npname}"
    return f


def _make_binary(opname, npname):
    op = _OPS[opname]

    def f(a, b, out=None, *, dtype=None, casting="same_kind"):
        a, b = _operand(a), _operand(b)
        if not isinstance(a, ndarray) and not isinstance(b, ndarray):
            a = asarray(a)
        r = _core.binary(op, a, b)
        if dtype is not None:
            r = _core.cast(r, _code(dtype))
        return _finish(r, out)

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
