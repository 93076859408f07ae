"""cupy._creation.from_data: CuPy's module of the array-from-data routines; they are loom's public ones."""
from loom import array, asanyarray, asarray, ascontiguousarray, copy  # noqa: F401

from .. import _shim


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy._creation.from_data.{name}")
