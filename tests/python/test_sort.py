"""sort, argsort, lexsort, partition, searchsorted and unique against NumPy, through both engines: the
device network (_sortnet.py; LOOM_SORT_ENGINE=network runs it on the host, a GPU run uses it by
default) and the host's NumPy path. Edge cases: NaN, ties, -0.0, integer extremes, non-contiguous
inputs, every axis, sizes that are not powers of two, one element, empty, bool / float16 / complex."""
from typing import Any, Literal

import numpy as np
import pytest

import loom
from conftest import ON_GPU, DTYPES

ENGINES = ["network", "numpy"]


@pytest.fixture(params=ENGINES)
def engine(request: Any, monkeypatch: Any) -> str:
    monkeypatch.setenv("LOOM_SORT_ENGINE", request.param)
    return str(request.param)


def edge_values(dtype: str, n: int, seed: int = 0) -> np.ndarray:
    """n values of dtype with many ties, the dtype's extremes and, for floats, NaN, +-inf and +-0.0."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        pool = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1, 7, 7, 3], dtype=dt)
        return np.concatenate([pool, rng.integers(max(info.min, -5), min(info.max, 5), n, endpoint=True).astype(dt)])[
            rng.permutation(n + len(pool))[:n]]
    if dt.kind == "c":
        z = np.empty(n, dt)
        z.real = edge_values("float64", n, seed)
        z.imag = edge_values("float64", n, seed + 1)
        return z
    pool = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0, 1.5, -1.5, 1.5, np.nan, 0.0], dtype=dt)
    vals = np.round(rng.normal(size=n) * 4) / 2  # halves: many ties
    x = np.concatenate([pool, vals.astype(dt)])
    return x[rng.permutation(len(x))[:n]]


def same(got: Any, want: np.ndarray) -> None:
    """Equal shape, dtype and bits except NaN payloads (NaN == NaN); -0.0 and 0.0 told apart."""
    g = got.get() if isinstance(got, loom.ndarray) else np.asarray(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    if want.dtype.kind in "fc":
        np.testing.assert_array_equal(g, want)  # NaN == NaN here
        if want.dtype.kind == "f":
            assert np.array_equal(np.signbit(g) | np.isnan(g), np.signbit(want) | np.isnan(want))
    else:
        np.testing.assert_array_equal(g, want)


SIZES = [1, 2, 5, 17, 257]


@pytest.mark.parametrize("dtype", DTYPES + ["complex64"])
@pytest.mark.parametrize("n", SIZES)
def test_argsort_stable_1d(engine: str, dtype: str, n: int) -> None:
    x = edge_values(dtype, n, seed=n)
    same(loom.argsort(loom.asarray(x)), np.argsort(x, kind="stable"))
    same(loom.sort(loom.asarray(x), kind="stable"), np.sort(x, kind="stable"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_unstable_values(engine: str, dtype: str) -> None:
    x = edge_values(dtype, 77, seed=3)
    got = loom.sort(loom.asarray(x)).get()
    want = np.sort(x)
    np.testing.assert_array_equal(got, want)  # -0.0 == 0.0 may come in either order without kind='stable'


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("dtype", ["float32", "int16", "uint64"])
def test_axes(engine: str, axis: int, dtype: str) -> None:
    x = edge_values(dtype, 5 * 6 * 7, seed=axis + 10).reshape(5, 6, 7)
    a = loom.asarray(x)
    same(loom.sort(a, axis=axis, kind="stable"), np.sort(x, axis=axis, kind="stable"))
    same(loom.argsort(a, axis=axis), np.argsort(x, axis=axis, kind="stable"))
    same(loom.argsort(a, axis=None), np.argsort(x, axis=None, kind="stable"))


def test_non_contiguous(engine: str) -> None:
    x = edge_values("float64", 40 * 30, seed=5).reshape(40, 30)
    a = loom.asarray(x)
    same(loom.sort(a[::3, ::-2], kind="stable"), np.sort(x[::3, ::-2], kind="stable"))
    same(loom.argsort(a.T, axis=0), np.argsort(x.T, axis=0, kind="stable"))
    same(loom.sort(a[1:, 2:].T, axis=-1, kind="stable"), np.sort(x[1:, 2:].T, axis=-1, kind="stable"))
    # a lazy expression as the input
    same(loom.argsort(a * 2 + 1, axis=0), np.argsort(x * 2 + 1, axis=0, kind="stable"))


def test_rows_batched(engine: str) -> None:
    x = np.random.default_rng(1).integers(-50, 50, size=(33, 70)).astype(np.int32)
    same(loom.sort(loom.asarray(x), axis=1), np.sort(x, axis=1))
    same(loom.argsort(loom.asarray(x), axis=1), np.argsort(x, axis=1, kind="stable"))


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool", "complex128"])
def test_descending(engine: str, dtype: str) -> None:
    x = edge_values(dtype, 45, seed=7)
    # the standard's stable descending order: the reverse of the ascending order of the reversed array
    want_idx = np.flip(len(x) - 1 - np.argsort(np.flip(x), kind="stable"))
    same(loom.argsort(loom.asarray(x), descending=True), want_idx)
    same(loom.sort(loom.asarray(x), descending=True, stable=True), x[want_idx])


def test_empty_and_0d(engine: str) -> None:
    for shape in [(0,), (3, 0), (0, 4)]:
        x = np.zeros(shape, np.float32)
        same(loom.sort(loom.asarray(x)), np.sort(x))
        same(loom.argsort(loom.asarray(x)), np.argsort(x))
    with pytest.raises(np.exceptions.AxisError):
        loom.sort(loom.asarray(np.float32(3)))
    same(loom.argsort(loom.asarray(np.float32(3))), np.argsort(np.float32(3)))  # NumPy: [0]
    with pytest.raises(np.exceptions.AxisError):
        loom.argsort(loom.asarray(np.float32(3)), axis=1)
    same(loom.sort(loom.asarray(np.float32(3)), axis=None), np.sort(np.float32(3), axis=None))


def test_ndarray_methods(engine: str) -> None:
    x = edge_values("float32", 50, seed=9).reshape(5, 10)
    a = loom.asarray(x)
    b = a[:, ::2]
    b.sort(axis=0)  # in place, through a view: a's columns change
    h = x.copy()
    h[:, ::2].sort(axis=0, kind="stable")
    same(a, h)
    same(a.argsort(), np.argsort(h, kind="stable"))


def test_lexsort(engine: str) -> None:
    rng = np.random.default_rng(4)
    k1 = rng.integers(0, 3, 60).astype(np.int64)
    k2 = edge_values("float64", 60, seed=4)
    k3 = rng.random(60) < 0.5
    same(loom.lexsort([loom.asarray(k3), loom.asarray(k2), loom.asarray(k1)]), np.lexsort([k3, k2, k1]))
    m = rng.integers(0, 4, (2, 7, 9))
    same(loom.lexsort(loom.asarray(m), axis=0), np.lexsort(m, axis=0))


def test_partition(engine: str) -> None:
    x = edge_values("float64", 31, seed=11)
    for k in [0, 7, 30, -1]:
        p = loom.partition(loom.asarray(x), k).get()
        want = np.sort(x)
        np.testing.assert_array_equal(p[k], want[k])
        assert np.all((p[:k % 31] <= p[k]) | np.isnan(p[k]))
        ap = loom.argpartition(loom.asarray(x), k).get()
        np.testing.assert_array_equal(x[ap][k], want[k])
    with pytest.raises(ValueError, match="out of bounds"):
        loom.partition(loom.asarray(x), 31)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("merge", [False, True])
@pytest.mark.parametrize("na,nv", [(5, 40), (300, 1), (200, 150), (1, 7), (0, 3), (9, 0)])
def test_searchsorted(engine: str, side: Literal["left", "right"], merge: bool, na: int, nv: int,
                      monkeypatch: Any) -> None:
    if merge:  # the merge through two sorts instead of the count (chosen by size otherwise)
        monkeypatch.setattr(loom._sorting, "_SEARCH_COUNT_RATIO", 0)
    rng = np.random.default_rng(na * 7 + nv)
    a = np.sort(np.concatenate([np.round(rng.normal(size=na) * 3), [np.nan, np.inf, -np.inf][:min(na, 3)]]))[:na]
    v = np.concatenate([np.round(rng.normal(size=nv) * 3), a[:3], [np.nan, -0.0, np.inf]])[:nv]
    same(loom.searchsorted(loom.asarray(a), loom.asarray(v), side=side), np.searchsorted(a, v, side=side))
    ints = np.arange(na, dtype=np.int32) // 2
    q = rng.integers(-2, na + 2, (3, nv)).astype(np.int64)
    same(loom.asarray(ints).searchsorted(loom.asarray(q), side=side), np.searchsorted(ints, q, side=side))


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool", "complex64"])
@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique(engine: str, dtype: str, equal_nan: bool) -> None:
    x = edge_values(dtype, 60, seed=12).reshape(6, 10)
    got = loom.unique(loom.asarray(x), return_index=True, return_inverse=True, return_counts=True,
                      equal_nan=equal_nan)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=equal_nan)
    for g, w in zip(got, want):
        same(g, w.astype(np.int64) if w.dtype.kind in "iu" and w is not want[0] else w)
    # without return_index NumPy's sort is not stable: which of -0.0 / 0.0 leads its run is not fixed
    np.testing.assert_array_equal(loom.unique(loom.asarray(x)).get(), np.unique(x))


def test_unique_array_api(engine: str) -> None:
    x = np.array([3.0, np.nan, 1.0, 3.0, np.nan, -0.0, 0.0, 1.0], np.float64)
    r = loom.unique_all(loom.asarray(x))
    w = np.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    same(r.values, w[0])
    same(r.indices, w[1].astype(np.int64))
    same(r.inverse_indices, w[2].astype(np.int64).reshape(x.shape))
    same(r.counts, w[3].astype(np.int64))
    # unique_values needs no first index: which of -0.0 / 0.0 leads its run is not fixed (NumPy's own
    # unstable sort picks one)
    np.testing.assert_array_equal(loom.unique_values(loom.asarray(x)).get(), w[0])
    c = loom.unique_counts(loom.asarray(x[:3]))
    same(c.counts, np.ones(3, np.int64))
    same(loom.unique_inverse(loom.asarray(x.reshape(2, 4))).inverse_indices, w[2].astype(np.int64).reshape(2, 4))
    same(loom.unique(loom.asarray(np.zeros(0, np.int8))), np.zeros(0, np.int8))


def test_network_kernels_per_step(monkeypatch: Any) -> None:
    """A step of the network is one kernel (the partner is a view; nothing is gathered on the host)."""
    if ON_GPU:
        pytest.skip("counts host kernels")
    monkeypatch.setenv("LOOM_SORT_ENGINE", "network")
    x = loom.asarray(np.arange(64, dtype=np.float32)[::-1].copy())
    loom.eval(x)
    before = loom.stats()["kernels_launched"]
    r = loom.argsort(x)
    loom.eval(r)
    steps = 6 * 7 // 2
    # the steps, plus a few set-up kernels (the padded key and index copies, the two-element lower-half
    # mask, the final int64 cast): no per-element host work
    assert steps <= loom.stats()["kernels_launched"] - before <= steps + 8
    same(r, np.arange(64)[::-1].astype(np.int64))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "float16"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_median(engine: str, dtype: str, axis: Any) -> None:
    rng = np.random.default_rng(21)
    for shape in [(7, 6), (4, 5), (1, 1)]:
        x = (rng.standard_normal(shape) * 10).astype(dtype) if dtype[0] == "f" else rng.integers(0, 50, shape).astype(dtype)
        if dtype[0] == "f" and shape[0] > 1:
            x[1, 0] = np.nan  # one NaN row / column gives NaN there
        want = np.median(x, axis=axis)
        got = loom.median(loom.asarray(x), axis=axis)
        g = got.get()
        assert g.shape == np.shape(want) and g.dtype == np.asarray(want).dtype, (g.shape, g.dtype, np.asarray(want).dtype)
        np.testing.assert_allclose(g, want, rtol=1e-3 if dtype == "float16" else 1e-6, equal_nan=True)
        kd = loom.median(loom.asarray(x), axis=axis, keepdims=True).get()
        assert kd.shape == np.median(x, axis=axis, keepdims=True).shape


def test_sort_complex(engine: str) -> None:
    x = edge_values("complex128", 40, seed=13).reshape(5, 8)
    same(loom.sort_complex(loom.asarray(x)), np.sort_complex(x))
    i = np.array([3, -1, 2], np.int16)
    same(loom.sort_complex(loom.asarray(i)), np.sort_complex(i))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.uint16])
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_small_int_sort_radix(dtype, axis):
    """bools and 8- / 16-bit ints sort on the host with NumPy's radix (stable) sort: NumPy's values"""
    r = np.random.default_rng(5)
    if dtype == np.bool_:
        x = r.random((37, 1001)) < 0.3
    else:
        info = np.iinfo(dtype)
        x = r.integers(info.min, info.max, (37, 1001), endpoint=True, dtype=dtype)
    np.testing.assert_array_equal(loom.sort(loom.asarray(x), axis=axis).get(), np.sort(x, axis=axis))
    np.testing.assert_array_equal(loom.sort(loom.asarray(x), axis=axis, descending=True).get(),
                                  np.flip(np.sort(x, axis=axis), axis=-1 if axis is None else axis))
