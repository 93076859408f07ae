"""arange of integer arguments is the index expression start + step * i (python/loom/_creation.py
_index_arange): no stored array, computed in the kernels that read it. Against NumPy: values and dtypes for
positive and negative steps, explicit integer and float dtypes (values exact), NumPy's dtype where the
arguments are NumPy integers, empty results and the NumPy path's errors (step 0); values out of the
dtype's range and float arguments take NumPy's path; a lazy arange is writable, reshapes, and fuses
(one-hot masks, a traced @fuse body); the graph holds an iota, not an input."""
import numpy as np
import pytest

import loom


ARGS = [(10,), (3, 17), (17, 3, -2), (0, 100, 7), (-5, 5), (0,), (3, 3), (10, 0), (-3, -20, -4),
        (2**40, 2**40 + 5), (np.int32(3), np.int64(10)), (np.uint8(2), 9), (0, 5, 1, "float32"), (0, 5, 1, "int8"),
        (0, 300, 1, "int8"), (0, 5, 1, "uint16"), (0, 10, 3, "float16"), (0, 4000, 1, "float16"), (0, 2049, 2, "float16"),
        (5, -5, -1, "float32"), (0, 2**24 + 1, 2**23, "float32"), (0, 2**25, 2**20 + 1, "float32"), (1, 5, 1, "complex64"),
        (0.5, 4), (0, 5, 0.5), (0, 2**63 - 1, 2**62), (0, 7, 1, "float64"), (-2**31, -2**31 + 5, 1, "int32")]


@pytest.mark.parametrize("args", ARGS, ids=[repr(a) for a in ARGS])
def test_values_and_dtype_are_numpys(args):
    pos, kw = (args[:3], {"dtype": args[3]}) if len(args) == 4 else (args, {})
    want = np.arange(*pos, **kw)
    got = loom.arange(*pos, **kw).get()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_step_zero_raises_as_numpy():
    with pytest.raises(Exception) as want:
        np.arange(0, 5, 0)
    with pytest.raises(type(want.value)):
        loom.arange(0, 5, 0)


def test_graph_holds_an_iota_and_no_input():
    g = loom.inspect(loom.arange(3, 40, 3) * 2, what=("graph",))["graph"]
    assert "iota" in g and "input" not in g


def test_writable_reshaped_and_fused():
    a = loom.arange(12)
    a[3] = -1
    want = np.arange(12)
    want[3] = -1
    np.testing.assert_array_equal(a.get(), want)
    np.testing.assert_array_equal(loom.arange(12).reshape(3, 4).T.get(), np.arange(12).reshape(3, 4).T)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 37)).astype(np.float32)
    lab = rng.integers(-2, 40, 50)  # some out of range: a row with no match sums to 0
    want = np.sum(np.where(lab[:, None] == np.arange(37), x, 0.0), axis=-1)
    f = loom.fuse(lambda x, lab: loom.sum(loom.where(lab[:, None] == loom.arange(x.shape[-1]), x, 0.0), axis=-1))
    np.testing.assert_array_equal(f(loom.asarray(x), loom.asarray(lab)).get(), want)
    lengths = rng.integers(0, 37, 50)
    mask = loom.arange(37)[None, :] < loom.asarray(lengths)[:, None]
    np.testing.assert_array_equal(mask.get(), np.arange(37)[None, :] < lengths[:, None])
