"""User kernels (loom.ElementwiseKernel, loom.ReductionKernel) compared with NumPy: CuPy's user-guide
examples, snippets with control flow, reductions along axes, and pinned error messages."""
import numpy as np
import pytest

try:
    import loom
    ElementwiseKernel, ReductionKernel = loom.ElementwiseKernel, loom.ReductionKernel
except (ImportError, AttributeError):  # the package without the exports: the module itself
    from loom._kernels import ElementwiseKernel, ReductionKernel


def test_squared_diff_concrete():
    k = ElementwiseKernel("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    y = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(k(x, y), (x - y) ** 2)
    z = np.empty((2, 5), np.float32)
    k(x, y, z)
    np.testing.assert_array_equal(z, (x - y) ** 2)


def test_squared_diff_generic():
    k = ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff_generic")
    for dt in (np.float64, np.int32, np.int8, np.uint16):
        x = np.arange(12).astype(dt).reshape(3, 4)
        y = np.arange(4).astype(dt)[::-1].copy()
        r = k(x, y)
        assert r.dtype == dt
        np.testing.assert_array_equal(r, (x - y) * (x - y))
    with pytest.raises(TypeError, match="type is mismatched"):
        k(np.zeros(3, np.float32), np.zeros(3, np.int32))


def test_reversed_add_raw():
    k = ElementwiseKernel("raw T x", "T y", "y = x[i] + x[_ind.size() - i - 1]", "add_reverse")
    x = np.arange(5, dtype=np.float32)
    y = np.zeros(5, np.float32)
    k(x, y)
    np.testing.assert_array_equal(y, x + x[::-1])


def test_all_raw_with_size():
    k = ElementwiseKernel("raw int64 x", "raw int64 y", "y[i] = x[i] * i", "times_index")
    x = np.arange(7, dtype=np.int64)
    y = np.zeros(7, np.int64)
    k(x, y, size=7)
    np.testing.assert_array_equal(y, x * np.arange(7))


def test_l2norm_axis():
    k = ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    np.testing.assert_allclose(k(x, axis=1), np.sqrt((x * x).sum(axis=1)), rtol=1e-6)
    np.testing.assert_allclose(k(x, axis=0), np.sqrt((x * x).sum(axis=0)), rtol=1e-6)
    np.testing.assert_allclose(k(x), np.sqrt((x * x).sum()), rtol=1e-6)
    r = k(x, axis=1, keepdims=True)
    assert r.shape == (2, 1)
    big = np.random.default_rng(0).standard_normal((300, 2000))
    np.testing.assert_allclose(k(big, axis=1), np.linalg.norm(big, axis=1), rtol=1e-12)
    np.testing.assert_allclose(k(big, axis=0), np.linalg.norm(big, axis=0), rtol=1e-12)


def test_control_flow_vs_numpy():
    k = ElementwiseKernel(
        "int32 x", "int32 y",
        "int s = 0; for (int j = 0; j <= x; ++j) { if (j % 2) continue; s += j * j; if (s > 1000) break; } y = s;",
        "evens")
    x = np.arange(-3, 60, dtype=np.int32)
    ref = []
    for v in x:
        s = 0
        for j in range(0, v + 1):
            if j % 2:
                continue
            s += j * j
            if s > 1000:
                break
        ref.append(s)
    np.testing.assert_array_equal(k(x), np.array(ref, np.int32))


def test_preamble_and_ternary():
    k = ElementwiseKernel("float64 x", "float64 y", "y = clampsq(x)", "pre",
                          preamble="__device__ double clampsq(double v) { return v < 0 ? 0.0 : v * v; }")
    x = np.linspace(-2, 2, 41)
    np.testing.assert_array_equal(k(x), np.where(x < 0, 0.0, x * x))


def test_syntax_error_message():
    with pytest.raises(ValueError) as e:
        ElementwiseKernel("float32 x", "float32 y", "y = x + ;", "broken")
    first = str(e.value).splitlines()[0]
    assert first.startswith("broken:1:") and "^" in str(e.value)


def test_identity_required():
    with pytest.raises(NotImplementedError, match="needs an identity"):
        ReductionKernel("T x", "T y", "x", "a + b", "y = a", None, "noid")


def test_introspection_elementwise():
    k = ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "sqdiff_intro")
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    y = np.arange(5, dtype=np.float32)
    kir = k.kernel_ir(x, y)
    assert "sqdiff_intro" in kir and "f32" in kir
    assert "f64" in k.kernel_ir(x.astype(np.float64), y.astype(np.float64))
    assert "define" in k.llvm_ir(x, y)
    try:
        ptx = k.ptx(x, y)
    except NotImplementedError:  # an LLVM without NVPTX
        ptx = None
    if ptx is not None:
        assert ".entry" in ptx and "sm_90" in ptx
    # nothing ran, and outputs given are only descriptors
    z = np.full((2, 5), 7, np.float32)
    assert "sqdiff_intro" in k.kernel_ir(x, y, z)
    np.testing.assert_array_equal(z, 7)
    with pytest.raises(TypeError, match="Wrong number"):
        k.kernel_ir(x)


def test_introspection_reduction():
    k = ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2_intro")
    x = np.ones((8, 16), np.float32)
    for axis in (None, 0, 1):
        assert "l2_intro" in k.kernel_ir(x, axis=axis)
    assert "define" in k.llvm_ir(x, axis=1)
    with pytest.raises(ValueError, match="out of bounds"):
        k.kernel_ir(x, axis=2)


def test_reduction_identity_required():
    # CuPy documents identity as a required str; loom keeps it required and says so
    with pytest.raises(NotImplementedError, match="needs an identity"):
        ReductionKernel("T x", "T y", "x", "a + b", "y = a", None, "noid")


def test_loop_prep_unsupported():
    with pytest.raises(NotImplementedError, match="loop_prep"):
        ElementwiseKernel("T x", "T y", "y = x", "lp", loop_prep="int k = 0;")
