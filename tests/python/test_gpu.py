"""GPU tests of the loom package: arrays on a CUDA device against NumPy, devices, streams, events,
memory pool, zero-copy interop with PyTorch and CuPy, errors and kernel counts.

Skipped as a whole when loom sees no CUDA device (CI has none); the host stand-in parts of
loom.cuda are tested at the end without a GPU."""
import numpy as np
import pytest

import loom
from conftest import check, sample

GPU = loom.cuda.is_available()
gpu = pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")

UNARY = ["negative", "absolute", "sqrt", "exp", "log", "sin", "cos", "tanh", "floor", "ceil", "square"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "less", "equal",
          "floor_divide"]
REDUCE = ["sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin"]


def on_gpu(a):
    x = loom.asarray(a)
    assert x.device.id == 0 and x._device == (1, 0)
    return x


# ---- arrays on the GPU against NumPy -------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary(name, dtype):
    a = sample((37, 5), dtype, positive=name in ("sqrt", "log"))
    check(getattr(loom, name)(on_gpu(a)), getattr(np, name)(a))


@gpu
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_binary_broadcast(name, dtype):
    if name == "power" and dtype != "float32":
        pytest.skip("integer power of negative exponents differs by design")
    a = sample((8, 1, 5), dtype, seed=1, positive=name in ("floor_divide", "divide"))
    b = sample((3, 5), dtype, seed=2, positive=name in ("floor_divide", "divide", "power"))
    check(getattr(loom, name)(on_gpu(a), on_gpu(b)), getattr(np, name)(a, b))


@gpu
@pytest.mark.parametrize("name", REDUCE)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_reductions(name, axis):
    a = sample((64, 33, 7), "float64" if name not in ("any", "all") else "bool", seed=3)
    check(getattr(loom, name)(on_gpu(a), axis=axis), getattr(np, name)(a, axis=axis))


@gpu
def test_keepdims_dtype_where_clip_cast():
    a = sample((50, 40), "float32", seed=4)
    x = on_gpu(a)
    check(x.sum(axis=1, keepdims=True, dtype=np.float64), a.sum(axis=1, keepdims=True, dtype=np.float64))
    check(loom.where(x > 0, x, -x), np.where(a > 0, a, -a))
    check(loom.clip(x, -1, 1), np.clip(a, -1, 1))
    check(x.astype(np.int16), a.astype(np.int16))
    check(x * np.float32(2) + 1.5, a * np.float32(2) + 1.5)


@gpu
def test_views_indexing_setitem():
    a = sample((6, 8, 4), "float64", seed=5)
    x = on_gpu(a)
    check(x[1:5:2, ::-1, 2], a[1:5:2, ::-1, 2])
    check(x[..., None, 1], a[..., None, 1])
    check(x.T, a.T)
    check(x.reshape(48, 4)[3], a.reshape(48, 4)[3])
    check(x[a[:, 0, 0] > 0], a[a[:, 0, 0] > 0])
    check(x[[0, 2, 5]], a[[0, 2, 5]])
    y = x.copy()
    b = a.copy()
    y[2:4, 1] = 7.0
    b[2:4, 1] = 7.0
    y[0] = loom.asarray(b[1])
    b[0] = b[1]
    y[[5]] = -1
    b[[5]] = -1
    check(y, b)
    z = x.copy()
    z += 1
    check(z, a + 1)


@gpu
def test_creation_on_current_device():
    for x, want in [(loom.zeros((3, 4), np.float32), np.zeros((3, 4), np.float32)),
                    (loom.ones(5, np.int64), np.ones(5, np.int64)),
                    (loom.full((2, 2), 3.5), np.full((2, 2), 3.5)),
                    (loom.arange(10), np.arange(10)),
                    (loom.linspace(0, 1, 7), np.linspace(0, 1, 7)),
                    (loom.zeros_like(loom.ones(3)), np.zeros(3))]:
        assert x.device == loom.cuda.Device(0)
        check(x, want)
    assert loom.empty((0, 3)).shape == (0, 3)


@gpu
def test_observation():
    a = sample((3, 4), "float64", seed=6)
    x = on_gpu(a)
    assert isinstance(x.get(), np.ndarray)
    np.testing.assert_array_equal(loom.asnumpy(x), a)
    assert float(x.sum()) == pytest.approx(a.sum())
    assert x.tolist() == a.tolist()
    assert "array(" in repr(x)
    with pytest.raises(TypeError, match="get"):
        np.asarray(x)


@gpu
def test_fuse_one_kernel_and_cache():
    @loom.fuse
    def f(a, b, c):
        return loom.exp(a) * b + loom.sin(c) / (1.0 + a * a)

    a, b, c = (sample((1000,), "float32", seed=s) for s in (7, 8, 9))
    xs = [on_gpu(v) for v in (a, b, c)]
    r = f(*xs)
    check(r, np.exp(a) * b + np.sin(c) / (np.float32(1.0) + a * a), rtol=1e-5)
    assert r.device.id == 0
    before = loom.stats()
    f(*xs).get()
    after = loom.stats()
    assert after["kernels_compiled"] == before["kernels_compiled"]
    assert after["last_eval_kernels"] == 1


@gpu
def test_lazy_ten_ops_one_kernel():
    a = sample((4096,), "float32", seed=10)
    x = on_gpu(a)
    y = ((((x * 2 + 1) * x - 3) / 4 + x) * 0.5 - x) * 1.25 + 2
    want = ((((a * 2 + 1) * a - 3) / 4 + a) * 0.5 - a) * 1.25 + 2
    loom.eval(y)
    assert loom.stats()["last_eval_kernels"] == 1
    check(y, want)


@gpu
def test_sum_fuses_with_elementwise():
    a = sample((256, 300), "float32", seed=11)
    x = on_gpu(a)
    r = (x * x + 1).sum(axis=1)
    loom.eval(r)
    assert loom.stats()["last_eval_kernels"] == 1
    check(r, (a * a + 1).sum(axis=1), rtol=1e-4)


# ---- devices, streams, events, pool ---------------------------------------------------------------------------
@gpu
def test_device_api():
    d = loom.cuda.Device(0)
    assert d.compute_capability.isdigit() and int(d.compute_capability) >= 30
    with d:
        assert loom.cuda.get_device_id() == 0
        x = loom.ones(4)
    assert x.device == d
    d.use()
    d.synchronize()
    with pytest.raises(ValueError, match="device"):
        loom.cuda.Device(loom.cuda.runtime.getDeviceCount())


@gpu
def test_two_devices_error_names_both():
    x = loom.ones(4)
    h = loom._core.from_buffer(np.ones(4), True)  # a host array
    with pytest.raises(ValueError, match="host.*CUDA|CUDA.*host"):
        x + h


@gpu
def test_streams_and_events():
    a = sample((1 << 20,), "float32", seed=12)
    x = on_gpu(a)
    s = loom.cuda.Stream()
    assert s.ptr != 0
    start, end = loom.cuda.Event(), loom.cuda.Event()
    with s:
        assert loom.cuda.get_current_stream() is s
        start.record()
        y = loom.sqrt(loom.abs(x)) * 2
        end.record()
    assert loom.cuda.get_current_stream() is loom.cuda.Stream.null
    s.synchronize()
    end.synchronize()
    assert loom.cuda.get_elapsed_time(start, end) >= 0
    check(y, np.sqrt(np.abs(a)) * 2)
    cai = y.__cuda_array_interface__
    assert cai["version"] == 3 and "stream" in cai
    s.close()
    with pytest.raises(ValueError, match="closed"):
        with s:
            pass
    with pytest.raises(ValueError, match="closed"):
        s.synchronize()
    with pytest.raises(RuntimeError, match="recorded"):
        loom.cuda.get_elapsed_time(loom.cuda.Event(), end)


@gpu
def test_memory_pool():
    pool = loom.get_default_memory_pool()
    x = loom.ones((1 << 20,), np.float32)
    loom.eval(x)
    assert pool.used_bytes() >= 4 << 20
    assert pool.total_bytes() >= pool.used_bytes()
    del x
    pool.free_all_blocks()
    assert pool.total_bytes() >= pool.used_bytes()


# ---- interop -------------------------------------------------------------------------------------------------
@gpu
def test_cuda_array_interface_and_dlpack_self():
    a = sample((5, 6), "float32", seed=13)
    x = on_gpu(a)
    cai = x.__cuda_array_interface__
    assert cai["shape"] == (5, 6) and cai["typestr"] == "<f4" and cai["data"][0] != 0
    assert x.__dlpack_device__() == (2, 0)
    y = loom.from_dlpack(x)
    check(y, a)
    v = x[:, ::2]
    assert v.__cuda_array_interface__["strides"] == (24, 8)


@gpu
def test_torch_both_ways():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    x = loom.asarray(t)  # zero-copy via __cuda_array_interface__
    assert x._ptr == t.data_ptr()
    y = loom.from_dlpack(t)
    assert y._ptr == t.data_ptr()
    check(x * 2, t.cpu().numpy() * 2)
    z = (x + 1)
    loom.eval(z)
    tz = torch.from_dlpack(z)
    assert tz.data_ptr() == z._ptr and tz.is_cuda
    np.testing.assert_array_equal(tz.cpu().numpy(), t.cpu().numpy() + 1)
    tz2 = torch.as_tensor(z, device="cuda")  # __cuda_array_interface__
    assert tz2.data_ptr() == z._ptr
    t[0, 0] = 100.0  # shared memory: the write is seen
    torch.cuda.synchronize()
    assert float(x[0, 0]) == 100.0


@gpu
def test_cupy_both_ways():
    cp = pytest.importorskip("cupy")
    c = cp.arange(10, dtype=cp.float64)
    x = loom.asarray(c)
    assert x._ptr == c.data.ptr
    y = loom.from_dlpack(c)
    assert y._ptr == c.data.ptr
    z = loom.sin(x) + y
    loom.eval(z)
    cz = cp.asarray(z)  # __cuda_array_interface__
    assert cz.data.ptr == z._ptr
    cz2 = cp.from_dlpack(z)
    assert cz2.data.ptr == z._ptr
    np.testing.assert_allclose(cp.asnumpy(cz2), np.sin(np.arange(10.0)) + np.arange(10.0))


@gpu
def test_memory_does_not_grow():
    pool = loom.get_default_memory_pool()
    a = on_gpu(sample((1000,), "float32", seed=14))

    def work():
        for _ in range(50):
            b = loom.exp(a) * 2 + a
            b.get()

    work()
    used = pool.used_bytes()
    work()
    assert pool.used_bytes() <= used


# ---- the host stand-in (runs everywhere) -----------------------------------------------------------------------
def test_host_stand_in_api():
    d = loom.cuda.Device(0)
    with d:
        x = loom.ones(3)
    x.device.synchronize()
    s = loom.cuda.Stream()
    with s:
        y = x + 1
    s.synchronize()
    e1, e2 = loom.cuda.Event(), loom.cuda.Event()
    e1.record()
    e2.record()
    assert loom.cuda.get_elapsed_time(e1, e2) >= 0
    check(y, np.full(3, 2.0))
    pool = loom.get_default_memory_pool()
    assert pool.used_bytes() >= 0 and pool.total_bytes() >= pool.used_bytes()
    pool.free_all_blocks()
    s.close()
    with pytest.raises(ValueError, match="closed"):
        s.use()
    if not GPU:
        assert d.compute_capability == "host"
        assert x.__dlpack_device__() == (1, 0)
        with pytest.raises(ValueError, match="no CUDA device"):
            loom.cuda.Device(1)
        with pytest.raises(AttributeError):
            x.__cuda_array_interface__
