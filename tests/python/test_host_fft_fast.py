"""The fast host FFTs of _host_fft.py (threaded batches, the four-step split of long 1-D transforms, real
transforms through a complex one of half the length) against numpy.fft computed in complex128 / float64:
power-of-two and other long lengths, a prime length (numpy's own path), n cropping and padding, every
norm, both directions, the 1-d / 2-d / n-d entry points, batches along each axis, the four input dtypes,
empty, one-element and non-contiguous inputs, NaN propagation and the errors NumPy raises.
"""
import math
from typing import Any

import numpy as np
import pytest

import loom
from loom import _host_fft

RNG = np.random.default_rng(11)
NORMS = [None, "backward", "ortho", "forward"]


@pytest.fixture(autouse=True)
def two_threads():
    """At least 2 host threads, so the threaded paths run even on a 1-core machine."""
    old = loom.config.num_threads
    loom.config.num_threads = max(2, old)
    yield
    loom.config.num_threads = old


def crand(*shape, dtype: Any = np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def rrand(*shape, dtype: Any = np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def wide(x):
    """x in the precision of the reference: complex128 (complex) or float64 (real)."""
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def close(got, want, dtype, n):
    """got has dtype and agrees with want to within an FFT's rounding of n points."""
    got = got.get() if isinstance(got, loom.ndarray) else got
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.size == 0:
        return
    eps = float(np.finfo(np.dtype(dtype)).eps)
    scale = max(float(np.max(np.abs(want))), 1e-300)
    bound = 8 * eps * max(1.0, math.log2(max(n, 2))) * scale
    err = float(np.max(np.abs(got - want)))
    assert err <= bound, (err, bound)


def via_loom(name, x, *args):
    return getattr(loom.fft, name)(loom.asarray(x), *args).get()


@pytest.mark.parametrize("n", [1 << 20, 3 << 18])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_long_complex(name, n):
    assert _host_fft._factors(n) is not None  # the four-step route
    x = crand(n, dtype=np.complex64)
    close(via_loom(name, x), getattr(np.fft, name)(wide(x)), np.complex64, n)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft"])
def test_long_norms_float64(name, norm):
    n = 1 << 19
    x = rrand(n) if name == "rfft" else crand(n // 2 + 1 if name == "irfft" else n)
    want = getattr(np.fft, name)(x, None, -1, norm)
    close(via_loom(name, x, None, -1, norm), want, want.dtype, n)


def test_prime_length_falls_back():
    n = 1000003
    assert _host_fft._factors(n) is None
    x = crand(n, dtype=np.complex64)
    close(via_loom("fft", x), np.fft.fft(wide(x)), np.complex64, n)


@pytest.mark.parametrize("m", [(1 << 20) - 5, (1 << 20) + 100])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft"])
def test_n_pads_and_crops(name, m):
    n = 1 << 20
    x = rrand(m, dtype=np.float32) if name == "rfft" else crand(m, dtype=np.complex64)
    close(via_loom(name, x, n), getattr(np.fft, name)(wide(x), n), np.complex64, n)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_long_fft_of_each_dtype(dtype):
    n = 1 << 18
    x = crand(n, dtype=dtype) if np.dtype(dtype).kind == "c" else rrand(n, dtype=dtype)
    want = np.fft.fft(wide(x))
    single = dtype in (np.float32, np.complex64)
    close(via_loom("fft", x), want, np.complex64 if single else np.complex128, n)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_rfft_irfft(dtype):
    n = 1 << 20
    x = rrand(n, dtype=dtype)
    cdt = np.complex64 if dtype == np.float32 else np.complex128
    close(via_loom("rfft", x), np.fft.rfft(wide(x)), cdt, n)
    spec = crand(n // 2 + 1, dtype=cdt)  # imaginary parts at 0 and n/2: ignored, as numpy does
    close(via_loom("irfft", spec), np.fft.irfft(wide(spec)), dtype, n)
    for out_n in (n - 2, n + 6, n + 1):  # crop, pad, odd (numpy's own path)
        close(via_loom("irfft", spec, out_n), np.fft.irfft(wide(spec), out_n), dtype, out_n)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft"])
def test_batched_along_each_axis(name, axis):
    shape = [8, 64, 256]
    x = rrand(*shape, dtype=np.float32) if name == "rfft" else crand(*shape, dtype=np.complex64)
    want = getattr(np.fft, name)(wide(x), None, axis)
    close(via_loom(name, x, None, axis), want, np.float32 if name == "irfft" else np.complex64, shape[axis])


@pytest.mark.parametrize("axis", [0, 1])
def test_long_rows_by_four_step(axis):
    """A batch of long rows: each row by the four-step, along the last axis or a strided one."""
    loom.config.num_threads = 3  # a thread count that does not divide the work evenly
    shape = [3, 1 << 18] if axis == 1 else [1 << 18, 3]
    x = crand(*shape, dtype=np.complex128)
    close(via_loom("fft", x, None, axis), np.fft.fft(x, None, axis), np.complex128, 1 << 18)
    r = rrand(*shape, dtype=np.float32)
    close(via_loom("rfft", r, None, axis, "ortho"), np.fft.rfft(wide(r), None, axis, "ortho"),
          np.complex64, 1 << 18)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn"])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_many_axes(name, norm):
    x = rrand(256, 512, dtype=np.float32) if name.startswith("r") else crand(256, 512, dtype=np.complex64)
    close(via_loom(name, x, None, (-2, -1), norm), getattr(np.fft, name)(wide(x), None, (-2, -1), norm),
          np.complex64, 256 * 512)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_complex_transforms_of_real_inputs(dtype, norm):
    """fft / fft2 / fftn of a real input: its real transform and the mirrored half."""
    cdt = np.complex64 if dtype == np.float32 else np.complex128
    r = rrand(1 << 19, dtype=dtype)
    for n in (None, (1 << 19) + 6, (1 << 19) - 3):
        close(via_loom("fft", r, n, -1, norm), np.fft.fft(wide(r), n, -1, norm), cdt, 1 << 19)
    m = rrand(6, 96, 130, dtype=dtype)
    for s, axes in [(None, (-2, -1)), ((100, 129), (1, 2)), ((5, 96, 130), (0, 1, 2)), ((131, 7), (2, 0)),
                    (None, (0,)), (None, (1,))]:
        close(via_loom("fftn", m, s, axes, norm), np.fft.fftn(wide(m), s, axes, norm), cdt, m.size)
    close(via_loom("fft2", m[1], None, (-2, -1), norm), np.fft.fft2(wide(m[1]), None, (-2, -1), norm), cdt,
          m[1].size)
    close(via_loom("fft", m, None, 1, norm), np.fft.fft(wide(m), None, 1, norm), cdt, 96)


@pytest.mark.parametrize("name", ["irfft2", "irfftn"])
def test_many_axes_inverse_real(name):
    x = crand(128, 513, dtype=np.complex128)
    close(via_loom(name, x, None, (0, 1)), getattr(np.fft, name)(x, None, (0, 1)), np.float64, 128 * 1024)
    close(via_loom(name, x, (100, 1000), (0, 1)), getattr(np.fft, name)(x, (100, 1000), (0, 1)),
          np.float64, 100 * 1000)


def test_many_axes_3d_with_s_and_axis_order():
    x = crand(16, 32, 256, dtype=np.complex64)
    for s, axes in [((20, 32), (0, 2)), ((16, 30, 300), (2, 0, 1)), (None, (1, -1))]:
        close(via_loom("fftn", x, s, axes), np.fft.fftn(wide(x), s, axes), np.complex64, 16 * 32 * 256)
    r = rrand(16, 32, 256)
    close(via_loom("rfftn", r, (16, 40, 256), (0, 1, 2)), np.fft.rfftn(r, (16, 40, 256), (0, 1, 2)),
          np.complex128, 16 * 40 * 256)


def test_non_contiguous_inputs():
    x = crand(512, 1024, dtype=np.complex64)
    for view in (x[::2], x[:, ::3], x.T, x[10:300, 5:900]):
        close(via_loom("fft", view), np.fft.fft(wide(view)), np.complex64, view.shape[-1])
        close(via_loom("fft2", view), np.fft.fft2(wide(view)), np.complex64, view.size)
    long = crand(1 << 21, dtype=np.complex64)[::2]  # a strided long 1-D input
    close(via_loom("fft", long), np.fft.fft(wide(long)), np.complex64, long.size)


def test_empty_and_single_element():
    for x in (np.zeros((0, 1 << 17), np.complex64), np.ones(1, np.float32), np.ones((1, 1), np.complex128)):
        for name in ("fft", "ifft") if x.size == 0 or x.ndim < 2 else ("fft", "ifft", "fft2"):
            want = getattr(np.fft, name)(x)
            close(via_loom(name, x), want, want.dtype, 1)


def test_nan_and_inf_propagate():
    n = 1 << 20
    x = crand(n, dtype=np.complex64)
    x[12345] = np.nan
    got = via_loom("fft", x)
    assert np.isnan(got).all() and np.isnan(np.fft.fft(x)).all()
    r = rrand(n, dtype=np.float32)
    r[7] = np.inf
    got = via_loom("rfft", r)
    assert not np.isfinite(got).any() and not np.isfinite(np.fft.rfft(r)).any()


def test_direct_transform_matches_numpy_exactly_in_shape_and_dtype():
    x = crand(64, 4096, dtype=np.complex64)
    for name, args in [("fft", (None, 0)), ("ifft", (5000, 1, "ortho")), ("fft2", ((32, 4000), (1, 0))),
                       ("irfft", (None, 0)), ("rfft", ())]:
        arg = x.real.copy() if name == "rfft" else x
        got, want = _host_fft.transform(name, arg, *args), getattr(np.fft, name)(arg, *args)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.allclose(got, want, rtol=1e-4, atol=1e-3 * float(np.max(np.abs(want))))


def test_errors_as_numpy():
    x = crand(1 << 18, dtype=np.complex64)
    for name, args in [("fft", (0,)), ("fft", (None, 1)), ("ifft", (None, -1, "bad")), ("fft2", ((0, 4), (0, 1))),
                       ("rfft", ())]:
        with pytest.raises(Exception) as want:
            getattr(np.fft, name)(x.reshape(512, 512) if name == "fft2" else x, *args)
        with pytest.raises(type(want.value)):
            via_loom(name, x.reshape(512, 512) if name == "fft2" else x, *args)


def test_one_thread_gives_the_same():
    x = crand(1 << 20, dtype=np.complex64)
    two = via_loom("fft", x)
    loom.config.num_threads = 1
    close(via_loom("fft", x), two.astype(np.complex128), np.complex64, 1 << 20)


def test_concurrent_callers_and_bounded_caches():
    """Calls from several Python threads at once (they share the pool, the twiddles and the work buffers)."""
    from concurrent.futures import ThreadPoolExecutor
    xs = [crand(1 << 20, dtype=np.complex64) for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda x: via_loom("fft", x), xs))
    for g, x in zip(got, xs):
        close(g, np.fft.fft(wide(x)), np.complex64, 1 << 20)
    assert sum(t.nbytes for t in _host_fft._twiddle_cache.values()) <= _host_fft._TWIDDLE_CACHE_BYTES
    assert sum(b.nbytes for b in _host_fft._scratch.values()) <= _host_fft._SCRATCH_BYTES
