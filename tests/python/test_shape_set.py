"""a.shape = s (NumPy's and CuPy's in-place reshape, python/src/array.c -> loom._ndarray._set_shape): the
same elements under the new shape without a copy, checked against NumPy doing the same: C-ordered arrays,
-1 inferred, an int, 0-d and empty arrays, lazy values, writes through the reshaped array reaching the
memory other views share; NumPy's errors where the shape does not fit (ValueError) and AttributeError
where the memory would need a copy (F order, strided views)."""
import numpy as np
import pytest

import loom


def pair(shape, order="C"):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape, order=order)
    return x, loom.asarray(x, order=order) if order == "F" else loom.asarray(x)


@pytest.mark.parametrize("shape,new", [((2, 3), (3, 2)), ((2, 3), (3, -1)), ((2, 3), 6), ((4, 1, 6), (2, 2, -1, 3)),
                                       ((), (1, 1)), ((1,), ()), ((0, 3), (3, 0)), ((0, 3), (-1, 2))])
def test_shape_set_like_numpy(shape, new):
    x, a = pair(shape)
    x.shape = new
    a.shape = new
    assert a.shape == x.shape
    np.testing.assert_array_equal(loom.asnumpy(a), x)


def test_shape_set_lazy_value_and_shared_memory():
    x, a = pair((3, 4))
    lz = a * 2  # a lazy value: becomes its reshape
    lz.shape = (2, 6)
    np.testing.assert_array_equal(loom.asnumpy(lz), (x * 2).reshape(2, 6))
    other = a[:]  # a view of a's memory made before the reshape
    a.shape = (12,)
    a[5] = -1.0
    x[1, 1] = -1.0
    np.testing.assert_array_equal(loom.asnumpy(other), x)
    np.testing.assert_array_equal(loom.asnumpy(a), x.reshape(12))


def test_shape_set_errors():
    x, a = pair((2, 3))
    with pytest.raises(ValueError):
        x.shape = (4,)
    with pytest.raises(ValueError):
        a.shape = (4,)
    with pytest.raises(TypeError):
        a.shape = "ab"
    for xp_arr in (np.zeros((2, 3), order="F"), loom.asarray(np.zeros((2, 3), order="F"), order="F")):
        with pytest.raises(AttributeError, match="(?i)incompatible shape"):
            xp_arr.shape = (3, 2)
    for xp in (np, loom):
        s = xp.asarray(np.arange(12.0).reshape(3, 4))[:, :3]
        with pytest.raises(AttributeError, match="(?i)incompatible shape"):
            s.shape = (9,)
        assert s.shape == (3, 3)
        e = xp.asarray(np.arange(12.0).reshape(3, 4))[:, ::2]  # strides (32, 16): one stride of 16 fits
        e.shape = (6,)
        np.testing.assert_array_equal(loom.asnumpy(e) if xp is loom else e, [0, 2, 4, 6, 8, 10])
    with pytest.raises(AttributeError):
        del a.shape
