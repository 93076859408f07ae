"""quantile, percentile, bincount and digitize on the array's device (python/loom/_order_stats.py) against
NumPy: the sort-based path runs on the host under LOOM_SORT_ENGINE=network (a GPU array takes it by
default), so CI checks the device code without a GPU. quantile / percentile give NumPy's bits (NumPy's
positions and interpolation formula), for every method the device handles, integer and float dtypes,
NaN slices, q scalars (weak: a float32 array stays float32) and arrays, axes, keepdims and out=; bincount
and digitize their edge cases and NumPy's errors. Host arrays without the knob keep NumPy's own code."""
from typing import Any

import numpy as np
import pytest

import loom

METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]
DTYPES = ["int8", "uint8", "int32", "int64", "float16", "float32", "float64"]


@pytest.fixture(autouse=True)
def device_engine(monkeypatch):
    monkeypatch.setenv("LOOM_SORT_ENGINE", "network")


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def data(shape, dtype, seed=0):
    r = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return r.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return r.integers(max(info.min, -50), min(info.max, 50), shape, endpoint=True).astype(dtype)


def same(got, want):
    got = np.asarray(host(got))
    assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want), (got.dtype, np.asarray(want).dtype, got.shape)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_quantile_bits(method, dtype):
    x = data((5, 8), dtype, 1)
    lx = loom.asarray(x)
    for q in (0.0, 0.3, 0.5, 1.0, 1, [0.1, 0.9], np.array([[0.25], [0.75]]), np.float64(0.6)):
        for axis in (None, 0, 1, -1):
            same(loom.quantile(lx, q, axis=axis, method=method), np.quantile(x, q, axis=axis, method=method))
    same(loom.quantile(lx, [0.2, 0.4], axis=0, method=method, keepdims=True),
         np.quantile(x, [0.2, 0.4], axis=0, method=method, keepdims=True))
    same(loom.quantile(lx, 0.4, method=method, keepdims=True), np.quantile(x, 0.4, method=method, keepdims=True))


def test_percentile_and_out():
    x = data((6, 7, 3), "float32", 2)
    lx = loom.asarray(x)
    for q in (0, 37.5, 100, [5, 50, 95]):
        same(loom.percentile(lx, q, axis=1), np.percentile(x, q, axis=1))
    out = loom.empty((6, 3), dtype=np.float64)
    r = loom.percentile(lx, 30, axis=1, out=out)
    assert r is out
    np.testing.assert_array_equal(host(out), np.percentile(x, 30, axis=1).astype(np.float64))


def test_one_element_and_long_axis():
    same(loom.quantile(loom.asarray(np.array([3.5])), [0, 0.5, 1]), np.quantile(np.array([3.5]), [0, 0.5, 1]))
    x = data(10001, "float64", 3)
    same(loom.quantile(loom.asarray(x), [0.001, 0.5, 0.999]), np.quantile(x, [0.001, 0.5, 0.999]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's own, on inf - inf
@pytest.mark.parametrize("method", METHODS)
def test_nan_slices(method):
    x = data((4, 6), "float64", 4)
    x[1, 2] = np.nan
    x[3, :] = np.nan
    x[0, 5] = np.inf
    lx = loom.asarray(x)
    for axis in (None, 0, 1):
        same(loom.quantile(lx, [0.0, 0.5, 1.0], axis=axis, method=method), np.quantile(x, [0.0, 0.5, 1.0], axis=axis, method=method))


def test_errors_and_host_fallbacks():
    lx = loom.asarray(data((3, 4), "float32", 5))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        loom.quantile(lx, 1.5)
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        loom.percentile(lx, [-1, 50])
    with pytest.raises(ValueError):
        loom.quantile(lx, np.nan)
    # methods, axis tuples and weights the device path leaves to NumPy still answer as NumPy does
    x = np.asarray(host(lx))
    np.testing.assert_allclose(host(loom.quantile(lx, 0.3, method="weibull")), np.quantile(x, 0.3, method="weibull"))
    np.testing.assert_allclose(host(loom.quantile(lx, 0.3, axis=(0, 1))), np.quantile(x, 0.3, axis=(0, 1)))
    with pytest.raises(TypeError):
        loom.quantile(loom.asarray(np.ones(3, np.complex64)), 0.5)


def test_bincount():
    r = np.random.default_rng(6)
    for dtype in ("int8", "uint8", "int32", "int64"):
        xi = r.integers(0, 40, 5000).astype(dtype)
        lx = loom.asarray(xi)
        same(loom.bincount(lx), np.bincount(xi))
        same(loom.bincount(lx, minlength=100), np.bincount(xi, minlength=100))
        w = r.standard_normal(5000)
        np.testing.assert_allclose(host(loom.bincount(lx, weights=loom.asarray(w))), np.bincount(xi, weights=w), rtol=1e-12, atol=1e-12)
        wi = r.integers(0, 5, 5000).astype(np.int32)  # integer weights: float64 sums of whole numbers, exact
        same(loom.bincount(lx, weights=loom.asarray(wi), minlength=3), np.bincount(xi, weights=wi, minlength=3))
    same(loom.bincount(loom.asarray(np.zeros(0, np.int64))), np.bincount(np.zeros(0, np.int64)))
    same(loom.bincount(loom.asarray(np.zeros(0, np.int64)), minlength=4), np.bincount(np.zeros(0, np.int64), minlength=4))
    with pytest.raises(ValueError, match="negative"):
        loom.bincount(loom.asarray(np.array([1, -1, 2])))
    with pytest.raises(ValueError, match="minlength"):
        loom.bincount(loom.asarray(np.array([1, 2])), minlength=-1)
    with pytest.raises((ValueError, TypeError)):
        loom.bincount(loom.asarray(np.array([[1, 2]])))


def test_digitize():
    r = np.random.default_rng(7)
    v = r.standard_normal(3000)
    v[:3] = [np.nan, np.inf, -np.inf]
    lv = loom.asarray(v)
    inc = np.array([-2.0, -0.5, 0.0, 0.0, 1.0, 3.0])
    for bins in (inc, inc[::-1], np.array([0.5]), np.array([1.0, 1.0])):
        for right in (False, True):
            same(loom.digitize(lv, bins, right=right), np.digitize(v, bins, right=right))
    vi = r.integers(-5, 15, 100)
    same(loom.digitize(loom.asarray(vi), np.array([0, 3, 10])), np.digitize(vi, np.array([0, 3, 10])))
    same(loom.digitize(lv.reshape(30, 100), loom.asarray(inc)), np.digitize(v.reshape(30, 100), inc))
    with pytest.raises(ValueError, match="monoton"):
        loom.digitize(lv, np.array([0.0, 2.0, 1.0]))


def test_host_arrays_keep_numpys_code(monkeypatch):
    """Without the knob a host array goes to NumPy's functions on its buffer (they are faster there)."""
    monkeypatch.setenv("LOOM_SORT_ENGINE", "auto")
    x = data((4, 5), "float32", 8)
    np.testing.assert_array_equal(host(loom.quantile(loom.asarray(x), 0.3, axis=1)), np.quantile(x, 0.3, axis=1))
    xi = np.array([0, 3, 3, 1])
    np.testing.assert_array_equal(host(loom.bincount(loom.asarray(xi))), np.bincount(xi))


def hist_same(x, **kw):
    args = {k: (loom.asarray(v) if k == "weights" else v) for k, v in kw.items()}
    got, edges = loom.histogram(loom.asarray(x), **args)
    want, want_edges = np.histogram(x, **kw)
    np.testing.assert_array_equal(host(edges), want_edges)
    assert host(edges).dtype == want_edges.dtype
    got = np.asarray(host(got))
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
    else:  # weighted sums and densities: float64 sums in another order
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint8", "int32", "bool"])
def test_histogram(dtype):
    r = np.random.default_rng(9)
    x = (r.standard_normal(20001) * 20).astype(dtype)
    hist_same(x)
    hist_same(x, bins=37)
    hist_same(x, bins=7, range=(-3, 5))
    hist_same(x, bins=[-10, -1, 0, 0.5, 3, 40])
    hist_same(x, density=True)
    hist_same(x, bins=13, weights=r.random(20001))
    hist_same(x, bins=5, weights=r.integers(0, 5, 20001).astype(np.int32))


def test_histogram_edges_exact_and_errors():
    hist_same(np.linspace(0, 1, 1001).astype(np.float32), bins=1000)  # every value on an edge
    hist_same(np.linspace(-1, 1, 4097), bins=4096)
    hist_same(np.zeros(0, np.float32))
    hist_same(np.full(10, 3.0))
    x = np.random.default_rng(10).standard_normal(1000)
    x[5] = np.nan
    hist_same(x, range=(-1, 1))  # NaN and out-of-range values are not counted
    with pytest.raises(ValueError, match="not finite"):
        loom.histogram(loom.asarray(x))
    with pytest.raises(ValueError, match="monotonically"):
        loom.histogram(loom.asarray(x), bins=[0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="max must be larger than min"):
        loom.histogram(loom.asarray(x), range=(2, 1))


def test_compiles_print_no_llvm_remarks():
    """A kernel LLVM hints at and leaves scalar (the histogram's scatter) compiles silently: LLVM's remarks
    and warnings are dropped by the context's handler (codegen/cg_llvm.h), not printed on stderr."""
    import subprocess
    import sys
    code = ("import numpy as np, loom\n"
            "x = loom.asarray(np.random.default_rng(0).standard_normal(100000).astype(np.float32))\n"
            "h = loom.histogram(x, bins=13, weights=loom.asarray(np.ones(100000)))\n"
            "print(int(h[0].get().sum()))\n")
    env = dict(__import__("os").environ, LOOM_SORT_ENGINE="network", LOOM_HOST_DISK_CACHE="0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "remark" not in r.stderr and "warning" not in r.stderr.lower(), r.stderr
    assert r.stdout.strip() == "100000"


def test_overwrite_input_on_the_host(monkeypatch):
    """overwrite_input=True on NumPy's path: NumPy partitions the loom array's own memory (the input may
    change, as NumPy and CuPy allow); the answer is NumPy's for the original values."""
    monkeypatch.setenv("LOOM_SORT_ENGINE", "auto")
    h = data((10, 2, 3, 5), "float32", 11)
    for fn, np_fn, q in ((loom.quantile, np.quantile, [0.1, 0.5, 0.9]), (loom.percentile, np.percentile, 40)):
        a = loom.asarray(h.copy())
        got = fn(a, loom.asarray(np.asarray(q, np.float32)), axis=-1, overwrite_input=True)
        np.testing.assert_array_equal(host(got), np_fn(h, np.asarray(q, np.float32), axis=-1))
        assert not np.array_equal(host(a), h)  # partitioned in place
        np.testing.assert_array_equal(np.sort(host(a), axis=-1), np.sort(h, axis=-1))  # the same values


def interp_same(x, xp, fp, **kw):
    got = np.asarray(host(loom.interp(loom.asarray(x), xp, fp, **kw)))
    want = np.interp(x, host(xp) if isinstance(xp, loom.ndarray) else xp, host(fp) if isinstance(fp, loom.ndarray) else fp, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # NumPy's C loop, point for point: the same bits


def test_interp():
    r = np.random.default_rng(12)
    xp, fp = np.sort(r.standard_normal(50)), r.standard_normal(50)
    x = r.standard_normal(10000) * 1.5
    x[:6] = [np.nan, np.inf, -np.inf, xp[0], xp[-1], xp[10]]
    interp_same(x, xp, fp)
    interp_same(x, xp, fp, left=-7, right=9.5)
    interp_same(x.astype(np.float32), xp, fp)
    interp_same(x.reshape(100, 100), loom.asarray(xp), loom.asarray(fp))
    interp_same(x, np.array([0.5]), np.array([2.0]))  # one sample point
    interp_same(np.linspace(-1, 3, 101), np.array([0.0, 1.0, 1.0, 2.0]), np.array([0.0, 1.0, 3.0, 4.0]))  # a repeated xp
    interp_same(np.linspace(-1, 4, 101), np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, np.inf, np.inf, 2.0]))  # inf slopes
    interp_same(np.arange(10).astype(np.int32), [1, 3, 5], [10, 30, 50])
    with pytest.raises(ValueError, match="same length"):
        loom.interp(loom.asarray(x), xp, fp[:-1])
    with pytest.raises(ValueError, match="empty"):
        loom.interp(loom.asarray(x), [], [])
    # period= and complex fp: NumPy's
    np.testing.assert_allclose(host(loom.interp(loom.asarray(x[6:]), xp, fp, period=2.0)), np.interp(x[6:], xp, fp, period=2.0))
    np.testing.assert_array_equal(host(loom.interp(loom.asarray(x[6:]), xp, fp + 1j)), np.interp(x[6:], xp, fp + 1j))


@pytest.mark.parametrize("n", [33, 64, 65, 1000, 4097])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "int64", "complex128"])
def test_searchsorted_binary_search(n, dtype, monkeypatch):
    """searchsorted's binary search on the device (_sorting._binary_search: a sorted array of more than 32
    elements) against NumPy for both sides, with NaN (sorted last), repeated values, infinities and
    queries outside the range; and the same answers from the merge path (LOOM_SEARCHSORTED_BINARY=0)."""
    r = np.random.default_rng(n)
    if dtype == "complex128":
        a = r.standard_normal(n) + 1j * r.standard_normal(n)
        a[:4] = [complex(np.nan, 0), complex(0, np.nan), complex(np.nan, np.nan), 1 + 1j]
        v = r.standard_normal((7, 9)) + 1j * r.standard_normal((7, 9))
        v[0, :3] = [complex(np.nan, 0), complex(0, np.nan), a[10]]
    else:
        a = (r.standard_normal(n) * 30).astype(dtype)
        v = (r.standard_normal((7, 9)) * 35).astype(dtype)
        if dtype.startswith("float"):
            a[:3] = [np.nan, np.inf, -np.inf]
            v[0, :3] = [np.nan, np.inf, -np.inf]
        a[5:9] = a[5]
        v[1, 0] = a[5]
    a = np.sort(a)
    for side in ("left", "right"):
        want = np.searchsorted(a, v, side=side)
        same(loom.searchsorted(loom.asarray(a), loom.asarray(v), side=side), want)
        with monkeypatch.context() as mp:
            mp.setenv("LOOM_SEARCHSORTED_BINARY", "0")
            same(loom.searchsorted(loom.asarray(a), loom.asarray(v), side=side), want)


def _random_array(r, shape, dtype):
    if np.dtype(dtype).kind == "f":
        x = (r.standard_normal(shape) * r.choice([1, 100, 1e-3])).astype(dtype)
        if x.size and r.random() < 0.3:
            x.ravel()[r.integers(0, x.size, max(1, x.size // 10))] = r.choice([np.nan, np.inf, -np.inf])
        if x.size and r.random() < 0.3:
            x = np.round(x)  # ties
        return x
    info = np.iinfo(dtype)
    return r.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dtype)


def _outcome(fn):
    try:
        return fn()
    except Exception as e:  # the same error type on both sides counts as agreement
        return e


def _agree(got, want, what):
    if isinstance(want, Exception) or isinstance(got, Exception):
        assert type(got) is type(want), (what, got, want)
        return
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        g, w = np.asarray(host(g)), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (what, g.dtype, w.dtype, g.shape, w.shape)
        np.testing.assert_array_equal(g, w, err_msg=str(what))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's own (inf - inf, all-NaN slices)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_differential(seed):
    """Random shapes, dtypes (NaN, inf, ties), non-contiguous views, axes, methods, q, bins and ranges:
    quantile, histogram, searchsorted and interp of the device code against NumPy, exact (a short run of
    the campaign that found nothing in 900 programs on 2026-12-05)."""
    r = np.random.default_rng(seed)
    for _ in range(40):
        shape = tuple(int(s) for s in r.integers(1, 9, r.integers(1, 4)))
        dtype = str(r.choice(["float32", "float64", "int32", "int16", "uint8", "float16"]))
        x = _random_array(r, shape, dtype)
        if x.ndim > 1 and r.random() < 0.3:
            x = x.T
        lx = loom.asarray(x)
        method: Any = str(r.choice(METHODS))
        q0 = float(r.choice([0.0, 1.0, 0.5, float(r.random()), -1.0]))
        q: Any = r.random(int(r.integers(1, 4))) if q0 == -1.0 else q0
        pick = int(r.integers(-x.ndim - 1, x.ndim))
        axis: Any = None if pick < -x.ndim else pick
        kd = bool(r.random() < 0.3)
        _agree(_outcome(lambda: loom.quantile(lx, q, axis=axis, method=method, keepdims=kd)),
               _outcome(lambda: np.quantile(x, q, axis=axis, method=method, keepdims=kd)), ("quantile", shape, dtype, method, q, axis))
        flat = x.ravel()
        bins = int(r.choice([1, 2, 10, int(r.integers(1, 300))]))
        lo_hi = sorted(float(v) for v in r.standard_normal(2) * 10)
        rng: Any = None if r.random() < 0.6 else (lo_hi[0], lo_hi[1])
        _agree(_outcome(lambda: loom.histogram(loom.asarray(flat), bins=bins, range=rng)),
               _outcome(lambda: np.histogram(flat, bins=bins, range=rng)), ("histogram", dtype, bins, rng))
        if dtype != "float16":
            a = np.sort(_random_array(r, int(r.integers(1, 200)), dtype))
            v = _random_array(r, int(r.integers(0, 50)), dtype)
            for side in ("left", "right"):
                _agree(loom.searchsorted(loom.asarray(a), loom.asarray(v), side=side), np.searchsorted(a, v, side=side),
                       ("searchsorted", dtype, len(a), side))
        n = int(r.integers(1, 40))
        xp, fp = np.sort(r.standard_normal(n)), r.standard_normal(n)
        if r.random() < 0.3:
            xp = np.round(xp)
        xv = _random_array(r, int(r.integers(0, 100)), "float64")
        _agree(loom.interp(loom.asarray(xv), xp, fp), np.interp(xv, xp, fp), ("interp", n))


@pytest.mark.parametrize("n", [0, 1, 7, 33, 5000, 70000])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8", "int64", "complex64", "bool"])
def test_host_many_queries_binary_search(n, dtype, monkeypatch):
    """A host array with LOOM_SORT_ENGINE unset: 2^14 queries or more take the binary search kernel
    (_sorting._HOST_SEARCH_MIN_QUERIES) for any length of the sorted array, NumPy's below and with
    LOOM_SORT_ENGINE=numpy; every answer NumPy's, with NaN, infinities, repeats, 2-d and strided queries,
    queries of another dtype, and digitize / interp of the same points."""
    if loom.asarray(np.zeros(1))._on_gpu:
        pytest.skip("host arrays' choice of kernel: this run's default device is a GPU (LOOM_DEVICE=host runs it)")
    monkeypatch.setenv("LOOM_SORT_ENGINE", "auto")
    from loom import _sorting
    m = _sorting._HOST_SEARCH_MIN_QUERIES
    r = np.random.default_rng(n)
    if dtype == "bool":
        a, v = np.sort(r.integers(0, 2, n).astype(bool)), r.integers(0, 2, (m // 64, 128)).astype(bool)
    elif dtype.startswith("complex"):
        a = (r.standard_normal(n) + 1j * r.standard_normal(n)).astype(dtype)
        a[: min(n, 2)] = complex(np.nan, 0)
        a = np.sort(a)
        v = (r.standard_normal((m // 64, 128)) + 1j * r.standard_normal((m // 64, 128))).astype(dtype)
        v[0, :2] = [complex(np.nan, 0), complex(0, np.nan)]
    else:
        a = (r.standard_normal(n) * 40).astype(dtype)
        v = (r.standard_normal((m // 64, 128)) * 45).astype(dtype)
        if dtype.startswith("float"):
            a[: min(n, 3)] = [np.nan, np.inf, -np.inf][: min(n, 3)]
            v[0, :3] = [np.nan, np.inf, -np.inf]
        a = np.sort(a)
        if n > 9:
            a[5:9] = a[5]
            v[1, :4] = a[5]
    la, lv = loom.asarray(a), loom.asarray(v)
    calls: list = []
    real = _sorting._binary_search

    def counted(*args):
        calls.append(args[2])
        return real(*args)
    monkeypatch.setattr(_sorting, "_binary_search", counted)
    same(loom.searchsorted(la, lv), np.searchsorted(a, v))
    assert calls == ([n] if n else []), calls  # the kernel, not NumPy's (an empty a needs no search)
    same(loom.searchsorted(la, lv[:1]), np.searchsorted(a, v[:1]))
    assert len(calls) == (1 if n else 0), calls  # 128 queries: NumPy's
    for side in ("left", "right"):
        want = np.searchsorted(a, v, side=side)
        same(loom.searchsorted(la, lv, side=side), want)
        same(loom.searchsorted(la, lv[:, ::2], side=side), np.searchsorted(a, v[:, ::2], side=side))  # 2^13: NumPy's
        same(loom.searchsorted(la, lv.T, side=side), np.searchsorted(a, v.T, side=side))
    same(loom.searchsorted(la, loom.asarray(v.astype(np.float64) + 0.5) if dtype not in ("bool",) and
                           not dtype.startswith("complex") else lv), np.searchsorted(
        a, v.astype(np.float64) + 0.5 if dtype not in ("bool",) and not dtype.startswith("complex") else v))
    with monkeypatch.context() as mp:
        mp.setenv("LOOM_SORT_ENGINE", "numpy")
        same(loom.searchsorted(la, lv), np.searchsorted(a, v))
    if dtype in ("float32", "float64", "int16", "uint8", "int64") and n >= 2:
        bins = np.unique(a[np.isfinite(a)]) if dtype.startswith("float") else np.unique(a)
        if bins.size:
            same(loom.digitize(lv, bins), np.digitize(v, bins))
            same(loom.digitize(lv, bins[::-1], right=True), np.digitize(v, bins[::-1], right=True))
            fp = np.linspace(-1.0, 1.0, bins.size)
            same(loom.interp(lv, bins, fp), np.interp(v, bins, fp))
            same(loom.interp(lv, bins, fp, left=-5.0, right=np.nan), np.interp(v, bins, fp, left=-5.0, right=np.nan))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int16])
@pytest.mark.parametrize("minlength", [0, 3, 70001])
def test_host_bincount_in_parts(dtype, minlength):
    """host bincount of >= 2^19 points without weights: NumPy's on parts in threads, counts added (the
    same values and dtype as NumPy's; a negative value raises its error)"""
    r = np.random.default_rng(11)
    hi = min(np.iinfo(dtype).max, 65000)
    x = r.integers(0, hi, size=(1 << 19) + 13).astype(dtype)
    x[-1] = hi  # the largest value in the last part only
    got = loom.bincount(loom.asarray(x), minlength=minlength)
    want = np.bincount(x, minlength=minlength)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)
    if np.iinfo(dtype).min < 0:
        x[7] = -1
        with pytest.raises(ValueError):
            loom.bincount(loom.asarray(x))
