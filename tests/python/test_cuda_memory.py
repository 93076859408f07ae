"""loom.cuda's device-memory API (cuda.alloc, MemoryPointer, ndarray(memptr=), MemoryPool limits), the CUDA
runtime calls (cuda.runtime), ExternalStream and pinned memory, checked against NumPy and explicit
expectations. The host tests run everywhere (alloc gives host memory on the host stand-in; the runtime's
memory calls must refuse cleanly); the `gpu` tests need a CUDA device (the lead runs them on the H200)."""
import ctypes

import numpy as np
import pytest

import loom
from loom import cuda

GPU = cuda.is_available() and not cuda.runtime.is_hip
gpu = pytest.mark.skipif(not GPU, reason="needs a CUDA device")
host_only = pytest.mark.skipif(cuda.is_available(), reason="checks the host stand-in (no GPU)")


def _bytes(p, n):
    out = np.zeros(n, np.uint8)
    p.copy_to_host(out.ctypes.data, n)
    return out


# ---- MemoryPointer ---------------------------------------------------------------------------------------------
def test_alloc_copies_round_trip():
    src = np.arange(256, dtype=np.uint8)
    p = cuda.alloc(256)
    assert isinstance(p, cuda.MemoryPointer) and p.size == 256 and p.mem.size == 256 and p.ptr != 0
    assert p.device_id == cuda.get_device_id() and p.device == cuda.Device()
    p.copy_from_host(src.ctypes.data, 256)
    np.testing.assert_array_equal(_bytes(p, 256), src)
    # the other host forms: a ctypes pointer, a NumPy array (a buffer), a bytearray
    q = cuda.alloc(256)
    q.copy_from_host(src.ctypes.data_as(ctypes.c_void_p), 256)
    np.testing.assert_array_equal(_bytes(q, 256), src)
    q.copy_from_host(src[::-1].copy(), 256)
    np.testing.assert_array_equal(_bytes(q, 256), src[::-1])
    buf = bytearray(256)
    q.copy_to_host(buf, 256)
    assert bytes(buf) == bytes(src[::-1])
    # device to device, at offsets
    q.copy_from_device(p + 100, 50)
    expect = src[::-1].copy()
    expect[:50] = src[100:150]
    np.testing.assert_array_equal(_bytes(q, 256), expect)
    q.copy_from(p, 8)  # a MemoryPointer source: device to device
    expect[:8] = src[:8]
    np.testing.assert_array_equal(_bytes(q, 256), expect)


def test_pointer_arithmetic_and_bounds():
    p = cuda.alloc(64)
    r = p + 16
    assert r.ptr == p.ptr + 16 and r.size == 48 and r.mem is p.mem
    assert (16 + p).ptr == r.ptr and (r - 16).ptr == p.ptr
    assert (p + 64).size == 0
    with pytest.raises(ValueError, match="outside the block"):
        p + 65
    with pytest.raises(ValueError, match="outside the block"):
        p - 1
    with pytest.raises(ValueError, match="do not fit"):
        r.copy_from_host(np.zeros(64, np.uint8), 64)
    with pytest.raises(ValueError, match="smaller than"):
        p.copy_from_host(np.zeros(8, np.uint8), 16)
    with pytest.raises(ValueError, match="read-only"):
        p.copy_to_host(bytes(64), 64)
    with pytest.raises(TypeError, match="MemoryPointer"):
        p.copy_from_device(np.zeros(8), 8)
    with pytest.raises(TypeError, match="device memory"):
        p.copy_from_host(r, 8)
    p.copy_from_host(0, 0)  # nothing to copy: a NULL address is fine


def test_memset_low_byte_and_range():
    p = cuda.alloc(32)
    p.copy_from_host(np.full(32, 7, np.uint8), 32)
    (p + 4).memset(0x1FF, 10)  # the low byte, as cudaMemset
    expect = np.full(32, 7, np.uint8)
    expect[4:14] = 0xFF
    np.testing.assert_array_equal(_bytes(p, 32), expect)
    s = cuda.Stream()
    p.memset_async(3, 4, stream=s)
    s.synchronize()
    expect[:4] = 3
    np.testing.assert_array_equal(_bytes(p, 32), expect)


def test_ndarray_over_memptr():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    p = cuda.alloc(a.nbytes)
    p.copy_from_host(a.ctypes.data, a.nbytes)
    x = loom.ndarray((3, 4), np.float64, memptr=p)
    np.testing.assert_array_equal(x.get(), a)
    np.testing.assert_array_equal((x * 2).sum(axis=1).get(), (a * 2).sum(axis=1))
    # F order and explicit strides over the same bytes
    f = loom.ndarray((4, 3), np.float64, memptr=p, order="F")
    np.testing.assert_array_equal(f.get(), a.reshape(3, 4).T)
    t = loom.ndarray((2, 2), np.float64, memptr=p + 8, strides=(32, 16))
    np.testing.assert_array_equal(t.get(), a.ravel()[1:][np.array([[0, 2], [4, 6]])])
    # writes land in the memory
    x[1] = -1.0
    a[1] = -1.0
    np.testing.assert_array_equal(np.frombuffer(_bytes(p, a.nbytes).tobytes(), np.float64).reshape(3, 4), a)
    # the array keeps the block alive
    del p
    np.testing.assert_array_equal(x.get(), a)
    # empty and 0-d
    e = loom.ndarray((0, 5), np.float32, memptr=cuda.alloc(0))
    assert e.shape == (0, 5) and e.get().size == 0
    z = loom.ndarray((), np.int32, memptr=cuda.alloc(4))
    z.fill(5)
    assert int(z) == 5


def test_ndarray_memptr_errors():
    p = cuda.alloc(32)
    with pytest.raises(ValueError, match="outside its block"):
        loom.ndarray((5,), np.float64, memptr=p)
    with pytest.raises(ValueError, match="outside its block"):
        loom.ndarray((2,), np.float64, memptr=p, strides=(-8,))  # the second element lies before the block
    r = loom.ndarray((2,), np.float64, memptr=p + 8, strides=(-8,))  # it lies inside: fine
    r[...] = np.array([1.0, 2.0])
    np.testing.assert_array_equal(np.frombuffer(_bytes(p, 16).tobytes(), np.float64), [2.0, 1.0])
    with pytest.raises(ValueError, match="multiples"):
        loom.ndarray((2,), np.float64, memptr=p, strides=(4,))
    with pytest.raises(TypeError, match="MemoryPointer"):
        loom.ndarray((2,), np.float64, memptr=1234)
    # strides without memptr: a new block of the extent they reach
    s = loom.ndarray((2, 3), np.int16, strides=(2, 4))
    s[...] = np.arange(6, dtype=np.int16).reshape(2, 3)
    np.testing.assert_array_equal(s.get(), np.arange(6).reshape(2, 3))


def test_ndarray_data_is_a_memory_pointer():
    a = loom.arange(10, dtype=np.int32)
    d = a.data
    assert isinstance(d, cuda.MemoryPointer) and d.size == 40
    v = a[::-2]
    dv = v.data
    assert dv.ptr == d.ptr + 36 and dv.mem.size == 40 - 4
    back = loom.ndarray((5,), np.int32, memptr=dv, strides=(-8,))
    np.testing.assert_array_equal(back.get(), np.arange(10, dtype=np.int32)[::-2])


# ---- the memory pool -------------------------------------------------------------------------------------------
def test_pool_limit_enforced():
    pool = cuda.get_default_memory_pool()
    assert pool.get_limit() == 0
    pool.free_all_blocks()
    base = pool.total_bytes()
    try:
        pool.set_limit(size=base + (8 << 20))
        assert pool.get_limit() == base + (8 << 20)
        keep = cuda.alloc(4 << 20)
        with pytest.raises(cuda.OutOfMemoryError, match="limit"):
            cuda.alloc(16 << 20)
        with pytest.raises(MemoryError):  # OutOfMemoryError is a MemoryError, as in CuPy
            (loom.arange(3 << 20, dtype=np.float64) * 2).get()  # a 24 MiB result from loom's pool
        del keep
        pool.free_all_blocks()
        cuda.alloc(6 << 20)  # fits once the first block went back
        pool.set_limit(fraction=0.5)
        assert 0 < pool.get_limit()
        with pytest.raises(ValueError, match="fraction"):
            pool.set_limit(fraction=1.5)
        with pytest.raises(ValueError, match="not both"):
            pool.set_limit(size=1, fraction=0.1)
        with pytest.raises(ValueError, match=">= 0"):
            pool.set_limit(size=-1)
    finally:
        pool.set_limit(size=0)
    assert pool.get_limit() == 0
    cuda.alloc(16 << 20)


def test_pool_figures_follow_alloc():
    pool = cuda.get_default_memory_pool()
    pool.free_all_blocks()
    used = pool.used_bytes()
    p = pool.malloc(3 << 20)
    assert pool.used_bytes() >= used + (3 << 20)
    del p
    assert pool.used_bytes() == used and pool.free_bytes() >= 3 << 20
    assert pool.n_free_blocks() == 1  # the 3 MiB block, kept for reuse
    again = pool.malloc(3 << 20)
    assert pool.n_free_blocks() == 0
    del again
    pool.free_all_blocks()
    assert pool.n_free_blocks() == 0 and pool.total_bytes() == pool.used_bytes()


def test_set_allocator():
    calls = []

    def mine(n):
        calls.append(n)
        return cuda.get_default_memory_pool().malloc(n)

    cuda.set_allocator(mine)
    try:
        assert cuda.get_allocator() is mine
        cuda.alloc(100)
    finally:
        cuda.set_allocator(None)
    assert calls == [100]
    with pytest.raises(TypeError, match="callable"):
        cuda.set_allocator(3)


# ---- the runtime -------------------------------------------------------------------------------------------
def test_runtime_constants_and_device_calls():
    rt = cuda.runtime
    assert (rt.memcpyHostToHost, rt.memcpyHostToDevice, rt.memcpyDeviceToHost, rt.memcpyDeviceToDevice,
            rt.memcpyDefault) == (0, 1, 2, 3, 4)
    assert rt.getDeviceCount() == cuda._gpu_count()
    assert rt.getDevice() == cuda.get_device_id()
    rt.setDevice(0)
    with pytest.raises(cuda.CUDARuntimeError) as e:
        rt.setDevice(rt.getDeviceCount() + 3)
    assert e.value.status == rt.errorInvalidDevice
    rt.deviceSynchronize()
    assert isinstance(rt.driverGetVersion(), int) and rt.runtimeGetVersion() == rt.driverGetVersion()
    assert rt.is_hip in (False, True)


@host_only
def test_runtime_without_device_refuses_cleanly():
    rt = cuda.runtime
    assert rt.getDeviceCount() == 0
    for call in (lambda: rt.malloc(16), lambda: rt.memGetInfo(), lambda: rt.getDeviceProperties(0),
                 lambda: rt.memcpy(1, 2, 8, rt.memcpyHostToDevice), lambda: rt.memset(1, 0, 8)):
        with pytest.raises(cuda.CUDARuntimeError, match="no CUDA device") as e:
            call()
        assert e.value.status == rt.errorNoDevice
    assert rt.driverGetVersion() == 0
    # host to host needs no device
    a, b = np.arange(8, dtype=np.int64), np.zeros(8, np.int64)
    rt.memcpy(b.ctypes.data, a.ctypes.data, 64, rt.memcpyHostToHost)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(cuda.CUDARuntimeError, match="cudaMemcpyKind"):
        rt.memcpy(b.ctypes.data, a.ctypes.data, 64, 9)


@gpu
def test_runtime_memory_on_gpu():
    rt = cuda.runtime
    a = np.arange(1000, dtype=np.float32)
    d = rt.malloc(a.nbytes)
    assert d != 0
    rt.memcpy(d, a.ctypes.data, a.nbytes, rt.memcpyHostToDevice)
    d2 = rt.malloc(a.nbytes)
    rt.memcpy(d2, d, a.nbytes, rt.memcpyDeviceToDevice)
    rt.memset(d2, 0, 40)
    out = np.empty_like(a)
    s = cuda.Stream()
    rt.memcpyAsync(out.ctypes.data, d2, a.nbytes, rt.memcpyDeviceToHost, s.ptr)
    rt.streamSynchronize(s.ptr)
    expect = a.copy()
    expect[:10] = 0
    np.testing.assert_array_equal(out, expect)
    out2 = np.empty_like(a)
    rt.memcpy(out2.ctypes.data, d, a.nbytes, rt.memcpyDefault)
    np.testing.assert_array_equal(out2, a)
    rt.free(d)
    rt.free(d2)
    with pytest.raises(cuda.CUDARuntimeError, match="not allocated"):
        rt.free(d)
    free, total = rt.memGetInfo()
    assert 0 < free <= total
    props = rt.getDeviceProperties(0)
    assert isinstance(props["name"], bytes) and props["totalGlobalMem"] == total
    assert (props["major"], props["minor"]) == tuple(int(c) for c in (cuda.Device(0).compute_capability[:-1],
                                                                       cuda.Device(0).compute_capability[-1]))
    assert props["warpSize"] == 32 and props["multiProcessorCount"] > 0 and len(props["maxThreadsDim"]) == 3
    assert rt.driverGetVersion() >= 11000


# ---- streams, pinned memory, asynchronous copies ---------------------------------------------------------------
def test_external_stream_context_and_use():
    s = cuda.Stream()
    e = cuda.ExternalStream(s.ptr)
    assert e.ptr == s.ptr and e == cuda.ExternalStream(s.ptr)
    with e:
        assert cuda.get_current_stream() is e
        x = loom.arange(1000, dtype=np.float64) * 3
        y = float(x.sum())
    assert cuda.get_current_stream() == cuda.Stream.null
    assert y == 3 * 999 * 1000 / 2
    e.use()
    z = (loom.ones(10) + 1).get()
    cuda.Stream.null.use()
    np.testing.assert_array_equal(z, np.full(10, 2.0))
    e.synchronize()
    e.close()  # frees loom's record only; the stream it borrowed still works
    s.synchronize()
    with pytest.raises(ValueError, match="handle"):
        cuda.ExternalStream(-1)


@gpu
def test_external_stream_runs_loom_kernels_on_the_foreign_stream():
    s = cuda.Stream()
    e = cuda.ExternalStream(s.ptr)
    a = np.random.default_rng(0).random(1 << 20)
    with e:
        x = loom.asarray(a)
        y = (x * 2 + 1).sum()
        ev = cuda.Event()
        ev.record()
    ev.synchronize()
    assert abs(float(y) - float((a * 2 + 1).sum())) < 1e-6 * a.size


@gpu
def test_pinned_memory_async_copies():
    n = 1 << 20
    pinned = cuda.alloc_pinned_memory(n * 4)
    src = np.frombuffer(pinned, np.float32, n)
    src[:] = np.arange(n, dtype=np.float32)
    d = cuda.alloc(n * 4)
    s = cuda.Stream()
    d.copy_from_host_async(pinned, n * 4, stream=s)
    back_mem = cuda.alloc_pinned_memory(n * 4)
    back = np.frombuffer(back_mem, np.float32, n)
    d.copy_to_host_async(back_mem, n * 4, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(back, np.arange(n, dtype=np.float32))
    x = loom.ndarray((n,), np.float32, memptr=d)
    np.testing.assert_array_equal((x + 1).get(), np.arange(n, dtype=np.float32) + 1)
    pool = cuda.PinnedMemoryPool()
    p = pool.malloc(1000)
    assert p.size == 1024 and pool.used_bytes() == 1024
    del p
    assert pool.n_free_blocks() == 1


def test_async_copies_and_streams():
    a = np.arange(64, dtype=np.uint8)
    p = cuda.alloc(64)
    s = cuda.Stream()
    p.copy_from_host_async(a, 64, stream=s)
    p.copy_from_async(a[::-1].copy(), 32)  # the current stream
    out = np.zeros(64, np.uint8)
    p.copy_to_host_async(out, 64, stream=s)
    s.synchronize()
    expect = a.copy()
    expect[:32] = a[::-1][:32]
    np.testing.assert_array_equal(out, expect)
    q = cuda.alloc(64)
    q.copy_from_device_async(p, 64, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(_bytes(q, 64), expect)
    with pytest.raises(TypeError, match="Stream"):
        q.copy_from_device_async(p, 64, stream="s")


# ---- issue 10: reductions take a tuple of axes, not a list -------------------------------------------------------
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "any", "all",
                                  "nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
                                  "count_nonzero", "ptp", "argmax", "argmin", "nanargmax", "nanargmin", "cumsum",
                                  "cumprod"])
def test_reduction_axis_list_is_a_type_error(name):
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    with pytest.raises(TypeError):
        getattr(np, name)(a, axis=[0])  # the reference
    with pytest.raises(TypeError):
        getattr(loom, name)(loom.asarray(a), axis=[0])
    if hasattr(np.ndarray, name):
        with pytest.raises(TypeError):
            getattr(loom.asarray(a), name)(axis=[0])
    np.testing.assert_allclose(getattr(loom, name)(loom.asarray(a), axis=(0,) if name not in (
        "argmax", "argmin", "nanargmax", "nanargmin", "cumsum", "cumprod") else 0).get(),
        getattr(np, name)(a, axis=(0,) if name not in ("argmax", "argmin", "nanargmax", "nanargmin", "cumsum",
                                                        "cumprod") else 0))
