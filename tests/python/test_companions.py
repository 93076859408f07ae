"""Companions (python/src/eval.c): a 0-d pending array that shares computed work with the arrays being
evaluated is evaluated with them, so a training loop's per-step loss, kept alive beside the new parameters
and flushed later (a synchronize(), a print), does not compute the step's forward matrix product again.
Arrays that share nothing, or only read the evaluated values, stay pending."""
import numpy as np

import loom
from loom import _core


def _step(w, x, y):
    """One least-squares gradient step: 2 matrix products; the loss reads the forward product's residual."""
    d = x @ w - y
    loss = (d * d).sum()
    return loss, w - 0.01 * (x.T @ d)


def test_kept_loss_is_evaluated_with_the_parameters():
    r = np.random.default_rng(3)
    xn = r.standard_normal((64, 16)).astype(np.float32) / 4
    yn = r.standard_normal((64, 4)).astype(np.float32)
    wn = r.standard_normal((16, 4)).astype(np.float32)
    x, y, w = loom.asarray(xn), loom.asarray(yn), loom.asarray(wn)
    steps, losses = 6, []
    before = loom.stats()["library_calls"]
    for _ in range(steps):
        loss, w = _step(w, x, y)
        loom.eval(w)  # the loss, still pending and alive, shares x @ w - y: evaluated here too
        assert loss._node is None, "the kept loss was left pending"
        _core.flush()  # what Device.synchronize() does: nothing is left to compute
        losses.append(loss)
    calls = loom.stats()["library_calls"] - before
    assert calls == 2 * steps, f"{calls} matrix products for {steps} steps of 2"
    wr = wn.astype(np.float64)
    for i in range(steps):
        dr = xn.astype(np.float64) @ wr - yn
        np.testing.assert_allclose(float(losses[i]), (dr * dr).sum(), rtol=1e-4)
        wr = wr - 0.01 * (xn.T.astype(np.float64) @ dr)
    np.testing.assert_allclose(loom.asnumpy(w), wr, rtol=2e-4, atol=2e-5)


def test_unrelated_or_reading_only_scalars_stay_pending():
    a = loom.asarray(np.arange(12.0).reshape(3, 4))
    e = loom.exp(a)
    other = (a * 3).sum()       # shares only the input a: nothing computed twice
    later = e.sum()             # reads e itself, whose value eval keeps
    loom.eval(e)
    assert other._node is not None and later._node is not None
    np.testing.assert_allclose(float(other), 3 * np.arange(12.0).sum())
    np.testing.assert_allclose(float(later), np.exp(np.arange(12.0)).sum())


def test_scalar_sharing_a_computation_is_evaluated_and_right():
    an = np.linspace(-1, 3, 30).reshape(5, 6)  # a mean far from 0: a relative tolerance means something
    a = loom.asarray(an)
    t = loom.tanh(a) * 2
    mean = t.mean()             # shares tanh(a) * 2 with u
    u = t + 1
    loom.eval(u)
    assert mean._node is None
    np.testing.assert_allclose(float(mean), (np.tanh(an) * 2).mean(), rtol=1e-12)
    np.testing.assert_allclose(loom.asnumpy(u), np.tanh(an) * 2 + 1, rtol=1e-12)


def test_many_pending_scalars_and_empty_arrays():
    a = loom.asarray(np.arange(8.0))
    b = a * a
    scalars = [(b + k).sum() for k in range(20)]  # more than eval.c's MAX_COMPANIONS
    empty = loom.asarray(np.zeros((0,))) * 2
    loom.eval(b + 1, empty)
    for k, s in enumerate(scalars):
        assert float(s) == float(((np.arange(8.0) ** 2) + k).sum())
    assert loom.asnumpy(empty).shape == (0,)
