"""bfloat16 (ml_dtypes.bfloat16) against ml_dtypes + NumPy: casts from and to every dtype bit for bit,
ufuncs (computed in float32, rounded once), promotion (ml_dtypes' lattice, which is also JAX's and
PyTorch's), NEP 50 scalars, reductions, views, DLPack and NumPy conversion.

Where ml_dtypes' own answer changed between its versions, the expectation is written here rather than
asked of the installed ml_dtypes: casts to bfloat16 are checked against an exact round-to-nearest-even
computed in this file (ml_dtypes 0.6 rounds int and float64 sources twice, through float32), promotion
against the table PROMOTION (0.6 has no bfloat16 + float16 / int16 rule and makes bfloat16 * Python int
float32, against NEP 50). The sign of a NaN is not compared (IEEE 754 does not interpret it; GPUs
return their canonical NaN from conversions).

Known differences (README, semantics notes): loom accumulates bfloat16 sums in float32 (NumPy with
ml_dtypes adds in bfloat16, rounding at every step), so loom's sums are the more accurate; float to
integer casts saturate (NumPy's are undefined outside the range). Every bfloat16 result is rounded, also
inside one fused kernel (as each ml_dtypes ufunc rounds its own), so a result never depends on where the
lazy graph is cut into kernels (test_split_invariance).
"""
import bisect
import math
import warnings

import numpy as np
import pytest

import loom
from conftest import ON_GPU, check

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
       "float64", "complex64", "complex128"]


def bits(a):
    return np.asarray(a).view(np.uint16)


def _bf16_value(b):
    """The float value of bfloat16 bits b (exact: the high half of a float32)."""
    return float(np.array([b << 16], np.uint32).view(np.float32)[0])


_POS = [_bf16_value(b) for b in range(0x7F81)]  # +0 ... the largest finite, then +inf: increasing


def bf16_round(v):
    """bfloat16 bits of v (a Python int or float, exact) rounded once to nearest, ties to even; None for NaN."""
    if v != v:
        return None
    sign = 0x8000 if (v < 0 or (v == 0 and math.copysign(1.0, v) < 0)) else 0
    a = -v if v < 0 else v
    i = bisect.bisect_right(_POS, a) - 1  # _POS[i] <= a < _POS[i + 1] (Python compares int and float exactly)
    if i >= 0x7F80:
        return sign | 0x7F80
    lo = _POS[i]
    if a == lo:
        return sign | i
    mid = lo + (_POS[i + 1] - lo) / 2 if i < 0x7F7F else lo + 2.0 ** 119  # exact: 9 significant bits
    up = a > mid or (a == mid and i % 2 == 1)
    return sign | (i + 1 if up else i)


def want_bf16_bits(x):
    """The exact reference of x.astype(bfloat16): bits, and a mask of the NaNs."""
    vals = x.real if x.dtype.kind == "c" else x
    out = [bf16_round(int(v) if vals.dtype.kind in "biu" else float(v)) for v in vals.ravel()]
    nan = np.array([o is None for o in out], bool)
    return np.array([0 if o is None else o for o in out], np.uint16), nan


# bfloat16 with each dtype: ml_dtypes' lattice (as ml_dtypes >= 0.7, JAX and loom promote)
PROMOTION = {"bool": "bfloat16", "int8": "bfloat16", "uint8": "bfloat16", "int16": "float32", "uint16": "float32",
             "int32": "float64", "uint32": "float64", "int64": "float64", "uint64": "float64",
             "float16": "float32", "float32": "float32", "float64": "float64", "bfloat16": "bfloat16",
             "complex64": "complex64", "complex128": "complex128"}


def result_type(a, b):
    """np.result_type for two dtype names, bfloat16 by PROMOTION."""
    if "bfloat16" in (a, b):
        r = PROMOTION[b if a == "bfloat16" else a]
        return BF16 if r == "bfloat16" else np.dtype(r)
    return np.result_type(np.dtype(a), np.dtype(b))


def sample_values(dtype, n=4000, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([True, False] * 4)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        extra = [0, 1, info.max, info.min, 255, 256, 257]
        if dt.itemsize >= 4:
            extra += [2 ** 31 + 2 ** 23 + 1 if dt.kind == "u" or dt.itemsize == 8 else 2 ** 30 + 2 ** 22 + 1]
        if dt.itemsize == 8:
            extra += [2 ** 62 + 2 ** 54 + 1, 2 ** 62 + 2 ** 54]
        return np.concatenate([x, np.array([v for v in extra if info.min <= v <= info.max], dtype=dt)])
    v = rng.standard_normal(n) * 10.0 ** rng.uniform(-45, 45, n)
    v = np.concatenate([v, [0.0, -0.0, np.inf, -np.inf, np.nan, 3.3895e38, 3.3962e38, 1 + 2 ** -8 + 2 ** -30,
                            1 + 2 ** -8, 65504.0, 1e-40, 9.2e-41]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = v.astype(dt)
        if dt.kind == "c":
            x = x + 1j * v[::-1].astype(dt)
    return x


@pytest.mark.parametrize("src", ALL)
def test_cast_to_bfloat16(src):
    x = sample_values(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = loom.asarray(x).astype(BF16).get()
    assert got.dtype == BF16
    want, nan = want_bf16_bits(x)
    g = bits(got).ravel()
    np.testing.assert_array_equal(g[~nan], want[~nan])
    assert np.all((g[nan] & 0x7F80) == 0x7F80) and np.all(g[nan] & 0x7F)  # NaN, any sign and payload


@pytest.mark.parametrize("dst", ["bool", "float16", "float32", "float64", "complex64", "complex128", "int8",
                                 "int16", "int32", "int64", "uint8", "uint64"])
def test_cast_from_bfloat16(dst):
    # every bit pattern; integer targets only for values in their range (NumPy is undefined outside)
    x = np.arange(65536, dtype=np.uint16).view(BF16)
    if np.dtype(dst).kind in "iu":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ml_dtypes warns on its NaN patterns
            f = x.astype(np.float64)
        bits_ = np.iinfo(dst).bits
        lo, hi = (-2.0 ** (bits_ - 1), 2.0 ** (bits_ - 1)) if np.dtype(dst).kind == "i" else (0.0, 2.0 ** bits_)
        x = x[np.isfinite(f) & (f >= lo) & (f < hi)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = x.astype(dst)
    got = loom.asarray(x).astype(dst).get()
    assert got.dtype == want.dtype
    if want.dtype.kind in "fc":
        np.testing.assert_array_equal(got, want)  # NaN == NaN
        num = ~np.isnan(want.real)  # the sign of zeros and infinities; a NaN's is not interpreted
        assert np.array_equal(np.signbit(got.real[num]), np.signbit(want.real[num]))
    else:
        np.testing.assert_array_equal(got, want)


def test_saturating_integer_casts():
    x = np.array([300, -300, 1e10, np.nan, np.inf], BF16)
    check(loom.asarray(x).astype(np.int8), np.array([127, -128, 127, 0, 127], np.int8))
    check(loom.asarray(x).astype(np.uint8), np.array([255, 0, 255, 0, 255], np.uint8))


UNARY = ["negative", "absolute", "sign", "sqrt", "exp", "log", "sin", "cos", "tanh", "arctan", "floor", "ceil",
         "rint", "expm1", "log1p", "reciprocal", "square", "isnan", "isinf", "isfinite"]
EXACT = {"negative", "absolute", "sign", "sqrt", "floor", "ceil", "rint", "reciprocal", "square", "isnan", "isinf",
         "isfinite"}


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    x = sample_values("float32", 3000).astype(BF16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np, name)(x)
        got = getattr(loom, name)(loom.asarray(x)).get()
    assert got.dtype == want.dtype
    if want.dtype == BF16:
        g, w = got.astype(np.float64), want.astype(np.float64)
        if name in EXACT:
            np.testing.assert_array_equal(g, w)
        else:  # the device math library or SLEEF may round the float32 result differently: 1 bfloat16 ulp
            np.testing.assert_allclose(g, w, rtol=2 ** -7, atol=1e-38, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "fmax",
                                  "fmin", "arctan2", "hypot", "power", "copysign", "equal", "less", "greater_equal"])
def test_binary(name):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(4000) * 4).astype(BF16)
    b = (rng.standard_normal(4000) * 4).astype(BF16)
    b[::97] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np, name)(a, b)
    got = getattr(loom, name)(loom.asarray(a), loom.asarray(b)).get()
    assert got.dtype == want.dtype
    if want.dtype == BF16 and name in ("arctan2", "hypot", "power"):
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2 ** -7, equal_nan=True)
    else:
        np.testing.assert_array_equal(got.astype(np.float64) if got.dtype == BF16 else got,
                                      want.astype(np.float64) if want.dtype == BF16 else want)


PROMO = ["bool", "int8", "uint8", "int16", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64",
         "complex64", "complex128"]


@pytest.mark.parametrize("other", PROMO)
def test_promotion(other):
    x = loom.asarray(np.ones(3, BF16))
    y = loom.asarray(np.ones(3, other))
    want = result_type("bfloat16", other)
    assert (x + y).dtype == want and (y * x).dtype == want
    assert loom.where(loom.asarray([True, False, True]), x, y).dtype == want
    # the named cases: bfloat16 + float16 -> float32, + int8 -> bfloat16, + int16 -> float32
    assert (x + loom.asarray(np.ones(3, np.float16))).dtype == np.float32
    assert (x + loom.asarray(np.ones(3, np.int8))).dtype == BF16
    assert (x + loom.asarray(np.ones(3, np.int16))).dtype == np.float32


def test_result_type():
    """loom.result_type gives what loom's operators give, whatever the installed ml_dtypes says."""
    for other, want in PROMOTION.items():
        assert loom.result_type(BF16, other if other != "bfloat16" else BF16) == result_type("bfloat16", other)
        assert loom.result_type(loom.zeros(2, BF16), other) == result_type("bfloat16", other)
    assert loom.result_type(BF16, 1) == BF16 and loom.result_type(BF16, 2.5) == BF16
    assert loom.result_type(BF16, 1j) == np.complex64 and loom.result_type(np.int8, np.uint8) == np.int16


def test_scalars():
    x = np.array([1.5, -2.25, 3.0], BF16)
    a = loom.asarray(x)
    for s in (2, 2.5, True, -1):
        # NEP 50: a Python scalar keeps the array's dtype; the float32 product rounded once
        got = a * s
        assert got.dtype == BF16
        wbits = x.view(np.uint16).astype(np.uint32) << 16
        want = wbits.view(np.float32).astype(np.float64) * float(s)
        np.testing.assert_array_equal(bits(got.get()), [bf16_round(float(v)) for v in want])
    assert (a * 1j).dtype == np.complex64 and (a * 1j).dtype == (x * 1j).dtype
    assert (a + np.float32(1)).dtype == np.float32  # a strong NumPy scalar
    assert (a + ml_dtypes.bfloat16(1)).dtype == BF16
    check(a + ml_dtypes.bfloat16(1), x + ml_dtypes.bfloat16(1))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions(axis):
    rng = np.random.default_rng(2)
    x = rng.uniform(-2, 2, (200, 33)).astype(BF16)
    a = loom.asarray(x)
    exact64 = x.astype(np.float64)
    for name in ("sum", "mean"):
        got = getattr(loom, name)(a, axis=axis).get()
        assert got.dtype == getattr(np, name)(x, axis=axis).dtype == BF16
        want = getattr(np, name)(exact64, axis=axis)  # float32 accumulation: within a bfloat16 rounding
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=2 ** -8, atol=np.abs(exact64).sum() * 1e-6)
    for name in ("max", "min", "argmax", "argmin", "any", "all"):
        check(getattr(loom, name)(a, axis=axis).get().astype(np.float64) if name in ("max", "min") else
              getattr(loom, name)(a, axis=axis),
              getattr(np, name)(x, axis=axis).astype(np.float64) if name in ("max", "min") else
              getattr(np, name)(x, axis=axis))


def test_numpy_conversion_views_and_dlpack():
    x = np.array([[1, 2.5, -3], [np.nan, np.inf, 1e-39]], BF16)
    a = loom.asarray(x)
    assert a.dtype == BF16 and a.itemsize == 2 and a.nbytes == 12
    np.testing.assert_array_equal(bits(a.get()), bits(x))
    np.testing.assert_array_equal(bits(a.T.get()), bits(x.T))
    np.testing.assert_array_equal(bits(a[:, ::-2].get()), bits(x[:, ::-2]))
    np.testing.assert_array_equal(a.view(np.uint16).get(), x.view(np.uint16))
    assert a.__dlpack_device__() == ((2, 0) if ON_GPU else (1, 0))  # kDLCUDA / kDLCPU
    np.testing.assert_array_equal(bits(loom.from_dlpack(a).get()), bits(x))  # kDLBfloat, both ways
    assert repr(a) == repr(x) and str(a) == str(x)
    assert float(a[0, 1]) == 2.5 and a.tolist()[0] == x.tolist()[0]
    assert loom.bfloat16 is ml_dtypes.bfloat16
    check(loom.zeros(3, loom.bfloat16).astype(np.float32), np.zeros(3, np.float32))
    check(loom.arange(4).astype("bfloat16").astype(np.float32), np.arange(4).astype(BF16).astype(np.float32))


@pytest.mark.host_conversion
def test_numpy_conversion_through_array():
    x = np.array([[1, 2.5, -3], [np.nan, np.inf, 1e-39]], BF16)
    a = loom.asarray(x)
    np.testing.assert_array_equal(bits(np.asarray(a)), bits(x))  # through __array__
    assert np.asarray(a).dtype == BF16
    with pytest.raises(BufferError):
        memoryview(a)  # no buffer-protocol format names bfloat16


def test_fused_expression():
    x = np.linspace(-3, 3, 101).astype(BF16)
    a = loom.asarray(x)
    got = (a * 1.5 + 1).get()
    want = x * ml_dtypes.bfloat16(1.5) + ml_dtypes.bfloat16(1)  # ml_dtypes rounds each ufunc's result
    assert want.dtype == BF16
    np.testing.assert_array_equal(bits(got), bits(want))


def _split_cases(xp, a, b, dt):
    """Expressions of two float16/bfloat16 arrays (loom or NumPy with ml_dtypes: each NumPy ufunc rounds)."""
    half = dt.type(1.5)
    c = dt.type(3)
    return [a * half + dt.type(1),
            xp.exp(a) * a - xp.sqrt(xp.abs(b)) / c,
            (a + b) * (a - b) + xp.maximum(a, b),
            (a.astype(np.float32) * np.float32(3.3)).astype(dt) + a,
            xp.where(a > b, a * b, a / b) - dt.type(0.1)]


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_split_invariance(name):
    """A float16 / bfloat16 expression gives the same bits however the lazy graph is cut into kernels:
    fused whole, evaluated op by op (eager), and split at every node by graph bounds 1..12 with pending
    arrays of earlier work in the graph (as a test suite leaves them). Each equals NumPy's op-by-op
    result (ml_dtypes and NumPy's float16 loops round every ufunc's result)."""
    dt = BF16 if name == "bfloat16" else np.dtype(np.float16)
    rng = np.random.default_rng(7)
    ha, hb = rng.uniform(-3, 3, 257).astype(dt), rng.uniform(0.5, 4, 257).astype(dt)
    with np.errstate(all="ignore"):
        want = [np.asarray(w) for w in _split_cases(np, ha, hb, dt)]
    old_bound = loom.config.graph_bound
    runs = [("fused", None, False), ("eager", None, True)] + [(f"bound {n}", n, False) for n in range(1, 13)]
    try:
        for label, bound, eager in runs:
            loom.config.eager = eager
            if bound is not None:
                loom.config.graph_bound = bound
            pending = [loom.asarray(np.ones(3)) + i for i in range(bound or 0)]  # earlier work, still pending
            got = [g.get() for g in _split_cases(loom, loom.asarray(ha), loom.asarray(hb), dt)]
            for i, (g, w) in enumerate(zip(got, want)):
                assert g.dtype == dt, (label, i)
                np.testing.assert_array_equal(bits(g), bits(w), err_msg=f"{name} case {i}, {label}")
            del pending
    finally:
        loom.config.eager = False
        loom.config.graph_bound = old_bound


ALL15 = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
         "float64", "bfloat16", "complex64", "complex128"]


def test_promotion_all_pairs():
    """Every pair of loom's 15 dtypes against np.result_type (bfloat16: PROMOTION), and the Python scalars
    (NEP 50; bfloat16 stays bfloat16 but for a complex scalar: complex64)."""
    dt = {n: (BF16 if n == "bfloat16" else np.dtype(n)) for n in ALL15}
    arrays = {n: loom.asarray(np.ones(2, dt[n])) for n in ALL15}
    for a in ALL15:
        for b in ALL15:
            assert (arrays[a] + arrays[b]).dtype == result_type(a, b), (a, b)
        for s in (True, 1, 1.0, 1j):
            if a == "bfloat16":
                want = np.dtype(np.complex64) if isinstance(s, complex) else BF16
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    want = (np.ones(2, dt[a]) + s).dtype
            assert (arrays[a] + s).dtype == want, (a, s)
