"""Accuracy of floating-point sums on every host path (contiguous, strided, transposed, column,
multi-axis, split along R, float16 / float32 / float64 / complex) against a float64 (or math.fsum)
reference: the error must stay within C * log2(n) * eps * sum|x|, the order of NumPy's pairwise
summation, whatever the layout. NumPy's own error is computed too: on the contiguous paths it must
fit the same bound (the bound is fair), and it is shown in every failure message.

The inputs are the adversarial ones for a long sequential fold: a constant 0.1 (every addition
rounds the same way, so the error of one accumulator grows linearly), values with a large constant
offset (1 + 1e-4 noise) and plain uniform values.
"""
import math

import numpy as np
import pytest

import loom

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)  # the default device of this run

C = 2.0  # the constant of the bound: C * log2(n) * eps * sum|x|


def data(kind, n, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    if kind == "const":
        x = np.full(n, 0.1)
    elif kind == "offset":
        x = 1 + 1e-4 * rng.standard_normal(n)
    elif kind == "uniform":
        x = rng.random(n)
    else:
        raise ValueError(kind)
    return x.astype(dtype)


def ref_sum(x, axis=None, keepdims=False):
    """The float64 sum and sum|x| (math.fsum for a float64 input's full sum)."""
    x64 = np.asarray(x, dtype=np.float64)
    if x.dtype != np.float64:  # float64 sums of float32 values: errors far below float32's eps
        return x64.sum(axis=axis, keepdims=keepdims), np.abs(x64).sum(axis=axis, keepdims=keepdims)
    # float64 input: correctly rounded sums (NumPy's own column sums are sequential)
    axes = tuple(range(x.ndim)) if axis is None else tuple(a % x.ndim for a in np.atleast_1d(axis))
    kept = [d for d in range(x.ndim) if d not in axes]
    rows = np.transpose(x64, kept + list(axes)).reshape(-1, int(np.prod([x.shape[a] for a in axes])))
    oshape = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)) if keepdims else tuple(x.shape[d] for d in kept)
    s = np.array([math.fsum(r) for r in rows]).reshape(oshape)
    m = np.array([math.fsum(np.abs(r)) for r in rows]).reshape(oshape)
    return s, m


def bound(n, dtype, mag):
    eps = np.finfo(np.dtype(dtype)).eps
    return C * max(math.log2(max(n, 2)), 1.0) * eps * mag


def assert_accurate(got, x, axis=None, keepdims=False, npgot=None, numpy_within=False):
    if isinstance(got, loom.ndarray):
        got = got.get()
    ref, mag = ref_sum(x, axis, keepdims)
    n = x.size // max(np.size(ref), 1)
    acc = np.float32 if x.dtype == np.float16 else x.dtype  # float16 accumulates in float32
    err = np.abs(np.asarray(got, dtype=np.float64) - ref)
    lim = bound(n, acc, mag)
    if x.dtype == np.float16:  # plus the final rounding to float16 (half an ulp, one ulp for ties)
        lim = lim + np.finfo(np.float16).eps * np.abs(ref)
    assert np.shape(got) == np.shape(ref)
    nperr = None if npgot is None else np.abs(np.asarray(npgot, dtype=np.float64) - ref)
    eps = np.finfo(acc).eps
    worst = float(np.max(err / np.maximum(mag, 1e-300))) / eps
    msg = (f"n={n} error {worst:.1f} eps * sum|x| > bound {C * math.log2(max(n, 2)):.1f}"
           + ("" if nperr is None else f" (NumPy: {float(np.max(nperr / np.maximum(mag, 1e-300))) / eps:.1f})"))
    assert np.all(err <= lim), msg
    if numpy_within and nperr is not None:
        assert np.all(nperr <= lim), "the bound is unfair: NumPy's own error exceeds it: " + msg


# ---- full sums ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["const", "offset", "uniform"])
@pytest.mark.parametrize("n", [1000, 100_000, 10_000_000])
def test_contiguous_sum(kind, n):
    x = data(kind, n)
    assert_accurate(loom.asarray(x).sum(), x, npgot=x.sum(), numpy_within=True)


@pytest.mark.parametrize("kind", ["const", "offset"])
@pytest.mark.parametrize("step", [2, 3, 7, -1, -5])
def test_strided_sum(kind, step):
    x = data(kind, 3_000_000)
    v = x[::step]
    assert_accurate(loom.asarray(x)[::step].sum(), v, npgot=v.sum(), numpy_within=True)


@pytest.mark.parametrize("kind", ["const", "offset", "uniform"])
def test_transposed_all_axes(kind):
    x = data(kind, 100 * 200 * 300).reshape(100, 200, 300)
    lx = loom.asarray(x)
    assert_accurate(lx.T.sum(), x.T, npgot=x.T.sum())
    assert_accurate(lx.transpose(1, 0, 2).sum(), x.transpose(1, 0, 2), npgot=x.transpose(1, 0, 2).sum())
    assert_accurate(lx[:, ::2, ::3].sum(), x[:, ::2, ::3], npgot=x[:, ::2, ::3].sum())


# ---- one axis, several axes ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["const", "offset", "uniform"])
@pytest.mark.parametrize("shape", [(4096, 1024), (200_000, 16), (50_000, 3), (3, 1_000_000)])
def test_column_and_row_sums(kind, shape):
    x = data(kind, shape[0] * shape[1]).reshape(shape)
    lx = loom.asarray(x)
    for axis in (0, 1):
        assert_accurate(lx.sum(axis=axis), x, axis=axis, npgot=x.sum(axis=axis))
    assert_accurate(lx.T.sum(axis=1), x.T, axis=1, npgot=x.T.sum(axis=1))


@pytest.mark.parametrize("kind", ["const", "offset"])
@pytest.mark.parametrize("axis", [(0, 2), (0, 1), (1, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_multi_axis(kind, axis, keepdims):
    x = data(kind, 400 * 50 * 600).reshape(400, 50, 600)
    got = loom.asarray(x).sum(axis=axis, keepdims=keepdims)
    assert_accurate(got, x, axis=axis, keepdims=keepdims, npgot=x.sum(axis=axis, keepdims=keepdims))
    xt = x.transpose(2, 0, 1)
    got = loom.asarray(x).transpose(2, 0, 1).sum(axis=axis, keepdims=keepdims)
    assert_accurate(got, xt, axis=axis, keepdims=keepdims)


# ---- dtypes ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["contig", "step7", "col"])
def test_float16_accumulates_accurately(layout):
    x = data("const", 600_000, "float16")  # the sum stays below float16's largest value (65504)
    lx = loom.asarray(x)
    if layout == "contig":
        assert_accurate(lx.sum(), x)
    elif layout == "step7":
        assert_accurate(lx[::7].sum(), x[::7])
    else:
        assert_accurate(lx.reshape(3000, 200).sum(axis=0), x.reshape(3000, 200), axis=0)


@pytest.mark.parametrize("layout", ["contig", "step7", "T", "col"])
def test_float64(layout):
    x = data("const", 1_000_000, "float64")
    lx = loom.asarray(x)
    if layout == "contig":
        assert_accurate(lx.sum(), x)
    elif layout == "step7":
        assert_accurate(lx[::7].sum(), x[::7])
    elif layout == "T":
        assert_accurate(lx.reshape(100, 100, 100).T.sum(), x.reshape(100, 100, 100).T)
    else:
        assert_accurate(lx.reshape(10_000, 100).sum(axis=0), x.reshape(10_000, 100), axis=0)


def test_complex64():
    re = data("const", 2_000_000)
    z = (re + 1j * data("offset", 2_000_000)).astype(np.complex64)
    lz = loom.asarray(z)
    for got, v, axis in ((lz.sum(), z, None), (lz[::3].sum(), z[::3], None),
                         (lz.reshape(4000, 500).sum(axis=0), z.reshape(4000, 500), 0)):
        got = got.get()
        assert_accurate(got.real, v.real, axis=axis)
        assert_accurate(got.imag, v.imag, axis=axis)


# ---- sum-like reductions built on the sum -------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["contig", "T", "col"])
def test_mean_var_std_nansum(layout):
    x = data("const", 2_000_000).reshape(2000, 1000)
    xs = {"contig": x, "T": x.T, "col": x}[layout]
    lx = loom.asarray(x)
    lxs = {"contig": lx, "T": lx.T, "col": lx}[layout]
    axis = 0 if layout == "col" else None
    n = xs.size if axis is None else xs.shape[0]
    x64 = xs.astype(np.float64)
    eps = np.finfo(np.float32).eps
    lim = C * math.log2(n) * eps
    got = lxs.mean(axis=axis).get()
    assert np.all(np.abs(got - x64.mean(axis=axis)) <= lim * np.abs(x64).mean(axis=axis))
    # var of 0.1 + noise: two passes, the deviations' sum of squares is itself a sum
    y = (xs + np.random.default_rng(1).standard_normal(xs.shape).astype(np.float32)).astype(np.float32)
    ly = loom.asarray(np.ascontiguousarray(y)) if layout != "T" else loom.asarray(np.ascontiguousarray(y.T)).T
    y64 = y.astype(np.float64)
    for name in ("var", "std"):
        got = getattr(ly, name)(axis=axis).get()
        want = getattr(y64, name)(axis=axis)
        assert np.all(np.abs(got - want) <= 4 * lim * np.abs(want)), name
    z = xs.copy()
    z[::5] = np.nan
    lz = loom.asarray(np.ascontiguousarray(z)) if layout != "T" else loom.asarray(np.ascontiguousarray(z.T)).T
    got = loom.nansum(lz, axis=axis).get()
    z64 = np.where(np.isnan(z), 0, z).astype(np.float64)
    assert np.all(np.abs(got - z64.sum(axis=axis)) <= lim * np.abs(z64).sum(axis=axis))


# ---- what compensation must not change ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_special_values(dtype):
    n = 100_000
    for fill, want in ((np.inf, np.inf), (-np.inf, -np.inf), (np.nan, np.nan)):
        x = data("uniform", n, dtype)
        x[n // 3] = fill
        lx = loom.asarray(x)
        for got in (lx.sum().get(), lx[::3].sum().get() if n // 3 % 3 == 0 else lx.sum().get(),
                    lx.reshape(1000, 100).sum(axis=0).get()[n // 3 % 100],
                    lx.reshape(100, 1000).T.sum().get()):
            np.testing.assert_equal(got, np.asarray(want, dtype=dtype))
    x = data("uniform", n, dtype)
    x[10], x[20] = np.inf, -np.inf
    assert np.isnan(loom.asarray(x).sum().get())
    big = np.full(n, np.finfo(dtype).max / 4, dtype=dtype)  # overflows to inf, as NumPy's sum
    with np.errstate(over="ignore"):
        np.testing.assert_equal(loom.asarray(big).sum().get(), big.sum())
        np.testing.assert_equal(loom.asarray(big).reshape(1000, 100).sum(axis=0).get(), big.reshape(1000, 100).sum(axis=0))


def test_small_and_empty():
    for shape, axis in (((0,), None), ((0, 5), 0), ((5, 0), 1), ((), None), ((1,), None), ((7, 3), 0)):
        x = data("uniform", int(np.prod(shape)), "float32").reshape(shape)
        got = loom.asarray(x).sum(axis=axis).get()
        np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=axis), rtol=1e-6)
        assert got.dtype == x.sum(axis=axis).dtype
    # signed zeros: an all -0.0 sum is 0 (the +0 identity), as before
    x = np.full(1000, -0.0, np.float32)
    assert loom.asarray(x).sum().get() == 0


def test_cumsum_is_numpy_sequential():
    """A scan folds in order (each prefix is a sequential sum, as NumPy's accumulate): the bits of
    NumPy's float32 cumsum, whose error grows with the prefix (not the pairwise bound)."""
    x = data("offset", 100_000)
    y = data("offset", 300 * 400).reshape(300, 400)
    if ON_GPU:  # a GPU scan is parallel (CuPy's too): each prefix within the float32 bound of a float64 prefix
        for a in (x, y):
            got, ref = loom.cumsum(loom.asarray(a), axis=0).get(), np.cumsum(a.astype(np.float64), axis=0)
            n = np.arange(1, a.shape[0] + 1).reshape((-1,) + (1,) * (a.ndim - 1))
            bound = n * np.finfo(np.float32).eps * np.cumsum(np.abs(a.astype(np.float64)), axis=0)
            assert (np.abs(got - ref) <= bound + np.finfo(np.float32).tiny).all()
        return
    np.testing.assert_array_equal(loom.cumsum(loom.asarray(x)).get(), np.cumsum(x))
    np.testing.assert_array_equal(loom.cumsum(loom.asarray(y), axis=0).get(), np.cumsum(y, axis=0))


def test_prod_keeps_the_plain_fold():
    """A product's relative error is at most about (n - 1) u in any order (each multiplication adds a
    relative error of at most u), so products are not blocked; checked on long products near 1."""
    n = 1_000_000
    x = (1 + 1e-6 * np.random.default_rng(2).standard_normal(n)).astype(np.float32)
    u = np.finfo(np.float32).eps / 2
    lx = loom.asarray(x)
    for got, v in ((lx.prod(), x), (lx[::3].prod(), x[::3]), (lx.reshape(1000, 1000).T.prod(), x)):
        want = np.exp(np.sum(np.log(v.astype(np.float64))))
        assert abs(got.get() / want - 1) <= 1.01 * (v.size - 1) * u
