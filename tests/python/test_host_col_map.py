"""Host column reductions followed by a map of every point (x / x.sum(0), standardized columns, a softmax
over axis 0, x == x.max(0)): the column split runs the MAP phase as a colpart of its own over each slab of
rows (codegen/lower_host_outer.c col_map_phase, runtime/host_launch.c), reading the finished column
statistics. Results against NumPy in float64 (rounded to the dtype) at shapes that take the split (at most
4096 columns, enough rows for two slabs or more), 1-d and 2-d kept axes, several reduced axes, int32,
bool outputs and NaN; and the kernel has the split entry (so the path is the one tested). On a GPU machine the
same expressions run on the GPU (its default device) against the same references."""
import numpy as np
import pytest

import loom

TOL = {"float32": 3e-5, "float64": 1e-12}


def data(shape: tuple, dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        return rng.integers(-1000, 1000, size=shape).astype(np.int32)
    return (rng.uniform(0.5, 2.0, size=shape)).astype(dtype)


def col_stochastic(xp, x, axis=0):
    return x / xp.sum(x, axis=axis, keepdims=True)


def standardize(xp, x, axis=0):
    return (x - xp.mean(x, axis=axis, keepdims=True)) / (xp.std(x, axis=axis, keepdims=True) + 1e-5)


def softmax0(xp, x, axis=0):
    e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    return e / xp.sum(e, axis=axis, keepdims=True)


def from_max(xp, x, axis=0):
    return x - xp.max(x, axis=axis, keepdims=True)


CASES = [(col_stochastic, 0), (standardize, 0), (softmax0, 0), (from_max, 0), (col_stochastic, (0, 1)),
         (standardize, (0, 1))]
SHAPES = [(1000, 300), (4099, 17), (300, 4096), (40, 50, 31)]


def ref(fn, a: np.ndarray, axis) -> np.ndarray:
    return fn(np, a.astype(np.float64), axis=axis)


@pytest.mark.parametrize("fn,axis", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_column_map_against_float64(fn, axis, shape: tuple, dtype: str) -> None:
    if isinstance(axis, tuple) and len(shape) < 3:
        axis = 0
    a = data(shape, dtype, seed=len(fn.__name__) + shape[0])
    got = loom.asnumpy(fn(loom, loom.asarray(a), axis=axis))
    want = ref(fn, a, axis)
    assert got.dtype == np.dtype(dtype) and got.shape == a.shape
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=TOL[dtype], atol=TOL[dtype])


def test_int_and_bool_outputs() -> None:
    a = data((3001, 77), "int32", seed=3)
    x = loom.asarray(a)
    np.testing.assert_array_equal(loom.asnumpy(x - loom.min(x, axis=0)), a - a.min(0))
    np.testing.assert_array_equal(loom.asnumpy(x == loom.max(x, axis=0)), a == a.max(0))
    # int32 sums of 3001 values in [-1000, 1000) do not overflow; true division gives float64 as NumPy
    got = loom.asnumpy(x / loom.sum(x, axis=0, keepdims=True))
    np.testing.assert_allclose(got, a / a.sum(0, keepdims=True), rtol=1e-12)


def test_nan_stays_in_its_column() -> None:
    a = data((2000, 64), "float32", seed=5)
    a[777, 9] = np.nan
    got = loom.asnumpy(col_stochastic(loom, loom.asarray(a)))
    assert np.isnan(got[:, 9]).all()
    ok = np.ones(64, bool)
    ok[9] = False
    np.testing.assert_allclose(got[:, ok], ref(col_stochastic, a, 0)[:, ok], rtol=3e-5)


def test_strided_input_and_empty() -> None:
    a = data((2400, 300), "float32", seed=7)
    got = loom.asnumpy(standardize(loom, loom.asarray(a)[::2, 10:200]))
    np.testing.assert_allclose(got, ref(standardize, a[::2, 10:200], 0), rtol=3e-5, atol=3e-5)
    e = np.zeros((0, 5), np.float32)
    assert loom.asnumpy(col_stochastic(loom, loom.asarray(e))).shape == (0, 5)


ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)  # the default device of this run


@pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")
def test_the_split_entry_is_compiled() -> None:
    a = data((1000, 300), "float32", seed=11)
    x = loom.asarray(a)
    with loom.capture_dumps("llvm", echo=False) as d:
        loom.eval(softmax0(loom, x + 0.25))  # (dumps make the passes run: the kernel is looked at here)
    assert "_colpart(" in d.text, "the column map did not take the column split"
