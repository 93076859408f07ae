# SPDX-License-Identifier: Apache-2.0
"""The installed package as packaging made it: one version everywhere, and the SLEEF a wheel carries is
the one the host backend loads (without it math kernels silently run ~3x slower)."""
import importlib.metadata
import os

import numpy as np
import pytest

import loom


def test_version_matches_distribution_metadata():
    try:
        dist = importlib.metadata.version("loom-jit")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("loom is not installed as the loom-jit distribution")
    assert loom.__version__ == dist
    major, minor, patch = (int(p) for p in dist.split("."))
    assert (major, minor, patch) >= (0, 1, 0)


def test_bundled_sleef_is_the_one_loaded():
    pkg = os.path.dirname(os.path.realpath(loom.__file__))
    bundled = os.path.join(pkg, "libsleefgnuabi.so.3")
    if not os.path.exists(bundled):
        pytest.skip("a development install: SLEEF comes from the system")
    x = loom.linspace(-2, 2, 10007, dtype=loom.float64)
    e, s = loom.eval(loom.exp(x), loom.sin(x))  # math kernels: the host backend loads SLEEF
    xn = np.linspace(-2, 2, 10007)
    # SLEEF's 1-ulp functions against the C library's: a few ulps apart at most
    np.testing.assert_allclose(loom.asnumpy(e), np.exp(xn), rtol=1e-15, atol=0)
    np.testing.assert_allclose(loom.asnumpy(s), np.sin(xn), rtol=1e-15, atol=0)
    with open("/proc/self/maps") as f:
        paths = [line.split()[-1] for line in f if "libsleef" in line]
    vector = {os.path.realpath(p) for p in paths if "libsleefgnuabi" in os.path.basename(p)}
    assert vector == {os.path.realpath(bundled)}, vector
    # and SLEEF's scalar library (Sleef_*_u10, which the host kernels call), bundled beside it
    scalar = {os.path.realpath(p) for p in paths if os.path.basename(p).startswith("libsleef.")}
    assert scalar == {os.path.realpath(os.path.join(pkg, "libsleef.so.3"))}, scalar
