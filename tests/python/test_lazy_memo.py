"""Repeated lazy expressions (issue 11): a loop that builds the same expression every step reuses the graph's
nodes (the builder's call memo, frontend/op_memo.c) and the evaluation plan kept for them. Expressions that
differ in one structural detail only - a scalar's kind (int, float, bool) or bits (0.0 and -0.0), a broadcast
shape, a reduction axis, a view's strides - must never share a node or a plan: each is built and evaluated
several times, interleaved in one graph, and compared with NumPy every time. Also loom.eval's return values
(it is the C function now)."""
import numpy as np
import pytest

import loom

rng = np.random.default_rng(11)


def _check(got, want):
    got = got.get() if isinstance(got, loom.ndarray) else got
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


def test_scalar_kind_and_bits():
    xi = rng.integers(-50, 50, 37).astype(np.int32)
    xf = rng.standard_normal(37).astype(np.float32)
    li, lf = loom.asarray(xi), loom.asarray(xf)
    for _ in range(4):  # the same structure each round: later rounds hit the memo and the kept plans
        cases = [
            (li * 3, xi * 3), (li * 3.0, xi * 3.0), (li * True, xi * True),   # int32, float64, int32
            (li / 2, xi / 2), (li // 2, xi // 2), (li // 2.0, xi // 2.0),  # float64, int32, float64
            (lf * 0.0, xf * 0.0), (lf * -0.0, xf * -0.0),                      # signs of zero differ
            (lf + np.float64(1.5), xf + np.float64(1.5)),                      # a strong float64 scalar
            (lf + 1.5, xf + 1.5),                                              # a weak one: float32
            (li < 3, xi < 3), (li < 3.5, xi < 3.5),
        ]
        loom.eval(*[c[0] for c in cases])
        for got, want in cases:
            _check(got, want)


def test_nan_and_big_scalars():
    x = rng.standard_normal(9)
    lx = loom.asarray(x)
    for _ in range(3):
        _check(lx + float("nan"), x + float("nan"))
        _check(lx * float("inf"), x * float("inf"))
        _check(lx - 2 ** 62, x - 2 ** 62)
    i8 = loom.asarray(np.arange(-3, 4, dtype=np.int8))
    for _ in range(3):  # an error is raised again every time (errors are never remembered)
        with pytest.raises(OverflowError):
            i8 + 300
        _check(i8 + 100, np.arange(-3, 4, dtype=np.int8) + 100)


def test_broadcast_shapes():
    a = rng.standard_normal((3, 1)).astype(np.float32)
    b, c, d = (rng.standard_normal(s).astype(np.float32) for s in ((1, 4), (4,), (3, 4)))
    la, lb, lc, ld = map(loom.asarray, (a, b, c, d))
    e = np.float32(0.0)
    le = loom.asarray(e)
    for _ in range(3):
        got = [la + lb, la + lc, la + ld, la + le, la * 2 + lb]
        loom.eval(*got)
        for g, w in zip(got, [a + b, a + c, a + d, a + e, a * 2 + b]):
            _check(g, w)


def test_reduction_axes():
    x = rng.standard_normal((5, 6, 7))
    lx = loom.asarray(x)
    for _ in range(3):
        got = [(lx * 2).sum(axis=0), (lx * 2).sum(axis=1), (lx * 2).sum(axis=2), (lx * 2).sum(axis=(0, 2)),
               (lx * 2).sum(axis=1, keepdims=True), (lx * 2).sum()]
        want = [(x * 2).sum(axis=0), (x * 2).sum(axis=1), (x * 2).sum(axis=2), (x * 2).sum(axis=(0, 2)),
                (x * 2).sum(axis=1, keepdims=True), np.asarray((x * 2).sum())]
        loom.eval(*got)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.get(), w, rtol=1e-12, atol=1e-12)
            assert g.shape == w.shape


def test_view_strides():
    x = rng.standard_normal((8, 6)).astype(np.float32)
    lx = loom.asarray(x)
    for _ in range(3):
        views = [(lx[::2], x[::2]), (lx[1::2], x[1::2]), (lx[:4], x[:4]), (lx.T[:, :4], x.T[:, :4]),
                 (lx[:, ::-2], x[:, ::-2]), (lx[::2, ::3], x[::2, ::3])]
        got = [v * 2 + 1 for v, _ in views]
        loom.eval(*got)
        for g, (_, w) in zip(got, views):
            _check(g, w * 2 + 1)


def test_bound_result_then_written_input():
    """A pending array built on an evaluated one reads its memory (node bind); a write into an input
    unbinds it: the same expression built again must give NumPy's values of the new input."""
    x = rng.standard_normal(16)
    lx = loom.asarray(x.copy())
    for step in range(3):
        y = lx * 2
        z = y + 1
        y.get()                # evaluates y; z is built on it
        again = lx * 2 + 1     # the same calls as z: the same node
        loom.eval(z, again)
        _check(z, x * 2 + 1)
        _check(again, x * 2 + 1)
        lx[...] = x + step + 1  # a write into the input
        x = x + step + 1
        _check(lx * 2 + 1, x * 2 + 1)


def test_eval_returns_its_arguments():
    a, b = loom.asarray(np.arange(3.0)), loom.asarray(np.arange(4))
    p = a * 2
    assert loom.eval(p) is p
    q, r = a + 1, b - 1
    t = loom.eval(q, r)
    assert isinstance(t, tuple) and len(t) == 2 and t[0] is q and t[1] is r
    assert loom.eval() == ()
    assert loom.eval(3, "x") == (3, "x")  # non-arrays pass through, as before
    _check(p, np.arange(3.0) * 2)
    _check(r, np.arange(4) - 1)


def test_recycled_array_objects_start_fresh():
    """Dead arrays' memory is reused for new ones (array.c's free list): nothing of the old object may
    show - its view base, its weak references, its value, its pending state."""
    import gc
    import weakref
    x = loom.asarray(np.arange(12.0).reshape(3, 4))
    for step in range(300):
        v = x[1:]                   # a view: .base is x
        assert v.base is x
        r = weakref.ref(v)
        del v
        assert r() is None          # the dead array is gone for its weak reference
        fresh = [x * step + k for k in range(5)]  # made from the kept memory
        for k, f in enumerate(fresh):
            assert f.base is None
            assert r() is None
            np.testing.assert_array_equal(f.get(), np.arange(12.0).reshape(3, 4) * step + k)
        del fresh
    gc.collect()
    assert all(a.base is None for a in [x + 1, -x, abs(x)])
