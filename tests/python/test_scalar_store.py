"""Storing a Python or NumPy scalar into an array (full, fill, setitem) and axis numbers beyond 32 bits
(issue 10 items 7 and 8): each outcome, the stored values or the exception class, is NumPy's.

NumPy's rules: a Python int the integer dtype cannot hold is OverflowError, a Python float NaN into an
integer array ValueError, an infinity OverflowError, another float is truncated and checked as an int;
full() checks Python ints only (its copyto casts other scalars); NumPy scalars are checked the same way
by fill and basic indexing into signed integer dtypes and cast into unsigned ones; an index array or a
mask checks Python scalars only. An IndexError of the key comes before the value's error. An axis number
of any size out of range is an AxisError, never another axis.
"""
from typing import Any, Callable

import numpy as np
import pytest

import loom

INT_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
VALUES: list[Any] = [0, 1, -1, 127, 128, -129, 255, 256, 2**31, -2**31 - 1, 2**63 - 1, 2**63, 2**64 - 1, -2**63,
                     np.int64(300), np.uint8(200), np.int8(-5), True, 3.7, -0.0, -0.9, 127.9, -128.9, 255.5, 300.0,
                     9.3e18, 1e30, float("nan"), float("inf"), float("-inf"), np.float32("nan")]


def outcome(fn: Callable[[Any], Any], xp: Any) -> tuple[str, Any]:
    try:
        r = fn(xp)
    except (OverflowError, ValueError, TypeError, IndexError) as e:
        return ("raises", type(e))
    return ("ok", loom.asnumpy(r) if isinstance(r, loom.ndarray) else np.asarray(r))


def check(fn: Callable[[Any], Any]) -> None:
    want, got = outcome(fn, np), outcome(fn, loom)
    assert want[0] == got[0], (want, got)
    if want[0] == "raises":
        assert got[1] is want[1], (want, got)
    else:
        np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool", "float32", "float64"])
@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_fill_and_setitem(dtype: str, value: Any) -> None:

    if isinstance(value, np.floating) and not np.isfinite(value) and np.dtype(dtype).kind == "u":
        pytest.skip("a NumPy NaN/inf cast into an unsigned dtype: undefined in NumPy (x86: 2**63), loom "
                    "saturates (README)")

    def fill(xp: Any) -> Any:
        a = xp.zeros(4, dtype=dtype)
        a.fill(value)
        return a

    def set_one(xp: Any) -> Any:
        a = xp.zeros(4, dtype=dtype)
        a[1] = value
        return a

    def set_slice(xp: Any) -> Any:
        a = xp.zeros((2, 3), dtype=dtype)
        a[:, 1:] = value
        return a

    def set_fancy(xp: Any) -> Any:
        a = xp.zeros(5, dtype=dtype)
        a[xp.asarray(np.array([0, 3]))] = value
        return a

    def set_mask(xp: Any) -> Any:
        a = xp.zeros(5, dtype=dtype)
        a[xp.asarray(np.array([True, False, True, False, False]))] = value
        return a

    def bad_index(xp: Any) -> Any:  # the key's IndexError comes first
        a = xp.zeros(4, dtype=dtype)
        a[(0, 1)] = value
        return a

    for fn in (fill, set_one, set_slice, set_fancy, set_mask, bad_index):
        check(fn)


@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool", "float32"])
@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_full(dtype: str, value: Any) -> None:
    if np.dtype(dtype).kind in "iu" and isinstance(value, (float, np.floating)):
        pytest.skip("a float into ints through full(): NumPy's unsafe cast (NaN/inf/out of range undefined; "
                    "loom saturates, README)")
    if np.dtype(dtype).kind in "iu" and isinstance(value, np.integer) and not \
            np.iinfo(dtype).min <= int(value) <= np.iinfo(dtype).max:
        pytest.skip("a NumPy integer into a narrower dtype through full(): NumPy's unsafe cast wraps, as loom's")
    check(lambda xp: xp.full((2, 2), value, dtype=dtype))


def test_full_numpy_integer_wraps_as_numpy() -> None:
    check(lambda xp: xp.full((3,), np.int64(300), dtype="uint8"))
    check(lambda xp: xp.full((3,), np.int16(-1), dtype="uint32"))


@pytest.mark.parametrize("axis", [2**31, 2**32, 2**32 + 1, -2**31 - 1, -2**32, 2**62, -(2**63)])
@pytest.mark.parametrize("op", ["sum", "max", "mean", "argmax", "cumsum"])
def test_axis_beyond_32_bits_is_an_error(op: str, axis: int) -> None:
    a = loom.arange(6).reshape(2, 3)
    with pytest.raises(np.exceptions.AxisError, match=str(axis)):
        getattr(loom, op)(a, axis=axis)
    with pytest.raises((ValueError, OverflowError)):  # NumPy: "integer won't fit into a C int" or "Python int
        # too large to convert to C int", by function (AxisError is a ValueError)
        getattr(np, op)(np.arange(6).reshape(2, 3), axis=axis)


# ---- a value of one or more dimensions stored into one element -------------------------------------------
# NumPy stores into the element a key of one integer per axis selects (a[1], a[0, 2], a[()] of a 0-d array,
# 0-d integer keys too) as a scalar: an array or sequence of any size there is an error ('setting an array
# element with a sequence', ValueError; TypeError into complex dtypes; into bool NumPy takes the truth of a
# size-1 array or a non-empty list: NumPy 2.4 and 2.5 share that code, and loom asks the installed NumPy).
# A key with an Ellipsis, a slice or None selects a view, into which a (1,)-shaped value broadcasts.
ELEMENT_KEYS = [((4,), 1), ((4,), (1,)), ((4,), -1), ((2, 3), (1, 2)), ((), ()), ((4,), np.int64(2)),
                ((2, 3), (np.int8(1), -1))]
VIEW_KEYS = [((4,), (Ellipsis, 1)), ((2, 3), (0, Ellipsis, 2)), ((4,), slice(1, 2)), ((), Ellipsis),
             ((2, 3), (1, slice(None)))]
STORED = [np.array([7]), np.array([[7]]), np.array([7, 8]), np.array([True]), np.array(5),
          np.array([2.5], dtype=np.float32), np.array([1 + 2j]), np.zeros((0,)), np.zeros((3, 1))]


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "float32", "complex64"])
@pytest.mark.parametrize("shape_key", ELEMENT_KEYS + VIEW_KEYS, ids=repr)
@pytest.mark.parametrize("stored", STORED, ids=lambda v: f"{v.dtype}{list(v.shape)}")
def test_array_stored_into_one_element_or_a_view(dtype: str, shape_key: tuple, stored: np.ndarray) -> None:
    shape, key = shape_key

    def loom_value(xp: Any) -> Any:  # a loom array on loom's side, NumPy's array on NumPy's
        a = xp.zeros(shape, dtype=dtype)
        a[key] = xp.asarray(stored)
        return a

    def numpy_value(xp: Any) -> Any:  # NumPy's own array on both sides
        a = xp.zeros(shape, dtype=dtype)
        a[key] = stored
        return a

    def list_value(xp: Any) -> Any:  # a list: NumPy's conversion on both sides
        a = xp.zeros(shape, dtype=dtype)
        a[key] = stored.tolist()
        return a

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ComplexWarning: the outcome is what counts
        for fn in (loom_value, numpy_value, list_value):
            check(fn)


def test_element_store_of_a_pending_value_keeps_its_device_and_value() -> None:
    a = loom.zeros((2, 3), dtype="float32")
    v = loom.asarray(np.array([3.0], dtype=np.float32)) * 2  # pending
    a[0, ...] = v[0]  # a 0-d value into an element: fine everywhere
    a[1, 2] = (v * 0 + 5)[0]
    with pytest.raises(ValueError):
        a[1, 1] = v  # (1,) into one element
    np.testing.assert_array_equal(a.get(), np.array([[6, 6, 6], [0, 0, 5]], dtype=np.float32))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64", "uint64", "float16", "float32"])
@pytest.mark.parametrize("seq", [[300, 1], [-1, 2], [1.7, -2.9], [float("nan"), 0], [2**63, 0], [2**64, 1], [1 + 2j, 0],
                                 (True, 2**70), [[1, 2]], [[[1, 2]]]], ids=repr)
def test_sequence_through_a_view_converts_as_numpy(dtype: str, seq: Any) -> None:
    """A list or tuple stored through a view: its elements are converted to the dtype as Python scalars
    (300 into int8: OverflowError, never a wrapped 44), and a sequence deeper than the view is refused."""
    def store(xp: Any) -> Any:
        a = xp.zeros((2, 2), dtype=dtype)
        a[0, :] = seq
        return a

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(store)


def test_numpy_integer_key_and_axes_array() -> None:
    """A NumPy integer key (a[np.int64(2)] = v) and an array of axes (a.transpose(np.array([1, 0]))) were
    compared to () and raised the empty-array truth ValueError."""
    check(lambda xp: _store(xp.zeros(4, dtype="int16"), np.int64(2), 7))
    check(lambda xp: _store(xp.zeros((2, 3), dtype="float32"), (np.uint8(1), np.int32(-1)), 2.5))
    a = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(loom.asarray(a).transpose(np.array([1, 0])).get(), a.transpose(np.array([1, 0])))


def _store(a: Any, key: Any, v: Any) -> Any:
    a[key] = v
    return a
