"""cupy._core._routines_linalg: CuPy's GEMM compute-type settings (tensor-core precision knobs). loom
computes matmul in the operands' own precision and has no such setting: the tests' get/set calls are
accepted and change nothing (cupy._core.get_compute_type / set_compute_type)."""
from .. import _shim

(COMPUTE_TYPE_TBD, COMPUTE_TYPE_DEFAULT, COMPUTE_TYPE_PEDANTIC, COMPUTE_TYPE_FP16, COMPUTE_TYPE_FP32,
 COMPUTE_TYPE_FP64, COMPUTE_TYPE_BF16, COMPUTE_TYPE_TF32) = range(8)


def get_compute_type(dtype):
    return COMPUTE_TYPE_DEFAULT


def set_compute_type(dtype, compute_type):
    pass


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy._core._routines_linalg.{name}")
