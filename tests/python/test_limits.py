"""Size limits of the Python API as tested numbers (README "Limits"): a pending graph of 10^5 chained
operations (the automatic evaluation bound lifted) built and evaluated in a thread with a 512 KiB
stack, one loom.eval of 2,000 outputs, a sum of 1,000 inputs; each checked against NumPy."""
import threading

import numpy as np

import loom


def _in_thread(fn, stack=512 * 1024):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            out["error"] = e

    old = threading.stack_size(stack)
    try:
        t = threading.Thread(target=run)
        t.start()
        t.join()
    finally:
        threading.stack_size(old)
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_deep_chain_small_stack():
    n = 100_000
    old = loom.set_graph_bound(10**9)
    try:
        x0 = np.linspace(-3, 3, 257)

        def build():
            x = loom.asarray(x0)
            for i in range(n):  # the constants repeat: the kernels of the chain are cached
                x = x * 0.5 + (i % 5)
            return x.get()
        got = _in_thread(build)
    finally:
        loom.set_graph_bound(old)
    want = x0.copy()
    for i in range(n):
        want = want * 0.5 + (i % 5)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_many_outputs():
    a = np.arange(1000, dtype=np.float64)
    x = loom.asarray(a)
    outs = [x + i for i in range(2000)]
    loom.eval(*outs)
    for i in (0, 1, 999, 1999):
        np.testing.assert_array_equal(outs[i].get(), a + i)


def test_many_inputs():
    ins = [np.full(300, i, dtype=np.int64) + np.arange(300) for i in range(1000)]
    s = loom.asarray(ins[0])
    for v in ins[1:]:
        s = s + loom.asarray(v)
    np.testing.assert_array_equal(s.get(), np.sum(ins, axis=0))
