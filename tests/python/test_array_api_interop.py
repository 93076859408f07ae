"""The array API namespace as other libraries use it (python/loom/_array_api.py, linalg.py): asarray(copy=False)
shares the caller's buffer or refuses with ValueError, may_share_memory/shares_memory answer for loom and
NumPy arrays together (scikit-learn's check_array asks numpy.may_share_memory(numpy.asarray(x), x)), the
max-based norms of empty inputs are 0 as NumPy's, and scikit-learn's array_api_dispatch runs its
array-API estimators on loom arrays with NumPy's results (a subprocess: scipy must see SCIPY_ARRAY_API=1
before it is imported; skipped where scikit-learn is not installed)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import loom as xp

ON_GPU = bool(xp.asarray(np.zeros(1))._on_gpu)  # the default device of this run


# ---- asarray(copy=False) ------------------------------------------------------------------------------------
@pytest.mark.host_conversion
@pytest.mark.parametrize("make", [
    lambda: np.arange(12.0).reshape(3, 4),
    lambda: np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    lambda: np.arange(24, dtype=np.int32).reshape(4, 6)[::2, ::-3],  # non-contiguous, negative stride
    lambda: np.zeros((), dtype=np.complex64),
])
def test_asarray_copy_false_shares_numpy_memory(make):
    a = make()
    r = xp.asarray(a, copy=False)
    assert r.shape == a.shape and r.dtype == a.dtype
    r[...] = 7  # writes through: the loom array is a's memory
    assert (a == 7).all()


@pytest.mark.host_conversion
def test_asarray_copy_false_buffer_protocol():
    buf = bytearray(b"abc")
    r = xp.asarray(buf, copy=False)
    assert r.dtype == np.uint8 and r.shape == (3,)
    r[0] = 65
    assert buf == bytearray(b"Abc")
    m = np.arange(6, dtype=np.int16)
    r = xp.asarray(memoryview(m)[::2], copy=False)  # type: ignore[arg-type]
    r[1] = -9
    assert m.tolist() == [0, 1, -9, 3, 4, 5]


@pytest.mark.parametrize("obj, kw, why", [
    ([1, 2], {}, "list"),
    (1.5, {}, "float"),
    (np.float32(1), {}, "float32"),  # NumPy refuses too: a scalar is not an array to share
    (b"ab", {}, "bytes"),
    (np.arange(3.0), {"dtype": np.float32}, "float32 was asked"),
    (np.arange(3, dtype=">f8"), {}, ">f8"),  # byte-swapped: loom would have to convert
])
def test_asarray_copy_false_refuses_when_a_copy_is_needed(obj, kw, why):
    with pytest.raises(ValueError, match="copy=False") as e:
        xp.asarray(obj, copy=False, **kw)
    # on a GPU any host data needs a copy: that reason comes first there
    assert why in str(e.value) or (ON_GPU and "requested device is a GPU" in str(e.value)), str(e.value)
    if why != "bytes":  # (a bytes string is no loom dtype at all)
        np.testing.assert_array_equal(xp.asarray(obj, **kw).get(), np.asarray(obj, **kw))  # copy=None copies


def test_asarray_copy_false_refuses_read_only_buffers():
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.raises(ValueError, match="requested device is a GPU" if ON_GPU else "read-only"):
        xp.asarray(a, copy=False)
    r = xp.asarray(a)  # a copy: writing it leaves a alone
    r[0] = 5
    assert a[0] == 0


def test_asarray_copy_true_and_none_of_numpy_data_copy():
    a = np.arange(4.0)
    for copy in (True, None):
        r = xp.asarray(a, copy=copy)
        r[0] = 9
        assert a[0] == 0



# ---- boolean masks with a dimension of size 0 (the standard: "equal ... or be 0"; NumPy raises) ---------------
@pytest.mark.parametrize("shape, mshape", [((1,), (0,)), ((3,), (0,)), ((2, 3), (0,)), ((2, 3), (2, 0)),
                                           ((2, 3), (0, 3)), ((2, 3, 4), (0, 0)), ((0, 3), (0, 0)), ((2, 3), (0, 0, 0))])
@pytest.mark.parametrize("mask_kind", ["loom", "numpy"])
def test_mask_with_a_zero_dimension_selects_nothing(shape, mshape, mask_kind):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = xp.asarray(a)
    m = np.zeros(mshape, dtype=bool)
    key = xp.asarray(m) if mask_kind == "loom" else m
    if len(mshape) > len(shape):
        with pytest.raises(IndexError, match="too many indices"):
            x[key]
        return
    want = a[np.zeros(shape[:len(mshape)], dtype=bool)]  # what an all-False mask of the right size selects
    got = x[key]
    assert got.shape == want.shape and got.dtype == want.dtype
    x[key] = 9.0  # stores nothing
    x[(key, Ellipsis)] = xp.zeros(want.shape, dtype=xp.float32)
    np.testing.assert_array_equal(x.get(), a)


def test_mask_of_a_wrong_nonzero_size_is_numpy_s_index_error():
    x = xp.asarray(np.ones((2, 3)))
    for m in (np.ones((2, 2), bool), np.ones(3, bool), np.ones((2, 1), bool)):
        with pytest.raises(IndexError) as e:
            np.ones((2, 3))[m]
        with pytest.raises(IndexError, match=str(e.value).replace("(", r"\(")):
            x[xp.asarray(m)]

# ---- may_share_memory / shares_memory -------------------------------------------------------------------------
def _np_pairs():
    base = np.arange(24.0).reshape(4, 6)
    return [(base, base[1:, 2:]), (base[::2], base[1::2]), (base[:, ::2], base[:, 1::2]), (base[0], base[3]),
            (base, base[::-1]), (base[:0], base), (base.T, base[2])]


@pytest.mark.parametrize("i", range(7))
def test_memory_overlap_of_loom_views_matches_numpy(i):
    """The same view geometry over a loom array and over a NumPy array gives NumPy's answers."""
    npa, npb = _np_pairs()[i]
    x = xp.asarray(np.arange(24.0).reshape(4, 6))
    views = {0: (x, x[1:, 2:]), 1: (x[::2], x[1::2]), 2: (x[:, ::2], x[:, 1::2]), 3: (x[0], x[3]),
             4: (x, x[::-1]), 5: (x[:0], x), 6: (x.T, x[2])}
    la, lb = views[i]
    assert xp.may_share_memory(la, lb) == np.may_share_memory(npa, npb)
    assert xp.shares_memory(la, lb) == np.shares_memory(npa, npb)
    assert np.may_share_memory(la, lb) == np.may_share_memory(npa, npb)  # through __array_function__


@pytest.mark.host_conversion  # a loom array sharing NumPy's memory is a host array
def test_memory_overlap_between_loom_and_numpy():
    x = xp.arange(10.0)
    assert not xp.may_share_memory(x, np.arange(10.0)) and not xp.shares_memory(np.ones(3), x)
    assert not xp.may_share_memory(x, xp.arange(10.0))
    assert not xp.may_share_memory(x + 1, x)  # a pending result is new memory
    a = np.arange(10.0)
    y = xp.asarray(a, copy=False)
    assert xp.may_share_memory(y, a) and np.may_share_memory(a, y) and np.shares_memory(y[::2], a)
    assert not np.shares_memory(y[::2], a[1::2]) and np.may_share_memory(y[::2], a[1::2])
    assert not xp.may_share_memory(y[:0], a)  # nothing to share
    assert xp.may_share_memory([1, 2], [1, 2]) is False  # lists become new arrays, as in NumPy


@pytest.mark.host_conversion
def test_numpy_may_share_memory_of_asarray_view():
    """scikit-learn's check_array(copy=True) copies only when numpy.may_share_memory(np.asarray(x), x):
    the host view must be seen as shared, or the caller's data would be modified in place."""
    x = xp.arange(6.0).reshape(2, 3)
    v = np.asarray(x)
    assert np.may_share_memory(v, x) and np.shares_memory(x, v)
    assert not np.may_share_memory(np.array(x), x)


# ---- norms of empty inputs (NumPy 2: the largest of no magnitudes is 0) ----------------------------------
@pytest.mark.parametrize("ord", [np.inf, -np.inf, 0, 1, 2, -1, 3, 0.5])
@pytest.mark.parametrize("shape, axis", [((0,), None), ((2, 0), 1), ((2, 0), 0), ((2, 0), None),
                                         ((2, 0, 3), (0, 1)), ((2, 3), (1, 0))])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_vector_norm_empty_and_integer_inputs(ord, shape, axis, dtype):
    x = np.ones(shape, dtype)
    for keepdims in (False, True):
        try:
            want = np.asarray(np.linalg.vector_norm(x, ord=ord, axis=axis, keepdims=keepdims))
        except ValueError:
            with pytest.raises(ValueError):
                xp.linalg.vector_norm(xp.asarray(x), ord=ord, axis=axis, keepdims=keepdims)
            continue
        got = xp.linalg.vector_norm(xp.asarray(x), ord=ord, axis=axis, keepdims=keepdims).get()
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
@pytest.mark.parametrize("shape", [(0, 0), (2, 0), (0, 3), (2, 0, 3), (2, 3)])
def test_matrix_norm_empty(ord, shape):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    for keepdims in (False, True):
        try:
            want = np.asarray(np.linalg.matrix_norm(x, ord=ord, keepdims=keepdims))
        except ValueError:
            with pytest.raises(ValueError):
                xp.linalg.matrix_norm(xp.asarray(x), ord=ord, keepdims=keepdims)
            continue
        got = xp.linalg.matrix_norm(xp.asarray(x), ord=ord, keepdims=keepdims).get()
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_norm_inf_of_empty_axis_keeps_device_and_dtype():
    x = xp.zeros((3, 0), dtype=xp.float32)
    r = xp.linalg.norm(x, ord=np.inf, axis=1)
    assert r.dtype == np.float32 and r.device == x.device and r.get().tolist() == [0.0, 0.0, 0.0]


# ---- scikit-learn with array_api_dispatch ---------------------------------------------------------------------
_SKLEARN_SCRIPT = textwrap.dedent("""
    import json, os, warnings
    warnings.simplefilter("ignore")
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import Ridge, LogisticRegression
    from sklearn.preprocessing import StandardScaler, MinMaxScaler
    from sklearn.utils.estimator_checks import check_array_api_input_and_values
    estimators = [PCA(n_components=3, svd_solver="full"), PCA(n_components=3, svd_solver="covariance_eigh"),
                  PCA(n_components=2, svd_solver="randomized", power_iteration_normalizer="QR", random_state=0),
                  PCA(n_components=0.5, whiten=True, svd_solver="full"), LinearDiscriminantAnalysis(solver="svd"),
                  Ridge(solver="svd"), LogisticRegression(), StandardScaler(), MinMaxScaler()]
    out = {}
    for est, dtype, strict in [(e, d, s) for e in estimators for d in ("float64", "float32") for s in "01"]:
            os.environ["LOOM_STRICT_CONVERSION"] = strict  # read at each conversion
            key = repr(est).replace(chr(10), "") + " " + dtype + " strict=" + strict
            try:
                check_array_api_input_and_values(type(est).__name__, est, "loom", None, dtype)
                out[key] = "ok"
            except Exception as e:
                out[key] = type(e).__name__ + ": " + str(e)[:300]
    print(json.dumps(out))
""")


def test_sklearn_array_api_dispatch_matches_numpy():
    """scikit-learn's own check (fit, attributes and every predict/transform/score method with
    array_api_dispatch=True against the same estimator on NumPy arrays, to 1000 eps) for PCA (three
    solvers, whitening), LinearDiscriminantAnalysis, Ridge, LogisticRegression and two scalers.
    strict=0: host arrays convert to NumPy implicitly (sklearn then also fits with dispatch off);
    strict=1: they refuse, as GPU arrays do."""
    pytest.importorskip("sklearn")
    pytest.importorskip("array_api_compat")
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    p = subprocess.run([sys.executable, "-c", _SKLEARN_SCRIPT], env=env, capture_output=True, text=True,
                       timeout=600, cwd="/tmp")
    assert p.returncode == 0, p.stderr[-3000:]
    results = json.loads(p.stdout.strip().splitlines()[-1])
    bad = {k: v for k, v in results.items() if v != "ok" and not v.startswith("SkipTest")}
    assert not bad, bad
    assert sum(v == "ok" for v in results.values()) >= 32


# ---- reshape within loom's 16 dimensions (array-api-tests' test_reshape draws up to 32: xfails.txt) ----------
def _reshape_targets(size, rng):
    """Target shapes of `size` elements, 1 to 16 dims, the prime factors spread at random, some with -1."""
    factors, n, p = [], size, 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    for ndim in (1, 2, 5, 9, 16):
        shape = [1] * ndim
        for f in factors:
            shape[rng.integers(ndim)] *= f
        yield tuple(shape)
        i = int(rng.integers(ndim))
        yield tuple(-1 if j == i else s for j, s in enumerate(shape))


@pytest.mark.parametrize("shape", [(), (1,), (24,), (2, 3, 4), (1, 1, 6, 1, 5), (4, 0, 3), (2,) * 10])
@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.complex128, np.bool_])
def test_reshape_up_to_16_dims_matches_numpy(shape, dtype):
    rng = np.random.default_rng(len(shape))
    a = (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)
    x = xp.asarray(a)
    size = a.size
    targets = list(_reshape_targets(size, rng)) if size else [(0,), (2, 0, 5), (0,) * 16, (3, 0, 2)]
    for t in targets:
        want = np.reshape(a, t)
        got = xp.reshape(x, t)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got.get(), want)
        np.testing.assert_array_equal(xp.reshape(x[::-1] if x.ndim else x, t, copy=True).get(),
                                      np.reshape(a[::-1] if a.ndim else a, t))


def test_reshape_beyond_16_dims_says_so():
    with pytest.raises(ValueError, match="16 dimensions"):
        xp.reshape(xp.ones(4), (1,) * 15 + (2, 2))
    assert xp.__array_namespace_info__().capabilities()["max dimensions"] == 16  # type: ignore[attr-defined]
