"""_fuse.py: @loom.fuse, which traces a function into one graph and evaluates all its outputs at once.

Approach: a call's signature is, per argument, (dtype, rank, shape, device) for arrays, or the type
and value for Python and NumPy scalars (a scalar's value is folded into the graph as a NEP 50 weak
constant, so a new value means a new trace; the compiled kernels are still shared when the structure
repeats). The per-call work lives in C (_core.Fused, the base of Fusion): it keys the argument tuple,
finds the traced entry, rebinds the placeholders to the new arguments (any strides) and runs ONE
loom_eval for every output. NumPy arguments are read in place (zero-copy) and NumPy arrays are
returned. What C does not key (NumPy scalars, keyword arguments, calls from inside another trace,
unusual dtypes) and the first call of each signature come to Fusion._miss below, which traces the
function on placeholders (tracers) in a fresh trace graph. Branching on a traced value (if, bool(),
float(), printing) raises TypeError. As in CuPy, in-place updates of an argument inside the function
(x += y, loom.add(x, y, out=x), x[...] = y) write the caller's array: the trace records each argument
whose tracer changed, and every run writes its new value into that argument's memory in the same
evaluation as the results.
"""
import functools

import numpy

from . import _core
from ._common import _from_numpy, _code
from ._ndarray import ndarray

_MAX_SIGNATURES = 64
_core.fuse_configure(numpy.ndarray, numpy.asarray)


class Fusion(_core.Fused):
    """A fused function (what @loom.fuse returns). Calling it runs _core.Fused's fast path;
    clear_cache() forgets every traced signature."""

    def __init__(self, func, kernel_name=None):
        super().__init__(func)
        self.name = kernel_name or getattr(func, "__name__", "fused")
        functools.update_wrapper(self, func)

    def __repr__(self):
        return f"<loom.fuse {self.name}>"

    def _miss(self, args, key, kwargs):
        """The slow path: `key` is the C signature key (bytes) of args, or None when C could not
        key them; traces on a new signature, then runs the entry."""
        if kwargs:
            raise TypeError(f"@loom.fuse function {self.name}: keyword arguments are not supported")
        pykey = []
        arrays = []
        readonly = []
        numpy_in = False
        any_array = False
        for a in args:
            if isinstance(a, ndarray):
                if a._tracer:  # called inside another fused function: inline it
                    return self.func(*args)
                pykey.append((a._dtype_code, a.shape, a._device))
                arrays.append(a)
                any_array = True
            elif isinstance(a, numpy.ndarray):
                _code(a.dtype)
                la = _from_numpy(a, copy=False)
                if not a.flags.writeable:
                    readonly.append(len(arrays))
                pykey.append((la._dtype_code, la.shape, la._device))
                arrays.append(la)
                numpy_in = any_array = True
            elif isinstance(a, (bool, int, float, complex)):
                pykey.append((type(a), a))
                arrays.append(None)
            elif isinstance(a, numpy.generic):
                pykey.append((a.dtype, a.item()))
                arrays.append(None)
            else:
                raise TypeError(f"@loom.fuse function {self.name}: unsupported argument type "
                                f"{type(a).__name__} (arrays and scalars only)")
        if not any_array:
            return self.func(*args)
        if key is None:
            key = tuple(pykey)
        cache = self._cache
        entry = cache.get(key)
        if entry is None:
            entry = self._trace(args, arrays)
            if len(cache) >= _MAX_SIGNATURES:
                cache.pop(next(iter(cache)))
            cache[key] = entry
        return _core.fuse_exec(entry, tuple(arrays), numpy_in, tuple(readonly))

    def _trace(self, args, arrays):
        graph = _core.trace_graph()
        tracers, in_args, in_nodes = [], [], []
        for i, (a, la) in enumerate(zip(args, arrays)):
            if la is None:
                tracers.append(a)
            else:
                t = _core.placeholder(graph, la, len(in_nodes))
                in_args.append(i)
                in_nodes.append(_core.tracer_node(t))
                tracers.append(t)
        result = self.func(*tracers)
        # arguments updated in place: their tracer no longer stands for the placeholder node
        writes = [(i, _core.tracer_node(tracers[i])) for i, node in zip(in_args, in_nodes)
                  if _core.tracer_node(tracers[i]) != node]
        is_tuple = isinstance(result, tuple)
        results = result if is_tuple else (() if result is None else (result,))
        slots, out_nodes = [], []
        for r in results:
            if isinstance(r, ndarray) and r._tracer:
                out_nodes.append(_core.tracer_node(r))
                slots.append(None)
            elif isinstance(r, (ndarray, bool, int, float, complex, numpy.generic)):
                slots.append((r,))
            else:
                raise TypeError(f"@loom.fuse function {self.name} returned {type(r).__name__}; "
                                "return arrays, scalars or a tuple of them")
        out_nodes += [node for _, node in writes]
        return _core.fuse_entry(graph, tuple(in_args), tuple(in_nodes), tuple(out_nodes), tuple(slots),
                                is_tuple, len(args), tuple(i for i, _ in writes))


def fuse(*args, kernel_name=None):
    """@loom.fuse or @loom.fuse(kernel_name=...): trace the function once per signature into one graph
    so that its elementwise ops and reductions run as the fewest kernels."""
    if len(args) == 1 and callable(args[0]) and kernel_name is None:
        return Fusion(args[0])
    if args:
        raise TypeError("fuse() takes only the keyword argument kernel_name")
    return lambda f: Fusion(f, kernel_name)
