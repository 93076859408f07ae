# SPDX-License-Identifier: Apache-2.0
"""Plans shared between graphs of the same structure (runtime/plan_cache.c), from Python: an expression
evaluated again and again on fresh arrays (NumPy data copied in each call, as real loops do) must plan
once per structure and layout (loom.stats()['plans_made']) and give NumPy's values every time; slices at
other offsets (other data alignment, same layout) reuse the plan and must still be right; expressions
that differ only in which array goes where must not be confused. Arrays live on the default device, so
a GPU run checks the GPU's launcher too."""
import numpy as np
import pytest

import loom

RNG = np.random.default_rng(11)


def plans():
    return loom.stats()["plans_made"]


def run_fresh(fn, make_inputs, rounds=6):
    """fn on fresh loom arrays each round; returns (plans made after the first round, results, inputs)."""
    outs, ins = [], []
    before = None
    for r in range(rounds):
        data = make_inputs()
        got = fn(*(loom.asarray(d) for d in data))
        got = tuple(g.get() for g in got) if isinstance(got, tuple) else got.get()
        outs.append(got)
        ins.append(data)
        if r == 0:
            before = plans()
    return plans() - before, outs, ins


def softmax(xp, x):
    e = xp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# (name, fn(xp, *arrays) written once for NumPy and loom, fresh NumPy inputs)
CASES = [
    ("affine", lambda xp, x: x * 2.5 + 1, lambda: (RNG.standard_normal((16, 16)),)),
    ("broadcast outer", lambda xp, a, b: xp.exp(-(a[:, None] - b[None, :]) ** 2),
     lambda: (RNG.standard_normal(33), RNG.standard_normal(17))),
    ("sum rows", lambda xp, x: x.sum(axis=1), lambda: (RNG.standard_normal((40, 70)).astype(np.float32),)),
    ("sum cols keepdims", lambda xp, x: (x * x).sum(axis=0, keepdims=True), lambda: (RNG.standard_normal((50, 9)),)),
    ("mean all", lambda xp, x: x.mean(), lambda: (RNG.standard_normal(1000),)),
    ("var rows", lambda xp, x: x.var(axis=1), lambda: (RNG.standard_normal((12, 300)),)),
    ("argmax rows", lambda xp, x: x.argmax(axis=1), lambda: (RNG.standard_normal((20, 31)),)),
    ("softmax", softmax, lambda: (RNG.standard_normal((8, 100)),)),
    ("where clip", lambda xp, x, y: xp.where(x > y, x, y * 2).clip(-1, 1),
     lambda: (RNG.standard_normal((7, 5)), RNG.standard_normal((7, 5)))),
    ("int floordiv", lambda xp, x, y: x // y + (x & 7), lambda: (RNG.integers(-1000, 1000, 64), RNG.integers(1, 50, 64))),
    ("float16", lambda xp, x: x * x - 1, lambda: (RNG.standard_normal(129).astype(np.float16),)),
    ("complex", lambda xp, z: z * z.conj() + 1j, lambda: (RNG.standard_normal(10) + 1j * RNG.standard_normal(10),)),
    ("transposed", lambda xp, x, y: x.T + y, lambda: (RNG.standard_normal((6, 4)), RNG.standard_normal((4, 6)))),
    ("strided", lambda xp, x: x[::2, 1:] * 3, lambda: (RNG.standard_normal((9, 11)),)),
    ("0-d", lambda xp, x, y: x * y + 1, lambda: (np.array(RNG.standard_normal()), np.array(2.0))),
    ("empty", lambda xp, x: x * 2 + 1, lambda: (np.zeros((0, 5)),)),
    ("two outputs", lambda xp, x: (x + 1, x.sum()), lambda: (RNG.standard_normal(31),)),
]


def check(got, want):
    want = np.asarray(want)
    tol = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 1e-5}.get(want.dtype, 1e-12)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)  # absolute too: float32 sums near 0
    assert np.asarray(got).dtype == want.dtype


@pytest.mark.parametrize("name,fn,make", CASES, ids=[c[0] for c in CASES])
def test_fresh_inputs_plan_once_and_match_numpy(name, fn, make):
    extra, outs, ins = run_fresh(lambda *a: fn(loom, *a), make)
    for got, data in zip(outs, ins):
        want = fn(np, *data)
        for g, w in zip(got, want) if isinstance(want, tuple) else ((got, want),):
            check(g, w)
    assert extra == 0, f"{name}: {extra} plans made for arrays of the same structure after the first call"


@pytest.mark.parametrize("dt", [np.int8, np.float32, np.float64])
@pytest.mark.parametrize("n", [1000, 4097])
def test_offsets_share_the_plan_and_stay_right(dt, n):
    """a[off:off + n] * 3 - 1 for off = 0..7 of one base array: the same layout at eight alignments."""
    base = (RNG.integers(-50, 50, n + 8)).astype(dt)
    lb = loom.asarray(base)
    loom.eval(lb)
    first = None
    for off in range(8):
        v = lb[off:off + n]
        got = (v * 3 - 1).get()
        np.testing.assert_array_equal(got, base[off:off + n] * dt(3) - dt(1))
        if off == 0:
            first = plans()
    assert plans() == first


def test_swapped_arrays_are_not_confused():
    x, y = RNG.standard_normal(50), RNG.standard_normal(50)
    for _ in range(3):
        lx, ly = loom.asarray(x), loom.asarray(y)
        np.testing.assert_array_equal((lx - 2 * ly).get(), x - 2 * y)
        np.testing.assert_array_equal((ly - 2 * lx).get(), y - 2 * x)
        np.testing.assert_array_equal((lx - 2 * lx).get(), x - 2 * x)
        x, y = y + 1, x - 1


def test_new_scalars_and_shapes_stay_right():
    """Other constants, shapes or dtypes are other keys: values follow them."""
    for k in range(5):
        x = RNG.standard_normal(10 + k % 2)
        s = 0.5 * k
        np.testing.assert_allclose((loom.asarray(x) * s + k).get(), x * s + k, rtol=1e-15)
        xf = x.astype(np.float32)
        np.testing.assert_allclose((loom.asarray(xf) * 2).get(), xf * 2, rtol=1e-7)
