"""cupy.cuda resolving to loom.cuda; `runtime` adds the CUDA runtime constants CuPy exposes, `device`
CuPy's get_compute_capability. The CUDA libraries CuPy binds and loom does not use (CUB, cuTENSOR,
NCCL, NVTX, ...) are modules whose `available` is False (CuPy's own flag for a library it was built
without), so the tests of those libraries skip; their other names are stubs."""
import sys as _sys

import loom.cuda as _cuda

from .. import _shim
from . import compiler, device, driver, memory, pinned_memory, runtime  # noqa: F401

for _lib in ("cub", "cutensor", "nccl", "nvtx", "thrust", "cudnn", "cusparselt", "jitify"):
    _m = _shim.MissingModule(f"{__name__}.{_lib}")
    _m.available = False
    _sys.modules[_m.__name__] = _m
    globals()[_lib] = _m


def get_nvcc_path():
    """CuPy's lookup of the CUDA toolkit's nvcc (a fact of the machine, not of a device): $NVCC, else nvcc
    on PATH, else $CUDA_PATH/bin/nvcc or /usr/local/cuda/bin/nvcc; None when there is none (as CuPy)."""
    import os
    import shutil
    if os.environ.get("NVCC"):
        return os.environ["NVCC"]
    found = shutil.which("nvcc")
    if found:
        return found
    for root in (os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "bin", "nvcc")):
            return os.path.join(root, "bin", "nvcc")
    return None


def get_local_runtime_version():
    """CuPy's version of the installed CUDA runtime; loom has none, the driver's version stands for it
    (0 on the host)."""
    return runtime.runtimeGetVersion()


def __getattr__(name):
    try:
        return getattr(_cuda, name)
    except AttributeError:
        pass
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.submodule(__name__, name)
