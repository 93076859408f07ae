"""loom.cuda.nvrtc: facts of the NVRTC library that compiles raw modules' CUDA C++ (CuPy's
cupy_backends.cuda.libs.nvrtc): getVersion() is (major, minor), (0, 0) where libnvrtc is missing."""
from .compiler import _nvrtc_version


def getVersion():
    return _nvrtc_version()
