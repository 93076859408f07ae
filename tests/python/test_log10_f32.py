# SPDX-License-Identifier: Apache-2.0
"""float32 log10 on the host and GPUs (codegen/math_log10.c: x = 2^k m, log10 = k log10(2) + log(m) log10(e), inline code
the loop vectorizer widens) against log10 in float64: every positive float32 on a stride of the bit patterns
(normals and subnormals) within 1.6 ulp, powers of ten exact, the specials (+-0, negatives, +-inf, NaN),
float16 (computed in float32) as NumPy, views and a fused expression (librosa's power_to_db). On a GPU the device
library's log10 runs (libdevice: logf times log10(e), within 2 ulp, powers of ten within 1 ulp: as CuPy); a child
checks the host's code there too (LOOM_GPU_POLY_LOG10=1) with the host's bounds."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

ON_GPU = bool(loom.asarray(np.zeros(1))._on_gpu)  # the default device of this run
POLY = not ON_GPU or os.environ.get("LOOM_GPU_POLY_LOG10") == "1"  # Loom's own log10 runs
ULP_MAX = 1.6 if POLY else 2.0


def ulp_error(got, x):
    want = np.log10(x.astype(np.float64))
    g = got.astype(np.float64)
    spacing = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return np.abs(g - want) / spacing


def test_positive_floats_on_a_stride():
    bits = np.arange(1, 0x7F800000, 997, dtype=np.uint32)  # subnormals, normals, up to the largest float
    x = bits.view(np.float32)
    got = loom.log10(loom.asarray(x)).get()
    err = ulp_error(got, x)
    worst = int(np.argmax(err))
    assert err.max() <= ULP_MAX, (x[worst], got[worst], err.max())
    if POLY:
        assert np.mean(err > 1.0) < 0.01


def test_near_one():
    """log10 close to 0 (x = 1 +- a few ulp): relative accuracy where k = 0"""
    x = (np.float32(1.0) + np.arange(-4000, 4000, dtype=np.float32) * np.float32(2.0**-23)).astype(np.float32)
    x = x[x != 1.0]
    err = ulp_error(loom.log10(loom.asarray(x)).get(), x)
    assert err.max() <= ULP_MAX


def test_powers_of_ten_and_specials():
    p = np.array([10.0**k for k in range(0, 11)], dtype=np.float32)
    if POLY:
        np.testing.assert_array_equal(loom.log10(loom.asarray(p)).get(), np.arange(11, dtype=np.float32))
    else:
        np.testing.assert_array_max_ulp(loom.log10(loom.asarray(p)).get(), np.arange(11, dtype=np.float32), 1)
    s = np.array([0.0, -0.0, -1.0, -1e-45, np.inf, -np.inf, np.nan, 1.0, 1e-45, 3.4028235e38], dtype=np.float32)
    got = loom.log10(loom.asarray(s)).get()
    with np.errstate(all="ignore"):
        want = np.log10(s.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])


def test_float16_views_and_fused():
    r = np.random.default_rng(1)
    h = r.uniform(0.001, 1000.0, 5000).astype(np.float16)
    np.testing.assert_allclose(loom.log10(loom.asarray(h)).get().astype(np.float64),
                               np.log10(h.astype(np.float64)), rtol=1e-3, atol=1e-3)
    x = r.uniform(0.0, 10.0, (301, 203)).astype(np.float32)
    db = 10.0 * loom.log10(loom.maximum(loom.asarray(x)[::2, 1::3], 1e-10))
    got = loom.maximum(db, loom.max(db) - 80.0).get()
    d64 = 10.0 * np.log10(np.maximum(x[::2, 1::3].astype(np.float64), 1e-10))
    want = np.maximum(d64, d64.max() - 80.0)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-5)


@pytest.mark.skipif(bool(loom.asarray(np.zeros(1))._on_gpu), reason="the host's code generation")
def test_switch_off():
    """LOOM_HOST_POLY_LOG10=0 in a child: SLEEF's log10f, within 1 ulp of float64 on the same stride"""
    code = ("import numpy as np, loom\n"
            "x = np.arange(1, 0x7F800000, 99991, dtype=np.uint32).view(np.float32)\n"
            "g = loom.log10(loom.asarray(x)).get().astype(np.float64)\n"
            "w = np.log10(x.astype(np.float64))\n"
            "e = np.abs(g - w) / np.spacing(np.abs(w).astype(np.float32)).astype(np.float64)\n"
            "assert e.max() <= 1.0, e.max()\n")
    env = dict(os.environ, LOOM_HOST_POLY_LOG10="0", LOOM_CACHE_DIR=os.path.join(os.environ.get("TMPDIR", "/tmp"), "loom-log10-off-%d" % os.getpid()))
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)


@pytest.mark.skipif(not ON_GPU or POLY, reason="the GPU's default log10 is the device library's")
def test_own_log10_on_gpu():
    """LOOM_GPU_POLY_LOG10=1 in a child: the host's log10 on the GPU, with the host's bounds"""
    env = dict(os.environ, LOOM_GPU_POLY_LOG10="1")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.abspath(__file__),
                    "-k", "not own_log10"], env=env, check=True, timeout=300)
