"""Reads along a small stride in the host column walks (codegen/lower_host_outer_loads.c): a reduction over
axis 0 of a view strided along its kept axis (x[:, ::2].mean(0), x[:, ::-1].max(0), x[..., ::3].sum(1)) walks
its columns once more per stride 2, 3, 4 and -1, the stride a constant there, so that LLVM reads them by
wide loads and shuffles instead of gathers; other strides keep the walk as it was. Results against NumPy
(float64 references for float sums; exact for max / min / argmax / integer sums, any / all) for every
such stride and a few others, float32 with NaN and inf, float64, int32, int64, bool, odd sizes, empty
views, 3-d and a MAP phase after the reduction (x / x.sum(0)), at sizes that take the column split and
sizes that run() walks; the generated code (LOOM_DUMP=llvm: the deinterleaving shuffles, no gathers in the
colpart) and, in child processes, the mechanism off (LOOM_HOST_COL_STRIDED_LOADS=0: gathers) giving the
same bits."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import loom

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)  # the default device of this run
pytestmark = pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")

STRIDES = [2, 3, 4, -1, -3, 5]  # the first four have walks of their own
SHAPES = [(1500, 301), (37, 53), (3, 1031)]  # the column split; run(); few rows, many columns


def data(shape: tuple, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype in ("int32", "int64"):
        return rng.integers(-1000, 1000, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.random(shape) < 0.02
    a = rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if dtype == "float32" and a.shape[0] > 20 and a.shape[1] > 50:
        a[17, 40] = np.nan  # in column 40 of x (20 of [:, ::2], 10 of [:, ::4])
        a[5, 41] = np.inf  # a column [:, ::2] skips: it must not leak into a neighbour
    return a


def close(got: np.ndarray, v: np.ndarray, want: np.ndarray, axis, count: int = 1, ulps: int = 4) -> None:
    """within `ulps` eps (of got's dtype) of the sum of the terms' finite magnitudes; NaN / inf where NumPy has them"""
    scale = np.abs(np.where(np.isfinite(v), v, 0).astype(np.float64)).sum(axis=axis) / max(count, 1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    ok = np.isfinite(want)
    err = np.abs(got.astype(np.float64) - want)[ok]
    eps = np.finfo(got.dtype).eps if got.dtype.kind == "f" else 0
    assert (err <= ulps * eps * (scale[ok] + np.abs(want[ok])) + 1e-30).all(), err.max()


def check(op: str, a: np.ndarray, key: tuple, axis) -> None:
    """op over axis of the view a[key], loom against NumPy"""
    v = a[key]
    got = loom.asnumpy(getattr(loom, op)(loom.asarray(a)[key], axis=axis))
    if op in ("sum", "mean") and v.dtype.kind == "f":
        want = getattr(np, op)(v.astype(np.float64), axis=axis)
        n = v.shape[axis] if isinstance(axis, int) else int(np.prod([v.shape[a] for a in axis]))
        close(got, v, want, axis, n if op == "mean" else 1)
    elif op == "var":
        want = np.var(v.astype(np.float64), axis=axis)
        dev = v.astype(np.float64) - np.mean(v.astype(np.float64), axis=axis, keepdims=True)
        close(got, (dev * dev).astype(v.dtype), want, axis, v.shape[axis], ulps=16)  # (and the mean's error)
    else:
        want = getattr(np, op)(v, axis=axis)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)


def cols(s: int) -> tuple:
    return (slice(None), slice(None, None, s))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("s", STRIDES)
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "argmax", "argmin", "var"])
def test_float32_columns(op: str, s: int, shape: tuple) -> None:
    a = data(shape, "float32", seed=abs(s) * 7 + shape[0])
    check(op, a, cols(s), 0)


@pytest.mark.parametrize("dtype,ops", [("float64", ["sum", "max", "argmin", "var"]), ("int32", ["sum", "max", "argmax"]),
                                       ("int64", ["sum", "min", "prod"]), ("bool", ["any", "all", "sum"])])
@pytest.mark.parametrize("s", [2, 3, 4, -1, 6])
def test_other_dtypes(dtype: str, ops: list, s: int) -> None:
    a = data((1200, 257), dtype, seed=s + 100)
    if dtype == "int64":
        a = a % 3 - 1  # products stay small
    for op in ops:
        check(op, a, cols(s), 0)


@pytest.mark.parametrize("s", [2, 3, -1])
def test_3d_and_both_axes_strided(s: int) -> None:
    a = data((24, 99, 131), "float32", seed=3)
    for op in ("sum", "max", "argmax"):
        check(op, a, (slice(None), slice(None), slice(None, None, s)), 1)  # kept: dims 0 and 2
    check("sum", a, (slice(None), slice(None), slice(None, None, s)), (0, 1))
    b = data((1001, 300), "float32", seed=4)
    for op in ("sum", "max"):
        check(op, b, (slice(None, None, 2), slice(None, None, s)), 0)
        check(op, b, (slice(None, None, -3), slice(None, None, s)), 0)


def test_empty_and_tiny() -> None:
    for shape in [(0, 31), (31, 0), (1, 9), (9, 1), (2, 2)]:
        a = data(shape, "float32", seed=1)
        for s in (2, -1, 3):
            for op in ("sum", "max") if shape[0] else ("sum",):
                if op == "max" and 0 in a[:, ::s].shape:
                    continue
                check(op, a, cols(s), 0)


@pytest.mark.parametrize("s", [2, 4, -1])
def test_map_after_the_reduction(s: int) -> None:
    a = data((2000, 301), "float64", seed=9) + 3.0
    v = a[:, ::s]
    x = loom.asarray(a)[:, ::s]
    got = loom.asnumpy(x / x.sum(0))
    np.testing.assert_allclose(got, v / v.sum(0), rtol=1e-13)
    got = loom.asnumpy((x - x.mean(0)) / x.std(0))
    np.testing.assert_allclose(got, (v - v.mean(0)) / v.std(0), rtol=1e-10, atol=1e-12)


SHUFFLE = re.compile(r"shufflevector <(\d+) x \w+> %[\w.]+, <\d+ x \w+> (?:poison|undef), <(\d+) x i32> <([^>]*)>")


def wide_reads(body: str, s: int) -> int:
    """shuffles of a function's LLVM IR that take every s-th lane of a wider vector from lane 0 (s > 1) or
    reverse one (s = -1): the vectorizer's reads of an interleaved group / of a reversed sequence"""
    n = 0
    for m in SHUFFLE.finditer(body):
        wide, lanes = int(m.group(1)), int(m.group(2))
        mask = [int(t.split()[1]) if t.split()[1] != "poison" else -1 for t in m.group(3).split(",")]
        if lanes < 4:
            continue
        if s > 1 and wide == s * lanes and mask == list(range(0, s * lanes, s)):
            n += 1
        elif s == -1 and wide == lanes and mask == list(range(lanes - 1, -1, -1)):
            n += 1
    return n


def colpart(text: str) -> str:
    """the colpart function of an LLVM dump"""
    m = re.search(r"^define [^@]*@\w+_colpart\(.*?^}", text, re.M | re.S)
    assert m, "no colpart: the column split was not compiled"
    return m.group(0)


@pytest.mark.parametrize("s", [2, 3, 4, -1])
def test_code_reads_by_wide_loads(s: int) -> None:
    x = loom.asarray(data((1500, 301), "float32", seed=2))
    with loom.capture_dumps("llvm", echo=False) as d:
        loom.eval(loom.sum(x[:, ::s] * 2.0, axis=0))  # (dumps make the passes run)
    assert wide_reads(colpart(d.text), s) > 0, "the colpart reads the strided columns without wide loads"


KERNELS = [(2, "loom.mean(x[:, ::2], axis=0)"), (3, "loom.var(x[:, ::3], axis=0)"), (-1, "loom.argmax(x[:, ::-1], axis=0)"),
           (4, "loom.sum(x[:, ::4] ** 2, axis=0)"), (2, "loom.max(x[:, ::2], axis=0)"), (2, "loom.sum(x[::3, ::2], axis=0)")]
CHILD = ("import numpy as np, loom, sys\n"
         "a = np.random.default_rng(5).uniform(-1, 1, size=(1500, 301)).astype(np.float32)\n"
         "a[17, 40] = np.nan\n"
         "x = loom.asarray(a)\n"
         "r, dumps = [], []\n"
         "for e in sys.argv[2:]:\n"
         "    with loom.capture_dumps('llvm', echo=False) as d:\n"
         "        r.append(loom.asnumpy(eval(e)))\n"
         "    dumps.append(d.text)\n"
         "np.savez(sys.argv[1], *r)\n"
         "open(sys.argv[1] + '.ll', 'w').write('\\n;;;;\\n'.join(dumps))\n")


def run_child(tmp_path, name: str, **env: str) -> tuple:
    """the KERNELS' results and their colparts' LLVM IR in a child process with env"""
    e = dict(os.environ, LOOM_CACHE_DIR=str(tmp_path / ("cache" + name)), **env)  # (knobs change the code: own cache)
    out_file = str(tmp_path / (name + ".npz"))
    out = subprocess.run([sys.executable, "-c", CHILD, out_file] + [k for _, k in KERNELS], env=e, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    with open(out_file + ".ll") as f:
        parts = [colpart(t) for t in f.read().split("\n;;;;\n")]
    with np.load(out_file) as f:
        return parts, [f["arr_%d" % i] for i in range(len(f.files))]


def test_switched_off_same_bits(tmp_path) -> None:
    parts_on, on = run_child(tmp_path, "on")
    parts_off, off = run_child(tmp_path, "off", LOOM_HOST_COL_STRIDED_LOADS="0")
    for (s, e), p_on, p_off in zip(KERNELS, parts_on, parts_off):
        assert wide_reads(p_on, s) > 0 and wide_reads(p_off, s) == 0, e
        assert "llvm.masked.gather" in p_off, e  # (the walk for other strides keeps them when on)
    for (_, e), a, b in zip(KERNELS, on, off):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8), err_msg=e)


# ---- the launch specialization on the column stride (KernelIr.col_stride, runtime/host_device.c) ------------
def test_specialized_walk_per_stride() -> None:
    """A launch compiles the one walk its stride needs (host_specialize: KernelIr.col_stride): the stride's
    wide reads and no gathers for 2, 3, 4, -1; gathers and no wide reads for any other stride."""
    x = loom.asarray(data((1500, 301), "float32", seed=3))
    for s in [2, 3, 4, -1, 5, -2]:
        with loom.capture_dumps("llvm", echo=False) as d:
            loom.eval(loom.sum(x[:, ::s] * 2.0, axis=0))
        part = colpart(d.text)
        small = s in (2, 3, 4, -1)
        assert (wide_reads(part, s) > 0) == small, s
        assert ("llvm.masked.gather" in part) != small, s


def test_specialization_off_same_bits(tmp_path) -> None:
    """LOOM_HOST_COL_SPECIALIZE=0: the generic kernel (a copy of the walk per small stride, chosen at run
    time) gives the same bits as the specialized ones."""
    parts_on, on = run_child(tmp_path, "spec")
    parts_off, off = run_child(tmp_path, "generic", LOOM_HOST_COL_SPECIALIZE="0")
    for (s, e), p_on, p_off in zip(KERNELS, parts_on, parts_off):
        assert wide_reads(p_on, s) > 0 and wide_reads(p_off, s) > 0, e
        # the generic kernel keeps the gathering walk for other strides beside its copies; the launch's has one walk
        assert p_on.count("llvm.masked.gather") < p_off.count("llvm.masked.gather"), e
        assert len(p_on) < len(p_off), e
    for (_, e), a, b in zip(KERNELS, on, off):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8), err_msg=e)
