"""Integer-array indexing inside @loom.fuse (python/loom/_indexing.py _getitem): a gather of the trace fused
with its consumers. Results against NumPy for in-bounds indices of every form (1-d and 2-d index arrays,
negative indices, a column pick x[:, idx], paired indices x[i, j], host index arrays captured by the trace);
traced out-of-bounds indices wrap around as CuPy's integer-array indexing does (checked against NumPy's
mode='wrap' take); host index arrays out of bounds raise NumPy's IndexError at the trace; a boolean mask
raises TypeError with what to use instead; new index values reuse the compiled kernel."""
import numpy as np
import pytest

import loom

r = np.random.default_rng(11)
TABLE = r.standard_normal((50, 24)).astype(np.float32)


def test_embedding_lookup_scaled():
    idx = r.integers(0, 50, 1000)
    f = loom.fuse(lambda t, i: t[i] * 2.0 + 1.0)
    got = loom.asnumpy(f(loom.asarray(TABLE), loom.asarray(idx)))
    np.testing.assert_array_equal(got, TABLE[idx] * np.float32(2.0) + np.float32(1.0))


@pytest.mark.parametrize("idx", [np.array([0, 49, 3, 3]), np.array([-1, -50, 7]), r.integers(-50, 50, (6, 7)),
                                 np.zeros(0, np.int64), np.array(5)])
def test_index_forms_against_numpy(idx):
    f = loom.fuse(lambda t, i: t[i] - 0.5)
    got = loom.asnumpy(f(loom.asarray(TABLE), loom.asarray(idx)))
    want = TABLE[idx] - np.float32(0.5)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_columns_pairs_and_int32_indices():
    cols = r.integers(-24, 24, 9).astype(np.int32)
    f = loom.fuse(lambda t, c: t[:, c] * t[:, c])
    np.testing.assert_array_equal(loom.asnumpy(f(loom.asarray(TABLE), loom.asarray(cols))), TABLE[:, cols] ** 2)
    i, j = r.integers(0, 50, 30), r.integers(0, 24, 30)
    g = loom.fuse(lambda t, a, b: t[a, b] + 1.0)
    np.testing.assert_array_equal(loom.asnumpy(g(loom.asarray(TABLE), loom.asarray(i), loom.asarray(j))),
                                  TABLE[i, j] + np.float32(1.0))


def test_traced_out_of_bounds_wrap_like_cupy():
    idx = np.array([5, 50, 51, -51, 123, -1])
    f = loom.fuse(lambda t, i: t[i])
    got = loom.asnumpy(f(loom.asarray(TABLE), loom.asarray(idx)))
    np.testing.assert_array_equal(got, np.take(TABLE, idx, axis=0, mode="wrap"))


def test_host_index_checked_and_mask_refused():
    bad = np.array([1, 60])
    f = loom.fuse(lambda t: t[bad])
    with pytest.raises(IndexError, match="out of bounds"):
        f(loom.asarray(TABLE))
    ok = np.array([1, 49, -2])
    g = loom.fuse(lambda t: t[ok] * 3.0)
    np.testing.assert_array_equal(loom.asnumpy(g(loom.asarray(TABLE))), TABLE[ok] * np.float32(3.0))
    m = loom.fuse(lambda t: t[t > 0])
    with pytest.raises(TypeError, match="loom.where"):
        m(loom.asarray(TABLE))


def test_new_index_values_reuse_the_kernel():
    f = loom.fuse(lambda t, i: t[i] * 0.25)
    t = loom.asarray(TABLE)
    f(t, loom.asarray(r.integers(0, 50, 64)))
    before = loom.stats()["kernels_compiled"]
    for _ in range(5):
        idx = r.integers(0, 50, 64)
        np.testing.assert_array_equal(loom.asnumpy(f(t, loom.asarray(idx))), TABLE[idx] * np.float32(0.25))
    assert loom.stats()["kernels_compiled"] == before
