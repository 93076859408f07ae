"""loom as an array API namespace (python/loom/_array_api.py, _sorting.py): each function against NumPy,
the standard's keywords, the inspection namespace and devices, edge cases (0-d, empty, NaN, ties,
non-contiguous). data-apis/array-api-tests runs separately (scripts/array_api_suite.sh)."""
import math

import numpy as np
import pytest

import loom as xp


def a(v, dtype=None):
    return xp.asarray(np.asarray(v, dtype=dtype))


def test_namespace_and_info():
    x = a([1.0, 2.0])
    assert x.__array_namespace__() is xp and x.__array_namespace__(api_version="2024.12") is xp
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="2099.01")
    assert xp.__array_api_version__ == "2024.12"
    info = xp.__array_namespace_info__()
    devs = info.devices()
    assert x.device in devs and info.default_device() in devs
    assert info.default_dtypes() == {"real floating": np.float64, "complex floating": np.complex128,
                                     "integral": np.int64, "indexing": np.int64}
    assert set(info.dtypes(kind="unsigned integer")) == {"uint8", "uint16", "uint32", "uint64"}
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64", "complex128"}
    assert info.capabilities()["boolean indexing"] is True
    assert xp.bool is np.bool_


def test_isdtype_finfo_iinfo():
    assert xp.isdtype(xp.int8, "signed integer") and not xp.isdtype(xp.uint8, "signed integer")
    assert xp.isdtype(xp.float32, ("integral", "real floating")) and xp.isdtype(xp.complex64, "numeric")
    assert not xp.isdtype(xp.bool, "numeric") and xp.isdtype(xp.float64, xp.float64)
    with pytest.raises(ValueError):
        xp.isdtype(xp.float32, "floating")
    f = xp.finfo(xp.float32)
    assert isinstance(f.eps, float) and f.eps == float(np.finfo(np.float32).eps) and f.bits == 32
    assert xp.finfo(xp.complex64).dtype == np.float32 and xp.finfo(a([1.0])).bits == 64
    assert xp.iinfo(xp.int16).max == 32767 and xp.iinfo(a([1], np.uint8)).min == 0


def test_asarray_copy_device_and_to_device():
    x = a([1, 2, 3])
    assert xp.asarray(x) is x
    c = xp.asarray(x, copy=True)
    c[0] = 9
    assert int(x[0]) == 1
    with pytest.raises(ValueError):
        xp.asarray(x, dtype=xp.float32, copy=False)
    with pytest.raises(ValueError):
        xp.asarray([1, 2], copy=False)
    assert xp.asarray(x, device=x.device).device == x.device
    assert x.to_device(x.device) is x
    z = xp.zeros((2, 3), device=x.device)
    assert z.device == x.device and z.dtype == np.float64
    assert xp.ones((2,), dtype=None).dtype == np.float64
    assert xp.zeros_like(x, device=x.device).device == x.device
    with pytest.raises(ValueError):
        xp.zeros(3, device="tpu")
    with pytest.raises(OverflowError):
        xp.asarray(2**70)


def test_keywords_correction_copy_clip():
    h = np.array([[1.0, 4.0, 2.0], [8.0, -1.0, 0.5]])
    x = a(h)
    assert np.allclose(xp.std(x, correction=1, axis=0).get(), np.std(h, ddof=1, axis=0))
    assert np.allclose(xp.var(x, correction=1.5).get(), np.var(h, ddof=1.5))
    r = xp.reshape(x, (3, 2), copy=True)
    assert r.shape == (3, 2) and np.array_equal(r.get(), h.reshape(3, 2))
    assert np.array_equal(xp.clip(x, min=0.0, max=2.0).get(), np.clip(h, 0.0, 2.0))
    i8 = a([-5, 0, 100], np.int8)
    assert xp.clip(i8, min=-1, max=50).dtype == np.int8
    # one clip for both readers: NumPy's promotion, which gives x's dtype wherever the standard specifies it
    # (bounds of x's dtype or Python scalars of its kind) and promotes where the standard leaves it open
    hi16 = np.array([-5, 0, 100], np.int16)
    for lo, hi in ((0.5, 2.5), (a([1], np.int32), None), (None, a([7.0], np.float32)), (-2**63 - 1, 0.5)):
        want = np.clip(hi16, None if lo is None else (lo.get() if hasattr(lo, "get") else lo),
                       None if hi is None else (hi.get() if hasattr(hi, "get") else hi))
        got = xp.clip(a(hi16), lo, hi)
        assert got.dtype == want.dtype and np.array_equal(got.get(), want), (lo, hi)
    assert np.array_equal(xp.clip(i8).get(), i8.get())
    assert xp.astype(x, xp.float32, copy=False).dtype == np.float32
    assert xp.expand_dims(x).shape == (1, 2, 3)


def test_aliases_and_elementwise():
    h = np.array([-1.0, -0.0, 0.0, 0.5, np.nan, -np.inf])
    x = a(h)
    with np.errstate(all="ignore"):
        assert np.allclose(xp.acos(a([0.5])).get(), np.arccos(0.5))
        assert np.array_equal(xp.signbit(x).get(), np.signbit(h))
        assert np.array_equal(xp.pow(a([2, 3]), 3).get(), [8, 27])
        assert np.array_equal(xp.bitwise_invert(a([0], np.uint8)).get(), [255])
        assert np.array_equal(xp.bitwise_left_shift(a([1, 2]), 3).get(), [8, 16])
        l1, l2 = np.array([0.0, 1e3, -np.inf, np.inf, np.nan, -5.0]), np.array([0.0, 1e3, -np.inf, 1.0, 0.0, 3.0])
        assert np.allclose(xp.logaddexp(a(l1), a(l2)).get(), np.logaddexp(l1, l2), equal_nan=True)
    n = xp.nextafter(a([1.0], np.float32), 2.0)
    assert n.dtype == np.float32 and n.get()[0] == np.nextafter(np.float32(1), np.float32(2))


def test_manipulation():
    h = np.arange(24).reshape(2, 3, 4)
    x = a(h)
    assert np.array_equal(xp.permute_dims(x, (2, 0, 1)).get(), h.transpose(2, 0, 1))
    assert np.array_equal(xp.concat([x, x], axis=None).get(), np.concatenate([h.ravel(), h.ravel()]))
    assert np.array_equal(xp.concat([x, x], axis=-1).get(), np.concatenate([h, h], axis=-1))
    assert x.mT.shape == (2, 4, 3) and np.array_equal(xp.matrix_transpose(x).get(), np.swapaxes(h, -1, -2))
    u = xp.unstack(x, axis=1)
    assert len(u) == 3 and np.array_equal(u[2].get(), h[:, 2])
    assert np.array_equal(xp.moveaxis(x, 0, -1).get(), np.moveaxis(h, 0, -1))
    assert np.array_equal(xp.moveaxis(x, (0, 1), (2, 0)).get(), np.moveaxis(h, (0, 1), (2, 0)))
    assert np.array_equal(xp.flip(x).get(), np.flip(h)) and np.array_equal(xp.flip(x, axis=(0, 2)).get(), np.flip(h, (0, 2)))
    assert np.array_equal(xp.roll(x, 2, axis=1).get(), np.roll(h, 2, axis=1))
    assert np.array_equal(xp.tile(a([1, 2]), (2, 2)).get(), np.tile([1, 2], (2, 2)))
    assert np.array_equal(xp.repeat(a([1, 2]), 3).get(), np.repeat([1, 2], 3))
    b = xp.broadcast_arrays(a([[1], [2]]), a([1, 2, 3]))
    assert [t.shape for t in b] == [(2, 3), (2, 3)]
    for ix in ("xy", "ij"):
        for got, want in zip(xp.meshgrid(a([1, 2]), a([3, 4, 5]), a([6]), indexing=ix),
                             np.meshgrid([1, 2], [3, 4, 5], [6], indexing=ix)):
            assert np.array_equal(got.get(), want)


def test_tril_triu_take_diff_vecdot():
    h = np.arange(1.0, 21.0).reshape(4, 5)
    x = a(h)
    for k in (-2, 0, 1, 7):
        assert np.array_equal(xp.tril(x, k=k).get(), np.tril(h, k)) and np.array_equal(xp.triu(x, k=k).get(), np.triu(h, k))
    assert np.array_equal(xp.take(x, a([4, 0, 4]), axis=1).get(), np.take(h, [4, 0, 4], axis=1))
    assert np.array_equal(xp.take(a(h[0]), a([1, 3])).get(), [2.0, 4.0])
    idx = np.argsort(-h, axis=1)
    assert np.array_equal(xp.take_along_axis(x, a(idx), axis=1).get(), np.take_along_axis(h, idx, axis=1))
    for n in (0, 1, 2):
        assert np.array_equal(xp.diff(x, n=n, axis=0).get(), np.diff(h, n=n, axis=0))
    assert np.array_equal(xp.diff(a([1, 5, 2]), prepend=a([0]), append=a([10])).get(), np.diff([1, 5, 2], prepend=0, append=10))
    assert np.array_equal(xp.diff(a([True, False, False])).get(), np.diff([True, False, False]))
    c = np.array([1 + 2j, 3 - 1j])
    assert np.allclose(xp.vecdot(a(c), a(c)).get(), np.vecdot(c, c))
    assert np.allclose(xp.vecdot(x, a(h[1]), axis=-1).get(), h @ h[1])
    assert xp.vecdot(a([1, 2], np.uint8), a([3, 4], np.uint8)).dtype == np.uint8
    assert np.allclose(xp.tensordot(x, a(h.T), axes=1).get(), np.tensordot(h, h.T, axes=1))


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8, np.bool_])
def test_sort_argsort(dtype):
    rng = np.random.default_rng(1)
    h = rng.integers(0, 4, size=(3, 17)).astype(dtype)
    x = a(h)
    for axis in (0, 1, -1):
        assert np.array_equal(xp.sort(x, axis=axis).get(), np.sort(h, axis=axis, kind="stable"))
        assert np.array_equal(xp.argsort(x, axis=axis).get(), np.argsort(h, axis=axis, kind="stable"))
        # descending and stable: equal elements keep their order
        want = np.array([sorted(range(len(r)), key=lambda i: -float(r[i])) for r in np.moveaxis(h, axis, -1).reshape(-1, h.shape[axis])])
        got = np.moveaxis(xp.argsort(x, axis=axis, descending=True).get(), axis, -1).reshape(-1, h.shape[axis])
        assert np.array_equal(got, want)
        assert np.array_equal(xp.sort(x, axis=axis, descending=True).get(), np.flip(np.sort(h, axis=axis), axis=axis))
    assert xp.argsort(x).dtype == np.int64


def test_sort_nan_noncontiguous_empty():
    h = np.array([3.0, np.nan, -1.0, np.inf, -0.0, np.nan, 2.0])
    assert np.array_equal(xp.sort(a(h)).get(), np.sort(h), equal_nan=True)
    v = a(np.arange(20.0)[::-3])
    assert np.array_equal(xp.sort(v).get(), np.sort(np.arange(20.0)[::-3]))
    assert xp.sort(a(np.zeros((0, 3)))).shape == (0, 3)
    with pytest.raises(ValueError):
        xp.sort(a(1.0))


def test_searchsorted():
    s = np.array([1.0, 2.0, 2.0, 5.0])
    q = np.array([[0.0, 2.0], [5.0, 9.0]])
    for side in ("left", "right"):
        assert np.array_equal(xp.searchsorted(a(s), a(q), side=side).get(), np.searchsorted(s, q, side=side))
    order = np.array([2, 0, 3, 1])
    u = np.array([2.0, 1.0, 5.0, 2.0])
    assert np.array_equal(xp.searchsorted(a(u), a([2.0]), sorter=a(order)).get(), np.searchsorted(u, [2.0], sorter=order))
    with pytest.raises(ValueError):
        xp.searchsorted(a(s), a(q), side="middle")


def test_unique_family():
    h = np.array([[3.0, np.nan, 1.0], [3.0, np.nan, 0.0]])
    x = a(h)
    v = xp.unique_values(x).get()
    assert v.size == 5 and np.isnan(v[-2:]).all()  # each NaN distinct
    r = xp.unique_all(x)
    assert np.array_equal(r.values.get(), v, equal_nan=True)
    assert r.inverse_indices.shape == h.shape
    assert np.array_equal(r.values.get()[r.inverse_indices.get()], h, equal_nan=True)
    assert np.array_equal(h.ravel()[r.indices.get()], v, equal_nan=True) and r.counts.get().sum() == 6
    c = xp.unique_counts(a([2, 2, 7, 2]))
    assert np.array_equal(c.values.get(), [2, 7]) and np.array_equal(c.counts.get(), [3, 1])
    i = xp.unique_inverse(a(True))
    assert i.inverse_indices.shape == () and i.values.shape == (1,)


def test_cumulative():
    h = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    x = a(h)
    assert np.array_equal(xp.cumulative_sum(x, axis=1).get(), np.cumsum(h, axis=1))
    assert xp.cumulative_sum(x, axis=1).dtype == np.int64
    assert np.array_equal(xp.cumulative_sum(x, axis=0, include_initial=True).get(),
                          np.concatenate([np.zeros((1, 3), np.int64), np.cumsum(h, axis=0)]))
    assert np.array_equal(xp.cumulative_prod(a([1.0, 2.0, 3.0]), include_initial=True).get(), [1.0, 1.0, 2.0, 6.0])
    assert np.array_equal(xp.cumulative_sum(a(np.zeros(0))).get(), np.zeros(0))
    assert xp.cumulative_sum(a(np.zeros(0)), include_initial=True).shape == (1,)
    with pytest.raises(ValueError):
        xp.cumulative_sum(x)  # axis is required beyond 1-d
    assert np.array_equal(xp.cumsum(x).get(), np.cumsum(h))
    assert math.isclose(float(xp.cumulative_sum(a([0.1] * 10))[-1]), float(np.cumsum([0.1] * 10)[-1]))


def test_array_api_compat_recognizes_loom():
    compat = pytest.importorskip("array_api_compat")
    x = a([1.0])
    assert compat.array_namespace(x) is xp and compat.is_array_api_obj(x)


def test_linalg_extension_reexports():
    h = np.arange(24.0).reshape(2, 3, 4) - 7
    x = a(h)
    assert np.array_equal(xp.linalg.diagonal(x, offset=1).get(), np.linalg.diagonal(h, offset=1))
    assert np.allclose(xp.linalg.trace(x, offset=-1).get(), np.linalg.trace(h, offset=-1))
    assert np.array_equal(xp.linalg.outer(a([1, 2]), a([3, 4, 5])).get(), np.outer([1, 2], [3, 4, 5]))
    assert np.allclose(xp.linalg.vector_norm(x).get(), np.linalg.vector_norm(h))
    assert np.allclose(xp.linalg.vector_norm(x, axis=1, ord=1, keepdims=True).get(),
                       np.linalg.vector_norm(h, axis=1, ord=1, keepdims=True))
    assert np.allclose(xp.linalg.matrix_norm(x).get(), np.linalg.matrix_norm(h))
    assert xp.linalg.matrix_transpose(x).shape == (2, 4, 3)
    assert np.allclose(xp.linalg.vecdot(x, x).get(), np.linalg.vecdot(h, h))


def test_suite_found_bugs():
    """Root causes the array-api-tests run found (2026-12-01), each against NumPy."""
    # all/any of an empty array made by broadcasting a value (loom.ones((0,)): stride 0) are the identities
    for dt in ("bool", "int8", "float32"):
        for z in (xp.zeros((0,), dtype=dt), xp.ones((0,), dtype=dt), xp.ones((3, 0), dtype=dt)):
            assert bool(xp.all(z)) is True and bool(xp.any(z)) is False
            assert np.array_equal(xp.all(z, axis=-1).get(), np.all(np.ones(z.shape, dt), axis=-1))
        assert bool(xp.all(xp.equal(xp.ones((0,), dtype=dt), xp.asarray(1, dtype=dt))))
    assert np.array_equal(xp.any(xp.ones((2, 0, 3)), axis=1).get(), np.zeros((2, 3), bool))
    with pytest.raises(ValueError):
        xp.max(xp.zeros((0, 3)), axis=0)
    # min/max/argmin/argmax over an empty set raise as NumPy's do, also when the result is empty
    for f, shape, axis in ((xp.max, (0, 0, 4), (0, 2)), (xp.min, (0, 0), 1), (xp.argmax, (0, 0), 1)):
        with pytest.raises(ValueError):
            f(xp.zeros(shape), axis=axis)
    assert xp.max(xp.zeros((0, 3)), axis=1).shape == (0,)
    # repeat counts of an unsigned dtype (the standard: any integer dtype)
    counts = np.array([1, 0, 2], np.uint64)
    assert np.array_equal(xp.repeat(a([1, 2, 3]), a(counts)).get(), np.repeat([1, 2, 3], counts.astype(np.int64)))
    # a Python int past uint64 in a float context is a float (NumPy's conversion), not an OverflowError
    assert float(xp.full((), 2**64, dtype="float64")) == 2.0**64
    w = xp.where(a([1, 0]), a(np.array([1.5, 2.5], np.float32)), 2**64)
    assert w.dtype == np.float32 and np.array_equal(w.get(), np.where([1, 0], np.array([1.5, 2.5], np.float32), 2**64))
    with pytest.raises(OverflowError):
        xp.where(a([1, 0]), True, 2**63 + 5)  # a bool and an int: int64 (NEP 50); NumPy 2.4 wraps silently
    # flip of a 0-d array; take_along_axis's default axis (-1)
    f = xp.flip(a(False))
    assert f.shape == () and bool(f) is False
    with pytest.raises(np.exceptions.AxisError):
        xp.flip(a(1.0), axis=0)
    h = np.array([[3, 1, 2], [9, 7, 8]])
    idx = np.argsort(h, axis=-1)
    assert np.array_equal(xp.take_along_axis(a(h), a(idx)).get(), np.take_along_axis(h, idx, axis=-1))
