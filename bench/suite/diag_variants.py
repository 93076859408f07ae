"""diag_variants.py: measured predictions for DIAGNOSIS.md. Each entry times Loom on a suite workload
and on the same workload rewritten by hand the way a compiler mechanism would rewrite it (x ** 2 ->
x * x, x ** 0.5 -> sqrt(x), a shared subexpression, ...), in rounds (A B A B ...) in one process, with
the same inputs. The ratio is the gain that mechanism would bring to Loom on this machine.

    python bench/suite/diag_variants.py [--size cpu] [names...]
Prints one line per variant and writes nothing (DIAGNOSIS.md quotes the figures).
"""
import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

import loom  # noqa: E402
from bench.suite import workloads as W  # noqa: E402
from bench.suite.inputs import host_inputs  # noqa: E402


def gelu_tanh_mul(xp, x):
    return 0.5 * x * (1.0 + xp.tanh(0.7978845608028654 * (x + 0.044715 * (x * x * x))))


def outer_gauss_mul(xp, a, b):
    d = a[:, None] - b[None, :]
    return xp.exp(-(d * d))


def sumsq_cols_mul(xp, x, y):
    p = x * y
    return xp.sum(p * p, axis=0)


def layernorm_mul(xp, x, w, b):
    mu = xp.mean(x, axis=-1, keepdims=True)
    d = x - mu
    var = xp.mean(d * d, axis=-1, keepdims=True)
    return d / xp.sqrt(var + 1e-5) * w + b


def rmsnorm_mul(xp, x, w):
    return x / xp.sqrt(xp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w


def mse_loss_mul(xp, a, b):
    d = a - b
    return xp.mean(d * d)


def perlin_fade_mul(xp, t):
    t3 = t * t * t
    return 6.0 * (t3 * t * t) - 15.0 * (t3 * t) + 10.0 * t3


def grad_magnitude_sqrt(xp, gx, gy):
    return xp.sqrt(gx * gx + gy * gy)


def rmsprop_mul(xp, p, g, v):
    v2 = 0.99 * v + 0.01 * (g * g)
    return p - 0.01 * g / (xp.sqrt(v2) + 1e-8), v2


def haversine_mul(xp, lat1, lon1, lat2, lon2):
    s1 = xp.sin((lat2 - lat1) * 0.5)
    s2 = xp.sin((lon2 - lon1) * 0.5)
    a = s1 * s1 + xp.cos(lat1) * xp.cos(lat2) * (s2 * s2)
    return 12742.0 * xp.arcsin(xp.sqrt(a))


def channel_rms_long_mul(xp, x):
    return xp.sqrt(xp.mean(x * x, axis=1))


def bn2d_stats_mul(xp, x):
    mu = xp.mean(x, axis=(0, 2, 3), keepdims=True)
    d = x - mu
    return mu, xp.mean(d * d, axis=(0, 2, 3), keepdims=True)


VARIANTS = {
    "gelu_tanh": [("x**3 -> x*x*x", gelu_tanh_mul)],
    "gelu_f16": [("x**3 -> x*x*x", gelu_tanh_mul)],
    "tiny_gelu": [("x**3 -> x*x*x", gelu_tanh_mul)],
    "outer_gauss": [("d**2 -> d*d", outer_gauss_mul)],
    "sumsq_cols": [("p**2 -> p*p", sumsq_cols_mul)],
    "layernorm": [("d**2 -> d*d (d shared)", layernorm_mul)],
    "rmsnorm": [("x**2 -> x*x", rmsnorm_mul)],
    "mse_loss": [("d**2 -> d*d", mse_loss_mul)],
    "perlin_fade": [("t**5, t**4, t**3 -> products", perlin_fade_mul)],
    "grad_magnitude": [("**2 -> mul, **0.5 -> sqrt", grad_magnitude_sqrt)],
    "rmsprop": [("g**2 -> g*g, **0.5 -> sqrt", rmsprop_mul)],
    "haversine": [("sin(..)**2 -> s*s", haversine_mul)],
    "channel_rms_long": [("x**2 -> x*x", channel_rms_long_mul)],
    "bn2d_stats": [("d**2 -> d*d", bn2d_stats_mul)],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="cpu")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    for name in a.names or list(VARIANTS):
        w = W.lookup(name)
        ins = host_inputs(w, a.size)
        args = [loom.asarray(x) for x in ins]
        fs = [("as written", loom.fuse(kernel_name=name)(lambda *q, w=w: w.fn(loom, *q)))]
        for label, fn in VARIANTS[name]:
            fs.append((label, loom.fuse(kernel_name=name + "_v")(lambda *q, fn=fn: fn(loom, *q))))
        ref, labels = None, []
        for label, f in fs:   # compile, and check the variant computes the same
            out = f(*args)
            out = [np.asarray(o, dtype=np.float64) for o in (out if isinstance(out, tuple) else (out,))]
            if ref is None:
                ref = out
            else:
                err = max(float(np.max(np.abs(o - r))) / (float(np.max(np.abs(r))) or 1.0) for o, r in zip(out, ref))
                label += f" (normwise diff {err:.1e})"
            labels.append(label)
            kernels = loom.stats()["last_eval_kernels"]
        samples = [[] for _ in fs]
        for _ in range(a.rounds):
            for i, (_, f) in enumerate(fs):
                t = time.perf_counter()
                f(*args)
                samples[i].append(time.perf_counter() - t)
        base = statistics.median(samples[0])
        for label, s in zip(labels, samples):
            m = statistics.median(s)
            print(f"{name:18s} {label:60s} median {m * 1e3:9.3f} ms  min {min(s) * 1e3:9.3f} ms  "
                  f"x{base / m:5.2f}  (kernels {kernels})", flush=True)


if __name__ == "__main__":
    main()
