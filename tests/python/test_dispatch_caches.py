"""test_dispatch_caches.py: what the per-call shortcuts of the dispatch path must not change (issues 11/12).

- An array used by several ops of one graph enters it once (ArrayObject.in_serial / in_node): the node must
  follow the array's value when the array is written in place between ops, when it takes another value
  (in-place operators), and across graphs.
- The buffer protocol's shape and strides are made per export (not kept in the array object): every
  layout NumPy can express comes back as NumPy sees it, and an export outlives the array object.
- @loom.fuse called again with the same arrays skips the input rebinding: results must follow new data in
  the same arrays, other arrays, and other strides of the same memory.
Every result is compared with NumPy computed on copies taken here.
"""
import gc

import numpy as np
import pytest

import loom


def host(a):
    return np.asarray(a.get() if hasattr(a, "get") else a)


def test_input_node_follows_inplace_writes():
    xn = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = loom.asarray(xn)
    loom.eval(x)
    y = x * 2 + x  # x enters the graph once, used twice
    x[...] = 5.0  # a write into x: pending y is computed first from the old x
    z = x * 3 + x  # the same array again, after the write
    np.testing.assert_array_equal(host(y), xn * 2 + xn)
    np.testing.assert_array_equal(host(z), np.full((3, 4), 20.0, np.float32))


def test_input_node_follows_become_and_graphs():
    xn = np.linspace(-1, 1, 10).astype(np.float64)
    x = loom.asarray(xn)
    loom.eval(x)
    a = x + 1
    loom.eval(a)
    ref = xn.copy()
    for step in range(4):
        x += 0.5  # x takes another value (a new node / buffer)
        ref = ref + 0.5
        b = x * x - x
        np.testing.assert_allclose(host(b), ref * ref - ref, rtol=1e-12)
        if step % 2:
            loom.eval(b)  # and a new graph after some steps
    np.testing.assert_allclose(host(a), xn + 1)


def test_input_node_many_graphs():
    old = loom.set_graph_bound(8)  # small graphs: each chain crosses several
    try:
        xn = np.arange(1, 7, dtype=np.float64)
        x = loom.asarray(xn)
        loom.eval(x)
        y, ref = x, xn
        for i in range(30):
            y = y * 0.5 + x
            ref = ref * 0.5 + xn
        np.testing.assert_allclose(host(y), ref, rtol=1e-12)
    finally:
        loom.set_graph_bound(old)


@pytest.mark.parametrize("make", [
    lambda n: n,
    lambda n: n[::2],
    lambda n: n.T,
    lambda n: n[1:, ::-1],
    lambda n: n[0, 0],
    lambda n: n[:0],
])
def test_buffer_export_geometry(make):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    want = make(base)
    a = make(loom.asarray(base))
    loom.eval(a)
    if a._device[0] != 0:
        pytest.skip("the buffer protocol exports host arrays only")
    m = memoryview(loom._core.exportable(a))
    got = np.asarray(m)
    assert m.shape == want.shape
    if want.size:
        np.testing.assert_array_equal(got, want)
        assert got.strides == np.ascontiguousarray(want).strides or got.strides == want.strides
    del a
    gc.collect()
    assert m.shape == want.shape  # the export's geometry is its own
    if want.size:
        np.testing.assert_array_equal(np.asarray(m), want)
    m.release()


def test_fuse_same_arguments_new_data():
    @loom.fuse
    def f(a, b):
        return a * b + 1.0

    an = np.arange(8, dtype=np.float32)
    bn = np.full(8, 2.0, np.float32)
    a, b = loom.asarray(an), loom.asarray(bn)
    for _ in range(3):  # the same arrays: no rebinding after the first call
        np.testing.assert_array_equal(host(f(a, b)), an * bn + 1)
    a[...] = 3.0  # new data in the same array
    np.testing.assert_array_equal(host(f(a, b)), np.full(8, 7.0, np.float32))
    c = loom.asarray(an + 10)  # another array, then the first again
    np.testing.assert_array_equal(host(f(c, b)), (an + 10) * bn + 1)
    np.testing.assert_array_equal(host(f(a, b)), np.full(8, 7.0, np.float32))
    wide = loom.asarray(np.arange(16, dtype=np.float32))
    np.testing.assert_array_equal(host(f(wide[::2], b)), np.arange(16, dtype=np.float32)[::2] * bn + 1)
    np.testing.assert_array_equal(host(f(wide[1::2], b)), np.arange(16, dtype=np.float32)[1::2] * bn + 1)
