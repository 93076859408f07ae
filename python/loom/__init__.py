"""loom: a lazy, CuPy-compatible array library with automatic kernel fusion (`import loom as cp`).

Array operations build a graph; values are computed (fused into as few JIT-compiled kernels as
possible) when observed: printing, get()/asnumpy(), float()/bool(), NumPy conversion, loom.eval(),
or when the pending graph grows past a bound (256 nodes; loom.set_graph_bound). Arrays live on the
current loom.cuda.Device: a CUDA GPU when there is one, else the host (Device(0) stands in for it).
"""
import contextlib as _contextlib

import numpy as _numpy

from . import _core
from ._ndarray import *  # noqa: F401,F403
from ._creation import *  # noqa: F401,F403
from ._math import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._manipulation import *  # noqa: F401,F403
from ._indexing import *  # noqa: F401,F403
from ._complex import *  # noqa: F401,F403
from ._common import AxisError
from ._ndarray import ndarray
from ._math import _UFUNCS, round_, around
from ._reductions import amin, amax
from . import _creation, _math, _reductions, _manipulation, _indexing, _complex
from ._fuse import fuse, Fusion
from ._kernels import ElementwiseKernel, ReductionKernel  # noqa: F401
from ._raw import RawKernel, RawModule  # noqa: F401
from . import cuda, exceptions, linalg, random
from .aot import load_bundle  # noqa: F401 (loom.aot: ahead-of-time kernel bundles)
from .cuda import get_default_memory_pool, get_default_pinned_memory_pool  # noqa: F401 (CuPy exports them)

_core.configure(ndarray, AxisError)

__version__ = _core.version

# NumPy dtype names, as CuPy exports them
bool_ = _numpy.bool_
int8, int16, int32, int64 = _numpy.int8, _numpy.int16, _numpy.int32, _numpy.int64
uint8, uint16, uint32, uint64 = _numpy.uint8, _numpy.uint16, _numpy.uint32, _numpy.uint64
float16, float32, float64 = _numpy.float16, _numpy.float32, _numpy.float64
complex64, complex128 = _numpy.complex64, _numpy.complex128
complex_, cfloat, cdouble, csingle = _numpy.complex128, _numpy.complex128, _numpy.complex128, _numpy.complex64
from ._common import _ml_dtypes  # noqa: E402
if _ml_dtypes is not None:
    bfloat16 = _ml_dtypes.bfloat16  # ml_dtypes' NumPy scalar type, as JAX exports it
dtype = _numpy.dtype
newaxis = None
inf, nan, pi, e = _numpy.inf, _numpy.nan, _numpy.pi, _numpy.e
round = round_
ufunc = type(_UFUNCS["add"])


def eval(*arrays):
    """Computes several pending arrays in ONE evaluation, so that they fuse; returns them."""
    _core.eval(*arrays)
    return arrays[0] if len(arrays) == 1 else arrays


def set_eager(flag=True):
    """Eager mode: every operation is evaluated at once (for debugging). Returns the old setting."""
    return _core.set_eager(bool(flag))


@_contextlib.contextmanager
def eager(flag=True):
    """with loom.eager(): ... evaluates every operation at once inside the block."""
    old = _core.set_eager(bool(flag))
    try:
        yield
    finally:
        _core.set_eager(old)


def set_graph_bound(nodes):
    """Pending graphs with more than `nodes` nodes are evaluated before they grow further (default 256).
    Returns the old bound."""
    return _core.set_graph_bound(nodes)


def stats():
    """Kernel counters of the context: kernels_launched, kernels_compiled, cache_hits, ..."""
    return _core.stats()


def get_array_module(*args):
    """loom if any argument is a loom array, else numpy (CuPy's idiom for generic code)."""
    import sys
    for a in args:
        if isinstance(a, ndarray):
            return sys.modules[__name__]
    return _numpy


def is_available():
    """True: loom always has a backend (the host CPU in this build; see loom.cuda)."""
    return True


def show_config():
    n = cuda.runtime.getDeviceCount()
    gpus = f"{n} CUDA device(s)" if n else "no CUDA device (arrays live on the host)"
    print(f"loom {__version__}: host backend (LLVM JIT); {gpus}")


# Functions that __array_function__ dispatches to (NumPy name -> loom function).
_API = {name: obj for name, obj in list(globals().items())
        + [item for m in (_creation, _math, _reductions, _manipulation, _indexing, _complex)
           for item in vars(m).items()]
        if callable(obj) and not name.startswith("_") and not isinstance(obj, type)
        and getattr(obj, "__module__", "").startswith("loom")}
_API.update(amin=amin, amax=amax, round=round_, around=around)
_API["norm"] = linalg.norm
