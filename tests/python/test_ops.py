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
