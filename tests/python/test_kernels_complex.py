"""Complex numbers in user kernels, against NumPy.

ElementwiseKernel / ReductionKernel snippets over complex64 / complex128 arrays and scalars (NumPy scalars and
Python complex), with CuPy's complex<T> API: arithmetic with complex and real operands, == / !=,
real / imag / conj / abs / arg / norm / polar, z.real() / z.imag(), complex<T>(re, im) and the complex math
functions; clear errors for what C++ rejects on complex<T>. Raw kernels: <cupy/complex.cuh>'s * and / round
as loom's array operations (the header compiled for the host, bit for bit against loom's and NumPy's a / b;
the PTX of cuComplex.h's cuCdiv has no contracted multiply-add). The GPU variants run where a CUDA device is
present (CuPy's test_raw.py cuFloatComplex / cuDoubleComplex compare a raw kernel's cuCdiv with a / b by ==).
"""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import loom
from loom import cuda

GPU = cuda.is_available() and not cuda.runtime.is_hip
CLANG = shutil.which("clang-19")
CXX = shutil.which("clang++-19") or shutil.which("clang++") or shutil.which("g++") or ""
INCLUDE = os.path.join(os.path.dirname(loom.__file__), "include")
CDT = [np.complex64, np.complex128]


def _get(r):
    return r.get() if hasattr(r, "get") else np.asarray(r)


def _dev(a):
    return loom.asarray(a)


def _tol(dt):
    return dict(rtol=2e-6, atol=1e-6) if dt == np.complex64 else dict(rtol=1e-13, atol=1e-13)


def _rand(n, dt, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-3, 3, n) + 1j * rng.uniform(-3, 3, n)).astype(dt)


@pytest.mark.parametrize("dt", CDT)
@pytest.mark.parametrize("trans", [False, True])
def test_add_scalar(dt, trans):
    """CuPy's test_ndarray_cuda_array_interface TestElementwiseKernel::test_add_scalar, on loom arrays."""
    a = np.array([[1, 2, 3], [4, 5, 6]], dt)
    if trans:
        a = a.T
    f = loom.ElementwiseKernel("T x, T y", "T z", "z = x + y")
    r = f(_dev(a), dt(3))
    assert r.dtype == dt
    np.testing.assert_array_equal(_get(r), a + dt(3))
    r = f(_dev(a), dt(2 - 1.5j))
    np.testing.assert_array_equal(_get(r), a + dt(2 - 1.5j))


@pytest.mark.parametrize("dt", CDT)
def test_python_complex_scalar(dt):
    a = _rand(50, dt)
    f = loom.ElementwiseKernel("T x, T y", "T z", "z = x * y")
    r = f(_dev(a), 2 - 0.5j)  # takes T = the array's dtype
    assert r.dtype == dt
    np.testing.assert_allclose(_get(r), a * dt(2 - 0.5j), **_tol(dt))
    g = loom.ElementwiseKernel("float64 x, complex128 y", "complex128 z", "z = x * y")
    np.testing.assert_allclose(_get(g(_dev(np.arange(4.0)), 1j)), np.arange(4.0) * 1j)
    h = loom.ElementwiseKernel("float64 x, float64 y", "float64 z", "z = x * y")
    with pytest.raises(TypeError, match="complex"):
        h(_dev(np.arange(4.0)), 1j)


@pytest.mark.parametrize("dt", CDT)
def test_arithmetic_and_functions(dt):
    n = 64
    x, y = _rand(n, dt, 1), _rand(n, dt, 2)
    rt = "float" if dt == np.complex64 else "double"
    k = loom.ElementwiseKernel("T x, T y", "T z, T w", f"""
        complex<{rt}> c = complex<{rt}>(1.5, -2);
        z = x * y - x / c + conj(x) * ({rt})2 - T(real(x), imag(y)) + x.real() + abs(y) - (y == x ? c : T(0));
        w = T(norm(x), arg(y)) + sqrt(x) + exp(y) * log(x) + polar(abs(x), arg(y)) - y / x + -x;""")
    z, w = k(_dev(x), _dev(y))
    c = dt(1.5 - 2j)
    ref_z = x * y - x / c + np.conj(x) * 2 - (x.real + 1j * y.imag) + x.real + np.abs(y)
    ref_w = (np.abs(x) ** 2 + 1j * np.angle(y)) + np.sqrt(x) + np.exp(y) * np.log(x) \
        + np.abs(x) * np.exp(1j * np.angle(y)) - y / x - x
    assert z.dtype == dt and w.dtype == dt
    np.testing.assert_allclose(_get(z), ref_z, **(dict(rtol=1e-5, atol=1e-4) if dt == np.complex64 else _tol(dt)))
    np.testing.assert_allclose(_get(w), ref_w, **(dict(rtol=1e-5, atol=1e-4) if dt == np.complex64 else _tol(dt)))


def test_division_is_loom_division():
    """A snippet's z / w is the array operation's z / w (NumPy's division), bit for bit."""
    x, y = _rand(200, np.complex128, 3), _rand(200, np.complex128, 4)
    y[:3] = [0, 1e-300 + 1e300j, 2 + 0j]
    k = loom.ElementwiseKernel("T x, T y", "T z", "z = x / y")
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_get(k(_dev(x), _dev(y))), _get(_dev(x) / _dev(y)))


def test_mixed_precision_promotes_like_complex_t():
    """complex<float> op double -> complex<double>; complex<float> op int -> complex<float> (thrust's rules)."""
    x = _rand(16, np.complex64)
    k = loom.ElementwiseKernel("complex64 x", "complex128 z, complex64 w", "z = x * 0.1; w = x * 3;")
    z, w = k(_dev(x))
    np.testing.assert_allclose(_get(z), x.astype(np.complex128) * 0.1, rtol=1e-12)
    np.testing.assert_allclose(_get(w), x * np.float32(3), rtol=1e-6)


@pytest.mark.parametrize("dt", CDT)
def test_raw_params_and_locals(dt):
    x = _rand(10, dt, 5)
    k = loom.ElementwiseKernel("raw T x", "T z", """
        thrust::complex<double> acc;  /* zero */
        for (int j = 0; j <= i; j++) acc += x[j];
        z = T(acc) * x[x.size() - 1 - i];""")
    r = k(_dev(x), size=10)
    ref = np.cumsum(x.astype(np.complex128)).astype(dt) * x[::-1]
    np.testing.assert_allclose(_get(r), ref, **(dict(rtol=1e-5, atol=1e-5) if dt == np.complex64 else _tol(dt)))


@pytest.mark.parametrize("dt", CDT)
def test_reduction_kernel(dt):
    x = _rand((6, 40), dt, 6)
    s = loom.ReductionKernel("T x", "T y", "x * conj(x) + x", "a + b", "y = a", "0", "csum")
    r = s(_dev(x), axis=1)
    np.testing.assert_allclose(_get(r), (x * np.conj(x) + x).sum(axis=1), **(dict(rtol=1e-5, atol=1e-4)
                                                                              if dt == np.complex64 else _tol(dt)))
    n = loom.ReductionKernel("T x", "float64 y", "abs(x)", "max(a, b)", "y = a", "0", "cmaxabs")
    np.testing.assert_allclose(_get(n(_dev(x))), np.abs(x).max(), rtol=1e-6)


@pytest.mark.parametrize("code, match", [
    ("z = x < y", "not ordered"),
    ("double d = x; z = d", "cannot convert"),
    ("z = x % y", "invalid operands"),
    ("z = x & y", "bitwise"),
    ("z = floor(x)", "complex argument"),
    ("z = complex<int>(1, 2)", "part type"),
    ("z = x.real(1.0)", "member access"),
])
def test_errors(code, match):
    k = loom.ElementwiseKernel("T x, T y", "T z", code)
    a = _dev(np.ones(3, np.complex128))
    with pytest.raises((ValueError, TypeError, NotImplementedError), match=match):
        k(a, a)


@pytest.mark.skipif(CLANG is None, reason="needs clang-19")
def test_complex_snippet_compiles_to_ptx():
    k = loom.ElementwiseKernel("T x, T y", "T z", "z = x / y + conj(x) * abs(y)")
    for dt in CDT:
        ptx = k.ptx(np.ones(3, dt), dt(2))
        assert ".entry" in ptx or ".visible" in ptx


# ---- raw kernels: <cupy/complex.cuh>'s rounding ---------------------------------------------------------------

_DIV_PROGRAM = r"""
#include <stdio.h>
#include <math.h>
#include <cupy/complex.cuh>
int main() {
  double a, b, c, d;
  while (scanf("%lf %lf %lf %lf", &a, &b, &c, &d) == 4) {
    complex<double> q = complex<double>(a, b) / complex<double>(c, d);
    complex<float> f = complex<float>((float)a, (float)b) / complex<float>((float)c, (float)d);
    printf("%a %a %a %a\n", q.real(), q.imag(), (double)f.real(), (double)f.imag());
  }
  return 0;
}
"""


@pytest.mark.skipif(not CXX, reason="needs a host C++ compiler")
def test_header_division_matches_loom_bitwise(tmp_path):
    src = tmp_path / "div.cpp"
    src.write_text(_DIV_PROGRAM)
    exe = tmp_path / "div"
    subprocess.run([CXX, "-std=c++14", "-O2", "-ffp-contract=off", "-D__host__=", "-D__device__=", "-I", INCLUDE,
                    str(src), "-o", str(exe), "-lm"], check=True)
    x, y = _rand(300, np.complex128, 7), _rand(300, np.complex128, 8)
    y[:4] = [1e-3 + 2j, -4 - 1e-3j, 5 + 0j, 1j]
    inp = "\n".join("%r %r %r %r" % (float(a.real), float(a.imag), float(b.real), float(b.imag)) for a, b in zip(x, y))
    out = subprocess.run([str(exe)], input=inp, capture_output=True, text=True, check=True).stdout.split("\n")
    vals = np.array([[float.fromhex(v) for v in line.split()] for line in out if line])
    q = vals[:, 0] + 1j * vals[:, 1]
    f = (vals[:, 2] + 1j * vals[:, 3]).astype(np.complex64)
    np.testing.assert_array_equal(q, _get(_dev(x) / _dev(y)))
    x64, y64 = x.astype(np.complex64), y.astype(np.complex64)
    np.testing.assert_array_equal(f, _get(_dev(x64) / _dev(y64)))


_CUCOMPLEX = r"""
#include <cuComplex.h>
extern "C" {
__global__ void cdiv(cuDoubleComplex* a, cuDoubleComplex* b, cuDoubleComplex* out, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) out[i] = cuCdiv(a[i], b[i]);
}
__global__ void cdivf(cuFloatComplex* a, cuFloatComplex* b, cuFloatComplex* out, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) out[i] = cuCdivf(a[i], b[i]);
}
__global__ void cmul_abs(cuFloatComplex* a, cuFloatComplex b, cuFloatComplex* out, float* mag, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) { out[i] = cuCmulf(a[i], b); mag[i] = cuCabsf(a[i]); }
}
}
"""


@pytest.mark.skipif(CLANG is None, reason="needs clang-19")
def test_cucomplex_division_is_not_contracted_in_ptx():
    """clang's CUDA mode contracts a * b + c; the header's division keeps its products separate (mul.rn),
    as loom's own complex division does, so a raw kernel's cuCdiv equals loom's a / b on the GPU."""
    m = loom.RawModule(code=_CUCOMPLEX, translate_cucomplex=True, backend="nvcc")
    for name in ("cdiv", "cdivf"):
        body = re.search(r"\.entry %s\((.*?)\n}\n" % name, m.ptx, re.S)
        assert body is not None
        assert "fma" not in body.group(1)


@pytest.mark.skipif(not (GPU and CLANG), reason="needs a CUDA device and clang-19")
def test_cucomplex_matches_loom_on_gpu():
    n = 1000
    for dt, name in ((np.complex128, "cdiv"), (np.complex64, "cdivf")):
        a, b = _dev(_rand(n, dt, 9)), _dev(_rand(n, dt, 10))
        out = loom.empty(n, dt)
        k = loom.RawKernel(_CUCOMPLEX, name, translate_cucomplex=True)
        k(((n + 127) // 128,), (128,), (a, b, out, np.int32(n)))
        np.testing.assert_array_equal(out.get(), (a / b).get())
    a = _dev(_rand(n, np.complex64, 11))
    out, mag = loom.empty(n, np.complex64), loom.empty(n, np.float32)
    k = loom.RawKernel(_CUCOMPLEX, "cmul_abs", translate_cucomplex=True)
    k(((n + 127) // 128,), (128,), (a, np.complex64(2 + 3j), out, mag, np.int32(n)))
    np.testing.assert_allclose(out.get(), (a * np.complex64(2 + 3j)).get(), rtol=1e-6)
    np.testing.assert_array_equal(mag.get(), loom.abs(a).get())
