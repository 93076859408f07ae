"""inputs.py: a workload's inputs, deterministic per workload name: NumPy arrays on the host, or torch
tensors made on the GPU (generating 2^26-element inputs on the host would cost the GPU run minutes).
The two generators draw from the same distributions, not the same values."""
import zlib

import numpy as np

from . import workloads as W


def _seed(w, k):
    return zlib.crc32(f"{w.name}:{k}".encode())


def _hi(i, size):
    return W.DIMS[size][i.hi] if isinstance(i.hi, str) else i.hi


def host_inputs(w, size):
    out = []
    for k, (i, shape) in enumerate(zip(w.inputs, w.shapes(size))):
        rng = np.random.default_rng(_seed(w, k))
        dt = np.dtype(i.dtype)
        if i.gen == "normal" and dt.kind == "c":
            a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        elif i.gen in ("normal", "normal_nan"):
            a = rng.standard_normal(shape, dtype=np.float64 if dt == np.float64 else np.float32)
            if i.gen == "normal_nan":   # about 5 % missing values
                a[rng.random(shape) < 0.05] = np.nan
        elif i.gen == "uniform":
            a = rng.random(shape, dtype=np.float64 if dt == np.float64 else np.float32) * (i.hi - i.lo) + i.lo
        elif i.gen == "int":
            a = rng.integers(i.lo, _hi(i, size), shape, dtype=np.int64)
        elif i.gen == "bernoulli":
            a = rng.random(shape, dtype=np.float32) < 0.5
        elif i.gen == "causal_mask":
            a = np.triu(np.full(shape, -10000.0, np.float32), 1)
        else:
            raise ValueError(f"{w.name}: unknown generator {i.gen}")
        out.append(np.ascontiguousarray(a.astype(dt, copy=False)))
    return out


def device_inputs(w, size, torch, device="cuda"):
    out = []
    tdt = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64, "int8": torch.int8,
           "uint8": torch.uint8, "int32": torch.int32, "int64": torch.int64, "bool": torch.bool,
           "int16": torch.int16, "uint16": torch.uint16, "complex64": torch.complex64}
    for k, (i, shape) in enumerate(zip(w.inputs, w.shapes(size))):
        g = torch.Generator(device=device)
        g.manual_seed(_seed(w, k))
        dt = tdt[i.dtype]
        fdt = torch.float64 if dt == torch.float64 else torch.float32
        if i.gen == "normal" and dt == torch.complex64:   # real and imaginary parts each standard normal
            a = torch.randn(shape, generator=g, device=device, dtype=torch.complex64) * 2 ** 0.5
        elif i.gen in ("normal", "normal_nan"):
            a = torch.randn(shape, generator=g, device=device, dtype=fdt)
            if i.gen == "normal_nan":
                a[torch.rand(shape, generator=g, device=device) < 0.05] = float("nan")
        elif i.gen == "uniform":
            a = torch.rand(shape, generator=g, device=device, dtype=fdt) * (i.hi - i.lo) + i.lo
        elif i.gen == "int":
            a = torch.randint(int(i.lo), int(_hi(i, size)), shape, generator=g, device=device, dtype=torch.int64)
        elif i.gen == "bernoulli":
            a = torch.rand(shape, generator=g, device=device) < 0.5
        elif i.gen == "causal_mask":
            a = torch.triu(torch.full(shape, -10000.0, device=device), 1)
        else:
            raise ValueError(f"{w.name}: unknown generator {i.gen}")
        out.append(a.to(dt).contiguous())
    return out
