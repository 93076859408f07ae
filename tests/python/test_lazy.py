"""Laziness: fusion counted in kernels, aliasing and in-place semantics, loops that do not recompile."""
import gc

import numpy as np
import pytest

import loom

# Host-array semantics (NumPy views, host DLPack): on a GPU machine arrays live on the GPU, where
# CuPy's rules apply instead (tests/python/test_gpu.py covers them).
HOST_ONLY = pytest.mark.skipif(loom.cuda.is_available(), reason="host arrays only; see test_gpu.py")
from conftest import check, sample


def kernels_of(fn):
    before = loom.stats()["kernels_launched"]
    fn()
    return loom.stats()["kernels_launched"] - before


def test_ten_op_expression_is_one_kernel():
    a, b = loom.asarray(sample((1000,), "float64")), loom.asarray(sample((1000,), "float64", 1))
    loom._core.flush()

    def run():
        y = a * b + 1.0
        y = loom.exp(y) - b
        y = y * y + a
        y = loom.sqrt(loom.abs(y)) / (b * b + 1.0)
        y = loom.where(y > 0.5, y, -y)
        y.get()

    assert kernels_of(run) == 1


def test_eval_many_is_one_evaluation():
    a = loom.asarray(sample((500,), "float64"))
    loom._core.flush()
    x, y = a * 2 + 1, a * 2 - 1
    loom.eval(x, y)
    assert loom.stats()["last_eval_kernels"] <= 2
    assert not x._lazy and not y._lazy


def test_results_are_lazy_until_observed():
    x = loom.ones(4) + 1
    assert x._lazy
    repr(x)
    assert not x._lazy


def test_inplace_after_pending_read():
    a = loom.asarray(np.arange(5.0))
    b = a * 2          # pending, reads a
    a += 100           # must not change b
    a[0] = -1
    check(b, np.arange(5.0) * 2)
    check(a, np.array([-1, 101, 102, 103, 104.0]))


def test_setitem_view_aliasing():
    a = loom.asarray(np.arange(10.0))
    v = a[2:5]
    pending = v + 0
    a[...] = 0
    check(v, np.zeros(3))
    check(pending, np.array([2.0, 3, 4]))
    a[::2] = loom.arange(5.0)
    want = np.zeros(10)
    want[::2] = np.arange(5.0)
    check(a, want)
    a[1:] = a[:-1]  # overlapping self-assignment
    w2 = want.copy()
    w2[1:] = want[:-1]
    check(a, w2)


def test_lazy_inplace_keeps_identity():
    x = loom.ones(3) * 2
    alias = x
    x += 1
    assert alias is x
    check(alias, np.full(3, 3.0))


def test_fill_and_out():
    a = loom.zeros(4)
    b = a + 1
    a.fill(7)
    check(b, np.ones(4))
    check(a, np.full(4, 7.0))
    loom.add(a, 1, out=a)
    check(a, np.full(4, 8.0))


def test_loop_does_not_recompile():
    x = loom.asarray(sample((100,), "float64"))
    for _ in range(3):
        x = x * 0.5 + 1.0
        x.get()
    s0 = loom.stats()
    for _ in range(20):
        x = x * 0.5 + 1.0
        x.get()
    s1 = loom.stats()
    assert s1["kernels_compiled"] == s0["kernels_compiled"]
    assert s1["cache_hits"] > s0["cache_hits"] or s1["kernels_launched"] > s0["kernels_launched"]


def test_graph_bound_in_long_loop():
    old = loom.set_graph_bound(64)
    try:
        x = loom.asarray(np.zeros(10))
        for _ in range(500):
            x = x + 1.0
        g = loom._core.current_graph()
        assert g is None or g.node_count() <= 70
        check(x, np.full(10, 500.0))
    finally:
        loom.set_graph_bound(old)


def test_eager_mode():
    with loom.eager():
        y = loom.ones(3) * 3
        assert not y._lazy
    z = loom.ones(3) * 3
    assert z._lazy
    old = loom.set_eager(True)
    assert old is False
    assert not (loom.ones(2) + 1)._lazy
    loom.set_eager(False)


def test_view_of_pending_sees_writes():
    x = loom.ones((2, 3)) * 2
    t = x.T
    x += 1
    check(t, np.full((3, 2), 3.0))


@HOST_ONLY
@pytest.mark.host_conversion
def test_memory_does_not_grow():
    import tracemalloc
    a = loom.asarray(sample((1000,), "float64"))

    def work():
        y = loom.exp(a) * 2 + a
        s = y.sum()
        float(s)
        z = y[::2].copy()
        z += 1
        np.asarray(z)
        z[1:3] = 0
        return loom.asarray(np.arange(10))

    for _ in range(50):
        work()
    gc.collect()
    tracemalloc.start()
    snap0 = tracemalloc.get_traced_memory()[0]
    for _ in range(300):
        work()
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - snap0
    tracemalloc.stop()
    assert grown < 200_000, grown


def test_refcounts_balance():
    import sys
    a = loom.asarray(np.arange(4.0))
    base = sys.getrefcount(a)
    for _ in range(100):
        b = a + 1
        b.get()
        c = a[1:]
        del b, c
    loom._core.flush()
    gc.collect()
    assert sys.getrefcount(a) <= base + 1


@pytest.mark.parametrize("bound", [1, 2, 3, 5, 1000])
def test_constant_only_arrays_join_the_current_device(bound: int) -> None:
    """Arrays computed from constants only (a == None, a NumPy scalar operand, their broadcasts) are made on
    the current device when a flush past the graph bound or loom.eval materializes them, and a 0-d one stays
    a constant that fits any device: however the lazy graph is cut, they mix with the device's arrays (on a
    GPU they were made on the host: "operands are on two devices", "input node ... is on host:0")."""
    home = loom.asarray(np.zeros(1))._device
    old = loom.config.graph_bound
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    try:
        loom.config.graph_bound = bound
        pending = [loom.asarray(np.ones(3)) + i for i in range(bound)]  # earlier work, still pending
        a = loom.asarray(h)
        eq_none = a == None  # noqa: E711 (a constant-only broadcast)
        ne_none = loom.zeros((0, 2)) != None  # noqa: E711
        loom.eval(eq_none, *pending)
        assert eq_none._device == home and ne_none._device == home
        check(loom.logical_or(eq_none, a > 5), np.logical_or(h == None, h > 5))  # noqa: E711
        check(loom.logical_and(ne_none, loom.ones((0, 2), dtype=bool)), np.zeros((0, 2), bool))
        s = (a.astype(np.float32) * np.float32(3.3)).astype(np.float16) + np.float16(0.5)  # 0-d constants
        check(s, (h * np.float32(3.3)).astype(np.float16) + np.float16(0.5))
        z = loom.ones((0,), dtype="int8")
        assert bool(loom.all(loom.equal(z, loom.asarray(1, dtype="int8"))))
        check(pending[-1], np.ones(3) + bound - 1)
    finally:
        loom.config.graph_bound = old
