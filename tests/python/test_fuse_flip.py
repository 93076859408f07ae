"""flip / fliplr / flipud of a traced value inside @loom.fuse (before: a TypeError, "flip of a traced value is
not supported yet"; bench/suite/workloads_fresh2.py rot180_symmetrize): the same view as basic indexing with
step -1, checked against NumPy."""
import numpy as np
import pytest

import loom


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), (-1, 0)])
def test_flip_in_fuse(axis):
    x = np.random.default_rng(0).standard_normal((5, 4, 3)).astype(np.float32)
    f = loom.fuse(lambda a: 0.5 * (a + loom.flip(a, axis)))
    np.testing.assert_array_equal(loom.asnumpy(f(loom.asarray(x))), 0.5 * (x + np.flip(x, axis)))


def test_fliplr_flipud_in_fuse():
    x = np.arange(35, dtype=np.float64).reshape(5, 7)
    f = loom.fuse(lambda a: loom.fliplr(a) * 2.0 + loom.flipud(a))
    np.testing.assert_array_equal(loom.asnumpy(f(loom.asarray(x))), np.fliplr(x) * 2.0 + np.flipud(x))


def test_flip_rot180_reduction_in_fuse():
    x = np.random.default_rng(1).standard_normal((33, 33)).astype(np.float32)
    f = loom.fuse(lambda a: loom.sum(a * loom.flip(a), axis=0))
    np.testing.assert_allclose(loom.asnumpy(f(loom.asarray(x))), np.sum(x * np.flip(x), axis=0), rtol=1e-5, atol=1e-5)


def test_flip_bad_axis_in_fuse():
    with pytest.raises(np.exceptions.AxisError):
        loom.fuse(lambda a: loom.flip(a, 3))(loom.asarray(np.zeros((2, 3, 4))))
