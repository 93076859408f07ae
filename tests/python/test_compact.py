"""Stream compaction of boolean masks (python/loom/_indexing.py _compact, passes/fuse_gather.c): a[mask],
nonzero and where(c) against NumPy on the default device (the host here; the GPU where one is visible,
where the look-back scan kernel runs it), for sizes around the look-back tiles (2048 points), every dtype,
all-true / all-false / NaN masks, multi-dimensional masks, masks of leading axes (positions, then a
gather) and non-contiguous data; the former path (LOOM_GPU_COMPACT=0) against the same references; the
kernel plan (one scan kernel stores the kept values and the count: the ranks never reach memory); and
the PTX of that kernel (sm_90, no GPU needed), assembled by ptxas when the CUDA toolkit is installed.
Exact equality throughout: a compaction moves values, it computes none.
"""
import os
import sys
import re
import shutil
import subprocess

import numpy as np
import pytest

import loom
from loom import _indexing

GPU = loom.cuda.is_available()
TILE = 2048  # points of a look-back tile (256 threads x 8 items)
SIZES = [0, 1, 31, 32, 33, 1025, TILE - 1, TILE, TILE + 1, 3 * TILE + 7, 65536 + 3]
DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def data(n, dtype, seed=0):
    r = np.random.default_rng(seed)
    if dtype == "bool":
        return r.random(n) < 0.5
    if dtype.startswith("complex"):
        return (r.standard_normal(n) + 1j * r.standard_normal(n)).astype(dtype)
    if dtype.startswith("float"):
        return r.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return r.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dtype)


def check_mask(h, hm):
    x, m = loom.asarray(h), loom.asarray(hm)
    got = host(x[m])
    assert got.dtype == h.dtype and got.shape == h[hm].shape
    np.testing.assert_array_equal(got, h[hm])
    for g, want in zip(loom.nonzero(m), np.nonzero(hm)):
        g = host(g)
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("n", SIZES)
def test_mask_sizes(n):
    h = data(n, "float32", n)
    x = loom.asarray(h)
    np.testing.assert_array_equal(host(x[x > 0]), h[h > 0])  # the predicate fused into the scan kernel
    np.testing.assert_array_equal(host(loom.nonzero(x > 0)[0]), np.nonzero(h > 0)[0])
    np.testing.assert_array_equal(host(loom.flatnonzero(x < 0.5)), np.flatnonzero(h < 0.5))


@pytest.mark.parametrize("dtype", DTYPES)
def test_mask_dtypes(dtype):
    h = data(3 * TILE + 5, dtype, 1)
    check_mask(h, np.random.default_rng(2).random(h.size) < 0.3)
    x = loom.asarray(h)
    np.testing.assert_array_equal(host(x[x != 0]), h[h != 0])
    np.testing.assert_array_equal(host(loom.nonzero(x)[0]), np.nonzero(h)[0])


@pytest.mark.parametrize("n", [1, TILE, TILE + 1, 65536 + 3])
def test_all_true_all_false(n):
    h = data(n, "int32", 3)
    check_mask(h, np.ones(n, bool))
    check_mask(h, np.zeros(n, bool))
    one = np.zeros(n, bool)
    one[-1] = True  # only the last point: the count comes from it
    check_mask(h, one)
    one[:] = False
    one[0] = True
    check_mask(h, one)


def test_nan():
    h = data(5 * TILE + 3, "float64", 4)
    h[::7] = np.nan
    x = loom.asarray(h)
    np.testing.assert_array_equal(host(x[x > 0]), h[h > 0])  # NaN > 0 is false
    np.testing.assert_array_equal(host(x[x != x]), h[h != h])
    np.testing.assert_array_equal(host(loom.nonzero(x)[0]), np.nonzero(h)[0])  # NaN is non-zero


@pytest.mark.parametrize("shape", [(7, 9), (3, 1, 5), (2, 3, 4, 5), (1, TILE + 3), (TILE + 3, 2), (0, 4)])
def test_multidimensional(shape):
    h = data(int(np.prod(shape)), "float32", 5).reshape(shape)
    check_mask(h, h > 0)
    x = loom.asarray(h)
    np.testing.assert_array_equal(host(x[x > 0]), h[h > 0])
    got = loom.where(x > 0)
    for g, want in zip(got, np.where(h > 0)):
        np.testing.assert_array_equal(host(g), want)


def test_leading_axes_mask():
    h = data(6 * 700, "int16", 6).reshape(6, 700)
    hm = np.array([True, False, True, True, False, True])
    np.testing.assert_array_equal(host(loom.asarray(h)[loom.asarray(hm)]), h[hm])
    h3 = data(40 * 50 * 3, "float32", 7).reshape(40, 50, 3)
    hm3 = h3[..., 0] > 0
    np.testing.assert_array_equal(host(loom.asarray(h3)[loom.asarray(hm3)]), h3[hm3])
    np.testing.assert_array_equal(host(loom.asarray(h3)[:, loom.asarray(hm3[0])]), h3[:, hm3[0]])


def test_non_contiguous():
    h = data(300 * 41, "float64", 8).reshape(300, 41)
    x = loom.asarray(h)
    for xs, hs in ((x[:, ::2], h[:, ::2]), (x.T, h.T), (x[::-3, 1:], h[::-3, 1:])):
        np.testing.assert_array_equal(host(xs[xs > 0]), hs[hs > 0])
        for g, want in zip(loom.nonzero(xs > 0.5), np.nonzero(hs > 0.5)):
            np.testing.assert_array_equal(host(g), want)
    m = x[:, 3] > 0  # a strided mask over another array
    np.testing.assert_array_equal(host(x[:, 5][m]), h[:, 5][h[:, 3] > 0])


def test_result_is_independent():
    h = data(10000, "float32", 9)
    x = loom.asarray(h)
    sparse, dense = x[x > 2.5], x[x > -2.5]  # a copy (under a quarter kept) and a view of the full array
    x[...] = 0
    np.testing.assert_array_equal(host(sparse), h[h > 2.5])
    np.testing.assert_array_equal(host(dense), h[h > -2.5])
    np.testing.assert_array_equal(host(dense * 2), h[h > -2.5] * 2)  # results feed later kernels


def test_former_path(monkeypatch):
    monkeypatch.setenv("LOOM_GPU_COMPACT", "0")
    h = data(3 * TILE + 1, "float32", 10)
    x = loom.asarray(h)
    np.testing.assert_array_equal(host(x[x > 0]), h[h > 0])
    np.testing.assert_array_equal(host(loom.nonzero(x > 0)[0]), np.nonzero(h > 0)[0])
    h2 = h[:TILE].reshape(32, 64)
    check_mask(h2, h2 > 0)


def compaction_nodes(n=5000):
    x = loom.asarray(data(n, "float32", 11))
    m = x > 0
    fulls, count = _indexing._compact_graph(m, [x])
    return x, fulls, count


def test_one_scan_kernel_stores_values():
    """The kept values are stored by the scan kernel (a scatter store of its scan phase); the scan's
    ranks are not stored; the predicate is computed from x inside it (no bool array read); and it is the
    plan's only kernel: the full-size result is a put scatter (op 2), so no kernel fills it first."""
    _, fulls, _ = compaction_nodes()
    text = loom.inspect(fulls[0], what="kernels")["kernels"]
    kernels = re.split(r"(?m)^kernel ", text)[1:]
    scans = [k for k in kernels if re.search(r"(?m)^\s*phase scan", k)]
    assert len(scans) == 1, text
    scan = scans[0]
    phase = re.search(r"(?m)^\s*phase scan sum i32 (.*)$", scan)
    assert phase, scan  # int32 ranks below 2^31 points
    stores = re.findall(r"store buf (\d+) %\d+( at %\d+ limit %\d+ set)?", phase.group(1))
    assert stores and all(s[1] for s in stores), phase.group(1)  # every store a scatter: no ranks stored
    assert re.search(r"= gt b1 ", scan) and re.search(r"buf \d+ in f32", scan)
    assert not re.search(r"buf \d+ in b1", scan)
    assert len(kernels) == 1, text  # no fill of the full-size base


@pytest.mark.parametrize("density", [0.0, 0.02, 0.5, 0.98, 1.0])
def test_densities(density):
    """Masks of every density (the host's store of a skipped point goes to a stack slot, not around a
    branch: whatever the density, every kept value lands at its rank and nothing else is written)."""
    r = np.random.default_rng(7)
    for n in (1, 7, 4099):
        h = r.standard_normal(n).astype(np.float64)
        hm = r.random(n) < density
        check_mask(h, hm)
        hc = (h + 1j * h[::-1]).astype(np.complex64)
        np.testing.assert_array_equal(host(loom.asarray(hc)[loom.asarray(hm)]), hc[hm])


def test_host_compaction_has_no_branch_around_the_store():
    """The host scan kernel's scatter stores are branch-free (codegen/lower_gather.c: a skipped point stores
    to a stack slot, the address masked through an empty inline asm so that LLVM does not fold it back into
    a branch); LOOM_HOST_COMPACT_BRANCHLESS=0 restores the branch (a child process: the knob is read once)."""
    _, fulls, _ = compaction_nodes()
    ir = loom.inspect(fulls[0], what="llvm")["llvm"]
    if "llvm.x86.avx512.mask.compress" not in ir:  # AVX-512 hosts compress vectors (lower_scan_compact.c)
        assert "scatter.sink" in ir and 'asm "", "=r,0"' in ir, ir[:3000]
    assert "scatter.store" not in ir
    code = ("import numpy as np, loom\nfrom loom import _indexing\n"
            "x = loom.asarray(np.arange(-50, 50, dtype=np.float32))\n"
            "f = _indexing._compact_graph(x > 0, [x])[0][0]\n"
            "ir = loom.inspect(f, what='llvm')['llvm']\n"
            "assert 'scatter.store' in ir and 'scatter.sink' not in ir\n"
            "np.testing.assert_array_equal(np.asarray(loom.asnumpy(x[x > 0])), np.arange(1, 50, dtype=np.float32))\n")
    env = dict(os.environ, LOOM_HOST_COMPACT_BRANCHLESS="0", LOOM_HOST_COMPACT_VEC="0", LOOM_HOST_DISK_CACHE="0")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)


def ptx_modules(text):
    """The modules of an inspect PTX dump (each begins at its '.version' line)."""
    parts = re.split(r"(?m)^(?=\.version )", text)
    return parts[1:]


def test_compaction_ptx():
    _, fulls, _ = compaction_nodes()
    text = loom.inspect(fulls[0], what="ptx", ptx_arch="sm_90")["ptx"]
    if text.startswith("unavailable"):
        pytest.skip(text)
    mods = [m for m in ptx_modules(text) if "_scanp(" in m]
    assert len(mods) == 1, text[:2000]
    body = [b for b in mods[0].split(".visible .entry") if "_scanp(" in b.split("\n")[0]][0]
    assert re.search(r"atom\.global\.add\.u32", body)      # the tile ticket
    assert re.search(r"vote\.sync\.ballot\.b32", body)     # the look-back window
    assert re.search(r"ld\.global\.f32", body)              # x read in the scan (the fused predicate)
    assert re.search(r"st\.global\.f32", body)              # the kept values stored
    assert re.search(r"setp\.[a-z]+\.u64|setp\.lt\.u64|setp\.gt\.u64|setp\.ge\.u64|setp\.le\.u64", body)  # the guard
    assert "ld.global.u8" not in body                       # no stored bool mask read
    ptxas = shutil.which("ptxas") or next((p for p in (os.path.join(os.environ.get("CUDA_HOME", ""), "bin", "ptxas"),
                                                        "/usr/local/cuda/bin/ptxas") if os.path.exists(p)), None)
    if not ptxas:
        pytest.skip("no ptxas (CUDA toolkit) to assemble the PTX")
    for i, mod in enumerate(ptx_modules(text)):
        r = subprocess.run([ptxas, "-arch=sm_90", "-o", os.devnull, "-"], input=mod.encode(), capture_output=True)
        if r.returncode != 0 and b"-" in r.stderr[:200]:  # older ptxas: no stdin
            import tempfile
            with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as fh:
                fh.write(mod)
            r = subprocess.run([ptxas, "-arch=sm_90", "-o", os.devnull, fh.name], capture_output=True)
            os.unlink(fh.name)
        assert r.returncode == 0, r.stderr.decode()[:2000]


@pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")
@pytest.mark.parametrize("n", [(1 << 20) + 7, 1 << 26])
def test_gpu_large(n):
    h = data(n, "float32", n & 0xFFFF)
    x = loom.asarray(h)
    np.testing.assert_array_equal(host(x[x > 0]), h[h > 0])
    np.testing.assert_array_equal(host(loom.nonzero(x > 0)[0]), np.nonzero(h > 0)[0])
    for _ in range(3):  # repeated runs: the ticket counter and the status words are cleared each time
        np.testing.assert_array_equal(host(x[x > 1]), h[h > 1])


@pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")
@pytest.mark.parametrize("dtype", ["int8", "float16", "int64", "complex128", "bool"])
def test_gpu_large_dtypes(dtype):
    h = data((1 << 20) + 7, dtype, 12)
    check_mask(h, np.random.default_rng(13).random(h.size) < 0.7)


@pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")
def test_gpu_lookback_off(monkeypatch):
    """The compaction through the two-entry split scan (LOOM_GPU_SCAN_LOOKBACK=0 in a fresh process:
    the switch is read once)."""
    code = ("import numpy as np, loom\n"
            "h = np.random.default_rng(0).standard_normal((1 << 20) + 7).astype(np.float32)\n"
            "x = loom.asarray(h)\n"
            "assert np.array_equal(x[x > 0].get(), h[h > 0])\n"
            "assert np.array_equal(loom.nonzero(x > 0)[0].get(), np.nonzero(h > 0)[0])\n")
    env = dict(os.environ, LOOM_GPU_SCAN_LOOKBACK="0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True)
    assert r.returncode == 0, r.stderr.decode()[-2000:]


def test_put_scatter_graph():
    """loom_scatter's op 2 (put, ir.h IR_SCATTER_PUT): the values land at their indices as with set, the
    graph has no kernel for the base, and the IR prints the op; an op past 2 is a clear error."""
    from loom import _core
    from loom._common import _code
    n = 1000
    perm = np.random.default_rng(3).permutation(n)
    v = np.arange(n, dtype=np.float32) * 0.5 - 7
    base = _core.movement(2, _core.const(0, _code("float32")), (n,), None, None)
    y = _core.scatter(base, loom.asarray(perm), loom.asarray(v), 2)  # every index written once
    ref = np.empty(n, np.float32)
    ref[perm] = v
    np.testing.assert_array_equal(host(y), ref)
    text = loom.inspect(_core.scatter(base, loom.asarray(perm), loom.asarray(v), 2), what="kernels")["kernels"]
    assert len(re.split(r"(?m)^kernel ", text)[1:]) == 1, text  # the scatter kernel alone
    with pytest.raises(Exception, match=r"set \(0\), add \(1\) or put \(2\)"):
        _core.scatter(base, loom.asarray(perm), loom.asarray(v), 3)


@pytest.mark.parametrize("n", [1, 5, TILE + 1])
def test_put_results_all_false_all_true_nonzero(n):
    """nonzero and a[mask] through the put scatters: every kept element written, nothing past the count
    read (all-false gives empty results; all-true the whole array)."""
    h = np.arange(n, dtype=np.int32) - n // 2
    for mask in (np.zeros(n, bool), np.ones(n, bool), h % 3 == 0):
        m = loom.asarray(mask)
        np.testing.assert_array_equal(host(loom.nonzero(m)[0]), np.nonzero(mask)[0])
        np.testing.assert_array_equal(host(loom.asarray(h)[m]), h[mask])


# ---- the host's row compaction (_indexing._compact_rows): large host masks cut into rows, one pass per core
ROWS_N = [_indexing._ROWS_MIN_N, _indexing._ROWS_MIN_N + 3, 2 * _indexing._ROWS_MIN_N + 1, 5 * 65536 + 11]


@pytest.fixture(params=[2, 3, 8])
def host_threads(request):
    before = loom.config.num_threads
    loom.config.num_threads = request.param
    yield request.param
    loom.config.num_threads = before


@pytest.mark.skipif(GPU, reason="the row compaction is the host's (the default device here is a GPU)")
@pytest.mark.parametrize("n", ROWS_N)
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_host_rows_masks(host_threads, n, density):
    """Rows of n // rows points and a tail of n % rows (written on the host after the kernel) against NumPy:
    a[mask] for several dtypes, 1-d and 2-d nonzero; the results have exactly `count` elements."""
    assert _indexing._host_rows(loom.asarray(np.zeros(n, bool))) > 1
    r = np.random.default_rng(n + host_threads)
    hm = r.random(n) < density
    for dtype in ("float64", "complex64", "int8", "bool"):
        h = data(n, dtype, 3)
        got = loom.asarray(h)[loom.asarray(hm)]
        assert got.shape == (int(hm.sum()),)
        np.testing.assert_array_equal(host(got), h[hm])
    np.testing.assert_array_equal(host(loom.nonzero(loom.asarray(hm))[0]), np.nonzero(hm)[0])
    rows = n // 7 if n % 7 == 0 else None
    if rows:
        h2 = hm.reshape(rows, 7)
        for g, e in zip(loom.nonzero(loom.asarray(h2)), np.nonzero(h2)):
            np.testing.assert_array_equal(host(g), e)


@pytest.mark.skipif(GPU, reason="the row compaction is the host's")
def test_host_rows_fused_mask_and_independent_result(host_threads):
    """The mask is an expression (computed in both passes, never stored); the result owns its memory (a
    later write to x does not reach it) and feeds later kernels; the knob off gives the same values."""
    n = 3 * 65536 + 5
    h = data(n, "float32", 12)
    x = loom.asarray(h)
    got = x[(x > 0.5) & (x < 2)]
    want = h[(h > 0.5) & (h < 2)]
    x[...] = 0
    np.testing.assert_array_equal(host(got), want)
    np.testing.assert_array_equal(host(got * 2 + 1), want * 2 + 1)
    y = loom.asarray(h)
    os.environ["LOOM_HOST_COMPACT_ROWS"] = "0"
    try:
        assert _indexing._host_rows(y) == 0
        np.testing.assert_array_equal(host(y[y > 0.5]), h[h > 0.5])
    finally:
        del os.environ["LOOM_HOST_COMPACT_ROWS"]


@pytest.mark.skipif(GPU, reason="the row compaction is the host's")
def test_host_rows_not_taken():
    """One thread, a small mask: the one-kernel path (the rows would cost a second pass for nothing)."""
    before = loom.config.num_threads
    try:
        loom.config.num_threads = 1
        assert _indexing._host_rows(loom.asarray(np.zeros(1 << 20, bool))) == 0
        loom.config.num_threads = 4
        assert _indexing._host_rows(loom.asarray(np.zeros(_indexing._ROWS_MIN_N - 1, bool))) == 0
        assert _indexing._host_rows(loom.asarray(np.zeros(1 << 20, bool))) == 16
    finally:
        loom.config.num_threads = before
