"""The device radix sort (loom_sort through python/loom/_sortnet.py) against NumPy's stable sorts.

Every real dtype (bool, int8 .. uint64, float16, float32, float64; bfloat16 where ml_dtypes is there),
with NaN of both signs, -0.0 and 0.0 (equal: their order must be kept, so the sorted bits are checked),
+-inf, denormals, duplicates, already sorted and reversed input, sizes 0, 1, odd and across tiles,
2^26 keys, many rows (the radix engine and, where its cost model says so, the network), short rows sorted
a block a row (the block row sort: rows of 1 .. 8192 keys, exactly its capacity and one more, non-contiguous
input), the tuning switches bench/sort_sweep.py times, the first pass design (LOOM_RADIX_LEGACY=1), ascending and
descending, argsort (stable: compared exactly), unique, searchsorted and lexsort through the radix
engine, and complex keys (their parts sorted lexicographically). The device tests skip on a machine
without a GPU (scripts/gpu_all.sh runs them on the H200); the engine-selection tests run everywhere.
"""
from typing import Any

import numpy as np
import pytest

import loom
from loom import _sortnet

ON_GPU = loom.asarray(np.zeros(1))._device[0] != 0  # the default device of this run (CUDA or HIP)
gpu = pytest.mark.skipif(not ON_GPU, reason="needs a GPU (arrays live on the host here)")
RNG = np.random.default_rng(2026)
INT_DTYPES: list[Any] = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_DTYPES: list[Any] = [np.float16, np.float32, np.float64]
SIZES = [0, 1, 2, 3, 31, 2047, 2048, 4095, 4097, 12345, 100_003]


def keys(n: int, dtype: Any, kind: str = "random") -> np.ndarray:
    dt = np.dtype(dtype)
    x: np.ndarray
    if kind == "sorted":
        x = np.arange(n) // 3
    elif kind == "reversed":
        x = (n - np.arange(n)) // 3
    elif kind == "few":
        x = RNG.integers(0, 5, n)
    elif dt.kind == "b":
        return RNG.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        return RNG.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    else:
        x = RNG.standard_normal(n) * 100
        special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-310, -1e-310, 5e-324, 1.0, -1.0])
        pick = RNG.random(n) < 0.2
        x[pick] = special[RNG.integers(0, len(special), int(pick.sum()))]
        out = x.astype(dt)
        if dt == np.float32 and n > 10:  # a negative NaN with a payload, a float32 denormal
            out.view(np.uint32)[3] = 0xFFC00123
            out.view(np.uint32)[7] = 3
        return out
    if dt.kind == "b":
        return (x % 2).astype(bool)
    return x.astype(dt)


def check_sorted(x: np.ndarray, descending: bool = False, axis: int = -1) -> None:
    d = loom.asarray(x)
    want_idx = np.argsort(x, axis=axis, kind="stable") if not descending else \
        np.flip(x.shape[axis] - 1 - np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable"), axis=axis)
    got_idx = loom.argsort(d, axis=axis, descending=descending).get()
    np.testing.assert_array_equal(got_idx, want_idx)
    got = loom.sort(d, axis=axis, stable=True, descending=descending).get()
    want = np.take_along_axis(x, want_idx, axis=axis)
    # bitwise: -0.0 / 0.0 and NaN payloads in their stable places
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@gpu
@pytest.mark.parametrize("dtype", [bool] + INT_DTYPES + FLOAT_DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_one_row_every_dtype(dtype: Any, n: int) -> None:
    check_sorted(keys(n, dtype))


@gpu
@pytest.mark.parametrize("dtype", [np.int32, np.uint64, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("kind", ["sorted", "reversed", "few"])
def test_orders_and_duplicates(dtype: Any, kind: str) -> None:
    check_sorted(keys(30_001, dtype, kind))
    check_sorted(keys(30_001, dtype, kind), descending=True)


@gpu
@pytest.mark.parametrize("dtype", [bool, np.int8, np.int64, np.float32, np.float64])
def test_descending(dtype: Any) -> None:
    check_sorted(keys(50_000, dtype), descending=True)


@gpu
@pytest.mark.parametrize("shape", [(37, 5000), (3, 4097), (1000, 100), (64, 2048), (1000, 1000), (300, 1500), (5000, 40)])
@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.float64])
def test_rows(shape: Any, dtype: Any) -> None:
    x = keys(shape[0] * shape[1], dtype).reshape(shape)
    check_sorted(x)
    check_sorted(np.ascontiguousarray(x.T), axis=0)


@gpu
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 100_003), (1, 1 << 22), (1000, 1000)])
def test_legacy_pass_design(monkeypatch: Any, shape: Any, dtype: Any) -> None:
    """LOOM_RADIX_LEGACY=1 (the first pass design, kept for A/B timings) sorts and argsorts as NumPy."""
    monkeypatch.setenv("LOOM_RADIX_LEGACY", "1")
    x = keys(shape[0] * shape[1], dtype).reshape(shape)
    check_sorted(x)
    check_sorted(x, descending=True)


@gpu
def test_rows_forced_radix(monkeypatch: Any) -> None:
    """Short rows through the radix engine too (the auto choice takes the network there)."""
    monkeypatch.setenv("LOOM_SORT_ENGINE", "radix")
    check_sorted(keys(100 * 77, np.float32).reshape(100, 77))
    check_sorted(keys(50 * 5, np.int64).reshape(50, 5), descending=True)


def _capacity(dtype: Any, argsort: bool) -> int:
    return _sortnet.block_row_capacity(np.dtype(dtype).itemsize, 4 if argsort else 0)


@gpu
@pytest.mark.parametrize("dtype", [bool] + INT_DTYPES + FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(1000, 1000), (10_000, 100), (100, 10_000), (64, 2), (3, 257), (9, 1)])
def test_block_rows(shape: Any, dtype: Any) -> None:
    """Short rows sort a block a row (the block row sort, up to 8192 keys), long ones by tiles: sort and
    stable argsort (ties by index, NaN last, -0.0 / 0.0 kept in order) against NumPy, both directions."""
    kind = "few" if np.dtype(dtype).kind in "iu" and shape[1] > 2 else "random"
    x = keys(shape[0] * shape[1], dtype, kind).reshape(shape)
    check_sorted(x)
    check_sorted(x, descending=True)
    np.testing.assert_array_equal(loom.sort(loom.asarray(x)).get(), np.sort(x, axis=-1))  # NaN == NaN, -0 == 0


@gpu
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.int64, np.float64])
@pytest.mark.parametrize("argsort", [False, True])
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_block_row_capacity_edges(dtype: Any, argsort: bool, delta: int) -> None:
    """Rows of exactly the block row sort's capacity, one key less (the largest variant) and one more
    (the tile sweep), for values-only sorts and argsort (the int32 index staged beside the keys)."""
    n = _capacity(dtype, argsort) + delta
    assert n >= 2047
    x = keys(5 * n, dtype, "few" if np.dtype(dtype).kind in "iu" else "random").reshape(5, n)
    d = loom.asarray(x)
    if argsort:
        np.testing.assert_array_equal(loom.argsort(d).get(), np.argsort(x, axis=-1, kind="stable"))
        check_sorted(x, descending=True)
    else:
        np.testing.assert_array_equal(loom.sort(d).get(), np.sort(x, axis=-1))


@gpu
def test_block_rows_noncontiguous_and_axes() -> None:
    x = keys(600 * 700, np.float32).reshape(600, 700)
    d = loom.asarray(x)
    np.testing.assert_array_equal(loom.argsort(d[:, ::3]).get(), np.argsort(x[:, ::3], axis=-1, kind="stable"))
    np.testing.assert_array_equal(loom.argsort(d, axis=0).get(), np.argsort(x, axis=0, kind="stable"))
    np.testing.assert_array_equal(loom.sort(d[::2, 1::2]).get(), np.sort(x[::2, 1::2], axis=-1))
    y = keys(2 * 3 * 500, np.int16, "few").reshape(2, 3, 500).transpose(1, 0, 2)
    np.testing.assert_array_equal(loom.argsort(loom.asarray(y)).get(), np.argsort(y, axis=-1, kind="stable"))


@gpu
@pytest.mark.parametrize("env", [{"LOOM_GPU_RADIX_ROWS": "0"}, {"LOOM_GPU_RADIX_ITEMS4": "24", "LOOM_GPU_RADIX_BLOCKS_PER_SM": "2"},
                                 {"LOOM_GPU_RADIX_ITEMS4": "8", "LOOM_GPU_RADIX_ITEMS8": "12"},
                                 {"LOOM_GPU_RADIX_HIST_PARTS": "1", "LOOM_GPU_RADIX_HIST_TILES": "3"},
                                 {"LOOM_GPU_RADIX_RANK": "match"},
                                 {"LOOM_GPU_RADIX_RANK": "match,early", "LOOM_GPU_RADIX_BLOCKS_PER_SM": "3"},
                                 {"LOOM_GPU_RADIX_RANK": "smem"}, {"LOOM_GPU_RADIX_RANK": "smem,match"},
                                 {"LOOM_GPU_RADIX_RANK": "atomic,chain"},
                                 {"LOOM_GPU_RADIX_RANK": "smem", "LOOM_GPU_RADIX_ITEMS4": "20",
                                  "LOOM_GPU_RADIX_BLOCKS_PER_SM": "3"}])
def test_tuning_settings(monkeypatch: Any, env: Any) -> None:
    """Every tuning switch bench/sort_sweep.py times gives NumPy's results (one process, several modules)."""
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for dtype in (np.int8, np.float32, np.float64):
        check_sorted(keys(100_003, dtype))
        check_sorted(keys(3 * 5000, dtype, "few").reshape(3, 5000), descending=True)
        check_sorted(keys(300 * 300, dtype).reshape(300, 300))


@gpu
def test_bfloat16() -> None:
    ml = pytest.importorskip("ml_dtypes")
    x = keys(20_000, np.float32).astype(ml.bfloat16)
    d = loom.asarray(x)
    got = loom.argsort(d).get()
    np.testing.assert_array_equal(got, np.argsort(x.astype(np.float32), kind="stable"))


@gpu
def test_big_float32() -> None:
    x = keys(1 << 26, np.float32)
    d = loom.asarray(x)
    got = loom.sort(d).get()
    want = np.sort(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])
    idx = loom.argsort(d).get()
    np.testing.assert_array_equal(idx, np.argsort(x, kind="stable"))


@gpu
def test_complex_keys() -> None:
    re = keys(20_000, np.float64)
    x = np.empty(20_000, np.complex128)
    x.real, x.imag = re, RNG.permutation(re)
    n = len(x[3::7])
    x[::7][:n] = x[3::7]  # duplicates
    got = loom.argsort(loom.asarray(x)).get()
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))


def ranged_keys(n: int, dtype: Any, kind: str) -> np.ndarray:
    """Keys whose digit passes are partly trivial (one digit holds every key: the sweep skips the pass,
    codegen/gpu_radix_plan.c): "small" integers in [0, 1000) (int32: 2 of 4 passes trivial, int64 6 of 8),
    "equal" one value (every pass trivial: the copy), "low_zero" multiples of 256 (the first pass trivial:
    argsort's index made by a later one), "exponent" floats in [1, 2) with 8 mantissa bits (exponent and
    low bytes trivial) or integers with a common high part, "few" 0..4 (bytes above the first trivial)."""
    dt = np.dtype(dtype)
    r = RNG.integers(0, 1 << 62, n, dtype=np.int64)
    if kind == "equal":
        return np.full(n, r[0] % 100 if dt.kind in "iu" else 3.25, dtype=dt)
    if kind == "small":
        return (r % 1000).astype(dt) if dt.kind in "iu" else ((r % 1000) - 500).astype(dt)
    if kind == "low_zero":
        return ((r % 50) * 256).astype(dt)
    if kind == "exponent":
        if dt.kind == "f":
            return (1 + (r % 256) / 256).astype(dt)
        high = np.iinfo(dt).max // 3 if dt.itemsize > 1 else 0
        return (high - high % 65536 + r % 5000).astype(dt) if dt.itemsize > 2 else (r % 200).astype(dt)
    return (r % 5).astype(dt)


TRIVIAL_KINDS = ["small", "equal", "low_zero", "exponent", "few"]


@gpu
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16, np.uint16, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("kind", TRIVIAL_KINDS)
@pytest.mark.parametrize("n", [1000, 4097, 100_003])
@pytest.mark.parametrize("through", ["sweep", "block"])
def test_trivial_passes(monkeypatch: Any, dtype: Any, kind: str, n: int, through: str) -> None:
    """Sort, stable argsort (both directions) and unique of keys with trivial digit passes against NumPy,
    below one tile and above: short rows through the tile sweep (LOOM_GPU_RADIX_ROWS=0) or the block row
    sort (which skips a row's trivial passes itself)."""
    monkeypatch.setenv("LOOM_SORT_ENGINE", "radix")
    if through == "sweep":
        monkeypatch.setenv("LOOM_GPU_RADIX_ROWS", "0")
    x = ranged_keys(n, dtype, kind)
    check_sorted(x)
    check_sorted(x, descending=True)
    v, c = (a.get() for a in loom.unique(loom.asarray(x), return_counts=True))
    wv, wc = np.unique(x, return_counts=True)
    np.testing.assert_array_equal(v, wv)
    np.testing.assert_array_equal(c, wc)


@gpu
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(12, 20_000), (6, 3000), (5, 4097), (600, 40)])
@pytest.mark.parametrize("through", ["sweep", "block"])
def test_trivial_passes_per_row(monkeypatch: Any, dtype: Any, shape: Any, through: str) -> None:
    """Rows of different ranges: each row skips its own passes (plans that differ per row; a row whose
    every pass is trivial copied beside rows that sort), sort and argsort along the rows."""
    monkeypatch.setenv("LOOM_SORT_ENGINE", "radix")
    if through == "sweep":
        monkeypatch.setenv("LOOM_GPU_RADIX_ROWS", "0")
    rows = [ranged_keys(shape[1], dtype, TRIVIAL_KINDS[r % 5]) for r in range(shape[0] - 1)]
    x = np.stack(rows + [keys(shape[1], dtype)])  # one row of random keys: no trivial pass
    check_sorted(x)
    check_sorted(x, descending=True)


@gpu
def test_trivial_passes_switch(monkeypatch: Any) -> None:
    """LOOM_GPU_RADIX_SKIP=0 (every pass run, the A/B switch) sorts the same."""
    monkeypatch.setenv("LOOM_GPU_RADIX_SKIP", "0")
    check_sorted(ranged_keys(100_003, np.int32, "small"))
    check_sorted(np.stack([ranged_keys(20_000, np.int64, k) for k in TRIVIAL_KINDS]), descending=True)
    check_sorted(np.stack([ranged_keys(1000, np.int32, k) for k in TRIVIAL_KINDS]))  # the block row sort


@gpu
def test_unique_small_range_big() -> None:
    """unique's benchmark case: 2^26 int32 of 1000 distinct values (2 of 4 passes trivial)."""
    x = RNG.integers(0, 1000, 1 << 26).astype(np.int32)
    v, i, c = (r.get() for r in loom.unique(loom.asarray(x), return_index=True, return_counts=True))
    wv, wi, wc = np.unique(x, return_index=True, return_counts=True)
    for g, w in ((v, wv), (i, wi), (c, wc)):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(loom.argsort(loom.asarray(x)).get(), np.argsort(x, kind="stable"))


@gpu
def test_unique_searchsorted_lexsort() -> None:
    x = RNG.integers(-500, 500, 100_000).astype(np.int32)
    v, i, inv, c = (r.get() for r in loom.unique(loom.asarray(x), return_index=True, return_inverse=True,
                                                return_counts=True))
    wv, wi, winv, wc = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in ((v, wv), (i, wi), (inv.reshape(-1), winv.reshape(-1)), (c, wc)):
        np.testing.assert_array_equal(g, w)
    a = np.sort(keys(50_000, np.float32))
    q = keys(60_000, np.float32)
    for side in ("left", "right"):
        np.testing.assert_array_equal(loom.searchsorted(loom.asarray(a), loom.asarray(q), side=side).get(),
                                      np.searchsorted(a, q, side=side))
    k1, k2 = RNG.integers(0, 10, 20_000), keys(20_000, np.float64)
    np.testing.assert_array_equal(loom.lexsort([loom.asarray(k2), loom.asarray(k1)]).get(), np.lexsort([k2, k1]))


@gpu
def test_noncontiguous_input() -> None:
    x = keys(40_000, np.float32)
    d = loom.asarray(x)[::2]
    np.testing.assert_array_equal(loom.argsort(d).get(), np.argsort(x[::2], kind="stable"))


def test_engine_choice(monkeypatch: Any) -> None:
    """The radix engine for GPU arrays with one row or long rows of real keys; the network otherwise."""
    class Fake:
        def __init__(self, dev: int, dtype: Any) -> None:
            self._device = (dev, 0)
            self.dtype = np.dtype(dtype)

    monkeypatch.delenv("LOOM_SORT_ENGINE", raising=False)
    assert _sortnet.use_radix([Fake(1, np.float32)], 1, 10)
    assert _sortnet.use_radix([Fake(2, np.int8)], 100, _sortnet.RADIX_MIN_ROW)
    # shorter rows: radix while its whole tiles cost less than the network's steps (the cost model)
    assert _sortnet.use_radix([Fake(1, np.float32)], 1000, 1000)
    assert _sortnet.use_radix([Fake(1, np.int64)], 1000, 1000, 4)
    # rows that fit a block sort there in one launch: cheaper than the network's steps for rows of >= ~32
    assert _sortnet.use_radix([Fake(1, np.float32)], 1 << 16, 1024)
    assert _sortnet.use_radix([Fake(1, np.float32)], 10000, 100)
    assert _sortnet.use_radix([Fake(1, np.float64)], 50, 2000, 4)
    assert not _sortnet.use_radix([Fake(1, np.float32)], 1 << 20, 16)  # 16 keys in a 256-slot block
    assert _sortnet.block_row_capacity(4, 0) == 8192 and _sortnet.block_row_capacity(4, 4) == 4096
    assert _sortnet.block_row_capacity(8, 4) == 2048 and _sortnet.block_row_capacity(1, 0) == 8192
    monkeypatch.setenv("LOOM_GPU_RADIX_ROWS", "0")  # the block row sort off: the tile model's choice
    assert _sortnet.block_row_capacity(4, 0) == 0
    assert not _sortnet.use_radix([Fake(1, np.float32)], 1 << 16, 1024)
    assert not _sortnet.use_radix([Fake(1, np.float32)], 10000, 100)
    monkeypatch.delenv("LOOM_GPU_RADIX_ROWS")
    assert not _sortnet.use_radix([Fake(0, np.float32)], 1, 1 << 20)  # the host: NumPy / the network
    assert not _sortnet.use_radix([Fake(1, np.complex64)], 1, 1 << 20)
    assert not _sortnet.use_radix([Fake(1, np.float32)], 1, 1 << 30)
    monkeypatch.setenv("LOOM_SORT_ENGINE", "network")
    assert not _sortnet.use_radix([Fake(1, np.float32)], 1, 1 << 20)
    monkeypatch.setenv("LOOM_SORT_ENGINE", "radix")
    assert _sortnet.use_radix([Fake(1, np.float32)], 100, 5)
    monkeypatch.setenv("LOOM_SORT_ENGINE", "fast")
    with pytest.raises(ValueError, match="LOOM_SORT_ENGINE"):
        _sortnet.use_radix([Fake(1, np.float32)], 1, 10)


def test_host_arrays_keep_numpy() -> None:
    """On the host loom.sort stays NumPy's (the radix sort is for GPU arrays), with the same results."""
    if ON_GPU:
        pytest.skip("arrays live on the GPU in this run")
    x = keys(10_000, np.float32)
    np.testing.assert_array_equal(loom.argsort(loom.asarray(x)).get(), np.argsort(x, kind="stable"))


def _np_stable_order(h: np.ndarray, descending: bool) -> np.ndarray:
    """NumPy's stable order along the last axis (descending: the reverse order, ties kept in order)."""
    if not descending:
        return np.argsort(h, axis=-1, kind="stable")
    n = h.shape[-1]
    return np.flip(n - 1 - np.argsort(np.flip(h, axis=-1), axis=-1, kind="stable"), axis=-1)


def test_radix_composition_on_host(monkeypatch: Any) -> None:
    """_sortnet's use of loom_sort -- several keys least significant first with the order carried as
    values, payloads gathered, argsort's index -- checked on the host: loom_sort and loom_take_rows
    replaced by NumPy stand-ins (the kernels themselves are test_gpu_sort's), results against NumPy."""
    calls = []

    def radix_sort(keys: Any, values: Any, flags: int) -> Any:
        calls.append(flags)
        h = keys.get()
        order = _np_stable_order(h, bool(flags & 1))
        out = np.take_along_axis(h, order, axis=-1)
        moved = order.astype(np.int64) if flags & 2 else (
            None if values is None else np.take_along_axis(values.get(), order, axis=-1))
        return loom.asarray(out), (None if moved is None else loom.asarray(moved))

    def take_rows(src: Any, index: Any) -> Any:
        return loom.asarray(np.take_along_axis(src.get(), index.get(), axis=-1))

    monkeypatch.setenv("LOOM_SORT_ENGINE", "network")  # host arrays sort on the device path
    monkeypatch.setenv("LOOM_SEARCHSORTED_BINARY", "0")  # searchsorted by the merge (two sorts), not bisection
    monkeypatch.setattr(_sortnet, "use_radix", lambda keys, r, n, extra=0: True)
    monkeypatch.setattr(_sortnet._core, "radix_sort", radix_sort)
    monkeypatch.setattr(_sortnet._core, "take_rows", take_rows)
    x = keys(5000, np.float32)
    np.testing.assert_array_equal(loom.argsort(loom.asarray(x)).get(), np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(loom.sort(loom.asarray(x), descending=True).get().view(np.uint32),
                                  np.take_along_axis(x, _np_stable_order(x, True), -1).view(np.uint32))
    k1, k2 = RNG.integers(0, 4, 3000), keys(3000, np.float64)
    np.testing.assert_array_equal(loom.lexsort([loom.asarray(k2), loom.asarray(k1)]).get(), np.lexsort([k2, k1]))
    c = np.empty(3000, np.complex128)  # parts set apart: R + nan j, nan + R j and nan + nan j all occur
    c.real, c.imag = keys(3000, np.float64), keys(3000, np.float64)
    c[::5] = c[1::5][: len(c[::5])]
    np.testing.assert_array_equal(loom.argsort(loom.asarray(c)).get(), np.argsort(c, kind="stable"))
    u = RNG.integers(-50, 50, 4000).astype(np.int16)
    got = loom.unique(loom.asarray(u), return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, np.unique(u, return_index=True, return_inverse=True, return_counts=True)):
        np.testing.assert_array_equal(g.get().reshape(-1), np.asarray(w).reshape(-1))
    a, q = np.sort(keys(2000, np.float32)), keys(5000, np.float32)
    for side in ("left", "right"):
        np.testing.assert_array_equal(loom.searchsorted(loom.asarray(a), loom.asarray(q), side=side).get(),
                                      np.searchsorted(a, q, side=side))
    rows = keys(40 * 300, np.int32).reshape(40, 300)
    np.testing.assert_array_equal(loom.argsort(loom.asarray(rows), axis=0).get(), np.argsort(rows, axis=0, kind="stable"))
    assert len(calls) > 10 and 1 in calls and 2 in calls  # the radix path ran, descending and argsort


def test_radix_unavailable_falls_back(monkeypatch: Any) -> None:
    """A device that cannot build the radix kernels (NotImplementedError) sorts with the network, warning."""
    def radix_sort(keys: Any, values: Any, flags: int) -> Any:
        raise NotImplementedError("no code-object linker")

    monkeypatch.setenv("LOOM_SORT_ENGINE", "network")
    monkeypatch.setattr(_sortnet, "use_radix", lambda keys, r, n, extra=0: True)
    monkeypatch.setattr(_sortnet._core, "radix_sort", radix_sort)
    x = keys(3000, np.float32)
    with pytest.warns(RuntimeWarning, match="radix sort is unavailable"):
        got = loom.argsort(loom.asarray(x)).get()
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))
