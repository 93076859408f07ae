"""libs.py: one adapter per library, so that a workload's function (written once, see workloads.py) runs
under each of them. What each peer runs:

  numpy         the function with xp = numpy (+ scipy.special.erf); single-threaded ufuncs.
  loom          @loom.fuse of the function with xp = loom: traced once per signature, then one
                evaluation (all outputs) per call. loom_lazy: the plain lazy API, the graph built again
                on every call, then loom.eval of the outputs.
  numexpr       the function run on tracer arrays that turn each elementwise chain into ONE
                numexpr.evaluate string (all threads); reductions, casts, integer division, xor,
                rint, isfinite, and dtypes numexpr lacks (float16, int8, uint8) run in NumPy on the
                evaluated chain, as a numexpr user would write it. Python floats meeting float32 arrays
                are passed as float32 variables (numexpr would otherwise compute in float64). A
                workload with no chain numexpr can take is reported as not expressible.
  numba         numba.njit(parallel=True) of the function's own source with xp bound to numpy
                (loop-free array expressions; Numba's ParallelAccelerator fuses them); when the
                parallel compile fails, plain njit ("serial" in the notes); unsupported functions
                (axis/keepdims reductions, astype, erf, float16) make it not expressible.
  jax           jax.jit of the function with xp = jax.numpy (+ jax.scipy.special.erf), x64 enabled.
  torch         eager PyTorch through a thin NumPy-name adapter (TorchNS); where the workload names a
                fused native op (F.layer_norm, torch.softmax, F.gelu, ...) that op runs instead.
  torch_compile torch.compile (Inductor) of the function with xp = TorchNS (the generic expression).
  cupy          CuPy with xp = cupy (+ cupyx.scipy.special.erf); cupy_fuse: cupy.fuse of the function.
"""
import ast
import inspect
import os
import textwrap

import numpy as np


class NotExpressible(Exception):
    """The library cannot run this workload (reported as null with the reason)."""


class Namespace:
    """A module with a few names replaced or added."""

    def __init__(self, module, **over):
        self._m = module
        self.__dict__.update(over)

    def __getattr__(self, name):
        try:
            return getattr(self._m, name)
        except AttributeError:
            raise NotExpressible(f"{self._m.__name__} has no {name}") from None


def _numpy_erf():
    try:
        from scipy.special import erf
        return erf
    except ImportError:  # slow but exact enough for a reference
        import math
        erf64 = np.vectorize(math.erf, otypes=[np.float64])

        def erf(x):  # scipy's dtype rule: a float array keeps its dtype, anything else is float64
            x = np.asarray(x)
            return erf64(x).astype(x.dtype if x.dtype.kind == "f" else np.float64)
        return erf


def as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


# ---- PyTorch: NumPy names over torch ------------------------------------------------------------------
class TorchNS:
    """NumPy's names for the functions the workloads call, on torch tensors of one device."""

    def __init__(self, torch, device):
        self.t, self.device = torch, device
        for n in ("float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "int64",
                  "complex64"):
            setattr(self, n, getattr(torch, n))
        self.bool_ = torch.bool
        for n in ("exp", "log", "log1p", "expm1", "tanh", "sqrt", "erf", "abs", "sin", "cos", "isfinite",
                  "isnan", "log2", "log10", "sign", "sinh", "cosh", "angle"):
            setattr(self, n, getattr(torch, n))
        self.arcsin, self.rint, self.arccosh, self.degrees = torch.asin, torch.round, torch.acosh, torch.rad2deg
        self.maximum = _Accumulating(self.maximum, lambda x, axis=0: torch.cummax(x, dim=axis).values)

    def __getattr__(self, name):
        raise NotExpressible(f"the torch adapter has no {name}")

    def _red(self, fn, x, axis, keepdims, **kw):
        if axis is None:
            r = fn(x, **kw)
            return r.reshape((1,) * x.ndim) if keepdims else r
        return fn(x, dim=axis, keepdim=keepdims, **kw)

    def sum(self, x, axis=None, keepdims=False):
        return self._red(self.t.sum, x, axis, keepdims)

    def mean(self, x, axis=None, keepdims=False):
        if not (x.is_floating_point() or x.is_complex()):   # NumPy: the mean of bool / int is float64
            x = x.to(self.t.float64)
        return self._red(self.t.mean, x, axis, keepdims)

    def max(self, x, axis=None, keepdims=False):
        return self._red(self.t.amax, x, axis, keepdims) if axis is not None else self._red(
            lambda v: v.max(), x, None, keepdims)

    def min(self, x, axis=None, keepdims=False):
        return self._red(self.t.amin, x, axis, keepdims) if axis is not None else self._red(
            lambda v: v.min(), x, None, keepdims)

    def var(self, x, axis=None, keepdims=False):
        return self._red(self.t.var, x, axis, keepdims, correction=0)

    def std(self, x, axis=None, keepdims=False):
        return self._red(self.t.std, x, axis, keepdims, correction=0)

    def any(self, x, axis=None, keepdims=False):
        return self._red(self.t.any, x, axis, keepdims)

    def all(self, x, axis=None, keepdims=False):
        return self._red(self.t.all, x, axis, keepdims)

    def cumsum(self, x, axis):
        return self.t.cumsum(x, dim=axis)

    def cumprod(self, x, axis):
        return self.t.cumprod(x, dim=axis)

    def prod(self, x, axis=None, keepdims=False):
        return self._red(self.t.prod, x, axis, keepdims)

    def hypot(self, a, b):
        return self.t.hypot(a, b)

    def arctan2(self, a, b):
        return self.t.atan2(a, b)

    def transpose(self, x, axes):
        return x.permute(*axes)

    def argmax(self, x, axis=None):
        return self.t.argmax(x, dim=axis)

    def argmin(self, x, axis=None):
        return self.t.argmin(x, dim=axis)

    def where(self, c, a, b):
        return self.t.where(c, a, b)

    def maximum(self, a, b):
        if not isinstance(a, self.t.Tensor):
            a, b = b, a
        if not isinstance(b, self.t.Tensor):
            return self.t.clamp_min(a, b)
        return self.t.maximum(a, b)

    def minimum(self, a, b):
        if not isinstance(a, self.t.Tensor):
            a, b = b, a
        if not isinstance(b, self.t.Tensor):
            return self.t.clamp_max(a, b)
        return self.t.minimum(a, b)

    def clip(self, x, lo, hi):
        return self.t.clamp(x, lo, hi)

    def astype(self, x, dtype):
        return x.to(dtype)

    def arange(self, n):
        return self.t.arange(n, device=self.device)

    def flip(self, x, axis=None):
        axis = tuple(range(x.ndim)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
        return self.t.flip(x, dims=axis)


class _Accumulating:
    """A binary function with NumPy's ufunc method accumulate (xp.maximum.accumulate(x, axis=0))."""

    def __init__(self, f, accumulate):
        self.f, self.accumulate = f, accumulate

    def __call__(self, *a, **kw):
        return self.f(*a, **kw)


# ---- numexpr: a tracer that writes each elementwise chain as one numexpr string -----------------------
_NE_DTYPES = {np.dtype(t) for t in ("bool", "int32", "int64", "float32", "float64")}
_NE_FUNCS = {"exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
             "sinh", "cosh", "tanh", "abs", "log10", "arcsinh", "arccosh", "arctanh"}


class NETrace:
    """One traced call: names the arrays and counts numexpr.evaluate calls."""

    def __init__(self, ne):
        self.ne, self.n, self.evaluations = ne, 0, 0

    def name(self):
        self.n += 1
        return f"v{self.n}"

    def leaf(self, arr):
        arr = np.asarray(arr)
        nm = self.name()
        return NEArr(self, nm, {nm: arr}, arr.dtype, arr.shape)


class NEArr:
    __array_priority__ = 100

    def __init__(self, tr, expr, vars, dtype, shape):
        self.tr, self.expr, self.vars, self.dtype, self.shape = tr, expr, vars, np.dtype(dtype), tuple(shape)

    @property
    def ndim(self):
        return len(self.shape)

    def value(self):
        """The numpy array of this chain (one numexpr.evaluate unless it is a plain array)."""
        if len(self.vars) == 1 and self.expr in self.vars:
            return self.vars[self.expr]
        self.tr.evaluations += 1
        r = self.tr.ne.evaluate(self.expr, local_dict=self.vars)
        return r.astype(self.dtype, copy=False) if r.dtype != self.dtype else r

    def _np(self, fn, *args, **kw):
        return self.tr.leaf(fn(self.value(), *args, **kw))

    def __getitem__(self, key):
        return self._np(lambda v: v[key])

    @property
    def T(self):
        return self._np(lambda v: v.T)

    def _bin(self, op, other, rev=False):
        return NENS.binop(self.tr, op, other, self) if rev else NENS.binop(self.tr, op, self, other)

    __add__ = lambda s, o: s._bin("+", o)  # noqa: E731
    __radd__ = lambda s, o: s._bin("+", o, True)  # noqa: E731
    __sub__ = lambda s, o: s._bin("-", o)  # noqa: E731
    __rsub__ = lambda s, o: s._bin("-", o, True)  # noqa: E731
    __mul__ = lambda s, o: s._bin("*", o)  # noqa: E731
    __rmul__ = lambda s, o: s._bin("*", o, True)  # noqa: E731
    __truediv__ = lambda s, o: s._bin("/", o)  # noqa: E731
    __rtruediv__ = lambda s, o: s._bin("/", o, True)  # noqa: E731
    __pow__ = lambda s, o: s._bin("**", o)  # noqa: E731
    __rpow__ = lambda s, o: s._bin("**", o, True)  # noqa: E731
    __floordiv__ = lambda s, o: s._bin("//", o)  # noqa: E731
    __mod__ = lambda s, o: s._bin("%", o)  # noqa: E731
    __and__ = lambda s, o: s._bin("&", o)  # noqa: E731
    __rand__ = lambda s, o: s._bin("&", o, True)  # noqa: E731
    __or__ = lambda s, o: s._bin("|", o)  # noqa: E731
    __xor__ = lambda s, o: s._bin("^", o)  # noqa: E731
    __rshift__ = lambda s, o: s._bin(">>", o)  # noqa: E731
    __lshift__ = lambda s, o: s._bin("<<", o)  # noqa: E731
    __lt__ = lambda s, o: s._bin("<", o)  # noqa: E731
    __le__ = lambda s, o: s._bin("<=", o)  # noqa: E731
    __gt__ = lambda s, o: s._bin(">", o)  # noqa: E731
    __ge__ = lambda s, o: s._bin(">=", o)  # noqa: E731
    __eq__ = lambda s, o: s._bin("==", o)  # noqa: E731
    __ne__ = lambda s, o: s._bin("!=", o)  # noqa: E731

    def __neg__(self):
        return NENS.unary(self.tr, "-", self)

    def __invert__(self):
        return NENS.unary(self.tr, "~", self)

    __hash__ = None


_PY_OPS = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "**": np.power,
           "//": np.floor_divide, "%": np.remainder, "&": np.bitwise_and, "|": np.bitwise_or,
           "^": np.bitwise_xor, ">>": np.right_shift, "<<": np.left_shift, "<": np.less,
           "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal, "!=": np.not_equal}
_NE_OPS = set(_PY_OPS) - {"//", "^"}


class NENS:
    """The `xp` of the numexpr tracer."""

    def __init__(self, tr):
        self.tr = tr
        for n in ("float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "int64", "complex64",
                  "bool_", "pi"):
            setattr(self, n, getattr(np, n))

    def __getattr__(self, name):
        raise NotExpressible(f"the numexpr tracer has no {name}")

    @staticmethod
    def _operand(tr, x, like):
        """(expr, vars, sample) of an operand; Python scalars take a float array's dtype (NEP 50)."""
        if isinstance(x, NEArr):
            return x.expr, x.vars, np.ones(1, x.dtype)
        if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
            ld = like.dtype if like is not None else None
            if isinstance(x, bool):
                return ("True" if x else "False"), {}, x
            if ld is not None and ld.kind == "f" and ld != np.float64:
                nm = tr.name()
                return nm, {nm: np.asarray(x, ld)}, x
            return repr(x), {}, x
        leaf = tr.leaf(x)
        return leaf.expr, leaf.vars, np.ones(1, leaf.dtype)

    @staticmethod
    def _node(tr, expr, vars, dtype, shape):
        return NEArr(tr, expr, vars, dtype, shape)

    @staticmethod
    def binop(tr, op, a, b):
        like = a if isinstance(a, NEArr) else b
        ok = op in _NE_OPS and all(not isinstance(v, NEArr) or v.dtype in _NE_DTYPES for v in (a, b))
        with np.errstate(all="ignore"):
            ea, va, sa = NENS._operand(tr, a, like)
            eb, vb, sb = NENS._operand(tr, b, like)
            dtype = _PY_OPS[op](sa, sb).dtype
        if not ok or dtype not in _NE_DTYPES:
            av = a.value() if isinstance(a, NEArr) else a
            bv = b.value() if isinstance(b, NEArr) else b
            return tr.leaf(_PY_OPS[op](av, bv))
        shape = np.broadcast_shapes(*(v.shape for v in (a, b) if isinstance(v, NEArr)))
        return NEArr(tr, f"({ea} {op} {eb})", {**va, **vb}, dtype, shape)

    @staticmethod
    def unary(tr, op, x):
        if x.dtype not in _NE_DTYPES:
            return tr.leaf(np.negative(x.value()) if op == "-" else np.invert(x.value()))
        return NEArr(tr, f"{op}({x.expr})", x.vars, x.dtype, x.shape)

    def _func(self, name, x):
        if not isinstance(x, NEArr):
            x = self.tr.leaf(x)
        dtype = getattr(np, name)(np.ones(1, x.dtype)).dtype
        if x.dtype not in _NE_DTYPES or dtype != x.dtype:
            return self.tr.leaf(getattr(np, name)(x.value()))
        return NEArr(self.tr, f"{name}({x.expr})", x.vars, dtype, x.shape)

    def where(self, c, a, b):
        like = a if isinstance(a, NEArr) else b if isinstance(b, NEArr) else None
        ec, vc, _ = self._operand(self.tr, c, None)
        ea, va, sa = self._operand(self.tr, a, like)
        eb, vb, sb = self._operand(self.tr, b, like)
        dtype = np.where(True, sa, sb).dtype
        arrs = [v for v in (c, a, b) if isinstance(v, NEArr)]
        if dtype not in _NE_DTYPES or any(v.dtype not in _NE_DTYPES for v in arrs):
            val = [v.value() if isinstance(v, NEArr) else v for v in (c, a, b)]
            return self.tr.leaf(np.where(*val))
        shape = np.broadcast_shapes(*(v.shape for v in arrs))
        return NEArr(self.tr, f"where({ec}, {ea}, {eb})", {**vc, **va, **vb}, dtype, shape)

    def maximum(self, a, b):
        return self.where(a > b, a, b) if isinstance(a, NEArr) else self.where(b > a, b, a)

    def minimum(self, a, b):
        return self.where(a < b, a, b) if isinstance(a, NEArr) else self.where(b < a, b, a)

    def clip(self, x, lo, hi):
        return self.where(x < lo, lo, self.where(x > hi, hi, x))

    def arange(self, n):
        return self.tr.leaf(np.arange(n))

    def _host(self, fn):
        def f(x, *a, **kw):
            return self.tr.leaf(fn(x.value() if isinstance(x, NEArr) else x, *a, **kw))
        return f


def _ne_namespace(tr):
    ns = NENS(tr)
    for name in _NE_FUNCS:
        setattr(ns, name, (lambda n: lambda x: ns._func(n, x))(name))
    for name in ("sum", "mean", "max", "min", "argmax", "argmin", "var", "std", "any", "all", "rint", "isfinite",
                 "isnan", "flip", "sign", "log2", "degrees", "angle"):
        setattr(ns, name, ns._host(getattr(np, name)))
    ns.astype = ns._host(lambda x, dt: x.astype(dt))
    ns.maximum = _Accumulating(ns.maximum, ns._host(np.maximum.accumulate))
    return ns


# ---- Numba: the workload's own source compiled with xp bound to numpy ---------------------------------
def numba_source_fn(fn):
    """A copy of fn without its first parameter (xp), defined in a namespace where xp is numpy."""
    src = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(src)
    fdef = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    fdef.decorator_list = []
    fdef.args.args = fdef.args.args[1:]
    tree.body = [fdef]
    g = {"xp": np}
    exec(compile(tree, f"<numba {fn.__name__}>", "exec"), g)
    return g[fdef.name]


# ---- the adapters -------------------------------------------------------------------------------------
class Lib:
    """name; is_loom; build(w) -> callable(*args); prepare(arrays) -> args; sync(out); to_ref(out)."""
    is_loom = False
    gpu_timer = None   # "events" when CUDA events of the library time it

    def __init__(self, env):
        self.env = env   # run.Env: device ("cpu"/"cuda"), reference helpers

    def prepare(self, arrays):
        return arrays

    def sync(self, out):
        pass

    def native_out(self, out):
        return as_tuple(out)


class NumpyLib(Lib):
    name = "numpy"

    def __init__(self, env):
        super().__init__(env)
        self.ns = Namespace(np, erf=_numpy_erf(), astype=lambda x, dt: np.asarray(x).astype(dt))

    def build(self, w):
        return lambda *a: w.fn(self.ns, *a)


class NumexprLib(Lib):
    name = "numexpr"

    def __init__(self, env):
        super().__init__(env)
        import numexpr
        numexpr.set_num_threads(os.cpu_count() or 1)
        self.ne = numexpr

    def build(self, w):
        def call(*a):
            tr = NETrace(self.ne)
            ns = _ne_namespace(tr)
            out = as_tuple(w.fn(ns, *[tr.leaf(x) for x in a]))
            res = tuple(o.value() if isinstance(o, NEArr) else o for o in out)
            call.evaluations = tr.evaluations
            return res
        call.evaluations = 0
        return call

    def check_used(self, f):
        if getattr(f, "evaluations", 0) == 0:
            raise NotExpressible("no elementwise chain in numexpr's dtypes (only NumPy would run)")


class NumbaLib(Lib):
    name = "numba"

    def __init__(self, env):
        super().__init__(env)
        import numba
        self.numba = numba
        self.notes = {}

    def build(self, w):
        if any(np.dtype(i.dtype) == np.float16 for i in w.inputs):
            raise NotExpressible("numba has no float16")
        plain = numba_source_fn(w.fn)
        par = self.numba.njit(parallel=True)(plain)
        ser = self.numba.njit(plain)
        state = {"f": None}

        def call(*a):
            if state["f"] is None:
                try:
                    r = par(*a)
                    state["f"] = par
                    return r
                except Exception as e_par:  # noqa: BLE001 (numba raises many kinds)
                    try:
                        r = ser(*a)
                    except Exception as e:  # noqa: BLE001
                        raise NotExpressible(f"numba: {type(e).__name__}: {_first_line(e)}") from None
                    state["f"] = ser
                    self.notes[w.name] = f"serial njit (parallel failed: {_first_line(e_par)[:80]})"
                    return r
            return state["f"](*a)
        return call


def _first_line(e):
    s = str(e).strip().splitlines()
    return s[0][:200] if s else ""


class JaxLib(Lib):
    name = "jax"

    def __init__(self, env):
        super().__init__(env)
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import jax.scipy.special as jss
        self.jax, self.jnp = jax, jnp
        self.ns = Namespace(jnp, erf=jss.erf, astype=lambda x, dt: x.astype(dt))
        devs = [d for d in jax.devices() if (d.platform == "gpu") == (env.device == "cuda")]
        if not devs:
            raise RuntimeError(f"jax has no {env.device} device ({jax.devices()})")
        self.dev = devs[0]

    def prepare(self, arrays):
        if self.env.device == "cuda":
            return [self.jax.dlpack.from_dlpack(a) if hasattr(a, "__dlpack__") else self.jax.device_put(
                a, self.dev) for a in arrays]
        return [self.jax.device_put(a, self.dev) for a in arrays]

    def build(self, w):
        return self.jax.jit(lambda *a: w.fn(self.ns, *a))

    def sync(self, out):
        for o in as_tuple(out):
            o.block_until_ready()


class TorchLib(Lib):
    name = "torch"
    gpu_timer = "events"

    def __init__(self, env):
        super().__init__(env)
        import torch
        self.torch = torch
        self.ns = TorchNS(torch, env.device)

    def prepare(self, arrays):
        t = self.torch
        if self.env.device == "cuda":
            return [a if isinstance(a, t.Tensor) else t.from_dlpack(a) for a in arrays]
        return [t.from_numpy(np.ascontiguousarray(a)) for a in arrays]

    def build(self, w):
        nat = w.native.get("torch")
        if nat is not None:
            return lambda *a: nat(self.torch, *a)
        return lambda *a: w.fn(self.ns, *a)

    def sync(self, out):
        if self.env.device == "cuda":
            self.torch.cuda.synchronize()

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)


class TorchCompileLib(TorchLib):
    name = "torch_compile"

    def build(self, w):
        self.torch._dynamo.reset()
        return self.torch.compile(lambda *a: w.fn(self.ns, *a), dynamic=False)


class CupyLib(Lib):
    name = "cupy"
    gpu_timer = "events"

    def __init__(self, env):
        super().__init__(env)
        import cupy
        import cupyx.scipy.special as css
        self.cp = cupy
        self.ns = Namespace(cupy, erf=css.erf, astype=lambda x, dt: x.astype(dt))

    def prepare(self, arrays):
        return [self.cp.from_dlpack(a) for a in arrays]

    def build(self, w):
        return lambda *a: w.fn(self.ns, *a)

    def sync(self, out):
        self.cp.cuda.get_current_stream().synchronize()

    def event(self):
        return _CupyEvent(self.cp)


class _CupyEvent:
    def __init__(self, cp):
        self.cp, self.e = cp, cp.cuda.Event()

    def record(self):
        self.e.record()

    def synchronize(self):
        self.e.synchronize()

    def elapsed_time(self, end):
        return self.cp.cuda.get_elapsed_time(self.e, end.e)


class CupyFuseLib(CupyLib):
    name = "cupy_fuse"

    def build(self, w):
        return self.cp.fuse(lambda *a: w.fn(self.ns, *a))


class LoomLib(Lib):
    name = "loom"
    is_loom = True
    gpu_timer = "events"

    def __init__(self, env):
        super().__init__(env)
        import loom
        self.loom = loom

    def prepare(self, arrays):
        return [self.loom.asarray(a) for a in arrays]

    def build(self, w):
        return self.loom.fuse(kernel_name=w.name)(lambda *a: w.fn(self.loom, *a))

    def sync(self, out):
        self.loom.eval(*as_tuple(out))
        if self.env.device == "cuda":
            self.loom.cuda.Device().synchronize()

    def event(self):
        return _LoomEvent(self.loom)

    def kernels(self):
        return int(self.loom.stats()["last_eval_kernels"])


class _LoomEvent:
    def __init__(self, loom):
        self.loom, self.e = loom, loom.cuda.Event()

    def record(self):
        self.e.record()

    def synchronize(self):
        self.e.synchronize()

    def elapsed_time(self, end):
        return self.loom.cuda.get_elapsed_time(self.e, end.e)


class LoomLazyLib(LoomLib):
    name = "loom_lazy"

    def build(self, w):
        def call(*a):
            out = w.fn(self.loom, *a)
            self.loom.eval(*as_tuple(out))
            return out
        return call


CPU_LIBS = [LoomLib, LoomLazyLib, NumpyLib, NumexprLib, NumbaLib, JaxLib, TorchLib, TorchCompileLib]
GPU_LIBS = [LoomLib, LoomLazyLib, TorchLib, TorchCompileLib, JaxLib, CupyLib, CupyFuseLib]
