"""@loom.fuse: signatures, tuple outputs, NumPy inputs, scalars, reductions, control-flow errors."""
import numpy as np
import pytest

import loom
from conftest import check, sample


@loom.fuse
def expr(a, b, c, d):
    return a * b + c * d - loom.exp(a) / (d + 1.0)


def np_expr(a, b, c, d):
    return a * b + c * d - np.exp(a) / (d + 1.0)


def test_fuse_loom_inputs_single_kernel():
    args = [sample((1000,), "float64", i) for i in range(4)]
    largs = [loom.asarray(x) for x in args]
    r = expr(*largs)
    assert isinstance(r, loom.ndarray)
    check(r, np_expr(*args))
    assert loom.stats()["last_eval_kernels"] == 1
    c0 = loom.stats()["kernels_compiled"]
    for _ in range(5):
        check(expr(*largs), np_expr(*args))
    assert loom.stats()["kernels_compiled"] == c0


def test_fuse_numpy_in_numpy_out():
    args = [sample((50,), "float32", i) for i in range(4)]
    r = expr(*args)
    assert isinstance(r, np.ndarray)
    check(r, np_expr(*args))
    strided = [x[::2] for x in args]
    check(expr(*strided), np_expr(*strided))


def test_fuse_signatures():
    f = loom.fuse(lambda x, y: x + y * 2)
    check(f(loom.arange(4), loom.arange(4)), np.arange(4) * 3)
    check(f(loom.ones((2, 2), dtype="float32"), 1.5), np.ones((2, 2), np.float32) + 3)
    check(f(loom.ones(3, dtype="int8"), 2), np.ones(3, np.int8) + 4)
    assert len(f._cache) == 3


def test_fuse_tuple_and_reductions():
    @loom.fuse(kernel_name="stats")
    def stats(x):
        m = x.mean(axis=1, keepdims=True)
        return x - m, ((x - m) ** 2).sum(axis=1), x.max()

    a = sample((4, 6), "float64")
    d, v, mx = stats(loom.asarray(a))
    m = a.mean(axis=1, keepdims=True)
    check(d, a - m)
    check(v, ((a - m) ** 2).sum(axis=1))
    check(mx, a.max())
    assert stats.__name__ == "stats"


def test_fuse_indexing_and_reshape_in_trace():
    f = loom.fuse(lambda x: x[1:, ::2].T.reshape(-1) + x[0, 0])
    a = sample((3, 4), "float64")
    check(f(loom.asarray(a)), a[1:, ::2].T.reshape(-1) + a[0, 0])


def test_fuse_same_array_twice():
    f = loom.fuse(lambda x, y: x - y)
    a = loom.asarray(sample((5,), "float64"))
    b = loom.asarray(sample((5,), "float64", 1))
    check(f(a, a), np.zeros(5))
    check(f(a, b), a.get() - b.get())


def test_fuse_control_flow_error():
    @loom.fuse
    def bad(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="fuse"):
        bad(loom.ones(3))
    with pytest.raises(TypeError, match="fuse"):
        loom.fuse(lambda x: float(x))(loom.ones(()))


def test_fuse_errors_propagate():
    f = loom.fuse(lambda x, y: x + y)
    with pytest.raises(ValueError):
        f(loom.ones(3), loom.ones(4))
    with pytest.raises(TypeError):
        f(loom.ones(3), "a")


# ---- the C fast path (_core.Fused): keys, cache, fallbacks, result wrapping ----------------------------
def test_fuse_fast_path_alternating_signatures():
    f = loom.fuse(lambda x, y: x * y + 1)
    a32 = [loom.asarray(sample((7,), "float32", i)) for i in range(2)]
    a64 = [loom.asarray(sample((3, 2), "float64", i)) for i in range(2)]
    for _ in range(3):  # the last-key shortcut must never return the other signature's entry
        check(f(*a32), a32[0].get() * a32[1].get() + 1)
        check(f(*a64), a64[0].get() * a64[1].get() + 1)
        check(f(a32[0].get(), a32[1].get()), a32[0].get() * a32[1].get() + 1)
    assert len(f._cache) == 3
    f.clear_cache()
    assert len(f._cache) == 0
    check(f(*a32), a32[0].get() * a32[1].get() + 1)


def test_fuse_scalar_values_and_kinds_are_keyed():
    f = loom.fuse(lambda x, s: x / s)
    x = loom.ones(3)
    check(f(x, 0.0), np.full(3, np.inf))
    check(f(x, -0.0), np.full(3, -np.inf))  # -0.0 is its own signature
    check(f(x, 2.0), np.full(3, 0.5))
    check(f(x, 4), np.full(3, 0.25))
    check(f(x, True), np.ones(3))
    check(f(x, np.float32(2)), np.full(3, 0.5))  # NumPy scalar: the Python path
    check(f(x, np.float32(2)), np.full(3, 0.5))
    check(f(x, 2.0), np.full(3, 0.5))
    assert len(f._cache) == 6


def test_fuse_fallback_arguments():
    f = loom.fuse(lambda *xs: sum(xs[1:], xs[0]))
    many = [np.full(4, i, np.float64) for i in range(40)]  # more than the fast path's 32 arguments
    check(f(*many), np.full(4, sum(range(40)), np.float64))
    swapped = np.arange(5, dtype=">f8")  # non-native byte order: converted by the Python path
    check(f(swapped, np.ones(5)), np.arange(5.0) + 1)
    ro = np.arange(5.0)
    ro.flags.writeable = False
    check(f(ro, ro), np.arange(5.0) * 2)
    with pytest.raises(OverflowError):
        f(loom.ones(2, dtype="int64"), 2**70)
    assert f(1, 2) == 3  # no array: the function is called directly


def test_fuse_keywords_and_bad_arguments():
    f = loom.fuse(lambda x, y=1: x + y)
    with pytest.raises(TypeError, match="keyword"):
        f(loom.ones(2), y=2)
    with pytest.raises(TypeError, match="unsupported argument type"):
        f(loom.ones(2), [1, 2])
    with pytest.raises(TypeError):
        f(loom.ones(2), np.array(["a", "b"]))


def test_fuse_pending_and_strided_arguments():
    f = loom.fuse(lambda x, y: x - 2 * y)
    a, b = sample((6, 4), "float32", 0), sample((6, 4), "float32", 1)
    la, lb = loom.asarray(a), loom.asarray(b)
    check(f(la + 1, lb), (a + 1) - 2 * b)  # pending argument: evaluated first
    check(f(la.T, lb.T), a.T - 2 * b.T)
    check(f(la[::2], lb[::2]), a[::2] - 2 * b[::2])
    check(f(a[::-2], b[::2]), a[::-2] - 2 * b[::2])


def test_fuse_result_layouts():
    f = loom.fuse(lambda x: (x + 1, 7, x.sum()))
    a = sample((5,), "float64")
    r = f(loom.asarray(a))
    assert isinstance(r, tuple) and len(r) == 3 and r[1] == 7
    check(r[0], a + 1)
    check(r[2], a.sum())
    rn = f(a)
    assert isinstance(rn[0], np.ndarray) and isinstance(rn[2], np.ndarray)
    assert loom.fuse(lambda x: None)(loom.ones(2)) is None
    assert loom.fuse(lambda x: ())(loom.ones(2)) == ()
    g = loom.fuse(lambda x: 3.5)
    assert g(loom.ones(2)) == 3.5 and g(np.ones(2)) == 3.5


def test_fuse_nested_and_retry_after_error():
    inner = loom.fuse(lambda x: x * 2)
    outer = loom.fuse(lambda x: inner(x) + 1)
    a = sample((4,), "float64")
    check(outer(loom.asarray(a)), a * 2 + 1)
    check(inner(loom.asarray(a)), a * 2)
    f = loom.fuse(lambda x, y: x + y)
    with pytest.raises(ValueError):
        f(loom.ones(3), loom.ones(4))
    assert len(f._cache) == 0
    check(f(loom.ones(3), loom.ones(3)), np.full(3, 2.0))


def test_fuse_reference_counts_balance():
    import sys
    f = loom.fuse(lambda x, y, s: (x * y + s, x - y))
    a, b = loom.asarray(sample((100,), "float32")), sample((100,), "float32", 1)
    la, lb = loom.asarray(b), loom.ones(100, dtype="float32")
    for _ in range(5):
        f(a, la, 2.0), f(b, b, 2.0)
    before = [sys.getrefcount(o) for o in (a, b, la, f)]
    for _ in range(2000):
        r = f(a, la, 2.0)
        r = f(b, b, 2.0)
    del r
    assert [sys.getrefcount(o) for o in (a, b, la, f)] == before
    assert f.__name__ == "<lambda>" and "loom.fuse" in repr(f)
