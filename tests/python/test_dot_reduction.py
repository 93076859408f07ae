"""Dot products (matmul with M = N = 1) as a fused reduction over K (frontend/matmul.c): dot, vdot, inner,
@ of 1-d operands (no library call is made) and batched (B, 1, K) @ (B, K, 1) (a library call: batched
vectors stay calls), against a complex128 / float64 reference computed here, with the error bound of a
K-term sum in the dtype; strided, negative-stride, empty and NaN / inf operands; an elementwise prologue
fuses into the one kernel."""
from typing import Any

import numpy as np
import pytest

import loom
from conftest import normal

RNG = np.random.default_rng(2026)
EPS = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-15, "complex64": 1e-6, "complex128": 1e-15}


def rand(shape: Any, dtype: str) -> np.ndarray:
    return normal(RNG, shape, dtype)


def check(got: Any, a: np.ndarray, b: np.ndarray, want: Any, dtype: str) -> None:
    g = np.asarray(got.get())
    w = np.asarray(want)
    assert g.shape == w.shape
    # |sum - exact| <= eps * sqrt(K) * sum |a_i b_i| (pairwise / lane sums), with slack
    k = max(a.shape[-1] if a.ndim else 1, 1)
    bound = EPS[dtype] * 4 * np.sqrt(k) * np.sum(np.abs(a.astype(np.complex128)) * np.abs(b.astype(np.complex128)),
                                                  axis=-1) + 1e-300
    assert np.all(np.abs(g.astype(np.complex128) - w) <= bound + EPS[dtype] * np.abs(w))


def calls() -> int:
    return int(loom.stats()["library_calls"])


@pytest.mark.parametrize("dtype", list(EPS))
@pytest.mark.parametrize("n", [0, 1, 7, 1000, 1 << 17])
def test_vector_dot(dtype: str, n: int) -> None:
    a, b = rand(n, dtype), rand(n, dtype)
    A, B = loom.asarray(a), loom.asarray(b)
    loom.eval(A, B)
    c0 = calls()
    want = np.dot(a.astype(np.complex128), b.astype(np.complex128))
    r = loom.dot(A, B)
    assert r.dtype == np.dot(a, b).dtype and r.shape == ()
    check(r, a, b, want if dtype.startswith("complex") else want.real, dtype)
    check(A @ B, a, b, want if dtype.startswith("complex") else want.real, dtype)
    check(loom.inner(A, B), a, b, want if dtype.startswith("complex") else want.real, dtype)
    vd = np.vdot(a.astype(np.complex128), b.astype(np.complex128))
    check(loom.vdot(A, B), np.conj(a), b, vd if dtype.startswith("complex") else vd.real, dtype)
    assert calls() == c0


def test_batched_dots_and_views() -> None:
    a, b = rand((5, 1, 300), "float32"), rand((5, 300, 1), "float32")
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    check(loom.asarray(a) @ loom.asarray(b), a[:, 0, :], b[:, :, 0], want[:, 0, 0][:, None, None] * np.ones((5, 1, 1)),
          "float32")
    x = rand(3001, "float64")
    X = loom.asarray(x)
    for s in (slice(None, None, 3), slice(None, None, -1), slice(5, 2000, 7)):
        got = loom.dot(X[s], X[s][::-1])
        assert abs(float(got.get()) - float(np.dot(x[s], x[s][::-1]))) <= 1e-12 * np.sum(np.abs(x[s] * x[s][::-1]))


def test_mixed_dtypes_and_prologue_fuse() -> None:
    a, b = rand(4096, "float32"), rand(4096, "float64")
    A, B = loom.asarray(a), loom.asarray(b)
    r = loom.dot(A, B)
    assert r.dtype == np.float64
    assert abs(float(r.get()) - float(np.dot(a.astype(np.float64), b))) < 1e-9
    d = A - B.astype(np.float32)
    got = loom.dot(d, d)
    loom.eval(got)
    assert int(loom.stats()["last_eval_kernels"]) == 1  # the subtraction, the cast and the dot: one kernel
    dd = a - b.astype(np.float32)
    assert abs(float(got.get()) - float(np.dot(dd.astype(np.float64), dd.astype(np.float64)))) < 1e-3


def test_nan_inf_and_int() -> None:
    a = np.array([np.inf, 1.0, 2.0], np.float32)
    b = np.array([0.0, 1.0, 3.0], np.float32)
    assert np.isnan(float(loom.dot(loom.asarray(a), loom.asarray(b)).get()))  # inf * 0 is NaN, as in NumPy
    assert float(loom.dot(loom.asarray(a), loom.asarray(b[::-1])).get()) == np.inf
    assert np.isnan(float(loom.dot(loom.asarray(np.array([np.nan, 1], np.float64)), loom.asarray(np.ones(2))).get()))
    i = np.array([2**62, 2**62, 5], np.int64)
    assert int(loom.dot(loom.asarray(i), loom.asarray(np.array([2, 2, 1], np.int64))).get()) == int(np.dot(i, [2, 2, 1]))
