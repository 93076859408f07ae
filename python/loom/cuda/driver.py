"""loom.cuda.driver: the errors of CuPy's cupy.cuda.driver that raw modules raise.

CUDADriverError is CuPy's error of a failed CUDA driver call: its message starts with the driver's error
name ("CUDA_ERROR_NOT_FOUND: named symbol not found"), and `status` is the CUresult. Loom raises it where
CuPy's RawModule does: a kernel the module does not have (get_function), a code file that is not there
(RawModule(path=...)). A missing kernel is also a ValueError (loom's error for a bad name before this
class existed), so both `except ValueError` and `except CUDADriverError` catch it.
"""

CUDA_ERROR_FILE_NOT_FOUND = 301
CUDA_ERROR_NOT_FOUND = 500

_NAMES = {CUDA_ERROR_FILE_NOT_FOUND: ("CUDA_ERROR_FILE_NOT_FOUND", "file not found"),
          CUDA_ERROR_NOT_FOUND: ("CUDA_ERROR_NOT_FOUND", "named symbol not found")}


class CUDADriverError(RuntimeError):
    """A CUDA driver error: status is the CUresult; str() is '<CUDA_ERROR_NAME>: <description>' and detail."""

    def __init__(self, status, detail=""):
        self.status = int(status)
        name, text = _NAMES.get(self.status, (f"CUDA error {self.status}", "unknown error"))
        super().__init__(f"{name}: {text}" + (f" ({detail})" if detail else ""))


class KernelNotFoundError(CUDADriverError, ValueError):
    """get_function of a name the module has no kernel for (CUDA_ERROR_NOT_FOUND)."""

    def __init__(self, detail=""):
        super().__init__(CUDA_ERROR_NOT_FOUND, detail)
