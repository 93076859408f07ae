"""cupy._environment: CuPy's lookups of the CUDA toolkit pieces it was built with. Only CUB's is mapped:
loom bundles no CUB (cupy.cuda.cub.available is False), so its path is None, CuPy's answer where CUB is
not found, and the tests of CuPy's CUB reductions skip as they do on a CuPy without CUB."""
from . import _shim


def get_cub_path():
    return None


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy._environment.{name}")
