"""Host math calls with a compile-time argument (x ** (1 / 2.2), arctan2(y, 0.5), hypot(x, 3.0), fmod(x, 0.3)).

Each libm call of a host kernel becomes a call of a scalar wrapper (codegen/math.c lanes_fn: lane 0 of SLEEF's
widest vector variant) whose vector-function-abi-variant mappings let the loop vectorizer widen it. LLVM's
interprocedural constant propagation used to fold a constant argument into that internal wrapper and drop the
parameter; the mappings, which name a function of two arguments, then no longer fitted, the loop stayed scalar
and ran a 16-lane call a point: x ** (1 / 2.2) on 2M float32 took 70-185 ms against NumPy's 2.3 (fresh2
gamma_correct). The wrapper is now kept as declared (llvm.compiler.used). Checked here: the kernel's loop calls
the vector variant, and the values agree with NumPy."""
import re

import numpy as np
import pytest

import loom

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)  # the default device of this run

CASES = [
    ("power", lambda x: x ** (1 / 2.2), lambda a: a ** (1 / 2.2)),
    ("power", lambda x: loom.power(x, 0.37), lambda a: np.power(a, 0.37)),
    ("arctan2", lambda x: loom.arctan2(x, 0.5), lambda a: np.arctan2(a, 0.5)),
    ("arctan2", lambda x: loom.arctan2(0.25, x), lambda a: np.arctan2(0.25, a)),
    ("hypot", lambda x: loom.hypot(x, 3.0), lambda a: np.hypot(a, 3.0)),
    ("fmod", lambda x: loom.fmod(x, 0.3), lambda a: np.fmod(a, 0.3)),
]


def vector_calls(text: str) -> set:
    """the names of functions called with vector arguments in an LLVM dump"""
    return set(re.findall(r"call (?:fastcc )?<\d+ x (?:float|double)> @([\w.]+)\(", text))


@pytest.mark.skipif(ON_GPU, reason="the host's generated code (the default device is a GPU)")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("i", range(len(CASES)))
def test_constant_argument_keeps_the_vector_call(i: int, dtype: str) -> None:
    name, f, _ = CASES[i]
    x = loom.asarray(np.linspace(0.1, 5.0, 4099).astype(dtype))
    text = loom.inspect(f(x), what="llvm")["llvm"]
    if "loom.vf1." not in text:
        pytest.skip(f"no SLEEF vector variant of {name} for {dtype} in this build")
    assert vector_calls(text), f"{name} {dtype}: the loop calls no vector variant"
    # the scalar wrapper keeps both parameters (two-argument functions)
    for m in re.finditer(r"define internal [^@]*@loom\.vf1\.(\w+)\(([^)]*)\)", text):
        assert m.group(2).count(",") == 1, m.group(0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("i", range(len(CASES)))
def test_constant_argument_values(i: int, dtype: str) -> None:
    _, f, g = CASES[i]
    a = np.concatenate([np.linspace(-7.0, 7.0, 10007), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 1e30]]).astype(dtype)
    if CASES[i][0] == "power":
        a = np.abs(a)  # (a negative base with a fractional exponent is NaN in both: kept by -inf, nan)
    got = loom.asnumpy(f(loom.asarray(a)))
    with np.errstate(all="ignore"):
        want = g(a)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=float(4 * np.finfo(dtype).eps), atol=0, equal_nan=True)
