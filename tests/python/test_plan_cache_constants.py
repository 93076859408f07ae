# SPDX-License-Identifier: Apache-2.0
"""Plans shared across values of constants (runtime/plan_cache.c): a Python scalar is a graph constant,
and a constant that reaches the kernels only as a launch word lets graphs with other values run the same
plan with that word rewritten; a constant a pass read (a fold rule fired on it, a baked shift amount,
exponent or divisor, a matched call epilogue, a one-hot index) pins the plan to its value. Each
expression is evaluated on fresh arrays with a sequence of values that includes the ones the rules fire
on (0, 1, -1, powers of two, NaN, inf, shift amounts past the width), forwards and backwards in one
process so every plan meets every value, and every result is compared with NumPy's."""
import math

import numpy as np
import pytest

import loom

RNG = np.random.default_rng(23)


def plans():
    return loom.stats()["plans_made"]


F64 = lambda: (RNG.standard_normal((6, 7)),)  # noqa: E731
F32 = lambda: (RNG.standard_normal((5, 9)).astype(np.float32),)  # noqa: E731
F16 = lambda: (RNG.standard_normal(67).astype(np.float16),)  # noqa: E731
I32 = lambda: (RNG.integers(-1000, 1000, (4, 9)).astype(np.int32),)  # noqa: E731
U16 = lambda: (RNG.integers(0, 65535, 40).astype(np.uint16),)  # noqa: E731
TWO = lambda: (RNG.standard_normal((8, 5)), RNG.standard_normal((8, 5)))  # noqa: E731
CPLX = lambda: (RNG.standard_normal(9) + 1j * RNG.standard_normal(9),)  # noqa: E731
SPECIAL = [2.5, 1, 0, -1, 2, 0.5, -0.0, 4, 3, float("inf"), float("nan"), 1e-300, -7.25, 1]

# (name, fn(xp, *arrays, *constants), inputs, constant tuples, exact)
CASES = [
    ("mul", lambda xp, x, c: x * c, F64, [(v,) for v in SPECIAL], True),
    ("add", lambda xp, x, c: x + c, F64, [(v,) for v in SPECIAL], True),
    ("div", lambda xp, x, c: x / c, F64, [(v,) for v in SPECIAL], True),
    ("rsub", lambda xp, x, c: c - x, F32, [(v,) for v in SPECIAL], True),
    ("axpy", lambda xp, x, y, a, b: a * x + b * y, TWO, [(1, 0), (2, 3), (0, 1), (0.5, 0.5), (1, 1), (-1, 2), (3, 3)], True),
    ("same value twice", lambda xp, x, c: x * c + c, F64, [(1,), (2,), (0,), (1,), (-3,)], True),
    ("const-only", lambda xp, x, a, b: x * (xp.asarray(a) * 0 + b), F64, [(1, 2), (3, 4), (0, 0.5)], True),
    ("float16", lambda xp, x, c: x * c - c, F16, [(v,) for v in SPECIAL] + [(1e-8,), (70000.0,)], True),
    ("float32 div", lambda xp, x, c: x / c, F32, [(v,) for v in SPECIAL], True),
    ("int add mul", lambda xp, x, a, b: x * a + b, I32, [(1, 0), (3, 4), (0, 0), (-1, 7), (1, 0), (2, -5)], True),
    ("int floordiv mod", lambda xp, x, a: x // a + x % a, I32, [(1,), (3,), (-4,), (7,), (1,), (2,)], True),
    ("int shifts", lambda xp, x, a: (x << a) ^ (x >> a), I32, [(0,), (1,), (5,), (31,), (32,), (40,), (3,), (0,)], True),
    ("uint16 bits", lambda xp, x, a: (x >> a) & (x + a), U16, [(1,), (15,), (16,), (2,), (20,), (1,)], True),
    ("pow", lambda xp, x, p: xp.abs(x) ** p, F64, [(2,), (3,), (0.5,), (1.7,), (2,), (-1,), (0,), (1,)], False),
    ("clip", lambda xp, x, lo, hi: xp.clip(x, lo, hi), F64, [(-1, 1), (0, 0.5), (-2, -1), (0, 0), (-1, 1)], True),
    ("where", lambda xp, x, t, a: xp.where(x > t, x, a), F64, [(0, 0), (0.5, -1), (1, 0), (-1, float("nan"))], True),
    ("maximum", lambda xp, x, c: xp.maximum(x, c), F32, [(0,), (0.5,), (-1,), (0,)], True),
    ("compare", lambda xp, x, c: (x >= c) | (x == c), F64, [(0,), (1,), (float("nan"),), (-0.5,), (0,)], True),
    ("exp scale", lambda xp, x, c, s: xp.exp(-(x - c) ** 2 * s), F64, [(0, 1), (1, 0.5), (0, 2), (0, 1), (-2, 0)], False),
    ("sum scaled", lambda xp, x, c: (x * c).sum(axis=1) + c, F64, [(1,), (2,), (0,), (-1,), (1,), (0.25,)], False),
    ("mean rows", lambda xp, x, c: (x - c).mean(axis=0) * c, F32, [(0,), (1,), (2,), (0,), (-3,)], False),
    ("complex", lambda xp, z, c: z * c + c, CPLX, [(1,), (2,), (1j,), (0.5 - 2j,), (1,), (0,)], False),
    ("many constants", lambda xp, x, *c: sum(x * c[i] + i for i in range(len(c))), F64,
     [tuple(range(1, 71)), tuple(range(3, 73)), tuple(0.5 * k for k in range(70))], False),
]


def check(name, got, want, exact):
    want = np.asarray(want)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    if exact:
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12 if want.dtype in (np.float64, np.complex128) else 2e-6, atol=1e-12,
                                   equal_nan=True, err_msg=name)


@pytest.mark.parametrize("name,fn,make,values,exact", CASES, ids=[c[0] for c in CASES])
def test_values_through_shared_plans(name, fn, make, values, exact):
    """Every value, after every other: forwards then backwards, fresh arrays each call."""
    with np.errstate(all="ignore"):
        for consts in list(values) + list(reversed(values)):
            data = make()
            want = fn(np, *data, *consts)
            got = fn(loom, *(loom.asarray(d) for d in data), *consts)
            check(f"{name} {consts}", loom.asnumpy(got), want, exact)


def test_learning_rate_loop_plans_once():
    """The issue's case: a new scalar each step shares the plan (no pass run, no compile)."""
    p, g = RNG.standard_normal(300), RNG.standard_normal(300)
    lp, lg = loom.asarray(p), loom.asarray(g)
    (lp - 0.01 * lg).get()
    before = plans()
    for step in range(200):
        lr = 0.01 / math.sqrt(step + 2)
        got = (lp - lr * lg).get()
        np.testing.assert_array_equal(got, p - lr * g)
    assert plans() - before == 0


def test_adam_bias_correction_plans_once():
    """Adam's bias corrections change every step: one plan for all the steps after the first."""
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 1e-3
    p, g, m, v = (RNG.standard_normal(257) for _ in range(4))
    v = np.abs(v)

    def step(xp, p, g, m, v, t):
        m2 = b1 * m + (1 - b1) * g
        v2 = b2 * v + (1 - b2) * g * g
        upd = lr * (m2 / (1 - b1 ** t)) / (xp.sqrt(v2 / (1 - b2 ** t)) + eps)
        return p - upd, m2, v2

    counts = []
    for t in range(2, 30):
        before = plans()
        lp, lg, lm, lv = (loom.asarray(a) for a in (p, g, m, v))
        got = step(loom, lp, lg, lm, lv, t)
        want = step(np, p, g, m, v, t)
        for gv, wv in zip(got, want):
            np.testing.assert_allclose(loom.asnumpy(gv), wv, rtol=1e-13, atol=0)
        counts.append(plans() - before)
    assert sum(counts[1:]) == 0, counts


def test_fuse_scalars_share_plans():
    """@loom.fuse with scalar arguments: one plan for every value."""

    @loom.fuse
    def f(x, a, b):
        return loom.tanh(x * a) + b

    x = RNG.standard_normal(100).astype(np.float32)
    lx = loom.asarray(x)
    f(lx, 0.5, 1.0).get()
    before = plans()
    for k in range(50):
        a, b = 0.1 * (k + 3), -0.25 * k
        np.testing.assert_allclose(f(lx, a, b).get(), np.tanh(x * np.float32(a)) + np.float32(b), rtol=2e-6, atol=1e-6)
    assert plans() - before <= 1


def test_onehot_offset_values():
    """A one-hot sum whose index has a constant offset (the one-hot pass reads it): every offset right."""
    n, k = 12, 10
    x = RNG.standard_normal((n, k))
    labels = RNG.integers(0, k - 3, n)
    lx, ll = loom.asarray(x), loom.asarray(labels)
    for off in (0, 1, 2, 0, 3, 1):
        want = np.where(np.arange(k)[None, :] == labels[:, None] + off, x, 0).sum(axis=1)
        got = loom.where(loom.arange(k)[None, :] == ll[:, None] + off, lx, 0).sum(axis=1)
        np.testing.assert_allclose(loom.asnumpy(got), want, rtol=1e-15, atol=0)


def test_matmul_epilogue_values():
    """A product's epilogue takes constants into the library call (alpha, a ReLU's 0): every value right."""
    a, b = RNG.standard_normal((9, 6)), RNG.standard_normal((6, 5))
    la, lb = loom.asarray(a), loom.asarray(b)
    for c in (0, 0.5, 0, -1, 2, 0):
        np.testing.assert_allclose(loom.asnumpy(loom.maximum(la @ lb, c)), np.maximum(a @ b, c), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(loom.asnumpy((la @ lb) * c), (a @ b) * c, rtol=1e-13, atol=1e-13)
