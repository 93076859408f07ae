"""Matrix-vector products (M @ v, u @ M, batched, transposed / strided matrices) as fused reductions over K
(frontend/matmul.c) against a float64 / complex128 reference, and column reductions whose prologue reads a
per-row operand (u[:, None] * x summed over axis 0: the host's outer-axis walk, codegen/lower.c
cg_reduce_reads_outer, now takes them; before, each column strode down every row) for several ops, dtypes
and shapes, including empty, one row and NaN."""
from typing import Any

import numpy as np
import pytest

import loom
from conftest import normal

RNG = np.random.default_rng(77)


def rand(shape: Any, dtype: str) -> np.ndarray:
    return normal(RNG, shape, dtype)


def near(got: Any, want: np.ndarray, mag: np.ndarray, dtype: str, k: int) -> None:
    g = np.asarray(got.get())
    assert g.shape == want.shape, (g.shape, want.shape)
    eps = {"float16": 1e-3, "float32": 1.2e-7, "float64": 2.3e-16, "complex64": 1.2e-7, "complex128": 2.3e-16}[dtype]
    assert np.all(np.abs(g.astype(np.complex128) - want) <= 8 * eps * np.sqrt(max(k, 1)) * mag + 1e-30)


SHAPES = [(1, 1), (1, 9), (9, 1), (37, 53), (2048, 64), (64, 3000), (0, 5), (5, 0)]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", SHAPES)
def test_matvec_and_vecmat(dtype: str, shape: Any) -> None:
    m, k = shape
    a, v, u = rand((m, k), dtype), rand(k, dtype), rand(m, dtype)
    A, V, U = loom.asarray(a), loom.asarray(v), loom.asarray(u)
    a128, v128, u128 = (x.astype(np.complex128) for x in (a, v, u))
    r = A @ V
    assert r.dtype == (a @ v).dtype
    near(r, a128 @ v128, np.abs(a128) @ np.abs(v128), dtype, k)
    near(U @ A, u128 @ a128, np.abs(u128) @ np.abs(a128), dtype, m)
    near(A.T @ U, a128.T @ u128, np.abs(a128.T) @ np.abs(u128), dtype, m)  # transposed matrix
    near(loom.dot(A, V), a128 @ v128, np.abs(a128) @ np.abs(v128), dtype, k)


def test_batched_strided_and_mixed() -> None:
    a = rand((4, 33, 70), "float32")
    v = rand(70, "float64")
    A = loom.asarray(a)
    r = A @ loom.asarray(v)
    assert r.dtype == np.float64 and r.shape == (4, 33)
    want = a.astype(np.float64) @ v
    assert np.allclose(r.get(), want, rtol=0, atol=1e-12 * np.abs(a).sum())
    s = a[:, ::2, ::-3]
    w = rand(s.shape[1], "float32")
    got = loom.asarray(w) @ A[:, ::2, ::-3]
    assert np.allclose(got.get(), w.astype(np.float64) @ s.astype(np.float64), rtol=1e-5, atol=1e-4)
    b = rand((4, 70, 1), "float32")
    assert np.allclose((A @ loom.asarray(b)).get(), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("op", ["sum", "max", "min", "argmax", "mean", "var"])
@pytest.mark.parametrize("shape", [(1, 7), (300, 17), (4096, 48), (129, 1000)])
def test_column_reduction_with_row_operand(op: str, shape: Any) -> None:
    x = rand(shape, "float32")
    u = rand(shape[0], "float32")
    x[min(3, shape[0] - 1), 0] = np.nan if op in ("max", "min") else x[0, 0]
    X, U = loom.asarray(x), loom.asarray(u)
    for lx, nx in ((U[:, None] * X, u[:, None].astype(np.float64) * x), (X - U[:, None], x - u[:, None].astype(np.float64))):
        got = np.asarray(getattr(lx, op)(axis=0).get())
        want = getattr(nx, op)(axis=0)
        if op == "argmax":
            assert np.array_equal(got, want)
        else:
            assert np.allclose(got, want, rtol=2e-5, atol=2e-5 * np.sqrt(shape[0]) * (1 + np.nanmax(np.abs(nx))),
                               equal_nan=True)


def test_column_reduction_row_operand_3d_and_int() -> None:
    x = RNG.integers(-100, 100, size=(6, 50, 33)).astype(np.int32)
    w = RNG.integers(-5, 5, size=50).astype(np.int32)
    got = (loom.asarray(x) * loom.asarray(w)[None, :, None]).sum(axis=1)
    assert np.array_equal(got.get(), (x * w[None, :, None]).sum(axis=1))
    xf = rand((40, 8, 30), "float64")
    wf = rand(40, "float64")
    got2 = (loom.asarray(xf) * loom.asarray(wf)[:, None, None]).sum(axis=0)
    assert np.allclose(got2.get(), (xf * wf[:, None, None]).sum(axis=0), rtol=1e-12, atol=1e-12)
