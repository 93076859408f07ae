"""cupy._core, CuPy's internal core package, mapped onto loom where loom has the same thing; any other
name is a stub that raises MissingInLoom when used."""
import loom as _loom

from .. import _shim
from . import internal  # noqa: F401
from .internal import get_size  # noqa: F401
from ._accelerator import get_reduction_accelerators, get_routine_accelerators  # noqa: F401
from ._accelerator import set_reduction_accelerators, set_routine_accelerators  # noqa: F401
from ._reduction import create_reduction_func  # noqa: F401
from ._routines_linalg import get_compute_type, set_compute_type  # noqa: F401

ndarray = _loom.ndarray
array = _loom.array
ElementwiseKernel = _loom.ElementwiseKernel
ReductionKernel = _loom.ReductionKernel


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.submodule(__name__, name)
