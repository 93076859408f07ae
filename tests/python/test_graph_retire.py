"""A graph is retired after an evaluation once it is more than half full, even with arrays still pending:
a discarded pending result (a training loop's per-step loss) must never be evaluated behind the user's back,
and above all not recompute the matrix products its step already ran."""
import numpy as np
import loom


def _step(w, x, y):
    h = x @ w
    diff = h - y
    loss = (diff * diff).sum()  # pending, discarded below
    grad = x.T @ diff
    return loss, w - 0.01 * grad


def test_discarded_pending_results_are_not_evaluated():
    r = np.random.default_rng(0)
    xn = r.standard_normal((16, 8)).astype(np.float32)
    yn = r.standard_normal((16, 4)).astype(np.float32)
    wn = r.standard_normal((8, 4)).astype(np.float32)
    x, y, w = loom.asarray(xn), loom.asarray(yn), loom.asarray(wn)
    loom.eval(w)
    steps = 60  # many graph bounds' worth of nodes (each step adds ~12)
    before = loom.stats()["library_calls"]
    kept = None  # the first step's loss stays alive and pending to the end
    for _ in range(steps):
        loss, w = _step(w, x, y)
        loom.eval(w)
        if kept is None:
            kept = loss
    calls = loom.stats()["library_calls"] - before
    assert calls == 2 * steps, f"{calls} matrix products for {steps} steps of 2: pending losses were evaluated"
    # the reference: the same loop in float64 NumPy
    wr = wn.astype(np.float64)
    for _ in range(steps):
        wr = wr - 0.01 * (xn.T.astype(np.float64) @ (xn.astype(np.float64) @ wr - yn))
    np.testing.assert_allclose(loom.asnumpy(w), wr, rtol=2e-4, atol=2e-4)
    # the pending loss kept from step 1 is still right when it is finally read
    d1 = xn.astype(np.float64) @ wn - yn
    assert kept is not None
    np.testing.assert_allclose(float(kept), (d1 * d1).sum(), rtol=1e-4)
