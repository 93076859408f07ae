"""_products.py: matrix and tensor products (matmul, dot, vdot, inner, tensordot, einsum, vecdot, matrix_transpose;
outer and kron are _numeric.py's), lazily on the arrays' device.

Approach: every contraction is brought to one form, a batched matrix product, which _core.matmul makes a
graph node (IR_MATMUL: one BLAS / cuBLASLt call, with the elementwise epilogue that follows it fused into
the call; integer and bool products become multiply + sum kernels). tensordot and einsum move the
contracted dims of each operand next to each other (transpose + reshape, lazy nodes: a copy only where the
layout needs one) and multiply; a contraction over no dim is a broadcast multiply, which fuses with its
neighbours. einsum contracts its operands pairwise, cheapest intermediate first, after summing each
operand's private labels and taking the diagonal of a repeated label.
"""
import builtins
import glob
import importlib.util
import math
import operator
import os

import numpy

from . import _core
from ._ndarray import ndarray, _operand, _finish
from ._common import _np_dtype_of, _code, _BF16_CODE


def _arr(x):
    if isinstance(x, ndarray):
        return x
    from ._creation import asarray
    return asarray(_operand(x) if isinstance(x, numpy.generic) else x)


def _permute(x, perm):
    """x with its dims in order perm: a free view of a materialized array, else a lazy node."""
    perm = tuple(perm)
    if perm == tuple(range(x.ndim)):
        return x
    if x._lazy or x._tracer:
        return _core.movement(1, x, perm, None, None)
    return x.transpose(perm)


def _reshape(x, shape):
    shape = tuple(int(s) for s in shape)
    if shape == x.shape:
        return x
    if x._lazy or x._tracer:
        return _core.movement(0, x, shape, None, None)
    return x.reshape(shape)


def _cast(x, dtype):
    code = _code(dtype)
    return x if x._dtype_code == code else _core.cast(x, code)


def _result_dtype(*arrays):
    return numpy.result_type(*[a.dtype for a in arrays])


# ---- matmul and its relatives ---------------------------------------------------------------------------
def matmul(x1, x2, /, out=None, *, dtype=None, casting="same_kind", order="K", subok=True, axes=None, axis=None):
    """numpy.matmul (a @ b): a graph node run as one library call on the arrays' device (the host's BLAS,
    cuBLASLt on NVIDIA), with the elementwise epilogue that follows folded into the call where it can.
    axes= / axis= (NumPy's gufunc keywords: which axes hold the matrices) go through loom's generalized
    ufunc with matmul's signature '(n?,k),(k,m?)->(n?,m?)'."""
    if axes is not None or axis is not None:
        return _matmul_gufunc()(x1, x2, axes=axes, axis=axis, out=out, dtype=dtype, casting=casting, order=order)
    a, b = _arr(x1), _arr(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand %d does not have enough dimensions (has 0, gufunc core with "
                         "signature (n?,k),(k,m?)->(n?,m?) requires 1)" % (0 if a.ndim == 0 else 1))
    if dtype is not None:
        if not numpy.can_cast(_result_dtype(a, b), dtype, casting):
            raise TypeError(f"Cannot cast ufunc 'matmul' input from {_result_dtype(a, b)!r} to "
                            f"{_np_dtype_of(dtype)!r} with casting rule {casting!r}")
        a, b = _cast(a, dtype), _cast(b, dtype)
    return _finish(_core.matmul(a, b), out)


_MATMUL: list = []


def _matmul_gufunc():
    """matmul as a generalized ufunc whose function takes whole batches (the matmul node batches)."""
    if not _MATMUL:
        from ._gufunc import GeneralizedUfunc
        _MATMUL.append(GeneralizedUfunc(lambda x, y: _core.matmul(x, y), "(n?,k),(k,m?)->(n?,m?)", name="matmul",
                                        doc=matmul.__doc__, supports_batched=True))
    return _MATMUL[0]


def dot(a, b, out=None):
    """NumPy's dot: a product over the last dim of a and the second-to-last of b (the last when 1-d).
    out must be what dot returns: its dtype and shape, C-contiguous (NumPy's rule), else ValueError."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        r = _core.binary(_ops()["mul"], a, b)
    elif b.ndim <= 2:
        if a.shape[-1] != b.shape[0]:
            raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                             f"{b.shape[0]} (dim 0)")
        r = _core.matmul(a, b)
    else:
        if a.shape[-1] != b.shape[-2]:
            raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                             f"{b.shape[-2]} (dim {b.ndim - 2})")
        r = tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))
    if out is not None and isinstance(out, ndarray) and (
            out.dtype != r.dtype or out.shape != r.shape or not out.flags.c_contiguous):
        raise ValueError("output array is not acceptable (must have the right datatype, number of dimensions, "
                         "and be a C-Array)")
    return _finish(r, out)


def vdot(a, b):
    """NumPy's vdot: both flattened, the first conjugated; a 0-d result."""
    a, b = _arr(a), _arr(b)
    if a.size != b.size:
        raise ValueError("cannot reshape array: vdot needs arrays of the same size "
                         f"({a.size} and {b.size} elements)")
    if a.dtype.kind == "c":
        a = _conj(a)
    return _core.matmul(_reshape(a, (a.size,)), _reshape(b, (b.size,)))


def inner(a, b):
    """NumPy's inner: a product over the last dims of a and b."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return _core.binary(_ops()["mul"], a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                         f"{b.shape[-1]} (dim {b.ndim - 1})")
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def vecdot(x1, x2, /, *, axis=-1):
    """The array API's vecdot: sum(conj(x1) * x2, axis) with broadcasting (one fused reduction)."""
    a, b = _arr(x1), _arr(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("vecdot: the arguments must be at least 1-dimensional")
    nd = builtins.max(a.ndim, b.ndim)
    ax = operator.index(axis)
    if not -nd <= ax < nd or ax >= builtins.min(a.ndim, b.ndim) or ax < -builtins.min(a.ndim, b.ndim):
        raise ValueError(f"vecdot: axis {axis} is out of bounds for arrays of {a.ndim} and {b.ndim} dimensions")
    if a.shape[ax] != b.shape[ax]:
        raise ValueError(f"vecdot: the arrays have {a.shape[ax]} and {b.shape[ax]} elements along axis {axis}")
    if a.dtype.kind == "c":
        a = _conj(a)
    from ._reductions import sum as _sum
    rt = _result_dtype(a, b)  # the operands' type, as the array API asks (sum alone widens small ints)
    return _sum(_core.binary(_ops()["mul"], a, b), axis=ax if ax < 0 else ax - nd, dtype=rt)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """NumPy's trace: the sums along the offset diagonals of axis1 and axis2 (sum's dtype rules)."""
    a = _arr(a)
    if out is None and dtype is None and not a._lazy and a._device[0] == 0 and type(a) is ndarray and \
            a._dtype_code != _BF16_CODE:  # evaluated, in host memory: NumPy's trace (~3 us; the graph's ~4.5)
        return _adopt(numpy.asarray(_host_np(a).trace(offset, axis1, axis2)), a._device)  # numpy.trace's own call
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    d = _diagonal_last(a, _axis(axis1, a.ndim), _axis(axis2, a.ndim), operator.index(offset))
    return _reductions.sum(d, axis=-1, dtype=dtype, out=out)


def matrix_transpose(x, /):
    """The array API's matrix_transpose: the last two dims swapped."""
    x = _arr(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must be at least 2-dimensional, not {x.ndim}-dimensional")
    return x.swapaxes(-1, -2)


def tensordot(a, b, axes=2):
    """NumPy's tensordot: a's axes[0] contracted with b's axes[1], as one matrix product."""
    a, b = _arr(a), _arr(b)
    try:
        n = operator.index(axes)
        if n < 0:
            raise ValueError("tensordot: axes must be a non-negative integer")
        if n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: cannot contract {n} axes of arrays with {a.ndim} and {b.ndim} dims")
        ax_a, ax_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    except TypeError:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, numpy.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, numpy.integer)) else list(ax_b)
    if len(ax_a) != len(ax_b):
        raise ValueError("shape-mismatch for sum")
    ax_a = [_axis(i, a.ndim) for i in ax_a]
    ax_b = [_axis(i, b.ndim) for i in ax_b]
    if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b):
        raise ValueError("tensordot: repeated axis")
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError("shape-mismatch for sum")
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    return _contract(a, free_a, ax_a, b, ax_b, free_b, [], [])


def _axis(i, nd):
    i = operator.index(i)
    if not -nd <= i < nd:
        from ._common import AxisError
        raise AxisError(f"axis {i} is out of bounds for array of dimension {nd}")
    return i % nd


def _contract(a, free_a, con_a, b, con_b, free_b, bat_a, bat_b):
    """The product over a's con_a and b's con_b (paired), batched over bat_a / bat_b (paired, broadcast);
    result dims: batch, a's free dims, b's free dims."""
    sh = lambda x, ax: [x.shape[i] for i in ax]  # noqa: E731
    bshape = [p if q == 1 else q for p, q in zip(sh(a, bat_a), sh(b, bat_b))]  # 1 broadcasts (also against 0)
    fa, fb = sh(a, free_a), sh(b, free_b)
    m, n, k = math.prod(fa), math.prod(fb), math.prod(sh(a, con_a))
    if any(p != q for p, q in zip(sh(a, con_a), sh(b, con_b))):  # a dim of 1 against n: broadcast it
        from ._manipulation import broadcast_to
        ca = [p if q == 1 else q for p, q in zip(sh(a, con_a), sh(b, con_b))]
        tgt_a, tgt_b = list(a.shape), list(b.shape)
        for i, j, s in zip(con_a, con_b, ca):
            tgt_a[i] = tgt_b[j] = s
        a, b = broadcast_to(a, tuple(tgt_a)), broadcast_to(b, tuple(tgt_b))
        k = math.prod(ca)
    if not con_a:  # nothing to sum: a broadcast multiply, which fuses with its neighbours
        x = _reshape(_permute(a, bat_a + free_a), sh(a, bat_a) + fa + [1] * len(fb))
        y = _reshape(_permute(b, bat_b + free_b), sh(b, bat_b) + [1] * len(fa) + fb)
        return _core.binary(_ops()["mul"], x, y)
    x = _reshape(_permute(a, bat_a + free_a + con_a), sh(a, bat_a) + [m, k])
    y = _reshape(_permute(b, bat_b + con_b + free_b), sh(b, bat_b) + [k, n])
    return _reshape(_core.matmul(x, y), bshape + fa + fb)


def _ops():
    from ._common import _OPS
    return _OPS


def _conj(x):
    from ._complex import conjugate
    return conjugate(x)


# ---- einsum -------------------------------------------------------------------------------------------
def _sublist_subscripts(sub):
    """One sublist of einsum's interleaved form (ints 0..51 and Ellipsis) as subscript letters."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    out = []
    for c in sub:
        if c is Ellipsis:
            out.append("...")
            continue
        try:
            i = operator.index(c)
        except TypeError:
            raise TypeError("einsum: a subscript in a sublist must be an integer or Ellipsis") from None
        if not 0 <= i < 52:
            raise ValueError(f"einsum: subscript {i} is out of range (0 to 51)")
        out.append(letters[i])
    return "".join(out)


def _interleaved(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublistout]) as (subscripts, operands)."""
    n = len(args) // 2
    ops = [args[2 * i] for i in range(n)]
    subs = [_sublist_subscripts(args[2 * i + 1]) for i in range(n)]
    out = _sublist_subscripts(args[-1]) if len(args) % 2 else None
    return ",".join(subs) + ("" if out is None else "->" + out), ops


def _parse_einsum(subscripts, operands):
    """Labels of each operand and of the output, as lists of ints (letters by code; the dims an ellipsis
    stands for as -1, -2, ... from the right)."""
    if not isinstance(subscripts, str):
        raise TypeError("einsum: subscripts must be a string (or use the interleaved form)")
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, rhs = s.split("->")
        if "->" in rhs or "-" in rhs or ">" in rhs:
            raise ValueError("einsum: subscripts may hold one '->'")
    else:
        lhs, rhs = s, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(operands)} operands")
    ell = 0
    labels = []
    for t, x in zip(terms, operands):
        if t.count("...") > 1 or t.replace("...", "").count(".") or any(
                not c.isalpha() for c in t.replace("...", "")):
            raise ValueError(f"einsum: invalid subscript term {t!r} (letters and at most one '...')")
        nl = len(t.replace("...", ""))
        if "..." in t:
            head, tail = t.split("...")
            ne = x.ndim - nl
            if ne < 0:
                raise ValueError(f"einsum: operand has {x.ndim} dims, fewer than the subscripts {t!r} name")
            ell = builtins.max(ell, ne)
            labels.append([ord(c) for c in head] + list(range(-ne, 0)) + [ord(c) for c in tail])
        else:
            if nl != x.ndim:
                raise ValueError(f"einsum: operand has {x.ndim} dims but the subscripts {t!r} name {nl}")
            labels.append([ord(c) for c in t])
    if rhs is None:
        count = {}
        for ls in labels:
            for c in ls:
                if c >= 0:
                    count[c] = count.get(c, 0) + 1
        out = list(range(-ell, 0)) + sorted(c for c, v in count.items() if v == 1)
    else:
        if rhs.count("...") > 1 or any(not c.isalpha() for c in rhs.replace("...", "")):
            raise ValueError(f"einsum: invalid output subscripts {rhs!r}")
        if "..." in rhs:
            head, tail = rhs.split("...")
            out = [ord(c) for c in head] + list(range(-ell, 0)) + [ord(c) for c in tail]
        elif ell:
            raise ValueError("einsum: output has more dimensions than subscripts given in einstein sum, but no "
                             "'...' ellipsis provided to broadcast the extra dimensions.")
        else:
            out = [ord(c) for c in rhs]
        known = {c for ls in labels for c in ls}
        for c in out:
            if c >= 0 and c not in known:
                raise ValueError(f"einsum: output subscript {chr(c)!r} does not appear in the operands")
        if len(set(out)) != len(out):
            raise ValueError("einsum: an output subscript appears more than once")
    return labels, out


def _diagonal_last(x, i, j, offset=0):
    """x's diagonal over dims i and j, as the last dim (NumPy's diagonal): a view."""
    x = _arr(x)
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    if x._lazy or x._tracer:
        return x._numpy_view(lambda v: numpy.diagonal(v, offset, i, j))
    # NumPy's geometry (PyArray_Diagonal), made directly: the other axes, then the diagonal
    shape, strides = x.shape, x.strides
    n1, n2, s1, s2 = shape[i], shape[j], strides[i], strides[j]
    if offset >= 0:
        n, start = builtins.min(n1, n2 - offset), offset * s2
    else:
        n, start = builtins.min(n1 + offset, n2), -offset * s1
    if n <= 0:
        n, start = 0, 0
    if x.ndim == 2:
        vshape, vstrides = (n,), (s1 + s2,)
    else:
        keep = [k for k in range(x.ndim) if k != i and k != j]
        vshape, vstrides = tuple([shape[k] for k in keep] + [n]), tuple([strides[k] for k in keep] + [s1 + s2])
    return x._view_of_me(_core.view(x, start, vshape, vstrides))


def _prepare(x, ls, keep):
    """One operand: repeated labels reduced to their diagonal, labels not in keep summed."""
    from ._reductions import sum as _sum
    ls = list(ls)
    while len(set(ls)) != len(ls):
        c = next(c for c in ls if ls.count(c) > 1)
        i = ls.index(c)
        j = ls.index(c, i + 1)
        if x.shape[i] != x.shape[j]:
            raise ValueError(f"einsum: dims of a repeated subscript differ in size ({x.shape[i]}, {x.shape[j]})")
        x = _diagonal_last(x, i, j)
        ls = [l for t, l in enumerate(ls) if t not in (i, j)] + [c]
    drop = [t for t, c in enumerate(ls) if c not in keep]
    if drop:  # in the operands' dtype, as NumPy's einsum (no widening of small integers; bool: any)
        if x.dtype == numpy.bool_:
            from ._reductions import any as _any
            x = _any(x, axis=tuple(drop))
        else:
            x = _sum(x, axis=tuple(drop), dtype=x.dtype)
        ls = [c for t, c in enumerate(ls) if t not in drop]
    return x, ls


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """NumPy's einsum: pairwise contractions as batched matrix products (cheapest intermediate first).
    ``einsum(subscripts, *operands)`` or the interleaved ``einsum(op0, sublist0, op1, sublist1, ..., [sublistout])``."""
    if not operands:
        raise ValueError("No input operands")
    if isinstance(operands[0], str):
        subscripts, operands = operands[0], operands[1:]
    else:
        subscripts, operands = _interleaved(operands)
    scalar = [not isinstance(x, (ndarray, numpy.ndarray)) for x in operands]
    ops = [_arr(x) for x in operands]
    if not ops:
        raise ValueError("einsum: no operands")
    labels, out_labels = _parse_einsum(subscripts, ops)
    rt = _result_dtype(*ops) if dtype is None else _np_dtype_of(dtype)
    if len(ops) == 1 and set(labels[0]) == set(out_labels):
        rt = ops[0].dtype  # NumPy returns a view here (transposes, diagonals): dtype= is not applied
    if dtype is not None:
        for x, sc in zip(ops, scalar):
            if not sc and not numpy.can_cast(x.dtype, rt, casting):  # a Python scalar is cast as NumPy's
                raise TypeError(f"einsum: cannot cast {x.dtype} to {rt} with casting rule {casting!r}")
    ops = [_cast(x, rt) for x in ops]
    sizes = {}  # a label's size: 1 broadcasts against any other (0 included), else all must agree
    for x, ls in zip(ops, labels):
        for c, s in zip(ls, x.shape):
            old = sizes.get(c)
            if old is None or old == 1:
                sizes[c] = s
            elif s != 1 and s != old:
                raise ValueError(f"einsum: operands could not be broadcast together: subscript "
                                 f"{chr(c) if c >= 0 else '...'} has sizes {old} and {s}")
    pending = []
    for i, (x, ls) in enumerate(zip(ops, labels)):
        others = set(out_labels).union(*[set(l) for t, l in enumerate(labels) if t != i])
        pending.append(_prepare(x, ls, others))
    while len(pending) > 1:
        best = None
        for p in range(len(pending)):
            for q in range(p + 1, len(pending)):
                la, lb = pending[p][1], pending[q][1]
                res = set(la) ^ set(lb)
                rest = set(out_labels).union(*[set(pending[t][1]) for t in range(len(pending)) if t not in (p, q)])
                res |= {c for c in set(la) & set(lb) if c in rest}
                cost = math.prod(sizes[c] for c in res)
                if best is None or cost < best[0]:
                    best = (cost, p, q)
        _, p, q = best
        (a, la), (b, lb) = pending[p], pending[q]
        rest = set(out_labels).union(*[set(pending[t][1]) for t in range(len(pending)) if t not in (p, q)])
        shared = [c for c in la if c in lb]
        bat = [c for c in shared if c in rest]
        con = [c for c in shared if c not in rest]
        fa = [c for c in la if c not in lb]
        fb = [c for c in lb if c not in la]
        r = _contract(a, [la.index(c) for c in fa], [la.index(c) for c in con], b, [lb.index(c) for c in con],
                      [lb.index(c) for c in fb], [la.index(c) for c in bat], [lb.index(c) for c in bat])
        pending = [pending[t] for t in range(len(pending)) if t not in (p, q)] + [(r, bat + fa + fb)]
    x, ls = pending[0]
    x, ls = _prepare(x, ls, set(out_labels))
    r = _permute(x, [ls.index(c) for c in out_labels])
    want = tuple(sizes[c] for c in out_labels)
    if r.shape != want:
        from ._manipulation import broadcast_to
        r = broadcast_to(r, want)
    if out is None and r is ops[0] and isinstance(operands[0], ndarray):
        r = r.view()  # an identity einsum is a view of its operand, as NumPy's (not the operand itself)
    return _finish(r, out)


def _find_cublas_wheel():
    """Points LOOM_CUBLASLT at the nvidia-cublas wheel's libcublasLt when one is installed and nothing
    else was named (libloom loads cuBLASLt on the first GPU product; runtime/cuda/cuda_blas.c)."""
    if os.environ.get("LOOM_CUBLASLT"):
        return
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return
    for root in (spec.submodule_search_locations or []) if spec else []:
        libs = sorted(glob.glob(os.path.join(root, "cu*", "lib", "libcublasLt.so.*")) +
                      glob.glob(os.path.join(root, "cublas", "lib", "libcublasLt.so.*")), reverse=True)
        if libs:
            os.environ["LOOM_CUBLASLT"] = libs[0]
            return


def _find_numpy_blas():
    """Points LOOM_BLAS at NumPy's own OpenBLAS (the scipy-openblas build its wheels bundle) when nothing
    was named: host products then run on the BLAS NumPy uses. Debian's libopenblas0 0.3.21 misdetects
    recent CPUs as 'Prescott' (SSE3 kernels: 4x slower than NumPy on this box's 4096^2 float32 product)."""
    if os.environ.get("LOOM_BLAS"):
        return
    libs_dir = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    libs = sorted(glob.glob(os.path.join(libs_dir, "libscipy_openblas*.so")))
    if libs:
        os.environ["LOOM_BLAS"] = libs[-1]


_find_cublas_wheel()
_find_numpy_blas()

from ._math import _UFUNCS  # noqa: E402 (NumPy's matmul ufunc on a loom operand: numpy_array @ loom_array)
_UFUNCS.update(matmul=matmul)

def set_allow_tf32(flag):
    """TF32 tensor cores for float32 products on NVIDIA GPUs (off by default, as PyTorch's allow_tf32;
    LOOM_ALLOW_TF32=1 sets it at start). Returns the previous setting."""
    return _core.set_allow_tf32(bool(flag))


__all__ = ["set_allow_tf32", "matmul", "dot", "vdot", "inner", "vecdot", "matrix_transpose", "tensordot",
           "einsum", "trace"]


from . import _reductions  # noqa: E402 (imported last: it may import this module)
from ._creation import _adopt, _host_np  # noqa: E402
