"""_fuse.py: @loom.fuse, which traces a function into one graph and evaluates all its outputs at once.

Approach: a call's signature is the tuple of, per argument, (dtype, shape) for arrays, or (type,
value) for Python and NumPy scalars (a scalar's value is folded into the graph as a NEP 50 weak
constant, so a new value means a new trace; the compiled kernels are still shared when the structure
repeats). The first call with a signature runs the function on placeholders (tracers) in a fresh trace
graph; later calls rebind the placeholders to the new arguments (loom_input_rebind, any strides) and
run ONE loom_eval for every output. NumPy arguments are used in place (zero-copy) and NumPy arrays
are returned. Branching on a traced value (if, bool(), float(), printing) raises TypeError.
"""
import functools

import numpy

from . import _core
from ._array import ndarray, _from_numpy, _CODE, _code

_MAX_SIGNATURES = 64


class Fusion:
    """A fused function (what @loom.fuse returns)."""

    def __init__(self, func, kernel_name=None):
        self.func = func
        self.name = kernel_name or getattr(func, "__name__", "fused")
        self._cache = {}
        functools.update_wrapper(self, func)

    def __repr__(self):
        return f"<loom.fuse {self.name}>"

    def clear_cache(self):
        self._cache.clear()

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"@loom.fuse function {self.name}: keyword arguments are not supported")
        key = []
        arrays = []
        numpy_in = False
        any_array = False
        for a in args:
            if isinstance(a, ndarray):
                if a._tracer:  # called inside another fused function: inline it
                    return self.func(*args)
                key.append((a._dtype_code, a.shape, a._device))
                arrays.append(a)
                any_array = True
            elif isinstance(a, numpy.ndarray):
                _code(a.dtype)
                la = _from_numpy(a, copy=False)
                key.append((la._dtype_code, la.shape, la._device))
                arrays.append(la)
                numpy_in = any_array = True
            elif isinstance(a, (bool, int, float)):
                key.append((type(a), a))
                arrays.append(None)
            elif isinstance(a, numpy.generic):
                key.append((a.dtype, a.item()))
                arrays.append(None)
            else:
                raise TypeError(f"@loom.fuse function {self.name}: unsupported argument type "
                                f"{type(a).__name__} (arrays and scalars only)")
        if not any_array:
            return self.func(*args)
        key = tuple(key)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(args, arrays)
            if len(self._cache) >= _MAX_SIGNATURES:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = entry
        graph, in_nodes, out_nodes, layout = entry
        vals = tuple(a for a in arrays if a is not None)
        res = _core.fuse_run(graph, in_nodes, vals, out_nodes)
        it = iter(res)
        outs = []
        for kind, value in layout:
            v = next(it) if kind == "node" else value
            if numpy_in and isinstance(v, ndarray):
                v = numpy.asarray(v)
            outs.append(v)
        if layout.is_tuple:
            return tuple(outs)
        return outs[0] if outs else None

    def _trace(self, args, arrays):
        graph = _core.trace_graph()
        tracers, in_nodes = [], []
        for i, (a, la) in enumerate(zip(args, arrays)):
            if la is None:
                tracers.append(a)
            else:
                t = _core.placeholder(graph, la, len(in_nodes))
                in_nodes.append(_core.tracer_node(t))
                tracers.append(t)
        result = self.func(*tracers)
        is_tuple = isinstance(result, tuple)
        results = result if is_tuple else (() if result is None else (result,))
        layout = _Layout(is_tuple)
        out_nodes = []
        for r in results:
            if isinstance(r, ndarray) and r._tracer:
                out_nodes.append(_core.tracer_node(r))
                layout.append(("node", None))
            elif isinstance(r, (ndarray, bool, int, float, numpy.generic)):
                layout.append(("const", r))
            else:
                raise TypeError(f"@loom.fuse function {self.name} returned {type(r).__name__}; "
                                "return arrays, scalars or a tuple of them")
        return graph, tuple(in_nodes), tuple(out_nodes), layout


class _Layout(list):
    def __init__(self, is_tuple):
        super().__init__()
        self.is_tuple = is_tuple


def fuse(*args, kernel_name=None):
    """@loom.fuse or @loom.fuse(kernel_name=...): trace the function once per signature into one graph
    so that its elementwise ops and reductions run as the fewest kernels."""
    if len(args) == 1 and callable(args[0]) and kernel_name is None:
        return Fusion(args[0])
    if args:
        raise TypeError("fuse() takes only the keyword argument kernel_name")
    return lambda f: Fusion(f, kernel_name)
