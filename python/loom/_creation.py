"""_creation.py: making loom arrays: from Python and NumPy data, from GPU objects (the CUDA Array
Interface, DLPack), filled (empty, zeros, ones, full, *_like), ranges (arange, linspace) and eye.
"""
import numpy

from . import _core
from ._common import _code, _shape_tuple, _cur, _from_numpy
from ._ndarray import ndarray, _operand


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0):
    if isinstance(obj, ndarray):
        r = obj.astype(obj.dtype if dtype is None else dtype, copy=copy is not False)
    elif _has_cai(obj):
        r = _from_cai(obj)
        if dtype is not None or copy:
            r = r.astype(r.dtype if dtype is None else dtype, copy=True)
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, numpy.ndarray):
        r = from_dlpack(obj)
        if dtype is not None or copy:
            r = r.astype(r.dtype if dtype is None else dtype, copy=True)
    else:
        r = _from_numpy(numpy.asarray(obj, dtype=dtype), copy=True)
    if ndmin > r.ndim:
        r = r.reshape((1,) * (ndmin - r.ndim) + r.shape)
    return r


def asarray(a, dtype=None, order=None):
    """Loom arrays as they are; objects with __cuda_array_interface__ or a CUDA __dlpack__ (CuPy,
    PyTorch) zero-copy; anything else (NumPy, lists) copied onto the current device."""
    if isinstance(a, ndarray):
        return a if dtype is None or numpy.dtype(dtype) == a.dtype else a.astype(dtype)
    if _has_cai(a):
        r = _from_cai(a)
    elif hasattr(a, "__dlpack__") and hasattr(a, "__dlpack_device__") and not isinstance(a, numpy.ndarray) \
            and a.__dlpack_device__()[0] == 2:
        r = from_dlpack(a)
    else:
        return array(a, dtype, copy=True)
    return r if dtype is None or numpy.dtype(dtype) == r.dtype else r.astype(dtype)


def _has_cai(obj):
    if isinstance(obj, (ndarray, numpy.ndarray)):
        return False
    try:
        return hasattr(obj, "__cuda_array_interface__")
    except Exception:
        return False


def _from_cai(obj):
    """A zero-copy loom array over an object's __cuda_array_interface__ (v2 or v3) on the current
    device; the producer's stream is synchronized first."""
    from . import cuda
    cai = obj.__cuda_array_interface__
    if not cuda._available():
        raise ValueError("__cuda_array_interface__: this machine has no CUDA device loom can use")
    if cai.get("mask") is not None:
        raise NotImplementedError("__cuda_array_interface__: masked arrays are not supported")
    dt = numpy.dtype(cai["typestr"])
    if dt.byteorder not in "=|" and dt.newbyteorder("=") != dt:
        raise TypeError(f"__cuda_array_interface__: byte order of {cai['typestr']} is not native")
    code = _code(dt.newbyteorder("="))
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    ptr = int(cai["data"][0] or 0)
    dev = cuda.get_device_id()
    cuda._sync_foreign_stream(cai.get("stream"), dev)
    return _core.from_pointer(ptr, shape, None if strides is None else tuple(int(s) for s in strides), code,
                              1, dev, obj)


asanyarray = asarray
ascontiguousarray = asarray


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if isinstance(a, ndarray):
        return a.get(out=out, order=order)
    r = numpy.asarray(a, order=order)
    if out is not None:
        out[...] = r
        return out
    return r


def empty(shape, dtype=float, order="C"):
    return _core.empty(_shape_tuple(shape), _code(dtype), False, *_cur())


def zeros(shape, dtype=float, order="C"):
    return _core.empty(_shape_tuple(shape), _code(dtype), True, *_cur())


def full(shape, fill_value, dtype=None, order="C"):
    if dtype is None:
        dtype = numpy.asarray(fill_value.get() if isinstance(fill_value, ndarray) else fill_value).dtype
    a = _core.empty(_shape_tuple(shape), _code(dtype), False, *_cur())
    _core.assign(a, _operand(fill_value))
    return a


def ones(shape, dtype=float, order="C"):
    return full(shape, 1, dtype)


def _like_shape(a, shape):
    return a.shape if shape is None else shape


def empty_like(a, dtype=None, order="K", subok=None, shape=None):
    return empty(_like_shape(a, shape), a.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, order="K", subok=None, shape=None):
    return zeros(_like_shape(a, shape), a.dtype if dtype is None else dtype)


def ones_like(a, dtype=None, order="K", subok=None, shape=None):
    return ones(_like_shape(a, shape), a.dtype if dtype is None else dtype)


def full_like(a, fill_value, dtype=None, order="K", subok=None, shape=None):
    return full(_like_shape(a, shape), fill_value, a.dtype if dtype is None else dtype)


def arange(start, stop=None, step=1, dtype=None):
    return _from_numpy(numpy.arange(start, stop, step, dtype=dtype), copy=True)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    r = numpy.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    if retstep:
        return _from_numpy(r[0], copy=True), r[1]
    return _from_numpy(r, copy=True)


def eye(N, M=None, k=0, dtype=float, order="C"):
    return _from_numpy(numpy.eye(N, M, k, dtype), copy=True)


def identity(n, dtype=float):
    return eye(n, dtype=dtype)


def from_dlpack(x, *, device=None, copy=None):
    if isinstance(x, ndarray):
        return x
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} has no __dlpack__ method")
    dev = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
    if dev[0] not in (1, 2, 10):
        raise BufferError(f"from_dlpack: device type {dev[0]} is neither the host (1), CUDA (2) nor ROCm (10)")
    if dev[0] in (2, 10):
        from . import cuda
        want = cuda._CUDA if dev[0] == 2 else cuda._HIP
        if not cuda._available() or cuda._gpu_kind() != want:
            raise BufferError(f"from_dlpack: a {'CUDA' if dev[0] == 2 else 'ROCm'} tensor, but loom has no "
                              f"{'CUDA device' if dev[0] == 2 else 'AMD GPU'} to use here")
        # The producer orders its work before the default stream (CUDA: the legacy default stream, 1;
        # ROCm: 0, the array API's number for it there); loom then waits for that stream on the host, so
        # the data is ready whichever stream loom runs on.
        s = 1 if dev[0] == 2 else 0
        cap = x.__dlpack__(stream=s)
        cuda._sync_foreign_stream(s, dev[1])
        return _core.from_dlpack_capsule(cap)
    try:
        cap = x.__dlpack__(stream=None)
    except TypeError:
        cap = x.__dlpack__()
    return _core.from_dlpack_capsule(cap)


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
