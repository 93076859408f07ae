"""The tanh-GELU epilogue of a matrix product (passes/calls.c "tanh-GELU"; the library's GELU / GELU_BIAS:
runtime/host_blas.c on the host, cuBLASLt's on NVIDIA, runtime/gpu/gpu_blas.c).

gelu(x @ w + b) in the tanh form is one library call with no elementwise kernel after it, however it is
spelled (v * v * v or v ** 3, the 0.5 first or last, the sigmoid form v / (1 + exp(-2u))), in float32
and float16, against a float64 NumPy reference. What is not fused stays a kernel after the call and
keeps its own value: the erf GELU (it differs from the tanh one by up to 4.7e-4), a wrong constant,
bfloat16 (its constants cannot tell the two GELUs apart), float64 (cuBLASLt's GELU epilogue is off by
~1e-8 relative there: H200, 2026-12-03) and a pre-activation that is also returned. Runs on the arrays' device: the host here, the GPU on the H200 (scripts/gpu_all.sh).
"""
import math
from typing import Any, Callable

import numpy as np
import pytest

import loom

C1, C2 = 0.7978845608028654, 0.044715
RNG = np.random.default_rng(15)


def _erf(xp: Any, v: Any) -> Any:
    return np.vectorize(math.erf)(v) if xp is np else loom.erf(v)  # loom.erf: scipy.special.erf


FORMS: dict[str, Callable[[Any, Any], Any]] = {
    "v*v*v": lambda xp, v: 0.5 * v * (1 + xp.tanh(C1 * (v + C2 * v * v * v))),
    "v**3": lambda xp, v: 0.5 * v * (1.0 + xp.tanh(C1 * (v + C2 * v ** 3))),
    "x*0.5 first": lambda xp, v: v * 0.5 * (1.0 + xp.tanh(math.sqrt(2 / math.pi) * (v + C2 * (v ** 3)))),
    "cdf times v": lambda xp, v: v * (0.5 * (1.0 + xp.tanh(C1 * v * (1 + C2 * v * v)))),
    "sigmoid": lambda xp, v: v / (1 + xp.exp(-2 * C1 * (v + C2 * v * v * v))),
}


def gelu_ref(v: np.ndarray) -> np.ndarray:
    return 0.5 * v * (1 + np.tanh(C1 * (v + C2 * v ** 3)))


def operands(dtype: Any, m: int = 48, k: int = 40, n: int = 56) -> tuple:
    x, w, b = RNG.standard_normal((m, k)), RNG.standard_normal((k, n)) / np.sqrt(k), RNG.standard_normal(n)
    return x.astype(dtype), w.astype(dtype), b.astype(dtype)


def run(body: Callable[..., Any], *arrays: np.ndarray) -> tuple:
    xs = [loom.asarray(a) for a in arrays]
    before = loom.stats()["library_calls"]
    out = body(*xs)
    res = out if isinstance(out, tuple) else (out,)
    loom.eval(*res)
    st = loom.stats()
    got = tuple(np.asarray(loom.asnumpy(r)) for r in res)
    return got if isinstance(out, tuple) else got[0], st["library_calls"] - before, st["last_eval_kernels"]


def tol(dtype: Any) -> float:
    return {np.float64: 1e-12, np.float32: 1e-5, np.float16: 4e-3}[dtype]


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_tanh_gelu_is_one_call(form: str, dtype: Any) -> None:
    x, w, b = operands(dtype)
    got, calls, kernels = run(lambda x_, w_, b_: FORMS[form](loom, x_ @ w_ + b_), x, w, b)
    v = x.astype(np.float64) @ w.astype(np.float64) + b.astype(np.float64)
    want = gelu_ref(v)
    assert got.dtype == dtype
    assert calls == 1 and kernels == 0, f"{form} {dtype.__name__}: {calls} calls, {kernels} kernels (fused: 1, 0)"
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol(dtype), atol=tol(dtype) * 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_gelu_without_bias_and_batched(dtype: Any) -> None:
    a, w = RNG.standard_normal((3, 20, 24)).astype(dtype), (RNG.standard_normal((24, 16)) / 5).astype(dtype)
    got, calls, kernels = run(lambda a_, w_: FORMS["v**3"](loom, a_ @ w_), a, w)
    assert calls == 1 and kernels == 0
    want = gelu_ref(a.astype(np.float64) @ w.astype(np.float64))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol(dtype), atol=tol(dtype) * 2)


def test_erf_gelu_is_not_the_tanh_epilogue() -> None:
    x, w, b = operands(np.float32)
    got, calls, kernels = run(lambda x_, w_, b_: (lambda v: 0.5 * v * (1 + _erf(loom, v / math.sqrt(2))))(x_ @ w_ + b_),
                              x, w, b)
    v = x.astype(np.float64) @ w.astype(np.float64) + b.astype(np.float64)
    want = 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2)))
    assert calls == 1 and kernels >= 1, "the erf GELU runs as a kernel after the call"
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5)
    assert np.max(np.abs(gelu_ref(v) - want)) > 1e-4  # the two GELUs differ more than the tolerance


@pytest.mark.parametrize("case", ["wrong constant", "bfloat16", "float64", "pre-activation returned", "tanh of v only"])
def test_not_a_gelu_stays_a_kernel(case: str) -> None:
    dtype: Any = np.float64 if case == "float64" else np.float32
    if case == "bfloat16":
        import ml_dtypes  # noqa: PLC0415
        dtype = ml_dtypes.bfloat16
    x, w, b = operands(dtype)
    v64 = x.astype(np.float64) @ w.astype(np.float64) + b.astype(np.float64)
    if case == "wrong constant":
        body = lambda x_, w_, b_: (lambda v: 0.5 * v * (1 + loom.tanh(C1 * (v + 0.05 * v ** 3))))(x_ @ w_ + b_)  # noqa: E731
        want = 0.5 * v64 * (1 + np.tanh(C1 * (v64 + 0.05 * v64 ** 3)))
    elif case == "tanh of v only":
        body = lambda x_, w_, b_: (lambda v: 0.5 * v * (1 + loom.tanh(v)))(x_ @ w_ + b_)  # noqa: E731
        want = 0.5 * v64 * (1 + np.tanh(v64))
    elif case == "pre-activation returned":
        def body(x_: Any, w_: Any, b_: Any) -> Any:
            v = x_ @ w_ + b_
            return FORMS["v**3"](loom, v), v
        want = gelu_ref(v64)
    else:
        body = lambda x_, w_, b_: FORMS["v**3"](loom, x_ @ w_ + b_)  # noqa: E731
        want = gelu_ref(v64)
    got, calls, kernels = run(body, x, w, b)
    if case == "pre-activation returned":
        np.testing.assert_allclose(got[1].astype(np.float64), v64, rtol=1e-5, atol=1e-5)
        got = got[0]
    assert calls == 1 and kernels >= 1, f"{case}: the activation is a kernel after the call ({kernels} kernels)"
    t = 3e-2 if case == "bfloat16" else 1e-12 if case == "float64" else 1e-5
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=t, atol=t)
