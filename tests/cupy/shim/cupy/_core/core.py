"""cupy._core.core: CuPy's core module. ndarray is loom's; _cupy_header_list is the list of headers loom
ships for raw kernels (loom._raw.HEADERS: cupy/complex.cuh, cupy/carray.cuh), which CuPy's tests include all
together to check that they compile. Other names are stubs."""
import loom as _loom
from loom._raw import HEADERS as _cupy_header_list  # noqa: F401

from .. import _shim

ndarray = _loom.ndarray


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy._core.core.{name}")
