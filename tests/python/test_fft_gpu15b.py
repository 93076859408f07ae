"""Multi-dim real FFTs as one library plan and the fused zero-padding (issue 15: rfft2 / irfft2 and the seeds'
FFT convolution on the H200), checked against NumPy's pocketfft.

Every case runs on the device path: with a CUDA device through cuFFT, without one (CI) through
test_fft.py's NumPy model of loom_fft's contract on the host, so the plumbing (the trailing group of a real
transform, the order of the complex passes, the lazy pad) is tested here too. The call counts check the
mechanism itself: rfft2 / irfft2 are one rank-2 real plan, and a padded transform copies its input once.
LOOM_FFT_REAL_ND=0 and LOOM_FFT_FUSED_PAD=0 (the A/B switches of _fft_config.py) must give the same
results by the old route.
"""
import numpy as np
import pytest

import loom
from test_fft import _model_fft

GPU = loom.cuda.is_available()


@pytest.fixture
def calls(monkeypatch):
    """The library calls made, as (kind, rank, n_last); through cuFFT on a GPU, else through the model."""
    made: list = []
    real = loom.fft._library_fft

    def counting(kind, rank, n_last, y):
        made.append((kind, rank, n_last))
        return real(kind, rank, n_last, y) if GPU else _model_fft(kind, rank, n_last, y)

    monkeypatch.setattr(loom.fft, "_library_fft", counting)
    if not GPU:
        monkeypatch.setattr(loom.fft, "_force_library", True)
    return made


def rand(shape, dtype, seed=0):
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * r.standard_normal(shape)
    return x.astype(dtype)


def close(got, want, single):
    got = got.get()
    assert got.shape == want.shape
    scale = max(float(np.max(np.abs(want))), 1.0) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=(2e-5 if single else 1e-11) * scale)


def expected_dtype(x, inverse_real):
    single = x.dtype in (np.float32, np.complex64)
    if inverse_real:
        return np.float32 if single else np.float64
    return np.complex64 if single else np.complex128


REAL_CASES = [  # shape, s, axes
    ((16, 12), None, None),
    ((15, 9), None, None),            # odd lengths
    ((4, 15, 9), None, (-2, -1)),     # a batch of 4
    ((6, 10, 7), None, None),         # rank 3
    ((3, 6, 10, 7), None, None),      # rank 4: a group of 3 and one complex pass
    ((5, 8, 6), (7, 11), (0, 2)),     # s pads, axes not trailing
    ((5, 8, 6), (3, 4), (2, 1)),      # s crops, axes reversed
    ((9, 4, 5), (9, 12, 5), (0, 1, 2)),  # pad the middle axis only
    ((7, 6), (7,), (0,)),             # one axis, the first
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,s,axes", REAL_CASES)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_rfftn_irfftn_match_numpy(calls, shape, s, axes, norm, dtype):
    x = rand(shape, dtype)
    single = dtype == np.float32
    got = loom.fft.rfftn(loom.asarray(x), s=s, axes=axes, norm=norm)
    want = np.fft.rfftn(x.astype(np.float64), s=s, axes=axes, norm=norm)
    assert got.dtype == expected_dtype(x, False)
    close(got, want, single)
    # the inverse of a general (not Hermitian) spectrum: NumPy's last-axis-first rule
    c = rand(want.shape, np.complex64 if single else np.complex128, seed=1)
    ax = axes if axes is not None else (None if s is None else tuple(range(-len(s), 0)))
    for s_inv in (None, s):
        if s_inv is None and ax is not None and len(ax) != len(set(ax)):
            continue
        back = loom.fft.irfftn(loom.asarray(c), s=s_inv, axes=ax, norm=norm)
        want_back = np.fft.irfftn(c.astype(np.complex128), s=s_inv, axes=ax, norm=norm)
        assert back.dtype == expected_dtype(c, True)
        close(back, want_back, single)


@pytest.mark.parametrize("n_last", [8, 9])  # even and odd output lengths of the complex-to-real plan
def test_rfft2_irfft2_are_one_rank2_plan(calls, monkeypatch, n_last):
    x = rand((3, 10, n_last), np.float32)
    got = loom.fft.rfft2(loom.asarray(x))
    close(got, np.fft.rfft2(x.astype(np.float64)), True)
    assert calls == [(2, 2, 0)]
    calls.clear()
    c = rand((3, 10, n_last // 2 + 1), np.complex128, seed=2)
    got = loom.fft.irfft2(loom.asarray(c), s=(10, n_last))
    close(got, np.fft.irfft2(c, s=(10, n_last)), False)
    assert calls == [(4, 2, n_last)]  # C2R on the private copy it may overwrite
    # the A/B switch: the old route, one axis per call, same results
    monkeypatch.setenv("LOOM_FFT_REAL_ND", "0")
    calls.clear()
    close(loom.fft.rfft2(loom.asarray(x)), np.fft.rfft2(x.astype(np.float64)), True)
    assert [k[:2] for k in calls] == [(2, 1), (0, 1)]
    calls.clear()
    close(loom.fft.irfft2(loom.asarray(c), s=(10, n_last)), np.fft.irfft2(c, s=(10, n_last)), False)
    assert [k[:2] for k in calls] == [(1, 1), (4, 1)]


def test_irfft2_leaves_its_input_alone(calls):
    c = rand((6, 5), np.complex64)
    a = loom.asarray(c)
    loom.fft.irfft2(a).get()
    np.testing.assert_array_equal(a.get(), c)


@pytest.mark.parametrize("fused", ["1", "0"])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64, np.complex128, np.int32])
def test_padded_transforms(calls, monkeypatch, fused, dtype):
    monkeypatch.setenv("LOOM_FFT_FUSED_PAD", fused)
    x = rand((5, 7), dtype) if dtype != np.int32 else np.arange(35, dtype=np.int32).reshape(5, 7) - 17
    single = dtype in (np.float32, np.complex64)
    for s, axes in [((8, 9), (0, 1)), ((5, 16), (0, 1)), ((3, 10), (0, 1)), ((11,), (0,)), ((6, 6, 4), (0, 1, 0))]:
        got = loom.fft.fftn(loom.asarray(x), s=s, axes=axes)
        close(got, np.fft.fftn(x.astype(np.complex128), s=s, axes=axes), single)
        got = loom.fft.ifft2(loom.asarray(x), s=s[:2] if len(s) >= 2 else None) if len(s) >= 2 else None
        if got is not None:
            close(got, np.fft.ifft2(x.astype(np.complex128), s=s[:2]), single)
    close(loom.fft.fft(loom.asarray(x), n=12, axis=0), np.fft.fft(x.astype(np.complex128), n=12, axis=0), single)
    if dtype != np.int32 and np.dtype(dtype).kind == "f":
        close(loom.fft.rfft(loom.asarray(x), n=20), np.fft.rfft(x.astype(np.float64), n=20), single)


def test_padding_a_non_contiguous_view(calls):
    x = rand((9, 12), np.float32)
    v = loom.asarray(x)[::-2, 1::3]  # negative and non-unit strides
    close(loom.fft.fft2(v, s=(8, 7)), np.fft.fft2(x[::-2, 1::3].astype(np.float64), s=(8, 7)), True)
    close(loom.fft.rfft2(v, s=(8, 7)), np.fft.rfft2(x[::-2, 1::3].astype(np.float64), s=(8, 7)), True)


def test_padding_an_empty_axis(calls):
    x = np.zeros((3, 0), np.complex64)
    close(loom.fft.fft(loom.asarray(x), n=4), np.fft.fft(x, n=4), True)


def test_padding_keeps_nan_and_inf_where_they_are(calls):
    x = np.array([[1.0, np.nan], [np.inf, 2.0]], np.float64)
    got = loom.fft.fft2(loom.asarray(x), s=(2, 3)).get()
    want = np.fft.fft2(x, s=(2, 3))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def test_fft_convolution_example(calls):
    """The seeds' FFT convolution: ifft2(fft2(in1, s) * fft2(flipud(fliplr(in2)), s)).real, in float32,
    against a direct correlation in float64."""
    r = np.random.default_rng(5)
    in1 = r.standard_normal((40, 33)).astype(np.float32)
    in2 = r.standard_normal((7, 6)).astype(np.float32)
    s = (in1.shape[0] + in2.shape[0] - 1, in1.shape[1] + in2.shape[1] - 1)
    a, b = loom.asarray(in1), loom.asarray(in2)
    got = loom.fft.ifft2(loom.fft.fft2(a, s=s) * loom.fft.fft2(loom.flipud(loom.fliplr(b)), s=s)).real
    want = np.zeros(s)
    k = in2[::-1, ::-1].astype(np.float64)
    for i in range(k.shape[0]):
        for j in range(k.shape[1]):
            want[i:i + in1.shape[0], j:j + in1.shape[1]] += k[i, j] * in1
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.get(), want, rtol=0, atol=2e-4 * np.max(np.abs(want)))
    # two real-to-complex transforms and one complex-to-real of the product of the half spectra
    # (fft.py's "Real inputs"); LOOM_FFT_REAL_SPECTRUM=0: three complex ones, the same values
    assert [c[:2] for c in calls] == [(2, 2), (2, 2), (4, 2)]


def test_padded_input_is_copied_once(calls):
    """The pads of both axes and the float32 -> complex64 cast are one kernel (the library's input copy);
    the concatenate route (LOOM_FFT_FUSED_PAD=0) needs a new array per axis."""
    x = loom.asarray(rand((30, 20), np.float32))
    loom.eval(x)

    def kernels(fn):
        before = loom.stats()["kernels_launched"]
        fn()
        return loom.stats()["kernels_launched"] - before

    run = lambda: loom.fft.fft2(x, s=(37, 29), norm="forward").get()  # noqa: E731 (forward: no scaling kernel)
    run()
    fused = kernels(run)
    import os
    os.environ["LOOM_FFT_FUSED_PAD"] = "0"
    try:
        run()
        concatenated = kernels(run)
    finally:
        del os.environ["LOOM_FFT_FUSED_PAD"]
    assert fused < concatenated


@pytest.mark.parametrize("s,axes", [(None, (1, 1)), ((6, 5, 4), (0, 1, 0)), ((3, 8, 7), (1, 0, 1))])
def test_repeated_axes_pad_per_pass(calls, s, axes):
    """An axis transformed twice: each pass pads or crops its own input, in NumPy's order."""
    x = rand((5, 6), np.float64)
    close(loom.fft.rfftn(loom.asarray(x), s=s, axes=axes), np.fft.rfftn(x, s=s, axes=axes), False)
    close(loom.fft.fftn(loom.asarray(x), s=s, axes=axes), np.fft.fftn(x, s=s, axes=axes), False)
    c = rand((5, 6), np.complex128, seed=3)
    close(loom.fft.ifftn(loom.asarray(c), s=s, axes=axes), np.fft.ifftn(c, s=s, axes=axes), False)
    if s is not None:
        close(loom.fft.irfftn(loom.asarray(c), s=s, axes=axes), np.fft.irfftn(c, s=s, axes=axes), False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,s,axes", REAL_CASES + [((1, 1), None, None), ((2, 1, 3), None, (0, 1))])
def test_real_input_full_spectrum(calls, shape, s, axes, dtype):
    """fftn of a REAL input on the device path: a real-to-complex transform of the half spectrum and the
    Hermitian fill, one gather from the flattened half at conj-mirrored positions on every transformed axis
    (batch axes kept), checked against NumPy's full complex transform, the fill alone and after a reader."""
    x = rand(shape, dtype)
    single = dtype == np.float32
    got = loom.fft.fftn(loom.asarray(x), s=s, axes=axes)
    want = np.fft.fftn(x.astype(np.float64), s=s, axes=axes)
    assert got.dtype == expected_dtype(x, False)
    close(got, want, single)
    close(loom.fft.fftn(loom.asarray(x), s=s, axes=axes) * 2 + 1, want * 2 + 1, single)
    # a non-contiguous real input (its half spectrum is laid out afresh by the library call)
    xt = np.ascontiguousarray(np.swapaxes(x, 0, -1))
    got_t = loom.fft.fftn(loom.swapaxes(loom.asarray(xt), 0, -1), s=s, axes=axes)
    close(got_t, want, single)


def test_real_input_fill_is_one_kernel():
    """The Hermitian fill of a 2-d real transform is ONE fused kernel (no full-size temporary between
    per-axis gathers); counted on the kernel IR, which needs no GPU."""
    half = loom.asarray(rand((64, 33), np.complex64))
    full = loom.fft._hermitian_fill(half, (0, 1), (64, 64))
    text = loom.inspect(full, what="kernels")["kernels"]
    assert text.count("kernel ") == 1, text
    assert "temp " not in text, text
    got = full.get()
    h = half.get()  # random, not a real signal's half: the fill's definition is the reference
    k0, k1 = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    ref = np.where(k1 < 33, h[k0, np.minimum(k1, 32)], np.conj(h[(-k0) % 64, (-k1) % 64 % 33]))
    np.testing.assert_array_equal(got, ref.astype(np.complex64))
