"""bench_fft_linalg.py: loom's FFTs and decompositions beside NumPy (host) or CuPy and PyTorch (GPU), same
run, same inputs (issue 15, items 1 and 2: "bench/results holds the ... decomposition, FFT ... figures").

FFT cases: complex64 fft / ifft of a 1-d array (2^24 on a GPU, 2^20 on the host), rfft of float32, fft2 /
ifft2 and rfft2 / irfft2 of a square (4096^2 / 1024^2), fftn of a cube (256^3 / 64^3), complex128 fft (2^22 /
2^18), and the seeds' FFT convolution (fft2(in1, s) * fft2(flipud(fliplr(in2)), s), ifft2(...).real, in1
2048^2 / 512^2, in2 64^2 / 32^2) written once for every library, and fft2 of a real float32 square. Rows
ending in NAME=VALUE time loom with that environment switch (the old route: an A/B in the same run; the
peers' figures repeat). Decompositions, float32 and float64:
solve, inv, cholesky, det, slogdet, qr (n = 4096 / 512), eigh and svd (n = 2048 / 256 and 1024 / 256).
Every figure is the best of `repeats` runs (loom: loom.eval of the result; the peers: the call and a
synchronization), after a warm-up that compiles and plans. Each loom result is checked against the first
peer's (relative max error; FFTs scaled by the transform's size, decompositions by the input's norm:
svd/eigh/qr compare the reconstruction or the spectrum, which are unique), and `ok` says whether it is
within the dtype's tolerance. Ratio = peer_ms / loom_ms (> 1: loom faster).

Writes bench/results/<date>-fft-linalg-<host|h200>.json and .md (machine, date, command).
Run: python3 bench/bench_fft_linalg.py [repeats] [--fft-only | --linalg-only]
"""
import os
import sys

import numpy as np

import loom

from _timing import GPU, best_ms, loom_sync, peers, write_results  # noqa: E402 (the shared harness)

REPEATS = int(next((a for a in sys.argv[1:] if a.isdigit()), "5"))
RNG = np.random.default_rng(1)


def _xp_of(name, libs):
    return {"loom": loom, "numpy": np}.get(name) or libs[name]


def _to(name, a, libs):
    if name == "loom":
        return loom.asarray(a)
    if name == "cupy":
        return libs["cupy"].asarray(a)
    if name == "torch":
        return libs["torch"].from_numpy(np.ascontiguousarray(a)).to("cuda")
    return a


def _host(name, r):
    if isinstance(r, tuple):
        return tuple(_host(name, x) for x in r)
    if name == "loom":
        return r.get() if hasattr(r, "get") else np.asarray(r)
    if name == "cupy":
        return r.get()
    if name == "torch":
        return r.cpu().numpy()
    return np.asarray(r)


def _sync(name, libs):
    if name == "loom":
        return loom_sync
    if name == "cupy":
        return lambda: libs["cupy"].cuda.Device(0).synchronize()
    if name == "torch":
        return libs["torch"].cuda.synchronize
    return lambda: None


def _fft_mod(xp):
    return xp.fft


def _conv(xp, a, b):
    """The seeds' FFT convolution, as its users write it (NumPy syntax; torch spells flips its own way)."""
    s = (a.shape[0] + b.shape[0] - 1, a.shape[1] + b.shape[1] - 1)
    if xp.__name__ == "torch":
        fb = xp.flip(b, dims=(0, 1))
        return xp.fft.ifft2(xp.fft.fft2(a, s=s) * xp.fft.fft2(fb, s=s)).real
    return xp.fft.ifft2(xp.fft.fft2(a, s=s) * xp.fft.fft2(xp.flipud(xp.fliplr(b)), s=s)).real


def _loom_env(name, value, body):
    """body with environment switch name=value while loom computes (an A/B row of the same run; the peers
    ignore it)."""
    def run(xp, *arrays):
        if xp is not loom:
            return body(xp, *arrays)
        old = os.environ.get(name)
        os.environ[name] = value
        try:
            return body(xp, *arrays)
        finally:
            if old is None:
                del os.environ[name]
            else:
                os.environ[name] = old
    return run


def fft_cases():
    n1, n2, n3, nd, nc, nk = (2 ** 24, 4096, 256, 2 ** 22, 2048, 64) if GPU else (2 ** 20, 1024, 64, 2 ** 18, 512, 32)
    c64 = lambda *s: (RNG.standard_normal(s) + 1j * RNG.standard_normal(s)).astype(np.complex64)  # noqa: E731
    f32 = lambda *s: RNG.standard_normal(s).astype(np.float32)  # noqa: E731
    c128 = lambda *s: RNG.standard_normal(s) + 1j * RNG.standard_normal(s)  # noqa: E731
    return [
        (f"fft c64 {n1}", [c64(n1)], lambda xp, a: xp.fft.fft(a), n1),
        (f"ifft c64 {n1}", [c64(n1)], lambda xp, a: xp.fft.ifft(a), n1),
        (f"rfft f32 {n1}", [f32(n1)], lambda xp, a: xp.fft.rfft(a), n1),
        (f"fft c128 {nd}", [c128(nd)], lambda xp, a: xp.fft.fft(a), nd),
        (f"fft2 c64 {n2}^2", [c64(n2, n2)], lambda xp, a: xp.fft.fft2(a), n2 * n2),
        (f"ifft2 c64 {n2}^2", [c64(n2, n2)], lambda xp, a: xp.fft.ifft2(a), n2 * n2),
        (f"rfft2 f32 {n2}^2", [f32(n2, n2)], lambda xp, a: xp.fft.rfft2(a), n2 * n2),
        (f"fft2 f32 (real input) {n2}^2", [f32(n2, n2)], lambda xp, a: xp.fft.fft2(a), n2 * n2),
        (f"irfft2 c64 {n2}x{n2 // 2 + 1}", [c64(n2, n2 // 2 + 1)], lambda xp, a: xp.fft.irfft2(a), n2 * n2),
        (f"fftn c64 {n3}^3", [c64(n3, n3, n3)], lambda xp, a: xp.fft.fftn(a), n3 ** 3),
        (f"fft convolution f32 {nc}^2 * {nk}^2", [f32(nc, nc), f32(nk, nk)], _conv, (nc + nk) ** 2),
        # A/B: loom with its real-input spectra off (complex transforms of the cast input, the old route)
        (f"fft convolution f32 {nc}^2 * {nk}^2 LOOM_FFT_REAL_SPECTRUM=0", [f32(nc, nc), f32(nk, nk)],
         _loom_env("LOOM_FFT_REAL_SPECTRUM", "0", _conv), (nc + nk) ** 2),
    ]


def _spd(n, dt):
    m = RNG.standard_normal((n, n))
    return (m @ m.T / n + np.eye(n)).astype(dt)


def linalg_cases():
    n, ne, ns = (4096, 2048, 1024) if GPU else (512, 256, 256)
    cases = []
    for dt in ("float32", "float64"):
        gen = lambda k, dt=dt: RNG.standard_normal((k, k)).astype(dt) + k ** 0.5 * np.eye(k, dtype=dt)  # noqa: E731
        spd = _spd(n, dt)
        cases += [
            (f"solve {dt} {n}", [gen(n), RNG.standard_normal((n, 64)).astype(dt)], lambda xp, a, b: xp.linalg.solve(a, b)),
            (f"inv {dt} {n}", [gen(n)], lambda xp, a: xp.linalg.inv(a)),
            (f"cholesky {dt} {n}", [spd], lambda xp, a: xp.linalg.cholesky(a)),
            (f"det {dt} {n // 4}", [gen(n // 4) / (n // 4) ** 0.5], lambda xp, a: xp.linalg.det(a)),
            (f"slogdet {dt} {n}", [gen(n)], lambda xp, a: xp.linalg.slogdet(a)[1]),
            # the whole decomposition is timed; what is compared is unique (Q @ R, the spectrum)
            (f"qr {dt} {n}", [gen(n)], lambda xp, a: tuple(xp.linalg.qr(a)), lambda q, r: q @ r),
            (f"eigh {dt} {ne}", [_spd(ne, dt)], lambda xp, a: tuple(xp.linalg.eigh(a)), lambda w, v: w),
            (f"svd {dt} {ns}", [gen(ns)], lambda xp, a: tuple(xp.linalg.svd(a)), lambda u, s, vh: s),
            # the reconstruction u s vh checks the vectors too (gesvdj's vh is V read row-major)
            (f"svd {dt} {ns} u s vh", [gen(ns)], lambda xp, a: tuple(xp.linalg.svd(a)), lambda u, s, vh: (u * s) @ vh),
        ]
        if GPU:  # A/B: loom's SVD by cuSOLVER's gesvd (the old route) instead of the Jacobi gesvdj
            cases.append((f"svd {dt} {ns} LOOM_CUSOLVER_SVD=gesvd", [gen(ns)],
                          _loom_env("LOOM_CUSOLVER_SVD", "gesvd", lambda xp, a: tuple(xp.linalg.svd(a))),
                          lambda u, s, vh: s))
    return cases


def _flat(r):
    return r if isinstance(r, tuple) else (r,)


def _rel_err(got, want):
    got, want = np.asarray(got, dtype=np.complex128), np.asarray(want, dtype=np.complex128)
    scale = max(float(np.max(np.abs(want))) if want.size else 1.0, 1e-30)
    return float(np.max(np.abs(got - want))) / scale if want.size else 0.0


def run(cases, libs, kind):
    names = ["loom"] + (list(libs) if GPU else ["numpy"])
    rows = []
    for case in cases:
        label, arrays, body = case[0], case[1], case[2]
        post = case[3] if len(case) > 3 and callable(case[3]) else None
        row = {"case": label}
        ref = None
        for name in names:
            xp = _xp_of(name, libs)
            xs = [_to(name, a, libs) for a in arrays]
            if name == "loom":
                fn = lambda xs=xs: loom.eval(*_flat(body(loom, *xs)))  # noqa: E731
            else:
                fn = lambda xs=xs, xp=xp: body(xp, *xs)  # noqa: E731
            try:
                row[name + "_ms"] = round(best_ms(fn, _sync(name, libs), REPEATS), 4)
                out = _host(name, body(xp, *xs))
                if post is not None:
                    out = post(*out)
            except Exception as e:  # a library without the case: recorded, not fatal
                row[name + "_error"] = f"{type(e).__name__}: {e}"[:160]
                continue
            if name == "loom":
                mine = out
            elif ref is None:
                ref = out
        if ref is not None and "loom_ms" in row:
            err = _rel_err(mine, ref)
            single = any(t in label for t in ("c64", "f32", "float32"))
            row["rel_err"] = float(f"{err:.3g}")
            row["ok"] = bool(err <= (2e-3 if single else 1e-8))
        for name in names[1:]:
            if name + "_ms" in row and "loom_ms" in row:
                row[name + "_over_loom"] = round(row[name + "_ms"] / row["loom_ms"], 3)
        rows.append(row)
        print(row, flush=True)
    return rows


def main():
    libs = peers()
    rows = []
    if "--linalg-only" not in sys.argv:
        rows += run(fft_cases(), libs, "fft")
    if "--fft-only" not in sys.argv:
        rows += run(linalg_cases(), libs, "linalg")
    path = write_results("fft-linalg", rows)
    names = ["loom"] + (list(libs) if GPU else ["numpy"])
    cols = ["case"] + [n + "_ms" for n in names] + [n + "_over_loom" for n in names[1:]] + ["rel_err", "ok"]
    md = [f"# FFT and decompositions ({'H200' if GPU else 'host'}), `python3 bench/bench_fft_linalg.py "
          f"{' '.join(sys.argv[1:])}`", "", "best of runs, ms; ratio = peer ms / loom ms (> 1: loom faster); "
          "rel_err against the first peer", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    md += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    with open(os.path.splitext(path)[0] + ".md", "w") as fh:
        fh.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
