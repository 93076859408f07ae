# SPDX-License-Identifier: Apache-2.0
"""supported.py: the generated pages of the documentation, by introspecting the installed `loom`
against `numpy` (docs/conf.py runs it at every build; `python docs/supported.py OUTDIR` by hand).

supported.md: every public function and ufunc of numpy, numpy.linalg, numpy.fft, numpy.random and
numpy.ndarray, with what loom does on each backend: the host, NVIDIA GPUs (CUDA) and AMD GPUs (HIP). A
name's status comes from, in order:
  1. the loom object's `__loom_backends__` attribute, if the implementation declares one: a dict
     {"host": status, "cuda": status[, "hip": status]} (the way to state what introspection cannot
     see); for a plain function that hands work to NumPy (2.), else its module's `__loom_backends__`
     (loom.fft: NumPy's pocketfft on the host, cuFFT on a CUDA device);
  2. `numpy`, when the loom function hands the work to NumPy (its code calls loom's `_host` helper,
     or calls `numpy` on arrays it brought to the host with `_np`/`asnumpy`; for an ndarray method,
     also the loom functions it delegates to): computed by NumPy on the host, GPU arrays copied
     there and back. A function that does so only in some forms is not caught: declare it (1.);
  3. `library`, when its code reaches a vendor library through libloom (loom.linalg's `_lapack`:
     LAPACK, cuSOLVER; loom._products' contractions, _core.matmul nodes: BLAS, cuBLASLt, hipBLASLt),
     directly or through a loom function it calls;
  4. `fused`, when NumPy's object is a ufunc: an elementwise op that fuses with its neighbours;
  5. `kernel`, any other loom implementation: lazy graph nodes run as loom kernels or views.
The AMD column is the CUDA one where the AMD device does the same (its kernels come from the same GPU
lowering, codegen/gpu_lower.c, compiled for gfx chips by codegen/amdgpu.c), except where its libraries
differ (AMD_LIBRARIES, from runtime/hip/: hipBLASLt and hipFFT exist; no solver library is called yet, so
decompositions run on the host). Nothing of it has run on an AMD GPU yet: it is built and checked
without one (code objects checked by structure, the runtime against a mock HIP), which the page says.
api_functions.md: autodoc entries for every public function and class of the loom namespace.
"""
import inspect
import os
import sys

STATUS_TEXT = {
    "fused": ("fused", "fused"),
    "kernel": ("kernel", "kernel"),
    "numpy": ("NumPy", "NumPy (host copy)"),
    "library": ("library", "library call"),
    "host-library": ("library", "host library (host copy)"),
    None: ("—", "—"),
}

# What AMD's device has where CUDA's calls a vendor library (runtime/hip/hip_blas.c's rt_hip_linalg):
# matrix products through hipBLASLt, FFTs through hipFFT, no decompositions (its .decompose is NULL:
# loom.linalg's _lapack runs them on a host copy). Keyed by what the CUDA status stands for.
AMD_LIBRARIES = {"products": "library", "fft": "library", "decompositions": "host-library"}


def public_callables(module, names=None):
    names = names if names is not None else getattr(module, "__all__", None) or dir(module)
    out = {}
    for n in names:
        if n.startswith("_"):
            continue
        obj = getattr(module, n, None)
        if obj is None or inspect.ismodule(obj) or isinstance(obj, type) or not callable(obj):
            continue
        out[n] = obj
    return out


def _code_names(obj):
    code = getattr(obj, "__code__", None)
    if not hasattr(code, "co_names"):
        return set()
    names = set(code.co_names)
    for const in code.co_consts:  # lambdas and nested functions
        if hasattr(const, "co_names"):
            names |= set(const.co_names)
    return names


def _callees(obj, names):
    """The loom functions obj's code names: globals, and attributes of loom modules (_mod.fn)."""
    g = getattr(obj, "__globals__", {})
    out = []
    for n in names:
        v = g.get(n)
        if inspect.ismodule(v) and v.__name__.startswith("loom"):
            out += [getattr(v, a) for a in names if inspect.isfunction(getattr(v, a, None))]
        elif inspect.isfunction(v) and v.__module__.startswith("loom"):
            out.append(v)
    return out


def hands_to_numpy(obj, depth):
    """obj's code (or, for a thin wrapper, a loom function it calls) hands the arrays to NumPy."""
    names = _code_names(obj)
    if "_host" in names or ("numpy" in names and bool(names & {"_np", "asnumpy"})):
        return True
    return depth > 0 and any(hands_to_numpy(f, depth - 1) for f in _callees(obj, names) if f is not obj)


def library_use(obj, depth):
    """The vendor library families obj's code reaches through libloom, itself or through the loom
    functions it calls (depth levels): "decompositions" (linalg's _lapack), "products" (a function of
    loom._products, whose contractions are _core.matmul graph nodes)."""
    names = _code_names(obj)
    uses = set()
    if "_lapack" in names:
        uses.add("decompositions")
    if getattr(obj, "__module__", None) == "loom._products" and "matmul" in names:
        uses.add("products")
    if depth > 0:
        for f in _callees(obj, names):
            if f is not obj:
                uses |= library_use(f, depth - 1)
    return uses


def library_status(uses):
    """(host, cuda, hip) of a function reaching the library families `uses`: a decomposition runs on the
    host for an AMD array (so does every function that decomposes, if only in some cases)."""
    family = "decompositions" if "decompositions" in uses else "products"
    return "library", "library", amd_status("library", family)


def status(loom_obj, np_obj, module_default=None):
    """(host, cuda, hip) statuses of a loom function standing for NumPy's np_obj."""
    if loom_obj is None:
        return None, None, None
    declared = getattr(loom_obj, "__loom_backends__", None)
    if isinstance(declared, dict):
        return declared.get("host"), declared.get("cuda"), declared.get("hip", amd_status(declared.get("cuda"), None))
    # a function: its own code (where(cond) alone is not where); in a module that states its default,
    # also the module's helpers it calls (loom.fft's transforms share one)
    if hands_to_numpy(loom_obj, depth=1 if isinstance(module_default, dict) else 0):
        if isinstance(module_default, dict):  # its module says what such a function does on a GPU (loom.fft)
            cuda = module_default.get("cuda")
            return module_default.get("host"), cuda, module_default.get("hip", amd_status(cuda, "fft"))
        return "numpy", "numpy", "numpy"
    uses = library_use(loom_obj, depth=3)
    if uses:
        return library_status(uses)
    import numpy

    if isinstance(np_obj, numpy.ufunc):
        return "fused", "fused", "fused"
    return "kernel", "kernel", "kernel"


def amd_status(cuda, use):
    """The AMD device's status where the CUDA one is `cuda`: the same, except a library call, which
    AMD_LIBRARIES settles by the family (`use`); an unknown family stays unstated."""
    if cuda != "library":
        return cuda
    return AMD_LIBRARIES.get(use, "unstated")


def cell(kind, which):
    text = STATUS_TEXT.get(kind)
    return text[which] if text else str(kind)


def table(rows):
    lines = ["| name | host | CUDA | AMD (not run) |", "| --- | --- | --- | --- |"]
    for name, (h, c, a) in rows:
        lines.append(f"| `{name}` | {cell(h, 0)} | {cell(c, 1)} | {cell(a, 1)} |")
    return "\n".join(lines)


def section(title, np_module, loom_module, prefix):
    np_funcs = public_callables(np_module)
    rows = []
    default = getattr(loom_module, "__loom_backends__", None)
    for n in sorted(np_funcs):
        lo = getattr(loom_module, n, None) if loom_module is not None else None
        home = getattr(lo, "__module__", None)
        own = default if loom_module is not None and home == loom_module.__name__ else None
        rows.append((prefix + n, status(lo, np_funcs[n], own)))
    have = sum(1 for _, (h, _c, _a) in rows if h is not None)
    return have, len(rows), f"## {title}\n\n{have} of {len(rows)} names.\n\n{table(rows)}\n"


def ndarray_section(np_mod, loom):
    names = sorted(n for n in dir(np_mod.ndarray) if not n.startswith("_"))
    rows = []
    for n in names:
        lo = getattr(loom.ndarray, n, None)
        if lo is None:
            rows.append((n, (None, None, None)))
            continue
        declared = getattr(lo, "__loom_backends__", None)
        if isinstance(declared, dict):
            cuda = declared.get("cuda")
            rows.append((n, (declared.get("host"), cuda, declared.get("hip", amd_status(cuda, None)))))
        elif hands_to_numpy(lo, depth=2):  # methods delegate
            rows.append((n, ("numpy",) * 3))
        elif uses := library_use(lo, depth=2):
            rows.append((n, library_status(uses)))
        else:
            rows.append((n, ("kernel",) * 3))
    have = sum(1 for _, (h, _c, _a) in rows if h is not None)
    return have, len(rows), f"## `ndarray` methods and attributes\n\n{have} of {len(rows)} names.\n\n{table(rows)}\n"


def supported_page(loom, numpy):
    parts, total_have, total = [], 0, 0
    for title, np_mod, lo_mod, prefix in [
        ("`numpy` functions and ufuncs", numpy, loom, ""),
        ("`numpy.linalg`", numpy.linalg, getattr(loom, "linalg", None), "linalg."),
        ("`numpy.fft`", numpy.fft, getattr(loom, "fft", None), "fft."),
        ("`numpy.random` (module-level functions; loom's streams are its own, `loom.random`)", numpy.random,
         getattr(loom, "random", None), "random."),
    ]:
        h, n, text = section(title, np_mod, lo_mod, prefix)
        total_have, total = total_have + h, total + n
        parts.append(text)
    h, n, text = ndarray_section(numpy, loom)
    parts.append(text)
    extras = sorted(n for n in public_callables(loom) if not hasattr(numpy, n))
    head = f"""# Supported functions

Generated from loom {loom.__version__} against NumPy {numpy.__version__} by `docs/supported.py`
(introspection, so it follows the code): {total_have} of {total} NumPy functions and ufuncs, and
{h} of {n} `ndarray` members. CuPy's API follows NumPy's names, so the same table answers for CuPy code.

| status | meaning |
| --- | --- |
| fused | an elementwise op: lazy, fused with its neighbours into one kernel |
| kernel | implemented by loom: lazy graph nodes run as loom kernels (reductions, `where`, creation) or views |
| NumPy | computed by NumPy on the host; on a GPU the arrays are copied to the host and back |
| library | a vendor library call, on the arrays where they are: on the host BLAS and LAPACK; on NVIDIA GPUs cuBLASLt, cuFFT, cuSOLVER; on AMD GPUs hipBLASLt, hipFFT (floating-point matrix products take the elementwise op that follows them into the call; integer and bool products are multiply + sum kernels) |
| host library | on an AMD GPU: no solver library is called yet (no hipSOLVER), so decompositions run through LAPACK on a host copy and the results are copied back (a RuntimeWarning says so once) |
| — | not implemented: calling NumPy's function on a loom array goes through `__array_function__` only where loom implements it |

A function that calls a library only in some cases (`linalg.norm` of a matrix with `ord=2` or `"nuc"`,
`linalg.matrix_power` with a negative power) is listed with the library.

**AMD GPUs: built and checked without an AMD GPU, not run.** The AMD column follows from the code: an AMD
GPU runs the same kernels as an NVIDIA one (one GPU lowering, `codegen/gpu_lower.c`, compiled for gfx
chips by `codegen/amdgpu.c`; gfx942, the MI300's, by default) and calls hipBLASLt and hipFFT where
NVIDIA's calls cuBLASLt and cuFFT. The code objects are checked by their structure (ELF, kernel
descriptors, metadata; `tests/c/test_amdgpu_api.c`) and the HIP device's runtime code against a mock HIP
runtime (`tests/c/test_hip_mock.c`), but no kernel has run on an AMD GPU yet. AMD needs a source build:
the portable wheel's LLVM has the host and NVPTX targets only.

Beyond NumPy's names, loom has: {", ".join(f"`{x}`" for x in extras)}.

"""
    return head + "\n".join(parts)


def api_page(loom):
    funcs = public_callables(loom)
    classes = sorted(n for n in dir(loom) if not n.startswith("_") and isinstance(getattr(loom, n), type)
                     and getattr(getattr(loom, n), "__module__", "").startswith("loom"))
    lines = ["# The `loom` namespace", "",
             "Generated by `docs/supported.py` from the installed package: every public class and function.",
             "", "## Classes", "", "```{eval-rst}"]
    for n in classes:
        lines += [f".. autoclass:: loom.{n}", "   :members:", ""]
    lines += ["```", "", "## Functions", "", "```{eval-rst}"]
    for n in sorted(funcs):
        if getattr(funcs[n], "__module__", "").startswith("loom"):
            lines += [f".. autofunction:: loom.{n}", ""]
    lines += ["```", ""]
    return "\n".join(lines)


def generate(outdir):
    import numpy

    import loom

    os.makedirs(outdir, exist_ok=True)
    for name, text in (("supported.md", supported_page(loom, numpy)), ("api_functions.md", api_page(loom))):
        path = os.path.join(outdir, name)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:  # unchanged files keep their time stamps (Sphinx rebuilds less)
            with open(path, "w") as f:
                f.write(text)


if __name__ == "__main__":
    generate(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "_generated"))
