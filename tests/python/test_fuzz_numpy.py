"""test_fuzz_numpy.py: a seeded differential fuzzer of the loom Python API against NumPy 2.

Each "graph" is a random program of 4-24 steps over a pool of values, run twice in lockstep: with
numpy and with loom. Steps: inputs of every dtype (bool, all ints, float16/32/64) and rank 0-4 with
edge values (extremes, NaN, inf, -0.0, subnormals); unary and binary ufuncs (functions and operators)
with operands from the pool or Python / NumPy scalars of every kind and range (ints in [2**63, 2**64)
included); broadcasting; views (slices with steps, integer indices, newaxis, transposes, swapaxes,
reshapes, squeeze, ravel); reductions with axes (None, ints, negative, tuples, out of range) and
keepdims and dtype=; where, clip, astype; in-place updates (augmented assignment, setitem, fill) and
full(). loom stays lazy: its values are computed at the end by ONE loom.eval of the whole pool (so
the fused kernels are what is checked). Compared: at every step the exception (its class: NumPy's
AxisError, OverflowError, TypeError, IndexError or ValueError must be loom's too) or the dtype and
shape; at the end every value.

Tolerance. Integers and bools are exact; so are floats computed only by correctly rounded operations
(+ - * /, sqrt, casts, comparisons, min/max, floor..., fmod, float16 rounding), up to 2 ulp of slack.
Operations whose last bits are implementation-defined (transcendentals, pow, float sums/products/means,
whose order differs) may differ by a few ulps; rather than a fixed tolerance, which the discontinuous
ops after them (floor, casts to int, comparisons, argmax) would turn into arbitrary differences, the
NumPy side is replayed with the result of each such operation moved by 4 ulps (and at least 4 of the
smallest subnormals): all down, all up, then in sign patterns that differ between steps (step i moved
by the sign of bit k of i, and the opposite, for k = 0..4), then by exactly 1 and 2 ulps of its dtype
(down, up: a larger move can be a multiple of what a later remainder sees), so that two inexact steps whose errors
cancel when moved together (remainder(hypot(t, x), t)) are also moved apart (float sums by 4 * log2(n)
ulps of the sum of magnitudes; a sum or product whose evaluation order decides an overflow to inf or
NaN is NaN in one replay): an element may differ by up to 4 times the spread those replays show, plus
2 ulps. Replay 1 also flips the sign of NaNs from inexact steps and of zeros from max/min reductions
(which of tied -0.0 / 0.0 a reduction returns is its loop order's choice). That is Loom's promise ("within a few ulps of NumPy")
applied to the exact program, and it stays exact where the program is well conditioned.

Known deviations are listed in KNOWN below: each names the issue item or README note it belongs to,
a one-line reason, a predicate that recognizes its mismatches, and a probe that shows it. A mismatch
that no entry recognizes fails the test; a probe that no longer deviates fails the test too (the fix
landed: remove the entry), so the list only shrinks.

Environment: LOOM_FUZZ_PY_GRAPHS (default 250 here), LOOM_FUZZ_PY_SEED (first seed, default 1).
scripts/fuzz_numpy.py runs long campaigns (>= 10^5 graphs) with reports and minimal reproducers.
"""
import importlib
import math
import os
import random
import time
import traceback
import warnings
from typing import Any

import numpy as np
import pytest

import loom

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]
INT_SCALARS = [0, 1, -1, 2, 3, -7, 100, 127, 128, -128, -129, 255, 256, 300, -300, 1000, 32767, 32768, 65535,
               65536, -32769, 2**31 - 1, 2**31, -2**31 - 1, 2**32, 2**53 + 1, 2**62, 2**63 - 1, 2**63,
               2**63 + 12345, 2**64 - 1, -2**63, 2**64, -2**63 - 1]
FLOAT_SCALARS = [0.0, -0.0, 0.5, 1.5, -2.5, 3.0, 1e-8, 300.0, 65504.0, 70000.0, 1e30, -1e300, math.inf,
                 -math.inf, math.nan, 5e-324, 2.0**63, 1e19]
UNARY = ["negative", "absolute", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
         "cbrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
         "arccosh", "arctanh", "floor", "ceil", "trunc", "rint", "isnan", "isinf", "isfinite",
         "logical_not", "invert", "positive", "square", "reciprocal", "fabs"]
BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power", "maximum",
          "minimum", "fmax", "fmin", "arctan2", "hypot", "copysign", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
          "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/", "floor_divide": "//",
             "remainder": "%", "power": "**", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
             "left_shift": "<<", "right_shift": ">>", "equal": "==", "not_equal": "!=", "less": "<",
             "less_equal": "<=", "greater": ">", "greater_equal": ">="}
# ops whose last bits are implementation-defined (perturbed in the replays)
INEXACT = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt", "sin", "cos", "tan", "arcsin",
           "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "power", "arctan2",
           "hypot", "sum", "prod", "mean"}
REDUCTIONS = ["sum", "prod", "mean", "min", "max", "any", "all", "argmin", "argmax"]
EXC_CLASSES = [np.exceptions.AxisError, OverflowError, ZeroDivisionError, TypeError, IndexError, ValueError]


def exc_class(e):
    for c in EXC_CLASSES:
        if isinstance(e, c):
            return c
    return type(e)


# ---- programs ---------------------------------------------------------------------------------------
class Step:
    """One operation: fn(xp, *operands) on numpy (xp=np) and loom. args: pool indices (int) or
    literals (Lit). code: a format string over the operand names for reproducers."""

    def __init__(self, kind, op, fn, args, code, inexact=False, inplace=False, meta=None):
        self.kind, self.op, self.fn, self.args, self.code = kind, op, fn, args, code
        self.inexact, self.inplace, self.meta = inexact, inplace, meta or {}


class Lit:
    def __init__(self, v):
        self.v = v

    def __repr__(self):
        v = self.v
        if isinstance(v, np.generic):
            return f"np.{v.dtype.name}({v.item()!r})"
        if isinstance(v, float) and not math.isfinite(v):
            return f"float('{v}')"
        return repr(v)


def _numpy_has_fp16_svml():
    try:
        feats = importlib.import_module("numpy._core._multiarray_umath").__cpu_features__
    except (ImportError, AttributeError):
        return False
    return bool(feats.get("AVX512_SPR"))


# NumPy on a CPU with AVX512-FP16 (Sapphire Rapids and later) computes float16 transcendentals with its
# own float16 SVML loops, up to 3 ulps off and with wrong results at the ends (numpy/numpy#30821: tanh
# of large values 0.9985, here tanh(+inf) = -1); everywhere else NumPy computes them in float32 and rounds.
# The reference there is that float32 computation, rounded to float16 (LOOM_FUZZ_FP16_SVML=1/0 forces it).
FP16_SVML = os.environ.get("LOOM_FUZZ_FP16_SVML", "1" if _numpy_has_fp16_svml() else "0") == "1"


def _unary(xp, name, a, dt=None):
    f = getattr(xp, name)
    r = f(a) if dt is None else f(a, dtype=dt)
    if xp is np and FP16_SVML and name in INEXACT and getattr(r, "dtype", None) == np.float16:
        # the float16 loop: the operand cast to float16 (dtype='float16' of a wider input rounds it first),
        # then the float32 computation rounded
        a16 = np.asarray(a).astype(np.float16)
        r = f(a16.astype(np.float32)).astype(np.float16)
        if np.ndim(a) == 0 and not isinstance(a, np.ndarray):
            r = r[()]
    return r


def _literal_array(a):
    if a.dtype.kind == "f":
        body = "[" + ", ".join("float('nan')" if math.isnan(x) else f"float('{x}')" if math.isinf(x) else repr(float(x))
                               for x in a.ravel().tolist()) + "]"
    else:
        body = repr(a.ravel().tolist())
    return f"np.array({body}, dtype=np.{a.dtype.name}).reshape({a.shape})"


class Program:
    def __init__(self, seed, max_steps=24):
        self.seed = seed
        self.rng = random.Random(seed)
        self.nrng = np.random.default_rng(seed)
        self.steps = []
        self.inputs = {}  # pool index -> numpy array given to loom.asarray
        self.max_steps = max_steps

    # -- random choices --
    def dtype(self):
        return self.rng.choice(DTYPES)

    def shape(self):
        nd = self.rng.choice([0, 1, 1, 2, 2, 3, 4])
        return tuple(self.rng.choice([1, 1, 2, 3, 4, 5, 0] if self.rng.random() < 0.1 else [1, 2, 3, 4, 5])
                     for _ in range(nd))

    def values(self, dt, shape):
        dt = np.dtype(dt)
        n = int(np.prod(shape)) if shape else 1
        r = self.nrng
        if dt.kind == "b":
            v = r.random(n) < 0.5
        elif dt.kind in "iu":
            info: Any = np.iinfo(dt)
            edges = [info.min, info.max, 0, 1, info.max - 1] + ([-1, info.min + 1] if dt.kind == "i" else [])
            small = r.integers(-20 if dt.kind == "i" else 0, 20, n)
            big = r.integers(info.min, info.max, n, dtype=dt, endpoint=True)
            pick = r.random(n)
            v = np.where(pick < 0.5, small, big).astype(dt)
            for i in range(n):
                if r.random() < 0.15:
                    v[i] = edges[r.integers(len(edges))]
        else:
            info = np.finfo(dt)
            special = [0.0, -0.0, np.nan, np.inf, -np.inf, float(info.max), float(info.tiny), float(info.tiny) / 4,
                       1.0, -1.0, 0.5, 65504.0, 2.0**63, -2.0**31]
            v = (r.standard_normal(n) * np.where(r.random(n) < 0.3, 1000.0, 3.0)).astype(dt)
            for i in range(n):
                if r.random() < 0.12:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        v[i] = dt.type(special[r.integers(len(special))])
        return np.asarray(v, dtype=dt).reshape(shape)

    def scalar(self, near_dtype=None):
        k = self.rng.random()
        if k < 0.1:
            return Lit(self.rng.random() < 0.5)
        if k < 0.55:
            return Lit(self.rng.choice(INT_SCALARS))
        if k < 0.85:
            return Lit(self.rng.choice(FLOAT_SCALARS))
        dt = np.dtype(near_dtype or self.dtype())
        v = self.values(dt, ())
        return Lit(dt.type(v[()]))

    # -- steps --
    def add(self, step):
        self.steps.append(step)
        return len(self.steps) - 1

    def build(self, pool_ok):
        """Appends one random step given the pool indices usable as operands (pool_ok)."""
        rng = self.rng
        if not pool_ok or rng.random() < 0.12:
            dt, sh = self.dtype(), self.shape()
            a = self.values(dt, sh)
            i = len(self.steps)
            self.inputs[i] = a
            return self.add(Step("input", "input", None, [], "{out} = xp.asarray(" + _literal_array(a) + ")"))
        x = rng.choice(pool_ok)
        y = rng.choice(pool_ok)
        k = rng.random()
        if k < 0.18:
            name = rng.choice(UNARY)
            if rng.random() < 0.1:  # dtype= of a unary ufunc (sqrt(int8, dtype=float32); logical_not(x, dtype=float32))
                dt = rng.choice(["bool", "int8", "int32", "uint16", "float16", "float32", "float64"])
                return self.add(Step("unary", name, lambda xp, a, n=name, dt=dt: _unary(xp, n, a, dt), [x],
                                     "{out} = xp." + name + "({0}, dtype='" + dt + "')", inexact=name in INEXACT,
                                     meta={"dtype_kw": dt}))
            return self.add(Step("unary", name, lambda xp, a, n=name: _unary(xp, n, a), [x],
                                 "{out} = xp." + name + "({0})", inexact=name in INEXACT))
        if k < 0.45:
            name = rng.choice(BINARY)
            b = y if rng.random() < 0.6 else self.scalar()
            args = [x, b] if rng.random() < 0.7 else [b, x]
            if name in OPERATORS and rng.random() < 0.5:
                o = OPERATORS[name]
                fn = eval("lambda xp, a, b: a " + o + " b")
                code = "{out} = {0} " + o + " {1}"
            elif rng.random() < 0.2:  # the ufunc's dtype= (NumPy: the loop with that output dtype, or TypeError)
                dt = rng.choice(["bool", "int8", "int16", "int64", "uint32", "float16", "float32", "float64"])
                fn = (lambda xp, a, b, n=name, dt=dt: getattr(xp, n)(a, b, dtype=dt))
                code = "{out} = xp." + name + "({0}, {1}, dtype='" + dt + "')"
                return self.add(Step("binary", name, fn, args, code, inexact=name in INEXACT, meta={"dtype_kw": dt}))
            else:
                fn = (lambda xp, a, b, n=name: getattr(xp, n)(a, b))
                code = "{out} = xp." + name + "({0}, {1})"
            return self.add(Step("binary", name, fn, args, code, inexact=name in INEXACT))
        if k < 0.52:
            c = rng.choice(pool_ok)
            a = x if rng.random() < 0.7 else self.scalar()
            b = y if rng.random() < 0.7 else self.scalar()
            return self.add(Step("where", "where", lambda xp, c, a, b: xp.where(c, a, b), [c, a, b],
                                 "{out} = xp.where({0}, {1}, {2})"))
        if k < 0.58:
            lo = self.scalar() if rng.random() < 0.8 else Lit(None)
            hi = self.scalar() if rng.random() < 0.8 else Lit(None)
            if lo.v is None and hi.v is None:
                hi = self.scalar()
            return self.add(Step("clip", "clip", lambda xp, a, lo, hi: xp.clip(a, lo, hi), [x, lo, hi],
                                 "{out} = xp.clip({0}, {1}, {2})"))
        if k < 0.66:
            dt = self.dtype()
            return self.add(Step("astype", "astype", lambda xp, a, d=dt: a.astype(d), [x],
                                 "{out} = {0}.astype('" + dt + "')", meta={"to": dt}))
        if k < 0.80:
            return self.view_step(x)
        if k < 0.92:
            return self.reduce_step(x)
        return self.inplace_step(x, y)

    def view_step(self, x):
        rng = self.rng
        k = rng.randrange(8)
        nd = rng.randrange(0, 5)
        if k == 0:  # basic slicing with steps (negative too), integers, newaxis, Ellipsis
            parts: list[Any] = []
            for _ in range(nd):
                c = rng.random()
                if c < 0.5:
                    st = rng.choice([None, 1, 2, -1, -2, 3, 2**63 - 1, -2**63])
                    lo = rng.choice([None, 0, 1, -1, -3, 10, -10])
                    hi = rng.choice([None, 0, 2, -1, 100, -100])
                    parts.append(slice(lo, hi, st))
                elif c < 0.75:
                    parts.append(rng.choice([0, 1, -1, 2, -2, 5]))
                elif c < 0.9:
                    parts.append(None)
                else:
                    parts.append(Ellipsis)
            key = tuple(parts)
            return self.add(Step("view", "getitem", lambda xp, a, key=key: a[key], [x], "{out} = {0}[" + repr(key) + "]"))
        if k == 1:
            return self.add(Step("view", "transpose", lambda xp, a: a.T, [x], "{out} = {0}.T"))
        if k == 2:
            a1, a2 = rng.randrange(-3, 4), rng.randrange(-3, 4)
            return self.add(Step("view", "swapaxes", lambda xp, a, a1=a1, a2=a2: xp.swapaxes(a, a1, a2), [x],
                                 "{out} = xp.swapaxes({0}, %d, %d)" % (a1, a2)))
        if k == 3:  # reshape: to a random factorization of the size (or an invalid one), -1 sometimes
            shape = rng.choice([(-1,), (2, -1), (-1, 1), (1, -1, 1), (3, 2), (4,), (2, 2, 1), ()])
            return self.add(Step("view", "reshape", lambda xp, a, s=shape: a.reshape(s), [x],
                                 "{out} = {0}.reshape(" + repr(shape) + ")"))
        if k == 4:
            if rng.random() < 0.3:  # memory orders: Fortran-order ravel and reshape read columns first
                if rng.random() < 0.5:
                    return self.add(Step("view", "ravel_F", lambda xp, a: xp.ravel(a, order="F"), [x],
                                         "{out} = xp.ravel({0}, order='F')"))
                shape = rng.choice([(-1,), (2, -1), (-1, 2)])
                return self.add(Step("view", "reshape_F", lambda xp, a, s=shape: xp.reshape(a, s, order="F"), [x],
                                     "{out} = xp.reshape({0}, " + repr(shape) + ", order='F')"))
            return self.add(Step("view", "ravel", lambda xp, a: xp.ravel(a), [x], "{out} = xp.ravel({0})"))
        if k == 5:
            ax = rng.choice([None, 0, -1, 1])
            return self.add(Step("view", "squeeze", lambda xp, a, ax=ax: xp.squeeze(a, axis=ax), [x],
                                 "{out} = xp.squeeze({0}, axis=%r)" % (ax,)))
        if k == 6:
            perm = list(range(nd))
            rng.shuffle(perm)
            return self.add(Step("view", "transpose_axes", lambda xp, a, p=tuple(perm): xp.transpose(a, p), [x],
                                 "{out} = xp.transpose({0}, %r)" % (tuple(perm),)))
        ax = rng.choice([0, -1, 1, 5])
        return self.add(Step("view", "expand_dims", lambda xp, a, ax=ax: xp.expand_dims(a, ax), [x],
                             "{out} = xp.expand_dims({0}, %d)" % ax))

    def reduce_step(self, x):
        rng = self.rng
        name = rng.choice(REDUCTIONS)
        axis = rng.choice([None, None, 0, 1, -1, -2, (0,), (0, -1), (1, 0), 3, 2**32, -2**32 - 1, ()])
        keep = rng.random() < 0.3
        kw: dict[str, Any] = {"axis": axis}
        if keep or rng.random() < 0.3:
            kw["keepdims"] = keep
        if name in ("sum", "prod", "mean") and rng.random() < 0.25:
            kw["dtype"] = rng.choice(DTYPES[1:])
        text = ", ".join(f"{k}={v!r}" for k, v in kw.items())
        return self.add(Step("reduce", name, lambda xp, a, n=name, kw=kw: getattr(xp, n)(a, **kw), [x],
                             "{out} = xp." + name + "({0}, " + text + ")", inexact=name in INEXACT,
                             meta={"kw": kw}))

    def inplace_step(self, x, y):
        rng = self.rng
        k = rng.randrange(5)
        if k == 0:
            name = rng.choice(["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power",
                               "bitwise_and", "bitwise_or", "left_shift"])
            o = OPERATORS[name]
            b = y if rng.random() < 0.6 else self.scalar()

            def fn(xp, a, b, o=o):
                d = {"t": a.copy(), "b": b}
                exec("t " + o + "= b", {}, d)
                return d["t"]
            return self.add(Step("inplace", "i" + name, fn, [x, b], "{out} = {0}.copy(); {out} " + o + "= {1}",
                                 inexact=name in INEXACT, inplace=True))
        if k == 1:
            key = rng.choice([(), (0,), (slice(None, None, 2),), (Ellipsis, -1), (slice(1, None),), (0, slice(None))])
            v = y if rng.random() < 0.5 else self.scalar()

            def fn(xp, a, v, key=key):
                t = a.copy()
                t[key] = v
                return t
            return self.add(Step("inplace", "setitem", fn, [x, v], "{out} = {0}.copy(); {out}[" + repr(key) + "] = {1}",
                                 inplace=True))
        if k == 2:
            v = self.scalar()

            def fn(xp, a, v):  # type: ignore[misc]  # one name per branch
                t = a.copy()
                t.fill(v)
                return t
            return self.add(Step("inplace", "fill", fn, [x, v], "{out} = {0}.copy(); {out}.fill({1})", inplace=True))
        if k == 3:
            dt = self.dtype()
            shape = rng.choice([(), (3,), (2, 2)])
            v = self.scalar()
            return self.add(Step("create", "full", lambda xp, v, s=shape, d=dt: xp.full(s, v, dtype=d), [v],
                                 "{out} = xp.full(%r, {0}, dtype='%s')" % (shape, dt), meta={"to": dt}))
        # a chain through a pending value: t = x * 2; t += x (the write must see the pending read)
        def fn(xp, a):  # type: ignore[no-redef]  # one name per branch
            t = a * 2 if a.dtype != np.bool_ else a | a
            t += a
            return t
        return self.add(Step("inplace", "pending_iadd", fn, [x], "{out} = {0} * 2; {out} += {0}", inplace=True))


# ---- running ----------------------------------------------------------------------------------------
class Outcome:
    __slots__ = ("value", "exc")

    def __init__(self, value=None, exc=None):
        self.value, self.exc = value, exc


def _resolve(arg, vals):
    return arg.v if isinstance(arg, Lit) else vals[arg].value


N_REPLAYS = 16  # all down, all up, bits 0..4 of the step index as signs and their opposites, then 1 and 2 ulps
SMALL_MOVES = 12  # replays from here move each inexact result by exactly 1, 1, 2, 2 ulps (down, up, ...)


def _replay_sign(replay, i):
    """The direction (-1 or +1) in which replay `replay` moves the result of inexact step i."""
    if replay < 2 or replay >= SMALL_MOVES:
        if replay >= SMALL_MOVES:
            replay -= SMALL_MOVES
        replay %= 2
        return -1.0 if replay == 0 else 1.0
    k, flip = divmod(replay - 2, 2)
    s = -1.0 if (i >> k) & 1 else 1.0
    return -s if flip else s


def _perturb(r, step, rng, operands, replay, sign):
    """NumPy result r of an inexact step moved by 4 ulps (and by at least 4 of the smallest subnormals:
    a relative move leaves a subnormal in place) in direction `sign` (sums: 4 log2(n) ulps of sum |x|;
    float16 sums: 4 n float16 ulps of sum |x|, as NumPy rounds each partial sum to float16).
    A float sum or product whose order decides overflow (inf, NaN) is made NaN, +inf, -inf (replays 0-2)
    and 0 (the others), so everything that depends on it is compared loosely (spread inf)."""
    a = np.asarray(r)
    if a.dtype.kind != "f" or a.size == 0:
        return r
    fi = np.finfo(a.dtype if a.dtype != np.float16 else np.float32)
    eps, sub = float(fi.eps), float(fi.smallest_subnormal)
    big = float(np.finfo(a.dtype).max) / 4
    with np.errstate(all="ignore"):
        u = np.full(a.shape, sign)
        out = a.astype(np.float64)
        if step.op in ("sum", "mean", "prod"):
            src = np.abs(np.asarray(operands[0], dtype=np.float64))
            n = max(src.size, 2)
            if step.op == "prod":  # a partial product may overflow or underflow in one order only
                nz = src[(src != 0) & np.isfinite(src)]
                lg = np.log2(nz)
                info = np.finfo(a.dtype)
                order = (not np.all(np.isfinite(a)) or not np.all(np.isfinite(src)) or
                         lg[lg > 0].sum() > math.log2(float(info.max)) - 2 or
                         lg[lg < 0].sum() < math.log2(float(info.tiny)) + 2)
                out = out * (1 + u * 4 * n * eps)
            else:
                scale = src.sum() * (1.0 if step.op == "sum" else 1.0 / n)
                order = not math.isfinite(scale) or scale > big or not np.all(np.isfinite(a))
                # NumPy's float16 reductions round every partial sum to float16, one after another along a
                # strided axis: their error grows as n float16 ulps of sum |x| (loom accumulates in float32)
                slack = n * float(np.finfo(np.float16).eps) if a.dtype == np.float16 else math.log2(n) * eps
                out = out + u * 4 * slack * scale
            if order:  # NaN, +inf, -inf or 0 by replay: the outcomes different orders give (a partial
                # product that overflows before a 0 is NaN in one order, 0 in another; a mean of it inf)
                out = np.full(out.shape, {0: np.nan, 1: np.inf, 2: -np.inf}.get(replay, 0.0))
        elif replay >= SMALL_MOVES:
            # exactly k ulps of the result's own dtype: a move of ~4-8 ulps can be a multiple of what a
            # discontinuous consumer sees (remainder(x, 3) of a huge x whose ulp is 2^e: moves of 6 ulps
            # leave it unchanged, a 1-ulp difference does not), so small moves join the spread
            k = 1 + (replay - SMALL_MOVES) // 2
            sp = np.abs(np.spacing(a)).astype(np.float64)
            out = np.where(np.isfinite(out), out + u * k * sp, out)
        else:
            out = out * (1 + u * 4 * eps) + u * 4 * sub
        return out.astype(a.dtype).reshape(a.shape) if a.ndim else a.dtype.type(out)


def _flip_zero_signs(r):
    """r with the sign of every zero flipped: which of tied -0.0 / 0.0 a max or min reduction returns
    depends on its loop's order (NumPy's SIMD lanes, loom's tree), so replay 1 takes the other one."""
    a = np.asarray(r)
    if a.dtype.kind != "f" or a.size == 0:
        return r
    out = np.where(a == 0, -a, a).astype(a.dtype)
    return out if a.ndim else a.dtype.type(out)


def _flip_nan_signs(r, ops=()):
    """r with the sign bit of every NaN this step made flipped: the sign of a NaN from an invalid operation is
    unspecified (x86 libm -NaN, SLEEF +NaN; loom's scalar and vector paths may differ), so replay 1 takes the
    other. A NaN that an operand's NaN carried through keeps that operand's sign (flipping it again at every
    inexact step of a chain, log1p(log1p(x)), gave the first step's sign back)."""
    a = np.asarray(r)
    if a.dtype.kind != "f" or a.size == 0 or not np.isnan(a).any():
        return r
    made = np.isnan(a)
    for o in ops:
        oa = np.asarray(o) if isinstance(o, (np.ndarray, np.generic)) else None
        if oa is not None and oa.dtype.kind in "fc" and oa.size:
            try:
                made = made & ~np.broadcast_to(np.isnan(oa), a.shape)
            except ValueError:  # an operand that does not broadcast to the result (an axis, a reduction's input)
                pass
    out = np.where(made, -a, a).astype(a.dtype)
    return out if a.ndim else a.dtype.type(out)


PERIODIC = {"sin", "cos", "tan"}


def _unresolved_phase(r, x, replay):
    """sin/cos/tan r of an argument x known only within a few ulps (it depends on an inexact step): where
    those ulps span a sizeable part of a period (|x| * 8 eps > 1/4) the result may be anything, so the
    replays make it NaN (replay 0) and 0 (the others), a spread that accepts any value."""
    a, xa = np.asarray(r), np.asarray(x)
    if a.dtype.kind != "f" or xa.dtype.kind != "f" or a.size == 0:
        return r
    eps = float(np.finfo(xa.dtype if xa.dtype != np.float16 else np.float32).eps)
    with np.errstate(all="ignore"):
        wide = np.broadcast_to(np.abs(xa.astype(np.float64)) * 8 * eps > 0.25, a.shape)
    if not wide.any():
        return r
    out = np.where(wide, np.nan if replay == 0 else 0.0, a).astype(a.dtype)
    return out if a.ndim else a.dtype.type(out)


def run_numpy(prog, perturb_seed=None, replay=0):
    rng = np.random.default_rng(perturb_seed) if perturb_seed is not None else None
    vals = []
    tainted: list = []  # per step: its value depends on an inexact step (perturbed in the replays)
    for i, s in enumerate(prog.steps):
        tainted.append(s.inexact or any(tainted[a] for a in s.args if not isinstance(a, Lit)))
        if s.kind == "input":
            vals.append(Outcome(prog.inputs[i].copy()))
            continue
        try:
            if any(not isinstance(a, Lit) and vals[a].exc is not None for a in s.args):
                raise RuntimeError("operand failed")
            ops = [_resolve(a, vals) for a in s.args]
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                r = s.fn(np, *ops)
                if rng is not None and s.op in PERIODIC and not isinstance(s.args[0], Lit) and tainted[s.args[0]]:
                    r = _unresolved_phase(r, ops[0], replay)
                if rng is not None and s.inexact:
                    r = _perturb(r, s, rng, ops, replay, _replay_sign(replay, i))
                if rng is not None and replay == 1 and s.kind == "reduce" and s.op in ("max", "min", "amax", "amin"):
                    r = _flip_zero_signs(r)
                if rng is not None and replay == 1 and s.inexact:
                    r = _flip_nan_signs(r, ops)
            vals.append(Outcome(np.asarray(r) if isinstance(r, (np.generic, np.ndarray)) else r))
        except Exception as e:  # noqa: BLE001 - any NumPy error is an outcome to compare
            vals.append(Outcome(exc=e))
    return vals


def run_loom(prog):
    vals = []
    for i, s in enumerate(prog.steps):
        if s.kind == "input":
            vals.append(Outcome(loom.asarray(prog.inputs[i])))
            continue
        try:
            if any(not isinstance(a, Lit) and vals[a].exc is not None for a in s.args):
                raise RuntimeError("operand failed")
            ops = [_resolve(a, vals) for a in s.args]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                vals.append(Outcome(s.fn(loom, *ops)))
        except Exception as e:  # noqa: BLE001
            vals.append(Outcome(exc=e))
    return vals


def _ulp(dt, v):
    with np.errstate(all="ignore"):
        return np.abs(np.spacing(np.asarray(v, dtype=dt))).astype(np.float64)


def compare_values(want, got, spread):
    """Elementwise: got (loom, as NumPy) against want within 4 * spread + 2 ulps. Returns the index of a
    mismatch or None."""
    want, got = np.asarray(want), np.asarray(got)
    if want.dtype.kind in "biu":
        w, g = want.astype(object), got.astype(object)
        if spread is None:
            bad = w != g
        else:
            s = np.asarray(spread, dtype=np.float64)
            bad = np.array([abs(int(a) - int(b)) > 4 * sp if not math.isinf(sp) else False
                            for a, b, sp in zip(w.ravel(), g.ravel(), s.ravel())], dtype=bool).reshape(w.shape)
        idx = np.argwhere(np.asarray(bad))
        return tuple(idx[0]) if len(idx) else None
    with np.errstate(all="ignore"):
        wf, gf = want.astype(np.float64), got.astype(np.float64)
        both_nan = np.isnan(wf) & np.isnan(gf)
        same = (wf == gf) | both_nan
        tol = 2 * _ulp(want.dtype, want)
        if spread is not None:
            s = np.asarray(spread, dtype=np.float64)
            same |= np.isinf(s) | np.isnan(s)
            tol = tol + 4 * np.where(np.isfinite(s), s, 0)
        close = np.abs(wf - gf) <= tol
        close &= np.isfinite(wf) & np.isfinite(gf)
        bad = ~(same | close)
    idx = np.argwhere(bad)
    return tuple(idx[0]) if len(idx) else None


def spread_of(runs, i):
    """Elementwise spread of value i over the perturbed NumPy replays (inf where they disagree on
    NaN-ness, shape or success); None when every replay equals the first."""
    vs = []
    for r in runs:
        o = r[i]
        if o.exc is not None:
            return np.inf
        vs.append(np.asarray(o.value))
    base = vs[0]
    if any(v.shape != base.shape for v in vs):
        return np.inf
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if base.dtype.kind == "f" or base.dtype.kind in "biu":
            arr = np.stack([v.astype(np.float64) for v in vs])
            nan = np.isnan(arr)
            sp = np.nanmax(arr, axis=0) - np.nanmin(arr, axis=0) if arr.size else np.zeros(base.shape)
            sp = np.where(nan.any(axis=0) & ~nan.all(axis=0), np.inf, sp)
            inf = np.isinf(arr)
            sp = np.where(inf.any(axis=0) & ~np.all(arr == arr[0], axis=0), np.inf, sp)
            return np.nan_to_num(sp, nan=np.inf, posinf=np.inf)
    return None


class Mismatch:
    pair: tuple | None = None  # value mismatches: (numpy's element, loom's element)
    sig: tuple[str, ...] = ()  # the operands' dtypes (operand_sig), set where the mismatch is recorded
    after_int_cast: bool = False  # value mismatches: computed from an undefined float -> int cast

    def __init__(self, prog, i, kind, detail, np_out, lm_out):
        self.prog, self.i, self.kind, self.detail = prog, i, kind, detail
        self.np_out, self.lm_out = np_out, lm_out
        s = prog.steps[i]
        self.step = s
        self.op = s.op

    def operand_sig(self, np_vals):
        sig = []
        for a in self.step.args:
            if isinstance(a, Lit):
                v = a.v
                sig.append(type(v).__name__ if not isinstance(v, np.generic) else "np." + v.dtype.name)
            else:
                o = np_vals[a]
                sig.append(str(np.asarray(o.value).dtype) if o.exc is None else "?")
        return tuple(sig)

    def key(self):
        return (self.kind, self.step.kind, self.op, self.sig)

    def reproducer(self):
        """The steps value i depends on, as a program over xp (run it with xp = numpy and xp = loom)."""
        need, stack = set(), [self.i]
        while stack:
            j = stack.pop()
            if j in need:
                continue
            need.add(j)
            stack.extend(a for a in self.prog.steps[j].args if not isinstance(a, Lit))
        lines = []
        for j in sorted(need):
            s = self.prog.steps[j]
            names = ["v%d" % a if not isinstance(a, Lit) else repr(a) for a in s.args]
            lines.append(s.code.format(*names, out="v%d" % j))
        lines.append("result = v%d" % self.i)
        return "\n".join(lines)

    def describe(self):
        def show(o):
            if o.exc is not None:
                return f"{type(o.exc).__name__}: {str(o.exc)[:160]}"
            v = o.value
            if isinstance(v, loom.ndarray):
                try:
                    v = v.get()
                except Exception as e:  # noqa: BLE001
                    return f"(evaluation raised {type(e).__name__}: {e})"
            a = np.asarray(v)
            txt = np.array2string(a, threshold=12, max_line_width=160)
            return f"{a.dtype}{list(a.shape)} {txt}"
        return (f"[{self.kind}] step {self.i} {self.step.kind}:{self.op} operands {self.sig} {self.detail}\n"
                f"  numpy: {show(self.np_out)}\n  loom:  {show(self.lm_out)}\n"
                f"  reproducer (seed {self.prog.seed}):\n    " + self.reproducer().replace("\n", "\n    "))


def fuzz_one(seed):
    """Runs program `seed`; returns its mismatches (a list of Mismatch)."""
    prog = Program(seed)
    rng = prog.rng
    nsteps = rng.randint(4, prog.max_steps)
    mism = []
    np_vals: list[Any] = []
    lm_vals: list[Any] = []
    ok: list[int] = []  # pool indices that succeeded on both sides with the same dtype and shape
    for _ in range(nsteps):
        i = prog.build(ok)
        s = prog.steps[i]
        # both sides, one step at a time (loom stays lazy)
        np_vals = run_step(prog, i, np_vals, np)
        lm_vals = run_step(prog, i, lm_vals, loom)
        n, l = np_vals[i], lm_vals[i]
        if n.exc is not None or l.exc is not None:
            if isinstance(n.exc, RuntimeError) and str(n.exc) == "operand failed":
                continue
            if n.exc is None:
                mism.append(Mismatch(prog, i, "loom-raises", "", n, l))
            elif l.exc is None:
                mism.append(Mismatch(prog, i, "numpy-raises", "", n, l))
            elif not isinstance(l.exc, exc_class(n.exc)):
                mism.append(Mismatch(prog, i, "exception-class", "", n, l))
            continue
        nv, lv = np.asarray(n.value), l.value
        if not isinstance(lv, loom.ndarray):
            mism.append(Mismatch(prog, i, "type", f"loom returned {type(lv).__name__}", n, l))
            continue
        if nv.dtype != lv.dtype:
            mism.append(Mismatch(prog, i, "dtype", f"numpy {nv.dtype} loom {lv.dtype}", n, l))
            continue
        if nv.shape != lv.shape:
            mism.append(Mismatch(prog, i, "shape", f"numpy {nv.shape} loom {lv.shape}", n, l))
            continue
        ok.append(i)
    # values: one evaluation of the whole pool, then the perturbed NumPy replays
    live = [lm_vals[i].value for i in ok if isinstance(lm_vals[i].value, loom.ndarray)]
    try:
        if live:
            loom.eval(*live)
        got = {i: lm_vals[i].value.get() for i in ok}
    except Exception as e:  # noqa: BLE001
        mism.append(Mismatch(prog, ok[-1], "eval-raises", traceback.format_exc(limit=2), np_vals[ok[-1]],
                             Outcome(exc=e)))
        return finish(mism, np_vals)
    replays = None
    for i in ok:
        if prog.steps[i].kind == "input":
            continue
        bad = compare_values(np_vals[i].value, got[i], None)
        if bad is None:
            continue
        if replays is None:
            replays = [np_vals] + [run_numpy(prog, perturb_seed=seed * 7 + r, replay=r) for r in range(N_REPLAYS)]
        sp = spread_of(replays, i)
        bad = compare_values(np_vals[i].value, got[i], sp)
        if bad is not None and _arg_near_tie(prog.steps[i], np_vals, replays, got[i]):
            continue
        if bad is not None:
            w, g = np.asarray(np_vals[i].value), got[i]
            mm = Mismatch(prog, i, "value", f"at {bad}: numpy {w[bad]!r} loom {g[bad]!r}", np_vals[i], Outcome(g))
            mm.pair = (w[bad], g[bad])
            mm.after_int_cast = _after_float_to_int_cast(prog, i, np_vals)
            mism.append(mm)
            break  # later values depend on this one: one report per program
    return finish(mism, np_vals)


def _arg_near_tie(step, np_vals, replays, got):
    """argmin/argmax whose every differing pick names an element within a few ulps of NumPy's pick (their
    operand known only within 2 ulps + 4 x its replay spread): which of near-tied values wins is decided
    by per-element last-ulp differences of the math producing them (SLEEF vs libm), which the per-step
    replays cannot move apart."""
    if step.kind != "reduce" or step.op not in ("argmin", "argmax") or isinstance(step.args[0], Lit):
        return False
    a = step.args[0]
    op = np.asarray(np_vals[a].value)
    if op.dtype.kind != "f" or op.ndim == 0:
        return False
    kw = step.meta.get("kw", {})
    axis = kw.get("axis")
    sp = spread_of(replays, a)
    with np.errstate(all="ignore"):
        x = op.ravel() if axis is None else np.moveaxis(op, axis, -1)
        s = (np.zeros(op.shape) if sp is None else np.broadcast_to(np.asarray(sp, dtype=np.float64), op.shape))
        s = s.ravel() if axis is None else np.moveaxis(s, axis, -1)
        x, s = x.reshape(-1, x.shape[-1]), s.reshape(-1, s.shape[-1])
        pick_np = (np.argmin if step.op == "argmin" else np.argmax)(x, axis=-1)
        pick_lm = np.asarray(got).reshape(-1)
        if pick_lm.size != pick_np.size or np.any((pick_lm < 0) | (pick_lm >= x.shape[-1])):
            return False
        rows = np.arange(x.shape[0])
        vn, vl = x[rows, pick_np].astype(np.float64), x[rows, pick_lm].astype(np.float64)
        tol = 2 * (_ulp(op.dtype, x[rows, pick_np]) + _ulp(op.dtype, x[rows, pick_lm])) + \
            4 * (s[rows, pick_np] + s[rows, pick_lm])
        differ = pick_np != pick_lm
        near = (np.abs(vn - vl) <= tol) & np.isfinite(vn) & np.isfinite(vl)
    return bool(np.all(near[differ]))


def finish(mism, np_vals):
    for m in mism:
        m.sig = m.operand_sig(np_vals)
    return mism


def run_step(prog, i, vals, xp):
    s = prog.steps[i]
    if s.kind == "input":
        vals.append(Outcome(prog.inputs[i].copy() if xp is np else loom.asarray(prog.inputs[i])))
        return vals
    try:
        if any(not isinstance(a, Lit) and vals[a].exc is not None for a in s.args):
            raise RuntimeError("operand failed")
        ops = [_resolve(a, vals) for a in s.args]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            r = s.fn(xp, *ops)
        if xp is np and isinstance(r, (np.generic, np.ndarray)):
            r = np.asarray(r)  # 0-d arrays, like loom's (in-place ops then work alike)
        vals.append(Outcome(r))
    except Exception as e:  # noqa: BLE001
        vals.append(Outcome(exc=e))
    return vals


# ---- known deviations ---------------------------------------------------------------------------------
def _dt(m, k):
    return m.sig[k] if k < len(m.sig) else ""


def _is_int(t):
    return t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool") or t in (
        "np.int8", "np.int16", "np.int32", "np.int64", "np.uint8", "np.uint16", "np.uint32", "np.uint64", "int",
        "np.bool")


def _after_float_to_int_cast(prog, i, np_vals):
    """Whether step i is computed from a float -> int cast (astype, full, a reduction's integer dtype=) of
    float operands: where those are NaN, inf or out of range NumPy's values are undefined and loom's
    saturate, so every step computed from them may differ (the replays' spread need not cover it)."""
    seen, stack = set(), [i]
    while stack:
        for a in prog.steps[stack.pop()].args:
            if isinstance(a, Lit) or a in seen:
                continue
            seen.add(a)
            stack.append(a)
            s = prog.steps[a]
            to = s.meta.get("to") or s.meta.get("kw", {}).get("dtype")
            if s.op in ("astype", "full", "sum", "prod", "mean") and to and np.dtype(to).kind in "iu" and any(
                    isinstance(b.v, float) if isinstance(b, Lit) else np.asarray(np_vals[b].value).dtype.kind == "f"
                    for b in s.args):
                return True
    return False


def _float_to_int_cast(m):
    """NumPy leaves float -> int casts of NaN, inf and out-of-range values undefined; loom saturates
    (also in the steps computed from such a cast: Mismatch.after_int_cast)."""
    s = m.step
    if m.kind != "value":
        return False
    if m.after_int_cast:
        return True
    to = s.meta.get("to") or s.meta.get("kw", {}).get("dtype")
    if s.op in ("astype", "full", "sum", "prod", "mean") and to and np.dtype(to).kind in "iu":
        return True
    # an in-place op or setitem storing floats into an int array, a float scalar into int
    return s.kind == "inplace" and any(t.startswith("float") or t.startswith("np.float") for t in m.sig)


def _int_neg_power(m):
    return (m.kind == "numpy-raises" and m.op in ("power", "ipower") and m.np_out.exc is not None
            and "negative integer powers" in str(m.np_out.exc))


def _int_reciprocal_zero(m):
    return m.kind == "value" and m.op == "reciprocal" and _is_int(_dt(m, 0))


def _msg(o):
    return str(o.exc) if o.exc is not None else ""


class Known:
    def __init__(self, name, item, reason, match, probe, depends_on=None):
        self.name, self.item, self.reason, self.match, self.probe = name, item, reason, match, probe
        self.depends_on = depends_on  # what else decides whether it shows (NumPy's version, a math library)
        self.hits = 0


def _probe(np_fn, lm_fn):
    """True when numpy and loom still disagree on this probe (value incl. the sign of NaNs, dtype, shape
    or exception class)."""
    def outcome(fn, xp):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                r = fn(xp)
            if isinstance(r, loom.ndarray):
                r = r.get()
            return ("ok", np.asarray(r))
        except Exception as e:  # noqa: BLE001
            return ("exc", exc_class(e))
    a, b = outcome(np_fn, np), outcome(lm_fn, loom)
    if a[0] != b[0]:
        return True
    if a[0] == "exc":
        return a[1] is not b[1]
    x, y = a[1], b[1]
    if x.dtype != y.dtype or x.shape != y.shape:
        return True
    if x.dtype.kind == "f":
        return not (np.array_equal(x, y, equal_nan=True) and np.array_equal(np.signbit(x), np.signbit(y)))
    return not np.array_equal(x, y)


def _same(fn):
    return lambda: _probe(fn, fn)


KNOWN = [
    # ---- documented semantics (README "Semantics notes"): kernels cannot raise ----
    Known("float-to-int-cast", "README: float to int casts saturate",
          "NumPy leaves NaN/inf/out-of-range float -> int undefined (x86: INT_MIN); loom saturates",
          _float_to_int_cast,
          _same(lambda xp: xp.asarray(np.array([np.nan, 1e300], dtype=np.float64)).astype("int32"))),
    Known("nan-sign", "IEEE 754: the sign of a NaN from an invalid operation is unspecified",
          "x86 libm makes log(-1) etc. a negative NaN, SLEEF a positive one: copysign(x, that NaN) differs "
          "in sign only",
          lambda m: m.kind == "value" and m.op == "copysign" and m.pair is not None
          and abs(float(m.pair[0])) == abs(float(m.pair[1])),
          _same(lambda xp: xp.copysign(1.0, xp.log1p(xp.asarray(np.full(64, -6.0))))),
          depends_on="the math libraries: NumPy's build and loom's device (SLEEF on the host, the GPU's library)"),
    Known("where-python-int-wraps", "NumPy 2.4 behaviour (README: semantics notes)",
          "np.where(c, 65535, int8_array) wraps the Python int silently (-1) and, with shapes that do not "
          "broadcast, raises their ValueError; loom raises OverflowError first, as NEP 50 and NumPy 2.5's where do "
          "for an out-of-range Python int (2.5 converts its scalars before it broadcasts)",
          lambda m: m.op == "where" and m.kind in ("loom-raises", "exception-class")
          and isinstance(m.lm_out.exc, OverflowError),
          _same(lambda xp: xp.where(xp.asarray(np.array([True])), 65535, xp.asarray(np.array([1], dtype=np.int8)))),
          depends_on="NumPy's version (a NumPy that raises OverflowError here agrees with loom)"),
    Known("int-negative-power", "README: integer power with a negative exponent",
          "NumPy raises ValueError for int ** negative int; a kernel cannot raise, loom gives 1/-1/0",
          _int_neg_power,
          _same(lambda xp: xp.asarray(np.array([2], dtype=np.int32)) ** xp.asarray(np.array([-1], dtype=np.int32)))),
    Known("int-reciprocal-zero", "README: integer reciprocal",
          "NumPy's integer 1/0 is platform-defined (x86: INT_MIN for int32/int64, 0 otherwise); loom gives 0",
          lambda m: _int_reciprocal_zero(m) and "0" in m.detail,
          _same(lambda xp: xp.reciprocal(xp.asarray(np.array([0], dtype=np.int32))))),
    # ---- Python-layer bugs of issue 10 (python/ is being split; the fixes land there) ----
    Known("axis-beyond-c-int", "README: semantics notes",
          "an axis number beyond 32 bits is loom's AxisError (out of bounds, as any other); NumPy fails to "
          "convert it to a C int first: ValueError or OverflowError, by function",
          lambda m: m.step.kind == "reduce" and m.kind == "exception-class"
          and isinstance(m.lm_out.exc, np.exceptions.AxisError)
          and isinstance(m.np_out.exc, (ValueError, OverflowError)) and "C int" in str(m.np_out.exc),
          _same(lambda xp: xp.sum(xp.asarray(np.arange(3)), axis=2**32))),
    Known("reduce-0d-int-axis", "found by this fuzzer (python layer)",
          "a.sum(axis=0) or axis=-1 of a 0-d array raises AxisError; NumPy accepts an int axis 0 / -1 there "
          "(a tuple (0,) is an AxisError in both)",
          lambda m: m.step.kind == "reduce" and m.kind == "loom-raises" and isinstance(m.lm_out.exc, IndexError)
          and m.step.meta.get("kw", {}).get("axis") in (0, -1),
          _same(lambda xp: xp.sum(xp.asarray(np.float64(2.0)), axis=0))),
]


def _iadd_bad(xp):
    t = xp.asarray(np.zeros(2, dtype=np.int16))
    t /= xp.asarray(np.ones(5))
    return t


def classify(mismatches):
    """(unexpected, known) lists; each known hit is counted on its entry."""
    unexpected, known = [], []
    for m in mismatches:
        for k in KNOWN:
            try:
                hit = k.match(m)
            except Exception:  # noqa: BLE001 - a predicate that cannot judge: not a match
                hit = False
            if hit:
                k.hits += 1
                known.append((k, m))
                break
        else:
            unexpected.append(m)
    return unexpected, known


def campaign(seeds, deadline=None, on_mismatch=None):
    """Runs the seeds (until deadline, a time.monotonic() value); returns (graphs run, unexpected,
    known) with one Mismatch per distinct class (the first seen) in `unexpected`."""
    classes, known = {}, []
    n = 0
    for seed in seeds:
        if deadline is not None and time.monotonic() > deadline:
            break
        mism = fuzz_one(seed)
        n += 1
        un, kn = classify(mism)
        known.extend(kn)
        for m in un:
            if m.key() not in classes:
                classes[m.key()] = [m, 0]
                if on_mismatch:
                    on_mismatch(m)
            classes[m.key()][1] += 1
    return n, classes, known


# ---- pytest -------------------------------------------------------------------------------------------
def test_fuzz_numpy_bounded():
    """A bounded run on every CI run: fixed seeds, every mismatch must be a known deviation."""
    n = int(os.environ.get("LOOM_FUZZ_PY_GRAPHS", "250"))
    first = int(os.environ.get("LOOM_FUZZ_PY_SEED", "1"))
    deadline = time.monotonic() + float(os.environ.get("LOOM_FUZZ_PY_SECONDS", "150"))
    ran, classes, known = campaign(range(first, first + n), deadline)
    report = "\n\n".join(m.describe() + f"\n  ({count} programs)" for m, count in classes.values())
    assert not classes, f"{len(classes)} unexpected mismatch classes in {ran} graphs:\n\n{report}"
    assert ran >= min(n, 50), f"only {ran} graphs ran before the deadline"


# Seeds of scripts/fuzz_numpy.py's long runs that found a class (the H200 host run of 2026-12-01, NumPy 2.5.2):
# 500140 500253 where's OverflowError for a Python int before its broadcast error; 501474 log1p of the
# smallest subnormal; 503023 fill of a bool array with 2**64; 503835 remainder(hypot(t, x), t) with two
# inexact steps whose replays cancelled; 504727 greater(2**64 - 1, bool_array, dtype=bool). The H200 GPU run
# (NumPy 2.5): 700402 max(v, axis=()) of a GPU array came back on the host (v3 >= it then mixed devices).
# (H200 run 2026-12-02): 2865673179767902982 full((), 2**63 + k, dtype=bool) (NumPy: OverflowError);
# 6865818588193135110 clip(int16, 1e30, 2**64) (NumPy drops an int bound past x's range before promoting).
# (H200 runs 2026-12-02, session 9): 7497455554265651678 abs(int16) // max(abs(int16)) on the GPU (ptxas took
# abs.s16 as non-negative: +32768); 1417870176320185357 argmin over arctan2(x, 3 x), values 1 ulp apart
# (a near tie: _arg_near_tie). (Host run 2026-12-06, session 34): 6019768508871736576 where(c, int16,
# int16.astype(uint64)) of a 2-d broadcast (LLVM 19's SLP vectorizer took uitofp(sext x) for uitofp(x):
# codegen/pipeline.c); 7625961116623100201 exp2(x) // exp2(x) 0 where one kernel's scalar path ran SLEEF's
# scalar exp2 and another's the AVX-512 variant (codegen/math.c lanes_fn).
REGRESSION_SEEDS = [500140, 500253, 501474, 503023, 503835, 504727, 700402, 2865673179767902982, 6865818588193135110,
                    7497455554265651678, 1417870176320185357, 6019768508871736576, 7625961116623100201]


def test_arg_near_tie_accepts_ulp_ties_only() -> None:
    """A pick 1 ulp from NumPy's is a near tie; a pick of a clearly larger value is a real mismatch."""
    x = np.array([[1.0, np.nextafter(np.float32(1.0), np.float32(2)), 3.0], [5.0, 2.0, 2.5]], dtype=np.float32)
    step = Step("reduce", "argmin", None, [0], "", meta={"kw": {"axis": -1}})
    vals = [Outcome(x), Outcome(np.argmin(x, axis=-1))]
    assert _arg_near_tie(step, vals, [vals], np.array([1, 1]))      # row 0: 1 ulp apart
    assert not _arg_near_tie(step, vals, [vals], np.array([2, 1]))  # row 0: 3.0 is not a tie with 1.0
    assert not _arg_near_tie(step, vals, [vals], np.array([0, 2]))  # row 1: 2.5 vs 2.0
    step_max = Step("reduce", "argmax", None, [0], "", meta={"kw": {"axis": None}})
    assert not _arg_near_tie(step_max, [Outcome(x), Outcome(np.argmax(x))], [[Outcome(x)]], np.array(1))


@pytest.mark.parametrize("seed", REGRESSION_SEEDS)
def test_fuzz_numpy_regression_seed(seed: int) -> None:
    unexpected, _known = classify(fuzz_one(seed))
    report = "\n\n".join(m.describe() for m in unexpected)
    assert not unexpected, f"seed {seed}:\n{report}"


# ---- the library fixes those seeds asked for, each against NumPy's own answer -------------------------
def test_log1p_of_tiny_values_is_the_value() -> None:
    for dt in (np.float64, np.float32, np.float16):
        fi = np.finfo(dt)
        x = np.array([fi.smallest_subnormal, -fi.smallest_subnormal, 3 * fi.smallest_subnormal, fi.tiny, -fi.tiny,
                      fi.eps * 1e-3, 0.0, -0.0] * 3, dtype=dt)
        got = loom.log1p(loom.asarray(x)).get()
        want = np.log1p(x)
        assert got.dtype == want.dtype
        assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want)), (dt, got, want)


def test_where_python_int_range_before_broadcast() -> None:
    # NumPy 2.5 converts where's Python scalars first: OverflowError even where the shapes do not broadcast
    c = loom.asarray(np.zeros(3, dtype=bool))
    with pytest.raises(OverflowError):
        loom.where(c, loom.asarray(np.zeros(2, dtype=np.int8)), 1000)
    with pytest.raises(OverflowError):
        loom.where(c, 2**64 - 1, loom.asarray(np.zeros(2, dtype=np.int32)))
    with pytest.raises(ValueError):  # in range: the broadcast error
        loom.where(c, loom.asarray(np.zeros(2, dtype=np.int8)), 100)


def test_bool_array_takes_any_python_ints_truth() -> None:
    for v in (2**64, -2**70, 2**63, 0):
        want = np.zeros((2, 2), dtype=bool)
        want.fill(v)
        a = loom.zeros((2, 2), dtype=bool)
        a.fill(v)
        assert np.array_equal(a.get(), want)
        want[0, 1] = not v
        a[0, 1] = not v
        want[1] = v
        a[1] = v
        assert np.array_equal(a.get(), want)


def test_comparison_with_dtype_keeps_numpys_python_int_rules() -> None:
    b = np.array([False, True])
    i8 = np.array([1, -2], dtype=np.int8)
    for v in (2**63, 2**64 - 1, -2**63 - 1):
        with pytest.raises(OverflowError):  # beside a bool array the int goes through a C long
            np.greater(v, b, dtype="bool")
        with pytest.raises(OverflowError):
            loom.greater(v, loom.asarray(b), dtype="bool")
        # beside an integer array NumPy 2 compares exactly
        assert np.array_equal(loom.greater(v, loom.asarray(i8), dtype="bool").get(), np.greater(v, i8, dtype="bool"))


@pytest.mark.parametrize("entry", KNOWN, ids=[k.name for k in KNOWN])
def test_known_deviation_still_deviates(entry):
    """Each listed deviation still shows on its probe; a fixed one must leave the list. One that depends
    on the environment (NumPy's version, the math library of the device) is skipped where it does not
    show, saying so."""
    shows = entry.probe()
    if not shows and entry.depends_on:
        pytest.skip(f"known deviation '{entry.name}' does not show here (it depends on {entry.depends_on}; "
                    f"NumPy {np.__version__}, loom on {loom.asarray(np.zeros(1)).device})")
    assert shows, (f"known deviation '{entry.name}' ({entry.item}) no longer shows: it was fixed; "
                           f"remove it from KNOWN in tests/python/test_fuzz_numpy.py")
