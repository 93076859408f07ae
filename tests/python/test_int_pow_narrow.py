# SPDX-License-Identifier: Apache-2.0
"""Integer power of 8- and 16-bit integers with an array exponent, against NumPy's wrapping result.

codegen/math.c runs these powers in 32 bits and truncates: on the H200 the 16-bit loop gave 1 for
int16 32767 ** 32767 and 100 ** 100 once the driver JIT compiled it at level 1 (the tier-up compile;
fuzz_numpy seed 7531221352084719452). The in-process case runs on the default device (the host here,
the GPU in scripts/gpu_all.sh); the subprocess case compiles directly at the final JIT level
(LOOM_CUDA_JIT_TIERS=0), which is the code a long-running program ends up with.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

DTYPES = ["int8", "uint8", "int16", "uint16"]


def cases(dtype):
    """Bases and exponents: edge values of the dtype, small ones, and random ones (exponents kept >= 0
    for signed dtypes: NumPy raises for a negative integer exponent)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    edge = np.array([0, 1, 2, 3, 7, 100, info.max, info.max - 1], dtype=dtype)
    if info.min < 0:
        edge = np.concatenate([edge, np.array([-1, -2, -3, info.min, info.min + 1], dtype=dtype)])
    base = np.concatenate([edge, rng.integers(info.min, info.max, 200, endpoint=True, dtype=dtype)])
    exps = np.concatenate([np.array([0, 1, 2, 3, 15, 16, 17, 100, info.max], dtype=dtype),
                           rng.integers(0, info.max, base.size - 9, endpoint=True, dtype=dtype)])
    return base, exps


def want(base, exps):
    """The wrapping power, computed in Python integers and reduced to the dtype's width."""
    bits = base.dtype.itemsize * 8
    out = [pow(int(b), int(e), 1 << bits) for b, e in zip(base, exps)]
    return np.array(out, dtype=np.uint64).astype(np.dtype(f"uint{bits}")).view(base.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_power_narrow_ints(dtype):
    base, exps = cases(dtype)
    got = loom.power(loom.asarray(base), loom.asarray(exps))
    np.testing.assert_array_equal(loom.asnumpy(got), want(base, exps))
    np.testing.assert_array_equal(loom.asnumpy(got), np.power(base, exps))
    # the fuzz case: a value raised to itself
    x = np.array([32767, 100, 100, 100], dtype="int16")
    np.testing.assert_array_equal(loom.asnumpy(loom.asarray(x) ** loom.asarray(x)), x ** x)


@pytest.mark.skipif(not loom.cuda.is_available(), reason="no CUDA device: the JIT levels are the GPU's")
def test_power_narrow_ints_final_jit_level(tmp_path):
    code = (
        "import numpy as np, loom, sys\n"
        f"sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
        "import test_int_pow_narrow as t\n"
        f"for d in {DTYPES!r}:\n"
        "    b, e = t.cases(d)\n"
        "    got = loom.asnumpy(loom.power(loom.asarray(b), loom.asarray(e)))\n"
        "    np.testing.assert_array_equal(got, t.want(b, e), err_msg=d)\n"
        "print('ok')\n")
    env = dict(os.environ, LOOM_CUDA_JIT_TIERS="0", LOOM_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
