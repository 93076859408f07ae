"""The ndarray API, creation, indexing, interop (NumPy, DLPack), errors and the loom.cuda stand-ins."""
import numpy as np
import pytest

import loom

# Host-array semantics (NumPy views, host DLPack): on a GPU machine arrays live on the GPU, where
# CuPy's rules apply instead (tests/python/test_gpu.py covers them).
HOST_ONLY = pytest.mark.skipif(loom.cuda.is_available(), reason="host arrays only; see test_gpu.py")
from conftest import ON_GPU, check, sample


def test_creation():
    check(loom.zeros((2, 3)), np.zeros((2, 3)))
    check(loom.ones(4, dtype="int32"), np.ones(4, np.int32))
    check(loom.full((2,), 7, dtype="uint8"), np.full((2,), 7, np.uint8))
    check(loom.full((2,), 1.5), np.full((2,), 1.5))
    check(loom.arange(2, 10, 3), np.arange(2, 10, 3))
    check(loom.linspace(0, 1, 5), np.linspace(0, 1, 5))
    a = loom.arange(6.0).reshape(2, 3)
    for f in ("zeros_like", "ones_like", "empty_like"):
        r = getattr(loom, f)(a)
        assert r.shape == (2, 3) and r.dtype == np.float64
    check(loom.full_like(a, 2), np.full((2, 3), 2.0))
    check(loom.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]]))
    check(loom.asarray([1.0, 2.0], dtype="float32"), np.array([1, 2], np.float32))
    e = loom.empty((3,))
    assert e.shape == (3,)


def test_attributes():
    a = loom.asarray(np.zeros((3, 4), np.float32))
    assert a.dtype == np.float32 and a.shape == (3, 4) and a.ndim == 2 and a.size == 12
    assert a.itemsize == 4 and a.nbytes == 48 and a.strides == (16, 4)
    assert a.flags.c_contiguous and not a.flags.f_contiguous and a.T.flags.f_contiguous
    assert a.device == loom.cuda.Device(0)
    assert len(a) == 3
    assert [r.shape for r in a] == [(4,)] * 3


def test_methods():
    a = sample((2, 3, 4), "float64")
    la = loom.asarray(a)
    check(la.reshape(6, 4), a.reshape(6, 4))
    check(la.reshape((4, -1)), a.reshape((4, -1)))
    check(la.transpose(2, 0, 1), a.transpose(2, 0, 1))
    check(la.T, a.T)
    check(la.ravel(), a.ravel())
    check(la.T.ravel(), a.T.ravel())
    check(la[:, :1].squeeze(), a[:, :1].squeeze())
    check(la.astype("int32"), a.astype("int32"))
    check(la.swapaxes(0, 2), a.swapaxes(0, 2))
    c = la.copy()
    c += 1
    check(la, a)
    assert la.tolist() == a.tolist()
    assert loom.asarray(np.float64(2.5)).item() == 2.5
    assert float(la[0, 0, 0]) == a[0, 0, 0]
    assert int(loom.asarray(np.int8(3))) == 3
    assert bool(loom.ones(()))
    assert complex(loom.ones(())) == 1
    with pytest.raises(ValueError):
        bool(loom.ones(3))
    r = loom.arange(3)
    loom.eval(r)
    assert repr(r) == repr(np.arange(3))
    pending = loom.arange(3) * 2
    assert pending._lazy and repr(pending) == repr(np.arange(3) * 2) + "  # was pending: evaluated by repr"
    assert repr(pending) == repr(np.arange(3) * 2)  # evaluated now
    assert str(loom.arange(3.0)) == str(np.arange(3.0))
    check(loom.expand_dims(la, 1), np.expand_dims(a, 1))
    check(loom.broadcast_to(loom.arange(3), (2, 3)), np.broadcast_to(np.arange(3), (2, 3)))


def test_basic_indexing_views():
    a = np.arange(24.0).reshape(2, 3, 4)
    la = loom.asarray(a)
    for key in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), (slice(None, None, -1),),
                (0, slice(1, None, 2), None, slice(None, 2)), ()]:
        check(la[key], a[key])  # type: ignore[call-overload]  # NumPy's stubs: mixed operand types
    v = la[1, :, ::2]
    v[...] = -1
    a[1, :, ::2] = -1
    check(la, a)
    with pytest.raises(IndexError):
        la[5]


def test_advanced_indexing():
    a = np.arange(12.0).reshape(3, 4)
    la = loom.asarray(a)
    check(la[la > 5], a[a > 5])
    check(la[[0, 2]], a[[0, 2]])
    check(la[loom.asarray(np.array([2, 0]))], a[[2, 0]])
    pending = la * 1
    la[la > 5] = 0
    a2 = a.copy()
    a2[a2 > 5] = 0
    check(la, a2)
    check(pending, a)


def test_setitem_broadcast():
    a = loom.zeros((3, 4))
    a[1] = loom.arange(4.0)
    a[:, 0] = 9
    want = np.zeros((3, 4))
    want[1] = np.arange(4.0)
    want[:, 0] = 9
    check(a, want)
    with pytest.raises(ValueError):
        a[0] = loom.ones(3)


@HOST_ONLY
@pytest.mark.host_conversion
def test_numpy_interop():
    a = sample((3, 4), "float32")
    la = loom.asarray(a)
    check(np.asarray(la), a)
    check(loom.asnumpy(la), a)
    assert isinstance(la.get(), np.ndarray)
    m = memoryview(la)
    assert m.format == "f" and m.shape == (3, 4)
    assert loom.get_array_module(la) is loom and loom.get_array_module(a) is np
    assert loom.is_available()



def test_dlpack_to_the_host_and_copies():
    """DLPack 2023.12's keywords: NumPy's from_dlpack(x, device="cpu") gets the values from any device (a
    host copy of a GPU array; scikit-learn converts estimator attributes so), copy=True gives memory of its
    own, copy=False to the host refuses where that needs a copy; another device is refused."""
    a = sample((3, 4), "float32")
    x = loom.asarray(a)[:, ::2]  # a strided view
    n = np.from_dlpack(x, device="cpu")
    np.testing.assert_array_equal(n, a[:, ::2])
    c = np.from_dlpack(x, copy=True) if not ON_GPU else np.from_dlpack(x, device="cpu", copy=True)
    x[0, 0] = 42.0
    assert c[0, 0] == a[0, 0] and x[0, 0].item() == 42.0  # a copy does not see later writes
    if ON_GPU:
        with pytest.raises(BufferError, match="copy"):
            x.__dlpack__(dl_device=(1, 0), copy=False)
    else:
        shared = np.from_dlpack(x, device="cpu", copy=False)
        x[1, 1] = -3.0
        assert shared[1, 1] == -3.0  # the host array's own memory
    with pytest.raises(BufferError, match="own device"):
        x.__dlpack__(dl_device=(2, 7))
    b = np.from_dlpack(loom.asarray(np.arange(5, dtype=np.int64)) * 3, device="cpu")  # a pending value
    np.testing.assert_array_equal(b, np.arange(5) * 3)

@HOST_ONLY
def test_dlpack_roundtrip():
    a = sample((3, 4), "int16")
    la = loom.from_dlpack(a)
    check(la, a)
    a[0, 0] = 99
    assert la[0, 0].item() == 99  # zero-copy
    n = np.from_dlpack(la)
    assert n.shape == (3, 4)
    la[1, 1] = 7
    assert n[1, 1] == 7
    assert la.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(loom.asarray(np.arange(6.0))[::2])
    check(b, np.arange(6.0)[::2])


@HOST_ONLY
def test_cuda_array_interface_absent():
    with pytest.raises(AttributeError):
        loom.ones(3).__cuda_array_interface__
    assert not hasattr(loom.ones(3), "__cuda_array_interface__")


def test_errors():
    with pytest.raises(TypeError):
        loom.ones(3) + "x"
    with pytest.raises(TypeError):
        loom.asarray(np.ones(3, dtype=np.clongdouble))
    with pytest.raises(TypeError):
        loom.zeros(3, dtype=object)
    with pytest.raises(ValueError):
        loom.ones((2, 3)).reshape(4)
    with pytest.raises(np.exceptions.AxisError):
        loom.ones((2, 3)).transpose(0, 5)
    with pytest.raises(TypeError):
        loom.ones(3, dtype=bool) - loom.ones(3, dtype=bool)
    with pytest.raises(TypeError):
        len(loom.ones(()))
    with pytest.raises(ValueError):
        loom.zeros((-1,))
    with pytest.raises(TypeError):
        loom.bitwise_and(loom.ones(2), loom.ones(2))


def test_cuda_standins():
    d = loom.cuda.Device(0)
    with d:
        d.use()
        d.synchronize()
        assert d.compute_capability
    with pytest.raises(ValueError):
        loom.cuda.Device(1)
    s = loom.cuda.Stream()
    with s:
        x = loom.ones(10) * 2
        s.synchronize()
    s.close()
    with pytest.raises(ValueError):
        s.synchronize()
    e1, e2 = loom.cuda.Event(), loom.cuda.Event()
    e1.record()
    (loom.ones(100) + 1).sum()
    e2.record()
    assert loom.cuda.get_elapsed_time(e1, e2) >= 0
    pool = loom.cuda.get_default_memory_pool()
    assert pool.used_bytes() >= 0
    pool.free_all_blocks()
