"""A math function gives the same bits for the same input wherever the input sits: in a vector lane of the
main loop, in the vectorized or scalar remainder, in a kernel the vectorizer leaves scalar, in another
kernel. On the host every width runs SLEEF's widest vector variant (codegen/math.c lanes_fn): SLEEF's
scalar functions and narrower ISAs' variants are different code and differed in the last bit (exp2_u35 of
-483.26, logf, cbrt, exp), so x // exp2(y) of equal values was 0 in one kernel and 1 in another
(scripts/fuzz_numpy.py seed 7625961116623100201). Reference: the value at position 0, bit for bit; and NumPy's
to within a few ulp."""
import numpy as np
import pytest

import loom

FUNCS = ["exp", "exp2", "expm1", "log", "log2", "log1p", "sin", "cos", "tan", "tanh", "sinh", "arcsinh", "cbrt",
         "arctan"]
SIZES = [1, 3, 7, 9, 15, 17, 31, 33, 100, 1001]


def inputs(fn: str, dtype: str, n: int = 64) -> np.ndarray:
    rng = np.random.default_rng(abs(hash((fn, dtype))) % 2**32)
    if fn.startswith("log"):
        x = np.exp(rng.uniform(-60, 60, n))
    elif fn in ("exp", "expm1", "sinh"):
        x = rng.uniform(-80, 80, n)
    elif fn == "exp2":
        x = np.concatenate([rng.uniform(-120, 120, n - 1), [-483.2608512824975 if dtype == "float64" else -120.3]])
    else:
        x = rng.uniform(-50, 50, n)
    return x.astype(dtype)


@pytest.mark.parametrize("fn", FUNCS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_same_bits_at_every_position(fn: str, dtype: str) -> None:
    itype = np.int32 if dtype == "float32" else np.int64
    for x in inputs(fn, dtype, 24):
        for n in SIZES:
            got = getattr(loom, fn)(loom.asarray(np.full(n, x, dtype))).get()
            bits = got.view(itype)
            assert (bits == bits[0]).all(), f"{fn}({x!r}) over {n} points: {np.unique(got)}"


@pytest.mark.parametrize("fn", ["exp2", "exp", "log", "cbrt"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_same_bits_in_every_kernel(fn: str, dtype: str) -> None:
    """f(x) stored by one kernel, then divided by f(x) computed again inside a reduction's kernel: 1"""
    x = inputs(fn, dtype, 8).reshape(2, 1, 4)
    lx = loom.asarray(x)
    first = getattr(loom, fn)(lx)
    loom.eval(first)
    again = getattr(loom, fn)(lx)
    q = first // again
    flags = loom.all(again, axis=0)
    loom.eval(q, flags)
    want = np.where(np.isfinite(getattr(np, fn)(x)) & (getattr(np, fn)(x) != 0), 1.0, np.nan).astype(dtype)
    got = q.get()
    ok = np.isnan(want) | (got == want)
    assert ok.all(), f"{fn}: {got.ravel()} for x = {x.ravel()}"


@pytest.mark.parametrize("fn", FUNCS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_close_to_numpy(fn: str, dtype: str) -> None:
    x = inputs(fn, dtype, 257)
    got = getattr(loom, fn)(loom.asarray(x)).get()
    want = getattr(np, fn)(x.astype(np.float64))
    fin = np.isfinite(want) & (np.abs(want) < np.finfo(dtype).max)
    np.testing.assert_allclose(got[fin], want[fin].astype(dtype), rtol=float(8 * np.finfo(dtype).eps), atol=0.0)
