"""cupy_backends.cuda.stream: CuPy's default-stream query, which its CUDA Array Interface tests compare
the exported `stream` entry with; other names are stubs."""
import loom.cuda as _cuda

from cupy import _shim


def get_default_stream_ptr():
    """The CUDA handle a loom array exports as its CUDA Array Interface stream on loom's default stream
    (1, CUDA's legacy default stream: loom synchronizes its own work before such an export)."""
    return _cuda.stream._LEGACY_HANDLE


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy_backends.cuda.stream.{name}")
