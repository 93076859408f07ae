"""Multi-phase reductions (a later phase reads an earlier one's result: var/std, BatchNorm statistics,
x - x.mean()) against NumPy, with the shapes that make the GPU launcher split them phase by phase
(codegen/gpu_phases.c: few output points and long reduced axes; ROW and COL strategies, thread and
block finishes, MAP phases, argmax phases). On the host the same expressions run the host plans; the
PTX of the split entries is checked without a GPU (and assembled with ptxas -arch=sm_90 where the CUDA
toolkit is installed). Edge cases: empty, one element, NaN, keepdims, float16/32/64, non-contiguous."""
import os
import shutil
import subprocess
import tempfile
import warnings

import numpy as np
import pytest

import loom
from conftest import check

FLOATS = ["float16", "float32", "float64"]


def rtol(dtype: str) -> float:
    return {"float16": 5e-3, "float32": 5e-5}.get(dtype, 1e-10)


def data(shape: tuple, dtype: str, seed: int = 0, offset: float = 3.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    # an offset mean: a one-pass sum-of-squares formula would lose digits here, the two-phase one must not
    return (rng.standard_normal(shape) + offset).astype(dtype)


# float16 sums of more than ~65504 / 9 such values overflow (NumPy: inf): float16 stays below that
SIZES = [(dt, n) for dt in FLOATS for n in (1, 7, 8193, 70001, 1 << 20) if dt != "float16" or n < 8200]


@pytest.mark.parametrize("dtype,n", SIZES)
def test_var_std_all(dtype: str, n: int) -> None:
    a = data((n,), dtype, seed=n)
    x = loom.asarray(a)
    r = a.astype(np.float32) if dtype == "float16" else a  # float16: float32's result, rounded
    for ddof in (0, 1) if n > 1 else (0,):
        check(loom.var(x, ddof=ddof), np.var(r, ddof=ddof).astype(dtype), rtol=rtol(dtype))
        check(loom.std(x, ddof=ddof), np.std(r, ddof=ddof).astype(dtype), rtol=rtol(dtype))


def test_var_empty_and_nan() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.var(np.zeros(0, np.float32))
        got = loom.var(loom.asarray(np.zeros(0, np.float32))).get()
    assert np.isnan(got) and np.isnan(want) and got.dtype == want.dtype
    a = data((70001,), "float64")
    a[12345] = np.nan
    assert np.isnan(loom.var(loom.asarray(a)).get())
    a = data((40000, 3), "float32")
    a[777, 1] = np.nan
    check(loom.var(loom.asarray(a), axis=0), np.var(a, axis=0), rtol=rtol("float32"))


COLUMNS = [(dt, sh) for dt in FLOATS for sh in ((1, 64), (100, 3), (20000, 64), (70000, 1), (5000, 700))
           if dt != "float16" or sh[0] < 6000]


@pytest.mark.parametrize("dtype,shape", COLUMNS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_column_mean_var(dtype: str, shape: tuple, keepdims: bool) -> None:
    """BatchNorm1d statistics: mean and variance over axis 0 of (batch, features)."""
    a = data(shape, dtype, seed=shape[0])
    x = loom.asarray(a)
    r = a.astype(np.float32) if dtype == "float16" else a
    mu, var = loom.mean(x, axis=0, keepdims=keepdims), loom.var(x, axis=0, keepdims=keepdims)
    check(mu, np.mean(r, axis=0, keepdims=keepdims).astype(dtype), rtol=rtol(dtype))
    check(var, np.var(r, axis=0, keepdims=keepdims).astype(dtype), rtol=rtol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_channel_stats_nchw(dtype: str) -> None:
    """BatchNorm2d statistics over (0, 2, 3), written as the mean of squared deviations."""
    a = data((8, 6, 64, 128), dtype, seed=5)  # 6 channels of 65536: 4 parts each on the GPU
    x = loom.asarray(a)
    mu = loom.mean(x, axis=(0, 2, 3), keepdims=True)
    var = loom.mean((x - mu) ** 2, axis=(0, 2, 3), keepdims=True)
    mu_n = np.mean(a, axis=(0, 2, 3), keepdims=True)
    check(mu, mu_n, rtol=rtol(dtype))
    check(var, np.mean((a - mu_n) ** 2, axis=(0, 2, 3), keepdims=True), rtol=rtol(dtype))


def test_non_contiguous() -> None:
    a = data((300, 401), "float64", seed=9)
    x = loom.asarray(a)
    check(loom.var(x[::2, 1::3]), np.var(a[::2, 1::3]))
    check(loom.var(x.T, axis=1), np.var(a.T, axis=1))
    check(loom.std(x[:, ::-1], axis=0), np.std(a[:, ::-1], axis=0))
    b = data((3, 50001), "float32", seed=10)
    check(loom.std(loom.asarray(b)[:, ::2], axis=1), np.std(b[:, ::2], axis=1), rtol=rtol("float32"))


@pytest.mark.parametrize("n", [5, 100003])
def test_normalize_whole_array(n: int) -> None:
    """A MAP phase after two REDUCE phases: (x - mean) / std of a whole array."""
    a = data((n,), "float32", seed=n)
    x = loom.asarray(a)
    got = ((x - x.mean()) / x.std()).get()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, (a - a.mean()) / a.std(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(9,), (120000,), (3, 40000)])
def test_argmax_after_mean(shape: tuple) -> None:
    """An argmax phase that reads a sum phase: the element farthest from the mean."""
    a = data(shape, "float64", seed=len(shape))
    x = loom.asarray(a)
    axis = None if len(shape) == 1 else 1
    check(loom.argmax(loom.abs(x - loom.mean(x, axis=axis, keepdims=True)), axis=axis),
          np.argmax(np.abs(a - np.mean(a, axis=axis, keepdims=True)), axis=axis))


def test_sibling_reductions_long_rows() -> None:
    """Independent phases in one kernel (max and min of the same rows) with few long rows."""
    a = data((4, 60000), "float32", seed=11)
    x = loom.asarray(a)
    check(loom.max(x, axis=1) - loom.min(x, axis=1), np.max(a, axis=1) - np.min(a, axis=1))


@pytest.mark.parametrize("nparts", [9, 15, 17, 64, 100, 263])
def test_finish_folds_every_part_in_order(nparts: int) -> None:
    """Full reductions long enough for the GPU's split (parts of 16K points folded by the finish entries,
    several records loaded ahead per step): a count of parts that is not a multiple of the step, the
    first of tied maxima in a late part (the fold keeps part order), a NaN or an inf only in the last
    part, integer sums that wrap, and a sum whose exact value a wrong or repeated part would change."""
    n = 16384 * nparts + 5
    rng = np.random.default_rng(nparts)
    a = rng.random(n, dtype=np.float32)
    a[n - 20000] = 2.0
    a[n - 3] = 2.0  # a later tie: argmax keeps the first
    x = loom.asarray(a)
    check(loom.argmax(x), np.argmax(a))
    check(loom.argmin(-x), np.argmin(-a))
    ones = np.ones(n, np.float32)
    check(loom.sum(loom.asarray(ones)), np.sum(ones, dtype=np.float64).astype(np.float32), rtol=0)
    b = a.copy()
    b[-1] = np.inf
    check(loom.any(~loom.isfinite(loom.asarray(b))), np.bool_(True))
    check(loom.any(~loom.isfinite(x)), np.bool_(False))
    b[-1] = np.nan
    check(loom.max(loom.asarray(b)), np.max(b))
    i = (np.arange(n) % 1000 + 2**30).astype(np.int32)
    check(loom.sum(loom.asarray(i), dtype=np.int32), np.sum(i, dtype=np.int32))
    check(loom.var(x), np.var(a.astype(np.float64)).astype(np.float32), rtol=1e-4)


# ---- the PTX of the split entries (no GPU needed) -----------------------------------------------------------
def ptx_of(fn) -> str:  # type: ignore[no-untyped-def]
    text = loom.inspect(fn, what="ptx")["ptx"]
    if text.startswith("unavailable"):
        pytest.skip(f"no PTX target in this build: {text}")
    return text


PTXAS = os.environ.get("LOOM_PTXAS", "/usr/local/cuda/bin/ptxas")


@pytest.mark.parametrize("which", ["var_all", "var_cols", "normalize", "argmax"])
def test_phase_split_ptx(which: str) -> None:
    a = data((4096, 64), "float32")
    b = data((1 << 16,), "float64")
    fns = {"var_all": lambda: loom.var(loom.asarray(b)),
           "var_cols": lambda: loom.var(loom.asarray(a), axis=0),
           "normalize": lambda: (loom.asarray(b) - loom.asarray(b).mean()) / loom.asarray(b).std(),
           "argmax": lambda: loom.argmax(loom.abs(loom.asarray(b) - loom.asarray(b).mean()))}
    text = ptx_of(fns[which])
    for entry in ("_part(", "_finish(", "_finishb("):
        assert entry in text, f"{which}: no {entry[:-1]} entry in the PTX"
    if not shutil.which(PTXAS) and not os.path.exists(PTXAS):
        return
    modules = [".version" + m for m in text.split(".version")[1:]]  # one module per kernel
    assert modules and all(".entry" in m for m in modules)
    with tempfile.TemporaryDirectory() as d:
        for i, module in enumerate(modules):
            path = os.path.join(d, f"k{i}.ptx")
            with open(path, "w") as f:
                f.write(module)
            r = subprocess.run([PTXAS, "-arch=sm_90", path, "-o", os.path.join(d, f"k{i}.cubin")],
                               capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, r.stderr


# ---- the COL part's block fold (codegen/gpu_colfold.c): a block folds its tile's parts in shared memory -----
# On the GPU these shapes split R into hundreds of parts; the launcher folds g of them a block of 512 (g =
# 512 / nO for nO <= 128: 170 for 3 columns, 8 for 64, 5 for 100 with 12 idle lanes; none beyond, where the
# items run as before) and the finish folds the tiles' records. 20007 rows: 625 parts, not a multiple of g.
FOLD_COLS = [1, 3, 24, 64, 100, 128, 129, 300]


@pytest.mark.parametrize("ncol", FOLD_COLS)
def test_fold_column_moments_large_mean(ncol: int) -> None:
    """Mean and variance of columns whose mean is large against their spread (Chan's merge of the tile's
    parts must keep the digits), against NumPy in float64."""
    rng = np.random.default_rng(ncol)
    a = (1e8 + rng.standard_normal((20007, ncol))).astype(np.float64)
    x = loom.asarray(a)
    check(loom.mean(x, axis=0), np.mean(a, axis=0), rtol=1e-12)
    check(loom.var(x, axis=0), np.var(a, axis=0), rtol=1e-7)
    f = (1e4 + rng.standard_normal((20007, ncol))).astype(np.float32)
    y = loom.asarray(f)
    f64 = f.astype(np.float64)
    check(loom.mean(y, axis=0), np.mean(f64, axis=0).astype(np.float32), rtol=1e-6)
    check(loom.var(y, axis=0), np.var(f64, axis=0).astype(np.float32), rtol=2e-3)
    v1, v2 = loom.var(y, axis=0).get(), loom.var(y, axis=0).get()
    assert v1.tobytes() == v2.tobytes(), "the same launch must give the same bits"


@pytest.mark.parametrize("ncol", [3, 64, 300])
def test_fold_column_specials(ncol: int) -> None:
    """NaN and inf in single parts of some columns: the fold carries them to those columns only."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((20007, ncol)).astype(np.float32) + 5
    a[10001, 0] = np.nan
    a[20006, ncol - 1] = np.inf  # the last part of the last tile
    a[33, ncol // 2] = -np.inf
    if ncol > 2:
        a[3000, 1], a[17000, 1] = np.inf, -np.inf
    x = loom.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want_mean = np.mean(a.astype(np.float64), axis=0).astype(np.float32)
        want_var = np.var(a.astype(np.float64), axis=0).astype(np.float32)
    check(loom.mean(x, axis=0), want_mean, rtol=1e-5)
    got = loom.var(x, axis=0).get()
    assert np.array_equal(np.isnan(got), np.isnan(want_var)), (np.isnan(got), np.isnan(want_var))
    fin = ~np.isnan(want_var)
    np.testing.assert_allclose(got[fin], want_var[fin], rtol=1e-4)
    check(loom.max(x, axis=0), np.max(a, axis=0))
    check(loom.min(x, axis=0), np.min(a, axis=0))


@pytest.mark.parametrize("ncol", [3, 64, 129, 4096])
def test_fold_column_sums_and_args(ncol: int) -> None:
    """Single-phase column reductions through the fold: integer sums that wrap, an exact count, the first
    of tied maxima (one tie inside a tile, one in a later tile), a complex sum."""
    rows = 20007 if ncol < 4096 else 2055
    rng = np.random.default_rng(ncol + 1)
    i = (rng.integers(0, 1000, (rows, ncol)) + 2**30).astype(np.int32)
    check(loom.sum(loom.asarray(i), axis=0, dtype=np.int32), np.sum(i, axis=0, dtype=np.int32))
    ones = np.ones((rows, ncol), np.float32)
    check(loom.sum(loom.asarray(ones), axis=0), np.full(ncol, rows, np.float32), rtol=0)
    a = rng.random((rows, ncol), dtype=np.float32)
    a[rows // 2, :] = 2.0
    a[rows // 2 + 40, :] = 2.0  # the next part, same tile for most g
    a[rows - 1, :] = 2.0  # the last tile
    x = loom.asarray(a)
    check(loom.argmax(x, axis=0), np.argmax(a, axis=0))
    check(loom.argmin(-x, axis=0), np.argmin(-a, axis=0))
    c = (rng.standard_normal((rows, ncol)) + 1j * rng.standard_normal((rows, ncol))).astype(np.complex128)
    np.testing.assert_allclose(loom.sum(loom.asarray(c), axis=0).get(), np.sum(c, axis=0), rtol=1e-10)


def test_fold_ptx() -> None:
    """The COL part of a column variance carries the fold: shared record slots and barriers."""
    text = ptx_of(lambda: loom.var(loom.asarray(data((4096, 64), "float32")), axis=0))
    part = text[text.index("_part("):]
    part = part[:part.index("\n}")]
    assert "loom_$_colfold" in text and "bar.sync" in part and "st.shared" in part and "ld.shared" in part
