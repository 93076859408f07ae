"""Python scalars are kernel parameters: a new value never compiles a new kernel (issue 11).

Every case compares with NumPy (NEP 50 promotion: the scalar takes the array's dtype) over values that
include NaN, +-inf, -0.0, denormals and integer extremes, and counts compiles with loom.stats().
"""
import math

import numpy as np
import pytest

import loom


def compiled():
    return loom.stats()["kernels_compiled"]


def same(got, want):
    """Equal values and the signs of zeros and infinities; a NaN's sign is not interpreted (IEEE 754:
    x86 makes inf * 0 a negative NaN, a GPU its canonical positive one)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        num = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]))
    np.testing.assert_array_equal(got, want)


FLOATS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 5e-324, 1e-40, 3.4e38, 1e300, -2.5, 0.1]
XF = np.array([0.0, -0.0, 1.5, -3.25, np.inf, -np.inf, np.nan, 1e-45, 3e38, 7.0], dtype=np.float32)


def test_lazy_thousand_scalars_compile_once():
    x = loom.asarray(XF)
    loom.eval(x * 0.25 - 0.5)  # warm: the structure compiles here
    c0 = compiled()
    values = FLOATS + [(i - 500) * 0.0137 + 1e-3 for i in range(1000 - len(FLOATS))]
    for s in values:
        same((x * s - 0.5).get(), XF * s - np.float32(0.5))
    assert compiled() == c0, f"{compiled() - c0} compiles for {len(values)} scalar values"


def test_fuse_scalar_arguments_compile_once():
    @loom.fuse
    def axpb(a, x, b):
        return a * x + b

    xn = np.linspace(-2, 2, 257).astype(np.float32)
    x = loom.asarray(xn)
    axpb(2.0, x, 1.0).get()
    c0 = compiled()
    for i in range(1000):
        a, b = 0.001 * i - 0.3, 1.0 - 0.0007 * i
        r = axpb(a, x, b).get()
        if i % 97 == 0:
            same(r, np.float32(a) * xn + np.float32(b))
    assert compiled() == c0


def test_learning_rate_schedule_reuses_kernels():
    """An Adam-like step whose learning rate changes every step: the kernels of step 1 serve every step."""
    rng = np.random.default_rng(0)
    p, g = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    m = np.zeros_like(p)
    lp, lg, lm = loom.asarray(p), loom.asarray(g), loom.asarray(m)
    counts = []
    for step in range(1, 40):
        lr = 1e-3 * 0.97 ** step
        c0 = compiled()
        lm = 0.9 * lm + 0.1 * lg
        lp = lp - lr * lm / (1 - 0.9 ** step)
        loom.eval(lp, lm)
        counts.append(compiled() - c0)
        m = np.float32(0.9) * m + np.float32(0.1) * g
        p = p - np.float32(lr) * m / np.float32(1 - 0.9 ** step)
    assert sum(counts[1:]) == 0, counts
    np.testing.assert_allclose(lp.get(), p, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("op", ["add", "mul", "xor", "rshift"])
def test_int8_every_weak_int(op):
    xn = np.arange(-128, 128, dtype=np.int8)
    x = loom.asarray(xn)
    f = {"add": lambda a, s: a + s, "mul": lambda a, s: a * s, "xor": lambda a, s: a ^ s,
         "rshift": lambda a, s: a >> s}[op]
    f(x, 3).get()
    c0 = compiled()
    for s in range(-128, 128):
        if op == "rshift" and not 0 <= s < 8:
            continue  # NumPy's shift by >= the width is platform-defined
        with np.errstate(over="ignore"):
            same(f(x, s).get(), f(xn, s))
    # x + 0 and x * 1 fold away (a structure of their own): at most one more kernel each; shift amounts
    # are baked (passes/lower.c: NVIDIA's JIT got shifts by a parameter wrong), one kernel per amount 0..7
    assert compiled() - c0 <= (7 if op == "rshift" else 1)


def test_integer_extremes_and_unsigned():
    xn = np.array([np.iinfo(np.int64).min, -1, 0, 1, np.iinfo(np.int64).max], dtype=np.int64)
    x = loom.asarray(xn)
    un = np.array([0, 1, 2 ** 63, 2 ** 64 - 1], dtype=np.uint64)
    u = loom.asarray(un)
    (x - 7).get()
    (u * np.uint64(3)).get()
    c0 = compiled()
    for s in (np.iinfo(np.int64).min + 1, -(2 ** 40), -3, 2, 2 ** 62, np.iinfo(np.int64).max):
        with np.errstate(over="ignore"):
            same((x - s).get(), xn - s)
    for s in (2 ** 64 - 1, 2 ** 63, 5, 12345678901234567):  # NumPy scalars: strong uint64 constants
        same((u * np.uint64(s)).get(), un * np.uint64(s))
    assert compiled() == c0


def test_float64_signed_zero_nan_inf():
    xn = np.array([0.0, -0.0, 1.0, -1.0, np.inf, np.nan, 5e-324], dtype=np.float64)
    x = loom.asarray(xn)
    (x + 2.0).get()
    c0 = compiled()
    for s in FLOATS:
        same((x + s).get(), xn + s)
        same((s / x).get() if s == s else (x * s).get(), (s / xn) if s == s else xn * s)
    assert compiled() - c0 <= 2


def test_weak_promotion_unchanged():
    f32 = loom.asarray(np.ones(4, np.float32))
    i8 = loom.asarray(np.arange(4, dtype=np.int8))
    i32 = loom.asarray(np.arange(4, dtype=np.int32))
    assert (f32 * 2.0).dtype == np.float32
    assert (i8 + 1).dtype == np.int8
    assert (i32 * 1.5).dtype == np.float64
    same((i32 * 1.5).get(), np.arange(4, dtype=np.int32) * 1.5)
    same((i8 + 1).get(), np.arange(4, dtype=np.int8) + 1)
    with pytest.raises(OverflowError):
        loom.asarray(np.arange(4, dtype=np.uint8)) + 300


def test_reduction_with_scalars():
    xn = np.arange(-50000, 50000, dtype=np.float64) * 0.5
    x = loom.asarray(xn)
    float((x * 0.5).sum())
    c0 = compiled()
    for s in (-3.0, 0.125, 7.5, 1e-300, -0.0):
        assert float((x * s).sum()) == pytest.approx(float((xn * s).sum()), rel=1e-12, abs=1e-300)
        same((x.reshape(100, 1000) * s + 2.5).max(axis=1).get(), (xn.reshape(100, 1000) * s + 2.5).max(axis=1))
    assert compiled() - c0 <= 1


AOT_USE = """
import math, sys
import numpy as np
import loom, loom.aot

@loom.fuse
def h(x, a):
    return x * a + 1.0

p = loom.aot.compile(h, [(loom.aot.Array("float32", 1), 3.0)], targets="host", path=sys.argv[1], index_widths=32)
assert "scalar parameters" in loom.aot.describe(p)
loom.load_bundle(p, jit=False)
xn = np.linspace(-1, 1, 100).astype(np.float32)
c0 = loom.stats()["kernels_compiled"]
for a in (5.0, -0.0, math.nan, 1e30):
    r, want = h(xn, a), xn * np.float32(a) + np.float32(1.0)  # NumPy in, NumPy out: no copy kernel
    assert np.array_equal(r, want, equal_nan=True) and np.array_equal(np.signbit(r), np.signbit(want)), (a, r, want)
assert loom.stats()["kernels_compiled"] == c0
print("ok")
"""


def test_aot_bundle_takes_new_scalar_values(tmp_path):
    """A kernel bundled with the scalar 3.0 runs with any other scalar, without a compile (jit off; in a
    fresh process, so that no bundle stays loaded in this one)."""
    import subprocess
    import sys
    (tmp_path / "use.py").write_text(AOT_USE)
    r = subprocess.run([sys.executable, "use.py", str(tmp_path / "h.lbun")], cwd=tmp_path, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr
