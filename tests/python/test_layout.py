"""Memory order (NumPy's C, F, A, K) against NumPy: creation, *_like, asarray/array, copy, astype,
ravel/flatten and reshape give NumPy's values, strides and flags; views share memory exactly when
NumPy's do (x[::2].ravel() copies)."""
from typing import Any

import numpy as np
import pytest

import loom
from conftest import check, may_share_memory


def same_layout(got, want):
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.size or got.size:  # the strides of computed empty arrays are not compared
        assert got.strides == want.strides, (got.strides, want.strides)
    assert got.flags.c_contiguous == want.flags.c_contiguous
    assert got.flags.f_contiguous == want.flags.f_contiguous


# inputs with every kind of layout: C, F, a transposed 3-d (stride order neither C nor F), a strided
# view, negative strides, size-1 axes, 0-d and empty
def layouts():
    base = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4)
    return {
        "c": base,
        "f": np.asfortranarray(base),
        "perm": base.transpose(2, 0, 1),
        "strided": np.arange(40.0).reshape(5, 8)[::2, 1::3],
        "negative": base[::-1, :, ::-2],
        "ones": np.ones((3, 1, 4), order="F"),
        "0d": np.array(7.0),
        "empty": np.zeros((2, 0, 3), order="F"),
        "1d": np.arange(6.0)[::2],
    }


LAYOUTS = list(layouts())


def loom_and_numpy(name):
    """(loom array, NumPy array) with the same values and layout (loom's built as a view like NumPy's)."""
    n = layouts()[name]
    src = {"strided": np.arange(40.0).reshape(5, 8), "negative": np.arange(24.0).reshape(2, 3, 4),
           "1d": np.arange(6.0)}.get(name)
    if src is None:
        return loom.asarray(n), n
    key = {"strided": (slice(None, None, 2), slice(1, None, 3)),
           "negative": (slice(None, None, -1), slice(None), slice(None, None, -2)),
           "1d": (slice(None, None, 2),)}[name]
    return loom.asarray(src)[key], n


@pytest.mark.parametrize("name", LAYOUTS)
def test_asarray_keeps_numpy_layout(name):
    n = layouts()[name]
    a = loom.asarray(n)
    check(a, n)
    same_layout(a, np.array(n, order="K"))


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("name", LAYOUTS)
def test_copy_astype_array_orders(name, order):
    a, n = loom_and_numpy(name)
    for got, want in ((a.copy(order=order), n.copy(order=order)),
                      (loom.copy(a, order=order), np.copy(n, order=order)),
                      (a.astype(np.float32, order=order), n.astype(np.float32, order=order)),
                      (loom.array(a, order=order), np.array(n, order=order)),
                      (loom.asarray(a, order=order), np.asarray(n, order=order))):
        check(got, want)
        same_layout(got, want)
    assert not may_share_memory(a.copy(order=order), a)


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("name", LAYOUTS)
def test_ravel_flatten(name, order):
    a, n = loom_and_numpy(name)
    r, want = a.ravel(order), n.ravel(order)
    check(r, want)
    # a view exactly when NumPy's is one
    assert may_share_memory(r, a) == np.may_share_memory(want, n), (name, order)
    f = a.flatten(order)
    check(f, n.flatten(order))
    assert not may_share_memory(f, a)
    check(loom.ravel(a, order), np.ravel(n, order))


def test_strided_ravel_copies():
    x = loom.arange(10)
    y = x[::2].ravel()
    x[...] = -1  # a later write into x must not show through y
    check(y, np.arange(10)[::2])


@pytest.mark.parametrize("order", ["C", "F", "A"])
@pytest.mark.parametrize("name", ["c", "f", "perm", "strided", "ones"])
def test_reshape_orders(name, order):
    a, n = loom_and_numpy(name)
    shape = (n.size // 2, 2) if n.size % 2 == 0 else (n.size,)
    r, want = a.reshape(shape, order=order), n.reshape(shape, order=order)
    check(r, want)
    assert may_share_memory(r, a) == np.may_share_memory(want, n)
    check(loom.reshape(a, (-1,), order=order), np.reshape(n, (-1,), order=order))


def test_reshape_order_k_and_bad_orders():
    a = loom.ones((2, 3))
    with pytest.raises(ValueError, match="'K' is not permitted"):
        a.reshape(6, order="K")
    with pytest.raises(ValueError):
        a.ravel(order="Q")
    with pytest.raises(ValueError):
        a.copy(order="X")
    with pytest.raises(ValueError, match="only 'C' or 'F'"):
        loom.empty(3, order="K")
    with pytest.raises(ValueError):
        loom.empty_like(a, order="Q")


@pytest.mark.parametrize("fn", ["empty", "zeros", "ones"])
@pytest.mark.parametrize("order", ["C", "F", "c", "f"])
@pytest.mark.parametrize("shape", [(), (0,), (4,), (2, 3), (2, 3, 4), (1, 0, 2)])
def test_creation_orders(fn, order, shape):
    got, want = getattr(loom, fn)(shape, order=order), getattr(np, fn)(shape, order=order)
    same_layout(got, want)
    if fn != "empty":
        check(got, want)
    got, want = loom.full(shape, 2.5, order=order), np.full(shape, 2.5, order=order)
    check(got, want)
    same_layout(got, want)


def test_default_dtypes_and_none_shape():
    for fn in ("empty", "zeros", "ones"):
        assert getattr(loom, fn)((2,), dtype=None).dtype == getattr(np, fn)((2,), dtype=None).dtype
        with pytest.raises(TypeError, match=r"Use \(\)"):
            getattr(loom, fn)(None)
    check(loom.ones(3, dtype=None), np.ones(3, dtype=None))
    with pytest.raises(ValueError, match="byte-order"):
        loom.zeros((2, 3), dtype=">i4")


@pytest.mark.parametrize("fn", ["empty_like", "zeros_like", "ones_like"])
@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("name", LAYOUTS)
def test_like_orders(fn, order, name):
    a, n = loom_and_numpy(name)
    got, want = getattr(loom, fn)(a, order=order), getattr(np, fn)(n, order=order)
    same_layout(got, want)
    if fn != "empty_like":
        check(got, want)
    got, want = loom.full_like(a, 3, order=order), np.full_like(n, 3, order=order)
    check(got, want)
    same_layout(got, want)
    # a new shape of another rank: NumPy lays it out in C order for 'K'
    got, want = getattr(loom, fn)(a, order=order, shape=(3, 2)), getattr(np, fn)(n, order=order, shape=(3, 2))
    same_layout(got, want)


def test_like_subok_refused():
    with pytest.raises(TypeError, match="subok"):
        loom.zeros_like(loom.ones(3), subok=True)


@pytest.mark.parametrize("name", LAYOUTS)
def test_ascontiguous_asfortran(name):
    a, n = loom_and_numpy(name)
    for got, want in ((loom.ascontiguousarray(a), np.ascontiguousarray(n)),
                      (loom.asfortranarray(a), np.asfortranarray(n)),
                      (loom.ascontiguousarray(a, dtype=np.float32), np.ascontiguousarray(n, dtype=np.float32))):
        check(got, want)
        same_layout(got, want)
    if n.flags.c_contiguous and n.ndim:
        assert loom.ascontiguousarray(a) is a
    if n.flags.f_contiguous and n.ndim:
        assert loom.asfortranarray(a) is a


def test_ndarray_constructor_order():
    a = loom.ndarray((2, 3), dtype=np.float32, order="F")
    same_layout(a, np.ndarray((2, 3), dtype=np.float32, order="F"))
    with pytest.raises(ValueError, match="byte-order"):
        loom.ndarray((2, 3), dtype=">i4")


def test_f_copy_of_pending_and_int_dtypes():
    x = loom.asarray(np.arange(12, dtype=np.int16).reshape(3, 4))
    y = (x * 3 - 1).copy(order="F")  # a pending value copied into an F layout
    want = (np.arange(12, dtype=np.int16).reshape(3, 4) * 3 - 1).copy(order="F")
    check(y, want)
    same_layout(y, want)


def test_eq_ne_none():
    a = loom.arange(4)
    check(a == None, np.arange(4) == None)  # noqa: E711 (NumPy compares elementwise)
    check(a != None, np.arange(4) != None)  # noqa: E711
    check(loom.zeros((2, 0)) == None, np.zeros((2, 0)) == None)  # noqa: E711


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("name", LAYOUTS)
def test_astype_copy_false_returns_self_as_numpy(name, order):
    a, n = loom_and_numpy(name)
    same = a.astype(a.dtype, order=order, copy=False) is a
    assert same == (n.astype(n.dtype, order=order, copy=False) is n), (name, order)


@pytest.mark.parametrize("src, dst", [("int32", "float32"), ("int32", "int16"), ("int32", "int64"),
                                      ("float64", "uint8"), ("uint8", "bool"), ("int16", "float16")])
@pytest.mark.parametrize("shape", [(12,), (3, 4), (2, 0), ()])
def test_view_dtype(src, dst, shape):
    n = (np.arange(int(np.prod(shape)), dtype=np.int64) % 2 if dst == "bool" else
         np.arange(int(np.prod(shape)))).astype(src).reshape(shape)
    a = loom.asarray(n)
    want: Any = None
    err = None
    try:
        want = n.view(dst)
    except ValueError as e:
        err = e
    if err is not None:
        with pytest.raises(ValueError):
            a.view(dst)
        return
    got = a.view(dst)
    check(got, want)
    same_layout(got, want)
    if n.size:  # the same memory: a write through the view shows in the base
        got[(0,) * got.ndim] = 1
        want[(0,) * want.ndim] = 1
        check(a, n)


def test_view_dtype_errors():
    a = loom.arange(12, dtype=np.int32).reshape(3, 4)
    with pytest.raises(ValueError, match="last axis must be contiguous"):
        a[:, ::2].view(np.int64)
    with pytest.raises(ValueError, match="aligned"):
        loom.arange(12, dtype=np.int8)[1:9].view(np.int32)
    with pytest.raises(TypeError):
        a.view(np.dtype("U2"))  # a dtype loom arrays cannot hold


def test_view_dtype_complex():
    n = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = loom.asarray(n)
    np.testing.assert_array_equal(a.view(np.complex64).get(), n.view(np.complex64))
    np.testing.assert_array_equal(a.view(np.complex64).view(np.float32).get(), n)


def test_new_empty_arrays_have_zero_strides():
    # NumPy gives every new empty array zero strides: creation, copies, results, deep copies
    import copy
    for got, want in ((loom.empty((2, 0, 3)), np.empty((2, 0, 3))), (loom.ones((0, 4)).copy(), np.ones((0, 4)).copy()),
                      (loom.zeros((2, 0)) + 1, np.zeros((2, 0)) + 1), (copy.deepcopy(loom.ndarray((0,))), np.ndarray((0,))),
                      (loom.asarray(np.zeros((3, 0))), np.array(np.zeros((3, 0)))),
                      (loom.zeros((0, 2), order="F").astype(np.int8), np.zeros((0, 2), order="F").astype(np.int8))):
        assert got.strides == want.strides, (got.shape, got.strides, want.strides)
    a = loom.arange(6).reshape(2, 3)
    assert a[:, 1:1].strides == np.arange(6).reshape(2, 3)[:, 1:1].strides  # a view keeps its base's strides
