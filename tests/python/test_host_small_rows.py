"""Host kernels over a short last dim known only at run time (RGB pixels, rows of a few features) run as a
copy specialized on that extent (codegen/lower_host_rows.c, KernelIr.row_extent; LOOM_HOST_SMALL_ROWS is
the longest extent specialized, 0 turns it off): the row is unrolled and the loop over rows vectorizes.
Values against NumPy (elementwise: the same bits; float sums against a float64 reference, and NumPy's bits
for float32 rows up to 8, whose order the unrolled fold follows): extents 1..17 around the threshold, tasks
that start mid-row, broadcast operands along either dim, strided / reversed / offset views (which keep the
generic kernel), several dtypes (int, uint8, float16, float64, bool, complex parts), every reduction kind,
several outputs, the point index, empty and 0-d arrays; the IR (interleaved groups across rows) and the
knob in a subprocess (same values, no specialized kernel)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom
from conftest import ON_GPU

host = pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")
EXTENTS = list(range(1, 18)) + [24, 31, 32, 33]


def same(got, want):
    got = loom.asnumpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def close(got, want64, dtype, rtol):
    got = loom.asnumpy(got)
    assert got.dtype == dtype, (got.dtype, dtype)
    np.testing.assert_allclose(got.astype(np.float64), want64, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("e", EXTENTS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16"])
def test_map_with_row_vector(e, dtype):
    r = np.random.default_rng(e)
    x = (r.standard_normal((40001 // e + 3, e)) * 10).astype(dtype)  # ~40k points: several tasks, mid-row starts
    m = (r.standard_normal(e) * 10).astype(dtype)
    s = (r.standard_normal(e) * 3 + 20).astype(dtype)
    gx, gm, gs = loom.asarray(x), loom.asarray(m), loom.asarray(s)
    same((gx - gm) * gs, (x - m) * s)
    same(gx * 3 + gm[None, :], x * 3 + m[None, :])


@pytest.mark.parametrize("e", [2, 3, 4, 7, 8, 9])
def test_image_normalize_uint8(e):
    r = np.random.default_rng(100 + e)
    img = r.integers(0, 256, (37, 61, e), dtype=np.uint8)
    mean = r.random(e).astype(np.float32)
    std = (r.random(e) + 0.5).astype(np.float32)
    got = (loom.astype(loom.asarray(img), loom.float32) * (1.0 / 255.0) - loom.asarray(mean)) / loom.asarray(std)
    same(got, (img.astype(np.float32) * np.float32(1.0 / 255.0) - mean) / std)
    same(loom.asarray(img) // 3 + loom.asarray(img)[:, :1, :], img // 3 + img[:, :1, :])  # broadcast mid dim


def test_tasks_that_start_mid_row():
    r = np.random.default_rng(5)
    x = r.standard_normal((30011, 7)).astype(np.float32)
    b = r.standard_normal(7).astype(np.float32)
    old = loom.config.num_threads
    try:
        for n in (1, 2, 3, 5, 7):
            loom.config.num_threads = n
            same(loom.asarray(x) * loom.asarray(b) + 1, x * b + 1)
            same(loom.asarray(x) / loom.sum(loom.abs(loom.asarray(x)), axis=-1, keepdims=True),
                 x / np.sum(np.abs(x), axis=-1, keepdims=True))
    finally:
        loom.config.num_threads = old


def test_column_broadcast_and_point_index():
    r = np.random.default_rng(6)
    x = r.standard_normal((5003, 3)).astype(np.float32)
    c = r.standard_normal(5003).astype(np.float32)
    gx = loom.asarray(x)
    same(gx + loom.asarray(c)[:, None], x + c[:, None])
    same(loom.arange(5003 * 3, dtype=loom.float32).reshape(5003, 3) * gx,
         np.arange(5003 * 3, dtype=np.float32).reshape(5003, 3) * x)
    a, b = gx * 2, gx - 1  # two outputs of one kernel
    same(a, x * 2)
    same(b, x - 1)


@pytest.mark.parametrize("e", EXTENTS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_float_sums_keep_their_accuracy(e, dtype):
    r = np.random.default_rng(200 + e)
    x = r.standard_normal((3001, e)).astype(dtype)
    x64 = x.astype(np.float64)
    g = loom.asarray(x)
    tol = {"float32": 2e-6, "float64": 1e-14, "float16": 2e-3}[dtype]
    close(loom.sum(g, axis=-1), x64.sum(-1), np.dtype(dtype), tol * e)
    close(loom.mean(g, axis=-1), x64.mean(-1), np.dtype(dtype), tol * e)
    close(g / loom.sum(loom.abs(g), axis=-1, keepdims=True), x64 / np.abs(x64).sum(-1, keepdims=True),
          np.dtype(dtype), 4 * tol * e)
    if dtype == "float32" and e <= 32 and not ON_GPU:  # the host's unrolled fold is NumPy's order (pairwise_sum of a
        # short row); a GPU folds a row in its own order (CuPy's differs from NumPy's too)
        same(loom.sum(g, axis=-1), x.sum(-1))
        same(g / loom.sum(loom.abs(g), axis=-1, keepdims=True), x / np.sum(np.abs(x), axis=-1, keepdims=True))


@pytest.mark.parametrize("e", EXTENTS)
def test_other_reductions(e):
    r = np.random.default_rng(300 + e)
    x = r.standard_normal((2003, e)).astype(np.float32)
    x[5, e // 2] = np.nan
    x[7, :] = 3.0  # ties: the first index
    g = loom.asarray(x)
    same(loom.max(g, axis=-1), x.max(-1))
    same(loom.min(g, axis=-1), x.min(-1))
    same(loom.argmax(g, axis=-1), x.argmax(-1))
    same(loom.argmin(g, axis=-1), x.argmin(-1))
    same(loom.any(g > 1, axis=-1), (x > 1).any(-1))
    same(loom.all(g > -1, axis=-1), (x > -1).all(-1))
    y = (r.random((2003, e)) + 0.5).astype(np.float64)
    np.testing.assert_allclose(loom.asnumpy(loom.prod(loom.asarray(y), axis=-1)), y.prod(-1), rtol=1e-14)
    i = r.integers(-1000, 1000, (2003, e)).astype(np.int32)
    u = r.integers(0, 256, (2003, e)).astype(np.uint8)
    same(loom.sum(loom.asarray(i), axis=-1), i.sum(-1))
    same(loom.sum(loom.asarray(u), axis=-1), u.sum(-1))
    same(loom.max(loom.asarray(i), axis=-1), i.max(-1))
    same(loom.count_nonzero(loom.asarray(u) > 128, axis=-1), np.count_nonzero(u > 128, axis=-1))


@pytest.mark.parametrize("e", [3, 5, 8, 12])
def test_softmax_and_var_rows(e):
    r = np.random.default_rng(400 + e)
    x = r.standard_normal((4001, e)).astype(np.float32)
    g = loom.asarray(x)
    ex = loom.exp(g - loom.max(g, axis=-1, keepdims=True))
    got = ex / loom.sum(ex, axis=-1, keepdims=True)
    x64 = x.astype(np.float64)
    want = np.exp(x64 - x64.max(-1, keepdims=True))
    close(got, want / want.sum(-1, keepdims=True), np.float32, 1e-6)
    close(loom.var(g, axis=-1), x64.var(-1), np.float32, 1e-5)
    close(loom.std(g, axis=-1, keepdims=True), x64.std(-1, keepdims=True), np.float32, 1e-5)


def test_views_keep_their_values():
    """Strided, reversed, offset and transposed views: rows that are not packed take the generic kernel."""
    r = np.random.default_rng(7)
    big = r.standard_normal((2001, 10)).astype(np.float32)
    g = loom.asarray(big)
    for sl in (np.s_[:, :3], np.s_[:, ::3], np.s_[::2, 2:5], np.s_[:, 6:2:-1], np.s_[1:, 7:]):
        same(g[sl] * 2 + 1, big[sl] * 2 + 1)
        close(loom.sum(g[sl], axis=-1), big[sl].astype(np.float64).sum(-1), np.float32, 1e-5)
    rev = np.ascontiguousarray(big[:, :3])[:, ::-1]  # stride -1 rows of 3: packed backwards, not specialized
    same(loom.asarray(np.ascontiguousarray(big[:, :3]))[:, ::-1] - 1, rev - 1)
    t = r.standard_normal((3, 3001)).astype(np.float32)
    same(loom.asarray(t).T * 2, t.T * 2)
    close(loom.sum(loom.asarray(t).T, axis=-1), t.T.astype(np.float64).sum(-1), np.float32, 1e-5)
    z = (r.standard_normal((3001, 3)) + 1j * r.standard_normal((3001, 3))).astype(np.complex64)
    gz = loom.asarray(z)
    same(gz.real * 2 + gz.imag, z.real * 2 + z.imag)  # stride-2 rows of 6: packed
    close(loom.sum(gz.real, axis=-1), z.real.astype(np.float64).sum(-1), np.float32, 1e-5)
    close(loom.abs(loom.sum(gz, axis=-1)), np.abs(z.astype(np.complex128).sum(-1)), np.float32, 1e-5)


def test_empty_and_0d():
    for shape in ((0, 3), (4, 0), (0, 0), (2, 0, 3)):
        x = np.ones(shape, np.float32)
        same(loom.asarray(x) * 2, x * 2)
        same(loom.sum(loom.asarray(x), axis=-1), x.sum(-1))
    same(loom.asarray(np.float32(3)) * 2, np.float32(3) * 2)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    same(loom.sum(loom.asarray(x)), x.sum())  # a full reduction: not a row kernel
    same(loom.sum(loom.asarray(x), axis=0), x.sum(0))


def vectorized_across_rows(text):
    return "strided.vec" in text or "interleaved.vec" in text


@host
def test_ir_interleaves_across_rows():
    x = loom.asarray(np.ones((4096, 3), np.float32))
    b = loom.asarray(np.ones(3, np.float32))
    with loom.capture_dumps("llvm", echo=False) as d:
        loom.asnumpy(loom.fuse(kernel_name="small_rows_ir")(lambda x, b: x * b)(x, b))
    assert vectorized_across_rows(d.text), d.text[:4000]


@host
def test_knob_turns_it_off():
    code = ("import loom, numpy as np\n"
            "x = np.random.default_rng(1).standard_normal((4096, 7)).astype(np.float32)\n"
            "g = loom.asarray(x)\n"
            "with loom.capture_dumps('llvm', echo=False) as d:\n"
            "    r = loom.asnumpy(g / loom.sum(loom.abs(g), axis=-1, keepdims=True))\n"
            "    s = loom.asnumpy(g * 3 - 1)\n"
            "print('strided.vec' in d.text, np.array_equal(r, x / np.sum(np.abs(x), axis=-1, keepdims=True)),"
            " np.array_equal(s, x * 3 - 1))\n")
    for knob, want in (("0", "False True True"), ("8", "True True True")):
        env = dict(os.environ, LOOM_HOST_SMALL_ROWS=knob, LOOM_HOST_DISK_CACHE="0")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == want, (knob, out.stdout)


@pytest.mark.parametrize("e", [9, 12, 16])
def test_float16_rows_of_9_to_16(e):
    """Rows of 9-16 float16 points are specialized too (codegen/lower_host_rows.c: their generic walk took 70 ms
    for a float16 log-softmax of 10^6 x 16, specialized 11): values against NumPy / a float64 reference."""
    r = np.random.default_rng(500 + e)
    x = (r.standard_normal((3001, e)) * 3).astype(np.float16)
    g = loom.asarray(x)
    z = g - loom.max(g, axis=-1, keepdims=True)
    got = z - loom.log(loom.sum(loom.exp(z), axis=-1, keepdims=True))
    x64 = x.astype(np.float64)
    z64 = x64 - x64.max(-1, keepdims=True)
    close(got, z64 - np.log(np.exp(z64).sum(-1, keepdims=True)), np.float16, 4e-3)
    same(g * 2 - g[0][None, :], x * 2 - x[0][None, :])
    close(loom.sum(g, axis=-1), x64.sum(-1), np.float16, 2e-3 * e)
