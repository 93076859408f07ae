"""Views made in C (python/src/basic_index.c): basic indexing (ints, slices, None, Ellipsis), transpose and
the reshape of a C-contiguous array. Each is checked against NumPy's view of the same data: values, shape,
strides, that a write through the view reaches the base (and the base's write the view), .base, and that
what NumPy refuses raises NumPy's error (those keys fall back to the Python layer)."""
import itertools

import numpy
import pytest

import loom


def _pair(shape, dtype=numpy.float64, seed=0):
    rng = numpy.random.default_rng(seed)
    n = rng.standard_normal(shape).astype(dtype) if shape else numpy.array(rng.standard_normal(), dtype=dtype)
    return n, loom.asarray(n)


def _same_view(lv, nv):
    assert lv.shape == nv.shape
    assert lv.dtype == nv.dtype
    if nv.size > 1:
        assert lv.strides == nv.strides
    numpy.testing.assert_array_equal(loom.asnumpy(lv), nv)


_KEYS_2D = [0, -1, 3, (1, 2), (-1, -4), slice(None), slice(1, 4), slice(None, None, -1), slice(5, 1, -2),
            slice(-3, None), slice(100, 200), slice(-100, 2), (slice(None), 2), (Ellipsis, 1), (1, Ellipsis),
            (None, 2), (slice(1, 3), None, slice(None, None, 2)), (Ellipsis,), (), (None,), (None, Ellipsis, None),
            (2, slice(0, 0)), (slice(None, None, 3), -2), (Ellipsis, None), (0, 0, Ellipsis)]


@pytest.mark.parametrize("key", _KEYS_2D, ids=repr)
def test_basic_keys_match_numpy(key):
    n, a = _pair((6, 5))
    _same_view(a[key], n[key])


@pytest.mark.parametrize("base", ["contiguous", "transposed", "strided", "negative"])
def test_views_of_views(base):
    n, a = _pair((7, 6, 5), seed=1)
    make = {"contiguous": lambda x: x, "transposed": lambda x: x.transpose(2, 0, 1),
            "strided": lambda x: x[::2, 1:, ::-2], "negative": lambda x: x[::-1, ::-1]}[base]
    nb, lb = make(n), make(a)
    for key in [(1,), (slice(None), 0), (Ellipsis, slice(1, None, 2)), (None, -1, Ellipsis, None), (0, 0, 0)]:
        if len([k for k in key if k is not None and k is not Ellipsis]) > nb.ndim:
            continue
        _same_view(lb[key], nb[key])
    _same_view(lb.T, nb.T)
    _same_view(lb.transpose(1, 2, 0), nb.transpose(1, 2, 0))
    _same_view(lb.transpose((-1, 0, 1)), nb.transpose((-1, 0, 1)))


def test_writes_go_both_ways():
    n = numpy.arange(24.0).reshape(4, 6)
    a = loom.asarray(n)
    v = a[1:3, ::2]
    v[...] = -1.0
    n[1:3, ::2] = -1.0
    numpy.testing.assert_array_equal(loom.asnumpy(a), n)
    a[2, 0] = 99.0  # the base's write is seen by the view
    assert float(v[1, 0]) == 99.0
    r = a.reshape(2, 12)
    r[0, 7] = 7.5
    assert float(a[1, 1]) == 7.5
    t = a.T
    t[5, 3] = -2.5
    assert float(a[3, 5]) == -2.5


def test_base_is_the_owner():
    _, a = _pair((4, 4))
    assert a.base is None
    v = a[1:]
    assert v.base is a
    assert v[0].base is a  # a chain of views collapses to the owner, as NumPy's
    assert a.T.base is a
    assert a.reshape(16).base is a


def test_zero_d_and_empty():
    n, a = _pair(())
    _same_view(a[()], n[()])
    _same_view(a[...], n[...])
    _same_view(a[None], n[None])
    _same_view(a.T, n.T)
    e = numpy.zeros((0, 3))
    le = loom.asarray(e)
    _same_view(le[:, 1], e[:, 1])
    _same_view(le[0:0], e[0:0])
    _same_view(le.T, e.T)
    assert le.reshape(3, 0).shape == (3, 0)
    n2, a2 = _pair((3, 4))
    _same_view(a2[2:1], n2[2:1])
    _same_view(a2[:, 4:], n2[:, 4:])


@pytest.mark.parametrize("key", [5, -6, (0, 5), (0, 0, 0), (Ellipsis, Ellipsis), 2**70, -2**70, (1, -6)], ids=repr)
def test_numpy_errors(key):
    n, a = _pair((5, 5))
    with pytest.raises(IndexError) as ln:
        a[key]
    with pytest.raises(IndexError) as nn:
        n[key]
    assert type(ln.value) is type(nn.value)


def test_zero_step():
    n, a = _pair((5,))
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        a[::0]
    with pytest.raises(ValueError):
        n[::0]


def test_other_index_types_still_work():
    n, a = _pair((6, 4))
    _same_view(a[numpy.int64(2)], n[numpy.int64(2)])
    _same_view(a[numpy.int32(-1), 1:], n[numpy.int32(-1), 1:])
    numpy.testing.assert_array_equal(loom.asnumpy(a[True]), n[True])
    numpy.testing.assert_array_equal(loom.asnumpy(a[[0, 2]]), n[[0, 2]])
    numpy.testing.assert_array_equal(loom.asnumpy(a[numpy.array([1, 3])]), n[numpy.array([1, 3])])
    with pytest.raises(IndexError):
        a[1.5]
    with pytest.raises(IndexError):
        a["x"]


def test_pending_array_is_evaluated_once_then_viewed():
    n, a = _pair((8, 8))
    z = a * 2.0 + 1.0
    nz = n * 2.0 + 1.0
    _same_view(z[3], nz[3])
    _same_view(z[::2, None, 1:], nz[::2, None, 1:])
    _same_view(z.T, nz.T)
    _same_view(z.reshape(4, 16), nz.reshape(4, 16))


@pytest.mark.parametrize("dtype", [numpy.bool_, numpy.int8, numpy.uint16, numpy.int32, numpy.float16, numpy.float32,
                                   numpy.complex64, numpy.complex128])
def test_dtypes(dtype):
    n = (numpy.arange(60) % 7 - 3).astype(dtype).reshape(3, 4, 5)
    a = loom.asarray(n)
    for key in [(1,), (slice(None), -1), (Ellipsis, slice(None, None, -2)), (None, 2, 3, 4)]:
        _same_view(a[key], n[key])
    _same_view(a.transpose(2, 0, 1), n.transpose(2, 0, 1))
    _same_view(a.reshape(5, 12), n.reshape(5, 12))
    _same_view(a.reshape(60), n.reshape(60))


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_every_permutation(perm):
    n, a = _pair((2, 3, 4), seed=3)
    _same_view(a.transpose(perm), n.transpose(perm))


def test_bad_axes_raise_numpys_errors():
    n, a = _pair((2, 3))
    for axes in [(0, 0), (0, 2), (0,), (0, 1, 2)]:
        with pytest.raises((ValueError, numpy.exceptions.AxisError)):
            n.transpose(axes)
        with pytest.raises((ValueError, numpy.exceptions.AxisError)):
            a.transpose(axes)


def test_reshape_of_other_layouts_matches_numpy():
    n, a = _pair((4, 6), seed=4)
    for shape in [(24,), (2, 12), (3, 2, 4), (-1, 3), (1, 24, 1), (24, 1)]:
        _same_view(a.reshape(shape), n.reshape(shape))
        # not C-contiguous: NumPy copies or views by its own rules
        numpy.testing.assert_array_equal(loom.asnumpy(a.T.reshape(shape)), n.T.reshape(shape))
    for shape in [(12,), (3, 4), (2, -1), (4, 3, 1)]:
        numpy.testing.assert_array_equal(loom.asnumpy(a[:, ::2].reshape(shape)), n[:, ::2].reshape(shape))
        _same_view(a[1:3].reshape(shape), n[1:3].reshape(shape))  # contiguous rows: a view
    with pytest.raises(ValueError):
        a.reshape(5, 5)
    ones = numpy.ones((3, 1, 4))[:, ::5]  # a unit axis with any stride is still C-contiguous
    lo = loom.asarray(numpy.ones((3, 1, 4)))[:, ::5]
    _same_view(lo.reshape(12), ones.reshape(12))


def test_reshape_strides_are_numpys():
    """Every reshape among small shapes with unit axes, of C-ordered, transposed, new-axis and reversed
    bases: NumPy's strides (a same-shape reshape keeps the base's, unit axes included) and a view exactly
    where NumPy makes one."""
    shapes = [(6,), (2, 3), (1, 6), (6, 1), (2, 1, 3), (1, 1, 6), (3, 2, 1), (1, 2, 3, 1), (1, 6, 1)]
    for s in shapes:
        n = numpy.arange(6.0).reshape(s)
        a = loom.asarray(n)
        for nb, lb in [(n, a), (n.T, a.T), (n[None], a[None]), (n[..., None], a[..., None]), (n[::-1], a[::-1])]:
            for t in shapes:
                w, g = nb.reshape(t), lb.reshape(t)
                assert g.strides == w.strides, (s, nb.strides, t)
                assert (g.base is not None) == numpy.shares_memory(w, nb), (s, nb.strides, t)
                numpy.testing.assert_array_equal(loom.asnumpy(g), w)
