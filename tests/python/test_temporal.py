"""datetime64 / timedelta64 arrays (loom/_temporal.py): int64 containers with NumPy's datetime rules for
creation, copies, views, indexing, comparisons and arithmetic; everything else refused with TypeError.
Every expected value is NumPy's."""
import pickle

import numpy as np
import pytest

import loom

NAT = np.iinfo(np.int64).min
UNITS = ("s", "ms", "us", "ns")


def _dt(unit="s"):
    a = np.array(["2020-01-01T00:00:00", "1969-12-31T23:59:59", "NaT", "2038-01-19T03:14:08"], dtype="M8[s]")
    return a.astype(f"M8[{unit}]")


def _td(unit="s"):
    return np.array([7, -7, 0, "NaT", 86400], dtype=f"m8[{unit}]")


def _same(got, expect):
    assert isinstance(got, loom.ndarray)
    assert got.dtype == expect.dtype, (got.dtype, expect.dtype)
    assert got.shape == expect.shape
    h = loom.asnumpy(got)
    assert h.dtype == expect.dtype
    np.testing.assert_array_equal(h.view(np.int64) if h.dtype.kind in "Mm" else h,
                                  expect.view(np.int64) if expect.dtype.kind in "Mm" else expect)


@pytest.mark.parametrize("unit", UNITS + ("D", "Y"))
@pytest.mark.parametrize("kind", ("M", "m"))
def test_creation_round_trip(kind, unit):
    a = _dt(unit) if kind == "M" else _td(unit)
    for make in (loom.asarray, loom.array, lambda x: loom.array(x.tolist(), dtype=x.dtype)):
        _same(make(a), a)
    _same(loom.asarray(a[::-2]), a[::-2])  # non-contiguous
    _same(loom.asarray(a[1]), np.asarray(a[1]))  # 0-d
    _same(loom.asarray(a[:0]), a[:0])  # empty
    assert repr(loom.asarray(a)) == repr(a)
    assert loom.asarray(a).tolist() == a.tolist()
    _same(pickle.loads(pickle.dumps(loom.asarray(a))), a)


def test_byte_swapped_and_generic_unit():
    a = _dt("ms")
    _same(loom.asarray(a.astype(">M8[ms]")), a)
    with pytest.raises(TypeError, match="has no unit"):
        loom.array(np.array(["NaT"], dtype="M8"))


@pytest.mark.parametrize("dtype", ("M8[s]", "m8[ns]"))
def test_empty_zeros_full(dtype):
    _same(loom.zeros((2, 3), dtype=dtype), np.zeros((2, 3), dtype=dtype))
    _same(loom.ones(4, dtype=dtype), np.ones(4, dtype=dtype))
    assert loom.empty(3, dtype=dtype).dtype == np.dtype(dtype)
    v = np.datetime64("2001-02-03", "D") if dtype[0] == "M" else np.timedelta64(5, "m")
    _same(loom.full(3, v, dtype=dtype), np.full(3, v, dtype=dtype))


def test_views_copies_and_shapes():
    a = _dt("us").reshape(2, 2)
    x = loom.asarray(a)
    _same(x.view("i8"), a.view("i8"))
    _same(x.view("i8").view("M8[us]"), a)  # a plain int64 array seen as a time dtype
    _same(loom.arange(3).view("m8[D]"), np.arange(3).view("m8[D]"))
    _same(x.view("m8[us]"), a.view("m8[us]"))
    _same(x.copy(), a.copy())
    _same(x.T, a.T)
    _same(x.reshape(4), a.reshape(4))
    _same(x.ravel(), a.ravel())
    _same(x.transpose(1, 0).flatten(), a.T.flatten())
    _same(x[None].squeeze(0), a)
    _same(x.swapaxes(0, 1), a.swapaxes(0, 1))
    _same(x.diagonal(), a.diagonal())
    v = x.view("i8")
    v[0, 0] = 0  # a view shares the memory
    assert loom.asnumpy(x)[0, 0] == np.datetime64(0, "us")
    with pytest.raises(BufferError, match="DLPack"):
        x.__dlpack__()


@pytest.mark.parametrize("src,dst", [("M8[ms]", "M8[s]"), ("M8[s]", "M8[ns]"), ("m8[ms]", "m8[s]"),
                                     ("m8[D]", "m8[h]"), ("M8[s]", "M8[D]")])
def test_astype_units(src, dst):
    a = (_dt("ms") if src[0] == "M" else np.array([-1, -1500, 1500, "NaT", 2**40], dtype="m8[ms]")).astype(src)
    _same(loom.asarray(a).astype(dst), a.astype(dst))
    _same(loom.asarray(a).astype(np.int64), a.astype(np.int64))
    with pytest.raises(TypeError):
        loom.asarray(a).astype(np.float32)


def test_astype_calendar_units_refused():
    with pytest.raises(TypeError, match="years and months"):
        loom.asarray(np.array([1, 2], "m8[Y]")).astype("m8[D]")
    with pytest.raises(TypeError, match="one kind"):
        loom.asarray(_dt()).astype("m8[s]")


def test_indexing_and_assignment():
    a = _dt("s")
    x = loom.asarray(a)
    _same(x[1:3], a[1:3])
    _same(x[loom.asarray([3, 0, 0])], a[[3, 0, 0]])
    _same(x[loom.asarray(a > np.datetime64("1970-01-01"))], a[a > np.datetime64("1970-01-01")])
    _same(x[2], np.asarray(a[2]))
    b = a.copy()
    x[0] = np.datetime64("2000-01-01T00:00:00.750", "ms")  # converted to the array's unit, as NumPy
    b[0] = np.datetime64("2000-01-01T00:00:00.750", "ms")
    x[1] = "1999-12-31"
    b[1] = "1999-12-31"
    x[2:] = loom.asarray(np.array(["2001-01-01", "NaT"], "M8[D]"))
    b[2:] = np.array(["2001-01-01", "NaT"], "M8[D]")
    _same(x, b)
    x.fill(np.datetime64("NaT"))
    b.fill(np.datetime64("NaT"))
    _same(x, b)
    with pytest.raises(TypeError):
        x[0] = loom.asarray(_td())[0]


@pytest.mark.parametrize("op", ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"))
def test_comparisons_with_nat_and_units(op):
    a, b = _dt("s"), np.array(["2020-01-01", "1969-12-31", "2000-01-01", "NaT"], dtype="M8[ms]")
    x, y = loom.asarray(a), loom.asarray(b)
    _same(getattr(x, op)(y), getattr(a, op)(b))
    _same(getattr(x, op)(b[0]), getattr(a, op)(b[0]))  # a NumPy scalar of another unit
    t, u = _td("s"), np.array([7000, 0, 1, 5, 86400000], dtype="m8[ms]")
    _same(getattr(loom.asarray(t), op)(loom.asarray(u)), getattr(t, op)(u))


def test_compare_kinds_differ():
    x, t = loom.asarray(_dt()), loom.asarray(_td()[:4])
    _same(x == t, _dt() == _td()[:4])
    _same(x != t, _dt() != _td()[:4])
    with pytest.raises(TypeError):
        x < t


def test_datetime_arithmetic():
    a, b = _dt("s"), np.array(["2020-01-02", "1970-01-01", "2000-01-01", "NaT"], dtype="M8[ms]")
    t = np.array([1, -1, 3, "NaT"], dtype="m8[h]")
    x, y, tt = loom.asarray(a), loom.asarray(b), loom.asarray(t)
    _same(x - y, a - b)
    _same(y - x, b - a)
    _same(x + tt, a + t)
    _same(tt + x, t + a)
    _same(x - tt, a - t)
    _same(x + 5, a + 5)  # an int counts in the array's unit
    _same(x - loom.arange(4), a - np.arange(4))
    _same(x - np.datetime64("2000-01-01"), a - np.datetime64("2000-01-01"))
    _same(x - np.datetime64("NaT", "s"), a - np.datetime64("NaT", "s"))  # a NaT scalar: all NaT
    _same(tt * True, t * True)
    _same(x - "2000-01-01", a - np.datetime64("2000-01-01"))  # a date string, parsed as NumPy parses it
    _same(x >= "2000-01-01", a >= np.datetime64("2000-01-01"))
    for bad in (lambda: x + y, lambda: tt - x, lambda: x * 2, lambda: 3 - x, lambda: x + 1.5):
        with pytest.raises(TypeError):
            bad()


def test_timedelta_arithmetic():
    t = _td("s")
    u = np.array([2, 3, -4, 5, "NaT"], dtype="m8[ms]")
    x, y = loom.asarray(t), loom.asarray(u)
    _same(x + y, t + u)
    _same(x - y, t - u)
    _same(x * 3, t * 3)
    _same(-2 * x, -2 * t)
    _same(x * 2.5, t * 2.5)  # truncated, as NumPy
    _same(x * loom.asarray(np.array([1, 2, 3, 4, 5])), t * np.array([1, 2, 3, 4, 5]))
    _same(x / 2, t / 2)
    _same(x // 2, t // 2)
    _same(x / 0.5, t / 0.5)
    with np.errstate(all="ignore"):
        _same(x / y, t / u)
        _same(x // y, t // u)
        _same(x % y, t % u)
        _same(x / 0, t / 0)  # NaT
        _same(x // np.timedelta64(0, "s"), t // np.timedelta64(0, "s"))
    _same(-x, -t)
    _same(+x, +t)
    _same(abs(x), abs(t))


def test_numpy_asarray_takes_array_not_buffer(monkeypatch):
    """numpy.asarray tries the buffer protocol first: it refuses a time array, __array__ gives the values."""
    x = loom.asarray(_dt("ms"))
    if x._on_gpu:
        pytest.skip("a GPU array refuses implicit conversion")
    monkeypatch.setenv("LOOM_STRICT_CONVERSION", "0")
    h = np.asarray(x)
    assert h.dtype == np.dtype("M8[ms]")
    np.testing.assert_array_equal(h, _dt("ms"))


def test_isnat():
    for a in (_dt("ns"), _td("us")):
        _same(loom.isnat(loom.asarray(a)), np.isnat(a))
    with pytest.raises(TypeError, match="isnat"):
        loom.isnat(loom.arange(3))


def test_in_place_operators():
    t, u = _td("s"), np.array([1500, -1500, 0, 0, 1], dtype="m8[ms]")
    x = loom.asarray(t)
    x += loom.asarray(u)  # the ms result floored back into seconds, as NumPy's same_kind cast
    t += u
    _same(x, t)
    x -= np.timedelta64(3, "s")
    t -= np.timedelta64(3, "s")
    x *= 2
    t *= 2
    _same(x, t)
    d = loom.asarray(_dt())
    with pytest.raises(TypeError):
        d -= loom.asarray(_dt())  # datetime - datetime is a timedelta: not into a datetime array


def test_other_operations_refused_clearly():
    x = loom.asarray(_td())
    ints = loom.arange(5)
    for call in (lambda: loom.sum(x), lambda: loom.sin(x), lambda: x.sum(), lambda: loom.concatenate([x, x]),
                 lambda: x ** 2, lambda: memoryview(x), lambda: loom.add(ints, ints, out=x),
                 lambda: loom.copyto(x, ints)):
        with pytest.raises(TypeError, match="timedelta64"):
            call()


def test_cuda_array_interface_host_and_typestr():
    """On the host there is no CUDA memory to describe or import (GPU: tests/cupy's test_from_data)."""
    x = loom.asarray(_dt())
    if not x._on_gpu:
        with pytest.raises(AttributeError, match="host memory"):
            x.__cuda_array_interface__
        return
    cai = x.__cuda_array_interface__
    assert cai["typestr"] == "<M8[s]" and cai["descr"] == [("", "<M8[s]")]

    class Obj:
        __cuda_array_interface__ = cai
    _same(loom.asarray(Obj()), _dt())
