"""Spectra of real inputs on the device path (loom/fft.py's "Real inputs", issue 15's FFT convolution):
fft / fft2 / fftn of a real array as a real-to-complex transform plus a pending Hermitian fill, the
arithmetic that keeps the symmetry known, and the inverse of a known-Hermitian spectrum as one
complex-to-real transform of its half. Checked against NumPy's pocketfft and a direct float64
correlation; the library calls made are checked too (the mechanism: no complex transform where a real
one does), and every case where the symmetry must NOT be assumed (an in-place write, a complex scalar,
spectra of other lengths or axes, a materialized spectrum written through its memory) must give NumPy's
complex answer.

With a CUDA device the cases run through cuFFT; without one (CI) through test_fft.py's NumPy model of
loom_fft's contract on the host, whose complex-to-real scratch kind (4) fills its input with NaN after
use, so a caller that handed it an array still needed fails here.
"""
import numpy as np
import pytest

import loom
from test_fft_gpu15b import calls, rand  # noqa: F401 (calls: the library-call fixture both files use)

R2C, C2C_FWD, C2C_INV, C2R_SCRATCH = 2, 0, 1, 4


def close(got, want, single):
    got = got.get() if isinstance(got, loom.ndarray) else got
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(float(np.max(np.abs(want))), 1.0) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=(3e-5 if single else 1e-11) * scale)


CASES = [  # shape, s, axes
    ((16, 12), None, None),
    ((15, 9), None, None),            # odd lengths
    ((4, 15, 9), None, (-2, -1)),     # a batch of 4
    ((6, 10, 7), None, None),         # rank 3
    ((3, 6, 10, 7), None, None),      # rank 4: a group of 3 and one complex pass
    ((5, 8, 6), (7, 11), (0, 2)),     # s pads, axes not trailing
    ((5, 8, 6), (3, 4), (2, 1)),      # s crops, axes reversed (the half lies on axis 1)
    ((7, 6), (7,), (0,)),             # one axis, the first
    ((1, 2), None, None),             # lengths 1 and 2: the half is the whole
    ((13,), (31,), None),             # 1-d, prime padded length
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.bool_])
@pytest.mark.parametrize("shape,s,axes", CASES)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fftn_of_real_input_is_r2c_plus_fill(calls, shape, s, axes, norm, dtype):
    x = rand(shape, np.float64) * 3
    x = x.astype(dtype) if dtype != np.bool_ else x > 0
    single = dtype == np.float32
    got = loom.fft.fftn(loom.asarray(x), s=s, axes=axes, norm=norm)
    want = np.fft.fftn(x.astype(np.float64), s=s, axes=axes, norm=norm)
    assert got.dtype == (np.complex64 if single else np.complex128)
    forward = list(calls)
    assert forward and forward[0][0] == R2C and all(k != C2C_FWD or r < len(want.shape) for k, r, _ in forward)
    # its inverse over the same axes and lengths (taken while the spectrum is pending: a materialized one is
    # an ordinary array): one complex-to-real plan (and complex passes before it for axes beyond the three
    # of one plan); real values, a zero imaginary part
    calls.clear()
    back = loom.fft.ifftn(got, s=s if s is None else [want.shape[a] for a in _axes(x, s, axes)], axes=axes,
                          norm=norm)
    assert [k for k, _, _ in calls][-1] == C2R_SCRATCH and C2C_FWD not in [k for k, _, _ in calls]
    close(got, want, single)
    want_back = np.fft.ifftn(want, axes=_axes(x, s, axes), norm=norm)
    assert back.dtype == got.dtype
    close(back, want_back, single)
    assert np.all(back.get().imag == 0)


def _axes(x, s, axes):
    if axes is None:
        return tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    return tuple(a % x.ndim for a in axes)


def test_fft_and_fft2_of_real_inputs(calls):
    x = rand((6, 9), np.float32)
    close(loom.fft.fft(loom.asarray(x)), np.fft.fft(x.astype(np.float64)), True)
    close(loom.fft.fft(loom.asarray(x), n=14, axis=0), np.fft.fft(x.astype(np.float64), n=14, axis=0), True)
    close(loom.fft.fft2(loom.asarray(x), s=(7, 5)), np.fft.fft2(x.astype(np.float64), s=(7, 5)), True)
    assert {k for k, _, _ in calls} == {R2C}
    v = loom.asarray(x)[::-1, 1::2]  # a non-contiguous view
    close(loom.fft.fft2(v), np.fft.fft2(x[::-1, 1::2].astype(np.float64)), True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_convolution_is_two_r2c_and_one_c2r(calls, monkeypatch, dtype, norm):
    """The seeds' example against a direct correlation in float64; the full spectra are never made."""
    r = np.random.default_rng(5)
    in1, in2 = r.standard_normal((23, 19)).astype(dtype), r.standard_normal((5, 4)).astype(dtype)
    s = (in1.shape[0] + in2.shape[0] - 1, in1.shape[1] + in2.shape[1] - 1)
    want = np.zeros(s)
    k = in2[::-1, ::-1].astype(np.float64)
    for i in range(k.shape[0]):
        for j in range(k.shape[1]):
            want[i:i + in1.shape[0], j:j + in1.shape[1]] += k[i, j] * in1
    if norm == "ortho":
        want = want / np.sqrt(np.prod(s))  # ortho forward twice, ortho inverse once
    a, b = loom.asarray(in1), loom.asarray(in2)
    for route in ("1", "0"):
        monkeypatch.setenv("LOOM_FFT_REAL_SPECTRUM", route)
        calls.clear()
        got = loom.fft.ifft2(loom.fft.fft2(a, s=s, norm=norm) * loom.fft.fft2(loom.flipud(loom.fliplr(b)), s=s,
                                                                               norm=norm), norm=norm).real
        assert got.dtype == dtype
        close(got, want, dtype == np.float32)
        kinds = [c[:2] for c in calls]
        assert kinds == ([(R2C, 2), (R2C, 2), (C2R_SCRATCH, 2)] if route == "1" else
                         [(C2C_FWD, 2), (C2C_FWD, 2), (C2C_INV, 2)])


def test_arithmetic_that_keeps_the_symmetry(calls):
    x, y = rand((8, 7), np.float64, 1), rand((8, 7), np.float64, 2)
    X, Y = loom.fft.fft2(loom.asarray(x)), loom.fft.fft2(loom.asarray(y))
    nx, ny = np.fft.fft2(x), np.fft.fft2(y)
    for got, want in [(X + Y, nx + ny), (X - Y, nx - ny), (2.5 * X * Y, 2.5 * nx * ny), (-X / 3, -nx / 3),
                      (1 - X, 1 - nx), (X * X + 2, nx * nx + 2)]:
        calls.clear()
        close(loom.fft.ifft2(got), np.fft.ifft2(want), False)
        assert [k for k, _, _ in calls] == [C2R_SCRATCH]


def test_what_breaks_the_symmetry_takes_the_complex_path(calls):
    """Each result is not (known to be) Hermitian: NumPy's complex inverse, never a real one."""
    x, y = rand((8, 7), np.float64, 1), rand((6, 7), np.float64, 2)
    nx = np.fft.fft2(x)
    X = loom.fft.fft2(loom.asarray(x))
    c = rand((8, 7), np.complex128, 3)
    cases = [
        (X * 1j, nx * 1j, None),                                             # a complex scalar
        (X * loom.asarray(c), nx * c, None),                                 # an ordinary complex array
        (X * loom.fft.fft2(loom.asarray(x), s=(8, 9))[:, :7], nx * np.fft.fft2(x, s=(8, 9))[:, :7], None),
        (X, nx, (8, 6)),                                                     # other lengths
        (loom.fft.fftn(loom.asarray(x), axes=(0,)), np.fft.fftn(x, axes=(0,)), None),  # other axes
    ]
    for got, want, s in cases:
        close(loom.fft.ifft2(got, s=s), np.fft.ifft2(want, s=s), False)
    close(loom.fft.ifft2(loom.fft.fftn(loom.asarray(y), axes=(1,)) * 2), np.fft.ifft2(np.fft.fftn(y, axes=(1,)) * 2),
          False)


def test_writes_drop_the_symmetry(calls):
    x = rand((6, 5), np.float64, 4)
    nx = np.fft.fft2(x)
    X = loom.fft.fft2(loom.asarray(x))
    X[1, 2] = 7 + 3j  # in place while pending: a new node
    w = nx.copy()
    w[1, 2] = 7 + 3j
    close(loom.fft.ifft2(X), np.fft.ifft2(w), False)
    X = loom.fft.fft2(loom.asarray(x))
    X += 1j
    close(loom.fft.ifft2(X), np.fft.ifft2(nx + 1j), False)
    X = loom.fft.fft2(loom.asarray(x))
    X.get()  # materialized: its memory can be written through views, so the symmetry is forgotten
    X.imag[0, 0] = 5.0
    w = nx.copy()
    w[0, 0] += 5j - 1j * nx[0, 0].imag
    close(loom.fft.ifft2(X), np.fft.ifft2(w), False)
    Y = loom.fft.fft2(loom.asarray(x))
    P = Y * Y
    Y[0, 1] = 0  # the product was taken before the write: it stays Y * Y of the old values
    close(loom.fft.ifft2(P), np.fft.ifft2(nx * nx), False)


def test_spectrum_behaves_as_an_array(calls):
    x = rand((4, 6), np.float32)
    X = loom.fft.fft2(loom.asarray(x))
    assert isinstance(X, loom.ndarray) and X.shape == (4, 6) and X.dtype == np.complex64
    nx = np.fft.fft2(x.astype(np.float64))
    close(abs(X), np.abs(nx), True)
    close(X[1:, ::2].conj(), nx[1:, ::2].conj(), True)
    close(loom.sum(X, axis=0), nx.sum(axis=0), True)
    close(loom.fft.ifft(X, axis=1), np.fft.ifft(nx, axis=1), True)  # one axis of two: complex
    np.testing.assert_allclose(np.asarray(X.get()), nx, atol=3e-5 * np.abs(nx).max())


def test_nan_and_inf_propagate_as_numpy(calls):
    x = np.array([[1.0, np.nan, 0.0], [np.inf, 2.0, 1.0]], np.float64)
    got = loom.fft.fft2(loom.asarray(x)).get()
    want = np.fft.fft2(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def test_irfftn_never_hands_over_the_callers_array(calls):
    """The complex-to-real kind may overwrite its input: the Python layer passes it a private copy."""
    c = rand((6, 5), np.complex128, 6)
    a = loom.asarray(c)
    loom.eval(a)
    for f in (lambda: loom.fft.irfft2(a), lambda: loom.fft.irfft(a), lambda: loom.fft.irfftn(a, s=(6, 8)),
              lambda: loom.fft.hfft(a)):
        f().get()
        np.testing.assert_array_equal(a.get(), c)
    assert all(k == C2R_SCRATCH for k, _, _ in calls if k in (3, 4))


def test_loom_fft_kinds_at_the_boundary():
    """Kind 4 (LOOM_FFT_C2R_SCRATCH) is a kind loom_fft knows (the host then has no library); 5 is refused."""
    x = loom._common._from_numpy(np.ones((4, 3), np.complex128), device=(0, 0))
    with pytest.raises(NotImplementedError, match="FFT"):
        loom._core.fft(C2R_SCRATCH, 1, 4, x)
    with pytest.raises(ValueError, match="unknown kind 5"):
        loom._core.fft(5, 1, 4, x)
