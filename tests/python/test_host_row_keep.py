"""Host row kernels keep a costly value of a reduce phase for their map phase (codegen/lower_host_keep.c):
softmax's exp(x - max) is stored into the output row by the sum phase and read back by the map phase that
divides it by the sum, instead of being computed twice. Values against NumPy (float16, float32, float64,
rows of 1 / 16 / 1000 / 4097 points, inf and NaN, 3-d rows, masks), the one-exp-per-point IR, and the
cases the plan must leave alone (an output that cannot hold the value exactly, two outputs)."""
import numpy as np
import pytest

import loom
from conftest import ON_GPU

host = pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")


def softmax(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def close(got, want, tol):
    got = loom.asnumpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("dtype,tol", [("float16", 3e-3), ("float32", 2e-6), ("float64", 1e-13)])
@pytest.mark.parametrize("shape", [(7, 1), (50, 16), (33, 1000), (3, 4097), (2, 3, 64)])
def test_softmax_rows_match_numpy(dtype, tol, shape):
    r = np.random.default_rng(sum(shape))
    x = (r.standard_normal(shape) * 4).astype(dtype)
    x.reshape(-1, shape[-1])[0, 0] = np.inf   # a row with +inf: NaN where NumPy gives NaN
    x.reshape(-1, shape[-1])[-1, -1] = np.nan
    with np.errstate(all="ignore"):
        want = softmax(np, x)
    close(softmax(loom, loom.asarray(x)), want, tol)


def test_masked_and_scaled_rows():
    r = np.random.default_rng(1)
    x = r.standard_normal((64, 300)).astype(np.float32)
    m = r.random((64, 300)) > 0.3
    m[5] = False  # a fully masked row: 0/0
    xm = np.where(m, x * np.float32(0.125), np.float32(-np.inf))
    with np.errstate(all="ignore"):
        want = softmax(np, xm)
    close(softmax(loom, loom.where(loom.asarray(m), loom.asarray(x) * 0.125, -np.inf)), want, 2e-6)


def test_plan_leaves_other_kernels_alone():
    r = np.random.default_rng(2)
    x = r.standard_normal((40, 513)).astype(np.float32)
    g = loom.asarray(x)
    # a float32 value into a float16 output: the output cannot hold it, nothing is kept
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    close(loom.astype(softmax(loom, g), loom.float16), (e / e.sum(axis=-1, keepdims=True)).astype(np.float16), 3e-3)
    # two outputs of the map phase: the kernel keeps recomputing
    ge = loom.exp(g - loom.max(g, axis=-1, keepdims=True))
    s = loom.sum(ge, axis=-1, keepdims=True)
    a, b = loom.eval(ge / s, ge * s)
    close(a, e / e.sum(axis=-1, keepdims=True), 2e-6)
    close(b, e * e.sum(axis=-1, keepdims=True), 2e-6)


@host
def test_one_exp_per_point_in_the_ir():
    x = loom.asarray(np.ones((64, 1024), np.float32))
    f = loom.fuse(kernel_name="hkeep_softmax_ir")(lambda x: softmax(loom, x))
    with loom.capture_dumps("llvm", echo=False) as d:
        loom.asnumpy(f(x))
    text = d.text
    # the sum phase computes exp, the map phase reads it back: one loop's exps, i.e. a vector body's (up to
    # 4 interleaved copies), an epilogue vector's and the scalar tail's; SLEEF's expf calls, or the rint of
    # Loom's inline exp (codegen/math_exp.c). Recomputed in the map phase: twice as many
    calls = [ln for ln in text.splitlines()
             if "call" in ln and ("expf" in ln or "llvm.rint" in ln) and "declare" not in ln]
    assert 1 <= len(calls) <= 6, "\n".join(calls)
