"""loom.random: the counter-based stream against a Philox4x32-10 written here (checked first against the
algorithm's published known-answer vectors), the distributions against their exact CDFs
(Kolmogorov-Smirnov), the API shapes of NumPy's Generator and CuPy's legacy functions, and fusion (a
dropout is one kernel). GPU: the same stream bit for bit (skipped without a GPU)."""
import math

import numpy
import pytest

import loom
import loom.random as lr

@pytest.fixture(autouse=True)
def _fresh_graph():
    """Each test leaves no pending graph behind (see test_array_api.py)."""
    yield
    loom._core.flush()


M32 = 0xFFFFFFFF


def philox(ctr, key):
    """Philox4x32-10 of four 32-bit counter words and two key words (Salmon et al., SC'11)."""
    c, k0, k1 = list(ctr), key[0], key[1]
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c[3] ^ k1) & M32, p0 & M32]
    return c


def test_reference_known_answers():
    # Random123's kat_vectors for philox4x32_10: counter, key, expected output
    assert philox([0, 0, 0, 0], [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox([M32] * 4, [M32, M32]) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
    assert philox([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0]) == \
        [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


def ref_bits(key, counter, hi=False):
    o = philox([counter & M32, counter >> 32, 0, 0], [key & M32, key >> 32])
    return (o[2] | o[3] << 32) if hi else (o[0] | o[1] << 32)


def test_random_matches_reference_bit_for_bit():
    g = lr.default_rng(12345)
    key = g.bit_generator.state["key"]
    g.bit_generator.advance(2**32 - 3)  # the counter crosses a 32-bit word boundary
    x = g.random((2, 3)).get()
    want = [(ref_bits(key, 2**32 - 3 + i) >> 11) * 2.0**-53 for i in range(6)]
    assert x.ravel().tolist() == want
    f = g.random(5, dtype=numpy.float32).get()
    want32 = [numpy.float32((ref_bits(key, 2**32 + 3 + i) >> 40) * 2.0**-24) for i in range(5)]
    assert f.tolist() == want32
    assert g.bit_generator.state["counter"] == 2**32 + 8


def test_standard_normal_matches_box_muller_reference():
    g = lr.default_rng(7)
    key = g.bit_generator.state["key"]
    z = g.standard_normal(4).get()
    for i in range(4):
        u1 = 1.0 - (ref_bits(key, i) >> 11) * 2.0**-53
        u2 = (ref_bits(key, i, True) >> 11) * 2.0**-53
        want = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
        assert z[i] == pytest.approx(want, rel=1e-14, abs=1e-15)


def test_integers_multiply_shift_reference():
    g = lr.default_rng(99)
    key = g.bit_generator.state["key"]
    x = g.integers(-5, 1000003, size=7).get()
    assert x.dtype == numpy.int64
    assert x.tolist() == [-5 + (ref_bits(key, i) * 1000008 >> 64) for i in range(7)]
    full = g.integers(0, 2**64, size=3, dtype=numpy.uint64).get()
    assert full.tolist() == [ref_bits(key, 7 + i) for i in range(3)]


def ks_statistic(sample, cdf):
    s = numpy.sort(numpy.asarray(sample, dtype=numpy.float64))
    n = s.size
    c = cdf(s)
    return max(numpy.max(numpy.arange(1, n + 1) / n - c), numpy.max(c - numpy.arange(n) / n))


N = 20000
KS_LIMIT = 1.95 / math.sqrt(N)  # alpha = 0.001 for one test; the seeds are fixed, so it cannot flake
_erf = numpy.vectorize(math.erf)


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_distributions_kolmogorov_smirnov(dtype):
    g = lr.default_rng(2026)
    u = g.random(N, dtype=dtype).get()
    assert u.dtype == dtype and u.min() >= 0 and u.max() < 1
    assert ks_statistic(u, lambda s: s) < KS_LIMIT
    z = g.standard_normal(N, dtype=dtype).get()
    assert z.dtype == dtype
    assert ks_statistic(z, lambda s: 0.5 * (1 + _erf(s / math.sqrt(2)))) < KS_LIMIT
    n = g.normal(3.0, 2.0, size=N, dtype=dtype).get()
    assert ks_statistic(n, lambda s: 0.5 * (1 + _erf((s - 3.0) / (2.0 * math.sqrt(2))))) < KS_LIMIT
    e = g.exponential(0.5, size=N, dtype=dtype).get()
    assert e.min() >= 0 and ks_statistic(e, lambda s: 1 - numpy.exp(-s / 0.5)) < KS_LIMIT
    v = g.uniform(-2.0, 6.0, size=N, dtype=dtype).get()
    assert ks_statistic(v, lambda s: (s + 2.0) / 8.0) < KS_LIMIT


def test_integers_are_uniform_chi_square():
    g = lr.default_rng(5)
    x = g.integers(0, 10, size=50000).get()
    counts = numpy.bincount(x, minlength=10)
    chi2 = ((counts - 5000.0) ** 2 / 5000.0).sum()
    assert x.min() == 0 and x.max() == 9 and chi2 < 27.9  # 9 dof, p = 0.001
    b = g.integers(-3, 3, size=1000, dtype=numpy.int8, endpoint=True).get()
    assert b.dtype == numpy.int8 and b.min() == -3 and b.max() == 3


def test_streams_same_seed_same_bits_and_independent_draws():
    a, b = lr.default_rng(42), lr.default_rng(42)
    assert numpy.array_equal(a.random(100).get(), b.random(100).get())
    assert not numpy.array_equal(a.random(100).get(), a.random(100).get())
    assert not numpy.array_equal(lr.default_rng(1).random(10).get(), lr.default_rng(2).random(10).get())
    assert not numpy.array_equal(lr.default_rng(1).random(10).get(), lr.default_rng(1 + 2**64).random(10).get())
    # one draw of 6 equals two draws of 3 (the counter is the element's position in the stream)
    assert numpy.array_equal(lr.default_rng(3).random(6).get(),
                             numpy.concatenate([x.get() for x in (lambda g: (g.random(3), g.random(3)))(lr.default_rng(3))]))


def test_legacy_cupy_functions():
    lr.seed(0)
    a = lr.randn(3, 4, dtype=numpy.float32)
    assert isinstance(a, loom.ndarray) and a.shape == (3, 4) and a.dtype == numpy.float32
    lr.seed(0)
    assert numpy.array_equal(a.get(), lr.randn(3, 4, dtype=numpy.float32).get())
    assert lr.rand(5).dtype == numpy.float64 and lr.rand().shape == ()
    r = lr.randint(3, 9, size=(200,)).get()
    assert r.min() >= 3 and r.max() < 9
    assert lr.randint(4, size=10).get().max() < 4
    rs = lr.RandomState(11)
    s = rs.get_state()
    x = rs.random_sample(4).get()
    rs.set_state(s)
    assert numpy.array_equal(x, rs.random_sample(4).get())
    assert loom.random is lr


def test_permutation_choice_shuffle():
    g = lr.default_rng(8)
    p = g.permutation(50).get()
    assert sorted(p.tolist()) == list(range(50)) and p.tolist() != list(range(50))
    x = loom.arange(12).reshape(4, 3)
    px = g.permutation(x).get()
    assert sorted(px[:, 0].tolist()) == [0, 3, 6, 9] and (px[:, 1] == px[:, 0] + 1).all()
    c = g.choice(10, size=(3, 4)).get()
    assert c.shape == (3, 4) and c.min() >= 0 and c.max() < 10
    u = g.choice(20, size=20, replace=False).get()
    assert sorted(u.tolist()) == list(range(20))
    w = g.choice(numpy.array([10, 20, 30]), size=30000, p=[0.2, 0.0, 0.8]).get()
    assert set(numpy.unique(w).tolist()) == {10, 30} and abs((w == 10).mean() - 0.2) < 0.02
    y = loom.arange(10.0)
    g.shuffle(y)
    assert sorted(y.get().tolist()) == list(range(10))
    with pytest.raises(ValueError):
        g.choice(3, size=5, replace=False)
    with pytest.raises(ValueError):
        g.choice(3, p=[0.5, 0.6, 0.1])


def test_bad_input_errors():
    g = lr.default_rng(0)
    with pytest.raises(ValueError):
        g.integers(5, 5)
    with pytest.raises(ValueError):
        g.integers(0, 300, dtype=numpy.uint8)
    with pytest.raises(TypeError):
        g.random(3, dtype=numpy.int32)
    with pytest.raises(TypeError):
        lr.default_rng("seed")
    with pytest.raises(ValueError):
        lr.default_rng(-1)
    with pytest.raises(ValueError):
        g.normal(0, -1.0, size=3)


def test_empty_and_zero_d():
    g = lr.default_rng(0)
    assert g.random(0).shape == (0,) and g.standard_normal((2, 0)).shape == (2, 0)
    z = g.random()
    assert z.shape == () and 0 <= float(z) < 1


def test_dropout_is_one_kernel_writing_only_its_output():
    g = lr.default_rng(4)
    x = loom.arange(4096, dtype=numpy.float32)
    x.get()
    key, c0 = g.bit_generator.state["key"], g.bit_generator.state["counter"]
    y = loom.where(g.random(x.shape, dtype=numpy.float32) > 0.25, x / (1 - 0.25), 0).get()
    assert loom.stats()["last_eval_kernels"] == 1
    keep = numpy.array([(ref_bits(key, c0 + i) >> 40) * 2.0**-24 > 0.25 for i in range(4096)])
    want = numpy.where(keep, numpy.arange(4096, dtype=numpy.float32) / numpy.float32(0.75), 0)
    assert numpy.array_equal(y, want.astype(numpy.float32))


@pytest.mark.skipif(not loom.cuda.is_available(), reason="no CUDA device visible to loom")
def test_gpu_stream_is_the_hosts():
    for dt in (numpy.float32, numpy.float64):
        host = lr.default_rng(77).standard_normal((33, 65), dtype=dt).get()
        with loom.cuda.Device(0):
            dev = lr.default_rng(77).standard_normal((33, 65), dtype=dt)
            assert dev._on_gpu
            dev = dev.get()
        # the bits are identical; the float math (log, cos) may differ in the last ulp between libms
        assert numpy.allclose(dev, host, rtol=4e-7 if dt == numpy.float32 else 1e-15, atol=0)
    host = lr.default_rng(78).integers(0, 2**64, size=1000, dtype=numpy.uint64).get()
    with loom.cuda.Device(0):
        dev = lr.default_rng(78).integers(0, 2**64, size=1000, dtype=numpy.uint64).get()
    assert numpy.array_equal(host, dev)
    h = lr.default_rng(79).random(1000).get()
    with loom.cuda.Device(0):
        assert numpy.array_equal(lr.default_rng(79).random(1000).get(), h)
    hp = lr.default_rng(80).permutation(100).get()
    with loom.cuda.Device(0):
        assert numpy.array_equal(lr.default_rng(80).permutation(100).get(), hp)


# ---- the distributions sampled on the host (loom/_random_host.py) ------------------------------------
_HOST_CASES = [  # (name, params, exact mean, exact variance)
    ("gamma", dict(shape=3.0, scale=0.5), 1.5, 0.75),
    ("beta", dict(a=2.0, b=5.0), 2 / 7, 10 / (49 * 8)),
    ("binomial", dict(n=10, p=0.3), 3.0, 2.1),
    ("poisson", dict(lam=4.0), 4.0, 4.0),
    ("geometric", dict(p=0.25), 4.0, 12.0),
    ("laplace", dict(loc=1.0, scale=2.0), 1.0, 8.0),
    ("lognormal", dict(mean=0.0, sigma=0.5), math.exp(0.125), (math.exp(0.25) - 1) * math.exp(0.25)),
    ("chisquare", dict(df=3.0), 3.0, 6.0),
    ("triangular", dict(left=-1.0, mode=0.0, right=2.0), 1 / 3, (1 + 0 + 4 - 0 + 2 - 0) / 18),
]


@pytest.mark.parametrize("name,params,mean,var", _HOST_CASES)
def test_host_distributions_moments(name, params, mean, var):
    n = 40000
    x = getattr(lr.RandomState(7), name)(size=n, **params).get().astype(numpy.float64)
    # the sample mean within 5 standard errors of the exact mean; the variance within 10 %
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n), (x.mean(), mean)
    assert abs(x.var() - var) < 0.1 * var, (x.var(), var)


def test_host_distributions_dtype_shape_and_streams():
    rs = lr.RandomState(3)
    # CuPy's positional dtype after size (the method is added at import: loom._random_host)
    a = rs.gamma(2.0, 1.0, (4, 3), numpy.float32)  # type: ignore[attr-defined]
    assert a.shape == (4, 3) and a.dtype == numpy.float32
    b = rs.binomial(loom.asarray([5, 6]), 0.5, dtype=numpy.int8)  # type: ignore[attr-defined]  # (added at import: loom._random_host)
    assert b.shape == (2,) and b.dtype == numpy.int8 and ((b.get() >= 0) & (b.get() <= 6)).all()
    g = lr.default_rng(0)
    assert g.poisson(3.0, size=5).dtype == numpy.int64 and g.gamma(2.0, size=5).dtype == numpy.float64
    assert g.standard_gamma(2.0, size=3, dtype=numpy.float32).dtype == numpy.float32
    r1, r2 = lr.RandomState(11), lr.RandomState(11)
    x, y = r1.beta(2.0, 3.0, size=50).get(), r2.beta(2.0, 3.0, size=50).get()  # type: ignore[attr-defined]  # (added at import: loom._random_host)
    numpy.testing.assert_array_equal(x, y)  # the same seed: the same values
    # the next call: a new stream
    assert not numpy.array_equal(x, r1.beta(2.0, 3.0, size=50).get())  # type: ignore[attr-defined]
    m = lr.multivariate_normal([0.0, 1.0], [[1.0, 0.5], [0.5, 2.0]], size=3)  # type: ignore[attr-defined]  # (added at import: loom._random_host)
    assert m.shape == (3, 2) and m.dtype == numpy.float64


def test_host_distributions_threads_get_distinct_streams():
    import concurrent.futures
    rs = lr.RandomState(0)
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        outs = [o.get() for o in ex.map(lambda _: rs.standard_t(3.0, size=20), range(8))]  # type: ignore[attr-defined]  # (added at import: loom._random_host)
    for i in range(8):
        for j in range(i + 1, 8):
            assert not numpy.array_equal(outs[i], outs[j])


@pytest.mark.parametrize("call", [lambda m: m.rayleigh(-1.0, size=3), lambda m: m.beta(-1.0, 2.0, size=3),
                                  lambda m: m.poisson(-2.0, size=3), lambda m: m.binomial(3, 1.5, size=3),
                                  lambda m: m.noncentral_f(1.0, -1.0, 1.0, size=3)])
def test_host_distributions_reject_bad_parameters_as_numpy(call):
    with pytest.raises(ValueError):
        call(numpy.random.RandomState(0))
    with pytest.raises(ValueError):
        call(lr.RandomState(0))


def test_integer_float_bounds_truncate_as_numpy():
    for lo, hi in ((-0.9, 1.1), (-1.1, -0.9), (2.7, 5.2)):
        got = lr.randint(lo, hi, size=200).get()
        want = numpy.random.randint(lo, hi, size=200)  # type: ignore[call-overload]  # (float bounds: NumPy accepts them at run time)
        assert set(got) <= set(range(int(lo), int(hi))) and set(want) <= set(range(int(lo), int(hi)))
    with pytest.raises(ValueError):
        numpy.random.randint(-0.2, 0.3)  # type: ignore[call-overload]  # (float bounds: NumPy accepts them at run time)
    with pytest.raises(ValueError):
        lr.randint(-0.2, 0.3)
    with pytest.raises(ValueError):
        lr.randint(0.0, float("inf"))
