"""loom's own <cupy/complex.cuh> and <cupy/carray.cuh> (python/loom/include/cupy/): CUDA C++ raw kernels written
for CuPy compile unchanged to PTX with loom's clang-19 path (no GPU needed), the complex functions give
NumPy's values (the header compiled for the host with clang++ and compared with NumPy's complex128 /
complex64 functions), and, on a CUDA device, a raw kernel over loom's complex arrays matches NumPy."""
import os
import shutil
import subprocess
from typing import Any, Callable

import numpy as np
import pytest

import loom
from loom import cuda

INCLUDE = os.path.join(os.path.dirname(loom.__file__), "include")
CLANG = shutil.which("clang-19")
CXX = shutil.which("clang++-19") or shutil.which("clang++") or shutil.which("g++") or ""
GPU = cuda.is_available() and not cuda.runtime.is_hip
needs_clang = pytest.mark.skipif(CLANG is None, reason="CUDA C++ raw kernels need clang-19")

# The functions checked, as (C++ expression of z and w, NumPy function of z and w).
FUNCS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("z + w", lambda z, w: z + w), ("z - w", lambda z, w: z - w), ("z * w", lambda z, w: z * w),
    ("z / w", lambda z, w: z / w), ("-z", lambda z, w: -z), ("conj(z)", lambda z, w: np.conj(z)),
    ("z * (T)2.5", lambda z, w: z * 2.5), ("(T)3 - z", lambda z, w: 3 - z), ("(T)2 / z", lambda z, w: 2 / z),
    ("C(abs(z), arg(z))", lambda z, w: np.abs(z) + 1j * np.angle(z)),
    ("C(norm(z), real(z) + imag(z))", lambda z, w: np.abs(z) ** 2 + 1j * (z.real + z.imag)),
    ("exp(z)", lambda z, w: np.exp(z)), ("log(z)", lambda z, w: np.log(z)), ("log10(z)", lambda z, w: np.log10(z)),
    ("sqrt(z)", lambda z, w: np.sqrt(z)), ("pow(z, w)", lambda z, w: z ** w), ("pow(z, 2)", lambda z, w: z ** 2),
    ("pow(z, (T)0.5)", lambda z, w: z ** 0.5),
    ("sin(z)", lambda z, w: np.sin(z)), ("cos(z)", lambda z, w: np.cos(z)), ("tan(z)", lambda z, w: np.tan(z)),
    ("sinh(z)", lambda z, w: np.sinh(z)), ("cosh(z)", lambda z, w: np.cosh(z)), ("tanh(z)", lambda z, w: np.tanh(z)),
    ("asin(z)", lambda z, w: np.arcsin(z)), ("acos(z)", lambda z, w: np.arccos(z)),
    ("atan(z)", lambda z, w: np.arctan(z)), ("asinh(z)", lambda z, w: np.arcsinh(z)),
    ("acosh(z)", lambda z, w: np.arccosh(z)), ("atanh(z)", lambda z, w: np.arctanh(z)),
    ("polar(abs(z), arg(w))", lambda z, w: np.abs(z) * np.exp(1j * np.angle(w))),
    ("C((T)(z == w), (T)(z != w))", lambda z, w: (z == w) + 1j * (z != w)),
]


def _inputs():
    """z, w pairs: random points of both signs in every quadrant (|parts| in [0.05, 8]), a few exact ones."""
    rng = np.random.default_rng(7)
    mag = rng.uniform(0.05, 8, size=(2, 2, 40)) * rng.choice([-1, 1], size=(2, 2, 40))
    z, w = mag[0, 0] + 1j * mag[0, 1], mag[1, 0] + 1j * mag[1, 1]
    z = np.concatenate([z, [1 + 1j, -2 + 0.5j, 0.5 - 3j, 2 + 2j]])
    w = np.concatenate([w, [1 + 1j, 1e-3 + 2j, -4 - 1e-3j, 2 + 2j]])
    return z, w


def _program(ctype):
    z, w = _inputs()
    rows = ",\n".join("{%r, %r, %r, %r}" % (float(a.real), float(a.imag), float(b.real), float(b.imag))
                      for a, b in zip(z, w))
    exprs = "\n".join(f'    {{ C r = {e}; printf("%.17g %.17g\\n", (double)r.real(), (double)r.imag()); }}'
                      for e, _ in FUNCS)
    return f"""#include <stdio.h>
#include <math.h>
#include <cupy/complex.cuh>
typedef {ctype} T;
typedef complex<T> C;
static const double IN[][4] = {{{rows}}};
int main() {{
  for (unsigned i = 0; i < sizeof IN / sizeof IN[0]; ++i) {{
    C z((T)IN[i][0], (T)IN[i][1]), w((T)IN[i][2], (T)IN[i][3]);
{exprs}
  }}
  return 0;
}}
"""


@pytest.mark.skipif(not CXX, reason="needs a host C++ compiler")
@pytest.mark.parametrize("ctype, rtol", [("double", 1e-11), ("float", 2e-5)])
def test_complex_functions_match_numpy(tmp_path, ctype, rtol):
    src = tmp_path / "t.cpp"
    src.write_text(_program(ctype))
    exe = tmp_path / "t"
    subprocess.run([CXX, "-std=c++14", "-O1", "-D__host__=", "-D__device__=", "-I", INCLUDE, str(src), "-o", str(exe),
                    "-lm"], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    got = np.array(out, dtype=np.float64).reshape(-1, len(FUNCS), 2)
    got = got[..., 0] + 1j * got[..., 1]
    z, w = _inputs()
    dt = np.complex128 if ctype == "double" else np.complex64
    z, w = z.astype(dt), w.astype(dt)
    with np.errstate(all="ignore"):
        for k, (expr, ref) in enumerate(FUNCS):
            expect = np.asarray(ref(z.astype(np.complex128), w.astype(np.complex128)), dtype=np.complex128)
            scale = np.maximum(np.abs(expect), 1.0)
            err = np.abs(got[:, k] - expect) / scale
            bad = np.flatnonzero(~(err <= rtol))
            assert bad.size == 0, f"{expr} ({ctype}): z={z[bad[0]]} w={w[bad[0]]}: {got[bad[0], k]} != {expect[bad[0]]}"


@pytest.mark.skipif(not CXX, reason="needs a host C++ compiler")
def test_complex_edge_values(tmp_path):
    """Division without overflow for huge operands, exp of +-inf real parts, sqrt on the negative axis and of
    zeros, tanh for large real parts (no inf / inf), isnan / isinf / isfinite, proj."""
    src = tmp_path / "e.cpp"
    src.write_text("""#include <stdio.h>
#include <math.h>
#include <cupy/complex.cuh>
typedef complex<double> C;
static void p(C r) { printf("%.17g %.17g\\n", r.real(), r.imag()); }
int main() {
  p(C(1e300, 1e300) / C(2e300, 2e300));
  p(C(1, 1) / C(1e-310, 0));
  p(exp(C(-__builtin_inf(), 0)));
  p(exp(C(__builtin_inf(), 0)));
  p(sqrt(C(-4, 0)));
  p(sqrt(C(-4, -0.0)));
  p(sqrt(C(0, 0)));
  p(tanh(C(800, 1)));
  p(tanh(C(-800, 1)));
  p(C(isnan(C(__builtin_nan(""), 1)), isinf(C(1, -__builtin_inf()))));
  p(C(isfinite(C(1, 2)), isfinite(C(__builtin_inf(), 0))));
  p(proj(C(__builtin_inf(), -3)));
  return 0;
}
""")
    exe = tmp_path / "e"
    subprocess.run([CXX, "-std=c++14", "-D__host__=", "-D__device__=", "-I", INCLUDE, str(src), "-o", str(exe), "-lm"],
                   check=True, capture_output=True)
    out = np.array(subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split(),
                   dtype=np.float64).reshape(-1, 2)
    got = out[:, 0].astype(np.complex128)
    got.imag = out[:, 1]
    np.testing.assert_allclose(got[0], 0.5 + 0j, rtol=1e-15)
    assert out[1, 0] == np.inf and out[1, 1] == np.inf
    assert got[2] == 0 and out[3, 0] == np.inf and out[3, 1] == 0
    assert got[4] == 2j and got[5] == -2j and np.signbit(out[5, 1])
    assert got[6] == 0
    np.testing.assert_allclose(got[7], np.tanh(800 + 1j), atol=1e-300)
    np.testing.assert_allclose(got[8], np.tanh(-800 + 1j), atol=1e-300)
    assert got[9] == 1 + 1j and got[10] == 1 + 0j
    assert out[11, 0] == np.inf and out[11, 1] == 0 and np.signbit(out[11, 1])


KERNEL = r"""
#include <cupy/complex.cuh>
extern "C" __global__ void cfun(const complex<double>* z, const thrust::complex<float>* f, complex<double>* out,
                                complex<float>* outf, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  complex<double> a = z[i];
  out[i] = exp(a) * conj(a) + sqrt(a) / (a + 1.0) - log(a) + pow(a, 2) + sin(a) * tanh(a)
           + complex<double>(abs(a), arg(a));
  complex<float> b = f[i];
  outf[i] = b * 2.0f + acos(b) + atanh(b) + complex<float>(real(b) * imag(b), norm(b));
}
"""


def _kernel_reference(z):
    return (np.exp(z) * np.conj(z) + np.sqrt(z) / (z + 1) - np.log(z) + z ** 2 + np.sin(z) * np.tanh(z)
            + np.abs(z) + 1j * np.angle(z))


def _kernel_reference_f(f):
    f = f.astype(np.complex128)
    return f * 2 + np.arccos(f) + np.arctanh(f) + (f.real * f.imag + 1j * np.abs(f) ** 2)


@needs_clang
def test_cupy_complex_kernel_compiles_to_ptx():
    m = loom.RawModule(code=KERNEL, backend="nvcc")
    assert m.kernel_names == ["cfun"]
    assert ".entry cfun" in m.ptx
    k = loom.RawKernel(KERNEL, "cfun", backend="nvcc")
    assert k.params == [("pointer", 8)] * 4 + [("int", 4)]
    assert k.backend == "nvcc"


@needs_clang
def test_carray_header_compiles():
    src = r"""
#include <cupy/carray.cuh>
extern "C" __global__ void transpose_copy(const float* x, float* y, long rows, long cols) {
  ptrdiff_t shape[2] = {cols, rows}, strides[2] = {4, 4 * cols};  // x viewed transposed
  CArray<const float, 2> xt(x, shape, strides);
  CIndexer<2> ind(shape);
  for (ptrdiff_t i = blockIdx.x * blockDim.x + threadIdx.x; i < ind.size(); i += blockDim.x * gridDim.x) {
    ind.set(i);
    y[i] = xt[ind.get()] + xt[i] * 0;
  }
}
"""
    m = loom.RawModule(code=src)
    assert m.kernel_names == ["transpose_copy"] and ".entry transpose_copy" in m.ptx


@needs_clang
def test_bad_cuda_source_is_a_clear_error():
    with pytest.raises(ValueError, match="could not compile"):
        loom.RawModule(code='#include <cupy/complex.cuh>\nextern "C" __global__ void k(complex<float>* x) '
                            '{ x[0] = nosuchfunction(x[0]); }')


@needs_clang
@pytest.mark.skipif(not GPU, reason="needs a CUDA device")
def test_cupy_complex_kernel_matches_numpy_on_gpu():
    rng = np.random.default_rng(3)
    n = 1000
    z = rng.uniform(-3, 3, n) + 1j * rng.uniform(-3, 3, n)
    f = (rng.uniform(-0.9, 0.9, n) + 1j * rng.uniform(-0.9, 0.9, n)).astype(np.complex64)
    dz, df = loom.asarray(z), loom.asarray(f)
    out = loom.empty(n, np.complex128)
    outf = loom.empty(n, np.complex64)
    k = loom.RawKernel(KERNEL, "cfun", backend="nvcc")
    k(((n + 127) // 128,), (128,), (dz, df, out, outf, np.int32(n)))
    np.testing.assert_allclose(out.get(), _kernel_reference(z), rtol=1e-12)
    np.testing.assert_allclose(outf.get(), _kernel_reference_f(f), rtol=3e-5, atol=3e-5)
