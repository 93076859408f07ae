# SPDX-License-Identifier: Apache-2.0
"""wheel_smoke.py: an installed `loom` package (the portable wheel) works on its own and beside
another LLVM in the same process. Run from a folder outside the repository:

    python wheel_smoke.py [--llvmlite-first | --loom-first] [--global] [--preload LIB]

1. The README's example (lazy expression, reduction, @loom.fuse) against NumPy.
2. The bundled SLEEF is what the host backend loaded (it must be the libsleefgnuabi.so.3 and libsleef.so.3
   next to libloom in the package: without SLEEF, math kernels silently run ~3x slower), and no libLLVM.so is
   mapped (LLVM is inside libloom).
3. With llvmlite installed (another LLVM, statically linked into libllvmlite.so): llvmlite JIT-compiles
   and calls a function before and after loom compiles kernels, in the order asked (--global loads
   every extension RTLD_GLOBAL, the harshest case for symbol clashes). --preload LIB first loads LIB
   RTLD_GLOBAL (e.g. another version's libLLVM-NN.so, whose exported symbols would capture the calls of
   an LLVM whose symbols libloom did not hide).
Prints one line per check and exits 1 on the first failure.
"""
import ctypes
import os
import sys

if "--global" in sys.argv:
    sys.setdlopenflags(os.RTLD_NOW | os.RTLD_GLOBAL)
PRELOADED = None
if "--preload" in sys.argv:
    PRELOADED = ctypes.CDLL(sys.argv[sys.argv.index("--preload") + 1], mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    print(f"preloaded {PRELOADED._name} (RTLD_GLOBAL)")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def llvmlite_roundtrip(tag):
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    ir = """
    define double @axpb(double %a, double %x, double %b) {
      %m = fmul double %a, %x
      %r = fadd double %m, %b
      ret double %r
    }"""
    mod = llvm.parse_assembly(ir)
    mod.verify()
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    fn = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double)(
        engine.get_function_address("axpb"))
    got = fn(3.0, 4.0, 0.5)
    if got != 12.5:
        fail(f"llvmlite ({tag}): axpb(3, 4, 0.5) = {got}")
    print(f"ok: llvmlite {llvm.llvm_version_info} JIT ({tag})")
    return engine  # keep it alive


def loom_checks(tag):
    import numpy as np

    import loom as cp

    x = cp.arange(10**6, dtype=cp.float64)
    y = cp.exp(-x / 1e5) * 2 + cp.sin(x)
    s = float((y * y).sum())
    xn = np.arange(10**6, dtype=np.float64)
    yn = np.exp(-xn / 1e5) * 2 + np.sin(xn)
    ref = float((yn * yn).sum())
    if abs(s - ref) > 1e-9 * abs(ref):
        fail(f"loom ({tag}): sum {s!r}, NumPy {ref!r}")

    @cp.fuse(kernel_name="axpb")
    def axpb(a, x, b):
        return a * x + b

    z = axpb(2.0, x, y)
    if not np.allclose(cp.asnumpy(z), 2.0 * xn + yn, rtol=1e-14, atol=0):
        fail(f"loom ({tag}): @fuse result differs from NumPy")
    f32 = cp.asnumpy(cp.tanh(cp.linspace(-3, 3, 4099, dtype=cp.float32)))
    if not np.allclose(f32, np.tanh(np.linspace(-3, 3, 4099, dtype=np.float32)), rtol=2e-6, atol=1e-7):
        fail(f"loom ({tag}): float32 tanh differs from NumPy")
    print(f"ok: loom {cp.__version__} from {os.path.dirname(cp.__file__)} ({tag})")
    return cp


def mapped_files():
    with open("/proc/self/maps") as f:
        return {line.split()[-1] for line in f if "/" in line}


def main():
    engines = []
    order = "llvmlite" if "--llvmlite-first" in sys.argv else "loom"
    have_llvmlite = True
    try:
        import llvmlite  # noqa: F401
    except ImportError:
        have_llvmlite = False
        print("skip: llvmlite is not installed (pip install llvmlite for the coexistence check)")
    if have_llvmlite and order == "llvmlite":
        engines.append(llvmlite_roundtrip("before loom"))
    cp = loom_checks("first run")
    pkg = os.path.dirname(os.path.realpath(cp.__file__))
    files = mapped_files()
    # SLEEF: the vector library (GNU-ABI names) and the scalar one, whose Sleef_*_u10 the host kernels call
    for lib, stem in (("libsleefgnuabi.so.3", "libsleefgnuabi"), ("libsleef.so.3", "libsleef.")):
        sleef = [f for f in files if os.path.basename(f).startswith(stem)]
        if os.path.exists(os.path.join(pkg, lib)):
            if [os.path.realpath(f) for f in sleef] != [os.path.realpath(os.path.join(pkg, lib))]:
                fail(f"SLEEF: the package carries {lib} but the process mapped {sleef or 'none'}")
            print(f"ok: SLEEF from the package ({sleef[0]})")
        elif os.path.exists(os.path.join(pkg, "libsleefgnuabi.so.3")):
            fail(f"SLEEF: the package carries libsleefgnuabi.so.3 but not {lib} (the host kernels need both)")
        else:
            print(f"note: the package carries no SLEEF (a development install); mapped: {sleef or 'none'}")
    preloaded = os.path.realpath(PRELOADED._name) if PRELOADED else ""
    llvm_so = [f for f in files if "libLLVM" in os.path.basename(f) and os.path.realpath(f) != preloaded]
    if llvm_so:
        print(f"note: a shared LLVM is mapped: {llvm_so} (expected only for a development install)")
    if have_llvmlite:
        engines.append(llvmlite_roundtrip("after loom" if order == "loom" else "again, after loom"))
        loom_checks("after llvmlite")
    print("wheel_smoke: all passed")


if __name__ == "__main__":
    main()
