"""_host_fallback.py: NumPy on the host standing in for kernels loom lacks (moved out of _ndarray.py,
which re-exports these names): NEP 35's like= creators, NumPy calls on host copies of loom arrays with
their results copied back to the arguments' device, and in-place scatters through a host view.
"""
import numpy

from . import _core
from ._common import _from_numpy
from ._ndarray import ndarray, _finish


_LIKE_CREATORS = frozenset(("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "require",
                            "empty", "zeros", "ones", "full", "arange", "identity", "eye", "tri", "frombuffer",
                            "fromfunction", "fromiter", "fromstring", "fromfile", "loadtxt", "genfromtxt"))


def _create_like(like, func, args, kwargs):
    """numpy.<func>(*args, like=like, **kwargs) as a loom array on like's device (NEP 35): loom's own
    function where the package has one, else NumPy's on the host, its result copied to that device. A
    loom array among the arguments of array/asarray (Dask passes chunks) is taken as loom takes it."""
    from . import _API, cuda
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)  # NumPy 2's device=: only "cpu" exists there
    if device not in (None, "cpu"):
        raise ValueError(f"numpy.{func.__name__}(..., like=<loom array>): device={device!r} is not a device "
                         "loom knows; leave it out (the result goes to the like= array's device)")
    fn = _API.get(func.__name__)
    kind, index = like._device
    if fn is None or fn is func:  # NumPy's public function without like= (func may be its like= wrapper)
        np_fn = getattr(numpy, func.__name__, None) or getattr(func, "_implementation", func)
        return _from_host(np_fn(*_to_host(args), **{k: _to_host(v) for k, v in kwargs.items()}), like._device)
    if kind == 0 or not cuda.is_available():
        r = fn(*args, **kwargs)
    else:
        with cuda.Device(index):
            r = fn(*args, **kwargs)
    if isinstance(r, ndarray) and r._device != like._device and not any(r is a for a in args):
        r = _core.to_device(r, kind, index)  # a host like= on a machine whose current device is a GPU
    return r


def _host(fn, *arrays, **kw):
    """fn computed by NumPy on the host; the result is a new loom array on the arrays' device."""
    args = [a._np() if isinstance(a, ndarray) else a for a in arrays]
    dev = next((a._device for a in arrays if isinstance(a, ndarray)), None)
    return _from_numpy(fn(*args, **kw), copy=True, device=dev)


def _to_host(x):
    """loom arrays in x (also inside lists and tuples) as NumPy arrays; a loom.poly1d as a numpy.poly1d."""
    if isinstance(x, ndarray):
        return x._np()
    if type(x).__name__ == "poly1d" and type(x).__module__ == "loom._polynomial":
        return x.get()
    if isinstance(x, (list, tuple)):
        return _same_sequence(x, [_to_host(v) for v in x])
    return x


def _same_sequence(like, items):
    """items as a sequence of like's type (list, tuple, or a named tuple such as SlogdetResult)."""
    return type(like)(*items) if hasattr(like, "_fields") else type(like)(items)


def _from_host(r, dev):
    """NumPy arrays and scalars in a NumPy result r (also inside lists and tuples) as loom arrays on
    device dev (a NumPy scalar becomes a 0-d array, as CuPy returns)."""
    if isinstance(r, numpy.poly1d):
        from ._polynomial import poly1d
        return poly1d(r)
    if isinstance(r, (numpy.ndarray, numpy.generic)):
        return _from_numpy(numpy.asarray(r), copy=True, device=dev)
    if isinstance(r, (list, tuple)):
        return _same_sequence(r, [_from_host(v, dev) for v in r])
    return r


def _device_of_args(*xs):
    for x in xs:
        if isinstance(x, ndarray):
            return x._device
        if isinstance(x, (list, tuple)):
            d = _device_of_args(*x)
            if d is not None:
                return d
    return None


def _host_call(fn, *args, **kw):
    """fn(*args, **kw) computed by NumPy on host copies of the loom arrays among the arguments; the
    arrays in its result become loom arrays on the arguments' device."""
    dev = _device_of_args(*args, *kw.values())
    r = fn(*_to_host(args), **{k: _to_host(v) for k, v in kw.items()})
    return _from_host(r, dev)


def _host_update(a, fn):
    """fn(h) writes a NumPy view h of loom array a in place (on a host copy for a GPU array, written
    back): scatters loom has no kernel for. Pending values are computed first."""
    if not isinstance(a, ndarray):
        raise TypeError(f"the array to write must be a loom array, not {type(a).__name__}")
    if a._tracer:
        raise TypeError("@loom.fuse: in-place scatter into a traced value is not supported")
    _core.flush()  # pending values read this memory through the graph: compute them first
    if a._on_gpu:
        h = a._np()
        fn(h)
        _core.assign(a, _from_numpy(h, copy=True, device=a._device))
    else:
        fn(a._np())


def _host_function(name, module, doc=None):
    """loom.<name>: numpy.<name> computed by NumPy on host copies of loom arrays (functions that need
    kernels loom lacks; the README lists them), with out= written as loom's out= is."""
    np_fn = getattr(numpy, name)

    def f(*args, out=None, **kw):
        r = _host_call(np_fn, *args, **kw)
        return r if out is None else _finish(r, out, "unsafe")

    f.__name__ = f.__qualname__ = name
    f.__module__ = module
    f.__doc__ = doc or (f"``loom.{name}``: like ``numpy.{name}``; computed by NumPy on a host copy of the data (a GPU "
                        "array goes through host memory), the result a loom array on the input's device")
    return f
