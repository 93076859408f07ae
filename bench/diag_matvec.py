"""diag_matvec.py: matrix-vector products on the GPU as Loom's fused reduction over K (the default since
2026-12-06, frontend/matmul.c) against the library call (LOOM_MATMUL_VECTOR_LIBRARY=1: cuBLASLt), torch
(cuBLAS gemv) and CuPy, side by side in one process; median of batches of calls, the bytes that must move
(the matrix, the vectors) and GB/s.

    python3 bench/diag_matvec.py        (the GPU machine; torch / CuPy beside where installed)
"""
import os

import numpy as np

import loom

import diag_transpose  # bench/ is the script's directory: on sys.path

# name: (a shape, b shape, dtype): a @ b
CASES = {
    "Mv_8192x8192_f32": ((8192, 8192), (8192,), "float32"),
    "uM_8192x8192_f32": ((8192,), (8192, 8192), "float32"),
    "Mv_4096x4096_f32": ((4096, 4096), (4096,), "float32"),
    "uM_4096x4096_f32": ((4096,), (4096, 4096), "float32"),
    "xWT_1x4096_11008_f16": ((1, 4096), (4096, 11008), "float16"),
    "Mv_1e6x64_f32": ((1 << 20, 64), (64,), "float32"),
    "uM_64x1e6_f32": ((64,), (64, 1 << 20), "float32"),
    "uM_1e6x64_f32": ((1 << 20,), (1 << 20, 64), "float32"),
    "Mv_8192x8192_f64": ((8192, 8192), (8192,), "float64"),
    "bMv_64x1024x1024_f32": ((64, 1024, 1024), (64, 1024, 1), "float32"),
    "dot_2^26_f32": ((1 << 26,), (1 << 26,), "float32"),
    "Mv_8192x8192_c64": ((8192, 8192), (8192,), "complex64"),
}


def timed(call, sync):
    """Median ms a call over batches (bench/diag_transpose.py's timer)."""
    return diag_transpose.timed(call, sync, rounds=11) * 1e3


def host(shape, dtype, r):
    x = r.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * r.standard_normal(shape)
    return x.astype(dtype)


def main():
    try:
        import torch
    except ImportError:
        torch = None
    try:
        import cupy
    except ImportError:
        cupy = None
    r = np.random.default_rng(0)
    print(f"{'case':24} {'MB':>7} {'loom':>8} {'library':>8} {'torch':>8} {'cupy':>8}   ms; GB/s loom / best peer")
    for name, (sa, sb, dt) in CASES.items():
        a, b = host(sa, dt, r), host(sb, dt, r)
        nbytes = a.nbytes + b.nbytes + a.itemsize * int(np.prod(np.broadcast_shapes(a.shape[:-1] or (1,), (1,))))
        row = {}
        A, B = loom.asarray(a), loom.asarray(b)
        want = None
        for key, env in (("loom", "0"), ("library", "1")):
            os.environ["LOOM_MATMUL_VECTOR_LIBRARY"] = env
            out = [None]

            def call():
                out[0] = A @ B
                loom.eval(out[0])
            try:
                row[key] = timed(call, lambda: loom.cuda.Device().synchronize() if hasattr(loom, "cuda") else None)
                got = np.asarray(out[0].get()).astype(np.complex128)
                want = (a.astype(np.complex128) @ b.astype(np.complex128)) if want is None else want
                err = np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-30)
                if err > {"float16": 3e-2, "float32": 1e-4, "float64": 1e-10, "complex64": 1e-4}[dt]:
                    print(f"  {name} {key}: relative error {err:.2e}")
            except Exception as e:
                row[key] = float("nan")
                print(f"  {name} {key}: {type(e).__name__}: {e}")
        os.environ.pop("LOOM_MATMUL_VECTOR_LIBRARY")
        if torch is not None:
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            row["torch"] = timed(lambda: ta @ tb, torch.cuda.synchronize)
        if cupy is not None:
            ca, cb = cupy.asarray(a), cupy.asarray(b)
            row["cupy"] = timed(lambda: ca @ cb, cupy.cuda.Device().synchronize)
        peers = [row[k] for k in ("torch", "cupy") if k in row]
        best = min(peers) if peers else float("nan")
        cells = " ".join(f"{row.get(k, float('nan')):8.3f}" for k in ("loom", "library", "torch", "cupy"))
        print(f"{name:24} {nbytes / 1e6:7.1f} {cells}   {nbytes / row['loom'] / 1e6:7.0f} / {nbytes / best / 1e6:7.0f}",
              flush=True)


if __name__ == "__main__":
    main()
