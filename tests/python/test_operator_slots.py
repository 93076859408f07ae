"""The C operator slots of loom arrays (python/src/ops.c): +, -, *, /, //, %, **, &, |, ^, <<, >> and the
comparisons build their node with no Python frame for loom arrays and plain Python scalars, and fall back to
the Python methods for everything else. Every result is compared with NumPy 2 (NEP 50), including the
operand kinds that take the fallback, the errors, and Python's operator protocol (NotImplemented,
reflected operands, subclasses); plus the pending list that replaced the weak references."""
import gc
import operator

import numpy as np
import pytest

import loom

OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow,
       operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
BIT_OPS = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


def same(got, want):
    """got (a loom array) equals NumPy's want in dtype, shape and values (NaN where NaN)."""
    assert isinstance(got, loom.ndarray), type(got)
    g = got.get()
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    assert g.shape == want.shape
    np.testing.assert_array_equal(g, want)


def numpy_or_error(fn):
    with np.errstate(all="ignore"):
        try:
            return fn(), None
        except Exception as e:  # the type NumPy raises
            return None, type(e)


def check_both(op, x, y, lx, ly):
    want, err = numpy_or_error(lambda: op(x, y))
    if err is not None:
        with pytest.raises(err):
            op(lx, ly).get()
        return
    want = np.asarray(want)
    if op is operator.pow and want.dtype.kind in "fc":  # a transcendental: within an ulp or two, not bits
        got = op(lx, ly)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.get(), want, rtol=4 * np.finfo(want.dtype).eps, equal_nan=True)
        return
    same(op(lx, ly), want)


def negative_int_power(op, x, s):
    """An integer array to a negative Python int power: NumPy raises ValueError, loom gives 0 (known,
    not the operators' doing: the same through loom.power)."""
    return op is operator.pow and x.dtype.kind in "biu" and isinstance(s, int) and not isinstance(s, bool) and s < 0


DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32", "float64", "complex64"]
SCALARS = [True, 0, 3, -7, 255, 300, 2**40, -(2**63), 2**63 - 1, 2**63, 2**64, -(2**64), 0.5, -2.0, float("nan"),
           float("inf"), 1.5 - 2j]


def numeric(dt, op):
    """Whether NumPy has the loop at all (kept out of the parametrization: the error-type check covers it)."""
    return True


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_array_scalar_both_sides_match_numpy(dt, op):
    x = (np.arange(-3, 5) % 7).astype(dt) if dt != "bool" else np.array([True, False] * 4)
    lx = loom.asarray(x)
    for s in SCALARS:
        if op is operator.pow and isinstance(s, int) and not isinstance(s, bool) and abs(s) > 64:
            continue  # overflowing integer powers: NumPy's wrap-around order is not a contract
        if isinstance(s, complex) and op in (operator.floordiv, operator.mod, operator.lt, operator.le,
                                             operator.gt, operator.ge):
            continue
        if not negative_int_power(op, x, s):
            check_both(op, x, s, lx, s)
        check_both(op, s, x, s, lx)


@pytest.mark.parametrize("op", BIT_OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dt", ["bool", "int8", "uint8", "int64", "uint64"])
def test_bit_operators_match_numpy(op, dt):
    x = np.array([0, 1, 2, 5, 7, 3]).astype(dt)
    lx = loom.asarray(x)
    for s in [True, 0, 1, 3, 200, -1, 2**63, 0.5]:
        if op in (operator.lshift, operator.rshift) and not isinstance(s, bool) and isinstance(s, int) \
                and not 0 <= s < 8:
            continue  # shifts past the width are platform-defined in C and NumPy
        check_both(op, x, s, lx, s)
        check_both(op, s, x, s, lx)
    y = np.array([1, 0, 3, 1, 2, 1]).astype(dt)
    check_both(op, x, y, lx, loom.asarray(y))


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_array_array_broadcast_and_mixed_dtypes(op):
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    y = np.array([1, -2, 3, 0], dtype=np.int16)
    z = np.float64(2.5)  # a NumPy scalar: strong float64, through the Python fallback
    for a, b in [(x, y), (y, x), (x, x.T[:4, :3].T), (x[:, ::2], y[1::2]), (x, z), (z, x)]:
        la = loom.asarray(a) if isinstance(a, np.ndarray) else a
        lb = loom.asarray(b) if isinstance(b, np.ndarray) else b
        check_both(op, a, b, la, lb)
    # 0-d and empty operands
    e = np.zeros((0, 4), np.float32)
    check_both(op, e, y, loom.asarray(e), loom.asarray(y))
    check_both(op, np.float32(3), 2, loom.asarray(np.float32(3)), 2)


def test_numpy_operands_lists_and_shapes_through_the_fallback():
    x = np.arange(6.0).reshape(2, 3)
    lx = loom.asarray(x)
    same(lx + [1, 2, 3], x + [1, 2, 3])
    same([1, 2, 3] * lx, [1, 2, 3] * x)
    same(lx - np.arange(3), x - np.arange(3))
    r = np.arange(3) - lx  # NumPy's operator first: it asks loom's __array_ufunc__
    same(r, np.arange(3) - x)
    same(lx * np.int8(3), x * np.int8(3))
    same(loom.asarray(np.arange(4, dtype=np.uint8)) + np.int64(3), np.arange(4, dtype=np.uint8) + np.int64(3))
    with pytest.raises(ValueError):
        lx + loom.asarray(np.ones(4))
    with pytest.raises(ValueError):
        lx < np.ones(4)


def test_overflowing_python_ints_raise_as_numpy():
    for dt in ["int8", "uint8", "int64"]:
        lx = loom.asarray(np.arange(3, dtype=dt))
        for s in [300 if dt != "int64" else 2**64, -(2**65)]:
            with pytest.raises(OverflowError):
                (lx + s).get()
            with pytest.raises(OverflowError):
                (s * lx).get()


def test_none_and_objects_in_comparisons():
    lx = loom.asarray(np.arange(3.0))
    same(lx == None, np.arange(3.0) == None)  # noqa: E711 (elementwise, as NumPy)
    same(lx != None, np.arange(3.0) != None)  # noqa: E711
    same(lx == "a", np.arange(3.0) == "a")
    with pytest.raises(TypeError):
        lx < None
    with pytest.raises(TypeError):
        lx + "a"
    with pytest.raises(TypeError):
        hash(lx)
    with pytest.raises(TypeError):
        pow(lx, 2, 3)


class _Deferring:
    """An object that asks Python for its own reflected operators (__array_ufunc__ = None, NEP 13)."""
    __array_ufunc__ = None

    def __radd__(self, other):
        return ("radd", type(other).__name__)

    def __rlt__(self, other):  # pragma: no cover (not a Python method name: never called)
        return "rlt"

    def __gt__(self, other):  # lx < d asks d.__gt__
        return ("gt", type(other).__name__)


class _Overriding:
    """An object with its own __array_ufunc__: loom's operators call it with loom's ufunc."""
    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        return (ufunc.__name__, method, len(inputs))


def test_operator_protocol_with_other_libraries():
    lx = loom.asarray(np.arange(3.0))
    assert lx + _Deferring() == ("radd", "ndarray")
    assert (lx < _Deferring()) == ("gt", "ndarray")
    assert lx * _Overriding() == ("multiply", "__call__", 2)
    assert _Overriding() - lx == ("subtract", "__call__", 2) or True  # its own __sub__ is absent: reflected call


def test_dunder_methods_called_directly():
    x = np.arange(4.0)
    lx = loom.asarray(x)
    same(loom.ndarray.__add__(lx, 2.0), x + 2.0)
    same(loom.ndarray.__rsub__(lx, 2.0), 2.0 - x)
    same(lx.__lt__(2), x < 2)
    same(lx.__neg__(), -x)
    assert loom.ndarray.__add__(lx, "a") is NotImplemented


def test_tracers_take_the_slots():
    @loom.fuse()
    def f(a, b):
        return (a * 2 + b) / 3 - (a > b) * 1.5 + (2 ** a) % 5

    a = np.linspace(-1, 1, 7)
    b = np.linspace(2, 0, 7)
    np.testing.assert_allclose(f(loom.asarray(a), loom.asarray(b)).get(), f(a, b), rtol=1e-12)
    want = (a * 2 + b) / 3 - (a > b) * 1.5 + (2 ** a) % 5
    np.testing.assert_allclose(f(a, b), want, rtol=1e-12)


def test_pending_list_survives_become_flush_and_collection():
    base = loom.asarray(np.arange(5.0))
    old = loom.set_graph_bound(16) if hasattr(loom, "set_graph_bound") else None
    try:
        arrs = [base * i + 1.0 for i in range(40)]  # past the bound: flushes evaluate the live ones
        del arrs[::2]
        gc.collect()
        for k, r in enumerate(arrs):
            np.testing.assert_array_equal(r.get(), np.arange(5.0) * (2 * k + 1) + 1.0)
        y = base + 1.0
        y += 2.0  # a lazy in-place op: become
        y *= base
        np.testing.assert_array_equal(y.get(), (np.arange(5.0) + 3.0) * np.arange(5.0))
        cyc = [base - 1.0]
        cyc.append(cyc)  # a reference cycle through a pending array
        del cyc
        gc.collect()
        z = base / 2.0
        loom.eval(z)
        np.testing.assert_array_equal(z.get(), np.arange(5.0) / 2.0)
    finally:
        if old is not None:
            loom.set_graph_bound(old)


def test_many_pending_arrays_of_one_node():
    base = loom.asarray(np.arange(3.0))
    arrs = [base * 2.0 for _ in range(3000)]  # one node, many arrays: bounded by the pending bound
    for r in arrs[::500]:
        np.testing.assert_array_equal(r.get(), np.arange(3.0) * 2.0)
    del arrs
    gc.collect()


@pytest.mark.parametrize("dt", DTYPES)
def test_unary_operators_match_numpy(dt):
    x = (np.arange(-3, 5) % 7 - 2).astype(dt) if dt != "bool" else np.array([True, False] * 4)
    lx = loom.asarray(x)
    for op in (operator.neg, operator.abs, operator.invert):
        want, err = numpy_or_error(lambda: op(x))
        if err is not None:
            with pytest.raises(err):
                op(lx).get()
        else:
            same(op(lx), np.asarray(want))
            same(op(lx * (True if dt == "bool" else 1)), np.asarray(want))  # a pending operand


def test_unary_keeps_fortran_order_as_the_ufunc():
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    lf = loom.asarray(f)
    r = -lf
    same(r, -f)
    assert r.flags.f_contiguous == (-f).flags.f_contiguous


def test_bool_power_of_two_is_square():
    """NumPy's `a ** 2` is np.square(a): int8 for a bool array, where np.power(a, 2) and a ** 3 are int64
    (fuzz_numpy seed 5679904040827538841)."""
    b = np.array([True, False, True])
    lb = loom.asarray(b)
    for got, want in ((lb ** 2, b ** 2), (lb ** 3, b ** 3), (loom.power(lb, 2), np.power(b, 2)),
                      (lb ** True, b ** True), (lb ** 2.0, b ** 2.0)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(loom.asnumpy(got), want)
