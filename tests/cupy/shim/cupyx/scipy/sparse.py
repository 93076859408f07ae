"""cupyx.scipy.sparse: loom has no sparse matrices, so nothing is sparse."""
from cupy import _shim


def issparse(x):
    return False


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupyx.scipy.sparse.{name}")
