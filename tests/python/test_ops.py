"""Every elementwise function and operator against NumPy: dtypes, 0-d, empty, broadcast, views."""
import warnings

import numpy as np
import pytest

import loom
from conftest import DTYPES, FLOATS, INTS, check, sample

UNARY_FLOAT = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "sin", "cos",
               "tan", "arctan", "sinh", "cosh", "tanh", "arcsinh", "floor", "ceil", "trunc", "rint"]
SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 5)]


@pytest.mark.parametrize("name", UNARY_FLOAT)
@pytest.mark.parametrize("dtype", FLOATS + ["int8", "int32", "uint16"])
def test_unary_float_funcs(name, dtype):
    a = sample((5, 6), dtype, positive=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np, name)(a)
    check(getattr(loom, name)(loom.asarray(a)), want)


@pytest.mark.parametrize("name", ["arcsin", "arccos", "arctanh"])
def test_unary_unit_domain(name):
    a = np.linspace(-0.9, 0.9, 11)
    check(getattr(loom, name)(loom.asarray(a)), getattr(np, name)(a))


def test_arccosh():
    a = np.linspace(1.0, 9.0, 11)
    check(loom.arccosh(loom.asarray(a)), np.arccosh(a))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["absolute", "isnan", "isinf", "isfinite", "logical_not"])
def test_unary_all_dtypes(name, dtype):
    a = sample((4, 5), dtype)
    check(getattr(loom, name)(loom.asarray(a)), getattr(np, name)(a))


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
def test_negative_sign(dtype):
    a = sample((9,), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(-loom.asarray(a), -a)
        check(loom.sign(loom.asarray(a)), np.sign(a))


@pytest.mark.parametrize("dtype", INTS + ["bool"])
def test_invert(dtype):
    a = sample((9,), dtype)
    check(~loom.asarray(a), ~a)


BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "fmax", "fmin", "equal",
          "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
          "logical_xor"]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dt1,dt2", [("float64", "float64"), ("float32", "float32"), ("int32", "int32"),
                                     ("int8", "uint8"), ("int64", "float32"), ("float16", "float16"),
                                     ("int16", "float64"), ("uint32", "int64")])
def test_binary(name, dt1, dt2):
    a, b = sample((3, 4), dt1, 1), sample((4,), dt2, 2, positive=True)
    want = getattr(np, name)(a, b)
    check(getattr(loom, name)(loom.asarray(a), loom.asarray(b)), want)


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "power"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float32", "float64"])
def test_binary_numeric(name, dtype):
    a, b = sample((20,), dtype, 3, positive=True), sample((20,), dtype, 4, positive=True)
    if name == "power":
        b = (b % 4).astype(dtype)
    check(getattr(loom, name)(loom.asarray(a), loom.asarray(b)), getattr(np, name)(a, b))


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "uint64"])
def test_bitwise(name, dtype):
    a, b = sample((10,), dtype, 5, positive=True), (sample((10,), dtype, 6, positive=True) % 5).astype(dtype)
    check(getattr(loom, name)(loom.asarray(a), loom.asarray(b)), getattr(np, name)(a, b))


@pytest.mark.parametrize("name", ["arctan2", "hypot", "copysign"])
def test_float_binary(name):
    a, b = sample((6,), "float64", 7), sample((6,), "float64", 8)
    check(getattr(loom, name)(loom.asarray(a), loom.asarray(b)), getattr(np, name)(a, b))


@pytest.mark.parametrize("shape", SHAPES)
def test_shapes(shape):
    a = sample(shape, "float64")
    la = loom.asarray(a)
    check(la * 2.0 + 1, a * 2.0 + 1)
    check(loom.exp(la) - la, np.exp(a) - a)


def test_broadcast_shapes():
    a, b = sample((3, 1, 5), "float32"), sample((4, 1), "float32", 1)
    check(loom.asarray(a) * loom.asarray(b), a * b)
    with pytest.raises(ValueError):
        loom.ones((3,)) + loom.ones((4,))


def test_noncontiguous_views():
    a = sample((6, 8), "float64")
    la = loom.asarray(a)
    check(la[::2, 1::3] + la.T[1::3, ::2].T, a[::2, 1::3] + a.T[1::3, ::2].T)
    check(la[::-1] * 2, a[::-1] * 2)
    check(loom.exp(la.T), np.exp(a.T))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float32", "float16", "bool"])
def test_weak_scalars(dtype):
    a = sample((5,), dtype)
    la = loom.asarray(a)
    for s in (2, 1.5, True):
        if np.dtype(dtype) == np.bool_ and s is True:
            continue
        check(la + s, a + s)
        check(s * la, s * a)


def test_numpy_scalars_are_strong():
    a = sample((5,), "float32")
    check(loom.asarray(a) + np.float64(2.0), a + np.float64(2.0))
    check(loom.asarray(a) * np.int8(3), a * np.int8(3))


def test_weak_int_out_of_range():
    with pytest.raises(OverflowError):
        loom.ones(3, dtype="uint8") + 300


def test_where_clip():
    a = sample((10,), "float64")
    la = loom.asarray(a)
    check(loom.where(la > 0, la, -1.0), np.where(a > 0, a, -1.0))
    check(loom.clip(la, -1, 1), np.clip(a, -1, 1))
    check(la.clip(None, 0.5), a.clip(None, 0.5))


def test_misc_funcs():
    a = sample((10,), "float32", positive=True)
    la = loom.asarray(a)
    check(loom.square(la), np.square(a))
    check(loom.reciprocal(la), np.reciprocal(a))
    check(loom.around(la), np.around(a))
    check(+la, +a)
    check(abs(-la), abs(-a))
    check(la ** 2, a ** 2)
    check(2 ** la, 2 ** a)


def test_array_ufunc_and_function():
    a = sample((4,), "float64")
    la = loom.asarray(a)
    r = np.add(a, la)
    assert isinstance(r, loom.ndarray)
    check(r, a + a)
    assert isinstance(np.exp(la), loom.ndarray)
    s = np.sum(la)
    assert isinstance(s, loom.ndarray)
    check(s, np.sum(a))


def test_inplace_operators():
    a = sample((5,), "float64")
    la = loom.asarray(a)
    la += 1
    la *= 2
    la -= loom.asarray(a)
    check(la, (a + 1) * 2 - a)
    li = loom.arange(5)
    with pytest.raises(TypeError):
        li += 1.5
    with pytest.raises(ValueError):
        li += loom.ones((2, 5), dtype="int64")


# ---- fmod and float_power (built from loom's remainder and power) ---------------------------------------
FMOD_OPERANDS = [np.array([-7, -3, -1, 0, 1, 3, 7], d) for d in ("bool", "int8", "int16", "int64", "float16",
                                                                   "float32", "float64")] + \
    [np.array([0, 1, 3, 7, 200], d) for d in ("uint8", "uint64")] + [0, 2, -3, 2.5, -0.0, True]


def _values_or_error(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kw), None
        except (TypeError, ValueError, OverflowError) as e:
            return None, type(e)


@pytest.mark.parametrize("name", ["fmod", "float_power"])
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_fmod_float_power_against_numpy(name, dtype):
    kw = {} if dtype is None else {"dtype": dtype}
    for x in FMOD_OPERANDS:
        for y in FMOD_OPERANDS:
            if not isinstance(x, np.ndarray) and not isinstance(y, np.ndarray):
                continue
            want, werr = _values_or_error(getattr(np, name), x, y, **kw)
            lx = loom.asarray(x) if isinstance(x, np.ndarray) else x
            ly = loom.asarray(y) if isinstance(y, np.ndarray) else y
            got, gerr = _values_or_error(getattr(loom, name), lx, ly, **kw)
            assert (werr is None) == (gerr is None), (x, y, werr, gerr)
            if werr is None:
                check(got, np.asarray(want))


def test_fmod_exact_and_special_values():
    # fmod is exact (C's fmod): tiny remainders of huge operands, signed zeros, inf, nan, division by 0
    a = np.array([1e300, -1e300, 5.0, -5.0, 1e-310, -0.0, 0.0, np.inf, -np.inf, np.nan, 7.0, 2.0 ** 60 + 1])
    b = np.array([3.0, 7.0, -3.0, 3.0, 1.0, 2.0, -2.0, 2.0, 2.0, 1.0, 0.0, 3.0])
    with np.errstate(all="ignore"):
        want = np.fmod(a, b)
    got = loom.fmod(loom.asarray(a), loom.asarray(b)).get()
    np.testing.assert_array_equal(got, want)
    finite = ~np.isnan(want)  # the sign of a NaN result is the platform's
    assert np.array_equal(np.signbit(got)[finite], np.signbit(want)[finite])
    rng = np.random.default_rng(1)
    x = rng.uniform(-1e6, 1e6, 1000).astype(np.float32)
    y = rng.uniform(-50, 50, 1000).astype(np.float32)
    np.testing.assert_array_equal(loom.fmod(loom.asarray(x), loom.asarray(y)).get(), np.fmod(x, y))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16"])
def test_fmod_integer_edges(dtype):
    info = np.iinfo(dtype)
    neg = -1 if info.min < 0 else 1
    a = np.array([info.min, info.max, 7 * neg, 7, 0, neg], dtype)
    b = np.array([neg, 2, 3, 3 * neg, 5, 0], dtype)  # the last: division by zero (NumPy: 0)
    with np.errstate(all="ignore"):
        want = np.fmod(a, b)
    check(loom.fmod(loom.asarray(a), loom.asarray(b)), want)


def test_fmod_float_power_ufunc_dispatch_and_out():
    a = np.arange(-4.0, 4.0)
    check(np.fmod(loom.asarray(a), 3.0), np.fmod(a, 3.0))  # __array_ufunc__
    out = loom.zeros(8)
    r = loom.float_power(loom.asarray(a), 2, out=out)
    assert r is out
    check(out, np.float_power(a, 2))
    check(loom.float_power(loom.asarray(np.arange(5, dtype=np.float32)), 0.5),
          np.float_power(np.arange(5, dtype=np.float32), 0.5))
    with pytest.raises(TypeError):
        loom.float_power(loom.asarray(a), 2, dtype=np.float32)
    with pytest.raises(TypeError, match="casting"):
        loom.fmod(loom.asarray(a), 2, dtype=np.int32)  # float64 -> int32 is not same_kind


# ---- Python ints NumPy 2 accepts beyond int64, true division of unsigned ints, dtype= -------------------
BIG_INT_ARRAYS = [np.array([0, 1, 100, 127], np.int8), np.array([0, 1, 200, 255], np.uint8),
                  np.array([-5, 0, 2 ** 62], np.int64), np.array([0, 2 ** 63, 2 ** 64 - 1], np.uint64),
                  np.array([0.5, -1e20], np.float32), np.array([True, False])]
BIG_INTS = [2 ** 63, 2 ** 64 - 1, 2 ** 64, -2 ** 63 - 1, -2, 1000, 3]


@pytest.mark.parametrize("name", ["less", "less_equal", "equal", "not_equal", "greater", "greater_equal", "add",
                                  "subtract", "multiply", "true_divide"])
def test_python_ints_beyond_int64_and_range(name):
    # comparisons with any Python int answer (int8 < 2**63 is True), uint64 arrays take ints up to 2**64 - 1,
    # integer true division by a negative int is a float64 division; other out-of-range ints raise
    # OverflowError as in NumPy
    for arr in BIG_INT_ARRAYS:
        for x in BIG_INTS:
            for args in ((arr, x), (x, arr)):
                want, werr = _values_or_error(getattr(np, name), *args)
                la = tuple(loom.asarray(v) if isinstance(v, np.ndarray) else v for v in args)
                got, gerr = _values_or_error(getattr(loom, name), *la)
                assert (werr is None) == (gerr is None), (name, arr.dtype, x, werr, gerr)  # type: ignore[attr-defined]  # NumPy's stubs: mixed operand types
                if werr is None:
                    check(got, want)
    a = loom.asarray(np.array([1, 2, 3], np.uint8))
    check(a / -2, np.array([1, 2, 3], np.uint8) / -2)
    check(a < 2 ** 70, np.ones(3, bool))


def test_binary_dtype_applies_to_the_computation():
    a = np.array([100, 120], np.int8)
    check(loom.add(loom.asarray(a), loom.asarray(a), dtype=np.float64), np.add(a, a, dtype=np.float64))
    check(loom.multiply(loom.asarray(a), 3, dtype=np.int16), np.multiply(a, 3, dtype=np.int16))
    with pytest.raises(TypeError, match="same_kind"):
        loom.add(loom.asarray(np.ones(2)), 1, dtype=np.int32)
    check(loom.subtract(loom.asarray(np.ones(2)), 1, dtype=np.int32, casting="unsafe"),
          np.subtract(np.ones(2), 1, dtype=np.int32, casting="unsafe"))


def test_errors_where_numpy_answers():
    # a value with more dimensions than the target, the extra ones of length 1
    a, n = loom.zeros(4), np.zeros(4)
    a[...] = loom.ones((1, 4)) * 2
    n[...] = np.ones((1, 4)) * 2
    check(a, n)
    with pytest.raises(ValueError):
        a[...] = loom.ones((2, 4))
    # the mean in an integer dtype (NumPy: the sum in it, divided, cast back)
    x = np.array([[1, 2, 4], [-3, -4, 9]], np.int32)
    for axis in (None, 0, 1):
        check(loom.mean(loom.asarray(x), axis=axis, dtype=np.int64), np.mean(x, axis=axis, dtype=np.int64))
    # out= under casting='unsafe'
    o, on = loom.zeros(3, dtype=np.int32), np.zeros(3, np.int32)
    loom.add(loom.asarray(np.full(3, 1.75)), 1.5, out=o, casting="unsafe")
    np.add(np.full(3, 1.75), 1.5, out=on, casting="unsafe")
    check(o, on)
    with pytest.raises(TypeError, match="same_kind"):
        loom.add(loom.asarray(np.ones(3)), 1.5, out=o)
    # linspace with array endpoints (it recursed through __array_function__)
    check(loom.linspace(loom.asarray(np.array([0.0, 1.0])), 5, 3), np.linspace(np.array([0.0, 1.0]), 5, 3))
