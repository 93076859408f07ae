"""argmax / argmin against NumPy on the lengths that cross the host's vector arg-reduction
(codegen/lower_host_arg.c: blocks of 2048 points, a 4-vector fold, a one-vector tail fold, a first-match
search; vectors of the host's preferred width: 64 bytes on AVX-512, 32 otherwise, see test_vector_widths): every dtype, ties, NaN positions, signed zeros, infinities, the identity itself, strided,
transposed, broadcast and computed operands, short rows, keepdims, 0-d and empty inputs."""
import numpy as np
import pytest

import loom
from conftest import DTYPES, check

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None  # type: ignore[assignment]

OPS = ["argmax", "argmin"]
# below, at and around the vector path's threshold, the 64-lane fold, the 2048-point block
# (255-257, 513: the int8 fold of 4 x 64 lanes on AVX-512 hosts)
LENGTHS = [1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 255, 256, 257, 513, 2047, 2048, 2049,
           4096 + 37, 10000]


def values(n, dtype, rng, spread=5):
    """n values of dtype with many ties (a few distinct values), extremes of the dtype included."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    a = rng.integers(0, spread, n).astype(dt)
    if dt.kind in "iu" and n > 3:
        info = np.iinfo(dt)
        a[rng.integers(0, n, 2)] = info.max
        a[rng.integers(0, n, 2)] = info.min
    return a


def ref(op, a, **kw):
    return getattr(np, op)(a, **kw)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_lengths_dtypes(op, dtype):
    rng = np.random.default_rng(11)
    for n in LENGTHS:
        for spread in (2, 1000):
            a = values(n, dtype, rng, spread)
            got = getattr(loom, op)(loom.asarray(a))
            check(got, ref(op, a)), (n, spread)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("n", [9, 64, 65, 2048, 2049, 6000])
def test_nan_positions(op, dtype, n):
    rng = np.random.default_rng(n)
    base = rng.standard_normal(n).astype(dtype)
    spots = sorted({0, 1, n // 2, n - 1, min(2048, n - 1), min(2047, n - 1)})
    for p in spots:
        a = base.copy()
        a[p] = np.nan
        check(getattr(loom, op)(loom.asarray(a)), ref(op, a))
        b = a.copy()  # a later NaN never wins over the first one
        b[-1] = np.nan
        b[(p + n) // 2] = np.nan
        check(getattr(loom, op)(loom.asarray(b)), ref(op, b))
    a = np.full(n, np.nan, dtype)
    check(getattr(loom, op)(loom.asarray(a)), ref(op, a))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_signed_zeros_infinities(op, dtype):
    for n in (5, 40, 100, 3000):
        zeros = np.zeros(n, dtype)
        zeros[::3] = -0.0
        check(getattr(loom, op)(loom.asarray(zeros)), ref(op, zeros))
        zeros2 = -zeros
        check(getattr(loom, op)(loom.asarray(zeros2)), ref(op, zeros2))
        for fill in (np.inf, -np.inf):  # the identity of one of the two ops: lo (0) as NumPy
            a = np.full(n, fill, dtype)
            check(getattr(loom, op)(loom.asarray(a)), ref(op, a))
            a[n // 2] = -fill
            a[n - 1] = -fill
            check(getattr(loom, op)(loom.asarray(a)), ref(op, a))
            a[n // 3] = np.nan
            check(getattr(loom, op)(loom.asarray(a)), ref(op, a))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "uint64", "bool"])
def test_integer_identity_everywhere(op, dtype):
    """All points equal to the op's identity (INT_MIN for argmax...): index 0, as NumPy."""
    dt = np.dtype(dtype)
    for n in (3, 64, 2049):
        for v in ((False, True) if dt == np.bool_ else (np.iinfo(dt).min, np.iinfo(dt).max)):
            a = np.full(n, v, dt)
            check(getattr(loom, op)(loom.asarray(a)), ref(op, a))


@pytest.mark.skipif(ml_dtypes is None, reason="needs ml_dtypes")
@pytest.mark.parametrize("op", OPS)
def test_bfloat16(op):
    rng = np.random.default_rng(3)
    for n in (7, 100, 2100):
        a32 = rng.integers(-3, 3, n).astype(np.float32)
        a32[n // 2] = np.nan
        a = a32.astype(ml_dtypes.bfloat16)
        check(getattr(loom, op)(loom.asarray(a)), ref(op, a.astype(np.float32)))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", [(1000, 16), (37, 129), (3, 5000), (2100, 3)])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_rows_axes(op, shape, axis, keepdims):
    rng = np.random.default_rng(sum(shape))
    a = rng.integers(0, 7, shape).astype(np.float32)
    a[rng.integers(0, shape[0], 3), rng.integers(0, shape[1], 3)] = np.nan
    got = getattr(loom, op)(loom.asarray(a), axis=axis, keepdims=keepdims)
    check(got, ref(op, a, axis=axis, keepdims=keepdims))


VIEWS = [lambda xp, a: a[:, ::3], lambda xp, a: a[::-1], lambda xp, a: a.T,
         lambda xp, a: a[::2, 1::5].T, lambda xp, a: xp.broadcast_to(a[5], (70, 200)),
         lambda xp, a: xp.broadcast_to(a[:, 3:4], (300, 90))]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("view", range(len(VIEWS)))
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_strided_transposed_broadcast(op, view, axis):
    rng = np.random.default_rng(5)
    a = rng.integers(0, 9, (300, 200)).astype(np.float64)
    a[7, 11] = np.nan
    v, lv = VIEWS[view](np, a), VIEWS[view](loom, loom.asarray(a))
    check(getattr(loom, op)(lv, axis=axis), ref(op, v, axis=axis))


@pytest.mark.parametrize("op", OPS)
def test_computed_short_rows(op):
    """The k-means assignment: argmin over 16 distances computed from broadcast operands."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3000, 4)).astype(np.float32)
    c = rng.standard_normal((16, 4)).astype(np.float32)
    c[5] = c[9]  # duplicate centroids: tied distances, the first wins
    want = getattr(np, op)(((x[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
    lx, lc = loom.asarray(x), loom.asarray(c)
    got = getattr(loom, op)(((lx[:, None, :] - lc[None]) ** 2).sum(-1), axis=1)
    check(got, want)
    # a computed value straight into the arg-reduction (no intermediate reduction)
    got = getattr(loom, op)(loom.abs(lx[:, :1] - lc[:, 0][None]), axis=1)
    check(got, getattr(np, op)(np.abs(x[:, :1] - c[:, 0][None]), axis=1))


@pytest.mark.parametrize("op", OPS)
def test_zero_d_and_empty(op):
    check(getattr(loom, op)(loom.asarray(np.float32(3.5))), ref(op, np.float32(3.5)))
    with pytest.raises(ValueError):
        getattr(np, op)(np.zeros(0, np.float32))
    with pytest.raises(ValueError):
        getattr(loom, op)(loom.asarray(np.zeros(0, np.float32)))
    with pytest.raises(ValueError):
        getattr(loom, op)(loom.asarray(np.zeros((3, 0), np.float32)), axis=1)
    e = np.zeros((0, 4), np.float32)  # an empty O range over a non-empty axis is fine
    check(getattr(loom, op)(loom.asarray(e), axis=1), ref(op, e, axis=1))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "uint16"])
def test_large_split_across_threads(op, dtype):
    """Inputs large enough to split across the worker threads: the extreme tied in both halves (the
    first wins), a NaN only in the second half, the extreme in the last point."""
    n = (1 << 21) + 5
    rng = np.random.default_rng(21)
    a = values(n, dtype, rng, spread=50)
    check(getattr(loom, op)(loom.asarray(a)), ref(op, a))
    b = a.copy()
    b[-1] = b.min() if op == "argmin" else b.max()
    check(getattr(loom, op)(loom.asarray(b)), ref(op, b))
    if np.dtype(dtype).kind == "f":
        c = a.copy()
        c[n - 1000] = np.nan
        c[n - 10] = np.nan
        check(getattr(loom, op)(loom.asarray(c)), ref(op, c))
        r = c.reshape(5, -1) if n % 5 == 0 else c[:-5].reshape(4, -1)
        check(getattr(loom, op)(loom.asarray(r), axis=1), ref(op, r, axis=1))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [1, -2])
def test_middle_axis_3d(op, axis):
    rng = np.random.default_rng(4)
    a = rng.integers(0, 5, (6, 300, 7)).astype(np.float32)
    a[2, 150, 3] = np.nan
    for keepdims in (False, True):
        check(getattr(loom, op)(loom.asarray(a), axis=axis, keepdims=keepdims),
              ref(op, a, axis=axis, keepdims=keepdims))


_WIDTH_SCRIPT = """
import numpy as np, loom
rng = np.random.default_rng(9)
bad = []
for dt in ("int8", "uint8", "int16", "float16", "float32", "float64", "int64", "bool"):
    for n in (3, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 2049, 5000):
        a = (rng.integers(0, 2, n) > 0) if dt == "bool" else rng.integers(-4, 4, n).astype(dt)
        if dt.startswith("float") and n > 5:
            a[n // 3] = np.nan
        for op in ("argmax", "argmin"):
            if int(loom.asnumpy(getattr(loom, op)(loom.asarray(a)))) != int(getattr(np, op)(a)):
                bad.append((dt, n, op))
    m = rng.integers(-4, 4, (500, 16)).astype(dt if dt != "bool" else "uint8")
    for op in ("argmax", "argmin"):
        if not np.array_equal(loom.asnumpy(getattr(loom, op)(loom.asarray(m), axis=1)), getattr(np, op)(m, axis=1)):
            bad.append((dt, "rows", op))
print("BAD", bad)
"""


@pytest.mark.parametrize("bits", ["128", "256", "512"])
def test_vector_widths(bits):
    """The vector arg-reduction at every preferred width (LOOM_HOST_VECTOR_BITS), in a child process:
    the width is read when the host target starts."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, LOOM_HOST_VECTOR_BITS=bits)
    out = subprocess.run([sys.executable, "-c", _WIDTH_SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "BAD []" in out.stdout, out.stdout[-2000:]
