"""One-off H200 probe (session 12): which complex64 comparison of CuPy's test_cuFloatComplex differs.

Compiles the vendored test's cuComplex kernels (tests/cupy/vendor, CuPy's MIT licence) with loom's
RawModule(translate_cucomplex=True) and prints, per kernel, how many of the 100 points differ from
loom's own array operation and the largest difference."""
import os
import re

import numpy as np

import loom

src = open(os.path.join(os.path.dirname(__file__), "..", "tests", "cupy", "vendor", "tests", "cupy_tests",
                        "core_tests", "test_raw.py")).read()
code = re.search(r"_test_cuComplex = r'''(.*?)'''", src, re.S).group(1)
mod = loom.RawModule(code=code, translate_cucomplex=True)
N = 100
rng = np.random.default_rng(0)
mk = lambda: loom.asarray((rng.random(N) + 1j * rng.random(N)).astype(np.complex64))  # noqa: E731
a, b, c = mk(), mk(), mk()
out = loom.zeros(N, np.complex64)
outf = loom.zeros(N, np.float32)
outu = loom.zeros(N, np.complex128)
cases = [("test_addf", (a, b, out), out, lambda: a + b), ("test_subf", (a, b, out), out, lambda: a - b),
         ("test_mulf", (a, b, out), out, lambda: a * b), ("test_divf", (a, b, out), out, lambda: a / b),
         ("test_conjf", (a, out), out, lambda: loom.conj(a)), ("test_absf", (a, outf), outf, lambda: loom.abs(a)),
         ("test_upcast", (a, outu), outu, lambda: a.astype(np.complex128)),
         ("test_addf_scalar", (a, np.complex64(2 + 3j), out), out, lambda: a + np.complex64(2 + 3j))]
for name, args, o, ref in cases:
    mod.get_function(name)((1,), (128,), args)
    got, want = np.asarray(o.get()), np.asarray(ref().get())
    bad = got != want
    print(f"{name}: {int(bad.sum())} of {N} differ; max |diff| {np.max(np.abs(got - want)):.3g}"
          + (f"; first got {got[bad][0]!r} want {want[bad][0]!r}" if bad.any() else ""))
