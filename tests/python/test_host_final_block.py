"""The FINAL phase of host row reductions over blocks of O points (codegen/lower_host_final_block.c): a math
function of each row's reductions (arccosh(1 + 2 |u - v|^2 / ((1 - |u|^2)(1 - |v|^2))), log(x.sum(1)),
exp(x.max(-1))) runs as a vectorized loop over a block of stashed row results instead of one scalar call a row.
Against NumPy (float64 references) for every block edge (O counts around the block of 256), 3-d O dims,
transposed and strided inputs, argmax phases, NaN, empty and single rows; and, in a child process with
LOOM_HOST_FINAL_BLOCK=0, the same bits (the folds are unchanged and the vector math is the scalar call's)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import loom

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)  # the default device of this run


def poincare(xp, u, v):
    d = u - v
    uu = 1.0 - xp.sum(u * u, axis=-1)
    vv = 1.0 - xp.sum(v * v, axis=-1)
    return xp.arccosh(1.0 + 2.0 * xp.sum(d * d, axis=-1) / (uu * vv))


EXPRS = {
    "poincare": lambda xp, u, v: poincare(xp, u, v),
    "log_sum": lambda xp, u, v: xp.log(xp.sum(u * u, axis=-1) + 0.5),
    "exp_max": lambda xp, u, v: xp.exp(xp.max(u, axis=-1)),
    "tanh_mean_ratio": lambda xp, u, v: xp.tanh(xp.mean(u, axis=-1) / (xp.mean(v * v, axis=-1) + 1.0)),
    "log_argmax": lambda xp, u, v: xp.log1p(xp.argmax(u, axis=-1).astype(u.dtype)) * xp.sin(xp.min(v, axis=-1)),
}


def data(shape: tuple, dtype: str, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    u = rng.uniform(-0.3, 0.3, shape).astype(dtype)
    v = rng.uniform(-0.3, 0.3, shape).astype(dtype)
    if u.size > 40:
        u.flat[37] = np.nan
    return u, v


def check(name: str, u: np.ndarray, v: np.ndarray) -> None:
    f = EXPRS[name]
    got = loom.asnumpy(f(loom, loom.asarray(u), loom.asarray(v)))
    with np.errstate(all="ignore"):
        want = f(np, u.astype(np.float64), v.astype(np.float64))
    assert got.shape == want.shape
    tol = 5e-6 if u.dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want.astype(got.dtype), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("name", list(EXPRS))
@pytest.mark.parametrize("rows", [1, 255, 256, 257, 1000, 4099])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows(name: str, rows: int, dtype: str) -> None:
    u, v = data((rows, 10), dtype, rows)
    check(name, u, v)


@pytest.mark.parametrize("name", list(EXPRS))
def test_3d_strided_transposed(name: str) -> None:
    u, v = data((7, 300, 13), "float32", 1)
    check(name, u, v)  # two O dims: a block crosses rows of the first
    check(name, u[:, ::3, ::-2], v[:, ::3, ::-2])  # strided, reversed rows
    a, b = data((12, 999), "float64", 2)
    check(name, a.T, b.T)  # rows that stride down a column


def test_empty_and_long_rows() -> None:
    u, v = data((0, 10), "float32", 3)
    check("log_sum", u, v)
    u, v = data((300, 0), "float32", 3)
    got = loom.asnumpy(loom.log(loom.sum(loom.asarray(u) ** 2, axis=-1) + 0.5))
    np.testing.assert_allclose(got, np.log(np.full(300, 0.5, np.float32)))
    u, v = data((300, 5000), "float32", 4)
    check("poincare", u, v)


CHILD = ("import numpy as np, loom, sys\n"
         "sys.path.insert(0, sys.argv[2])\n"
         "from test_host_final_block import EXPRS, data\n"
         "r = []\n"
         "for name in EXPRS:\n"
         "    for shape in [(1000, 10), (7, 300, 13)]:\n"
         "        u, v = data(shape, 'float32', 5)\n"
         "        r.append(loom.asnumpy(EXPRS[name](loom, loom.asarray(u), loom.asarray(v))))\n"
         "np.savez(sys.argv[1], *r)\n")


@pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")
def test_same_bits_as_without_blocks(tmp_path) -> None:
    out = {}
    for knob in ("1", "0"):
        f = str(tmp_path / f"r{knob}.npz")
        env = dict(os.environ, LOOM_HOST_FINAL_BLOCK=knob, LOOM_CACHE_DIR=str(tmp_path / f"cache{knob}"))
        res = subprocess.run([sys.executable, "-c", CHILD, f, os.path.dirname(__file__)], env=env, capture_output=True,
                             text=True, timeout=600)
        assert res.returncode == 0, res.stderr
        with np.load(f) as z:
            out[knob] = [z["arr_%d" % i] for i in range(len(z.files))]
    for a, b in zip(out["1"], out["0"]):
        np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")
def test_final_loop_is_vectorized() -> None:
    u, v = data((1000, 10), "float32", 6)
    text = loom.inspect(poincare(loom, loom.asarray(u), loom.asarray(v)), what="llvm")["llvm"]
    if "loom.vf1." not in text:
        pytest.skip("no SLEEF vector variants in this build")
    runs = re.findall(r"^define [^@]*@\w+_run\(.*?^}", text, re.M | re.S)  # (the math wrappers call it too)
    assert runs and any(re.search(r"call (?:fastcc )?<\d+ x float> @[\w.]*acoshf", r) for r in runs), \
        "run() calls no vector arccosh: the FINAL loop was not vectorized"
