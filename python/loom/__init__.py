"""loom: a lazy, CuPy-compatible array library with automatic kernel fusion (`import loom as cp`).

Array operations build a graph; values are computed (fused into as few JIT-compiled kernels as
possible) when observed: printing, get()/asnumpy(), float()/bool(), NumPy conversion, loom.eval(),
or when the pending graph grows past a bound (256 nodes; loom.set_graph_bound). Arrays live on the
current loom.cuda.Device: a CUDA GPU when there is one, else an AMD GPU (HIP), else the host
(Device(0) stands in for it); LOOM_DEVICE=cuda / hip / host picks the kind (see loom.cuda).
"""
import contextlib as _contextlib

import numpy as _numpy

from . import _core

import atexit as _atexit
# Before interpreter exit, while the GPU driver's libraries are whole: a background tier-up still compiling
# when exit() runs the C exit handlers could use a driver library already torn down (include/loom/loom.h).
_atexit.register(_core._stop_background)
from ._ndarray import *  # noqa: F401,F403
from ._creation import *  # noqa: F401,F403
from ._math import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._manipulation import *  # noqa: F401,F403
from ._indexing import *  # noqa: F401,F403
from ._complex import *  # noqa: F401,F403
from ._products import *  # noqa: F401,F403
from ._selection import *  # noqa: F401,F403
from ._statistics import *  # noqa: F401,F403
from ._numeric import *  # noqa: F401,F403
from ._grids import *  # noqa: F401,F403
from ._bits import *  # noqa: F401,F403
from ._shape_base import *  # noqa: F401,F403
from ._setops import *  # noqa: F401,F403
from ._window import *  # noqa: F401,F403
from ._polynomial import poly1d  # noqa: F401
from ._functional import piecewise, vectorize  # noqa: F401
from ._io import *  # noqa: F401,F403
from ._memory_ranges import *  # noqa: F401,F403
from ._temporal import isnat  # noqa: F401 (datetime64 / timedelta64 arrays: loom/_temporal.py)
from . import _math, _selection, _statistics, _numeric, _grids
globals().update(_math._UFUNCS_PUBLIC)  # the ufunc objects win over same-named plain functions (conj)
from ._common import AxisError
from ._ndarray import ndarray
from ._math import _UFUNCS, round_, around
from ._reductions import amin, amax
from . import _creation, _math, _reductions, _manipulation, _indexing, _complex, _config, _docstrings, _dask, _products, _bits
from . import _shape_base, _setops, _window
from ._fuse import fuse, Fusion
from ._kernels import ElementwiseKernel, ReductionKernel  # noqa: F401
from ._raw import RawKernel, RawModule  # noqa: F401
from . import cuda, exceptions, linalg, random
from . import lib, polynomial  # noqa: F401 (numpy.lib.stride_tricks, numpy.polynomial helpers, as CuPy)
from . import fft  # noqa: F401 (loom.fft: cuFFT on CUDA devices, NumPy's pocketfft on the host)
from .aot import load_bundle  # noqa: F401 (loom.aot: ahead-of-time kernel bundles)
from ._config import config, show_config, config_info, inspect, capture_dumps, PerformanceWarning  # noqa: F401
from .cuda import get_default_memory_pool, get_default_pinned_memory_pool  # noqa: F401 (CuPy exports them)

_core.configure(ndarray, AxisError, cuda._current_key)  # constant-only arrays materialize on the current device
_config._warn_slow_fallbacks()
_dask.install()  # registers loom arrays with Dask when (and if) dask.array / distributed are imported

__version__ = _core.version

# NumPy dtype names, as CuPy exports them
bool_ = _numpy.bool_
int8, int16, int32, int64 = _numpy.int8, _numpy.int16, _numpy.int32, _numpy.int64
uint8, uint16, uint32, uint64 = _numpy.uint8, _numpy.uint16, _numpy.uint32, _numpy.uint64
float16, float32, float64 = _numpy.float16, _numpy.float32, _numpy.float64
complex64, complex128 = _numpy.complex64, _numpy.complex128
complex_, cfloat, cdouble, csingle = _numpy.complex128, _numpy.complex128, _numpy.complex128, _numpy.complex64
dtype = _numpy.dtype


_LAZY_NAMES = ("bfloat16",)  # made by __getattr__ on first use


def __getattr__(name):
    """loom.bfloat16: ml_dtypes' NumPy scalar type (as JAX exports it), imported on first use (~1 s)."""
    if name == "bfloat16":
        from ._common import _bf16
        return _bf16().type
    raise AttributeError(f"module 'loom' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_NAMES))


# NumPy's type information and predicates, as CuPy re-exports them (they compute nothing on arrays)
iinfo, finfo, isscalar, issubdtype, promote_types = (
    _numpy.iinfo, _numpy.finfo, _numpy.isscalar, _numpy.issubdtype, _numpy.promote_types)
# common_type is loom's own (_numeric.py): numpy.common_type dispatches loom arrays back to loom
generic, number, integer, signedinteger, unsignedinteger, inexact, floating, complexfloating = (
    _numpy.generic, _numpy.number, _numpy.integer, _numpy.signedinteger, _numpy.unsignedinteger, _numpy.inexact,
    _numpy.floating, _numpy.complexfloating)
byte, ubyte, short, ushort, intc, uintc, int_, uint, longlong, ulonglong, intp, uintp = (
    _numpy.byte, _numpy.ubyte, _numpy.short, _numpy.ushort, _numpy.intc, _numpy.uintc, _numpy.int_, _numpy.uint,
    _numpy.longlong, _numpy.ulonglong, _numpy.intp, _numpy.uintp)
half, single, double, float_ = _numpy.half, _numpy.single, _numpy.double, _numpy.float64
newaxis = None
inf, nan, pi, e = _numpy.inf, _numpy.nan, _numpy.pi, _numpy.e
round = round_
from ._ufunc import ufunc  # noqa: E402


# loom.eval(*arrays): computes several pending arrays in ONE evaluation, so that they fuse; returns them
# (the array, or a tuple of several). The C function itself: no Python frame on the per-call path.
from ._core import eval  # noqa: E402


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
    """The context's counters, a dict: kernels_launched, kernels_compiled, cache_hits, compile_ms,
    last_eval_kernels, temp_bytes_peak, library_calls (BLAS / cuBLASLt / LAPACK / cuSOLVER / FFT calls),
    plans_made (runs of the pass pipeline), copies_to_host / bytes_to_host (read-backs from a GPU: .get(),
    a host fallback, a scalar asked of a device array) and copies_to_device / bytes_to_device (uploads)."""
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




# The array API standard 2024.12: loom is its namespace (_array_api.py says why; sorting: _sorting.py)
from . import _array_api  # noqa: E402
_array_api.export(globals())
_docstrings.add_docs()  # after every export: fills the docstrings the public functions lack

# Functions that __array_function__ dispatches to (NumPy name -> loom function).
_API = {name: obj for name, obj in list(globals().items())
        + [item for m in (_creation, _math, _reductions, _manipulation, _indexing, _complex, _selection,
                          _statistics, _numeric, _grids, _products, _bits, _shape_base, _setops, _window)
           for item in vars(m).items()]
        if callable(obj) and not name.startswith("_") and not isinstance(obj, type)
        and getattr(obj, "__module__", "").startswith("loom")}
_API.update(amin=amin, amax=amax, round=round_, around=around)
_API["norm"] = linalg.norm
