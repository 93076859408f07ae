"""cupy.cuda.driver: CuPy's binding of the CUDA driver API. _is_cuda_python and get_build_version answer facts of
CuPy's build (whether it calls the driver through NVIDIA's cuda-python package, which tests read to pick
their expected error types; the CUDA version it was built against): loom is not built on cuda-python. Every other name is the driver API itself, which
loom does not expose, but for CUDADriverError (loom.cuda.driver's: a raw module's missing kernel or file): a stub (NeedsCudaDevice without a GPU, MissingInLoom with one)."""
from loom.cuda.driver import CUDADriverError  # noqa: F401 (what loom's RawModule raises, as CuPy's)

from .. import _shim


def _is_cuda_python():
    return False


def get_build_version():
    """The CUDA version CuPy was built against; loom is built against none (it loads the driver at run
    time), so the driver's version stands for it, else (no driver: the host) the version of the CUDA
    toolkit whose NVRTC compiles loom's raw kernels (13000 for CUDA 13.0), else 0."""
    from . import runtime
    v = runtime.driverGetVersion()
    if v:
        return v
    from loom.cuda.nvrtc import getVersion
    major, minor = getVersion()
    return major * 1000 + minor * 10


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy.cuda.driver.{name}")
