"""Reduction epilogues of maps (passes/fuse_place.c take_map_kernel): a reduction over a map's own shape
that reads the map's stored values at the point joins the map's kernel, whose first REDUCE phase stores
them as it folds each point (side stores, ir.h). amp's unscale (g32 = g * s; any(~isfinite(g32))) then
writes g32 once and never reads it back.

Values against NumPy (an independent float64 reference where rounding differs) for any / all / sum /
max / min / mean over all axes, rows and columns, float and int, with NaN and inf, empty arrays, 0-d and
non-contiguous inputs; sizes reach the GPU's split and vector PART entries (n >= 32768) when a GPU is
the default device, and run the host plans otherwise. The kernel count comes from LOOM_DUMP-free
inspection (loom.stats), the PTX of the fused kernels is in the golden GPU digests (tests/golden/gpu/2[12]_*.txt)."""
import warnings

import numpy as np
import pytest

import loom
from conftest import ON_GPU, check

SIZES = [1, 7, 4096, 70001, 1 << 20]
gpu = pytest.mark.skipif(not ON_GPU, reason="needs a GPU as the default device")


def amp_unscale(xp, g):
    g32 = xp.astype(g, xp.float32) * (1.0 / 1024.0)
    return g32, xp.any(~xp.isfinite(g32))


def launches(fn, *args):
    """(results, kernels launched by one call of fn) for an already compiled fn."""
    fn(*args)
    before = loom.stats()["kernels_launched"]
    out = fn(*args)
    return out, loom.stats()["kernels_launched"] - before


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("bad", [None, "inf", "nan", "overflow"])
def test_amp_unscale(n: int, bad) -> None:
    rng = np.random.default_rng(n)
    g = (rng.standard_normal(n) * 100).astype(np.float16)
    if bad == "inf":
        g[n // 2] = np.inf
    elif bad == "nan":
        g[-1] = np.nan
    elif bad == "overflow":  # finite float16, finite after the scale too: no flag
        g[0] = np.float16(65504)
    want = amp_unscale(np, g)
    f = loom.fuse(kernel_name="amp_unscale_test")(lambda x: amp_unscale(loom, x))
    (g32, found), k = launches(f, loom.asarray(g))
    check(g32, want[0])
    check(found, want[1])
    # (one element: the fold pass makes the any() an elementwise op of shape (), a kernel of its own)
    assert k == (1 if n > 1 else 2), f"{k} kernels for the unscale and its check"


def test_amp_unscale_empty_and_0d() -> None:
    f = loom.fuse(kernel_name="amp_unscale_edge")(lambda x: amp_unscale(loom, x))
    for g in (np.zeros(0, np.float16), np.array(np.float16(3.0)), np.array(np.float16(np.inf))):
        want = amp_unscale(np, g)
        got = f(loom.asarray(g))
        check(got[0], want[0])
        check(got[1], want[1])


REDUCERS = {
    "sum": lambda xp, y, ax: xp.sum(y, axis=ax),
    "max": lambda xp, y, ax: xp.max(y, axis=ax),
    "min": lambda xp, y, ax: xp.min(y, axis=ax),
    "mean": lambda xp, y, ax: xp.mean(y, axis=ax),
    "any": lambda xp, y, ax: xp.any(y > 1.5, axis=ax),
    "all": lambda xp, y, ax: xp.all(y > -1e30, axis=ax),
}
SHAPES = [(5, 7), (300, 257), (3, 40000), (40000, 3)]


@pytest.mark.parametrize("op", list(REDUCERS))
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("shape", SHAPES)
def test_map_then_reduce_float(op: str, axis, shape) -> None:
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype(np.float32)
    a[0, -1] = np.nan  # propagates through max / min / sum / mean; any / all see a comparison
    red = REDUCERS[op]

    def fn(xp, x):
        y = xp.exp(x) * 0.5 + x
        return y, red(xp, y, axis)

    want = fn(np, a.astype(np.float64))
    f = loom.fuse(kernel_name=f"epi_{op}")(lambda x: fn(loom, x))
    (y, r), k = launches(f, loom.asarray(a))
    # float32 rounding of exp(x) * 0.5 + x (which cancels near x = -0.57): bounded by the terms' size
    scale = np.exp(a.astype(np.float64)) * 0.5 + np.abs(a)
    check(y, want[0].astype(np.float32), rtol=1e-5, atol=float(np.nanmax(scale)) * 2e-7)
    rr = r.get()
    assert rr.dtype == (np.bool_ if op in ("any", "all") else np.float32)
    if op in ("sum", "mean"):
        bound = np.nansum(scale, axis=axis) * 4e-7 / (scale.size / np.size(want[1]) if op == "mean" else 1)
        np.testing.assert_allclose(rr, want[1], rtol=1e-5, atol=float(np.max(bound)), equal_nan=True)
    else:
        np.testing.assert_allclose(rr, want[1], rtol=1e-5, atol=float(np.nanmax(scale)) * 2e-7, equal_nan=True)
    assert k == 1, f"{op} axis={axis}: {k} kernels"


@pytest.mark.parametrize("op", ["sum", "max", "min", "mean"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_map_then_reduce_int(op: str, axis) -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(-1000, 1000, size=(513, 129)).astype(np.int32)

    def fn(xp, x):
        y = x * 3 + 1
        return y, getattr(xp, op)(y, axis=axis)

    want = fn(np, a)
    f = loom.fuse(kernel_name=f"epi_int_{op}")(lambda x: fn(loom, x))
    (y, r), k = launches(f, loom.asarray(a))
    check(y, want[0])
    check(r, want[1])
    assert k == 1


def test_int_overflow_wraps_like_numpy() -> None:
    a = np.full(70001, 2**30, dtype=np.int32)
    f = loom.fuse(kernel_name="epi_int_wrap")(lambda x: (x * 2, loom.max(x * 2)))
    y, m = f(loom.asarray(a))
    with np.errstate(over="ignore"):
        check(y, a * 2)
        check(m, np.max(a * 2))


@pytest.mark.parametrize("view", ["step", "transpose", "reversed"])
def test_non_contiguous_inputs(view: str) -> None:
    rng = np.random.default_rng(7)
    base = rng.standard_normal((600, 410)).astype(np.float32)
    a = {"step": base[::2, 1::3], "transpose": base.T, "reversed": base[::-1, ::-1]}[view]
    x = {"step": loom.asarray(base)[::2, 1::3], "transpose": loom.asarray(base).T,
         "reversed": loom.asarray(base)[::-1, ::-1]}[view]
    f = loom.fuse(kernel_name=f"epi_view_{view}")(lambda x: (loom.sqrt(loom.abs(x)), loom.sum(loom.sqrt(loom.abs(x)))))
    y, s = f(x)
    check(y, np.sqrt(np.abs(a)))
    check(s, np.sum(np.sqrt(np.abs(a.astype(np.float64)))).astype(np.float32), rtol=1e-5)


def test_empty_reductions() -> None:
    f = loom.fuse(kernel_name="epi_empty")(lambda x: (x * 2, loom.sum(x * 2), loom.any(x * 2 > 0), loom.all(x * 2 > 0)))
    for shape in ((0,), (0, 5)):
        a = np.zeros(shape, np.float32)
        y, s, an, al = f(loom.asarray(a))
        check(y, a * 2)
        check(s, np.sum(a * 2))
        check(an, np.any(a > 0))
        check(al, np.all(a > 0))
    g = loom.fuse(kernel_name="epi_empty_mean")(lambda x: (x + 1, loom.mean(x + 1), loom.sum(x + 1, axis=1)))
    a = np.zeros((4, 0), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y, m, s = g(loom.asarray(a))
        check(m, np.mean(a + 1))
    check(s, np.sum(a + 1, axis=1))
    check(y, a + 1)
    with pytest.raises(ValueError):  # NumPy: zero-size array to reduction operation maximum
        loom.fuse(kernel_name="epi_empty_max")(lambda x: (x + 1, loom.max(x + 1)))(loom.asarray(np.zeros(0, np.float32)))


def test_zero_d() -> None:
    f = loom.fuse(kernel_name="epi_0d")(lambda x: (x * 3, loom.sum(x * 3), loom.max(x * 3)))
    a = np.array(np.float32(-2.5))
    y, s, m = f(loom.asarray(a))
    check(y, a * 3)
    check(s, np.sum(a * 3))
    check(m, np.max(a * 3))


def test_stored_map_and_later_map_phase() -> None:
    """e = exp(x) stored; e / e.sum(1, keepdims): the sum takes e as a side store, the division joins
    as a MAP phase reading e at the point (one kernel, two phases)."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((257, 1000)).astype(np.float32)
    f = loom.fuse(kernel_name="epi_softmax")(lambda x: (loom.exp(x), loom.exp(x) / loom.sum(loom.exp(x), axis=1, keepdims=True)))
    (e, p), k = launches(f, loom.asarray(a))
    e64 = np.exp(a.astype(np.float64))
    check(e, e64.astype(np.float32), rtol=1e-6)
    check(p, (e64 / e64.sum(1, keepdims=True)).astype(np.float32), rtol=1e-5)
    assert k == 1


def test_two_maps_one_reduction() -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal(100003).astype(np.float64)
    b = rng.standard_normal(100003).astype(np.float64)
    f = loom.fuse(kernel_name="epi_two")(lambda x, y: (x * y, x - y, loom.max(x * y + (x - y))))
    (p, d, m), k = launches(f, loom.asarray(a), loom.asarray(b))
    check(p, a * b)
    check(d, a - b)
    check(m, np.max(a * b + (a - b)))
    assert k == 1


def test_reduction_of_a_view_is_not_fused_and_correct() -> None:
    """A reduction that reads the map through a transpose is not its epilogue (2 kernels), still right."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    f = loom.fuse(kernel_name="epi_view_read")(lambda x: (x * 2, loom.cumsum(loom.sum((x * 2).T, axis=1))))
    y, s = f(loom.asarray(a))
    check(y, a * 2)
    check(s, np.cumsum(np.sum((a * 2).T, axis=1)))


# ---- the schedule (the PTX of these kernels: tests/golden/gpu/2[12]_*.txt, test_amdgpu) ---------------------
CASES = {
    "amp": (lambda x: amp_unscale(loom, x.astype(loom.float16)), (1 << 16,)),
    "rows": (lambda x: (loom.exp(x), loom.sum(loom.exp(x), axis=1)), (512, 1024)),
    "cols": (lambda x: (loom.exp(x), loom.max(loom.exp(x), axis=0)), (512, 1024)),
    "argmax": (lambda x: (loom.exp(x), loom.argmax(loom.exp(x))), (512, 1024)),
}


@pytest.mark.parametrize("which", list(CASES))
def test_schedule_has_side_store(which: str) -> None:
    """One kernel whose reduce phase stores the map (LOOM_DUMP's kernels)."""
    fn, shape = CASES[which]
    f = loom.fuse(kernel_name=f"epi_dump_{which}")(fn)
    x = loom.asarray(np.ones(shape, np.float32))
    with loom.capture_dumps("kernels", echo=False) as d:
        f(x)
    kernels = [line for line in d.text.splitlines() if line.startswith("kernel k")]
    reduce_lines = [line for line in d.text.splitlines() if line.strip().startswith("phase reduce")]
    assert len(kernels) == 1 and len(reduce_lines) == 1 and " store buf " in reduce_lines[0], d.text


@gpu
@pytest.mark.parametrize("n", [32768, 32775, (1 << 24) + 3])
def test_gpu_vector_part_side_stores(n: int) -> None:
    """1-d full reductions long enough for the vector PART entry (fold_vector's vector side stores), with
    a length that leaves a tail and a NaN in it."""
    rng = np.random.default_rng(n)
    g = (rng.standard_normal(n) * 10).astype(np.float16)
    g[-1] = np.nan
    f = loom.fuse(kernel_name="epi_gpu_partv")(lambda x: amp_unscale(loom, x))
    g32, found = f(loom.asarray(g))
    want = amp_unscale(np, g)
    check(g32, want[0])
    check(found, want[1])
    h = loom.fuse(kernel_name="epi_gpu_sum")(lambda x: (x.astype(loom.float32) * 2, loom.sum(x.astype(loom.float32) * 2)))
    y, s = h(loom.asarray(g[:-1]))
    check(y, g[:-1].astype(np.float32) * 2)
    check(s, np.float32(np.sum(g[:-1].astype(np.float64) * 2)), rtol=1e-4)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 1])
def test_map_then_arg_reduction(op: str, axis) -> None:
    """Arg-reductions fold the map too (the host's vector arg-reduction fills its block from the walk that
    stores the map); NaN is the first extreme, as NumPy's."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((37, 5003)).astype(np.float32)
    a[3, 4000] = np.nan

    def fn(xp, x):
        y = xp.abs(x) * 2.0
        return y, getattr(xp, op)(y, axis=axis)

    want = fn(np, a)
    f = loom.fuse(kernel_name=f"epi_{op}")(lambda x: fn(loom, x))
    (y, i), k = launches(f, loom.asarray(a))
    check(y, want[0])
    check(i, want[1])
    assert k == 1


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_map_reduced_itself(dtype: str) -> None:
    """y = half(x * 3) stored and y.sum(), y.max(axis=1): the reduction folds y's rounded values (the
    kernel rounds once, the store and the fold see the same half value)."""
    if dtype == "bfloat16":
        ml = pytest.importorskip("ml_dtypes")
        half = np.dtype(ml.bfloat16)
        lt = loom.bfloat16
    else:
        half, lt = np.dtype(np.float16), loom.float16
    rng = np.random.default_rng(9)
    a = rng.standard_normal((64, 999)).astype(np.float32)
    f = loom.fuse(kernel_name=f"epi_half_{dtype}")(lambda x: ((x * 3).astype(lt), loom.max((x * 3).astype(lt), axis=1)))
    (y, m), k = launches(f, loom.asarray(a))
    y_np = (a * 3).astype(half)
    check(y, y_np)
    check(m, np.max(y_np, axis=1))
    s = loom.fuse(kernel_name=f"epi_half_sum_{dtype}")(lambda x: ((x * 3).astype(lt), loom.sum((x * 3).astype(lt), dtype=loom.float32)))
    y2, t = s(loom.asarray(a))
    check(y2, y_np)
    check(t, np.float32(np.sum(y_np.astype(np.float64))), rtol=1e-5)
    assert k == 1
