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

Bundled signatures (loom.aot, bundle format 1.2): when a loaded bundle holds this function's graph for
the call's argument kinds, dtypes and ranks, _miss asks C to rebuild it for the call's sizes
(_core.fuse_bundle_graph) instead of tracing: the Python function does not run. A function is matched by
its identity (aot_identity: module, qualified name, and a digest of its code, defaults, closure and the
globals it reads, computed on the first such call; like the traced signatures kept per shape, later
rebinding of those globals is not seen). A function that reads a list, a dict or an instance (values that
may change) has no identity and always traces. When the rebuild does not fit the call, the function is traced.
"""
import functools
import hashlib
import sys
import types

import numpy

from . import _core
from ._common import _from_numpy, _code, _trace
from ._ndarray import ndarray

_MAX_SIGNATURES = 64
_core.fuse_configure(numpy.ndarray, numpy.asarray)
_bundle_records = [False]  # set by loom.aot.load_bundle when a loaded bundle holds @loom.fuse records


class _Mutable(Exception):
    """A function reads a value that may change after it is bundled (a list, a dict, an instance)."""


_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_LIBRARIES = ("loom", "numpy", "math", "cmath")  # their functions are named, not digested (versions are)


def _library(f):
    return (getattr(f, "__module__", None) or "").split(".")[0] in _LIBRARIES


def _digest_value(h, v, depth, seen, names, what):
    """Feeds what a traced function's graph may depend on in a global, closure cell or default (what:
    its name, for messages); a value that may change later (a list, a dict, an instance) raises _Mutable.
    Of a module or a class, the attributes the function's code names (names) are fed too."""
    if isinstance(v, _SCALARS):
        h.update(f"{type(v).__name__}:{v!r};".encode())
    elif isinstance(v, (tuple, frozenset)) and len(v) < 64:
        h.update(b"(")
        for x in v:
            _digest_value(h, x, depth, seen, names, what)
        h.update(b")")
    elif isinstance(v, numpy.generic):
        h.update(f"np:{v.dtype.str}:{v.item()!r};".encode())
    elif isinstance(v, (Fusion, types.FunctionType)) and _library(v):  # loom.sum: named (the version is hashed)
        h.update(f"lib:{getattr(v, '__module__', '?')}.{getattr(v, '__qualname__', '?')};".encode())
    elif isinstance(v, Fusion):
        _digest_function(h, v.func, depth + 1, seen)
    elif isinstance(v, types.FunctionType):
        _digest_function(h, v, depth + 1, seen)
    elif isinstance(v, (types.ModuleType, type)):
        h.update(f"{type(v).__name__}:{getattr(v, '__name__', '?')};".encode())
        if id(v) in seen or depth > 4:
            return
        seen.add(id(v))
        for name in sorted(names):  # config.SCALE, Config.scale: the attributes the code may read
            a = getattr(v, name, _Mutable)
            if a is not _Mutable and not isinstance(a, (types.ModuleType, type)):
                h.update(f".{name}=".encode())
                _digest_value(h, a, depth + 1, seen, names, f"{what}.{name}")
    elif callable(v) and type(v).__module__.split(".")[0] in _LIBRARIES + ("builtins",):
        h.update(f"{type(v).__qualname__}:{getattr(v, '__name__', '')};".encode())  # ufuncs, builtins
    else:
        raise _Mutable(f"it reads {what} (a {type(v).__name__}), which may change after the bundle is made")


def _code_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _digest_code(h, code):
    h.update(code.co_code)
    h.update(repr((code.co_names, code.co_varnames, code.co_freevars, code.co_argcount)).encode())
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _digest_code(h, c)
        else:
            h.update(f"{type(c).__name__}:{c!r};".encode())


def _digest_function(h, f, depth, seen):
    if depth > 4 or id(f) in seen:
        h.update(f"ref:{getattr(f, '__qualname__', '?')};".encode())
        return
    seen.add(id(f))
    code = getattr(f, "__code__", None)
    if code is None:
        h.update(f"callable:{type(f).__qualname__}:{getattr(f, '__qualname__', '')};".encode())
        return
    _digest_code(h, code)
    names = _code_names(code)
    _digest_value(h, f.__defaults__, depth, seen, names, "its defaults")
    for var, cell in zip(code.co_freevars, f.__closure__ or ()):
        try:
            _digest_value(h, cell.cell_contents, depth, seen, names, f"the closure's {var!r}")
        except ValueError:  # an empty cell
            h.update(b"empty;")
    g = getattr(f, "__globals__", {})
    for name in sorted(names):
        if name in g:
            h.update(f"{name}=".encode())
            _digest_value(h, g[name], depth, seen, names, f"the global {name!r}")


def aot_identity(fn, why=None):
    """The text a bundled @loom.fuse signature is matched by: module, qualified name, and a digest of
    the function's code (bytecode of this Python), defaults, closure and the globals it reads (scalars,
    tuples, user functions, the attributes it names of modules and classes; loom's and NumPy's functions
    by name, with both versions). None when it reads a value that
    may change after the bundle is made (a list, a dict, an instance): such a function is not bundled
    without its trace (why, a list, gets the reason)."""
    f = fn.func if isinstance(fn, Fusion) else fn
    h = hashlib.sha256(f"{sys.implementation.cache_tag} loom {_core.version} numpy {numpy.__version__}".encode())
    try:
        _digest_function(h, f, 0, set())
    except _Mutable as e:
        if why is not None:
            why.append(str(e))
        return None
    return f"{getattr(f, '__module__', '?')}:{getattr(f, '__qualname__', '?')}:{h.hexdigest()[:32]}"


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
            if _bundle_records[0]:
                entry = self._from_bundle(args, arrays)
            if entry is None:
                entry = self._trace(args, arrays)
            if len(cache) >= _MAX_SIGNATURES:
                cache.pop(next(iter(cache)))
            cache[key] = entry
        return _core.fuse_exec(entry, tuple(arrays), numpy_in, tuple(readonly))

    def _from_bundle(self, args, arrays):
        """The entry of a bundled signature rebuilt for these arguments without tracing, or None."""
        ident = self.__dict__.get("_aot_id")
        if ident is None:
            ident = self._aot_id = aot_identity(self) or False
        if not ident:  # it reads values that may change: always traced
            return None
        parts = _core.fuse_bundle_graph(ident, args, tuple(arrays))
        if parts is None:
            return None
        graph, in_args, in_nodes, out_nodes, is_tuple, writes = parts
        slots = (None,) * (len(out_nodes) - len(writes))
        return _core.fuse_entry(graph, in_args, in_nodes, out_nodes, slots, is_tuple, len(args), writes)

    def _trace(self, args, arrays):
        return _core.fuse_entry(*self._trace_parts(args, arrays))

    def _trace_parts(self, args, arrays):
        """Traces the function on placeholders: fuse_entry's arguments (graph, in_args, in_nodes,
        out_nodes, slots, is_tuple, nargs, write_args)."""
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
        like = getattr(_trace, "like", None)
        _trace.like = next((t for t, la in zip(tracers, arrays) if la is not None), like)
        try:
            result = self.func(*tracers)
        finally:
            _trace.like = like
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
        return (graph, tuple(in_args), tuple(in_nodes), tuple(out_nodes), tuple(slots), is_tuple, len(args),
                tuple(i for i, _ in writes))


def fuse(*args, kernel_name=None):
    """@loom.fuse or @loom.fuse(kernel_name=...): trace the function once per signature into one graph
    so that its elementwise ops and reductions run as the fewest kernels."""
    if len(args) == 1 and callable(args[0]) and kernel_name is None:
        return Fusion(args[0])
    if args:
        raise TypeError("fuse() takes only the keyword argument kernel_name")
    return lambda f: Fusion(f, kernel_name)
