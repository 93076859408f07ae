"""Host stream compaction as vector code (codegen/lower_scan_compact.c): a scan kernel whose stores are all
compaction scatters (where(m, rank - 1 + uniform terms, q)) stages each chunk's mask and values, then
compresses them (AVX-512 vpcompress in registers, a masked store) or copies them one by one (sparse
chunks); where q is inside the limit or a chunk's slots leave it, the exact point-by-point semantics run.

Everything is checked against NumPy (or a serial NumPy reference of the scatter's semantics): nonzero,
flatnonzero, argwhere, x[mask], compress and extract for sizes around vector widths, the 512-point chunks
and the row split of large masks (_indexing._compact_rows, also called directly with few rows so that
small sizes take the scan kernel without the count's store), every dtype, densities 0 / 1 % / 50 % / 99 %
/ 100 %, NaN, 0-d and empty inputs, non-contiguous inputs and multi-dimensional nonzero. Exact equality:
a compaction moves values, it computes none.
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import loom
from loom import _core, _indexing
from test_compact import DTYPES, data, host  # the same dtypes and values as the compaction tests

SIZES = [1, 15, 16, 17, 63, 64, 65, 511, 512, 513, 1023, 1025, 3000]
BIG = [65536, 65536 + 3, 8 * 512 * 5 + 7, (1 << 20) + 11]


def mask(n, density, seed=1):
    return np.random.default_rng(seed).random(n) < density


def host_avx512():
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return all(re.search(r"\b%s\b" % f, flags) for f in ("avx512f", "avx512bw", "avx512_vbmi2"))


# ---- the public calls ---------------------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES + BIG)
@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 0.99, 1.0])
def test_calls_sizes_densities(n, density):
    r = np.random.default_rng(n)
    h = np.where(r.random(n) < density, np.float32(2.5), np.float32(0.5)).astype(np.float32)
    x = loom.asarray(h)
    np.testing.assert_array_equal(host(x[x > 1]), h[h > 1])
    np.testing.assert_array_equal(host(loom.flatnonzero(x > 1)), np.flatnonzero(h > 1))
    np.testing.assert_array_equal(host(loom.nonzero(x > 1)[0]), np.nonzero(h > 1)[0])
    np.testing.assert_array_equal(host(loom.argwhere(x > 1)), np.argwhere(h > 1))
    np.testing.assert_array_equal(host(loom.compress(x > 1, x)), np.compress(h > 1, h))
    np.testing.assert_array_equal(host(loom.extract(x > 1, x)), np.extract(h > 1, h))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [17, 65, 513, 65536 + 3])
def test_dtypes(dtype, n):
    h = data(n, dtype, 2)
    hm = mask(n, 0.4, 3)
    x, m = loom.asarray(h), loom.asarray(hm)
    got = host(x[m])
    assert got.dtype == h.dtype
    np.testing.assert_array_equal(got, h[hm])
    np.testing.assert_array_equal(host(loom.nonzero(x)[0]), np.nonzero(h)[0])  # x != 0 of the dtype
    np.testing.assert_array_equal(host(x[x != 0]), h[h != 0])
    np.testing.assert_array_equal(host(loom.extract(m, x)), np.extract(hm, h))


@pytest.mark.parametrize("n", [64, 513, 65536 + 3])
def test_nan_is_nonzero(n):
    h = data(n, "float64", 4)
    h[::5] = np.nan
    h[1::7] = 0.0
    x = loom.asarray(h)
    np.testing.assert_array_equal(host(loom.nonzero(x)[0]), np.nonzero(h)[0])
    np.testing.assert_array_equal(host(loom.flatnonzero(x)), np.flatnonzero(h))
    np.testing.assert_array_equal(host(x[x != 0]), h[h != 0])  # NaN != 0 is true
    np.testing.assert_array_equal(host(x[x > 0]), h[h > 0])    # NaN > 0 is false
    hc = (h + 1j * np.roll(h, 1)).astype(np.complex128)
    np.testing.assert_array_equal(host(loom.nonzero(loom.asarray(hc))[0]), np.nonzero(hc)[0])


def test_empty_and_0d():
    e = np.zeros(0, np.float32)
    x = loom.asarray(e)
    np.testing.assert_array_equal(host(x[x > 1]), e[e > 1])
    np.testing.assert_array_equal(host(loom.flatnonzero(x)), np.flatnonzero(e))
    np.testing.assert_array_equal(host(loom.nonzero(x)[0]), np.nonzero(e)[0])
    assert host(loom.argwhere(loom.asarray(np.zeros((0, 3))))).shape == np.argwhere(np.zeros((0, 3))).shape
    for v in (0.0, 2.0, np.nan):
        h = np.array(v, np.float32)
        z = loom.asarray(h)
        np.testing.assert_array_equal(host(loom.flatnonzero(z)), np.flatnonzero(h))
        np.testing.assert_array_equal(host(loom.argwhere(z)), np.argwhere(h))
        np.testing.assert_array_equal(host(loom.extract(z, z)), np.extract(h, h))
        with pytest.raises(ValueError):
            np.nonzero(h)
        with pytest.raises(ValueError):
            loom.nonzero(z)


@pytest.mark.parametrize("shape", [(3, 5), (7, 9, 2), (300, 257), (2, 3, 4, 5), (1, 70000), (70000, 1)])
def test_multidimensional(shape):
    h = data(int(np.prod(shape)), "float32", 5).reshape(shape)
    x = loom.asarray(h)
    for g, want in zip(loom.nonzero(x > 0.3), np.nonzero(h > 0.3)):
        np.testing.assert_array_equal(host(g), want)
    np.testing.assert_array_equal(host(loom.argwhere(x > 0.3)), np.argwhere(h > 0.3))
    np.testing.assert_array_equal(host(x[x > 0.3]), h[h > 0.3])
    np.testing.assert_array_equal(host(loom.flatnonzero(x > 0.3)), np.flatnonzero(h > 0.3))


def test_non_contiguous():
    h = data(700 * 301, "float32", 6).reshape(700, 301)
    x = loom.asarray(h)
    for xs, hs in ((x[:, ::2], h[:, ::2]), (x.T, h.T), (x[::-3, 1:], h[::-3, 1:]), (x[:, 7], h[:, 7])):
        np.testing.assert_array_equal(host(xs[xs > 0]), hs[hs > 0])
        for g, want in zip(loom.nonzero(xs > 0.5), np.nonzero(hs > 0.5)):
            np.testing.assert_array_equal(host(g), want)
        np.testing.assert_array_equal(host(loom.argwhere(xs < -1)), np.argwhere(hs < -1))
    m = x[:, 3] > 0  # a strided mask over another strided array
    np.testing.assert_array_equal(host(x[:, 5][m]), h[:, 5][h[:, 3] > 0])
    np.testing.assert_array_equal(host(loom.compress(m, x[:, 9])), np.compress(h[:, 3] > 0, h[:, 9]))


@pytest.mark.parametrize("density", [0.0, 0.03, 0.5, 1.0])
def test_one_kept_run(density):
    """Runs of kept points crossing 64-point words and 512-point chunks; a single kept point first / last."""
    for n in (512, 1537, 65536 + 513):
        for hm in (mask(n, density, n), np.arange(n) % 700 < 300, np.arange(n) == 0, np.arange(n) == n - 1):
            h = np.arange(n, dtype=np.int64) * 3 - 7
            np.testing.assert_array_equal(host(loom.asarray(h)[loom.asarray(hm)]), h[hm])
            np.testing.assert_array_equal(host(loom.flatnonzero(loom.asarray(hm))), np.flatnonzero(hm))


# ---- the scan kernel directly: the row compaction with few rows (any size) ----------------------------


@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "int64", "complex128"])
def test_rows_kernel_small(rows, n, dtype):
    if loom.cuda.is_available():
        pytest.skip("the host's row compaction called directly: host arrays (the default device is a GPU)")
    if n < rows:
        pytest.skip("fewer points than rows")
    h = data(n, dtype, n)
    for density in (0.0, 0.01, 0.5, 1.0):
        hm = mask(n, density, n + 1)
        got = _indexing._compact_rows(loom.asarray(hm), [loom.asarray(h), _core.iota((n,))], rows)
        np.testing.assert_array_equal(host(got[0]), h[hm])
        np.testing.assert_array_equal(host(got[1]), np.flatnonzero(hm))


def scatter_ref(hm, values, q, shift, limit, base):
    """The scan kernel's semantics, point by point: kept points to rank - 1 + shift, the others to q, each
    store only where 0 <= index < limit (the last write wins)."""
    out, rank = base.copy(), 0
    for i, k in enumerate(hm):
        rank += int(k)
        idx = rank - 1 + shift if k else q
        if 0 <= idx < limit:
            out[idx] = values[i]
    return out


@pytest.mark.parametrize("n", [17, 513, 3000])
@pytest.mark.parametrize("q,shift,size", [(-1, 0, None), (0, 0, None), (5, 3, None), (-1, -40, None),
                                          (-1, 10, 300), (-1, 0, 100), (2, -3, 50)])
def test_exact_semantics(n, q, shift, size):
    """A compaction-shaped scatter whose skipped points land inside the array (q in range), or whose
    kept slots start below 0 or pass the end: chunks that cannot take the compress run the exact loop."""
    if loom.cuda.is_available():  # several points storing to q: the last in order wins on the host only
        pytest.skip("the host scan's store order (the default device is a GPU)")
    size = n + 8 if size is None else size
    hm = mask(n, 0.5, n)
    h = data(n, "float64", n + 2)
    base_h = np.full(size, -9.0)
    i32 = _indexing._code("int32")
    m = loom.asarray(hm)
    ranks = _core.scan(0, _core.cast(m, i32), 0, i32)
    dest = _core.where(m, _indexing._b("add", _indexing._b("sub", ranks, 1), shift), q)
    got = _core.scatter(loom.asarray(base_h), dest, loom.asarray(h), 0)  # SET into a real base
    np.testing.assert_array_equal(host(got), scatter_ref(hm, h, q, shift, size, base_h))


def test_vector_code_is_emitted():
    """On AVX-512 hosts the scan kernel of a compaction (no count store: the row form) compresses in
    registers (vpcompress; the memory form of llvm.masked.compressstore is microcoded on Zen 4)."""
    if not host_avx512() or loom.cuda.is_available():
        pytest.skip("host without AVX-512 BW / VBMI2, or a GPU default device")
    n = 4099
    i32 = _indexing._code("int32")
    for iota in (False, True):
        x = loom.asarray(data(n, "float32", 9))
        m = x > 0
        ranks = _core.scan(0, _core.cast(m, i32), 0, i32)
        dest = _core.where(m, _indexing._b("sub", ranks, 1), -1)
        v = _core.iota((n,)) if iota else x
        out = _core.scatter(_core.movement(2, _core.const(0, v._dtype_code), (n,), None, None), dest, v, 2)
        ir = loom.inspect(out, what="llvm")["llvm"]
        assert "llvm.x86.avx512.mask.compress" in ir, loom.inspect(out, what="kernels")["kernels"]
        assert "compressstore" not in ir and "scatter.sink" not in ir
    code = ("import numpy as np, loom\nfrom loom import _core, _indexing\n"
            "x = loom.asarray(np.arange(-50, 50, dtype=np.float32)); m = x > 0\n"
            "i32 = _indexing._code('int32')\n"
            "r = _core.scan(0, _core.cast(m, i32), 0, i32)\n"
            "d = _core.where(m, _indexing._b('sub', r, 1), -1)\n"
            "o = _core.scatter(_core.movement(2, _core.const(0, x._dtype_code), (100,), None, None), d, x, 2)\n"
            "ir = loom.inspect(o, what='llvm')['llvm']\n"
            "assert 'avx512.mask.compress' not in ir and 'scatter.sink' in ir\n"
            "np.testing.assert_array_equal(o.get()[:49], np.arange(1, 50, dtype=np.float32))\n")
    env = dict(os.environ, LOOM_HOST_COMPACT_VEC="0", LOOM_HOST_DISK_CACHE="0")  # the knob is not in the key
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd="/tmp")


@pytest.mark.parametrize("n", [1, 17, 513, 65536 + 3])
def test_compress_extract_forms(n):
    """compress / extract of 1-d data take the direct compaction (a mask shorter than the data selects
    from its first points, a non-bool condition is tested != 0, out= receives the result); longer
    conditions and axes of 2-d data keep the positions and a gather."""
    h = data(n, "float32", 12)
    x = loom.asarray(h)
    c = mask(n, 0.3, 13)
    k = n // 2 + 1
    np.testing.assert_array_equal(host(loom.compress(loom.asarray(c[:k]), x)), np.compress(c[:k], h))
    ci = (np.arange(n) % 3).astype(np.int16)
    want = np.compress(ci, h)  # type: ignore[arg-type]  # NumPy takes any condition, by its truth
    np.testing.assert_array_equal(host(loom.compress(loom.asarray(ci), x)), want)
    o = loom.empty(int(c.sum()), dtype=np.float32)
    assert loom.compress(loom.asarray(c), x, out=o) is o
    np.testing.assert_array_equal(host(o), np.compress(c, h))
    longer = np.concatenate([c, [False, False]])
    np.testing.assert_array_equal(host(loom.compress(loom.asarray(longer), x)), np.compress(longer, h))
    h2 = np.stack([h, -h])
    np.testing.assert_array_equal(host(loom.compress(loom.asarray(c), loom.asarray(h2), axis=1)), np.compress(c, h2, axis=1))
    np.testing.assert_array_equal(host(loom.compress(loom.asarray(c), loom.asarray(h2))), np.compress(c, h2))
    # extract of a pending mask and pending data, 2-d, and a mask with fewer points than the data
    np.testing.assert_array_equal(host(loom.extract(loom.asarray(h2) > 0, loom.asarray(h2) * 2)), np.extract(h2 > 0, h2 * 2))
    np.testing.assert_array_equal(host(loom.extract(loom.asarray(c[:k]), x)), np.extract(c[:k], h))


@pytest.mark.parametrize("n", [1, 64, 513, 5000])
def test_one_kernel_form_with_count(n):
    """_compact's one kernel (small masks, one thread): the count's store (a scatter at the last point) runs
    point by point beside the vector compaction; values and count against NumPy."""
    h = data(n, "float32", 14)
    x = loom.asarray(h)
    fulls, count = _indexing._compact_graph(x > 0, [x, _core.iota((n,))])
    if host_avx512() and not loom.cuda.is_available():
        ir = loom.inspect([fulls[0], fulls[1], count], what="llvm")["llvm"]
        assert "llvm.x86.avx512.mask.compress" in ir and "compact.ostore" in ir
    loom.eval(fulls[0], fulls[1], count)
    k = int(host(count)[0])
    assert k == int((h > 0).sum())
    np.testing.assert_array_equal(host(fulls[0])[:k], h[h > 0])
    np.testing.assert_array_equal(host(fulls[1])[:k], np.flatnonzero(h > 0))
