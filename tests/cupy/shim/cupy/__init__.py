"""cupy, as CuPy's test suite imports it, resolving to loom (tests/cupy/README.md).

Every public name is loom's: `cupy.X` is `loom.X`, and a name loom lacks raises AttributeError
("module 'cupy' (loom) has no attribute 'X'"), as it would for a user of `import loom as cp`. CuPy's
submodules resolve through _shim.py: this shim's CuPy-internal mappings (cupy._core, cupy.cuda, ...),
the vendored cupy.testing, proxies of loom's own modules, else missing stubs.
"""
import os as _os
import types as _types

import loom as _loom
from loom import *  # noqa: F401,F403

from . import _shim

for _n, _v in list(globals().items()):  # loom's submodules: cupy's are the shim's or proxies of them
    if not _n.startswith("_") and isinstance(_v, _types.ModuleType) and _v.__name__.startswith("loom"):
        del globals()[_n]

_here = _os.path.dirname(_os.path.abspath(__file__))
# the shim's modules first, then the vendored CuPy package (cupy.testing)
__path__ = [_here, _os.path.join(_os.path.dirname(_os.path.dirname(_here)), "vendor", "cupy")]
_shim.install()

# CuPy's subpackages, which `import cupy` makes attributes (CuPy imports them eagerly)
_SUBMODULES = frozenset(("cuda", "testing", "linalg", "random", "fft", "lib", "polynomial", "sparse",
                         "exceptions", "typing", "fusion", "_core", "_util"))


def __getattr__(name):
    if name in _SUBMODULES:
        return _shim.submodule(__name__, name)
    if not name.startswith("_"):
        try:
            return getattr(_loom, name)
        except AttributeError:
            pass
    raise AttributeError(f"module 'cupy' (loom) has no attribute {name!r}")


from . import _core, cuda, exceptions, linalg  # noqa: E402,F401
