"""unwrap, polyval and append of loom arrays as loom graphs (python/loom/_numeric.py), against NumPy's
results bit for bit (the same operations in the same order: no reassociation; unwrap on a GPU, whose
cumsum is a parallel scan, within a few units in the last place), over dtypes, axes,
periods, discontinuities, empty and one-coefficient polynomials, and NumPy's dtype promotion."""
import warnings

import numpy as np
import pytest

import loom


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def same(got, want, scan=False):
    """Bit for bit; where the result sums along an axis (scan: unwrap's cumsum of corrections), a GPU's
    parallel scan adds in another order than NumPy's loop: there within a few units in the last place."""
    on_gpu = scan and loom.cuda.is_available()  # (the default device is the GPU there)
    got = np.asarray(host(got))
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if on_gpu and want.dtype.kind == "f":
        eps = np.finfo(want.dtype).eps
        np.testing.assert_allclose(got, want, rtol=64 * eps, atol=64 * eps * float(np.nanmax(np.abs(want), initial=1.0)))
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_unwrap(dtype, axis):
    r = np.random.default_rng(1)
    if np.dtype(dtype).kind == "f":
        p = np.cumsum(r.standard_normal((4, 300)) * 2, axis=1).astype(dtype)
    else:
        p = r.integers(-20, 20, (4, 300)).astype(dtype)
    lp = loom.asarray(p)
    same(loom.unwrap(lp, axis=axis), np.unwrap(p, axis=axis), scan=True)
    same(loom.unwrap(lp, axis=axis, period=6), np.unwrap(p, axis=axis, period=6), scan=True)
    same(loom.unwrap(lp, discont=4.0, axis=axis), np.unwrap(p, discont=4.0, axis=axis), scan=True)


def test_unwrap_edges():
    same(loom.unwrap(loom.asarray(np.array([0.5]))), np.unwrap(np.array([0.5])))
    same(loom.unwrap(loom.asarray(np.zeros(0))), np.unwrap(np.zeros(0)))
    p = np.array([0.0, np.pi, 0.0, -np.pi, np.nan, 1.0])  # the boundary case and a NaN
    same(loom.unwrap(loom.asarray(p)), np.unwrap(p))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's own inf * 0
def test_polyval():
    r = np.random.default_rng(2)
    x = r.standard_normal(1000)
    lx = loom.asarray(x)
    for p in ([1, 2, 3], np.array([0.5, -1.0, 2.0, 3.0], np.float32), [], [3]):
        same(loom.polyval(p, lx), np.polyval(p, x))
    same(loom.polyval(loom.asarray(np.array([1.5, 2.0])), lx.astype(np.float32)), np.polyval(np.array([1.5, 2.0]), x.astype(np.float32)))
    xi = np.arange(10, dtype=np.int32)
    same(loom.polyval([1, 2, 3], loom.asarray(xi)), np.polyval([1, 2, 3], xi))
    xs = np.array([np.inf, -np.inf, np.nan, 0.0])
    same(loom.polyval([2.0, 0.0, 1.0], loom.asarray(xs)), np.polyval([2.0, 0.0, 1.0], xs))
    q = np.poly1d([1.0, 2.0])
    np.testing.assert_array_equal(host(loom.polyval(q, lx)), np.polyval(q, x))  # poly1d: NumPy's
    comp = loom.polyval(loom.asarray(np.array([1.0, 2.0])), loom.poly1d([1.0, 3.0]))  # composition: a poly1d
    assert isinstance(comp, loom.poly1d)
    want = np.polyval(np.array([1.0, 2.0]), np.poly1d([1.0, 3.0]))
    np.testing.assert_array_equal(host(comp.coeffs), np.asarray(getattr(want, "coeffs")))


def test_append():
    a = np.arange(6.0).reshape(2, 3)
    la = loom.asarray(a)
    same(loom.append(la, [1, 2]), np.append(a, [1, 2]))
    same(loom.append(la, np.ones((1, 3), np.float32), axis=0), np.append(a, np.ones((1, 3), np.float32), axis=0))
    same(loom.append(loom.asarray(np.arange(3)), loom.asarray(np.array([0.5]))), np.append(np.arange(3), [0.5]))
    with pytest.raises(ValueError):
        loom.append(la, np.ones((2, 2)), axis=0)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # 2-d vectors: NumPy 2's deprecation, warned by both
@pytest.mark.parametrize("sa,sb", [((5, 3), (5, 3)), ((5, 3), (3,)), ((4, 1, 3), (6, 3)), ((5, 2), (5, 2)),
                                   ((5, 2), (5, 3)), ((5, 3), (2,)), ((3,), (3,))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_cross(sa, sb, dtype):
    """Against the installed NumPy: 2-d vectors are crossed with a DeprecationWarning before NumPy 2.5 and
    refused with its ValueError since."""
    r = np.random.default_rng(len(sa) + len(sb))
    a, b = (r.standard_normal(sa) * 5).astype(dtype), (r.standard_normal(sb) * 5).astype(dtype)
    try:
        want = np.cross(a, b)
    except ValueError as e:
        with pytest.raises(ValueError, match="3-dimensional vectors"):
            loom.cross(loom.asarray(a), loom.asarray(b))
        assert "3-dimensional" in str(e)
        return
    same(loom.cross(loom.asarray(a), loom.asarray(b)), want)


def test_cross_axes_errors_and_warning():
    r = np.random.default_rng(3)
    a, b = r.standard_normal((3, 5)), r.standard_normal((5, 3))
    same(loom.cross(loom.asarray(a), loom.asarray(b), axisa=0), np.cross(a, b, axisa=0))
    same(loom.cross(loom.asarray(a), loom.asarray(b), axisa=0, axisc=0), np.cross(a, b, axisa=0, axisc=0))
    c = r.standard_normal((3, 4))
    same(loom.cross(loom.asarray(c), loom.asarray(c * 2 + 1), axis=0), np.cross(c, c * 2 + 1, axis=0))
    i8, f32 = np.array([1, 2, 3], np.int8), np.array([4.0, 5, 6], np.float32)
    same(loom.cross(loom.asarray(i8), loom.asarray(f32)), np.cross(i8, f32))
    with pytest.raises(ValueError, match="incompatible dimensions"):
        loom.cross(loom.asarray(np.ones((3, 4))), loom.asarray(np.ones((3, 4))))
    with pytest.raises(ValueError, match="zero dimension"):
        loom.cross(loom.asarray(np.float64(1.0)), loom.asarray(np.ones(3)))
    with warnings.catch_warnings():  # (pytest.warns turns NumPy's ValueError into "did not warn")
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            np.cross(np.ones(2), np.ones(2))
            refuses = False
        except ValueError:  # NumPy >= 2.5
            refuses = True
    if refuses:
        with pytest.raises(ValueError, match="3-dimensional vectors"):
            loom.cross(loom.asarray(np.ones(2)), loom.asarray(np.ones(2)))
    else:
        with pytest.warns(DeprecationWarning, match="2-dimensional vectors"):
            loom.cross(loom.asarray(np.ones(2)), loom.asarray(np.ones(2)))


def test_cross_2d_refused_where_numpy_refuses(monkeypatch):
    """Under a NumPy that refuses 2-d vectors (2.5 and later) loom refuses them with NumPy's message."""
    from loom import _numeric
    monkeypatch.setattr(_numeric, "_CROSS_2D", [False])
    with pytest.raises(ValueError, match="they are 2 and 3 dimensional instead"):
        loom.cross(loom.asarray(np.ones((4, 2))), loom.asarray(np.ones((4, 3))))
    same(loom.cross(loom.asarray(np.eye(3)), loom.asarray(np.ones(3))), np.cross(np.eye(3), np.ones(3)))


def test_delete():
    """delete of a loom array: NumPy's kept positions (its index rules: negatives, slices, masks, repeats,
    its IndexError) gathered on the device."""
    a = np.arange(24.0).reshape(4, 6)
    la = loom.asarray(a)
    for obj, axis in ((1, 0), (-1, 1), ([0, 2], 1), (slice(1, None, 2), 1), (np.array([True, False, True, False]), 0),
                      ([], 0), (3, None), ([1, 1, 5], None), (loom.asarray(np.array([0, 3])), 1)):
        want = np.delete(a, obj.get() if isinstance(obj, loom.ndarray) else obj, axis=axis)
        same(loom.delete(la, obj, axis=axis), want)
    with pytest.raises(IndexError, match="out of bounds"):
        loom.delete(la, 10, axis=0)
    with pytest.raises(IndexError, match="out of bounds"):
        loom.delete(la, [0, 7], axis=1)
