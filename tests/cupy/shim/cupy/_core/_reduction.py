"""cupy._core._reduction's create_reduction_func: CuPy's internal factory of ufunc-like reductions (a
name, type signatures 'b->b' with an optional routine per signature, a routine (map, reduce, post-map,
reduce type) and an identity), built on loom's ReductionKernel. The signature is chosen as a ufunc's
loop is (the first whose input the argument's dtype casts to safely, or the one of `dtype=`); loom
compiles and computes: this module only spells CuPy's call as loom's."""
import numpy as _numpy

import loom as _loom


def _parse_op(op, routine):
    """(input char, output char, routine) of one entry of `ops`: 'b->b' or (('b',), ('b',), routine)."""
    if isinstance(op, str):
        ins, outs = op.split("->")
        return ins, outs, routine
    ins, outs, op_routine = op
    return "".join(ins), "".join(outs), op_routine or routine


class _SimpleReductionFunction:
    def __init__(self, name, ops, routine, identity, preamble):
        self.name = name
        self._ops = [_parse_op(op, routine) for op in ops]
        for ins, outs, _ in self._ops:
            if len(ins) != 1 or len(outs) != 1:
                raise ValueError(f"{name}: a reduction function has one input and one output, not {ins}->{outs}")
        self.identity = identity
        self._preamble = preamble
        self._kernels = {}

    def _select(self, dtype, cast_to):
        for ins, outs, routine in self._ops:
            t = _numpy.dtype(ins)
            if cast_to is None and _numpy.can_cast(dtype, t) or cast_to is not None and t == cast_to:
                return t, _numpy.dtype(outs), routine
        raise TypeError(f"Type is mismatched. {self.name}(...), {dtype}")

    def __call__(self, a, axis=None, dtype=None, out=None, keepdims=False):
        if not isinstance(a, _loom.ndarray):
            a = _loom.asarray(a)
        in_t, out_t, routine = self._select(a.dtype, None if dtype is None else _numpy.dtype(dtype))
        key = (in_t, out_t)
        if key not in self._kernels:
            map_expr, reduce_expr, post_map_expr, reduce_type = routine
            self._kernels[key] = _loom.ReductionKernel(
                f"{in_t.name} in0", f"{out_t.name} out0", map_expr, reduce_expr, post_map_expr,
                self.identity, name=self.name, reduce_type=reduce_type or out_t.name, preamble=self._preamble)
        return self._kernels[key](a.astype(in_t, copy=False), out=out, axis=axis, keepdims=keepdims)


def create_reduction_func(name, ops, routine=None, identity=None, preamble="", sort_reduce_axis=True):
    """CuPy's cupy._core.create_reduction_func (sort_reduce_axis, a launch-order hint, has no effect here)."""
    return _SimpleReductionFunction(name, ops, routine, identity, preamble)
