"""cov and corrcoef of loom arrays on their device (python/loom/_covariance.py: centred rows, one matmul)
against NumPy: shapes (1-d, one row, one column, more variables than samples), rowvar, bias, ddof, y=,
dtype=, integer and complex inputs, degrees of freedom <= 0 (NumPy's warning and inf/nan), and weights
(NumPy's own code). Sums run in another order than NumPy's (BLAS), so values are compared with a tolerance;
shapes and dtypes exactly."""
import warnings

import numpy as np
import pytest

import loom


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def close(got, want, rtol=1e-10):
    got = np.asarray(host(got))
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype, (got.shape, np.shape(want), got.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)


@pytest.mark.parametrize("shape", [(3, 50), (50, 3), (1, 10), (10,), (4, 1), (6, 6)])
@pytest.mark.parametrize("rowvar", [True, False])
def test_cov_shapes(shape, rowvar):
    x = np.random.default_rng(sum(shape)).standard_normal(shape)
    lx = loom.asarray(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for kw in ({}, {"bias": True}, {"ddof": 0}, {"ddof": 2}):
            close(loom.cov(lx, rowvar=rowvar, **kw), np.cov(x, rowvar=rowvar, **kw))
        close(loom.corrcoef(lx, rowvar=rowvar), np.corrcoef(x, rowvar=rowvar))


def test_cov_y_dtypes_and_complex():
    r = np.random.default_rng(1)
    x, y = r.standard_normal((3, 20)).astype(np.float32), r.standard_normal((2, 20)).astype(np.float32)
    close(loom.cov(loom.asarray(x), loom.asarray(y)), np.cov(x, y))
    close(loom.cov(loom.asarray(x), dtype=np.float32), np.cov(x, dtype=np.float32), rtol=1e-5)
    close(loom.corrcoef(loom.asarray(x), loom.asarray(y), rowvar=True), np.corrcoef(x, y))
    xi = r.integers(0, 10, (3, 30))
    close(loom.cov(loom.asarray(xi)), np.cov(xi))
    close(loom.corrcoef(loom.asarray(xi)), np.corrcoef(xi))
    z = r.standard_normal((3, 20)) + 1j * r.standard_normal((3, 20))
    close(loom.cov(loom.asarray(z)), np.cov(z))
    close(loom.corrcoef(loom.asarray(z)), np.corrcoef(z))
    c = host(loom.corrcoef(loom.asarray(x)))
    assert np.all(np.abs(c) <= 1)


def test_degrees_of_freedom_and_errors():
    x = loom.asarray(np.arange(3.0).reshape(3, 1))
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = loom.cov(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        close(got, np.cov(np.arange(3.0).reshape(3, 1)))
    with pytest.raises(ValueError, match="more than 2 dimensions"):
        loom.cov(loom.asarray(np.zeros((2, 2, 2))))
    with pytest.raises(ValueError, match="ddof must be integer"):
        loom.cov(x, ddof=1.5)
    assert host(loom.cov(loom.asarray(np.zeros((0, 3))))).shape == (0, 0)


def test_weights_take_numpys_code():
    r = np.random.default_rng(2)
    x = r.standard_normal((3, 12))
    fw, aw = r.integers(1, 4, 12), r.random(12)
    close(loom.cov(loom.asarray(x), fweights=fw, aweights=aw), np.cov(x, fweights=fw, aweights=aw))
