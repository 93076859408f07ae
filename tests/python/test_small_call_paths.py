"""The fast paths of everyday small calls (bench/sweep/small_calls.py) against NumPy: each fast path takes
only the common argument forms (a tuple of Python ints as a shape, order 'C', a dtype seen before, a
Python number stored through a basic key, plain loom arrays as operands, ...) and leaves the rest to the
general path. So every call here is checked for what NumPy gives: values, dtype, shape, strides and
whether the result is a view (shares the memory, .base) or a copy; and the unusual arguments the fast
paths must not swallow (bools and floats as lengths, order 'K' in reshape, bad orders, NumPy integers,
-1 in shapes, non-contiguous arrays, pending arrays, @loom.fuse tracers) for NumPy's error types (and
messages where loom's are NumPy's)."""
import warnings

import numpy
import pytest

import loom
from loom import _core
from conftest import check


def _pair(shape, dtype=numpy.float64, seed=0):
    rng = numpy.random.default_rng(seed)
    n = (rng.standard_normal(shape) * 10).astype(dtype)
    return n, loom.asarray(n)


def _same_error(fn_np, fn_loom, message=True):
    """fn_loom raises the error fn_np raises: its type and (message=True) its message."""
    with pytest.raises(Exception) as e_np:
        fn_np()
    with pytest.raises(type(e_np.value)) as e_loom:
        fn_loom()
    if message:
        assert str(e_loom.value) == str(e_np.value)


def _is_view_of(r, a):
    """r shares a's memory (a write through r reaches a) and its .base is a's owner."""
    owner = a if a.base is None else a.base
    assert r.base is owner
    assert loom.shares_memory(r, a)


def _geometry(r, n):
    """r has the shape, dtype and strides of NumPy's n, and n's values."""
    check(r, n)
    assert r.strides == n.strides, (r.strides, n.strides)


# ---- reshape -------------------------------------------------------------------------------------------
_SHAPES = [(4096,), ((4096,),), ((32, 128),), (32, 128), ([32, 128],), (numpy.int64(4096),),
           ((numpy.int32(64), 64),), (-1,), ((8, -1),), (2, -1, 8), ((4096, 1),), ((1, 1, 4096),)]


@pytest.mark.parametrize("args", _SHAPES, ids=repr)
def test_reshape_views(args):
    n, a = _pair(4096)
    r = a.reshape(*args)
    _geometry(r, n.reshape(*args))
    _is_view_of(r, a)
    r[(0,) * r.ndim] = 123.0
    assert a[0].item() == 123.0  # the write reached the base


@pytest.mark.parametrize("order", ["C", "c", "F", "f", "A", "a"])
@pytest.mark.parametrize("layout", ["c", "f", "strided"])
def test_reshape_orders_and_layouts(order, layout):
    n, a = _pair((6, 8))
    if layout == "f":
        n, a = n.T, a.T
    elif layout == "strided":
        n, a = n[::2], a[::2]
    want = n.reshape((n.size // 4, 4), order=order)
    got = a.reshape((n.size // 4, 4), order=order)
    check(got, want)
    assert loom.shares_memory(got, a) == numpy.shares_memory(want, n)
    if numpy.shares_memory(want, n):
        assert got.strides == want.strides


def test_reshape_same_shape_keeps_strides():
    n, a = _pair(20)
    check(a[::2].reshape(10), n[::2].reshape(10))
    assert a[::2].reshape(10).strides == n[::2].reshape(10).strides
    assert a[::2].reshape((10,)).base is a


@pytest.mark.parametrize("make", ["1d", "1d_strided", "one_strided", "row", "column", "c2d", "f2d", "unit_axes",
                                  "empty"])
@pytest.mark.parametrize("shape", [(-1,), (-1, 1), (1, -1), (2, -1), (-1, 3), (3, -1, 1)], ids=repr)
def test_reshape_inferred_length(make, shape):
    n, a = _pair((6, 8))
    n, a = {"1d": (n[0], a[0]), "1d_strided": (n[0, ::2], a[0, ::2]), "one_strided": (n[:1, 0], a[:1, 0]),
            "row": (n[1:2, :6], a[1:2, :6]), "column": (n[:, 2:3], a[:, 2:3]), "c2d": (n[:3, :], a[:3, :]),
            "f2d": (n.T[:, :6], a.T[:, :6]), "unit_axes": (n[1:2, None, 2:8], a[1:2, None, 2:8]),
            "empty": (n[:0], a[:0])}[make]
    try:
        want = n.reshape(shape)
    except ValueError:
        _same_error(lambda: n.reshape(shape), lambda: a.reshape(shape), message=False)
        return
    got = a.reshape(shape)
    check(got, want)
    assert loom.shares_memory(got, a) == numpy.shares_memory(want, n)
    if numpy.shares_memory(want, n):
        assert got.strides == want.strides, (got.strides, want.strides)
    check(loom.reshape(a, shape), want)


@pytest.mark.parametrize("shape", [(True, 2), (2, False), (2.0, 3), (numpy.float64(6),), (numpy.bool_(True), 6),
                                   "6", (2, None)], ids=repr)
def test_reshape_bad_lengths(shape):
    n, a = _pair(6)
    _same_error(lambda: n.reshape(shape), lambda: a.reshape(shape), message=False)
    _same_error(lambda: n.reshape(shape), lambda: loom.reshape(a, shape), message=False)


@pytest.mark.parametrize("shape", [(4, 4), (7,), (-1, -1), (5, -1)], ids=repr)
def test_reshape_bad_sizes(shape):
    n, a = _pair(6)
    _same_error(lambda: n.reshape(shape), lambda: a.reshape(shape), message=False)
    _same_error(lambda: n.reshape(*shape), lambda: a.reshape(*shape), message=False)


@pytest.mark.parametrize("order", ["K", "k", "X", "CF", "", None, 1])
def test_reshape_bad_orders(order):
    n, a = _pair(6)
    if isinstance(order, str):
        _same_error(lambda: n.reshape(2, 3, order=order), lambda: a.reshape(2, 3, order=order), message=False)
    # loom's messages (None is 'K' there; a ValueError for any order that is not one of the letters)
    with pytest.raises(ValueError, match="order 'K' is not permitted for reshaping" if order in ("K", "k", None) else
                       r"order must be one of 'C', 'F', 'A', or 'K' \(got "):
        a.reshape(2, 3, order=order)
    with pytest.raises(ValueError):
        a.reshape((3, 2), order=order)


def test_reshape_copy_argument():
    n, a = _pair((4, 6))
    r = a.reshape(6, 4, copy=True)
    check(r, n.reshape(6, 4))
    assert r.base is None
    v = a.reshape((6, 4), copy=False)
    _is_view_of(v, a)
    with pytest.raises(ValueError):
        a.T.reshape(24, copy=False)


def test_reshape_pending_empty_and_0d():
    n, a = _pair((3, 4))
    p = a * 2  # pending
    check(p.reshape(4, 3), (n * 2).reshape(4, 3))
    e = loom.zeros((0, 3))
    check(e.reshape(3, 0), numpy.zeros((0, 3)).reshape(3, 0))
    check(e.reshape(-1), numpy.zeros((0, 3)).reshape(-1))
    z = loom.asarray(numpy.float32(2.5))
    check(z.reshape(1, 1), numpy.float32(2.5).reshape(1, 1))
    check(z.reshape(()), numpy.array(numpy.float32(2.5)).reshape(()))
    check(loom.ones((1, 1)).reshape(()), numpy.ones((1, 1)).reshape(()))


def test_reshape_in_fuse():
    n, a = _pair(12)

    @loom.fuse
    def f(x):
        return x.reshape(3, 4) * 2 + x.reshape((4, 3)).T

    check(f(a), n.reshape(3, 4) * 2 + n.reshape((4, 3)).T)


# ---- T, transpose, ravel -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (1, 4, 1)])
def test_T_and_transpose(shape):
    n, a = _pair(shape)
    _geometry(a.T, n.T)
    _geometry(a.transpose(), n.transpose())
    if a.ndim:
        _is_view_of(a.T, a)
        _is_view_of(a.T.T, a)
    p = a + 1  # pending: its view evaluates it first
    check(p.T, (n + 1).T)


def test_transpose_axes_forms():
    n, a = _pair((2, 3, 4))
    for axes in [(1, 0, 2), [2, 1, 0], (numpy.int64(2), 0, 1), (-1, 0, 1)]:
        _geometry(a.transpose(axes), n.transpose(axes))
    _geometry(a.transpose(2, 0, 1), n.transpose(2, 0, 1))
    _geometry(a.transpose(None), n.transpose(None))
    for bad in [(0, 1), (0, 0, 1), (0, 1, 3)]:
        _same_error(lambda: n.transpose(bad), lambda: a.transpose(bad), message=False)


def test_T_in_fuse_and_time_arrays():
    n, a = _pair((3, 4))

    @loom.fuse
    def f(x):
        return x.T * 2

    check(f(a), n.T * 2)
    t = numpy.arange(6).astype("datetime64[s]").reshape(2, 3)
    lt = loom.asarray(t)
    assert lt.T.dtype == t.T.dtype and lt.T.shape == t.T.shape
    numpy.testing.assert_array_equal(lt.T.get(), t.T)


@pytest.mark.parametrize("make", ["c2d", "1d", "1d_strided", "1d_reversed", "one_strided", "one_2d", "0d", "empty",
                                  "transposed", "pending", "sliced_rows"])
@pytest.mark.parametrize("order", ["C", "F", "A", "K", "c"])
def test_ravel(make, order):
    n, a = _pair((4, 6))
    if make == "1d":
        n, a = n[0], a[0]
    elif make == "1d_strided":
        n, a = n[0, ::2], a[0, ::2]
    elif make == "1d_reversed":
        n, a = n[0, ::-1], a[0, ::-1]
    elif make == "one_strided":
        n, a = n[:1, 0], a[:1, 0]
    elif make == "one_2d":
        n, a = n[1:2, 2:3], a[1:2, 2:3]
    elif make == "0d":
        n, a = n[1, 2][()], a[1, 2]
        n = numpy.asarray(n)
    elif make == "empty":
        n, a = n[:0], a[:0]
    elif make == "transposed":
        n, a = n.T, a.T
    elif make == "sliced_rows":
        n, a = n[1:3], a[1:3]
    r = a.ravel(order)
    want = n.ravel(order)
    check(r, want) if make != "pending" else check((a * 1).ravel(order), (n * 1).ravel(order))
    if make == "pending":
        return
    view = numpy.shares_memory(want, n) and want.size > 0
    assert loom.shares_memory(r, a) == view
    if view:
        assert r.strides == want.strides
    f = a.flatten(order)
    check(f, n.flatten(order))
    assert f.base is None


def test_ravel_bad_order_and_fuse():
    n, a = _pair((2, 3))
    _same_error(lambda: n.ravel("X"), lambda: a.ravel("X"), message=False)

    @loom.fuse
    def f(x):
        return x.ravel() + 1

    check(f(a), n.ravel() + 1)


# ---- copy, astype ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", ["C", "F", "A", "K", "c", "k"])
@pytest.mark.parametrize("layout", ["c", "f", "strided", "1d", "pending"])
def test_copy_orders(order, layout):
    n, a = _pair((4, 6))
    if layout == "f":
        n, a = n.T, a.T
    elif layout == "strided":
        n, a = n[::2, ::-3], a[::2, ::-3]
    elif layout == "1d":
        n, a = n[1], a[1]
    elif layout == "pending":
        n, a = n * 2, a * 2
    r = a.copy(order)
    want = n.copy(order)
    check(r, want)
    assert r.flags.c_contiguous == want.flags.c_contiguous
    assert r.flags.f_contiguous == want.flags.f_contiguous
    assert r.base is None
    check(loom.copy(a, order), numpy.copy(n, order))
    r[(0,) * r.ndim] = -5.0
    assert a[(0,) * a.ndim].item() != -5.0  # a copy: the write stays there


@pytest.mark.parametrize("order", ["X", "CF", "", 3])
@pytest.mark.parametrize("layout", ["c", "1d", "pending"])
def test_copy_bad_order(order, layout):
    n, a = _pair((2, 3))
    if layout == "1d":
        n, a = n[0], a[0]
    elif layout == "pending":
        n, a = n + 1, a + 1
    if isinstance(order, str):
        _same_error(lambda: n.copy(order), lambda: a.copy(order), message=False)
        _same_error(lambda: n.astype(numpy.float32, order=order), lambda: a.astype(numpy.float32, order=order),
                    message=False)
    with pytest.raises(ValueError, match="order must be one of"):  # loom's error for any other order
        a.copy(order)
    with pytest.raises(ValueError, match="order must be one of"):
        a.astype(numpy.float32, order=order)


_DTYPE_ARGS = ["float32", numpy.float32, numpy.dtype("float32"), "f4", float, int, bool, complex, "int8",
               numpy.dtype(">f8"), ">i4", numpy.dtype("<f8"), "uint16", numpy.uint64, "complex64", "?", "e"]


@pytest.mark.parametrize("dtype", _DTYPE_ARGS, ids=repr)
@pytest.mark.parametrize("layout", ["c", "f", "pending"])
def test_astype_dtype_forms(dtype, layout):
    n, a = _pair((3, 4))
    n, a = abs(n), abs(a)  # (negative floats to unsigned integers are undefined: NumPy's and loom's differ)
    if layout == "f":
        n, a = n.T, a.T
    elif layout == "pending":
        n, a = n + 1, a + 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = n.astype(dtype)
        for _ in range(2):  # the second call takes the dtype code seen before
            r = a.astype(dtype)
            assert r.dtype == want.dtype.newbyteorder("=")
            numpy.testing.assert_array_equal(r.get(), want)
            assert r.flags.f_contiguous == want.flags.f_contiguous
            assert r.flags.c_contiguous == want.flags.c_contiguous


def test_astype_copy_false_and_warning():
    n, a = _pair((3, 4))
    assert a.astype(numpy.float64, copy=False) is a
    assert a.astype("float64", copy=False) is a
    assert a.astype(numpy.float32, copy=False) is not a
    assert a.T.astype(numpy.float64, order="C", copy=False) is not a.T
    c = loom.asarray(n + 1j)
    with pytest.warns(numpy.exceptions.ComplexWarning):
        check(c.astype(numpy.float64), n.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(c.astype(bool), (n + 1j).astype(bool))
        check(c.astype(numpy.complex64), (n + 1j).astype(numpy.complex64))


@pytest.mark.parametrize("dtype", ["U3", object, "S2", [("a", "f4")], "nonsense", 3.5], ids=repr)
def test_astype_bad_dtypes(dtype):
    n, a = _pair(4)
    for _ in range(2):  # nothing cached for them
        with pytest.raises(TypeError):
            a.astype(dtype)
        with pytest.raises(TypeError):
            loom.zeros(3, dtype)


def test_dtype_code_cache_keeps_byte_orders():
    from loom._common import _code, _CODE
    assert _code(numpy.dtype(">f8")) == _CODE[numpy.dtype("float64")]
    assert _code(numpy.dtype("<f8")) == _CODE[numpy.dtype("float64")]
    assert _code(">i2") == _code("i2") == _CODE[numpy.dtype("int16")]
    assert _code(numpy.float32) == _code("float32") == _code(numpy.dtype("f4"))
    assert _code(float) == _CODE[numpy.dtype(float)] and _code(int) == _CODE[numpy.dtype(int)]
    assert _code(bool) == _CODE[numpy.dtype(bool)]

    class WithDtype:  # an object NumPy reads a dtype from: not cached (its attribute could change)
        dtype: numpy.dtype = numpy.dtype("float32")

    w = WithDtype()
    assert _code(w) == _CODE[numpy.dtype("float32")]
    w.dtype = numpy.dtype("int8")
    assert _code(w) == _CODE[numpy.dtype("int8")]


# ---- creation ---------------------------------------------------------------------------------------------
_NEW_SHAPES = [100, (10, 10), (), (0,), (3, 0, 2), [2, 3], (numpy.int64(2), 3), numpy.int32(4), numpy.array(3),
               range(3)]


@pytest.mark.parametrize("shape", _NEW_SHAPES, ids=repr)
@pytest.mark.parametrize("fn", ["zeros", "ones", "empty", "full"])
def test_creation_shapes(shape, fn):
    args = (shape, 7.5) if fn == "full" else (shape,)
    want = getattr(numpy, fn)(*args)
    got = getattr(loom, fn)(*args)
    assert got.shape == want.shape and got.dtype == want.dtype and got.strides == want.strides
    if fn != "empty":
        check(got, want)
    assert got.base is None


@pytest.mark.parametrize("shape", [True, (2, True), 2.0, (2, 3.0), None, (2, None), "3", (-1,), -2, (2, -3)],
                         ids=repr)
@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
def test_creation_bad_shapes(shape, fn):
    _same_error(lambda: getattr(numpy, fn)(shape), lambda: getattr(loom, fn)(shape), message=False)


@pytest.mark.parametrize("dtype", [None, "float32", numpy.int8, bool, complex, numpy.dtype("uint16")], ids=repr)
@pytest.mark.parametrize("order", ["C", "F"])
def test_creation_dtypes_orders(dtype, order):
    for fn in ("zeros", "ones", "empty"):
        want = getattr(numpy, fn)((3, 4), dtype, order)
        got = getattr(loom, fn)((3, 4), dtype=dtype, order=order)
        assert got.dtype == want.dtype and got.strides == want.strides
        got = getattr(loom, fn)((3, 4), dtype, order)
        assert got.dtype == want.dtype and got.strides == want.strides
    want = numpy.full((2, 3), 3, dtype, order)
    check(loom.full((2, 3), 3, dtype, order), want)
    assert loom.full((2, 3), 3, dtype, order).strides == want.strides


def test_creation_device_keyword_and_full_checks():
    check(loom.zeros(3, device=None), numpy.zeros(3))
    check(loom.ones((2, 2), dtype=None), numpy.ones((2, 2)))
    check(loom.zeros(3, dtype=None), numpy.zeros(3))
    check(loom.arange(4, device=None), numpy.arange(4))
    _same_error(lambda: numpy.full(3, 300, numpy.int8), lambda: loom.full(3, 300, numpy.int8))
    _same_error(lambda: numpy.full(3, -1, numpy.uint8), lambda: loom.full(3, -1, numpy.uint8))
    _same_error(lambda: numpy.full(3, 2**64, numpy.int64), lambda: loom.full(3, 2**64, numpy.int64), message=False)
    check(loom.full(2, 2**70, numpy.float64), numpy.full(2, 2**70, numpy.float64))
    check(loom.full(3, True), numpy.full(3, True))
    check(loom.full(3, 2.5), numpy.full(3, 2.5))


_ARANGES = [(100,), (1,), (0,), (-3,), (5.0,), (numpy.int64(7),), (True,), (2, 9), (9, 2, -2), (0, 10, 3),
            (2**40,), (3, None, 1), (5, None, 2)]


@pytest.mark.parametrize("args", _ARANGES, ids=repr)
def test_arange(args):
    if args == (2**40,):  # too large to compute (an index expression: nothing is made until it is read)
        r = loom.arange(*args)
        assert r.shape == (2**40,) and r.dtype == numpy.dtype(int) and r._lazy
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = numpy.arange(*args)
        check(loom.arange(*args), want)
    check(loom.arange(args[0], dtype=numpy.float32), numpy.arange(args[0], dtype=numpy.float32))


def test_arange_step_forms_and_errors():
    check(loom.arange(5, step=1.0), numpy.arange(5, step=1.0))
    check(loom.arange(5, step=numpy.int64(1)), numpy.arange(5, step=numpy.int64(1)))
    check(loom.arange(numpy.int32(5)), numpy.arange(numpy.int32(5)))
    _same_error(lambda: numpy.arange(5, step=0), lambda: loom.arange(5, step=0), message=False)
    _same_error(lambda: numpy.arange("5"), lambda: loom.arange("5"), message=False)

    @loom.fuse
    def f(x):
        return x + loom.arange(4)

    check(f(loom.ones(4)), numpy.ones(4) + numpy.arange(4))


_LISTS = [[1.0, 2.0, 3.0], [1, 2, 3], [True, False], [1, 2.5], [1 + 2j, 3], [[1, 2], [3, 4]], [], [[]],
          [numpy.float32(1), numpy.float32(2)], [numpy.int8(1)], [2**63 - 1], [2**63], [-2**63]]


@pytest.mark.parametrize("data", _LISTS, ids=repr)
def test_asarray_lists(data):
    want = numpy.asarray(data)
    got = loom.asarray(data)
    check(got, want)
    assert got.base is None
    check(loom.array(data), want)


@pytest.mark.parametrize("data", [[1, [2, 3]], ["a", "b"], [2**70], [None, 1.0], [object()],
                                  [numpy.datetime64("2020-01-01")]], ids=repr)
def test_asarray_lists_unusual(data):
    try:
        want = numpy.asarray(data)
    except Exception as e:  # noqa: BLE001 (ragged lists: NumPy's ValueError)
        with pytest.raises(type(e)):
            loom.asarray(data)
        return
    if want.dtype.kind in "Mm":
        numpy.testing.assert_array_equal(loom.asarray(data).get(), want)
        return
    with pytest.raises((TypeError, ValueError)):
        loom.asarray(data)


def test_asarray_lists_of_loom_arrays_and_keywords():
    a = loom.asarray([1.0, 2.0])
    check(loom.asarray([a, a]), numpy.array([[1.0, 2.0], [1.0, 2.0]]))
    check(loom.asarray([a[0], a[1]]), numpy.array([1.0, 2.0]))
    check(loom.asarray([1, 2], dtype=numpy.float32), numpy.asarray([1, 2], dtype=numpy.float32))
    check(loom.asarray([[1, 2], [3, 4]], order="F"), numpy.asarray([[1, 2], [3, 4]], order="F"))
    assert loom.asarray([[1, 2], [3, 4]], order="F").flags.f_contiguous
    check(loom.asarray((1, 2)), numpy.asarray((1, 2)))
    with pytest.raises(ValueError):
        loom.asarray([1, 2], copy=False)


# ---- indexing ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", [3, -1, slice(1, 50), slice(None, None, -3), Ellipsis, (), (5,), numpy.int64(4),
                                 None, (None, 2), slice(0, 0)], ids=repr)
@pytest.mark.parametrize("value", [1.0, 7, -2, 2**63 - 1, 2**64 - 1, 2**70, -2**63, -2**64, 0.5])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "float16"])
def test_setitem_numbers_into_floats(key, value, dtype):
    n, a = _pair(100, dtype)
    n[key] = value
    a[key] = value
    check(a, n)


@pytest.mark.parametrize("key", [3, (1, 2), (slice(None), 1), -1, Ellipsis, (Ellipsis, 0)], ids=repr)
def test_setitem_views_and_pending(key):
    n, a = _pair((4, 5))
    nv, av = n[:, 1:], a[:, 1:]
    nv[key] = 2.5
    av[key] = 2.5
    check(a, n)  # written through the view into the base
    p = a * 2  # pending: evaluated, then written
    np_ = n * 2
    p[key] = -1.0
    np_[key] = -1.0
    check(p, np_)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "uint64", "bool"])
@pytest.mark.parametrize("value", [1.0, 7, 300, -1, 2**64, 2**63, numpy.nan, numpy.inf, 2.7, True, 1 + 1j])
def test_setitem_numbers_into_others(dtype, value):
    n, a = _pair(10, dtype)
    if isinstance(value, complex):  # loom refuses complex into every real dtype (NumPy takes bool's truth)
        with pytest.raises(TypeError, match="not 'complex'"):
            a[3] = value
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            n[3] = value
    except Exception as e:  # noqa: BLE001 (NumPy's error, which loom raises too)
        with pytest.raises(type(e)):
            a[3] = value
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a[3] = value
    check(a, n)


@pytest.mark.parametrize("key", [Ellipsis, (), 2, slice(1, 3)], ids=repr)
def test_setitem_orders_pending_readers(key):
    """A store waits for the pending values that read the array before it (through a view too)."""
    n = numpy.arange(6, dtype=numpy.float32)
    x = loom.asarray(n)
    loom.eval(x)
    y, v = x * 2 + x, x[1:4] * 2
    x[key] = 5.0
    check(y, n * 2 + n)
    check(v, n[1:4] * 2)
    m = n.copy()
    m[key] = 5.0
    check(x, m)
    check(x * 3, m * 3)


@pytest.mark.parametrize("make", ["numpy_scalar", "python_float", "0d_array", "pending", "reduction"])
def test_setitem_0d(make):
    a = {"numpy_scalar": lambda: loom.asarray(numpy.float64(3.0)), "python_float": lambda: loom.asarray(3.0),
         "0d_array": lambda: loom.asarray(numpy.array(3.0)), "pending": lambda: loom.ones(()) * 3,
         "reduction": lambda: loom.asarray([1.0, 2.0]).sum()}[make]
    x, y = a(), a()
    x[...] = 5.0
    y[()] = 6
    check(x, numpy.array(5.0))
    check(y, numpy.array(6.0))
    z = a()
    _same_error(lambda: numpy.array(3.0).__setitem__(0, 1.0), lambda: z.__setitem__(0, 1.0))


def test_setitem_errors():
    n, a = _pair(10, "float32")
    _same_error(lambda: n.__setitem__(10, 1.0), lambda: a.__setitem__(10, 1.0))
    _same_error(lambda: n.__setitem__((1, 2), 1.0), lambda: a.__setitem__((1, 2), 1.0), message=False)
    _same_error(lambda: n.__setitem__(1.5, 1.0), lambda: a.__setitem__(1.5, 1.0), message=False)
    _same_error(lambda: n.__setitem__(3, 1 + 2j), lambda: a.__setitem__(3, 1 + 2j), message=False)
    with pytest.raises(TypeError, match="unsupported operand type str"):  # loom's (NumPy: ValueError)
        a[3] = "x"
    m = n.copy()
    m[True] = 4.0  # a bool key: an advanced index
    a[True] = 4.0
    check(a, m)
    m[[1, 2]] = 9.0
    a[[1, 2]] = 9.0
    check(a, m)


def test_setitem_in_fuse():
    n, a = _pair(5)

    @loom.fuse
    def f(x):
        y = x * 2
        y[...] = 1.0
        return y

    check(f(a), numpy.ones(5))

    @loom.fuse
    def g(x):
        y = x * 2
        y[0] = 1.0
        return y

    with pytest.raises(TypeError):
        g(a)


@pytest.mark.parametrize("idx", [numpy.arange(5), numpy.array([-1, 0, 99]), numpy.array([3], numpy.uint8),
                                 numpy.array([[1, 2], [3, 4]]), numpy.array([], numpy.int64)], ids=repr)
def test_int_array_index(idx):
    n, a = _pair(100, numpy.float32)
    i = loom.asarray(idx)
    check(a[i], n[idx])
    r = a[i]
    assert r.base is None
    if r.size:
        r[0] = 1234.0
        assert 1234.0 not in a.get()  # a copy
    _same_error(lambda: n[numpy.array([100])], lambda: a[loom.asarray(numpy.array([100]))])
    _same_error(lambda: n[numpy.array([1.0])], lambda: a[loom.asarray(numpy.array([1.0]))], message=False)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "int64", "uint8", "uint64", "float16", "float32",
                                   "float64", "complex64", "complex128"])
@pytest.mark.parametrize("value", [0, 1, 3.75, -2.5, numpy.nan, numpy.inf])
def test_scalar_conversions(dtype, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n = numpy.array(value).astype(dtype)
    a = loom.asarray(n)
    for conv in (float, int, bool, complex, lambda x: x.item()):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = conv(n)
        except Exception as e:  # noqa: BLE001 (NumPy's error: int(NaN), int(inf))
            with pytest.raises(type(e)) as raised:
                conv(a)
            assert str(raised.value) == str(e)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = conv(a)
        assert type(got) is type(want), (conv, type(got), type(want))
        assert got == want or (got != got and want != want)


def test_scalar_conversions_of_elements_pending_and_non_0d():
    n, a = _pair(10, numpy.float32)
    assert float(a[3]) == float(n[3]) and type(float(a[3])) is float
    assert int(a[3]) == int(n[3])
    assert a[3].item() == n[3].item() and type(a[3].item()) is float
    assert float(a.sum()) == pytest.approx(float(n.sum()), rel=1e-5)
    assert int(a.argmax()) == int(n.argmax()) and int(a.argmin()) == int(n.argmin())
    assert bool((a > 100).any()) is False and bool((a > -100).all()) is True
    one = loom.asarray(numpy.array([2.5]))
    assert one.item() == 2.5
    assert loom.asarray(numpy.arange(6).reshape(2, 3)).item(4) == 4
    _same_error(lambda: float(n), lambda: float(a))
    _same_error(lambda: bool(n), lambda: bool(a))
    _same_error(lambda: n.item(), lambda: a.item())


# ---- elementwise, reductions, joins ---------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["1d", "c", "f", "pending", "strided"])
def test_ufunc_calls(layout):
    n, a = _pair((4, 6), numpy.float32)
    if layout == "1d":
        n, a = n[0], a[0]
    elif layout == "f":
        n, a = n.T, a.T
    elif layout == "pending":
        n, a = n * 0.5, a * 0.5
    elif layout == "strided":
        n, a = n[::2, ::3], a[::2, ::3]
    for f in ("exp", "sqrt", "negative", "isnan", "floor"):
        with numpy.errstate(all="ignore"):
            want = getattr(numpy, f)(n)
        got = getattr(loom, f)(a)
        check(got, want)
        assert got.flags.c_contiguous == want.flags.c_contiguous
        assert got.flags.f_contiguous == want.flags.f_contiguous
    for f in ("add", "multiply", "less", "arctan2", "maximum"):
        want = getattr(numpy, f)(n, n)
        got = getattr(loom, f)(a, a)
        check(got, want)
        assert got.flags.f_contiguous == want.flags.f_contiguous
    check(loom.exp(a) + 1, numpy.exp(n) + 1)


def test_ufunc_arguments():
    n, a = _pair(6, numpy.float32)
    i = numpy.arange(6)
    check(loom.exp(loom.asarray(i)), numpy.exp(i))
    check(loom.exp([1.0, 2.0]), numpy.exp([1.0, 2.0]))
    check(loom.exp(2.0), numpy.exp(2.0))
    check(loom.exp(a, dtype=numpy.float64), numpy.exp(n, dtype=numpy.float64))
    out = loom.zeros(6, numpy.float32)
    assert loom.exp(a, out=out) is out
    check(out, numpy.exp(n))
    check(loom.exp(a, casting="unsafe"), numpy.exp(n, casting="unsafe"))
    with pytest.raises(TypeError):
        loom.exp(a, out=loom.zeros(6, numpy.int32))
    with pytest.raises(TypeError):
        loom.exp(a, bogus=1)
    check(loom.add(a, 2), numpy.add(n, 2))
    check(loom.add(a, 2**70), numpy.add(n, 2**70))
    check(loom.add(loom.asarray(i), 2.5), numpy.add(i, 2.5))
    check(loom.add(a, a, dtype=numpy.float64), numpy.add(n, n, dtype=numpy.float64))
    with pytest.raises(TypeError):
        loom.add(a, a, out=loom.zeros(6, numpy.int8))
    _same_error(lambda: numpy.add(n, n[:3]), lambda: loom.add(a, a[:3]), message=False)


@pytest.mark.parametrize("method", ["sum", "prod", "min", "max", "any", "all", "argmin", "argmax", "mean"])
def test_reduction_methods(method):
    n, a = _pair((4, 5), numpy.float32)
    for kw in ({}, {"axis": 0}, {"axis": -1}, {"axis": 1, "keepdims": True}):
        check(getattr(a, method)(**kw), getattr(n, method)(**kw), rtol=1e-5)
    if method in ("sum", "prod", "mean"):
        check(getattr(a, method)(dtype=numpy.float64), getattr(n, method)(dtype=numpy.float64))
    if method not in ("argmin", "argmax"):
        check(getattr(a, method)(axis=(0, 1)), getattr(n, method)(axis=(0, 1)), rtol=1e-5)
    else:
        assert getattr(a, method)(dtype=numpy.int32).dtype == numpy.int32
        with pytest.raises(TypeError):
            getattr(a, method)(dtype=numpy.float32)
    _same_error(lambda: getattr(n, method)(axis=2), lambda: getattr(a, method)(axis=2), message=False)
    assert isinstance(getattr(loom, "amin" if method == "min" else "amax" if method == "max" else method)(n),
                      (numpy.generic, numpy.ndarray))  # loom's functions hand NumPy arrays to NumPy


def test_where_and_joins():
    n, a = _pair(10, numpy.float32)
    m, b = _pair(10, numpy.float32, seed=1)
    check(loom.where(a > 0, a, b), numpy.where(n > 0, n, m))
    check(loom.where(a > 0, a, 0), numpy.where(n > 0, n, 0))
    check(loom.where(a > 0, 1, 2**40), numpy.where(n > 0, 1, 2**40))
    check(loom.where(a > 0, a, b[:1]), numpy.where(n > 0, n, m[:1]))
    check(loom.where(a > 0)[0], numpy.where(n > 0)[0])
    check(loom.concatenate([a, b]), numpy.concatenate([n, m]))
    check(loom.stack([a, b]), numpy.stack([n, m]))
    check(loom.stack([a, b], axis=1), numpy.stack([n, m], axis=1))
    check(loom.sort(a), numpy.sort(n))
    check(a[a > 0.5], n[n > 0.5])
