"""The short paths of everyday small calls (bench/sweep/small_calls.py): integer-array indexing of host
arrays through NumPy (_indexing._host_gather) and of other arrays by one gather (_indexing._take_first),
NumPy results adopted zero-copy (_creation._adopt: asarray of lists, sort, arange's NumPy path), stack's
and concatenate's one-pass checks, outer's reshape nodes, trace's diagonal view made directly. Each is
compared with NumPy: values, dtype, shape, errors and their messages, and the edge cases (0-d, empty,
negative and out-of-bounds indices, bool masks, non-contiguous and pending arrays); results are new
memory (a write to one does not reach its source)."""
import numpy
import pytest

import loom
from conftest import check


def _pair(shape, dtype=numpy.float64, seed=0):
    rng = numpy.random.default_rng(seed)
    n = (rng.standard_normal(shape) * 10).astype(dtype)
    return n, loom.asarray(n)


def _raises_like(fn_np, fn_loom, exc=Exception):
    """fn_loom raises what fn_np raises: the same type and message."""
    with pytest.raises(exc) as e_np:
        fn_np()
    with pytest.raises(type(e_np.value)) as e_loom:
        fn_loom()
    assert str(e_loom.value) == str(e_np.value)


# ---- a[index array] ------------------------------------------------------------------------------------
_INT_KEYS_1D = [numpy.array([0, 3, 5]), numpy.array([-1, -10, 2]), numpy.array([[1, 2], [3, 4]]),
                numpy.array([], numpy.int64), numpy.array(4), numpy.array([1, 1, 1], numpy.uint8),
                numpy.array([2, 0], numpy.int32), [0, 2, -1], [[1], [2]]]


@pytest.mark.parametrize("key", _INT_KEYS_1D, ids=repr)
@pytest.mark.parametrize("as_loom", [False, True])
def test_int_array_index_1d(key, as_loom):
    n, a = _pair(10, numpy.float32)
    k = loom.asarray(key) if as_loom and not isinstance(key, list) else key
    check(a[k], n[key])


_INT_KEYS_2D = [(numpy.array([0, 2]),), (slice(None), numpy.array([1, 0, 1])), (numpy.array([1, 2]), numpy.array([0, 3])),
                (numpy.array([[0], [1]]), numpy.array([1, 2, 3])), (Ellipsis, numpy.array([-1])),
                (None, numpy.array([0, 1]), slice(1, 3)), (numpy.array([0, 1]), None, 2), (2, numpy.array([3, 0])),
                (numpy.array([0, 1]), slice(None), ), (slice(None, None, -1), numpy.array([0, 0]))]


@pytest.mark.parametrize("key", _INT_KEYS_2D, ids=repr)
@pytest.mark.parametrize("layout", ["c", "transposed", "strided"])
def test_int_array_index_2d(key, layout):
    n, a = _pair((6, 5))
    if layout == "transposed":
        n, a = n.T[:5, :5], a.T[:5, :5]
    elif layout == "strided":
        n, a = n[::2, ::-1], a[::2, ::-1]
    lk = tuple(loom.asarray(e) if isinstance(e, numpy.ndarray) else e for e in key)
    check(a[key], n[key])
    check(a[lk], n[key])


@pytest.mark.parametrize("key", [numpy.array([10]), numpy.array([0, -11, 3]), numpy.array([3, 20, -30]), [5, 10]],
                         ids=repr)
@pytest.mark.parametrize("as_loom", [False, True])
def test_int_array_index_out_of_bounds(key, as_loom):
    n, a = _pair(10)
    k = loom.asarray(key) if as_loom and not isinstance(key, list) else key
    _raises_like(lambda: n[key], lambda: a[k], IndexError)


def test_int_array_index_errors():
    n, a = _pair((4, 5))
    _raises_like(lambda: n[numpy.array([0, 1]), numpy.array([0, 1, 2])],
                 lambda: a[loom.asarray([0, 1]), loom.asarray([0, 1, 2])], IndexError)
    _raises_like(lambda: n[numpy.array([0]), 0, 0], lambda: a[loom.asarray([0]), 0, 0], IndexError)
    with pytest.raises(IndexError):
        a[loom.asarray([0.5, 1.0])]
    z = numpy.array(3.0)
    _raises_like(lambda: z[numpy.array([0])], lambda: loom.asarray(z)[loom.asarray([0])], IndexError)  # 0-d


@pytest.mark.parametrize("mask", [numpy.array([True, False, True, True, False]), numpy.zeros(5, bool), [True] * 5])
def test_bool_masks_keep_their_path(mask):
    n, a = _pair(5)
    check(a[mask], n[mask])
    check(a[loom.asarray(mask)], n[numpy.asarray(mask)])


def test_int_index_of_pending_and_gpu_paths():
    n, a = _pair((7, 3))
    pending = a * 2  # a pending array: the gather path (_take_first), no NumPy read
    assert pending._lazy
    check(pending[loom.asarray([6, -7, 0])], (n * 2)[[6, -7, 0]])
    idx = loom.asarray([1, 2]) + 1  # a pending index array
    check(a[idx], n[[2, 3]])
    check(pending[idx], (n * 2)[[2, 3]])
    check(pending[loom.asarray(numpy.array([[0, 1], [2, 3]], numpy.uint16))], (n * 2)[numpy.array([[0, 1], [2, 3]])])
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 7"):
        pending[loom.asarray([7])]
    with pytest.raises(IndexError, match="index -8 is out of bounds for axis 0 with size 7"):
        a[loom.asarray([-8]) + 0]
    check(pending[loom.asarray(numpy.zeros(0, numpy.int64))], (n * 2)[numpy.zeros(0, numpy.int64)])


def test_which_path_takes_the_key():
    from loom import _indexing
    n, a = _pair(5)
    i = loom.asarray([1, 2])
    host = not a._on_gpu  # a GPU array keeps the gather graph
    assert (_indexing._host_gather(a, i) is not None) == host
    assert (_indexing._host_gather(a, (i, )) is not None) == host
    assert _indexing._host_gather(a * 1, i) is None  # pending: the gather graph
    assert _indexing._host_gather(a, i + 0) is None
    assert _indexing._host_gather(a, loom.asarray([True, False, True, False, True])) is None
    assert _indexing._host_gather(a, [True, False, True, False, True]) is None
    assert _indexing._host_gather(a, ([0], 1.5)) is None


def test_int_index_result_is_new_memory():
    n, a = _pair(6)
    r = a[loom.asarray([0, 1])]
    r[0] = 100.0
    assert float(a[0]) == n[0]
    assert r.base is None and r.flags.owndata
    r += 1
    check(r, numpy.array([101.0, n[1] + 1]))


def test_int_index_bfloat16_and_bool_data():
    b = loom.asarray(numpy.array([True, False, True]))
    check(b[loom.asarray([2, 1])], numpy.array([True, False]))
    h = loom.asarray(numpy.arange(6, dtype=numpy.float32)).astype("bfloat16")
    assert h[loom.asarray([5, 0])].astype(numpy.float32).get().tolist() == [5.0, 0.0]


# ---- asarray / array of Python data -------------------------------------------------------------------
@pytest.mark.parametrize("obj", [[1.0, 2.0, 3.0], [1, 2, 3], [True, False], (1, 2.5), [[1, 2], [3, 4]], 3.5, 7, True,
                                 1 + 2j, [], [[]], [2**63 - 1], [2**64 - 1]], ids=repr)
@pytest.mark.parametrize("dtype", [None, numpy.float32, numpy.int16])
def test_asarray_python_data(obj, dtype):
    try:
        want = numpy.asarray(obj, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as e:
        with pytest.raises(type(e)):
            loom.asarray(obj, dtype=dtype)
        return
    check(loom.asarray(obj, dtype=dtype), want)
    check(loom.array(obj, dtype=dtype), want)


def test_asarray_python_data_layouts_and_errors():
    r = loom.array([[1, 2], [3, 4]], order="F")
    assert r.flags.f_contiguous and not r.flags.c_contiguous
    check(loom.array([1, 2], ndmin=3), numpy.array([1, 2], ndmin=3))
    with pytest.raises(ValueError):
        loom.asarray([[1, 2], [3]])
    with pytest.raises(ValueError):  # NumPy makes an object array of it
        loom.asarray([2**64])
    with pytest.raises(ValueError):
        loom.asarray([object()])


def test_asarray_python_data_is_own_writable_memory():
    src = [1.0, 2.0]
    r = loom.asarray(src)
    r[0] = 5.0
    r *= 2
    check(r, numpy.array([10.0, 4.0]))
    assert src == [1.0, 2.0] and r.flags.owndata and r.base is None


def test_asarray_of_numpy_still_copies():
    n = numpy.arange(4.0)
    r = loom.asarray(n)
    r[0] = 9.0
    assert n[0] == 0.0


def test_asarray_list_of_loom_scalars():
    parts = [loom.asarray(numpy.float32(1.5)), loom.asarray(numpy.float32(2.5))]
    check(loom.asarray(parts), numpy.array([1.5, 2.5], numpy.float32))


# ---- arange ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [(100,), (0,), (-3,), (2, 10), (10, 2, -3), (-5, 5, 3), (2**62, 2**62 + 5),
                                  (2**63 - 3, 2**63 - 1), (-2**63, -2**63 + 3), (0, 2**62, 2**61), (5, 1),
                                  (numpy.int32(2), 9), (numpy.uint8(3),), (1, 2.5, 0.5), (0.5, 3)], ids=repr)
@pytest.mark.parametrize("dtype", [None, numpy.int8, numpy.uint16, numpy.float32])
def test_arange_matches_numpy(args, dtype):
    start, stop, step = tuple(args) + (None, 1)[len(args) - 1:] if len(args) < 3 else args
    try:
        with numpy.errstate(all="ignore"):
            want = numpy.arange(start, stop, step, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as e:
        with pytest.raises(type(e)):
            loom.arange(start, stop, step, dtype=dtype)
        return
    check(loom.arange(start, stop, step, dtype=dtype), want)


def test_arange_errors():
    _raises_like(lambda: numpy.arange(0, 5, 0), lambda: loom.arange(0, 5, 0))
    _raises_like(lambda: numpy.arange(0, 2**64), lambda: loom.arange(0, 2**64))


# ---- concatenate / stack -----------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1, -2, None])
def test_concatenate_matches_numpy(axis):
    n1, a1 = _pair((3, 4), numpy.float32)
    n2, a2 = _pair((3, 4), numpy.float32, 1)
    check(loom.concatenate([a1, a2], axis), numpy.concatenate([n1, n2], axis))
    check(loom.concatenate([a1.T, a2.T[::-1]], axis), numpy.concatenate([n1.T, n2.T[::-1]], axis))
    check(loom.concatenate([a1 * 2, a2], axis), numpy.concatenate([n1 * 2, n2], axis))
    check(loom.concatenate((a1, a2.astype(numpy.int16)), axis), numpy.concatenate((n1, n2.astype(numpy.int16)), axis))


def test_concatenate_errors_and_dtypes():
    n1, a1 = _pair((3, 4))
    n2, a2 = _pair((3, 5))
    _raises_like(lambda: numpy.concatenate([n1, n2]), lambda: loom.concatenate([a1, a2]), ValueError)
    _raises_like(lambda: numpy.concatenate([n1, n2[0]], 1), lambda: loom.concatenate([a1, a2[0]], 1), ValueError)
    _raises_like(lambda: numpy.concatenate([n1, n1], 2), lambda: loom.concatenate([a1, a1], 2))
    with pytest.raises(ValueError, match="zero-dimensional"):
        loom.concatenate([a1[0, 0], a1[0, 1]])
    with pytest.raises(ValueError):
        loom.concatenate([])
    with pytest.raises(TypeError):
        loom.concatenate([a1, a1.astype(numpy.int64)], dtype=numpy.int64, casting="safe")
    check(loom.concatenate([a1, a1], dtype=numpy.float32), numpy.concatenate([n1, n1], dtype=numpy.float32))
    out = loom.zeros((6, 4))
    assert loom.concatenate([a1, a1], out=out) is out
    check(out, numpy.concatenate([n1, n1]))
    check(loom.concatenate([a1[:0], a1]), numpy.concatenate([n1[:0], n1]))
    check(loom.concatenate([a1]), numpy.concatenate([n1]))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("shape", [(100,), (3, 4), (2, 300)])
def test_stack_matches_numpy(axis, shape):
    if axis == 1 and len(shape) == 0:
        return
    n1, a1 = _pair(shape, numpy.float32)
    n2, a2 = _pair(shape, numpy.float32, 1)
    check(loom.stack([a1, a2], axis), numpy.stack([n1, n2], axis))
    check(loom.stack([a1, a2 + 1, a1], axis), numpy.stack([n1, n2 + 1, n1], axis))
    check(loom.stack([a1, a2.astype(numpy.int8)], axis), numpy.stack([n1, n2.astype(numpy.int8)], axis))
    check(loom.stack([a1, a2], axis, dtype=numpy.float64), numpy.stack([n1, n2], axis, dtype=numpy.float64))


def test_stack_errors():
    n1, a1 = _pair(4)
    n2, a2 = _pair(5)
    _raises_like(lambda: numpy.stack([n1, n2]), lambda: loom.stack([a1, a2]), ValueError)
    _raises_like(lambda: numpy.stack([n1, n1], 2), lambda: loom.stack([a1, a1], 2))
    with pytest.raises(TypeError):
        loom.stack([a1, a1.astype(numpy.int64)], dtype=numpy.int64, casting="safe")
    with pytest.raises(ValueError):
        loom.stack([a1, a1], casting="bogus")
    with pytest.raises(ValueError):
        loom.stack([])
    check(loom.stack([a1[0], a1[1]]), numpy.stack([n1[0], n1[1]]))  # 0-d pieces
    check(loom.stack([a1[:0], a1[:0]]), numpy.stack([n1[:0], n1[:0]]))
    check(loom.stack([a1[::-2], a1[::2]], 1), numpy.stack([n1[::-2], n1[::2]], 1))


@pytest.mark.parametrize("pending", [False, True])
def test_joins_of_large_or_pending_arrays_take_loom_kernels(pending):
    n1, a1 = _pair((300, 200))  # 480 KB each: past _HOST_JOIN_MAX_BYTES
    n2, a2 = _pair((300, 200), numpy.float32, 1)
    if pending:
        n1, a1, n2, a2 = n1[:2, :3], a1[:2, :3] + 0, n2[:2, :3], a2[:2, :3] + 0
    check(loom.concatenate([a1, a2], 1), numpy.concatenate([n1, n2], 1))
    check(loom.concatenate([a1, a2], None, dtype=numpy.float32), numpy.concatenate([n1, n2], None, dtype=numpy.float32))
    check(loom.stack([a1, a2], 1), numpy.stack([n1, n2], 1))
    check(loom.stack([a1, a2.astype(numpy.float64)], -1), numpy.stack([n1, n2.astype(numpy.float64)], -1))
    with pytest.raises(TypeError):
        loom.concatenate([a1, a2], casting="no")
    with pytest.raises(TypeError):
        loom.stack([a1, a2], casting="no")


def test_expand_dims_views():
    n, a = _pair((3, 4))
    for axis in (0, 1, 2, -1, -3, (0, 2)):
        v = loom.expand_dims(a, axis)
        check(v, numpy.expand_dims(n, axis))
        assert v.base is a
    _raises_like(lambda: numpy.expand_dims(n, 3), lambda: loom.expand_dims(a, 3))
    _raises_like(lambda: numpy.expand_dims(n, -4), lambda: loom.expand_dims(a, -4))
    check(loom.expand_dims(a.T, 1), numpy.expand_dims(n.T, 1))


# ---- outer / trace / sort ------------------------------------------------------------------------------------
def test_outer_matches_numpy():
    n1, a1 = _pair(10, numpy.float32)
    n2, a2 = _pair((2, 3), numpy.int32)
    check(loom.outer(a1, a2), numpy.outer(n1, n2))
    check(loom.outer(a2.T, a1[::3]), numpy.outer(n2.T, n1[::3]))
    check(loom.outer(a1 * 2, a1[:0]), numpy.outer(n1 * 2, n1[:0]))
    check(loom.outer(3, a1), numpy.outer(3, n1))
    check(loom.outer([1, 2], [3.0]), numpy.outer([1, 2], [3.0]))
    out = loom.zeros((10, 10), numpy.float32)
    assert loom.outer(a1, a1, out=out) is out
    check(out, numpy.outer(n1, n1))


@pytest.mark.parametrize("offset", [0, 1, -2, 4, -5, 10, -10])
def test_trace_matches_numpy(offset):
    n, a = _pair((4, 5))
    check(loom.trace(a, offset), numpy.trace(n, offset))
    check(loom.trace(a.T, offset), numpy.trace(n.T, offset))
    check(loom.trace(a[::2, ::-1], offset), numpy.trace(n[::2, ::-1], offset))
    check(loom.trace(a * 2, offset), numpy.trace(n * 2, offset))
    n3, a3 = _pair((3, 4, 5), numpy.int16)
    for ax1, ax2 in ((0, 1), (1, 2), (2, 0), (-1, -3)):
        check(loom.trace(a3, offset, ax1, ax2), numpy.trace(n3, offset, ax1, ax2))
        check(loom.diagonal(a3, offset, ax1, ax2), numpy.diagonal(n3, offset, ax1, ax2))


def test_trace_errors_and_dtype():
    n, a = _pair((3, 3), numpy.int8)
    check(loom.trace(a), numpy.trace(n))
    check(loom.trace(a, dtype=numpy.float32), numpy.trace(n, dtype=numpy.float32))
    with pytest.raises(ValueError):
        loom.trace(a[0])
    with pytest.raises(ValueError):
        loom.trace(a, 0, 1, 1)
    with pytest.raises(numpy.exceptions.AxisError):
        loom.trace(a, 0, 0, 2)
    check(loom.trace(a[:0]), numpy.trace(n[:0]))


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.int8, numpy.uint16, numpy.bool_])
def test_sort_matches_numpy(dtype):
    n, a = _pair((4, 6), dtype)
    check(loom.sort(a), numpy.sort(n))
    check(loom.sort(a, axis=0), numpy.sort(n, axis=0))
    check(loom.sort(a, axis=None), numpy.sort(n, axis=None))
    check(loom.sort(a.T[::-1]), numpy.sort(n.T[::-1]))
    check(loom.argsort(a, kind="stable"), numpy.argsort(n, kind="stable"))
    check(loom.sort(a[:0]), numpy.sort(n[:0]))


def test_sort_result_is_new_memory():
    n, a = _pair(8)
    r = loom.sort(a)
    r[0] = 1e9
    check(a, n)
    assert r.flags.owndata or a._on_gpu  # a GPU sort's result is a view of its own new buffer
    with pytest.raises(numpy.exceptions.AxisError):
        loom.sort(a[0])
