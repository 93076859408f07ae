"""bench_aot_fuse.py: what a loaded AOT bundle does to @loom.fuse calls on the host (issue 16).

Builds two bundles (loom.aot.compile, host-all) for two fused functions: with the functions' size-free graphs
(format 1.2: a call with a new shape rebuilds the graph in C, no trace) and without them (fuse_records=False:
what bundles did before, a new shape traces). Then in fresh processes (an empty LOOM_CACHE_DIR each, so the
disk cache cannot answer) times, with a bundle loaded (jit=False: "bundle" and "traced") and without one
("jit"): load_bundle, the first call (graph + passes + code: the bundle's image or a compile), a call with a
new shape (no compile either way), a repeated shape (the C fast path: no trace, no passes), and in the
bundle processes the trace alone and the rebuild alone. Results are checked against NumPy.
    python bench/bench_aot_fuse.py
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def fns():
    import loom

    @loom.fuse(kernel_name="axpb")
    def axpb(x, y):
        return 2.5 * x + y

    @loom.fuse(kernel_name="norm")
    def norm(x, y):
        d = x - y
        return loom.sqrt((d * d).sum(axis=-1)) / (1 + abs(x).max(axis=-1))
    return axpb, norm


def child(mode, path):
    t0 = time.perf_counter()
    import loom
    import loom.aot
    t_import = time.perf_counter() - t0
    axpb, norm = fns()
    if mode == "build":
        sigs = {axpb: [(("float32", 1), ("float32", 1))], norm: [(("float32", 2), ("float32", 2))]}
        loom.aot.compile(sigs, targets="host-all", path=path)
        loom.aot.compile(sigs, targets="host-all", path=path + ".traced", fuse_records=False)
        return
    rng = np.random.default_rng(1)
    cases = [("axpb", axpb, lambda n: tuple(rng.random(n, np.float32) for _ in range(2)), lambda a, b: 2.5 * a + b),
             ("norm", norm, lambda n: tuple(rng.random((30, n), np.float32) for _ in range(2)),
              lambda a, b: np.sqrt(((a - b) ** 2).sum(-1)) / (1 + abs(a).max(-1)))]
    tl = 0.0
    if mode in ("bundle", "traced"):
        t = time.perf_counter()
        loom.load_bundle(path if mode == "bundle" else path + ".traced", jit=False)
        tl = time.perf_counter() - t
    out = [f"{mode:6s} import {t_import * 1e3:.0f} ms, load_bundle {tl * 1e3:.2f} ms"]
    traces = []
    for name, fn, mk, ref in cases:
        a, b = mk(40)
        t = time.perf_counter()
        r = fn(a, b)
        first = time.perf_counter() - t
        assert np.allclose(np.asarray(r), ref(a, b), rtol=1e-5), name
        new = []
        for n in range(41, 241):
            a2, b2 = mk(n)
            t = time.perf_counter()
            fn(a2, b2)
            new.append(time.perf_counter() - t)
        t = time.perf_counter()
        for _ in range(2000):
            fn(a, b)
        same = (time.perf_counter() - t) / 2000
        traces.append((fn, a, b))
        out.append(f"  {name}: first call {first * 1e3:.2f} ms; a new shape min {min(new) * 1e6:.1f} / median "
                   f"{np.median(new) * 1e6:.1f} us; a repeated shape {same * 1e6:.2f} us")
    st = loom.stats()
    out.append(f"  kernels_compiled {st['kernels_compiled']}, bundle {loom.aot.bundle_stats()}")
    if mode != "jit":  # the trace alone (its placeholders copy the arguments: JIT on for that copy)
        loom.aot.set_jit(True)
        for (fn, a, b), (name, *_) in zip(traces, cases):
            la, lb = loom.asarray(a), loom.asarray(b)
            for what, make in (("the trace", fn._trace), ("the rebuild", fn._from_bundle)):
                tr = []
                for _ in range(200):
                    t = time.perf_counter()
                    e = make((a, b), [la, lb])
                    tr.append(time.perf_counter() - t)
                if e is not None:
                    out.append(f"  {name}: {what} alone min {min(tr) * 1e6:.1f} / median {np.median(tr) * 1e6:.1f} us")
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) == 3:
        child(sys.argv[1], sys.argv[2])
        sys.exit(0)
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "fuse.lbun")
    env = dict(os.environ, LOOM_CACHE_DIR=os.path.join(tmp, "cache0"))
    subprocess.run([sys.executable, __file__, "build", path], check=True, env=env)
    for i, mode in enumerate(["bundle", "traced", "jit", "bundle", "traced", "jit"]):
        env = dict(os.environ, LOOM_CACHE_DIR=os.path.join(tmp, f"cache{i + 1}"))
        subprocess.run([sys.executable, __file__, mode, path], check=True, env=env)
