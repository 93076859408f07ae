"""Random expressions (hypothesis) against NumPy: elementwise trees over broadcastable float64 inputs,
optionally reduced."""
import warnings

import numpy as np
from hypothesis import given, settings, strategies as st

import loom
from conftest import check

UN = ["negative", "absolute", "exp", "sin", "tanh", "sqrt_abs", "square"]
BIN = ["add", "subtract", "multiply", "maximum", "minimum", "divide_safe"]


def apply(xp, op, *args):
    if op == "sqrt_abs":
        return xp.sqrt(xp.abs(args[0]))
    if op == "divide_safe":
        return args[0] / (xp.abs(args[1]) + 1.0)
    if op == "exp":
        return xp.exp(xp.tanh(args[0]))
    return getattr(xp, op)(*args)


exprs = st.recursive(
    st.integers(0, 2).map(lambda i: ("in", i)) | st.floats(-2, 2).map(lambda v: ("const", v)),
    lambda sub: st.tuples(st.sampled_from(UN), sub) | st.tuples(st.sampled_from(BIN), sub, sub),
    max_leaves=8)


def build(xp, e, ins):
    if e[0] == "in":
        return ins[e[1]]
    if e[0] == "const":
        return e[1]
    return apply(xp, e[0], *[build(xp, s, ins) for s in e[1:]])


@settings(max_examples=40, deadline=None)
@given(exprs, st.sampled_from([(4,), (3, 4), (2, 1, 4)]), st.sampled_from([None, 0, -1]), st.integers(0, 1000))
def test_random_expression(e, shape, axis, seed):
    rng = np.random.default_rng(seed)
    shapes = [shape, shape[-1:], (1,) * len(shape)]
    ins = [rng.uniform(-2, 2, size=s) for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(build(np, e, ins), dtype=np.float64)
    got = build(loom, e, [loom.asarray(x) for x in ins])
    if not isinstance(got, loom.ndarray):
        return
    want = np.broadcast_to(want, got.shape)
    check(got, want, rtol=1e-9)
    if axis is not None and got.ndim:
        check(got.sum(axis=axis), want.sum(axis=axis), rtol=1e-9)
