"""GPU reductions after the gpuperf6 changes, each case against NumPy:
- arg-reductions with GPU_UNROLL (value, index) accumulators per thread and the vector part entry of 1-d
  arg-reductions (codegen/gpu_lower.c cg_gpu_reduce_range, gpu_strategies.c cg_gpu_partv_item): first index
  of ties, first NaN, all -inf / all identity, lengths that are not multiples of the lanes, unaligned bases;
- the cached entries' short-row mode (rows of <= 32 * 16 points: g lanes per row, group shuffles; the launcher
  runtime/gpu/gpu_launch_policy.c) for arg-reductions, sums and softmax, including the last block's rows
  past the end (no stores) and in-place updates;
- buffers loaded before the first phase that reads them (LayerNorm's weight and bias, cross-entropy);
- divisions of point indices by shapes through magic multipliers (reductions over several R dims);
- tanh(log1p(u)) as u (u + 2) / (u (u + 2) + 2) (Mish).
Skipped without a CUDA device (CI has none): runs in scripts/gpu_all.sh on the H200.
"""
import numpy as np
import pytest

import loom

GPU = loom.cuda.is_available()
pytestmark = pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def rnd(shape, dtype="float32", seed=0):
    r = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return r.integers(-50, 50, size=shape).astype(dtype)
    return r.standard_normal(shape).astype(dtype)


# ---- arg-reductions -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int8"])
@pytest.mark.parametrize("n", [1, 5, 4099, 32768, 32771, 1 << 20, (1 << 20) + 3])
def test_arg_all(dtype, n):
    x = rnd(n, dtype, n)
    if np.dtype(dtype).kind in "iu":  # many ties: the first index must win
        x = (x % 7).astype(dtype)
    g = loom.asarray(x)
    assert host(g.argmax()) == np.argmax(x)
    assert host(g.argmin()) == np.argmin(x)
    if n > 2:  # an unaligned base: the scalar part entry
        assert host(g[1:].argmax()) == np.argmax(x[1:])
        assert host(g[3:].argmin()) == np.argmin(x[3:])


@pytest.mark.parametrize("n", [40000, (1 << 20) + 1])
def test_arg_all_nan_ties_and_inf(n):
    x = np.zeros(n, np.float32)
    x[[7, n // 2, n - 1]] = 5.0  # equal maxima: the first
    g = loom.asarray(x)
    assert host(g.argmax()) == 7
    x[[n // 3, n - 2]] = np.nan  # the first NaN wins both ways
    g = loom.asarray(x)
    assert host(g.argmax()) == n // 3 == np.argmax(x)
    assert host(g.argmin()) == n // 3 == np.argmin(x)
    y = np.full(n, -np.inf, np.float32)  # nothing beats the identity: index 0
    assert host(loom.asarray(y).argmax()) == 0
    assert host(loom.asarray(-y).argmin()) == 0
    y[n - 1] = 1.0
    assert host(loom.asarray(y).argmax()) == n - 1


@pytest.mark.parametrize("shape", [(1000, 16), (333, 3), (64, 1), (129, 100), (50, 512), (50, 513), (40, 4096),
                                   (16, 100003)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
def test_arg_rows(shape, dtype):
    x = rnd(shape, dtype, shape[1])
    if np.dtype(dtype).kind == "f":
        x[::7, shape[1] // 2] = np.nan
        x[1::5, :] = x[1::5, :1]  # constant rows: index 0
    g = loom.asarray(x)
    np.testing.assert_array_equal(host(g.argmax(axis=1)), np.argmax(x, axis=1))
    np.testing.assert_array_equal(host(g.argmin(axis=-1)), np.argmin(x, axis=-1))
    if shape[1] > 1:  # unaligned rows
        np.testing.assert_array_equal(host(g[:, 1:].argmax(axis=1)), np.argmax(x[:, 1:], axis=1))


# ---- short rows ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(100000, 16), (1001, 16), (257, 7), (33, 1), (300, 64), (300, 100), (77, 512),
                                   (77, 513), (5, 16)])
def test_short_rows_sum_softmax(shape):
    x = rnd(shape, "float32", 11)
    g = loom.asarray(x)
    np.testing.assert_allclose(host(g.sum(axis=1)), x.sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-5)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    ge = loom.exp(g - g.max(axis=1, keepdims=True))
    np.testing.assert_allclose(host(ge / ge.sum(axis=1, keepdims=True)), want, rtol=1e-5, atol=1e-7)


def test_short_rows_in_place_and_three_d():
    x = rnd((999, 16), "float32", 12)
    g = loom.asarray(x)
    g -= g.max(axis=1, keepdims=True)  # the rows past the last in its block must not store
    np.testing.assert_allclose(host(g), x - x.max(axis=1, keepdims=True), rtol=0, atol=0)
    y = rnd((7, 130, 12), "float32", 13)
    np.testing.assert_array_equal(host(loom.asarray(y).argmax(axis=2)), np.argmax(y, axis=2))
    np.testing.assert_allclose(host(loom.asarray(y).mean(axis=-1)), y.mean(axis=-1), rtol=1e-5, atol=1e-6)


# ---- lazily loaded buffers, divisions by shapes ----------------------------------------------------------
@pytest.mark.parametrize("shape", [(512, 4096), (100, 1000), (64, 16)])
def test_layernorm_and_cross_entropy(shape):
    x, w, b = rnd(shape, "float32", 1), rnd(shape[1], "float32", 2), rnd(shape[1], "float32", 3)
    gx, gw, gb = loom.asarray(x), loom.asarray(w), loom.asarray(b)
    mu = gx.mean(axis=-1, keepdims=True)
    got = (gx - mu) / loom.sqrt(((gx - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5) * gw + gb
    x64 = x.astype(np.float64)
    m64 = x64.mean(axis=-1, keepdims=True)
    want = (x64 - m64) / np.sqrt(((x64 - m64) ** 2).mean(axis=-1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(host(got), want, rtol=1e-4, atol=1e-4)
    labels = np.random.default_rng(4).integers(0, shape[1], shape[0])
    gl = loom.asarray(labels)
    z = gx - gx.max(axis=-1, keepdims=True)
    logp = z - loom.log(loom.exp(z).sum(axis=-1, keepdims=True))
    ce = -loom.where(gl[:, None] == loom.arange(shape[1]), logp, 0.0).sum(axis=-1).mean()
    z64 = x64 - x64.max(axis=-1, keepdims=True)
    lp = z64 - np.log(np.exp(z64).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(host(ce), -lp[np.arange(shape[0]), labels].mean(), rtol=1e-5)


@pytest.mark.parametrize("shape", [(32, 256, 64, 128), (3, 5, 7, 11), (2, 3, 1, 1), (1, 4, 1000, 3)])
def test_stats_over_several_axes(shape):
    x = rnd(shape, "float32", 5)
    g = loom.asarray(x)
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(host(g.mean(axis=(0, 2, 3), keepdims=True)), mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(host(g.var(axis=(0, 2, 3))), x64.var(axis=(0, 2, 3)), rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(host(g.transpose(1, 0, 2, 3).reshape(shape[1], -1).argmax(axis=1)),
                                  np.argmax(x.transpose(1, 0, 2, 3).reshape(shape[1], -1), axis=1))
    y = x[:, :, ::2, 1:]  # strided: offsets of four dims per point
    np.testing.assert_allclose(host(g[:, :, ::2, 1:] * 2.0), y * 2.0, rtol=0, atol=0)


# ---- tanh(log1p(u)) ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mish_and_tanh_log1p(dtype):
    x = np.concatenate([rnd(100003, dtype, 6) * 10,
                        np.array([0, -0.0, 1e-30, -1e-30, 1e-8, -1e-8, 20, 40, 88, 89, 100, 700, 710, 1e30, -1e30,
                                  -88, -104, -750, np.inf, -np.inf, np.nan], dtype)]).astype(dtype)
    g = loom.asarray(x)
    with np.errstate(all="ignore"):
        want = x * np.tanh(np.log1p(np.exp(x)))
        np.testing.assert_allclose(host(g * loom.tanh(loom.log1p(loom.exp(g)))), want, rtol=4e-6 if dtype == "float32"
                                   else 1e-14, atol=1e-30, equal_nan=True)
        u = np.array([-2.0, -1.0, -1 + 1e-6, -0.5, -1e-20, 0.0, 1e-20, 0.3, 1.0, 1e5, 1e19, 1e20, 3e38, np.inf,
                      np.nan], dtype)
        np.testing.assert_allclose(host(loom.tanh(loom.log1p(loom.asarray(u)))), np.tanh(np.log1p(u)),
                                   rtol=4e-6 if dtype == "float32" else 1e-14, atol=1e-38, equal_nan=True)
