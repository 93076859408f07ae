"""loom.fft against numpy.fft and against a float64 DFT written here (a matrix of exp(-2 pi i jk / n)):
complex, real and Hermitian transforms in 1, 2 and n dims; n / s larger and smaller than the input (zero
padding, cropping); axes in any order, negative, repeated; every norm; float32 -> complex64 and float64 ->
complex128 results; odd and prime lengths; non-contiguous and lazy inputs; fftfreq, rfftfreq, fftshift,
ifftshift; the errors NumPy raises; and the FFT convolution of issue 15's seed example.

On a host array loom.fft is NumPy's pocketfft on loom's memory, so these tests check the plumbing there;
on a CUDA device (scripts/gpu_all.sh runs this file on the H200) they check cuFFT through loom_fft.
"""
from typing import Any

import numpy as np
import pytest

import loom

RNG = np.random.default_rng(3)


def crand(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def rrand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def dft(x, axis, inverse=False):
    """The float64 DFT along axis by its matrix (unnormalized)."""
    x = np.moveaxis(np.asarray(x, dtype=np.complex128), axis, -1)
    n = x.shape[-1]
    k = np.arange(n)
    w = np.exp((2j if inverse else -2j) * np.pi * np.outer(k, k) / n)
    return np.moveaxis(x @ w, -1, axis)


def check(got, want, dtype):
    got = got.get() if isinstance(got, loom.ndarray) else got
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    scale = max(1.0, float(np.max(np.abs(want)))) if np.size(want) else 1.0
    tol = 5e-5 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-12
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale * np.sqrt(max(np.size(want), 1)))


@pytest.mark.parametrize("n", [1, 2, 7, 16, 17, 97, 128])
def test_fft_against_dft(n):
    x = crand(3, n)
    check(loom.fft.fft(loom.asarray(x)), dft(x, -1), np.complex128)
    check(loom.fft.ifft(loom.asarray(x)), dft(x, -1, True) / n, np.complex128)
    r = rrand(4, n)
    check(loom.fft.rfft(loom.asarray(r)), dft(r, -1)[:, : n // 2 + 1], np.complex128)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_fft_norms_dtypes(norm, dtype):
    x = crand(5, 12, dtype=dtype)
    for name in ("fft", "ifft"):
        check(getattr(loom.fft, name)(loom.asarray(x), norm=norm), getattr(np.fft, name)(x, norm=norm), dtype)
    rt = np.float32 if dtype == np.complex64 else np.float64
    r = rrand(5, 12, dtype=rt)
    check(loom.fft.rfft(loom.asarray(r), norm=norm), np.fft.rfft(r, norm=norm).astype(dtype), dtype)
    h = np.fft.rfft(r).astype(dtype)
    check(loom.fft.irfft(loom.asarray(h), norm=norm), np.fft.irfft(h, norm=norm).astype(rt), rt)


@pytest.mark.parametrize("n", [5, 8, 13, 20])
def test_n_pads_and_crops(n):
    x = crand(2, 10)
    check(loom.fft.fft(loom.asarray(x), n=n), np.fft.fft(x, n=n), np.complex128)
    check(loom.fft.ifft(loom.asarray(x), n=n, axis=0), np.fft.ifft(x, n=n, axis=0), np.complex128)
    r = rrand(10, 3)
    check(loom.fft.rfft(loom.asarray(r), n=n, axis=0), np.fft.rfft(r, n=n, axis=0), np.complex128)
    h = crand(6, 3)
    check(loom.fft.irfft(loom.asarray(h), n=n, axis=0), np.fft.irfft(h, n=n, axis=0), np.float64)
    check(loom.fft.hfft(loom.asarray(h), n=n, axis=0), np.fft.hfft(h, n=n, axis=0), np.float64)
    check(loom.fft.ihfft(loom.asarray(r), n=n, axis=0), np.fft.ihfft(r, n=n, axis=0), np.complex128)


@pytest.mark.parametrize("s,axes", [(None, None), ((6, 9), None), (None, (0, 2)), ((4, 5, 6), (2, 0, 1)),
                                    (None, (-1,)), ((3, 3), (-2, -1)), (None, (1, 1)), (None, (0, 1, 2, 3))])
def test_fftn(s, axes):
    x = crand(4, 6, 5, 3)
    if axes == (0, 1, 2, 3) and s is None:
        pass
    elif s is not None and axes is None:
        x = x[0]
    check(loom.fft.fftn(loom.asarray(x), s=s, axes=axes), np.fft.fftn(x, s=s, axes=axes), np.complex128)
    check(loom.fft.ifftn(loom.asarray(x), s=s, axes=axes), np.fft.ifftn(x, s=s, axes=axes), np.complex128)


@pytest.mark.parametrize("s,axes", [(None, None), ((6, 8), None), (None, (0, 2)), ((4, 5, 7), (2, 0, 1))])
def test_rfftn_irfftn(s, axes):
    r = rrand(4, 6, 5)
    if s is not None and axes is None:
        r = r[0]
    check(loom.fft.rfftn(loom.asarray(r), s=s, axes=axes), np.fft.rfftn(r, s=s, axes=axes), np.complex128)
    h = np.fft.rfftn(r, s=s, axes=axes)
    check(loom.fft.irfftn(loom.asarray(h), s=s, axes=axes), np.fft.irfftn(h, s=s, axes=axes), np.float64)


def test_2d_and_views_and_lazy():
    x = crand(8, 6)
    check(loom.fft.fft2(loom.asarray(x)), np.fft.fft2(x), np.complex128)
    check(loom.fft.ifft2(loom.asarray(x), s=(4, 9)), np.fft.ifft2(x, s=(4, 9)), np.complex128)
    r = rrand(8, 6)
    check(loom.fft.rfft2(loom.asarray(r)), np.fft.rfft2(r), np.complex128)
    check(loom.fft.irfft2(loom.asarray(np.fft.rfft2(r)), s=r.shape), r, np.float64)
    big = crand(10, 12)
    check(loom.fft.fft(loom.asarray(big)[::2, 1::3]), np.fft.fft(big[::2, 1::3]), np.complex128)
    check(loom.fft.fft(loom.asarray(big).T), np.fft.fft(big.T), np.complex128)
    lazy = loom.asarray(r) * 2 + 1
    check(loom.fft.rfft(lazy), np.fft.rfft(r * 2 + 1), np.complex128)
    ints = np.arange(12).reshape(3, 4)
    check(loom.fft.fft(loom.asarray(ints)), np.fft.fft(ints), np.complex128)


def test_float32_stays_single():
    r = rrand(4, 32, dtype=np.float32)
    check(loom.fft.fft(loom.asarray(r)), np.fft.fft(r.astype(np.float64)).astype(np.complex64), np.complex64)
    check(loom.fft.rfftn(loom.asarray(r)), np.fft.rfftn(r.astype(np.float64)).astype(np.complex64), np.complex64)


def test_freq_and_shift():
    for n in (1, 4, 7, 10):
        np.testing.assert_allclose(loom.fft.fftfreq(n, 0.5).get(), np.fft.fftfreq(n, 0.5), rtol=1e-15)
        np.testing.assert_allclose(loom.fft.rfftfreq(n, 2.0).get(), np.fft.rfftfreq(n, 2.0), rtol=1e-15)
    x = np.arange(30).reshape(5, 6)
    np.testing.assert_array_equal(loom.fft.fftshift(loom.asarray(x)).get(), np.fft.fftshift(x))
    np.testing.assert_array_equal(loom.fft.ifftshift(loom.asarray(x)).get(), np.fft.ifftshift(x))
    np.testing.assert_array_equal(loom.fft.fftshift(loom.asarray(x), axes=1).get(), np.fft.fftshift(x, axes=1))
    np.testing.assert_array_equal(loom.fft.ifftshift(loom.asarray(x), axes=(0,)).get(), np.fft.ifftshift(x, axes=(0,)))


def test_errors():
    x = loom.asarray(crand(4, 4))
    with pytest.raises(ValueError):
        loom.fft.fft(x, n=0)
    with pytest.raises(ValueError):
        loom.fft.fft(x, norm="bogus")
    with pytest.raises(ValueError):
        loom.fft.fftn(x, s=(3,), axes=(0, 1))
    with pytest.raises(Exception):
        loom.fft.fft(x, axis=2)


def test_fft_convolution_example():
    """Issue 15's seed: a full 2-D convolution through FFTs, against the direct sum."""
    in1, in2 = rrand(12, 10), rrand(5, 4)
    s = (in1.shape[0] + in2.shape[0] - 1, in1.shape[1] + in2.shape[1] - 1)
    want = np.zeros(s)
    for i in range(in2.shape[0]):
        for j in range(in2.shape[1]):
            want[i:i + in1.shape[0], j:j + in1.shape[1]] += in2[i, j] * in1
    a, b = loom.asarray(in1), loom.asarray(in2)
    got = loom.fft.ifft2(loom.fft.fft2(a, s=s) * loom.fft.fft2(b, s=s)).real
    np.testing.assert_allclose(got.get(), want, atol=1e-10)
    # the correlation form of the example: fft2(in1) * fft2(flipud(fliplr(in2)))
    flip = b[::-1, ::-1]
    if hasattr(loom, "flipud") and hasattr(loom, "fliplr"):
        flip = loom.flipud(loom.fliplr(b))
    got = loom.fft.ifft2(loom.fft.fft2(a, s=s) * loom.fft.fft2(flip, s=s)).real
    want_corr = np.real(np.fft.ifft2(np.fft.fft2(in1, s=s) * np.fft.fft2(in2[::-1, ::-1], s=s)))
    np.testing.assert_allclose(got.get(), want_corr, atol=1e-10)


def _model_fft(kind, rank, n_last, y):
    """NumPy model of loom_fft's contract (loom.h): unnormalized transforms of the last `rank` dims of a
    C-contiguous array; the input must not be modified, except by kind 4 (LOOM_FFT_C2R_SCRATCH), which may
    overwrite it as cuFFT does: the model then fills it with NaN, so a caller that passed an array it still
    needs gets wrong results."""
    v = y.get()  # the binding materializes a pending input, as loom._core.fft does
    assert y.flags.c_contiguous
    before = v.copy()
    axes = tuple(range(v.ndim - rank, v.ndim))
    n = [v.shape[a] for a in axes]
    if kind == 0:
        r = np.fft.fftn(v, axes=axes)
    elif kind == 1:
        r = np.fft.ifftn(v, axes=axes) * np.prod(n)
    elif kind == 2:
        r = np.fft.rfftn(v, axes=axes)
    else:
        n[-1] = n_last
        assert v.shape[-1] == n_last // 2 + 1
        r = np.fft.irfftn(v, s=n, axes=axes) * np.prod(n)
    single = v.dtype in (np.float32, np.complex64)
    if kind in (3, 4):
        r = r.astype(np.float32 if single else np.float64)
    else:
        r = r.astype(np.complex64 if single else np.complex128)
    np.testing.assert_array_equal(y.get(), before)
    if kind == 4:
        y[...] = np.nan
    return loom.asarray(r)


@pytest.fixture
def library_path(monkeypatch):
    monkeypatch.setattr(loom.fft, "_library_fft", _model_fft)
    monkeypatch.setattr(loom.fft, "_force_library", True)


@pytest.mark.parametrize("test", [test_fft_against_dft, test_fft_norms_dtypes, test_n_pads_and_crops, test_fftn,
                                  test_rfftn_irfftn, test_2d_and_views_and_lazy, test_float32_stays_single,
                                  test_fft_convolution_example])
def test_device_path_plumbing(library_path, test):
    """The device path (axes moved last, lengths, the real transforms' split, norms) on the host, through
    the NumPy model of loom_fft."""
    import inspect
    params = inspect.signature(test).parameters
    if not params:
        test()
    elif list(params) == ["n"]:
        for n in (1, 7, 16):
            test(n)
    elif list(params) == ["norm", "dtype"]:
        for norm in (None, "ortho", "forward"):
            for dt in (np.complex64, np.complex128):
                test(norm, dt)
    else:
        for case in [(None, None), ((6, 9), None), (None, (0, 2)), ((4, 5, 6), (2, 0, 1)), (None, (1, 1))]:
            if test is test_rfftn_irfftn and case[1] == (1, 1):
                continue
            if test is test_rfftn_irfftn and case[0] == (6, 9):
                case = ((6, 8), None)
            test(*case)


def test_loom_fft_refuses_host_arrays():
    x = loom._common._from_numpy(crand(4, 4), device=(0, 0))  # a host array, whatever the default device
    with pytest.raises(NotImplementedError, match="FFT"):
        loom._core.fft(0, 1, 0, x)


def test_nd_planning_setting(library_path, monkeypatch):
    """config.enable_nd_planning (CuPy's, deprecated: it warns): True plans up to three axes per
    library call, False one axis per call; both agree with NumPy. Counted through the NumPy model."""
    ranks: list = []

    def counting(kind, rank, n_last, y):
        ranks.append(rank)
        return _model_fft(kind, rank, n_last, y)

    monkeypatch.setattr(loom.fft, "_library_fft", counting)
    config: Any = loom.fft.config
    x = crand(3, 4, 5)
    with pytest.warns(DeprecationWarning, match="enable_nd_planning"):
        saved = config.enable_nd_planning
    try:
        for setting, want_ranks in ((True, [3, 3]), (False, [1, 1, 1, 1, 1, 1])):
            with pytest.warns(DeprecationWarning, match="enable_nd_planning"):
                config.enable_nd_planning = setting
            ranks.clear()
            y = loom.fft.ifftn(loom.fft.fftn(x))
            np.testing.assert_allclose(loom.fft.fftn(x).get(), np.fft.fftn(x), rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(y.get(), x, rtol=1e-12, atol=1e-12)
            assert ranks[:len(want_ranks)] == want_ranks
    finally:
        with pytest.warns(DeprecationWarning):
            config.enable_nd_planning = saved


def test_empty_axes_return_the_input():
    a = loom.asarray(rrand(3, 4))
    for f in (loom.fft.fftn, loom.fft.ifftn, loom.fft.fft2, loom.fft.ifft2):
        assert f(a, axes=()) is a  # NumPy's: nothing to transform, the input itself
