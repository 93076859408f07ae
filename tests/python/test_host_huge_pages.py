"""Large host arrays are advised into transparent huge pages (runtime/host_pool.c): 2 MiB-aligned blocks
with MADV_HUGEPAGE, as NumPy does for its arrays of >= 4 MiB. Checked on the mapping's VmFlags ("hg" is
the advice, deterministic; whether the kernel then backs it with huge pages depends on its memory)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

SMAPS = "/proc/self/smaps"


def _vmflags(addr):
    with open(SMAPS) as f:
        inside = False
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and all(c in "0123456789abcdef-" for c in head[0]):
                lo, hi = (int(v, 16) for v in head[0].split("-"))
                inside = lo <= addr < hi
            elif inside and line.startswith("VmFlags:"):
                return line.split()[1:]
    return None


needs_smaps = pytest.mark.skipif(not os.path.exists(SMAPS), reason="no /proc/self/smaps (not Linux)")


@needs_smaps
def test_large_result_is_aligned_and_advised():
    a = loom.asarray(np.ones(1 << 22, np.float32)) * 2  # 16 MiB
    loom.eval(a)
    ptr = a.data.ptr
    assert ptr % (2 << 20) == 0
    assert "hg" in _vmflags(ptr)
    np.testing.assert_array_equal(loom.asnumpy(a), np.full(1 << 22, 2, np.float32))


def _fresh_process(n, env_extra):
    """In a fresh process (a clean heap: freed advised blocks may later hold small ones): whether the result
    of n float32 lies in an advised mapping."""
    code = ("import numpy as np, loom, sys; sys.path.insert(0, sys.argv[1]);"
            "from test_host_huge_pages import _vmflags;"
            f"a = loom.asarray(np.ones({n}, np.float32)) * 2; loom.eval(a);"
            "print('hg' in (_vmflags(a.data.ptr) or []))")
    env = dict(os.environ, **env_extra)
    r = subprocess.run([sys.executable, "-c", code, os.path.dirname(os.path.abspath(__file__))], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip() == "True"


@needs_smaps
def test_small_result_and_knob_off_leave_ordinary_pages():
    assert not _fresh_process(1 << 18, {})  # 1 MiB: below the 4 MiB threshold
    assert not _fresh_process(1 << 22, {"LOOM_HOST_HUGE_PAGES": "0"})
    assert _fresh_process(1 << 22, {})


@needs_smaps
@pytest.mark.parametrize("make", ["empty", "zeros", "full", "concatenate"])
def test_created_arrays_come_from_the_pool(make):
    """Arrays the creation functions make (empty / zeros / full, and concatenate and stack, which write
    into an empty one) come from the same pool as results: 2 MiB pages, and a freed block is handed out
    again (before, each new array of >= 1 MiB was fresh malloc memory, a page fault per 4 KiB on its
    first write: concatenate of two 16 MB halves took ~30 ms against ~2 for a pooled result)."""
    n = 1 << 22
    half = loom.asarray(np.arange(n // 2, dtype=np.float32))

    def new():
        if make == "empty":
            return loom.empty(n, np.float32)
        if make == "zeros":
            return loom.zeros(n, np.float32)
        if make == "full":
            return loom.full(n, 3.0, np.float32)
        return loom.concatenate([half, half + 1])
    a = new()
    loom.eval(a)
    ptr = a.data.ptr
    assert ptr % (2 << 20) == 0 and "hg" in _vmflags(ptr)
    want = {"zeros": np.zeros(n, np.float32), "full": np.full(n, 3.0, np.float32),
            "concatenate": np.concatenate([np.arange(n // 2), np.arange(n // 2) + 1]).astype(np.float32)}
    if make in want:
        np.testing.assert_array_equal(loom.asnumpy(a), want[make])
    del a
    b = new()
    loom.eval(b)
    assert b.data.ptr == ptr  # the freed block again
    if make in want:
        np.testing.assert_array_equal(loom.asnumpy(b), want[make])


def test_small_and_empty_created_arrays():
    """Below 1 MiB (and empty shapes) the creation functions keep their own 64-byte aligned blocks."""
    for shape in [(0,), (3, 0), (7,), (1000, 100)]:
        z = loom.zeros(shape, np.float64)
        assert z.shape == shape
        np.testing.assert_array_equal(loom.asnumpy(z), np.zeros(shape))
        if z.size:
            assert z.data.ptr % 64 == 0


def test_temporaries_read_by_kernels_are_released():
    """A loop that reads a new large array each step (filled, then read by a lazy expression that is
    evaluated) holds a bounded number of them: the thread's graph, drained, is retired once the arrays it
    read as inputs pass 32 MiB (python/src/eval.c retire_if_drained), so their pool blocks come back. Before,
    the graph's keep set held every one until 256 nodes (here 128 MiB of 8 MiB arrays; 1 GB for 12 MB
    images read by ~85 steps)."""
    from loom import _core
    used0 = _core.pool_stats(0, 0)[0]
    peak = 0
    results: list = []
    for i in range(48):
        y = loom.empty((2048, 1024), np.float32)
        y[...] = float(i)
        z = y / 2.0
        loom.eval(z)
        results = results[-1:] + [z]
        del y, z
        peak = max(peak, _core.pool_stats(0, 0)[0] - used0)
    assert [float(loom.asnumpy(z)[3, 5]) for z in results] == [23.0, 23.5]
    assert peak <= 80 << 20, peak >> 20  # the last results and a few inputs, not 16 of them
