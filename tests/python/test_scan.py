"""Cumulative sums and products (cumsum, cumprod, nancumsum, nancumprod, cumulative_sum, cumulative_prod):
scan kernels on the array's device (loom_scan), against NumPy: every dtype, every axis, dtype=, out=,
0-d, empty, length 1, non-contiguous views, NaN, integer wrap-around, long rows and columns, fusion
(the scanned expression and its consumer run in the scan's one kernel).

On the host the scan runs in NumPy's sequential order, so floats match bit for bit; on a GPU (where
the whole suite runs in scripts/gpu_all.sh) float sums associate in a tree within blocks, so they are
compared with a tolerance scaled by the running sum of magnitudes."""
import numpy as np
import pytest

import loom
from conftest import sample

ON_GPU = loom.cuda.is_available()
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
          "float64", "complex64", "complex128"]


def close(got, want, src=None, prod=False, axis=-1):
    """got (loom) equals want (NumPy) in shape and dtype, and in value: exactly for ints and on the host;
    on a GPU floats within a few ulps of the running sum of magnitudes along the scanned axis (prod:
    relative)."""
    g = got.get() if isinstance(got, loom.ndarray) else np.asarray(got)
    want = np.asarray(want)
    assert g.shape == want.shape, (g.shape, want.shape)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    if want.dtype.kind not in "fc" or not ON_GPU:
        np.testing.assert_array_equal(g, want)
        return
    eps = {2: 2e-3, 4: 3e-6, 8: 1e-13, 16: 1e-13}[want.dtype.itemsize // (2 if want.dtype.kind == "c" else 1)]
    if prod or src is None:
        np.testing.assert_allclose(g, want, rtol=eps * 64, atol=0, equal_nan=True)
    else:
        scale = np.cumsum(np.abs(src.astype(np.complex128 if want.dtype.kind == "c" else np.float64)), axis=axis)
        assert np.all((np.abs(g - want) <= eps * 8 * (scale + 1)) | (np.isnan(g) & np.isnan(want)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumsum_cumprod_dtypes(dtype, axis):
    a = sample((6, 45), dtype)
    close(loom.cumsum(loom.asarray(a), axis=axis), np.cumsum(a, axis=axis))
    b = (sample((6, 45), dtype, positive=True) if np.dtype(dtype).kind in "iub" else
         (0.7 + 0.6 * np.random.default_rng(1).random((6, 45))).astype(dtype))
    close(loom.cumprod(loom.asarray(b), axis=axis), np.cumprod(b, axis=axis), prod=True)


@pytest.mark.parametrize("dtype", [None, "int8", "uint8", "int16", "float32", "float64", "float16", "complex64"])
def test_dtype_argument(dtype):
    a = np.arange(-50, 250, dtype=np.int32) % 127
    close(loom.cumsum(loom.asarray(a), dtype=dtype), np.cumsum(a, dtype=dtype))
    close(loom.cumprod(loom.asarray(a[:40] % 5 + 1), dtype=dtype), np.cumprod(a[:40] % 5 + 1, dtype=dtype), prod=True)


def test_integer_wraparound():
    a = np.full(100, 2**61 + 12345, dtype=np.int64)
    close(loom.cumsum(loom.asarray(a)), np.cumsum(a))
    close(loom.cumprod(loom.asarray(a[:10])), np.cumprod(a[:10]))
    b = np.arange(200, dtype=np.uint8)
    close(loom.cumsum(loom.asarray(b), dtype=np.uint8), np.cumsum(b, dtype=np.uint8))
    close(loom.cumsum(loom.asarray(b)), np.cumsum(b))  # uint64


def test_float16_partials_round():
    a = np.full(3000, 0.1, dtype=np.float16)  # NumPy's serial sum stops growing at 256 (0.1 < half an ulp)
    g = loom.cumsum(loom.asarray(a)).get()
    if ON_GPU:
        # a tree adds blocks of 0.1s first: no order-independent answer is NumPy's 256; each partial is
        # within the tree's rounding of the exact prefix sum (299.93 at the end), as CuPy's is
        exact = np.cumsum(a.astype(np.float64))
        assert g.dtype == np.float16
        close(g, exact.astype(np.float16), src=a)
        # a work-efficient scan rounds a prefix at most ~2 log2(n) times (up and down the tree), each
        # within float16's unit roundoff of the partial sum (<= the total)
        assert abs(float(g[-1]) - exact[-1]) <= 2 * np.log2(a.size) * 2.0**-11 * exact[-1]
    else:
        np.testing.assert_array_equal(g, np.cumsum(a))
    # each partial is a float16: one that overflows stays inf, whatever comes after it (NumPy's serial
    # order and a tree both keep it: an unrounded float32 partial would come back to 60000)
    big = np.zeros(300, dtype=np.float16)
    big[:3] = [60000, 60000, -60000]
    with np.errstate(over="ignore"):
        want = np.cumsum(big)
    got = loom.cumsum(loom.asarray(big)).get()
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)
    assert np.isinf(got[1:]).all() and got[0] == 60000


def test_nan_and_inf():
    a = np.array([1.0, np.nan, 2.0, np.inf, -np.inf, 3.0])
    close(loom.cumsum(loom.asarray(a)), np.cumsum(a))
    close(loom.cumprod(loom.asarray(a)), np.cumprod(a))
    close(loom.nancumsum(loom.asarray(a)), np.nancumsum(a))
    close(loom.nancumprod(loom.asarray(a)), np.nancumprod(a))
    m = np.array([[np.nan, 1, 2], [3, np.nan, 4]], dtype=np.float32)
    for ax in (None, 0, 1):
        close(loom.nancumsum(loom.asarray(m), axis=ax), np.nancumsum(m, axis=ax))
        close(loom.nancumprod(loom.asarray(m), axis=ax), np.nancumprod(m, axis=ax))
    i = np.arange(12, dtype=np.int16).reshape(3, 4)
    close(loom.nancumsum(loom.asarray(i), axis=1), np.nancumsum(i, axis=1))


def test_0d_empty_length_one():
    for v in (np.float64(3.5), np.array(7, dtype=np.int8), np.array(True)):
        close(loom.cumsum(loom.asarray(v)), np.cumsum(v))
        close(loom.cumprod(loom.asarray(v)), np.cumprod(v))
    ax: int | None
    for ax in (0, -1):  # NumPy scans a 0-d array as shape (1,)
        close(loom.cumsum(loom.asarray(np.float64(3.5)), axis=ax), np.cumsum(np.float64(3.5), axis=ax))
    with pytest.raises(loom.AxisError):
        loom.cumsum(loom.asarray(np.float64(3.5)), axis=1)
    cases: list[tuple[tuple[int, ...], int | None]] = [((0,), 0), ((3, 0), 1), ((3, 0), 0), ((0, 4), 0), ((0, 4), None),
                                                       ((1,), 0), ((1, 5), 0), ((5, 1), 1)]
    for shape, ax in cases:
        a = sample(shape, "float32")
        close(loom.cumsum(loom.asarray(a), axis=ax), np.cumsum(a, axis=ax))
        close(loom.cumprod(loom.asarray(a.astype(np.int32)), axis=ax), np.cumprod(a.astype(np.int32), axis=ax))


def test_views_and_out():
    base = sample((40, 30), "float64")
    x = loom.asarray(base)
    for view, ref in [(x.T, base.T), (x[::-2, ::3], base[::-2, ::3]), (x[:, 7], base[:, 7]),
                      (x[5:25, ::-1].T, base[5:25, ::-1].T)]:
        for ax in (0, -1, None):
            close(loom.cumsum(view, axis=ax), np.cumsum(ref, axis=ax), src=None)
    out = loom.zeros((30, 40), dtype=np.float64).T
    r = loom.cumsum(x, axis=0, out=out)
    assert r is out
    close(out, np.cumsum(base, axis=0))
    out32 = loom.zeros((40, 30), dtype=np.float32)
    loom.cumsum(x, axis=1, out=out32)  # out= casts as NumPy's accumulate does (unsafe)
    close(out32, np.cumsum(base, axis=1).astype(np.float32))
    close(x.cumsum(axis=1), base.cumsum(axis=1))
    close(x.cumprod(), base.cumprod(), prod=True)


def test_long_rows_and_columns():
    a = sample((300007,), "float32")
    close(loom.cumsum(loom.asarray(a)), np.cumsum(a), src=a)
    b = sample((1200, 900), "int32")
    close(loom.cumsum(loom.asarray(b), axis=0), np.cumsum(b, axis=0))
    close(loom.cumsum(loom.asarray(b), axis=1), np.cumsum(b, axis=1))
    c = sample((700, 513), "float64")
    close(loom.cumsum(loom.asarray(c), axis=0), np.cumsum(c, axis=0), src=c, axis=0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8"])
def test_few_long_columns(dtype):
    """Few long columns (a GPU splits them into parts of rows: lower_scan.c): sums, products near 1, max
    with a NaN, a fused prologue, a strided view, against NumPy."""
    a = sample((5003, 3), dtype)
    close(loom.cumsum(loom.asarray(a), axis=0), np.cumsum(a, axis=0), src=a, axis=0)
    x = loom.asarray(a)
    if np.dtype(dtype).kind == "f":
        b = (0.999 + 0.002 * np.random.default_rng(7).random((4001, 5))).astype(dtype)
        close(loom.cumprod(loom.asarray(b), axis=0), np.cumprod(b, axis=0), prod=True)
        m = a.copy()
        m[100, 1] = np.nan
        close(loom.maximum.accumulate(loom.asarray(m), axis=0), np.maximum.accumulate(m, axis=0))
        f = a.astype(np.float64) * 2 + 1
        close(loom.cumsum(x * 2 + 1, axis=0), np.cumsum(a * a.dtype.type(2) + a.dtype.type(1), axis=0), src=f, axis=0)
    else:
        close(loom.cumprod(x, axis=0), np.cumprod(a, axis=0))  # wraps
    big = sample((4000, 10), dtype)
    close(loom.cumsum(loom.asarray(big)[::3, ::2], axis=0), np.cumsum(big[::3, ::2], axis=0), src=big[::3, ::2], axis=0)
    one = sample((70001, 1), dtype)
    close(loom.cumsum(loom.asarray(one), axis=0), np.cumsum(one, axis=0), src=one, axis=0)


def test_array_api_cumulative():
    a = sample((4, 9), "int16")
    for ax in (0, 1, -1):
        for inc in (False, True):
            close(loom.cumulative_sum(loom.asarray(a), axis=ax, include_initial=inc),
                  np.cumulative_sum(a, axis=ax, include_initial=inc))
            close(loom.cumulative_prod(loom.asarray(a % 3 + 1), axis=ax, include_initial=inc),
                  np.cumulative_prod(a % 3 + 1, axis=ax, include_initial=inc))
    v = sample((17,), "float32")
    close(loom.cumulative_sum(loom.asarray(v), dtype=np.float64), np.cumulative_sum(v, dtype=np.float64))
    with pytest.raises(ValueError):
        loom.cumulative_sum(loom.asarray(a))  # axis required for 2-d
    for inc in (False, True):  # NumPy 2 scans a 0-d array as shape (1,)
        close(loom.cumulative_sum(loom.asarray(np.float32(1.5)), include_initial=inc),
              np.cumulative_sum(np.float32(1.5), include_initial=inc))
    out = loom.zeros((4, 10), dtype=np.float32)
    r = loom.cumulative_sum(loom.asarray(a), axis=1, include_initial=True, out=out)
    assert r is out
    close(out, np.cumulative_sum(a, axis=1, include_initial=True).astype(np.float32))
    with pytest.raises(loom.AxisError):
        loom.cumulative_sum(loom.asarray(a), axis=2)


def test_fused_into_one_kernel():
    a = sample((1000,), "float64")
    x = loom.asarray(a)
    loom.eval()  # nothing pending
    r = loom.cumsum(x * 2 + 1) * 3
    r.get()
    assert loom.stats()["last_eval_kernels"] == 1
    close(r, np.cumsum(a * 2 + 1) * 3, src=a * 2 + 1)
    n = loom.nancumsum(loom.where(x > 0, x, np.nan))
    n.get()
    assert loom.stats()["last_eval_kernels"] == 1
    close(n, np.nancumsum(np.where(a > 0, a, np.nan)), src=np.where(a > 0, a, 0))


def test_stays_lazy_and_on_device():
    x = loom.asarray(sample((64, 8), "float32"))
    r = loom.cumsum(x, axis=0)
    assert r._lazy and r.device == x.device


@pytest.mark.parametrize("uf", ["add", "multiply", "maximum", "minimum"])
@pytest.mark.parametrize("dtype", ["int8", "uint32", "float32", "float64", "bool"])
def test_ufunc_accumulate(uf, dtype):
    a = sample((5, 33), dtype, positive=uf == "multiply")
    if np.dtype(dtype).kind == "f":
        a[1, 3] = np.nan
    for axis in (0, 1, -1):
        close(getattr(loom, uf).accumulate(loom.asarray(a), axis=axis), getattr(np, uf).accumulate(a, axis=axis),
              prod=uf == "multiply")
    close(getattr(loom, uf).accumulate(loom.asarray(a), axis=1, dtype=np.float64),
          getattr(np, uf).accumulate(a, axis=1, dtype=np.float64), prod=uf == "multiply")
