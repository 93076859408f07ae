"""loom.cuda's stream identities (null, per-thread default, made, external through the CUDA stream
protocol), `with`-block nesting, host callbacks, and pinned host memory (allocation, the buffer protocol,
pointer arithmetic, the pool's reuse and figures). The expectations are CuPy's documented behaviour;
the data read back through NumPy is compared with what was written. Runs with or without a GPU."""
import gc
from typing import Any, cast

import numpy as np
import pytest

import loom
import loom.cuda as cuda


# ---- streams ---------------------------------------------------------------------------------------------------
def test_default_streams_compare_by_kind() -> None:
    made = cuda.Stream()
    assert cuda.Stream(null=True) == cuda.Stream.null and cuda.Stream(ptds=True) == cuda.Stream.ptds
    assert cuda.Stream.null != cuda.Stream.ptds
    assert made == made and made != cuda.Stream() and made != cuda.Stream.null
    assert len({cuda.Stream(), cuda.Stream(), cuda.Stream.null, cuda.Stream(null=True)}) == 3
    assert cuda.Stream.null.ptr == 0
    assert cuda.Stream.ptds._h is None and cuda.Stream(ptds=True)._h is None  # default streams own no handle
    assert cuda.Stream.ptds.ptr == (2 if cuda.is_available() and not cuda.runtime.is_hip else 0)
    with pytest.raises(ValueError, match="pick one"):
        cuda.Stream(null=True, ptds=True)


def test_with_blocks_restore_the_enclosing_block() -> None:
    s1, s2, s3 = cuda.Stream(), cuda.Stream(), cuda.Stream()
    cuda.Stream.ptds.use()
    try:
        assert cuda.get_current_stream() is cuda.Stream.ptds
        with s1:
            assert cuda.get_current_stream() is s1
            s2.use()
            with s3:
                x = loom.arange(6) * 2
                assert cuda.get_current_stream() is s3
            assert cuda.get_current_stream() is s1  # s2, made current by use(), is forgotten
        assert cuda.get_current_stream() is cuda.Stream.null
        assert loom.asnumpy(x).tolist() == [0, 2, 4, 6, 8, 10]
    finally:
        cuda.Stream.null.use()


def test_host_callbacks_run_in_order_after_the_work() -> None:
    s = cuda.Stream()
    seen: list = []
    for i in range(5):
        y = loom.full(3, float(i)) + 1
        host = y.get(stream=s)
        s.add_callback(lambda st, status, arg: seen.append((st is s, status, arg[0], float(arg[1][0]))), (i, host))
        s.launch_host_func(lambda arg: seen.append(arg), i)
    s.synchronize()
    assert seen == [x for i in range(5) for x in ((True, 0, i, i + 1.0), i)]


class _ProtocolStream:
    def __init__(self, got: object) -> None:
        self.got = got

    def __cuda_stream__(self) -> object:
        return self.got


def test_stream_protocol() -> None:
    s = cuda.Stream()
    assert s.__cuda_stream__() == (0, s.ptr) and cuda.Stream.null.__cuda_stream__() == (0, 0)
    wrapper = _ProtocolStream((0, s.ptr))
    e = cuda.Stream.from_external(wrapper)
    assert e.ptr == s.ptr and e.device_id == -1 and e._foreign_stream_ref is wrapper
    e.synchronize()
    for bad, words in ((5, "2-tuple"), ((0,), "2-tuple"), (("0", 1), r"\(int, int\)"), ((1, 0), "unsupported version")):
        with pytest.raises(TypeError, match=words):
            cuda.Stream.from_external(_ProtocolStream(bad))
    with pytest.raises(TypeError, match="does not implement"):
        cuda.Stream.from_external(object())


# ---- pinned host memory --------------------------------------------------------------------------------------------
def test_pinned_memory_round_trip() -> None:
    p: Any = cuda.alloc_pinned_memory(6 * 4)
    assert isinstance(p, cuda.PinnedMemoryPointer)
    assert p.size >= 24 and p.ptr != 0 and int(p) == p.ptr
    a = np.frombuffer(cast(Any, p), dtype=np.float32, count=6).reshape(2, 3)
    a[...] = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    assert np.asarray(memoryview(cast(Any, p))[:24]).view(np.float32).tolist() == [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]
    np.testing.assert_array_equal(loom.asnumpy(loom.asarray(a)[:, ::2] * 2), (a[:, ::2] * 2))
    q: Any = p + 8
    assert isinstance(q, cuda.PinnedMemoryPointer) and q.ptr == p.ptr + 8 and q.size == p.size - 8
    assert np.frombuffer(cast(Any, q), dtype=np.float32, count=1)[0] == -0.5 and (q - 8).ptr == p.ptr and (8 + p).ptr == q.ptr
    z = cuda.alloc_pinned_memory(0)
    assert z.size == 0 and len(bytes(z)) == 0


def test_pinned_pool_reuses_blocks_by_size() -> None:
    pool = cuda.PinnedMemoryPool()
    p1 = pool.malloc(1000)
    ptr1 = p1.ptr
    assert isinstance(p1.mem, cuda.PooledPinnedMemory) and p1.size == 1024
    assert (pool.used_bytes(), pool.free_bytes(), pool.n_free_blocks()) == (1024, 0, 0)
    del p1
    gc.collect()
    assert (pool.used_bytes(), pool.free_bytes(), pool.n_free_blocks()) == (0, 1024, 1)
    p2 = pool.malloc(600)  # rounds to 1024 as well: the kept block again
    assert p2.ptr == ptr1 and pool.n_free_blocks() == 0
    p3 = pool.malloc(2000)
    assert p3.ptr != p2.ptr and pool.total_bytes() == 1024 + 2048
    mem = p3.mem
    mem.free()
    mem.free()  # a second free does nothing
    assert pool.n_free_blocks() == 1
    pool.free_all_blocks()
    assert pool.n_free_blocks() == 0 and pool.free_bytes() == 0
    assert not isinstance(pool.malloc(0).mem, cuda.PooledPinnedMemory)
    with pytest.raises(ValueError, match=">= 0"):
        pool.malloc(-1)


def test_pinned_allocator_choice() -> None:
    default = cuda.get_default_pinned_memory_pool()
    try:
        cuda.set_pinned_memory_allocator(None)  # no pool: a block of exactly the size asked
        p = cuda.alloc_pinned_memory(10)
        assert type(p.mem) is cuda.PinnedMemory and p.size == 10
        sizes: list = []

        def counting(n: int) -> Any:
            sizes.append(n)
            return default.malloc(n)
        cuda.set_pinned_memory_allocator(counting)
        assert cuda.alloc_pinned_memory(3).size == 512 and sizes == [3]
    finally:
        cuda.set_pinned_memory_allocator(default.malloc)
