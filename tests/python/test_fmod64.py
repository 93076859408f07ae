"""float64 remainders on the host (codegen/math.c fmod64_fn): a vectorized exact fmod, a - trunc(a / b) b in
one fma with one sign fix where |a / b| < 2^52 and b is finite, libm's fmod for a vector with any other lane.
Every result must carry NumPy's bits (fmod, %, // and divmod are exact in NumPy): random bit patterns (every
class: NaN, infinities, zeros, subnormals), quotients next to an integer (a = k b and its neighbours), huge
quotients on both sides of 2^52, and the shapes the kernels see (0-d, empty, strided, broadcast)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import loom

OPS = {
    "remainder": lambda xp, a, b: a % b,
    "fmod": lambda xp, a, b: xp.fmod(a, b),
    "floor_divide": lambda xp, a, b: a // b,
    "divmod_q": lambda xp, a, b: xp.divmod(a, b)[0],
    "divmod_r": lambda xp, a, b: xp.divmod(a, b)[1],
}


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype == np.float64
    ok = (got.view(np.uint64) == want.view(np.uint64)) | (np.isnan(got) & np.isnan(want))
    bad = np.nonzero(~ok.ravel())[0][:5]
    assert ok.all(), [(got.ravel()[i], want.ravel()[i]) for i in bad]


def pairs(seed, n=60000):
    rng = np.random.default_rng(seed)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.7976931348623157e308,
                        2.2250738585072014e-308, 1e-310, 360.0, -360.0, 1.0, -1.0, 0.1, 3.0])

    def one():
        x = rng.integers(0, 2 ** 64, n, dtype=np.uint64).view(np.float64).copy()
        k = rng.random(n)
        m = k < 0.15
        x[m] = rng.choice(special, m.sum())
        m = (k >= 0.15) & (k < 0.6)
        x[m] = rng.uniform(-1, 1, m.sum()) * 10.0 ** rng.integers(-300, 300, m.sum())
        return x
    return one(), one()


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("seed", [0, 1])
def test_random_classes(op, seed):
    a, b = pairs(seed)
    with np.errstate(all="ignore"):
        same_bits(OPS[op](loom, loom.asarray(a), loom.asarray(b)).get(), OPS[op](np, a, b))


@pytest.mark.parametrize("op", sorted(OPS))
def test_quotients_next_to_integers_and_past_2_52(op):
    rng = np.random.default_rng(7)
    b = rng.uniform(0.5, 2.0, 20000) * np.where(rng.random(20000) < 0.5, -1.0, 1.0)
    b = np.concatenate([b, [0.1, 0.3, 360.0, 1e-3, 7.0]])
    k = np.floor(rng.uniform(-1e6, 1e6, b.size))
    exact = k * b                                    # a multiple (up to the product's rounding)
    a = np.concatenate([exact, np.nextafter(exact, np.inf), np.nextafter(exact, -np.inf),
                        b * 2.0 ** 52, b * 2.0 ** 52 * 1.5, b * 2.0 ** 53, np.nextafter(b * 2.0 ** 52, 0), b * 2.0 ** 700])
    bb = np.tile(b, a.size // b.size)
    with np.errstate(all="ignore"):
        same_bits(OPS[op](loom, loom.asarray(a), loom.asarray(bb)).get(), OPS[op](np, a, bb))


def test_shapes_and_views():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1000, 1000, (37, 29))
    y = rng.uniform(-30, 30, 29)
    with np.errstate(all="ignore"):
        for a, b in [(x, y), (x[::2, ::-3], y[::-3]), (x.T, rng.uniform(1, 5, (37, 1)).T), (np.float64(7.5), np.float64(-2.0)),
                     (np.zeros((0, 3)), np.ones(3)), (x, 0.0), (x, np.inf), (np.inf, y)]:
            same_bits((loom.asarray(a) % loom.asarray(b)).get(), np.asarray(a) % np.asarray(b))
            same_bits((loom.asarray(a) % 360.0).get(), np.asarray(a) % 360.0)


def test_knob_off_same_bits():
    """LOOM_HOST_FMOD64_FAST=0 (libm's fmod a point) in a child: the same bits."""
    code = ("import numpy as np, loom\n"
            "rng = np.random.default_rng(11)\n"
            "a = rng.uniform(-1e6, 1e6, 5000); b = rng.uniform(-10, 10, 5000)\n"
            "r = (loom.asarray(a) % loom.asarray(b)).get()\n"
            "print(int(((r.view(np.uint64) == (a % b).view(np.uint64))).all()))\n")
    env = dict(os.environ, LOOM_HOST_FMOD64_FAST="0", LOOM_DEVICE="host")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "1", out
