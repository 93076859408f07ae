"""loom.piecewise and loom.vectorize against numpy.piecewise and numpy.vectorize: values and dtypes,
0-d and broadcast inputs, a trailing 'otherwise' function, callables, functions with per-element Python
control flow (if, max, range), otypes, multiple results, and the errors NumPy raises."""
import numpy as np
import pytest

import loom


def same(got: object, want: np.ndarray) -> None:
    g = loom.asnumpy(got)
    assert g.dtype == want.dtype and g.shape == want.shape
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float32", "float64"])
def test_piecewise_values_in_order(dtype: str) -> None:
    xn = np.linspace(-2, 20, 12).astype(dtype)
    x = loom.asarray(xn)
    for funcs in ([-1, 0, 2, 3], [-1, 0, 2, 3, -5], np.array([7, 1, 2, 5])):
        cn = [xn > 15, xn <= 5, xn == 0, xn == 10]
        c = [x > 15, x <= 5, x == 0, x == 10]
        if dtype == "uint8" and isinstance(funcs, list):  # NumPy: -1 does not fit, an OverflowError
            with pytest.raises(OverflowError):
                np.piecewise(xn, cn, funcs)
            with pytest.raises(OverflowError):
                loom.piecewise(x, c, funcs)
            continue
        same(loom.piecewise(x, c, funcs if not isinstance(funcs, np.ndarray) else loom.asarray(funcs)),
             np.piecewise(xn, cn, funcs))


def test_piecewise_scalar_and_0d_and_callables() -> None:
    same(loom.piecewise(loom.asarray(np.float32(2)), [True], [5]), np.piecewise(np.float32(2), [True], [5]))
    xn = np.array(-1.5)
    same(loom.piecewise(loom.asarray(xn), [loom.asarray(xn) < 0, loom.asarray(xn) > 0], [10, 1, 2]),
         np.piecewise(xn, [xn < 0, xn > 0], [10, 1, 2]))
    xn = np.arange(-3.0, 4.0).reshape(7, 1)
    x = loom.asarray(xn)
    same(loom.piecewise(x, True, [-10, 10]), np.piecewise(xn, True, [-10, 10]))
    same(loom.piecewise(x, [x < 0], [lambda v: -v * 2, lambda v: v + 0.5]),
         np.piecewise(xn, [xn < 0], [lambda v: -v * 2, lambda v: v + 0.5]))
    with pytest.raises(ValueError, match="functions are expected"):
        loom.piecewise(x, [x < 0, x > 0], [1, 2, 3, 4])


def test_vectorize_arithmetic_fuses_and_matches_numpy() -> None:
    an, bn = np.arange(-6, 6, dtype=np.int16).reshape(3, 4), np.arange(4, dtype=np.int16) + 1
    for f in (lambda a, b: a * b - 3, lambda a, b: a // b, lambda a, b: a / b, lambda a, b: (a + b, a - b)):
        got = loom.vectorize(f)(loom.asarray(an), loom.asarray(bn))
        want = np.vectorize(f)(an, bn)
        if isinstance(want, tuple):
            assert isinstance(got, tuple) and len(got) == len(want)
            for g, w in zip(got, want):
                same(g, w)
        else:
            same(got, want)
    same(loom.vectorize(lambda a: a, otypes=["float32"])(loom.arange(3)), np.arange(3, dtype=np.float32))
    same(loom.vectorize(lambda a: 7)(loom.arange(3)), np.array([7, 7, 7]))


def test_vectorize_per_element_control_flow() -> None:
    def clipped_sum(a: int, b: int) -> int:
        total = 0
        for i in range(a):
            if i > b:
                break
            total += i
        return max(total, b) - min(a, b)

    an, bn = np.arange(8).reshape(2, 4), np.array([1, 3, 0, 2])
    same(loom.vectorize(clipped_sum)(loom.asarray(an), loom.asarray(bn)), np.vectorize(clipped_sum)(an, bn))
    same(loom.vectorize(lambda c, x, y: x if c else y)(loom.asarray([1, 0, 2]), 1.5, loom.asarray([3.0, 4.0, 5.0])),
         np.vectorize(lambda c, x, y: x if c else y)(np.array([1, 0, 2]), 1.5, np.array([3.0, 4.0, 5.0])))


def test_vectorize_errors() -> None:
    with pytest.raises(NotImplementedError, match="signature"):
        loom.vectorize(lambda a: a, signature="(n)->()")
    with pytest.raises(NotImplementedError, match="excluded"):
        loom.vectorize(lambda a, b: a, excluded={1})
    with pytest.raises(ZeroDivisionError):  # an error of the function itself is not swallowed
        loom.vectorize(lambda a: 1 // 0)(loom.arange(3))
