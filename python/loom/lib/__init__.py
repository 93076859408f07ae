"""loom.lib: the numpy.lib namespaces CuPy provides (cupy.lib.stride_tricks)."""
from . import stride_tricks  # noqa: F401
