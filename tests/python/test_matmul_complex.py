"""complex64 and complex128 matrix products as library calls (frontend/matmul.c makes one IR_MATMUL for
them as for real floats; runtime/host_blas.c runs cgemm / zgemm on the host, runtime/gpu/gpu_blas.c
cuBLASLt's CUDA_C_32F / C_64F on NVIDIA) against NumPy in complex128: 1-d and 2-d operands, batched and
broadcast batches, empty M / N / K (K = 0 gives zeros without a call), transposed, sliced and
negative-stride operands, a real operand times a complex one (NumPy's promotion), inf and NaN, and that
each product is one library call whose elementwise tail (complex products take no fused epilogue:
passes/calls.c) is a kernel of its own with the right value. Runs on the arrays' device: the host here,
the GPU on the H200 (scripts/gpu_all.sh); the @gpu tests only there.
"""
from typing import Any

import numpy as np
import pytest

import loom

RNG = np.random.default_rng(151)
ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)
gpu = pytest.mark.skipif(not ON_GPU, reason="needs a GPU (arrays live on the host here)")
CTYPES = ["complex64", "complex128"]


def rand(shape: Any, dtype: Any) -> np.ndarray:
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The product in complex128 of the operands as given."""
    return np.matmul(a.astype(np.complex128), b.astype(np.complex128))


def close(got: Any, want: np.ndarray, dtype: Any, k: int) -> None:
    """Within the dtype's rounding of a k-term sum, relative to the largest |element| (as test_products)."""
    g = np.asarray(got.get() if isinstance(got, loom.ndarray) else got)
    assert g.shape == want.shape, (g.shape, want.shape)
    eps = {"complex64": 2e-6, "complex128": 1e-14}[np.dtype(dtype).name]
    scale = float(np.max(np.abs(want))) if want.size else 1.0
    np.testing.assert_allclose(g.astype(np.complex128), want, rtol=0,
                               atol=eps * max(4, 2 * np.sqrt(max(k, 1))) * max(scale, 1))


def calls() -> int:
    return int(loom.stats()["library_calls"])


SHAPES = [((3,), (3,)), ((4, 3), (3,)), ((3,), (3, 5)), ((4, 3), (3, 5)), ((2, 4, 3), (3, 5)),
          ((4, 3), (2, 3, 5)), ((2, 1, 4, 3), (3, 3, 5)), ((1, 1), (1, 1)), ((7, 33), (33, 65)),
          ((0, 3), (3, 4)), ((4, 0), (0, 5)), ((3, 4), (4, 0)), ((2, 0, 4, 3), (3, 5)), ((0,), (0,))]


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("dtype", CTYPES)
def test_complex_matmul_shapes(sa: Any, sb: Any, dtype: str) -> None:
    a, b = rand(sa, dtype), rand(sb, dtype)
    A, B = loom.asarray(a), loom.asarray(b)
    loom.eval(A, B)
    before = calls()
    r = A @ B
    assert r.dtype == np.matmul(a, b).dtype
    close(r, ref(a, b), dtype, sa[-1])
    got = calls() - before
    empty = 0 in np.broadcast_shapes(sa[:-2], sb[:-2]) or sa[-1] == 0 or (len(sa) > 1 and sa[-2] == 0) or \
        (len(sb) > 1 and sb[-1] == 0)
    # library calls, as many as the float64 product of these shapes makes (runtime/linalg_call.c: one per
    # strided batch left over); none for an empty product or M @ v (N = 1, v without batch dims: a fused
    # reduction over K, frontend/matmul.c)
    dot = (len(sb) == 1 or sb[-1] == 1) and len(sb) <= 2
    A64, B64 = loom.asarray(a.real.astype(np.float64)), loom.asarray(b.real.astype(np.float64))
    loom.eval(A64, B64)
    before = calls()
    loom.eval(A64 @ B64)
    assert got == calls() - before
    assert (got == 0) == (empty or dot)


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("layout", ["aT", "bT", "both", "slice", "neg", "batch-T"])
def test_complex_matmul_views(dtype: str, layout: str) -> None:
    a, b = rand((6, 5), dtype), rand((5, 7), dtype)
    A, B = loom.asarray(a), loom.asarray(b)
    if layout == "aT":  # a transposed view: op T, the plain transpose (no conjugation)
        a, A = a.T.copy().T, loom.asarray(a.T.copy()).T
    elif layout == "bT":
        b, B = b.T.copy().T, loom.asarray(b.T.copy()).T
    elif layout == "both":
        a2, b2 = rand((7, 5), dtype), rand((5, 6), dtype)
        a, b, A, B = b2.T, a2.T, loom.asarray(b2).T, loom.asarray(a2).T
    elif layout == "slice":
        big = rand((12, 10), dtype)
        a, A = big[::2, ::2], loom.asarray(big)[::2, ::2]
    elif layout == "neg":
        big = rand((5, 7), dtype)
        b, B = big[::-1], loom.asarray(big)[::-1]
    else:
        x = rand((3, 5, 6), dtype)
        a, A = x.transpose(0, 2, 1), loom.asarray(x).transpose(0, 2, 1)
    close(A @ B, ref(a, b), dtype, a.shape[-1])


@pytest.mark.parametrize("da,db,want", [("float32", "complex64", "complex64"), ("complex64", "float32", "complex64"),
                                        ("float64", "complex64", "complex128"),
                                        ("complex128", "float32", "complex128"), ("int64", "complex64", "complex128"),
                                        ("float16", "complex64", "complex64"), ("bool", "complex128", "complex128")])
def test_mixed_real_complex_promotes(da: str, db: str, want: str) -> None:
    a = RNG.integers(0, 2, (4, 6)).astype(bool) if da == "bool" else rand((4, 6), da)
    b = rand((6, 3), db)
    A, B = loom.asarray(a), loom.asarray(b)
    loom.eval(A, B)
    before = calls()
    r = A @ B
    assert r.dtype == np.matmul(a, b).dtype == np.dtype(want)
    close(r, ref(a, b), want, 6)  # ref: the operands' exact values, so the result's own rounding
    assert calls() - before == 1


@pytest.mark.parametrize("dtype", CTYPES)
def test_complex_matmul_inf_nan(dtype: str) -> None:
    a = rand((3, 4), dtype)
    b = rand((4, 5), dtype)
    a[0, 1] = np.nan
    a[1, 2] = complex(np.inf, 0)
    b[3, 4] = complex(0, np.nan)
    got = (loom.asarray(a) @ loom.asarray(b)).get()
    with np.errstate(invalid="ignore", over="ignore"):
        want = ref(a, b)
    finite = np.isfinite(want)
    # where NumPy's product is finite, equal; where it is not, loom's is not either (BLASes may spread an inf
    # times 0 into either part, as NumPy's own BLAS does)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    close(np.where(finite, got, 0), np.where(finite, want, 0), dtype, 4)


@pytest.mark.parametrize("dtype", CTYPES)
def test_complex_tail_is_a_kernel_after_the_call(dtype: str) -> None:
    """alpha, bias and c are not fused into a complex call; the tail still has its value (a complex alpha
    too), and a maximum (lexicographic on complex, as NumPy) is not taken for a ReLU."""
    a, b, bias, c = rand((8, 6), dtype), rand((6, 5), dtype), rand((5,), dtype), rand((8, 5), dtype)
    A, B, Bias, C = (loom.asarray(x) for x in (a, b, bias, c))
    loom.eval(A, B, Bias, C)
    p = ref(a, b)
    for f, want in [(lambda P: P * 2 + Bias, p * 2 + bias), (lambda P: P * (0.5 - 1j) + C, p * (0.5 - 1j) + c),
                    (lambda P: loom.maximum(P, 0), np.maximum(p, 0)), (lambda P: P + Bias + C, p + bias + c)]:
        before = calls()
        got = f(A @ B)
        assert got._lazy
        close(got, want, dtype, 6)
        assert calls() - before == 1
        assert loom.stats()["last_eval_kernels"] >= 1  # the tail: a kernel of its own


@pytest.mark.parametrize("dtype", CTYPES)
def test_complex_dot_einsum_use_the_call(dtype: str) -> None:
    a, b = rand((5, 4), dtype), rand((4, 3), dtype)
    close(loom.dot(loom.asarray(a), loom.asarray(b)), ref(a, b), dtype, 4)
    close(loom.einsum("ij,jk->ik", loom.asarray(a), loom.asarray(b)), ref(a, b), dtype, 4)
    v, w = rand((7,), dtype), rand((7,), dtype)
    want = np.asarray(np.vdot(v.astype(np.complex128), w.astype(np.complex128)))
    close(loom.vdot(loom.asarray(v), loom.asarray(w)), want, dtype, 7)


# ---- on the GPU (scripts/gpu_all.sh): sizes where cuBLASLt picks tensor-core / large-tile algorithms --------
@gpu
@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("m,k,n", [(256, 512, 384), (1024, 1024, 1024), (130, 257, 67)])
def test_gpu_complex_matmul_large(dtype: str, m: int, k: int, n: int) -> None:
    a, b = rand((m, k), dtype), rand((k, n), dtype)
    A, B = loom.asarray(a), loom.asarray(b)
    loom.eval(A, B)
    before = calls()
    r = A @ B
    loom.eval(r)
    assert calls() - before == 1
    assert r._on_gpu
    close(r, ref(a, b), dtype, k)


@gpu
@pytest.mark.parametrize("dtype", CTYPES)
def test_gpu_complex_matmul_batched_transposed(dtype: str) -> None:
    a, b = rand((4, 96, 80), dtype), rand((4, 64, 80), dtype)
    A, B = loom.asarray(a), loom.asarray(b)
    close(A @ B.transpose(0, 2, 1), ref(a, b.transpose(0, 2, 1)), dtype, 80)
    w = rand((80, 48), dtype)
    close(A @ loom.asarray(w), ref(a, w), dtype, 80)  # broadcast b: the batch folds into M
