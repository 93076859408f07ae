# SPDX-License-Identifier: Apache-2.0
"""Float16 comparisons, min / max, rounding and square roots on the host against NumPy, bit for bit.

The optimizer narrows these to float16 and vectorizes them; x86 without AVX512-FP16 would take such
vectors apart lane by lane (float16 relu 20x slower than float32), so codegen/host_half.c widens them back
to float32 vectors after optimization. The values must not change: NaN, both infinities, both zeros,
subnormals and the largest finite values, in lengths that leave every vector tail, in maps, reductions
over all and over short rows (the row-specialized kernels of lower_host_rows.c), and in the LLVM IR no
float16 vector comparison or min / max is left.
"""
import re

import numpy as np
import pytest

import loom

SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 6.0e-8, -6.0e-8, 6.1e-5, -6.1e-5, 65504.0,
                    -65504.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1.0, -1.0], dtype=np.float16)


def data(n, seed):
    r = np.random.default_rng(seed)
    x = (r.standard_normal(n) * 4).astype(np.float16)
    k = min(n, SPECIAL.size)
    x[r.choice(n, size=k, replace=False)] = SPECIAL[:k]
    return x


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "f":
        assert np.array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        np.testing.assert_array_equal(got[ok].view(np.uint16), want[ok].view(np.uint16))
    else:
        np.testing.assert_array_equal(got, want)


MAPS = [
    ("maximum0", lambda xp, a, b: xp.maximum(a, 0)),
    ("minimum", lambda xp, a, b: xp.minimum(a, b)),
    ("fmax", lambda xp, a, b: xp.fmax(a, b)),
    ("fmin", lambda xp, a, b: xp.fmin(a, b)),
    ("clip", lambda xp, a, b: xp.clip(a, -1.5, 2.5)),
    ("where", lambda xp, a, b: xp.where(a > b, a, b * 0.5)),
    ("less", lambda xp, a, b: a < b),
    ("less_equal", lambda xp, a, b: a <= b),
    ("equal", lambda xp, a, b: a == b),
    ("not_equal", lambda xp, a, b: a != b),
    ("greater_equal0", lambda xp, a, b: a >= 0),
    ("isnan", lambda xp, a, b: xp.isnan(a)),
    ("floor", lambda xp, a, b: xp.floor(a)),
    ("ceil", lambda xp, a, b: xp.ceil(a)),
    ("trunc", lambda xp, a, b: xp.trunc(a)),
    ("rint", lambda xp, a, b: xp.rint(a)),
    ("sqrt", lambda xp, a, b: xp.sqrt(xp.abs(a))),
]


@pytest.mark.parametrize("name,fn", MAPS, ids=[m[0] for m in MAPS])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 1000, 100003])
def test_maps(name, fn, n):
    a, b = data(n, n), data(n, n + 1)
    with np.errstate(all="ignore"):
        want = fn(np, a, b)
    same(fn(loom, loom.asarray(a), loom.asarray(b)).get(), want)


@pytest.mark.parametrize("shape", [(100003,), (1000, 16), (777, 12), (4096, 9), (33, 1000)])
@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
def test_reductions(shape, op):
    x = data(int(np.prod(shape)), 7).reshape(shape)
    x[np.isnan(x)] = 1.0  # NaN-free rows, then one row with a NaN
    if x.ndim == 2:
        x[3, 2] = np.nan
    axis = -1 if x.ndim == 2 else None
    same(getattr(loom, op)(loom.asarray(x), axis=axis).get(), getattr(np, op)(x, axis=axis))


def host_has_avx512fp16():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512_fp16" in line for line in f)
    except OSError:
        return False


@pytest.mark.skipif(host_has_avx512fp16(), reason="AVX512-FP16 hosts (Sapphire Rapids) keep float16 vectors: "
                    "their compares are native there (host_half.c leaves them)")
def test_no_float16_vector_compares_left():
    a = loom.asarray(data(4099, 3))
    with loom.capture_dumps("llvm") as d:
        loom.eval(loom.clip(loom.maximum(a, 0.25), -1, 2) > 0.5)
    ir = d.text
    assert "x half>" in ir or "x float>" in ir, "the dump holds the kernel's LLVM IR"
    assert not re.search(r"fcmp [a-z ]*<\d+ x half>", ir), "a float16 vector comparison is left"
    assert not re.search(r"@llvm\.(maxnum|minnum|maximum|minimum)\.v\d+f16", ir), "a float16 vector min / max is left"
