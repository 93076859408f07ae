"""scikit-learn's array API dispatch on loom arrays (issue 14): PCA, LinearDiscriminantAnalysis and Ridge fitted
under sklearn.config_context(array_api_dispatch=True) on loom arrays of the default device (the host here, the
GPU on a GPU machine), against the same estimators fitted on NumPy arrays with
dispatch off (NumPy's LAPACK: an independent implementation of every decomposition). Each result must be a
loom array on the input's device with NumPy's dtype, and array_api_compat must find loom's namespace.

scipy must read SCIPY_ARRAY_API=1 when it is first imported, and scikit-learn checks the variable whenever
dispatch is turned on: the module sets it around its own import of scikit-learn and, for its tests, with
monkeypatch. If another module imported scipy earlier without it, the tests here run in a fresh process
(test_in_a_fresh_process). Skipped where scikit-learn or array_api_compat is not installed
(scripts/sklearn_wheels.sh carries them to the GPU machines).

Tolerances: both sides are backward-stable LAPACK/cuSOLVER factorizations of the same data in the same
dtype, so they differ by about eps * ||X|| / gap (gap: the distance of a singular value to its neighbours).
The data below have singular values 40, 30, 22, 16, 11, 7, 4, 2 (||X|| / gap <= 20), the ridge system's
condition number is (40^2 + 1) / (2^2 + 1) = 320: 20-320 eps with the dimension as a further factor is
below 1e-11 in float64 and 2e-4 in float32; the checks use rtol 1e-9 / 1e-3 relative to the largest
magnitude of the reference (normwise, as the bounds are).
"""
import contextlib
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import loom as xp


@contextlib.contextmanager
def _environ(**kw):
    old = {k: os.environ.get(k) for k in kw}
    os.environ.update(kw)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


_SCIPY_BEFORE = "scipy" in sys.modules
with _environ(SCIPY_ARRAY_API="1"):
    sklearn = pytest.importorskip("sklearn")
    array_api_compat = pytest.importorskip("array_api_compat")
    import scipy  # noqa: E402 (scikit-learn's dependency)
    from sklearn.base import clone  # noqa: E402
    from sklearn.decomposition import PCA  # noqa: E402
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
    from sklearn.linear_model import Ridge  # noqa: E402


def _scipy_array_api_on():
    try:
        from scipy._lib._array_api import _GLOBAL_CONFIG  # where scipy keeps what it read at import
        return bool(_GLOBAL_CONFIG["SCIPY_ARRAY_API"])
    except (ImportError, KeyError):
        return not _SCIPY_BEFORE
IN_PROCESS = _scipy_array_api_on()  # noqa: E305
needs_fresh_scipy = pytest.mark.skipif(not IN_PROCESS, reason="scipy was imported without SCIPY_ARRAY_API=1 "
                                       "before this module: test_in_a_fresh_process runs these tests")


@pytest.fixture(autouse=True)
def _scipy_array_api(monkeypatch):
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")  # scikit-learn checks it at each config_context


def _devices():
    """The default device and, beside a GPU, the host (loom.cpu)."""
    out = [pytest.param(None, id="default")]
    if xp.cuda.is_available():
        out.append(pytest.param(xp.cpu, id="host-beside-gpu"))
    return out


DEVICES = _devices()
DTYPES = ["float64", "float32"]
TOL = {"float64": 1e-9, "float32": 1e-3}


# ---- data: known singular values, well separated (the tolerances above rest on them) -----------------------------
def _orthonormal(rng, n, k):
    q, r = np.linalg.qr(rng.normal(size=(n, k)))
    return q * np.sign(np.diag(r))


def _regression_data(dtype, n=60, seed=0):
    rng = np.random.default_rng(seed)
    s = np.array([40.0, 30, 22, 16, 11, 7, 4, 2])
    p = s.size
    X = (_orthonormal(rng, n, p) * s) @ _orthonormal(rng, p, p).T + rng.uniform(-5, 5, size=p)
    coef = rng.normal(size=(p, 2))
    Y = X @ coef + 0.1 * rng.normal(size=(n, 2)) + np.array([3.0, -1.0])
    X_test = rng.normal(scale=3.0, size=(17, p)) + X.mean(axis=0)
    return X.astype(dtype), Y.astype(dtype), X_test.astype(dtype)


def _classification_data(dtype, seed=1):
    """Three overlapping Gaussian classes of 30, 20 and 40 points in 5 dims (labels 0, 3, 7)."""
    rng = np.random.default_rng(seed)
    centers = np.array([[0, 0, 0, 0, 0], [2, 1, 0, -1, 0.5], [-1, 2, 1, 0, -1.5]], dtype=float)
    sizes = [30, 20, 40]
    mix = np.eye(5) + 0.3 * rng.normal(size=(5, 5))
    X = np.concatenate([rng.normal(size=(m, 5)) @ mix + c for c, m in zip(centers, sizes)])
    y = np.repeat(np.array([0, 3, 7]), sizes)
    order = rng.permutation(len(y))
    X_test = rng.normal(scale=2.0, size=(25, 5)) @ mix + centers.mean(axis=0)
    return X[order].astype(dtype), y[order], X_test.astype(dtype)


# ---- checks ---------------------------------------------------------------------------------------------------
def _loom(a, device):
    return xp.asarray(a, device=device)


def _is_loom_result(r, like):
    """r is a loom array on `like`'s device whose namespace array_api_compat finds to be loom."""
    assert isinstance(r, xp.ndarray), type(r)
    assert r.device == like.device, (r.device, like.device)
    assert array_api_compat.array_namespace(r) is xp


def _close(got, want, dtype, like, signs=None):
    """got (a loom result) equals want (NumPy's) normwise to TOL[dtype]; signs: a per-column sign to apply to
    got first (singular vectors are defined up to sign, and an estimator that does not fix them may differ)."""
    _is_loom_result(got, like)
    g = xp.asnumpy(got)
    want = np.asarray(want)
    assert g.shape == want.shape and g.dtype == want.dtype, (g.shape, g.dtype, want.shape, want.dtype)
    if signs is not None:
        g = g * signs
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(g, want, rtol=TOL[dtype], atol=TOL[dtype] * scale)


def _column_signs(got, want):
    """The signs that turn got's columns into want's (each column's largest entry of want decides)."""
    g, w = xp.asnumpy(got), np.asarray(want)
    i = np.argmax(np.abs(w), axis=0)
    cols = np.arange(w.shape[1])
    return np.sign(w[i, cols]) * np.sign(g[i, cols])


def _fit_both(est, X, y, device, **fit_kw):
    """(est fitted on NumPy arrays, dispatch off; est fitted on loom arrays under dispatch, its loom X)."""
    ref = clone(est).fit(X, y, **fit_kw) if y is not None else clone(est).fit(X, **fit_kw)
    Xl = _loom(X, device)
    kw = {k: _loom(v, device) for k, v in fit_kw.items()}
    with sklearn.config_context(array_api_dispatch=True):
        got = clone(est).fit(Xl, _loom(y, device), **kw) if y is not None else clone(est).fit(Xl, **kw)
    return ref, got, Xl


# ---- the namespace as array_api_compat sees it ----------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_array_api_compat_finds_loom(device):
    x = _loom(np.arange(6.0).reshape(2, 3), device)
    assert array_api_compat.is_array_api_obj(x)
    assert array_api_compat.array_namespace(x) is xp
    assert array_api_compat.array_namespace(x, x.T + 1, 2.0) is xp  # arrays of one namespace, and a scalar
    assert array_api_compat.array_namespace(x, api_version="2024.12") is xp
    assert array_api_compat.device(x) == x.device
    assert array_api_compat.size(x) == 6
    y = array_api_compat.to_device(x, x.device)
    assert y.device == x.device and xp.asnumpy(y).tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(TypeError):  # two namespaces in one call: the library refuses to guess
        array_api_compat.array_namespace(x, np.ones(3))


# ---- PCA ------------------------------------------------------------------------------------------------------
PCAS = [PCA(n_components=3, svd_solver="full"), PCA(n_components=3, svd_solver="covariance_eigh"),
        PCA(n_components=3, svd_solver="randomized", power_iteration_normalizer="QR", random_state=0),
        PCA(n_components=3, svd_solver="auto"), PCA(n_components=0.9, whiten=True, svd_solver="full"),
        PCA(svd_solver="full")]


@needs_fresh_scipy
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("est", PCAS, ids=lambda e: f"{e.svd_solver}-{e.n_components}-whiten{e.whiten}")
def test_pca_matches_numpy(est, dtype):
    device = None  # the default device
    X, _, X_test = _regression_data(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the randomized solver's "falls back to QR" note
        ref, got, Xl = _fit_both(est, X, None, device)
        assert got.n_components_ == ref.n_components_
        for name in ("components_", "explained_variance_", "explained_variance_ratio_", "singular_values_",
                     "mean_"):
            _close(getattr(got, name), getattr(ref, name), dtype, Xl)
        assert abs(float(got.noise_variance_) - float(ref.noise_variance_)) <= TOL[dtype] * float(
            ref.explained_variance_[0])
        Xt = _loom(X_test, device)
        with sklearn.config_context(array_api_dispatch=True):
            T = got.transform(Xt)
            back = got.inverse_transform(T)
            T_fit = clone(est).fit_transform(Xl)
    _close(T, ref.transform(X_test), dtype, Xl)
    _close(back, ref.inverse_transform(ref.transform(X_test)), dtype, Xl)
    _close(T_fit, ref.transform(X), dtype, Xl)


@needs_fresh_scipy
def test_pca_bad_input_is_refused_as_with_numpy():
    X, _, _ = _regression_data("float64")
    bad = X.copy()
    bad[3, 2] = np.nan
    with sklearn.config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="NaN"):
            PCA(n_components=2).fit(xp.asarray(bad))
        with pytest.raises(ValueError, match="n_components=9 must be between"):
            PCA(n_components=9, svd_solver="full").fit(xp.asarray(X))
        with pytest.raises(ValueError, match="arpack"):  # scikit-learn's own refusal under dispatch
            PCA(n_components=2, svd_solver="arpack").fit(xp.asarray(X))
    with pytest.raises(ValueError, match="n_components=9 must be between"):
        PCA(n_components=9, svd_solver="full").fit(X)


# ---- LinearDiscriminantAnalysis -------------------------------------------------------------------------------
# (store_covariance=True is not array-API code in scikit-learn 1.9: its _class_cov adds into numpy.zeros, which
# no device array can do; scikit-learn fails the same way for every non-NumPy namespace)
LDAS = [LinearDiscriminantAnalysis(solver="svd"), LinearDiscriminantAnalysis(solver="svd", n_components=1),
        LinearDiscriminantAnalysis(solver="svd", priors=[0.5, 0.2, 0.3], tol=1e-6)]


@needs_fresh_scipy
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("est", LDAS, ids=["default", "n_components1", "priors"])
def test_lda_matches_numpy(est, dtype):
    device = None  # the default device
    X, y, X_test = _classification_data(dtype)
    ref, got, Xl = _fit_both(est, X, y, device)
    classes = got.classes_
    assert isinstance(classes, xp.ndarray) and xp.asnumpy(classes).tolist() == [0, 3, 7]
    for name in ("coef_", "intercept_", "means_", "priors_", "xbar_", "explained_variance_ratio_"):
        _close(getattr(got, name), getattr(ref, name), dtype, Xl)
    Xt = _loom(X_test, device)
    with sklearn.config_context(array_api_dispatch=True):
        pred, proba = got.predict(Xt), got.predict_proba(Xt)
        log_proba, dec, T = got.predict_log_proba(Xt), got.decision_function(Xt), got.transform(Xt)
        score = got.score(Xt, _loom(ref.predict(X_test), device))
    _is_loom_result(pred, Xl)
    np.testing.assert_array_equal(xp.asnumpy(pred), ref.predict(X_test))
    assert score == pytest.approx(1.0)
    _close(proba, ref.predict_proba(X_test), dtype, Xl)
    _close(dec, ref.decision_function(X_test), dtype, Xl)
    # (scikit-learn's p[p == 0] += tiny, then log: a masked in-place add on the pending softmax of a product)
    _close(log_proba, ref.predict_log_proba(X_test), dtype, Xl)
    # scalings_ and transform come from singular vectors scikit-learn does not sign-fix: equal up to column signs
    signs = _column_signs(got.scalings_, ref.scalings_)
    _close(got.scalings_, ref.scalings_, dtype, Xl, signs=signs)
    _close(T, ref.transform(X_test), dtype, Xl, signs=signs[: T.shape[1]])


# ---- Ridge ----------------------------------------------------------------------------------------------------
RIDGES = [(Ridge(alpha=1.0, solver="svd"), 1, {}), (Ridge(alpha=1.0, solver="svd"), 2, {}),
          (Ridge(alpha=np.array([0.5, 20.0]), solver="svd"), 2, {}),
          (Ridge(alpha=3.0, solver="svd", fit_intercept=False), 2, {}),
          (Ridge(alpha=1.0, solver="svd"), 2, {"sample_weight": True})]


@needs_fresh_scipy
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(RIDGES)),
                         ids=["one-target", "two-targets", "alpha-per-target", "no-intercept", "sample-weight"])
def test_ridge_matches_numpy(case, dtype):
    device = None  # the default device
    est, targets, opts = RIDGES[case]
    X, Y, X_test = _regression_data(dtype)
    y = Y[:, 0] if targets == 1 else Y
    fit_kw = {}
    if opts.get("sample_weight"):
        fit_kw["sample_weight"] = np.random.default_rng(5).uniform(0.2, 3.0, size=len(X)).astype(dtype)
    ref, got, Xl = _fit_both(est, X, y, device, **fit_kw)
    _close(got.coef_, ref.coef_, dtype, Xl)
    if est.fit_intercept:
        _close(got.intercept_, ref.intercept_, dtype, Xl)
    else:
        assert float(got.intercept_) == 0.0 == float(ref.intercept_)
    with sklearn.config_context(array_api_dispatch=True):
        pred = got.predict(_loom(X_test, device))
        r2 = got.score(Xl, _loom(y, device))
    _close(pred, ref.predict(X_test), dtype, Xl)
    assert float(r2) == pytest.approx(ref.score(X, y), rel=TOL[dtype])


@needs_fresh_scipy
def test_ridge_other_solvers_are_refused_under_dispatch():
    """scikit-learn runs only solver='svd' on non-NumPy namespaces; 'auto' chooses it, with a warning."""
    X, Y, _ = _regression_data("float64")
    Xl, yl = xp.asarray(X), xp.asarray(Y[:, 0])
    with sklearn.config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="only supports solver 'svd'"):
            Ridge(solver="cholesky").fit(Xl, yl)
        with pytest.warns(UserWarning, match="solver 'svd'"):
            got = Ridge(alpha=1.0, solver="auto").fit(Xl, yl)
    ref = Ridge(alpha=1.0, solver="cholesky").fit(X, Y[:, 0])  # another algorithm: the condition number's bound
    np.testing.assert_allclose(xp.asnumpy(got.coef_), ref.coef_, rtol=1e-9, atol=1e-9 * np.abs(ref.coef_).max())


# ---- when scipy was imported without SCIPY_ARRAY_API before this module ----------------------------------------
@pytest.mark.skipif(IN_PROCESS, reason="runs in this process (scipy's array API support is on)")
def test_in_a_fresh_process():
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    p = subprocess.run([sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider"], env=env,
                       capture_output=True, text=True, timeout=900, cwd=os.path.dirname(__file__))
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
