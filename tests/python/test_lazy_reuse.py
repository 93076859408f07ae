"""A pending array evaluated on its own (for a view, a printed value, a .T) is not computed again by the
arrays built on it before: its graph node reads the evaluated memory from then on (loom_node_bind). The
values must stay NumPy's, also when the evaluated array is written in place before the others are read: the
write unbinds the node (it is computed from its sources again) instead of evaluating the whole graph."""
import numpy as np
import pytest

import loom

rng = np.random.default_rng(7)


def _calls():
    return loom.stats()["library_calls"]


def _launched():
    return loom.stats()["kernels_launched"]


def test_product_taken_by_a_view_is_not_computed_again():
    x, w = rng.standard_normal((48, 32)), rng.standard_normal((32, 40))
    lx, lw = loom.asarray(x), loom.asarray(w)
    h = loom.maximum(lx @ lw, 0.0)          # pending
    out = h @ lw.T                          # pending, built on h
    calls = _calls()
    ht = h.T                                # evaluates h (a view needs its memory): one product
    assert _calls() - calls == 1
    g = ht @ lx[:, :40]                     # h.T @ x: one more product
    loom.eval(out, g)
    # out's graph reads h's memory: h @ w.T and h.T @ x are the only products left (2), not 3
    assert _calls() - calls == 3
    hn = np.maximum(x @ w, 0.0)
    np.testing.assert_allclose(out.get(), hn @ w.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g.get(), hn.T @ x[:, :40], rtol=1e-12, atol=1e-12)


def test_elementwise_chain_reads_the_evaluated_value():
    a = rng.standard_normal((64, 33)).astype(np.float32)
    la = loom.asarray(a)
    e = loom.exp(la) * 2.0                  # pending
    s = (e + 1.0).sum(axis=1)               # pending, built on e
    t = e[::2]                              # a view: evaluates e
    launched = _launched()
    loom.eval(s)
    # one kernel (the row sum of e + 1), reading e's memory: no exp recomputed in a second kernel either way,
    # but the reuse must not cost a kernel more
    assert _launched() - launched == 1
    np.testing.assert_allclose(s.get(), (np.exp(a) * 2 + 1).sum(axis=1), rtol=2e-6)
    np.testing.assert_allclose(t.get(), (np.exp(a) * 2)[::2], rtol=2e-6)


def test_write_into_the_evaluated_array_keeps_pending_values():
    # NumPy evaluates eagerly: y was computed from x's value before the write
    x0 = rng.standard_normal(50)
    lx = loom.asarray(x0)
    h = lx * 3.0                           # pending
    y = h + 1.0                            # pending, built on h
    _ = h.T                                # evaluates h; y's node now reads h's memory
    h[...] = -5.0                          # in place: y must still be 3 x + 1
    h[3] = 100.0
    np.testing.assert_allclose(y.get(), x0 * 3.0 + 1.0, rtol=1e-15)
    np.testing.assert_array_equal(h.get()[:3], [-5.0, -5.0, -5.0])
    assert h.get()[3] == 100.0


def test_inplace_op_on_the_evaluated_array_keeps_pending_values():
    x0 = np.arange(12, dtype=np.int32).reshape(3, 4)
    lx = loom.asarray(x0)
    h = lx * 2                             # pending
    y = h.sum(axis=0)                      # pending
    ht = h.T                               # evaluates h
    h += 7                                 # NumPy: y and ht were taken before
    np.testing.assert_array_equal(y.get(), (x0 * 2).sum(axis=0))
    np.testing.assert_array_equal(ht.get(), (x0 * 2 + 7).T)  # a view sees the write, as in NumPy
    np.testing.assert_array_equal(h.get(), x0 * 2 + 7)


@pytest.mark.parametrize("shape", [(0, 5), (), (1,)])
def test_edge_shapes(shape):
    a = rng.standard_normal(shape)
    la = loom.asarray(a)
    h = la * 2.0
    y = h - 1.0
    loom.eval(h)
    np.testing.assert_allclose(y.get(), a * 2.0 - 1.0)
    np.testing.assert_allclose(h.get(), a * 2.0)


def test_nan_and_integer_overflow_values_survive_reuse():
    a = np.array([np.nan, np.inf, -np.inf, 1.0, -0.0])
    h = loom.asarray(a) * np.float64(2)
    y = loom.isnan(h) | (h > 1)
    loom.eval(h)
    np.testing.assert_array_equal(y.get(), np.isnan(a * 2) | (a * 2 > 1))
    i = np.array([127, -128, 5], dtype=np.int8)
    hi = loom.asarray(i) + np.int8(1)      # wraps as NumPy's int8
    yi = hi * np.int8(2)
    loom.eval(hi)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(yi.get(), (i + np.int8(1)) * np.int8(2))


def test_write_into_the_evaluated_array_does_not_evaluate_the_graph():
    """A write into the evaluated array only undoes the reuse: arrays still pending stay pending (no flush)."""
    x0 = rng.standard_normal(64)
    lx = loom.asarray(x0)
    h = lx * 2.0
    y = loom.exp(h) + 1.0                  # pending, built on h
    z = y * 3.0                            # pending
    _ = h.T                                # evaluates h only
    h[...] = 0.0
    assert y._node is not None and z._node is not None  # still pending: the write flushed nothing
    np.testing.assert_allclose(z.get(), (np.exp(x0 * 2.0) + 1.0) * 3.0, rtol=1e-14)


def test_reuse_after_a_write_reads_new_values_in_new_expressions():
    x0 = np.arange(6.0)
    lx = loom.asarray(x0)
    h = lx + 1.0
    y = h * 10.0                           # pending on h's old value
    loom.eval(h)
    h[0] = 100.0                           # h changes: y keeps the old value, new expressions see the new one
    w = h * 10.0
    np.testing.assert_array_equal(y.get(), (x0 + 1.0) * 10.0)
    want = (x0 + 1.0) * 10.0
    want[0] = 1000.0
    np.testing.assert_array_equal(w.get(), want)


def test_a_repeated_expression_reuses_its_plan():
    # Binding a result drops the graph's plans; a graph with nothing left pending binds nothing, so the
    # same lazy expression built and evaluated again (a training loop's step) skips the passes. Found by
    # bench_overhead.py: 33 us per call of a 10-op expression on 1000 elements where 4 us is the cost.
    x = rng.standard_normal(1000).astype(np.float32)
    lx = loom.asarray(x)

    def ten_ops(v):
        return ((((v * 2 + 1) * v - 3) / 4 + v) * 0.5 - v) * 1.25 + 2

    want = ten_ops(x.astype(np.float64))
    for _ in range(3):  # the first calls may make plans (and retire a full graph)
        np.testing.assert_allclose(loom.eval(ten_ops(lx)).get(), want, rtol=1e-5)
    plans = loom.stats()["plans_made"]
    for _ in range(20):
        got = loom.eval(ten_ops(lx))
    np.testing.assert_allclose(got.get(), want, rtol=1e-5)
    assert loom.stats()["plans_made"] - plans <= 1


def test_binding_still_happens_while_arrays_are_pending():
    # the reuse of test_product_taken_by_a_view_is_not_computed_again needs the binding: a pending array
    # built on the evaluated one reads its memory (one kernel for the rest, not a recomputation)
    a = rng.standard_normal(4096).astype(np.float32)
    la = loom.asarray(a)
    y = loom.exp(la) * 3.0
    z = y + 1.0                  # pending on y
    loom.eval(y)
    plans = loom.stats()["plans_made"]
    np.testing.assert_allclose(loom.eval(z).get(), np.exp(a.astype(np.float64)) * 3 + 1, rtol=1e-5)
    assert loom.stats()["plans_made"] - plans == 1


def test_a_result_no_pending_array_reads_is_not_kept():
    # an unrelated pending array (built before) must not make every evaluation bind its result: the graph
    # would keep each result's memory alive and drop its plans on every call
    x = rng.standard_normal(10000).astype(np.float32)
    lx = loom.asarray(x)
    bystander = loom.exp(lx) * 2.0          # pending all along
    loom.eval((lx * 2 + 1) * lx)
    plans = loom.stats()["plans_made"]
    for _ in range(20):
        got = loom.eval((lx * 2 + 1) * lx)
    assert loom.stats()["plans_made"] - plans == 0
    np.testing.assert_allclose(got.get(), (x * 2.0 + 1) * x, rtol=1e-6)
    np.testing.assert_allclose(bystander.get(), np.exp(x.astype(np.float64)) * 2, rtol=1e-5)
