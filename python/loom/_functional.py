"""Functional programming routines of NumPy and CuPy: piecewise and vectorize.

Approach. Both evaluate the user's function on whole loom arrays, so its arithmetic becomes loom's lazy
elementwise operations and fuses into kernels like any other expression. piecewise selects between the
pieces with where() (a later condition wins, as NumPy's assignments in order). vectorize runs the
function once on the broadcast arguments; a function whose Python control flow needs one element at a
time (`if x > 0`, `max(x, y)`, `not x`, `range(x)`: a Python value of an array is asked for) is run as NumPy's
vectorize runs it, element by element in Python on host copies of the arguments, and the result comes
back as a loom array: the same values, at NumPy's speed, not a kernel's.
"""
import numpy as _numpy

from ._creation import asarray, zeros_like
from ._manipulation import broadcast_arrays

__all__ = ["piecewise", "vectorize"]


def _is_array(v):
    from ._ndarray import ndarray
    return isinstance(v, (ndarray, _numpy.ndarray, list))


def piecewise(x, condlist, funclist, *args, **kw):
    """NumPy's piecewise: y[cond_k] = funclist[k] (a value, or ``f(x, *args, **kw)`` for a callable, evaluated
    on all of x and selected where cond_k holds), later conditions winning; with one more function than
    conditions the last one covers where no condition holds; elsewhere 0. The result has x's dtype."""
    from ._indexing import where
    from ._reductions import any as _any
    x = asarray(x)
    if isinstance(condlist, (bool, _numpy.bool_)) or (not _is_array(condlist) and _numpy.ndim(condlist) == 0) or \
            (x.ndim != 0 and len(condlist) and not _is_array(condlist[0])):
        condlist = [condlist]
    conds = [asarray(c).astype(bool) for c in condlist]
    n, nf = len(conds), len(funclist)
    if nf == n + 1:
        others = ~_any(asarray(broadcast_arrays(*conds)), axis=0) if n else asarray(True)
        conds.append(others)
    elif nf != n:
        raise ValueError(f"piecewise: with {n} condition(s), either {n} or {n + 1} functions are expected, "
                         f"got {nf}")
    y = zeros_like(x)
    for cond, func in zip(conds, funclist):
        value = func(x, *args, **kw) if callable(func) else func
        if isinstance(value, (int, float, complex)):  # NumPy's assignment: out of range is an OverflowError
            value = _numpy.asarray(value, dtype=x.dtype)
        y = where(cond, asarray(value).astype(x.dtype), y)
    return y


def _asks_for_a_scalar(e):
    """Whether e says the function needed one element as a Python value: a truth value (if, and, not,
    max), an index (range), an int or a float."""
    m = str(e)
    return "truth value" in m or "scalar index" in m or "converted to Python scalars" in m or \
        "converted to a scalar" in m


class vectorize:
    """NumPy's vectorize (CuPy's cupy.vectorize): calling it applies pyfunc to the broadcast arguments as
    if element by element. otypes fixes the result dtypes (one per result); excluded and signature are
    not supported (NotImplementedError)."""

    def __init__(self, pyfunc, otypes=None, doc=None, excluded=None, cache=False, signature=None):
        if excluded:
            raise NotImplementedError("loom.vectorize: excluded= is not supported; pass the fixed arguments "
                                      "through a closure (functools.partial)")
        if signature is not None:
            raise NotImplementedError("loom.vectorize: signature= (generalized ufuncs) is not supported")
        self.pyfunc = pyfunc
        if isinstance(otypes, str):
            otypes = list(otypes)
        self.otypes = None if otypes is None else [_numpy.dtype(t) for t in otypes]
        self.__doc__ = pyfunc.__doc__ if doc is None else doc
        self.cache = cache

    def __call__(self, *args, **kwargs):
        arrays = broadcast_arrays(*[asarray(a) for a in args]) if args else []
        try:
            out = self.pyfunc(*arrays, **kwargs)
        except (ValueError, TypeError) as e:
            if not _asks_for_a_scalar(e):
                raise
            return self._per_element(args, kwargs)
        shape = arrays[0].shape if arrays else ()
        return self._finish(out, shape)

    def _finish(self, out, shape):
        from ._manipulation import broadcast_to
        outs = out if isinstance(out, tuple) else (out,)
        if self.otypes is not None and len(self.otypes) != len(outs):
            raise ValueError(f"loom.vectorize: {len(self.otypes)} otypes for {len(outs)} result(s)")
        done = []
        for i, o in enumerate(outs):
            o = asarray(o)
            if o.shape != shape:
                o = broadcast_to(o, shape).copy()  # a result that did not depend on every argument
            if self.otypes is not None:
                o = o.astype(self.otypes[i])
            done.append(o)
        return tuple(done) if isinstance(out, tuple) else done[0]

    def _per_element(self, args, kwargs):
        from ._ndarray import ndarray
        host = [a.get() if isinstance(a, ndarray) else a for a in args]
        f = _numpy.vectorize(self.pyfunc, otypes=self.otypes)
        out = f(*host, **kwargs)
        return tuple(asarray(o) for o in out) if isinstance(out, tuple) else asarray(out)
