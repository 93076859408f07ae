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
