"""Steady-state calls of the sort- and compaction-based functions make no new evaluation plans: the steps
after a sort (a library call whose results are new buffers every call) run as traced stages that rebind
their inputs (_sorting._runs_stage, _setops._stage), and masks over the same arrays hash-cons to the same
nodes. Values against NumPy. On the host the device path runs with the sort replaced by a stand-in that,
like the GPU radix sort, returns new buffers each call; the plans the stand-in itself makes (uploading its
NumPy results) are not counted."""
import numpy as np
import pytest

import loom
from loom import _sortnet
from loom._common import _from_numpy

rng = np.random.default_rng(12)


class _FreshSort:
    """_sortnet.sort_rows through NumPy's stable sort, results in new loom arrays (as the radix sort's)."""

    def __init__(self):
        self.plans = 0

    def __call__(self, keys, nans, descending=False, stable=False, payloads=()):
        assert not descending
        p0 = loom.stats()["plans_made"]
        hk = [k.get() for k in keys]
        order = np.stack([np.lexsort([k[i] for k in reversed(hk)]) for i in range(hk[0].shape[0])])
        dev = keys[0]._device
        take = lambda a: _from_numpy(np.take_along_axis(a, order, 1).copy(), copy=True, device=dev)  # noqa: E731
        idx = _from_numpy(order.astype(np.int64), copy=True, device=dev) if (stable or payloads) else None
        out = [take(k) for k in hk], idx, [take(p.get()) for p in payloads]
        self.plans += loom.stats()["plans_made"] - p0
        return out


@pytest.fixture
def fresh_sort(monkeypatch):
    monkeypatch.setenv("LOOM_SORT_ENGINE", "network")  # the device path of unique and sort on the host
    s = _FreshSort()
    monkeypatch.setattr(_sortnet, "sort_rows", s)
    return s


def _steady(f, check, fresh, calls=5):
    for _ in range(3):
        check(f())
    p0, s0 = loom.stats()["plans_made"], fresh.plans if fresh else 0
    for _ in range(calls):
        r = f()
        for a in (r if isinstance(r, tuple) else (r,)):
            a.get()
    made = loom.stats()["plans_made"] - p0 - ((fresh.plans - s0) if fresh else 0)
    check(r)
    return made


def _eq(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.get(), w)


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8, np.complex64])
@pytest.mark.parametrize("flags", [(False, False, False), (True, True, True), (False, True, False),
                                   (False, False, True)])
def test_unique_makes_no_plans_in_steady_state(fresh_sort, dtype, flags):
    h = rng.integers(0, 50, 3000).astype(dtype)
    if np.dtype(dtype).kind in "fc":
        h[::97] = np.nan
    x = loom.asarray(h)
    ri, rv, rc = flags
    want = np.unique(h, return_index=ri, return_inverse=rv, return_counts=rc)
    made = _steady(lambda: loom.unique(x, return_index=ri, return_inverse=rv, return_counts=rc),
                   lambda r: _eq(r, want), fresh_sort)
    assert made == 0


def test_unique_standard_keeps_nans_distinct(fresh_sort):
    h = np.array([3.0, np.nan, 1.0, np.nan, 3.0, -0.0, 0.0])
    r = loom.unique_all(loom.asarray(h))
    w = np.unique(h, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    for g, e in zip(r, w):
        np.testing.assert_array_equal(g.get(), e)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_unique_short(fresh_sort, n):
    h = rng.integers(0, 3, n).astype(np.int64)
    _eq(loom.unique(loom.asarray(h), True, True, True), np.unique(h, True, True, True))


def test_setops_make_no_plans_in_steady_state(fresh_sort):
    a = rng.integers(0, 400, 2000).astype(np.int32)
    b = rng.integers(200, 600, 1500).astype(np.int32)
    la, lb = loom.asarray(a), loom.asarray(b)
    cases = [
        (lambda: loom.intersect1d(la, lb), np.intersect1d(a, b)),
        (lambda: loom.intersect1d(la, lb, return_indices=True), np.intersect1d(a, b, return_indices=True)),
        (lambda: loom.setxor1d(la, lb), np.setxor1d(a, b)),
        (lambda: loom.union1d(la, lb), np.union1d(a, b)),
    ]
    for f, want in cases:
        assert _steady(f, lambda r, w=want: _eq(r, w), fresh_sort) == 0


def test_setops_values_edge_cases(fresh_sort):
    for pa, pb in [([1, 1, 1], [1]), ([5], [6]), ([2, 1], [3, 2, 2, 1]), ([], [1, 2])]:
        a, b = np.array(pa, np.int64), np.array(pb, np.int64)
        la, lb = loom.asarray(a), loom.asarray(b)
        _eq(loom.setxor1d(la, lb), np.setxor1d(a, b))
        _eq(loom.intersect1d(la, lb), np.intersect1d(a, b))
        _eq(loom.intersect1d(la, lb, return_indices=True), np.intersect1d(a, b, return_indices=True))
        _eq(loom.setdiff1d(la, lb), np.setdiff1d(a, b))
        ua, ub = np.unique(a), np.unique(b)
        _eq(loom.intersect1d(loom.asarray(ua), loom.asarray(ub), assume_unique=True, return_indices=True),
            np.intersect1d(ua, ub, assume_unique=True, return_indices=True))


# nonzero2d: the per-axis unravel stays lazy by design (fused into its consumers) and reads the
# compaction's new buffer each call: a new graph input, planned once by structure (runtime/plan_cache.c)
@pytest.mark.parametrize("kind", ["nonzero", "mask", "flatnonzero", "argwhere", "nonzero2d"])
def test_compaction_makes_no_plans_in_steady_state(kind):
    h = rng.standard_normal((64, 50))
    if kind != "nonzero2d":
        h = h.reshape(-1) if kind == "nonzero" else h
    x = loom.asarray(h)
    m = loom.asarray(h > 0.3)
    f, want = {"nonzero": (lambda: loom.nonzero(m), np.nonzero(h > 0.3)),
               "nonzero2d": (lambda: loom.nonzero(m), np.nonzero(h > 0.3)),
               "mask": (lambda: x[x > 0.3], h[h > 0.3]),
               "argwhere": (lambda: loom.argwhere(m), np.argwhere(h > 0.3)),
               "flatnonzero": (lambda: loom.flatnonzero(m), np.flatnonzero(h > 0.3))}[kind]
    assert _steady(f, lambda r: _eq(r, want), None) == 0


ON_GPU = loom.asarray(np.zeros(1))._device[0] != 0


@pytest.mark.skipif(not ON_GPU, reason="needs a GPU: the real radix sort (the host tests above stand it in)")
@pytest.mark.parametrize("flags", [(False, False, False), (True, True, True)])
def test_unique_on_the_gpu_makes_no_plans(flags):
    h = rng.integers(0, 1000, 1 << 20).astype(np.int32)
    x = loom.asarray(h)
    want = np.unique(h, *flags)
    assert _steady(lambda: loom.unique(x, *flags), lambda r: _eq(r, want), None) == 0
