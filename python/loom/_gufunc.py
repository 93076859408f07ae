"""_gufunc.py: generalized ufuncs over a Python function of loom arrays, in NumPy's gufunc model.

A signature such as '(m,n),(n)->(m)' names each operand's *core* dimensions (the trailing ones the function
works on); the dimensions in front of them are *loop* dimensions, broadcast across the inputs. A name used
twice must have one length; 'n?' marks a core dimension an operand may lack (matmul's '(n?,k),(k,m?)'),
'n|1' one an input may give as length 1 (broadcast). The keywords are NumPy's: axes= / axis= choose which
dimensions are the core ones, keepdims= keeps a reduced core as length 1, out=, dtype=, casting=, order=,
and signature= picks a registered typed loop. CuPy's internal cupy._core._gufuncs._GUFunc (its matmul and
its tests) has this interface; the CuPy-suite shim maps it here.

The function runs once per loop index on the core sub-arrays (views), or once on the whole batch when
it handles loop dimensions itself (supports_batched=True); its results are copied into the output arrays,
or it writes them itself when it takes out= (supports_out=True). Each call builds loom graph nodes, so
a batch of small calls still fuses where the function's body does.
"""
import re

import numpy

from ._common import _np_dtype_of, AxisError, _norm_axis

_DIM = r"\w+(?:\?|\|1)?"
_OPERAND = rf"\((?:{_DIM}(?:,{_DIM})*,?)?\)"
_SIGNATURE = re.compile(rf"^(?:{_OPERAND}(?:,{_OPERAND})*,?)?->{_OPERAND}(?:,{_OPERAND})*$")


def parse_signature(signature):
    """(inputs, outputs, number of distinct core-dimension names) of a gufunc signature; each operand is a
    tuple of (name, optional, broadcastable) per core dimension. ValueError for a malformed signature."""
    if not isinstance(signature, str):
        raise TypeError(f"gufunc signature must be a str, got {type(signature).__name__}")
    text = signature.replace(" ", "")
    if not _SIGNATURE.match(text):
        raise ValueError(f"not a valid gufunc signature: {signature!r} (expected e.g. '(m,n),(n)->(m)')")
    lhs, rhs = text.split("->")
    ins, outs = _operands(lhs, False), _operands(rhs, True)
    return ins, outs, len({d[0] for op in ins + outs for d in op})


def _operands(text, outputs):
    if text == "":
        return [()]  # '->(i)': one input without core dimensions
    ops = []
    for body in re.findall(r"\(([^)]*)\)", text):
        dims = []
        for tok in filter(None, body.split(",")):
            optional, broadcastable = tok.endswith("?"), tok.endswith("|1")
            if broadcastable and outputs:
                raise ValueError(f"gufunc signature: an output dimension cannot be marked |1 ({tok!r})")
            dims.append((tok[:-2] if broadcastable else tok.rstrip("?"), optional, broadcastable))
        ops.append(tuple(dims))
    return ops


class _Loop:
    """One typed loop: input and output dtypes and the function that computes them."""

    def __init__(self, types, func, nin, nout):
        if not isinstance(types, str) or types.replace(" ", "").count("->") != 1:
            raise ValueError(f"gufunc loop types {types!r}: expected a string such as 'ff->f'")
        ins, outs = types.replace(" ", "").split("->")
        if len(ins) != nin or len(outs) != nout:
            raise ValueError(f"gufunc loop types {types!r}: the signature has {nin} inputs and {nout} outputs")
        self.ins = tuple(numpy.dtype(c) for c in ins)
        self.outs = tuple(numpy.dtype(c) for c in outs)
        self.func = func
        self.chars = "".join(t.char for t in self.ins) + "->" + "".join(t.char for t in self.outs)


class GeneralizedUfunc:
    """A generalized ufunc: func(*core_inputs) -> core output(s), applied over broadcast loop dimensions
    (module docstring). signatures: typed loops, each 'ii->i' or ('ii->i', other_func), chosen by the
    inputs' dtypes (the first every input casts to under casting=), by dtype= (its outputs' dtype) or by
    signature=; without a match func runs on the inputs as they are."""

    def __init__(self, func, signature, *, name=None, doc=None, supports_batched=False, supports_out=False,
                 signatures=None):
        self._func = func
        self._signature = signature
        self.__name__ = name if name is not None else getattr(func, "__name__", "gufunc")
        self.__doc__ = doc if doc is not None else func.__doc__
        self._batched, self._takes_out = supports_batched, supports_out
        self._in_core, self._out_core, self._n_names = parse_signature(signature)
        self.nin, self.nout = len(self._in_core), len(self._out_core)
        self._loops = [_Loop(*(s if isinstance(s, tuple) else (s, func)), self.nin, self.nout)
                       for s in (signatures or ())]

    def __repr__(self):
        return f"<loom gufunc {self.__name__} {self._signature}>"

    # ---- loop selection ------------------------------------------------------------------------------
    def _select(self, args, dtype, casting, signature):
        """(inputs cast to the loop's types, output dtypes, function)."""
        loop = None
        if signature is not None:
            loop = self._by_signature(signature)
        elif dtype is not None:
            want = _np_dtype_of(dtype)
            loop = next((lp for lp in self._loops if all(t == want for t in lp.outs)), None)
        else:
            loop = next((lp for lp in self._loops
                         if all(numpy.can_cast(a.dtype, t, casting) for a, t in zip(args, lp.ins))), None)
        if loop is None:
            common = numpy.result_type(*[a.dtype for a in args]) if args else numpy.dtype(float)
            return args, [_np_dtype_of(dtype) if dtype is not None else common] * self.nout, self._func
        cast = []
        for i, (a, t) in enumerate(zip(args, loop.ins)):
            if not numpy.can_cast(a.dtype, t, casting):
                raise TypeError(f"Cannot cast ufunc '{self.__name__}' input {i} from {a.dtype!r} to {t!r} with "
                                f"casting rule {casting!r}")
            cast.append(a.astype(t, copy=False))
        return cast, list(loop.outs), loop.func

    def _by_signature(self, signature):
        if isinstance(signature, tuple):
            if len(signature) != self.nin + self.nout:
                raise TypeError(f"signature= for gufunc '{self.__name__}' must have {self.nin + self.nout} dtypes "
                                f"(inputs then outputs), got {len(signature)}")
            chars = [numpy.dtype(t).char for t in signature]
            signature = "".join(chars[:self.nin]) + "->" + "".join(chars[self.nin:])
        if isinstance(signature, str):
            for lp in self._loops:
                if (len(signature) == 1 and all(t.char == signature for t in lp.outs)) or lp.chars == signature:
                    return lp
        raise TypeError(f"No loop matching the specified signature and casting was found for ufunc "
                        f"{self.__name__} (signature={signature!r}; loops: {[lp.chars for lp in self._loops]})")

    # ---- axes --------------------------------------------------------------------------------------------
    def _axes(self, axes, axis, keepdims):
        """(per input, per output: the axes tuple or None), and keepdims as the number of kept dims (0)."""
        if axes is not None and axis is not None:
            raise ValueError("only one of axis= and axes= may be given")
        if axes is not None and not isinstance(axes, list):
            raise ValueError(f"axes= must be a list of tuples, got {type(axes).__name__}")
        kept = 0
        if keepdims:
            sizes = {len(c) for c in self._in_core}
            if len(sizes) != 1:
                raise ValueError("keepdims=True needs every input to have the same number of core dimensions")
            if any(self._out_core):
                raise ValueError("keepdims=True can only be used when every output is a scalar (no core dims)")
            kept = sizes.pop()
        if axis is not None:
            if not isinstance(axis, (int, numpy.integer)) or isinstance(axis, bool):
                raise ValueError(f"axis= must be an int, got {axis!r}")
            if self._n_names != 1:
                raise ValueError(f"axis= needs a signature with one shared core dimension, {self._signature!r} "
                                 f"has {self._n_names}")
            axes = [(axis,) if c else () for c in self._in_core]
            axes += [(axis,)] * self.nout if kept else [(axis,) if c else () for c in self._out_core]
        elif axes is not None:
            axes = [(a,) if isinstance(a, (int, numpy.integer)) else a for a in axes]
        else:
            axes = [None] * (self.nin + self.nout)
        if len(axes) == self.nin and self.nout:
            if any(self._out_core):
                raise ValueError("axes= may leave out the outputs only when none of them has core dimensions")
            axes = axes + [None] * self.nout
        elif len(axes) != self.nin + self.nout:
            raise ValueError(f"axes= has {len(axes)} entries; gufunc '{self.__name__}' has {self.nin} inputs and "
                             f"{self.nout} outputs")
        return axes[:self.nin], axes[self.nin:], kept

    @staticmethod
    def _core_last(k, axs, ndim, ncore):
        """The permutation that moves operand k's core axes axs to the end (None: already there)."""
        if axs is None:
            if ndim < ncore:
                raise ValueError(f"gufunc operand {k} has {ndim} dimensions, its core needs {ncore}")
            return None
        axs = tuple(axs)
        if len(axs) != ncore:
            raise AxisError(f"axes= gives {len(axs)} axes for operand {k}, which has {ncore} core dimensions")
        axs = tuple(_norm_axis(a, ndim) for a in axs)
        if len(set(axs)) != len(axs):
            raise ValueError(f"axes= repeats an axis for operand {k}: {axs}")
        if axs == tuple(range(ndim - ncore, ndim)):
            return None
        return tuple(i for i in range(ndim) if i not in axs) + axs

    # ---- operands ----------------------------------------------------------------------------------------
    def _inputs(self, args, in_axes):
        """The inputs with their core axes last, skipped optional dims inserted as length 1 and loop dims
        broadcast; and {name: length} (-1: an optional dimension the inputs skip), the loop shape."""
        from . import _manipulation
        lengths, loops, placed = {}, [], []
        for k, (a, axs, core) in enumerate(zip(args, in_axes, self._in_core)):
            required = sum(1 for d in core if not d[1])
            ncore = max(required, min(a.ndim, len(core)))
            perm = self._core_last(k, axs, a.ndim, ncore)
            if perm is not None:
                a = a.transpose(perm)
            loop_nd = a.ndim - ncore
            skip, given, missing, j = len(core) - ncore, list(a.shape[loop_nd:]), [], 0
            for pos, d in enumerate(core):
                if j < len(given) and not (d[1] and skip > 0):  # optional dims are skipped from the front
                    self._meet(k, lengths, d, given[j])
                    j += 1
                else:
                    if not d[1]:
                        raise ValueError(f"gufunc operand {k} lacks core dimension {d[0]!r} of {self._signature!r}")
                    self._meet(k, lengths, d, -1)
                    missing.append(loop_nd + pos)
                    skip -= 1
            if missing:
                a = _manipulation.expand_dims(a, tuple(missing))
            loops.append(a.shape[:loop_nd])
            placed.append((a, loop_nd))
        loop_shape = numpy.broadcast_shapes(*loops) if loops else ()
        out = [a if a.shape[:nd] == loop_shape else _manipulation.broadcast_to(a, loop_shape + a.shape[nd:])
               for a, nd in placed]
        return out, lengths, tuple(loop_shape)

    def _meet(self, k, lengths, dim, n):
        name, _, broadcastable = dim
        seen = lengths.get(name)
        if broadcastable and n == 1:
            return
        if seen is None:
            lengths[name] = n
        elif seen != n:
            if -1 in (seen, n):
                raise ValueError(f"gufunc {self.__name__}: optional core dimension {name!r} must be skipped by "
                                 "all inputs or by none")
            raise ValueError(f"gufunc {self.__name__}: input operand {k} has a mismatch in its core dimension "
                             f"{name!r} of signature {self._signature!r} ({seen} != {n})")

    def _outputs(self, outs, out_axes, lengths, loop_shape, kept, dtypes, order, casting):
        """(the arrays returned to the caller, the views the function fills: core axes last, skipped
        optional dims as length 1, kept dims removed)."""
        from . import _creation, _manipulation
        returned, views = [], []
        for k, (o, axs, core) in enumerate(zip(outs, out_axes, self._out_core)):
            if kept:
                core_shape, missing = [1] * kept, []
            else:
                core_shape, missing = [], []
                for pos, d in enumerate(core):
                    n = lengths.get(d[0])
                    if n == -1:
                        missing.append(len(loop_shape) + pos)
                    else:
                        core_shape.append(1 if n is None else n)
            shape = loop_shape + tuple(core_shape)
            perm = self._core_last(self.nin + k, axs, len(shape), len(core_shape))
            inverse = None if perm is None else tuple(sorted(range(len(perm)), key=perm.__getitem__))
            if o is not None:
                view = o if perm is None else o.transpose(perm)
                if view.shape != shape:
                    want = shape if inverse is None else tuple(shape[i] for i in inverse)
                    raise ValueError(f"gufunc {self.__name__}: output operand {k} has shape {o.shape}, expected {want}")
                if not numpy.can_cast(dtypes[k], o.dtype, casting):
                    raise TypeError(f"Cannot cast ufunc '{self.__name__}' output from {dtypes[k]!r} to {o.dtype!r} "
                                    f"with casting rule {casting!r}")
            else:
                o = _creation.empty(shape if inverse is None else tuple(shape[i] for i in inverse), dtypes[k],
                                    order=order)
                view = o if perm is None else o.transpose(perm)
            if missing:
                view = _manipulation.expand_dims(view, tuple(missing))
            if kept:
                view = view[(Ellipsis,) + (0,) * kept]
            returned.append(o)
            views.append(view)
        return returned, views

    # ---- calling -----------------------------------------------------------------------------------------
    def _run(self, func, loop_shape, args, outs):
        if self._batched or not loop_shape:
            if self._takes_out:
                func(*args, out=outs[0] if len(outs) == 1 else tuple(outs))
                return
            got = func(*args)
            from . import _manipulation
            for o, r in zip(outs, (got,) if self.nout == 1 else got):
                _manipulation.copyto(o, r, casting="unsafe")
            return
        for i in range(loop_shape[0]):
            self._run(func, loop_shape[1:], [a[i] for a in args], [o[i] for o in outs])

    def __call__(self, *args, axes=None, axis=None, keepdims=False, casting="same_kind", dtype=None,
                 signature=None, order="K", out=None):
        from ._creation import asarray
        from ._ndarray import ndarray
        if len(args) != self.nin:
            raise ValueError(f"gufunc {self.__name__} ({self._signature}) takes {self.nin} inputs, got {len(args)}")
        args = [asarray(a) for a in args]
        args, dtypes, func = self._select(args, dtype, casting, signature)
        if out is None:
            outs = [None] * self.nout
        else:
            outs = list(out) if isinstance(out, tuple) else [out]
            if len(outs) != self.nout or any(o is not None and not isinstance(o, ndarray) for o in outs):
                raise TypeError(f"out= must be a loom.ndarray or a tuple of {self.nout} of them (or None)")
        mode = str(order).upper()
        if mode not in ("C", "F", "A", "K"):
            raise ValueError(f"order must be one of 'C', 'F', 'A', 'K', got {order!r}")
        if mode == "A":
            mode = "F" if args and all(a.flags.f_contiguous and not a.flags.c_contiguous for a in args) else "C"
        mode = "F" if mode == "F" else "C"
        in_axes, out_axes, kept = self._axes(axes, axis, keepdims)
        args, lengths, loop_shape = self._inputs(args, in_axes)
        returned, views = self._outputs(outs, out_axes, lengths, loop_shape, kept, dtypes, mode, casting)
        self._run(func, loop_shape, args, views)
        return returned[0] if self.nout == 1 else tuple(returned)
