"""cupyx.scipy: only `sparse.issparse`, which cupy.testing calls on every result, is mapped."""
from cupy import _shim

from . import sparse  # noqa: F401


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.submodule(__name__, name)
