"""cupy._core._gufuncs: CuPy's internal generalized-ufunc class and its signature parser, which CuPy's
tests call directly, are loom's (loom._gufunc: the same interface, loom's implementation); a loom without
that module leaves them missing."""
from .. import _shim

try:
    from loom._gufunc import GeneralizedUfunc as _GUFunc  # noqa: F401
    from loom._gufunc import parse_signature as _parse_gufunc_signature  # noqa: F401
except ImportError:
    pass


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy._core._gufuncs.{name}")
