"""cupyx, CuPy's extension namespace: loom has no counterpart, so only what cupy.testing itself needs
is mapped (cupyx.scipy.sparse.issparse: loom has no sparse matrices); every other name is a stub that
raises MissingInLoom when used."""
import importlib as _importlib

from cupy import _shim  # installs the finder

from . import scipy  # noqa: F401


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return _importlib.import_module(f"cupyx.{name}")
    except ImportError:
        return _shim.Missing(f"cupyx.{name}")
