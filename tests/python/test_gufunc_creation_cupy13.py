"""Generalized ufuncs (loom._gufunc: matmul's axes=, CuPy's _GUFunc interface) and array creation's copy=
and strides= rules, each against NumPy (the failures CuPy's own suite found: tests/cupy/README.md)."""
import numpy as np
import pytest

import loom
from loom._gufunc import GeneralizedUfunc, parse_signature


def arange(shape, dtype=np.float64):
    return np.arange(1, int(np.prod(shape)) + 1, dtype=dtype).reshape(shape)


# ---- matmul(axes=) against numpy.matmul(axes=) --------------------------------------------------------------
@pytest.mark.parametrize("axes", [[(0, 1), (0, 1), (0, 1)], [(0, 1), (0, 1), (1, 0)], [(-2, -1), (-3, 0), (-1, -3)],
                                  [(2, 0), (1, 3), (0, 2)]])
@pytest.mark.parametrize("use_out", [False, True])
def test_matmul_axes(axes, use_out):
    x = arange((3, 3, 3, 3))
    y = (arange((3, 3, 3, 3)) % 5) - 2
    want = np.matmul(x, y, axes=axes)
    out = loom.empty(want.shape) if use_out else None
    got = loom.matmul(loom.asarray(x), loom.asarray(y), axes=axes, out=out)
    if use_out:
        assert got is out
    np.testing.assert_array_equal(got.get(), want)


def test_matmul_axes_vector_operands_and_non_contiguous():
    a = arange((5, 4, 6))[:, ::2, :]          # (5, 2, 6), strided
    v = arange((6,)) - 3.5
    want = np.matmul(a, v, axes=[(1, 2), (0,), (1,)])  # type: ignore[list-item]  # NumPy's stub: pairs only
    got = loom.matmul(loom.asarray(a), loom.asarray(v), axes=[(1, 2), (0,), (1,)])
    np.testing.assert_allclose(got.get(), want)


@pytest.mark.parametrize("axes", [[(0,), (0,), ()], [(-1,), (-1,), ()]])
def test_matmul_axes_wrong_count_is_axis_error(axes):
    with pytest.raises(np.exceptions.AxisError):
        np.matmul(np.ones((2, 3)), np.ones((2, 3)), axes=axes)
    with pytest.raises(np.exceptions.AxisError):
        loom.matmul(loom.ones((2, 3)), loom.ones((2, 3)), axes=axes)


def test_matmul_axes_out_of_bounds():
    with pytest.raises(np.exceptions.AxisError):
        loom.matmul(loom.ones((2, 3)), loom.ones((3, 2)), axes=[(0, 5), (0, 1), (0, 1)])


# ---- the generalized ufunc on its own --------------------------------------------------------------------
def test_parse_signature():
    assert parse_signature("(i,j),(j,k)->(k,l)") == (
        [(("i", False, False), ("j", False, False)), (("j", False, False), ("k", False, False))],
        [(("k", False, False), ("l", False, False))], 4)
    assert parse_signature("(n?,k),(k,m|1)->(n?)")[0][1][1] == ("m", False, True)
    assert parse_signature("->(i)") == ([()], [(("i", False, False),)], 1)
    for bad in ["", "(i)(i)", "(i)-(i)", "j->(i", "()->()->", "(i)->(j|1)"]:
        with pytest.raises(ValueError):
            parse_signature(bad)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_gufunc_axis_keepdims(axis, keepdims):
    x = arange((2, 3, 4))
    g = GeneralizedUfunc(lambda v: v.sum(), "(i)->()")
    got = g(loom.asarray(x), axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(got.get(), x.sum(axis=axis, keepdims=keepdims))


def test_gufunc_loop_broadcast_and_core_mismatch():
    g = GeneralizedUfunc(lambda a, b: (a * b).sum(), "(i),(i)->()")
    a, b = arange((4, 1, 3)), arange((5, 3)) - 7
    np.testing.assert_array_equal(g(loom.asarray(a), loom.asarray(b)).get(), np.einsum("...i,...i->...", a, b))
    with pytest.raises(ValueError):
        g(loom.ones((2, 3)), loom.ones((2, 4)))


def test_gufunc_empty_loop_and_zero_d_core():
    g = GeneralizedUfunc(lambda v: v * 2, "()->()")
    assert g(loom.ones((0, 3))).shape == (0, 3)
    assert float(g(loom.asarray(np.float64(2.5)))) == 5.0


def test_gufunc_out_dtype_and_shape_checks():
    g = GeneralizedUfunc(lambda v: v, "(i,j)->(i,j)")
    x = loom.asarray(arange((2, 3, 4)))
    with pytest.raises(ValueError):
        g(x, out=loom.empty((3, 3, 4)))
    with pytest.raises(TypeError):  # float64 into int16 is not same_kind
        g(x, out=loom.empty((2, 3, 4), dtype=np.int16))
    z = g(x, dtype=np.float32)
    assert z.dtype == np.float32
    np.testing.assert_array_equal(z.get(), arange((2, 3, 4)).astype(np.float32))


def test_gufunc_typed_loops():
    calls = []
    def loop(name):
        def f(a, b):
            calls.append(name)
            return a + b
        return f
    g = GeneralizedUfunc(loop("default"), "(i),(i)->(i)", signatures=[("ii->i", loop("int32"))])
    g(loom.asarray(np.array([1], np.int32)), loom.asarray(np.array([2], np.int32)), casting="no")
    g(loom.asarray(np.array([1.0])), loom.asarray(np.array([2.0])), casting="no")
    z = g(loom.asarray(np.array([1.5])), loom.asarray(np.array([2.5])), casting="unsafe", signature="ii->i")
    assert calls == ["int32", "default", "int32"] and z.dtype == np.int32
    np.testing.assert_array_equal(z.get(), [3])
    with pytest.raises(TypeError):
        g(loom.ones(1), loom.ones(1), signature="dd->d")
    with pytest.raises(ValueError):
        GeneralizedUfunc(lambda a, b: a, "(i),(i)->(i)", signatures=["iii->i"])


def test_gufunc_optional_dims_must_agree():
    g = GeneralizedUfunc(lambda x, y: x, "(a?,b?),(b,a?)->(a?,b?)")
    with pytest.raises(ValueError):
        g(loom.ones(2), loom.ones((2, 2)))


# ---- creation: copy= and strides= ----------------------------------------------------------------------
@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("copy", [None, False, True])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_array_copy_modes_follow_numpy(order, copy, layout):
    """Whether array(a, copy=, order=) raises, and whether its result sees a later write to a, as NumPy."""
    src = np.asfortranarray(arange((2, 3, 4))) if layout == "F" else arange((2, 3, 4) if layout == "C" else (4, 6))
    a = loom.asarray(src)
    if layout == "strided":  # the same view of both (asarray of a strided NumPy array is contiguous)
        src, a = src[::2, 1:], a[::2, 1:]
    try:
        want = np.array(src, copy=copy, order=order)
    except ValueError:
        with pytest.raises(ValueError):
            loom.array(a, copy=copy, order=order)
        return
    got = loom.array(a, copy=copy, order=order)
    src[...] = 0
    a.fill(0)
    np.testing.assert_array_equal(got.get(), want)
    assert got.flags.c_contiguous == want.flags.c_contiguous and got.flags.f_contiguous == want.flags.f_contiguous


@pytest.mark.parametrize("shape, strides", [((2, 3, 4), (8, 128, 1024)), ((2, 3, 4), (-8, 8, 8)),
                                            ((2, 3), (20, 4))])
def test_ndarray_strides_outside_allocation(shape, strides):
    with pytest.raises(ValueError, match=r"ndarray\(\) with strides"):
        loom.ndarray(shape, dtype=np.float64 if strides[0] != 20 else np.float32, strides=strides)


@pytest.mark.parametrize("shape, strides", [((2, 3, 4), (96, 32, 8)), ((2, 3, 4), (8, 0, 8)),
                                            ((2, 0, 4), (8, 128, 1024)), ((3,), (0,))])
def test_ndarray_strides_inside_allocation(shape, strides):
    a = loom.ndarray(shape, dtype=np.float64, strides=strides)
    assert a.shape == shape and a.strides == strides


# ---- take on 0-d arrays and take's out= rules; min_scalar_type of loom arrays -----------------------------
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("indices", [0, -1, [0], [0, -1]])
def test_take_zero_d(axis, indices):
    src = np.array(5.0)
    want = np.take(src, indices, axis=axis)
    got = loom.asarray(src).take(indices, axis=axis)
    np.testing.assert_array_equal(got.get(), want)
    out = loom.zeros(want.shape)
    assert loom.asarray(src).take(indices, axis=axis, out=out) is out
    np.testing.assert_array_equal(out.get(), want)
    with pytest.raises(np.exceptions.AxisError):
        loom.asarray(src).take(indices, axis=1)


@pytest.mark.parametrize("src_dtype, out_dtype", [(np.int32, np.int64), (np.int32, np.int16), (np.int32, np.float32),
                                                  (np.float64, np.int64), (np.float64, np.float32)])
def test_take_out_dtype_rule_follows_numpy(src_dtype, out_dtype):
    src = np.arange(5, dtype=src_dtype) * 3
    idx = [4, 0, 2]
    try:
        want = np.take(src, idx, out=np.zeros(3, out_dtype))
    except TypeError:
        with pytest.raises(TypeError):
            loom.asarray(src).take(idx, out=loom.zeros(3, out_dtype))
        return
    got = loom.asarray(src).take(idx, out=loom.zeros(3, out_dtype))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)


def test_take_out_shape_checked_before_indices():
    with pytest.raises(ValueError):
        np.take(np.arange(60.).reshape(3, 4, 5), np.zeros((2, 3), np.int32), out=np.zeros((2, 4)))
    with pytest.raises(ValueError):
        loom.arange(60.).reshape(3, 4, 5).take(loom.zeros((2, 3), np.int32), out=loom.zeros((2, 4)))
    with pytest.raises(ValueError):  # index 1 is out of range too: the out shape is reported first
        loom.asarray(np.array(2.0)).take(loom.asarray(np.array(1, np.int32)), out=loom.zeros(1))


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float16, np.float64, np.complex64, np.bool_])
def test_min_scalar_type_of_loom_arrays_is_their_dtype(dtype):
    a = loom.asarray(np.array([[-1, 1]]).astype(dtype))
    assert loom.min_scalar_type(a) == np.dtype(dtype)
    assert loom.min_scalar_type([a, a]) == np.dtype(dtype)
    assert loom.min_scalar_type(loom.asarray(np.array(-1).astype(dtype))) == np.dtype(dtype)
    for v in (-129, 0, 1.5, np.inf, np.float32(2), [np.int8(1), np.int8(2)]):
        assert loom.min_scalar_type(v) == np.min_scalar_type(v)


# ---- CuPy's __cupy_get_ndarray__ wrappers are arrays wherever one is taken ---------------------------------
class _Wrapper:
    """An object with CuPy's __cupy_get_ndarray__ protocol (a wrapper of a GPU array)."""

    def __init__(self, a):
        self._a = a

    def __cupy_get_ndarray__(self):
        return self._a


def test_cupy_get_ndarray_protocol():
    x = loom.asarray(np.arange(6.0).reshape(2, 3))
    assert loom.asarray(_Wrapper(x)) is x
    np.testing.assert_array_equal(loom.array([_Wrapper(x[0]), _Wrapper(x[1])]).get(), np.arange(6.0).reshape(2, 3))
    y = loom.zeros((2, 3))
    y[...] = _Wrapper(x)
    np.testing.assert_array_equal((y + _Wrapper(x)).get(), 2 * np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(loom.asnumpy(_Wrapper(x)), np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError):  # object arrays are refused, not stored as pointers
        loom.array(np.array([1, 2, 3], dtype=object))
