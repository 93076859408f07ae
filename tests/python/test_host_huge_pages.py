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
