"""complex64 and complex128 against NumPy: every ufunc NumPy defines for complex on a grid of special
values (0, -0, +-1, tiny, huge, +-inf, NaN in both parts: NaN, infinities and the signs of zeros must
match) and on random values, arithmetic and comparisons on every pair of the grid, NEP 50 Python
complex scalars, promotion against np.result_type, reductions, the parts as views (a.real, a.imag),
casts (ComplexWarning), DLPack, the buffer protocol and printing.

Known deviation (tested as such): log1p of a tiny z: NumPy's log(hypot(1 + x, y)) loses the digits of
the real part (log1p(1e-300+0j) is 0 in NumPy); loom returns the accurate value.
"""
import warnings

import numpy as np
import pytest

import loom
from conftest import check

try:
    from numpy.exceptions import ComplexWarning
except ImportError:  # NumPy < 1.25
    ComplexWarning = np.ComplexWarning  # type: ignore[attr-defined,misc]  # NumPy < 1.25

CDTYPES = ["complex64", "complex128"]
PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-300, 1e300, np.inf, -np.inf, np.nan, 3.0, 710.0, -710.0]
UNARY = ["negative", "positive", "absolute", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
         "sqrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
         "arccosh", "arctanh", "rint", "square", "reciprocal", "conjugate", "isnan", "isinf", "isfinite",
         "logical_not"]
BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "fmax", "fmin", "equal",
          "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
          "logical_xor"]


def grid(dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 1e300 overflows complex64's parts: inf, as intended
        return np.array([complex(a, b) for a in PARTS for b in PARTS], dtype=dtype)


def eps(dtype):
    return np.finfo(np.float32 if np.dtype(dtype) == np.complex64 else np.float64).eps


def assert_complex_close(got, want, tol_ulps, dtype, zero_signs=True, where=""):
    """NaN, infinities and zeros (with their signs) exactly; finite parts within tol_ulps * eps of the
    magnitude |want| (the norm complex accuracy is stated in)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    e = eps(dtype)
    bad = []
    for i in range(want.size):
        g, w = got.flat[i], want.flat[i]
        ok = True
        for gp, wp in ((g.real, w.real), (g.imag, w.imag)):
            if np.isnan(wp):
                ok &= bool(np.isnan(gp))
            elif np.isinf(wp) or wp == 0:
                ok &= bool(gp == wp) and (not zero_signs or wp != 0 or np.signbit(gp) == np.signbit(wp))
        if ok and np.isfinite(w) and w != 0 and np.isfinite(g):
            mag = max(abs(float(w.real)), abs(float(w.imag)))  # within sqrt(2) of |w|, and no overflow
            d = max(abs(float(g.real) - float(w.real)), abs(float(g.imag) - float(w.imag)))
            ok = d <= 2 * tol_ulps * e * mag + (3e-45 if e > 1e-10 else 1e-320)
        if not ok:
            bad.append((i, g, w))
    assert not bad, f"{where}: {len(bad)} mismatches, e.g. {bad[:4]}"


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_special_values(name, dtype):
    x = grid(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np, name)(x)
    got = getattr(loom, name)(loom.asarray(x)).get()
    if name == "log1p":  # NumPy's formula loses the real part of a tiny z (module docstring)
        tiny = np.abs(x) < 1e-100
        want = want.copy()
        want[tiny] = np.array([complex(np.log1p(2 * z.real) / 2 if z.real else 0.0, z.imag) for z in x[tiny]], dtype)
    if want.dtype.kind == "c":
        assert_complex_close(got, want, 0 if name in ("negative", "positive", "conjugate", "rint") else 8, dtype,
                             where=name)
    else:
        check(got, want, rtol=4 * eps(dtype))


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", [n for n in UNARY if n not in ("isnan", "isinf", "isfinite", "logical_not")])
def test_unary_random(name, dtype):
    rng = np.random.default_rng(5)
    m = 10 ** rng.uniform(-4, 4, 3000)
    x = (m * np.exp(1j * rng.uniform(-np.pi, np.pi, 3000))).astype(dtype)
    # the reference in complex128 (NumPy's complex64 loops compute in float32: loom computes complex64
    # functions in float64 and rounds once, so it is compared with the better reference)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = getattr(np, name)(x.astype(np.complex128))
        if name == "exp2" and dtype == "complex64":  # NumPy's nc_exp2f scales by ln 2 in float32 first
            ref = np.exp((x.real * np.float32(np.log(2))).astype(np.float64)
                         + 1j * (x.imag * np.float32(np.log(2))).astype(np.float64))
        if name == "log1p":  # NumPy's log(hypot(1 + x, y)) loses digits near 0: the series there
            z = x.astype(np.complex128)
            series = sum((-1) ** (k + 1) * z ** k / k for k in range(1, 64))
            ref = np.where(np.abs(z) < 0.3, series, ref)
    got = getattr(loom, name)(loom.asarray(x)).get().astype(ref.dtype)
    keep = np.isfinite(ref) & (np.abs(ref) > 1e-30) & (np.abs(ref) < 1e30)
    err = np.abs(got[keep] - ref[keep]) / np.abs(ref[keep])
    assert err.max() <= 8 * eps(dtype), (name, err.max() / eps(dtype))


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_special_values(name, dtype):
    g = grid(dtype)
    a, b = np.repeat(g, g.size), np.tile(g, g.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np, name)(a, b)
    got = getattr(loom, name)(loom.asarray(a), loom.asarray(b)).get()
    if want.dtype.kind == "c":
        # multiply: NumPy's SIMD loop fuses a multiply-add (so does loom where the CPU has one)
        assert_complex_close(got, want, 2 if name == "multiply" else 0, dtype, zero_signs=name != "multiply",
                             where=name)
    else:
        check(got, want)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_power(dtype):
    base = np.array([1.5 - 0.5j, -2 + 1j, 0, 0.25 + 3j, -1, 7, 1j, np.inf, np.nan], dtype)
    expo = np.array([0, 1, 2, 3, -2, 5, 0.5, 1.5 + 2j, -0.5 - 1j, 1j, 2j, -1], dtype)
    a, b = np.repeat(base, expo.size), np.tile(expo, base.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.power(a, b)
    got = loom.power(loom.asarray(a), loom.asarray(b)).get()
    assert_complex_close(got, want, 64, dtype, zero_signs=False, where="power")
    # a Python scalar exponent: x ** 2 and x ** 0.5 keep the array's dtype
    x = loom.asarray(base[:6])
    check(x ** 2, base[:6] ** 2, rtol=8 * eps(dtype))
    assert (x ** 0.5).dtype == dtype


PROMO = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float16", "float32", "float64",
         "complex64", "complex128"]


@pytest.mark.parametrize("a", PROMO)
@pytest.mark.parametrize("b", ["complex64", "complex128"])
def test_promotion_table(a, b):
    x = loom.asarray(np.ones(3, a))
    y = loom.asarray(np.ones(3, b))
    assert (x + y).dtype == np.result_type(a, b)
    assert (y * x).dtype == np.result_type(b, a)
    assert (x / y).dtype == np.result_type(np.true_divide(np.ones(1, a), np.ones(1, b)).dtype)
    assert loom.where(loom.asarray([True, False, True]), x, y).dtype == np.result_type(a, b)


@pytest.mark.parametrize("a", PROMO)
def test_weak_python_complex(a):
    x = np.ones(3, a)
    for s in (1j, 2.5 - 1j, complex(0, 0)):
        want = x * s
        got = loom.asarray(x) * s
        assert got.dtype == want.dtype, (a, s, got.dtype, want.dtype)
        check(got, want)
        check(s + loom.asarray(x), s + x)


def test_nep50_examples():
    f32 = loom.asarray(np.arange(4, dtype=np.float32))
    assert (f32 * 1j).dtype == np.complex64  # float32 array * 1j -> complex64
    assert (loom.asarray(np.ones(2, np.float16)) * 1j).dtype == np.complex64
    assert (loom.asarray(np.ones(2, np.int8)) * 1j).dtype == np.complex128
    assert (loom.asarray(np.ones(2, np.complex64)) * 2.5).dtype == np.complex64
    assert (loom.asarray(np.ones(2, np.complex64)) + np.float64(1)).dtype == np.complex128  # strong NumPy scalar
    assert (loom.asarray(np.ones(2, np.float32)) + np.complex64(1j)).dtype == np.complex64


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_reductions(dtype, axis):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((37, 300)) + 1j * rng.standard_normal((37, 300))).astype(dtype).T  # strided
    a = loom.asarray(np.ascontiguousarray(x.T)).T
    tol = 2e-5 if dtype == "complex64" else 1e-12
    for name in ("sum", "mean"):
        got, want = getattr(loom, name)(a, axis=axis).get(), getattr(np, name)(x, axis=axis)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(x.size))
    small = loom.asarray(x[:12] / 1.3)
    np.testing.assert_allclose(loom.prod(small, axis=axis).get(), np.prod(x[:12] / 1.3, axis=axis), rtol=tol * 10)
    for name in ("max", "min", "argmax", "argmin", "any", "all"):
        if name.startswith("arg") and isinstance(axis, tuple):
            continue
        got, want = getattr(loom, name)(a, axis=axis), getattr(np, name)(x, axis=axis)
        check(got, want)
    np.testing.assert_allclose(loom.var(a, axis=axis).get(), np.var(x, axis=axis), rtol=tol * 10)
    assert loom.var(a).dtype == np.var(x).dtype and loom.std(a).dtype == np.std(x).dtype


@pytest.mark.parametrize("dtype", CDTYPES)
def test_reductions_nan_and_empty(dtype):
    x = np.array([1 + 2j, complex(np.nan, 1), 3j, complex(1, np.nan), 5 + 5j], dtype)
    a = loom.asarray(x)
    for name in ("max", "min", "argmax", "argmin", "sum", "prod", "any", "all"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(getattr(loom, name)(a), getattr(np, name)(x))
    e = np.zeros((0, 3), dtype)
    check(loom.sum(loom.asarray(e), axis=0), np.sum(e, axis=0))
    check(loom.prod(loom.asarray(e), axis=0), np.prod(e, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(loom.mean(loom.asarray(e), axis=0), np.mean(e, axis=0))
    with pytest.raises(ValueError):
        loom.max(loom.asarray(e), axis=0)


def test_parts_are_views():
    x = np.array([[1 + 2j, 3 - 4j], [5j, -1]], np.complex64)
    a = loom.asarray(x)
    r, i = a.real, a.imag
    assert r.dtype == np.float32 and i.dtype == np.float32
    assert r.strides == x.real.strides and i.strides == x.imag.strides
    check(r, x.real)
    check(i, x.imag)
    a.real[...] = 7  # a write through the view reaches the array
    x.real[...] = 7
    check(a, x)
    a.imag = np.array([[1, 2], [3, 4]], np.float32)
    x.imag = np.array([[1, 2], [3, 4]], np.float32)
    check(a, x)
    check(a[:, ::-1].real, x[:, ::-1].real)  # a view of a view
    check(loom.real(a), np.real(x))
    check(loom.imag(a), np.imag(x))
    # real arrays: .real is the array's values, .imag zeros, setting .imag is an error
    f = loom.asarray(np.arange(3.0))
    check(f.real, np.arange(3.0))
    check(f.imag, np.zeros(3))
    with pytest.raises(TypeError):
        f.imag = 1
    # a pending complex array is evaluated first, as for every view
    p = a * 2
    check(p.real, (x * 2).real)


def test_part_functions_and_predicates():
    x = np.array([1 + 1j, -2, 0, 3j, complex(np.nan, 1)], np.complex128)
    a = loom.asarray(x)
    check(loom.conj(a), np.conj(x))
    check(a.conj(), x.conj())
    check(a.conjugate(), x.conjugate())
    check(loom.conjugate(loom.asarray([True, False])), np.conjugate(np.array([True, False])))
    check(loom.conjugate(loom.asarray([1.5, -2.0])), np.conjugate(np.array([1.5, -2.0])))
    check(loom.angle(a), np.angle(x))
    check(loom.angle(a, deg=True), np.angle(x, deg=True))
    check(loom.angle(loom.asarray(np.array([1, -1, 0], np.int8))), np.angle(np.array([1, -1, 0], np.int8)))
    check(loom.iscomplex(a), np.iscomplex(x))
    check(loom.isreal(a), np.isreal(x))
    check(loom.isreal(loom.asarray([1.0, 2.0])), np.isreal(np.array([1.0, 2.0])))
    assert loom.iscomplexobj(a) and not loom.isrealobj(a)
    assert not loom.iscomplexobj(loom.asarray([1.0])) and loom.isrealobj(loom.asarray([1.0]))
    assert loom.iscomplexobj(1j) and loom.iscomplexobj([1j])


@pytest.mark.parametrize("src", CDTYPES)
@pytest.mark.parametrize("dst", ["bool", "int8", "int32", "uint16", "float16", "float32", "float64", "complex64",
                                 "complex128"])
def test_casts(src, dst):
    # negative values only for signed and inexact targets: NumPy's float -> unsigned conversion of a
    # negative value is undefined in C (x86 gives 2^16 - 3); loom saturates (README, semantics notes)
    neg = np.dtype(dst).kind != "u"
    x = np.array([1.5 + 2j, (-3 if neg else 3) - 0.5j, 0j, 1j, 100 + 1j, -0.0], src)
    a = loom.asarray(x)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = a.astype(dst)
        cw = [q for q in w if issubclass(q.category, ComplexWarning)]
    with warnings.catch_warnings(record=True) as wn:
        warnings.simplefilter("always")
        want = x.astype(dst)
    check(got, want)
    # complex -> real warns exactly where NumPy's astype does (not to bool: nothing is discarded)
    assert bool(cw) == any(issubclass(q.category, ComplexWarning) for q in wn)
    # and back: real values become complex with imaginary part 0
    back = loom.asarray(want).astype(src)
    check(back, want.astype(src))


def test_setitem_complex_into_real():
    a = loom.zeros(3)
    with pytest.raises(TypeError):
        a[0] = 1 + 2j  # NumPy: a Python complex does not convert to float
    with pytest.warns(ComplexWarning):
        a[...] = loom.asarray(np.array([1 + 2j, 3j, 5]))
    check(a, np.array([1.0, 0.0, 5.0]))
    c = loom.zeros(3, np.complex64)
    c[1] = 2 - 1j
    check(c, np.array([0, 2 - 1j, 0], np.complex64))


def test_complex_out_rules():
    a = loom.asarray(np.ones(3, np.complex64))
    out = loom.zeros(3, np.float32)
    with pytest.raises(TypeError):
        loom.add(a, a, out=out)  # complex -> float is not a same_kind cast
    for name in ("floor", "ceil", "trunc", "cbrt"):
        with pytest.raises(TypeError):
            getattr(loom, name)(a)
    with pytest.raises(TypeError):
        loom.remainder(a, a)
    with pytest.raises(TypeError):
        loom.arctan2(a, a)
    with pytest.raises(TypeError):
        a & a


@pytest.mark.host_conversion
def test_host_interop():
    x = np.array([[1 + 2j, 3 - 4j], [np.nan + 1j, -np.inf]], np.complex128)
    a = loom.asarray(x)
    assert memoryview(a).format == "Zd" and memoryview(loom.asarray(x.astype(np.complex64))).format == "Zf"
    np.testing.assert_array_equal(np.asarray(a), x)
    np.testing.assert_array_equal(np.from_dlpack(a), x)  # NumPy imports kDLComplex


def test_interop_and_printing():
    x = np.array([[1 + 2j, 3 - 4j], [np.nan + 1j, -np.inf]], np.complex128)
    a = loom.asarray(x)
    np.testing.assert_array_equal(loom.from_dlpack(x).get(), x)
    np.testing.assert_array_equal(loom.from_dlpack(a).get(), x)
    assert repr(a) == repr(x) and str(a) == str(x)
    assert complex(a[0, 1]) == 3 - 4j and a[0, 0].item() == 1 + 2j and a[0].tolist() == x[0].tolist()
    s = loom.asarray(np.complex64(2 - 1j))
    assert s.shape == () and s.dtype == np.complex64 and complex(s) == 2 - 1j
    # a NumPy complex scalar is a strong constant; a Python one is weak
    check(loom.asarray(np.ones(2, np.float32)) + np.complex128(1j), np.ones(2, np.float32) + np.complex128(1j))


def test_fuse_and_lazy():
    x = np.linspace(-2, 2, 11)

    @loom.fuse()
    def f(a):
        z = a * 1j + a
        return loom.absolute(z) + z.real * z.imag

    check(f(loom.asarray(x)), np.abs(x * 1j + x) + (x * 1j + x).real * (x * 1j + x).imag)

    @loom.fuse()
    def g(a, s):  # a Python complex argument is a weak scalar of the trace
        return a * s

    check(g(x.astype(np.float32), 2j), x.astype(np.float32) * 2j)
    check(g(loom.asarray(x), 1 - 1j), x * (1 - 1j))
    # a lazy complex expression fuses with its reduction
    a = loom.asarray(x)
    got = loom.sum(loom.exp(a * 1j)).get()
    np.testing.assert_allclose(got, np.sum(np.exp(x * 1j)), rtol=1e-12)
