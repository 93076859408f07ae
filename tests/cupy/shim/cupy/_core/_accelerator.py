"""cupy._core._accelerator: CuPy's switches between its reduction/routine back ends (CUB, cuTENSOR).
Loom has one back end and no such switch: the lists are empty and setting them is accepted and kept
(so a test can save and restore them), with no effect on what loom computes."""
from .. import _shim

ACCELERATOR_CUB = 1
ACCELERATOR_CUTENSOR = 2
ACCELERATOR_CUTLASS = 3
_routine = []
_reduction = []


def get_routine_accelerators():
    return list(_routine)


def get_reduction_accelerators():
    return list(_reduction)


def set_routine_accelerators(accelerators):
    _routine[:] = list(accelerators)


def set_reduction_accelerators(accelerators):
    _reduction[:] = list(accelerators)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy._core._accelerator.{name}")
