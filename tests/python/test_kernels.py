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
        np.testing.assert_array_equal(r, (x - y) * (x - y))  # type: ignore[operator]  # NumPy's stubs: mixed operand types
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


def test_identity_none_is_value_initialized():
    # CuPy value-initializes the reduce type when identity is None (T a = T()): 0
    k = ReductionKernel("T x", "T y", "x", "a + b", "y = a", None, "noid")
    x = np.arange(1, 11, dtype=np.int32).reshape(2, 5)
    np.testing.assert_array_equal(k(x, axis=1), x.sum(axis=1).astype(np.int32))
    mx = ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "max0")
    neg = -np.arange(1, 9, dtype=np.float64)
    assert float(np.asarray(mx(neg))) == 0.0  # the identity 0 takes part, as in CuPy
    assert float(np.asarray(mx(-neg))) == 8.0


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


def test_loop_prep_and_after_loop():
    try:
        k = ElementwiseKernel("T x", "T y", "y = x * k", "lp", loop_prep="float k = 2;")
    except NotImplementedError:
        pytest.skip("this libloom has no loom_elementwise_kernel_create_ex")
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(k(x), x * 2)
    k2 = ElementwiseKernel("T x", "T y", "y = x + 1", "al", after_loop="int unused = 0;")
    np.testing.assert_array_equal(k2(loom.asarray(x)).get(), x + 1)


# ---- loom arrays on the extension's context: no host round trip ---------------------------------------
def _gpu():
    try:
        return loom.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


gpu = pytest.mark.skipif(not _gpu(), reason="no CUDA device")

SQD = ("T x, T y", "T z", "z = (x - y) * (x - y)")


def test_pending_input_gives_right_values():
    k = ElementwiseKernel(*SQD, "sqd_lazy")
    xn = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = loom.asarray(xn)
    y = x * 2 + 1  # pending: evaluated by the call, not copied to NumPy
    assert y._lazy
    r = k(y, x[::-1])
    assert isinstance(r, loom.ndarray)
    np.testing.assert_array_equal(r.get(), (xn * 2 + 1 - xn[::-1]) ** 2)
    # a reduction over a pending value along an axis
    l2 = ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2_lazy")
    np.testing.assert_allclose(l2(x - 1, axis=0).get(), np.sqrt(((xn - 1) ** 2).sum(axis=0)), rtol=1e-6)


def test_same_context_and_device():
    k = ElementwiseKernel(*SQD, "sqd_ctx")
    x = loom.arange(10, dtype=loom.float32)
    k(x, x)  # compile
    before = loom.stats()["kernels_launched"]
    r = k(x, x + 1)
    # loom's own context counts the pending x + 1 and the user kernel: no second context, no copies
    assert loom.stats()["kernels_launched"] - before == 2
    assert isinstance(r, loom.ndarray) and r._device == x._device and r.device == x.device
    np.testing.assert_array_equal(r.get(), np.ones(10, np.float32))


def test_out_written_in_place():
    k = ElementwiseKernel(*SQD, "sqd_out")
    xn = np.arange(10, dtype=np.float32)
    x, y = loom.asarray(xn), loom.asarray(xn[::-1].copy())
    z = loom.zeros(10, dtype=loom.float32)
    ptr = z._ptr
    w = z + 1  # pending and reading z: must see z's old value
    r = k(x, y, z)
    assert r is z and z._ptr == ptr
    np.testing.assert_array_equal(z.get(), (xn - xn[::-1]) ** 2)
    np.testing.assert_array_equal(w.get(), np.ones(10, np.float32))
    # a reduction's out=
    l2 = ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2_out")
    o = loom.zeros(2, dtype=loom.float32)
    optr = o._ptr
    assert l2(x.reshape(2, 5), axis=1, out=o) is o and o._ptr == optr
    np.testing.assert_allclose(o.get(), np.sqrt((xn.reshape(2, 5) ** 2).sum(axis=1)), rtol=1e-6)


def test_scalars_and_mixed_arguments():
    k = ElementwiseKernel(*SQD, "sqd_scalar")
    x = loom.arange(5, dtype=loom.float32)
    r = k(x, 2)  # the placeholder is bound by the array: float32, as CuPy
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r.get(), (np.arange(5, dtype=np.float32) - 2) ** 2)
    r2 = k(x, np.float32(1.5))
    np.testing.assert_array_equal(r2.get(), (np.arange(5, dtype=np.float32) - 1.5) ** 2)
    scale = ElementwiseKernel("float32 x, float64 a", "float32 z", "z = x * a", "scale_mixed")
    np.testing.assert_array_equal(scale(x, 3).get(), np.arange(5, dtype=np.float32) * 3)
    # NumPy in, NumPy out; loom in, loom out; lists through loom.asarray
    assert isinstance(k(np.ones(3), np.zeros(3)), np.ndarray)
    assert isinstance(k([1.0, 2.0], loom.ones(2)), loom.ndarray)


def test_return_tuple_and_no_return():
    k = ElementwiseKernel("T x", "T y, T z", "y = x + 1; z = x * 2", "two_out")
    x = np.arange(4.0)
    y, z = k(x)
    np.testing.assert_array_equal(y, x + 1)
    np.testing.assert_array_equal(z, x * 2)
    one = ElementwiseKernel("T x", "T y", "y = -x", "neg_tuple", return_tuple=True)
    r = one(x)
    assert isinstance(r, tuple) and len(r) == 1
    nr = ElementwiseKernel("T x", "T y", "y = -x", "neg_none", no_return=True)
    out = np.zeros(4)
    assert nr(x, out) is None
    np.testing.assert_array_equal(out, -x)


def test_stream_argument():
    k = ElementwiseKernel(*SQD, "sqd_stream")
    x = loom.arange(8, dtype=loom.float64)
    s = loom.cuda.Stream()
    before = loom.cuda.get_current_stream()
    r = k(x, x * 3, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(r.get(), (np.arange(8.0) * 2) ** 2)
    assert loom.cuda.get_current_stream() is before  # the call did not change the current stream
    with s:
        r2 = k(x, 1.0)
    np.testing.assert_array_equal(r2.get(), (np.arange(8.0) - 1) ** 2)
    with pytest.raises(TypeError, match="stream"):
        k(x, x, stream="nope")


def test_stream_results_cross_to_the_default_stream() -> None:
    """Work on a user stream and on the default stream is ordered both ways (loom's streams are blocking, as
    CuPy's default Stream()): a result made inside `with s:` is read whole by .get() and by default-stream
    kernels after the block, and s reads what the default stream made before it. Big enough that a missing
    wait shows (the H200 read uninitialized pool memory when the stream was non-blocking)."""
    k = ElementwiseKernel(*SQD, "sqd_cross_stream")
    n = 1 << 22
    h = np.arange(n, dtype=np.float64) % 1000
    x = loom.asarray(h)
    s = loom.cuda.Stream()
    for _ in range(3):
        y = x * 3.0                       # default stream (evaluated when the block is entered)
        with s:
            r = k(y, 1.0)                 # on s, reading y
            r2 = k(r, 2.0)                # on s, reading r
        back = (r2 + 1.0).get()           # a default-stream kernel and copy after the block
        np.testing.assert_array_equal(back, ((h * 3 - 1) ** 2 - 2) ** 2 + 1)
        np.testing.assert_array_equal(r.get(), (h * 3 - 1) ** 2)


def test_same_kernel_from_two_threads():
    import threading
    k = ElementwiseKernel(*SQD, "sqd_threads")
    l2 = ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "sumsq_threads")
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(40):
                a = rng.standard_normal(257)
                b = rng.standard_normal(257)
                xa = loom.asarray(a) * 1.0  # pending, evaluated by the call in this thread
                np.testing.assert_allclose(k(xa, loom.asarray(b)).get(), (a - b) ** 2, rtol=1e-12)
                np.testing.assert_allclose(k(a, b), (a - b) ** 2, rtol=1e-12)  # NumPy in and out
                np.testing.assert_allclose(float(np.asarray(l2(a))), (a * a).sum(), rtol=1e-10)
        except Exception as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_introspection_keeps_pending():
    k = ElementwiseKernel(*SQD, "sqd_dump")
    x = loom.arange(6, dtype=loom.float32)
    y = x + 1
    assert "sqd_dump" in k.kernel_ir(y, x)
    assert y._lazy  # described, not evaluated


def test_errors():
    k = ElementwiseKernel(*SQD, "sqd_err")
    x = loom.arange(4, dtype=loom.float32)
    with pytest.raises(TypeError, match="Wrong number of arguments"):
        k(x)
    with pytest.raises(TypeError, match="type is mismatched"):
        k(x, loom.arange(4, dtype=loom.int32))
    with pytest.raises(ValueError, match="broadcast"):
        k(x, loom.arange(3, dtype=loom.float32))
    with pytest.raises(ValueError, match="shape"):
        k(x, x, loom.zeros(3, dtype=loom.float32))
    with pytest.raises(TypeError):
        k(x, object())
    with pytest.raises(TypeError, match="output arguments"):
        k(x, x, 3.0)
    with pytest.raises(TypeError, match="unexpected keyword"):
        k(x, x, sise=4)
    with pytest.raises(OverflowError):
        ElementwiseKernel("int8 x, int8 y", "int8 z", "z = x + y", "i8")(loom.arange(3, dtype=loom.int8), 300)
    l2 = ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "l2_err")
    with pytest.raises(ValueError, match="out of bounds"):
        l2(x, axis=3)
    with pytest.raises(TypeError, match="Wrong number"):
        l2(x, x)
    with pytest.raises(ValueError):
        ElementwiseKernel("float32 x", "float32 y", "y = x +", "broken2")


@gpu
def test_gpu_device_arrays_in_place():
    k = ElementwiseKernel(*SQD, "sqd_gpu")
    xn = np.arange(1000, dtype=np.float32)
    x = loom.asarray(xn)
    assert x._device[0] == 1
    y = x * 0.5  # pending on the GPU
    z = loom.empty(1000, dtype=loom.float32)
    p = z.__cuda_array_interface__["data"][0]
    assert k(x, y, z) is z
    assert z.__cuda_array_interface__["data"][0] == p
    np.testing.assert_array_equal(z.get(), (xn - xn * 0.5) ** 2)
    r = k(x, 2.0)
    assert isinstance(r, loom.ndarray) and r._device == x._device
    np.testing.assert_array_equal(r.get(), (xn - 2) ** 2)
    l2 = ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2_gpu")
    xr = loom.asarray(xn.reshape(10, 100))
    o = l2(xr, axis=1)
    assert o._device == xr._device
    np.testing.assert_allclose(o.get(), np.sqrt((xn.reshape(10, 100) ** 2).sum(axis=1)), rtol=1e-5)
    with pytest.raises(ValueError, match="one device"):
        k(x, np.ones(1000, np.float32))


@gpu
def test_gpu_stream():
    k = ElementwiseKernel(*SQD, "sqd_gpu_stream")
    xn = np.arange(4096, dtype=np.float64)
    x = loom.asarray(xn)
    s = loom.cuda.Stream()
    r = k(x + 1, x, stream=s)  # the pending x + 1 is evaluated on s too, before the kernel
    s.synchronize()
    np.testing.assert_array_equal(r.get(), np.ones(4096))


@pytest.mark.parametrize("where", range(4))
def test_nul_byte_in_user_kernel_text_is_an_error(where: int) -> None:
    """A NUL byte inside a parameter list, snippet or name is a ValueError (issue 10 item 9): the C string
    would end there and drop the rest of the snippet silently."""
    parts = ["T x", "T y", "y = x + 1", "nul_probe"]
    parts[where] = parts[where][:2] + "\x00" + parts[where][2:]
    with pytest.raises(ValueError, match="NUL"):
        loom.ElementwiseKernel(*parts)
    with pytest.raises(ValueError, match="NUL"):
        loom.ReductionKernel("T x", "T y", "x\x00 * 2", "a + b", "y = a", "0", "nul_red")


def test_size_rule_like_cupy():
    """size= as CuPy's ElementwiseKernel takes it: only when every ndarray argument is raw (Python and NumPy
    scalars do not count), and then required; a raw out not given is allocated with size points."""
    a, b = np.array([1, 2], np.float32), np.array([3, 4], np.float32)

    def kern(ins, outs, op="", name="k"):
        return ElementwiseKernel(", ".join(f"{'raw ' if r else ''}float32 x{i}" for i, r in enumerate(ins)),
                                 ", ".join(f"{'raw ' if r else ''}float32 y{i}" for i, r in enumerate(outs)), op, name)
    not_allowed, required = "^Specified 'size' can", "^Loop size is undecided"
    for ins, outs, args in [((False, False), (False,), (a, b)), ((True, False), (False,), (a, b)),
                            ((False, False), (True,), (a, 7.0)), ((True,), (False,), (a, b)),
                            ((False, False, True), (True,), (a, 7.0, b))]:
        with pytest.raises(ValueError, match=not_allowed):
            kern(ins, outs)(*args, size=2)
    for ins, outs, args in [((True, True), (False,), (a, b)), ((True, False), (True,), (a, 7.0)),
                            ((), (True,), (a,))]:
        with pytest.raises(ValueError, match=required):
            kern(ins, outs)(*args)
    # raw ins and a scalar: size points, the scalar broadcast; the raw out allocated (size points)
    k = kern((True, False), (True,), "y0[i] = x0[i] * x1 + i")
    np.testing.assert_array_equal(loom.asnumpy(k(loom.asarray(a), 3.0, size=2)), a * 3 + np.arange(2))
    k = kern((True, False), (False,), "y0 = x0[i] - x1")
    np.testing.assert_array_equal(loom.asnumpy(k(loom.asarray(a), np.float32(1.5), size=2)), a - 1.5)
    k = kern((True,), (True,), "y0[i] = x0[_ind.size() - 1 - i]")
    np.testing.assert_array_equal(loom.asnumpy(k(loom.asarray(b), size=2)), b[::-1])
