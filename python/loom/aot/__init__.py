"""loom.aot: ahead-of-time kernel bundles from Python, and loading them::

    import loom, loom.aot
    @loom.fuse(kernel_name="axpb")
    def axpb(x, y):
        return 2.5 * x + y
    loom.aot.compile([axpb], {axpb: [(("float32", 1), ("float32", 1))]}, targets="host-all,ptx",
                     path="kernels.lbun", emit_c="kernels")
    loom.load_bundle("kernels.lbun", jit=False)   # in production: no compiler runs, others raise

Approach. compile() calls each function once per signature on small NumPy arrays of the signature's
dtypes, ranks and layouts, while libloom captures every kernel the context runs on the host
(loom_bundle_builder_capture_begin/_end); the kernels are keyed by their kernel IR, whose sizes are
run-time parameters, so the examples' sizes do not matter (only layout classes do: a dimension of size 1
or a broadcast is another kernel). Then libloom's bundle builder, the one loomc uses, compiles them for
every target (host x86-64 levels, NVIDIA cubins and PTX) and writes one bundle, optionally with a C
source/header pair for libloomrt. The C API is reached through ctypes on the libloom this package loaded
(loom_aot.h); the context is loom._core's own (_core.context_address()).

A loaded bundle serves every kernel whose signature it holds: @loom.fuse calls, lazy expressions and user
kernels alike run its code and compile nothing (loom.stats()["kernels_compiled"] stays 0). A kernel outside
the bundles JIT-compiles, or raises NotImplementedError when the bundle was loaded with jit=False.

@loom.fuse signatures without tracing (bundle format 1.2, section FUSE): compile() also traces each
@loom.fuse signature twice more, at other sizes (every size > 1 changed) and with other scalar values, and
hands both graphs to libloom (loom_bundle_builder_add_fuse), which keeps the graph in a size-free form if it
rebuilds the second trace exactly; a loaded bundle then rebuilds a call's graph for any sizes in C, and the
Python function does not run (_fuse.Fusion._from_bundle). A graph that depends on the sizes (a reshape
other than adding or dropping axes of size 1, a slice other than whole axes, broadcast_to, a constant
computed from a size, as x.sum() / x.size) or on scalar
values other than as constants, or reads an array that is not an argument, is not kept: its calls trace
as before (still with the bundle's kernels), and compile() says why with a FuseTraceWarning. A call matches
a record by the function's identity (module, qualified name, a digest of its code, defaults, closure and
the globals it reads: _fuse.aot_identity) and its arguments' kinds, dtypes and ranks; so an edited
function, or another Python version (other bytecode), traces again instead of running a stale graph.

Signatures: one per call, a tuple of arguments (or ``Call(*args, **kwargs)`` for keywords such as
ReductionKernel's axis). An argument is Array(dtype, ndim, layout="C", shape=None), a (dtype, ndim) or
(dtype, ndim, layout) tuple, a NumPy array (used as the example itself), or a Python / NumPy scalar
(passed as is; its value is a parameter of the bundled kernel, so any other value runs the same code; only
its type matters). Layouts: "C" (contiguous), "F"
(Fortran order), "strided" (every other element of the last axis), "broadcast" (stride 0 along the first
axis).

Command line: python -m loom.aot MODULE -o BUNDLE [-t TARGETS] [-j N] [--emit-c PATH] ..., where MODULE
(a .py file or a module name) defines LOOM_AOT = {function: [signature, ...], ...} (or a list of
(function, [signatures]) or (function, [signatures], name) tuples).
"""
import ctypes
import os
import re

import numpy

from .. import _core
from .._common import _np_dtype_of

_OK, _INVALID, _SHAPE, _DTYPE, _AXIS, _OOM, _UNSUPPORTED, _BACKEND, _INTERNAL = range(9)
_SHORT = {"bool": "b1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
          "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16", "float32": "f32",
          "float64": "f64"}
_SIZES = (7, 5, 3, 11, 13, 2, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53)  # axis -1, -2, ...: broadcastable


class Array:
    """An array argument of a signature: dtype, rank and layout class ("C", "F", "strided",
    "broadcast"); shape (optional) only picks the example's sizes."""

    def __init__(self, dtype, ndim=None, layout="C", shape=None):
        self.dtype = _np_dtype_of(dtype)
        if shape is not None:
            shape = tuple(int(s) for s in shape)
            ndim = len(shape) if ndim is None else ndim
            if len(shape) != ndim:
                raise ValueError(f"Array: shape {shape} has {len(shape)} dims, not ndim={ndim}")
        if ndim is None or not 0 <= int(ndim) <= 16:
            raise ValueError(f"Array: ndim must be 0..16, got {ndim!r}")
        if layout not in ("C", "F", "strided", "broadcast"):
            raise ValueError(f"Array: layout must be 'C', 'F', 'strided' or 'broadcast', got {layout!r}")
        if layout != "C" and int(ndim) == 0:
            raise ValueError("Array: a 0-d array has no layout but 'C'")
        self.ndim, self.layout, self.shape = int(ndim), layout, shape

    def __repr__(self):
        return f"Array({self.dtype.name!r}, {self.ndim}, {self.layout!r})"

    def tag(self):
        t = _SHORT.get(self.dtype.name, self.dtype.name)
        if self.ndim != 1:
            t += f"r{self.ndim}"
        return t + {"C": "", "F": "F", "strided": "s", "broadcast": "b"}[self.layout]

    def example(self, rng):
        nd = self.ndim
        shape = self.shape if self.shape is not None else tuple(_SIZES[nd - 1 - i] for i in range(nd))
        full = list(shape)
        if self.layout == "strided":
            full[-1] = 2 * full[-1]
        if self.layout == "broadcast":
            full[0] = 1
        dt = self.dtype
        if dt.kind == "b":
            a = rng.random(full) < 0.5
        elif dt.kind in "iu":
            a = rng.integers(1, 10, size=full).astype(dt)
        else:
            a = (rng.random(full) * 1.5 + 0.5).astype(dt)
        if self.layout == "F":
            a = numpy.asfortranarray(a)
        elif self.layout == "strided":
            a = a[..., ::2]
        elif self.layout == "broadcast":
            a = numpy.broadcast_to(a, shape)
        return a


class FuseTraceWarning(UserWarning):
    """compile(): a @loom.fuse signature whose graph depends on the sizes; its calls will trace."""


class Call:
    """A signature with keyword arguments: Call(Array("float32", 2), axis=1)."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


# ---- libloom through ctypes ---------------------------------------------------------------------------
class _FuseArg(ctypes.Structure):  # LoomFuseArg (loom_aot.h)
    _fields_ = [("kind", ctypes.c_int32), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32), ("node", ctypes.c_int32),
                ("i", ctypes.c_int64), ("re", ctypes.c_double), ("im", ctypes.c_double)]


class _Options(ctypes.Structure):
    _fields_ = [("targets", ctypes.c_char_p), ("jobs", ctypes.c_int32), ("progress", ctypes.c_int32),
                ("summary", ctypes.c_int32), ("no_sleef", ctypes.c_int32), ("index_widths", ctypes.c_int32),
                ("ptxas", ctypes.c_char_p), ("producer", ctypes.c_char_p)]


_libloom = None


def _lib():
    global _libloom
    if _libloom is None:
        here = os.path.dirname(os.path.abspath(_core.__file__))
        # the one _core is linked to (same file), installed under its soname (libloom.so.MAJOR.MINOR)
        names = sorted((f for f in os.listdir(here) if re.fullmatch(r"libloom\.so(\.[0-9]+)*", f)), key=len)
        if not names:
            raise ImportError(f"loom.aot: no libloom.so* next to {_core.__file__}")
        lib = ctypes.CDLL(os.path.join(here, names[0]))
        vp, i32, cp = ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p
        sigs = {
            "loom_last_error": (cp, [vp]),
            "loom_bundle_builder_create": (i32, [vp, ctypes.POINTER(vp)]),
            "loom_bundle_builder_destroy": (None, [vp]),
            "loom_bundle_builder_capture_begin": (i32, [vp, cp]),
            "loom_bundle_builder_capture_end": (i32, [vp, ctypes.POINTER(i32)]),
            "loom_bundle_builder_count": (i32, [vp]),
            "loom_bundle_builder_write": (i32, [vp, ctypes.POINTER(_Options), cp]),
            "loom_bundle_emit_c": (i32, [vp, cp, cp, cp, cp]),
            "loom_bundle_describe": (i32, [vp, cp, ctypes.POINTER(ctypes.c_void_p)]),
            "loom_free_string": (None, [vp, vp]),
            "loom_bundle_load": (i32, [vp, cp, ctypes.c_int]),
            "loom_bundle_set_jit": (i32, [vp, ctypes.c_int]),
            "loom_bundle_stats": (i32, [vp, ctypes.POINTER(i32), ctypes.POINTER(ctypes.c_int64)]),
            "loom_bundle_fuse_count": (i32, [vp]),
            "loom_bundle_builder_add_fuse": (i32, [vp, cp, cp, i32, vp, ctypes.POINTER(_FuseArg), ctypes.POINTER(i32), vp,
                                                   ctypes.POINTER(_FuseArg), ctypes.POINTER(i32), i32, i32,
                                                   ctypes.POINTER(i32), ctypes.c_int]),
        }
        for name, (res, args) in sigs.items():
            if not hasattr(lib, name):
                raise NotImplementedError(f"this libloom has no {name}: rebuild loom with AOT bundle support")
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
        _libloom = lib
    return _libloom


def _ctx():
    return ctypes.c_void_p(_core.context_address())


def _check(status, what):
    if status == _OK:
        return
    msg = (_lib().loom_last_error(_ctx()) or b"").decode(errors="replace") or f"{what} failed (status {status})"
    exc = {_INVALID: ValueError, _OOM: MemoryError, _UNSUPPORTED: NotImplementedError, _SHAPE: ValueError,
           _DTYPE: TypeError}.get(status, RuntimeError)
    raise exc(msg)


def _path(p):
    return os.fsencode(os.fspath(p))


# ---- loading ---------------------------------------------------------------------------------------------
def load_bundle(path, jit=True):
    """Loads an AOT bundle into loom's context: kernels whose signature it holds run its code for this
    CPU (or GPU) and are never compiled. jit=False (production mode): any other kernel raises
    NotImplementedError instead of compiling. Several bundles may be loaded; the first that has a kernel
    serves it."""
    _check(_lib().loom_bundle_load(_ctx(), _path(path), 1 if jit else 0), f"loading bundle {path}")
    if _lib().loom_bundle_fuse_count(_ctx()) > 0:
        from .. import _fuse
        _fuse._bundle_records[0] = True


def set_jit(flag=True):
    """Turns JIT compilation of kernels outside the loaded bundles on or off."""
    _check(_lib().loom_bundle_set_jit(_ctx(), 1 if flag else 0), "set_jit")


def bundle_stats():
    """{'bundles': number loaded, 'kernels_used': bundled kernels used so far}."""
    n, used = ctypes.c_int32(0), ctypes.c_int64(0)
    _check(_lib().loom_bundle_stats(_ctx(), ctypes.byref(n), ctypes.byref(used)), "bundle_stats")
    return {"bundles": n.value, "kernels_used": used.value}


def describe(path):
    """What a bundle holds (targets, entries, kernels, sizes), after checking every checksum."""
    text = ctypes.c_void_p()
    _check(_lib().loom_bundle_describe(_ctx(), _path(path), ctypes.byref(text)), f"describe {path}")
    try:
        return ctypes.string_at(text).decode()
    finally:
        _lib().loom_free_string(_ctx(), text)


# ---- building --------------------------------------------------------------------------------------------
def _fn_name(fn):
    name = getattr(fn, "name", None) or getattr(fn, "__name__", None) or "kernel"
    return re.sub(r"\W", "_", str(name)) or "kernel"


def _arg_spec(a):
    if isinstance(a, (Array, numpy.ndarray, bool, int, float, numpy.generic)):
        return a
    if isinstance(a, tuple) and 2 <= len(a) <= 3 and isinstance(a[1], int):
        return Array(*a)
    raise TypeError(f"signature argument {a!r}: use loom.aot.Array(dtype, ndim, layout), (dtype, ndim[, layout]), "
                    "a NumPy array or a scalar")


def _signature(sig):
    if isinstance(sig, Call):
        return tuple(_arg_spec(a) for a in sig.args), dict(sig.kwargs)
    if not isinstance(sig, (tuple, list)):
        raise TypeError(f"signature {sig!r}: a tuple of arguments or loom.aot.Call(...)")
    return tuple(_arg_spec(a) for a in sig), {}


def _tag(args):
    parts = []
    for a in args:
        if isinstance(a, Array):
            parts.append(a.tag())
        elif isinstance(a, numpy.ndarray):
            parts.append(Array(a.dtype, a.ndim).tag())
    return "_".join(parts) or "scalars"


def _pairs(functions, signatures, names):
    """[(function, [signatures], [names or None])] from compile()'s arguments."""
    if callable(functions) and not isinstance(functions, (list, tuple)):
        functions = [functions]
    if isinstance(functions, dict):
        signatures, functions = functions, list(functions)
    out = []
    for fn in functions:
        if isinstance(signatures, dict):
            if fn not in signatures:
                raise ValueError(f"no signatures for {_fn_name(fn)}")
            sigs = signatures[fn]
        else:
            sigs = signatures
        if sigs is None or isinstance(sigs, Call) or (isinstance(sigs, tuple) and sigs and not isinstance(sigs[0], (tuple, list, Call))):
            sigs = [sigs]
        sigs = list(sigs)
        nm = names.get(fn) if isinstance(names, dict) else None
        if isinstance(nm, str):
            nm = [nm] if len(sigs) == 1 else [f"{nm}_{i}" for i in range(len(sigs))]
        out.append((fn, sigs, nm))
    return out


def _as_fused(fn):
    from .._fuse import Fusion, fuse
    from .._kernels import ElementwiseKernel, ReductionKernel
    if isinstance(fn, (Fusion, ElementwiseKernel, ReductionKernel)):
        return fn
    return fuse(fn, kernel_name=_fn_name(fn))  # a plain function: traced like @loom.fuse


_FUSE_KIND = {bool: 1, int: 2, float: 3, complex: 4}


def _probe(t, j, k):
    """The value of scalar argument j (type t) in record trace k: distinct per argument and per trace,
    exact in every float dtype, within int8's range (so a constant tells which argument it is)."""
    if t is bool:
        return (j % 2 == 0) != (k == 1)
    if t is int:
        return (113 if k == 0 else 101) - 2 * j
    step = 0.0625 * j
    if t is float:
        return (1.4375 if k == 0 else 2.3125) + step
    return complex((1.4375 if k == 0 else 2.3125) + step, 0.5 if k == 0 else -0.75)


def _other_sizes(a):
    """An example like NumPy array a (dtype, rank, layout) whose every size > 1 is another."""
    shape = tuple(s if s <= 1 else s + 3 for s in a.shape)
    if a.ndim and a.strides and 0 in a.strides:  # a broadcast example
        return numpy.broadcast_to(numpy.ones(tuple(1 if st == 0 else n for n, st in zip(shape, a.strides)), a.dtype), shape)
    b = numpy.ones(shape, a.dtype)
    return numpy.asfortranarray(b) if a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous else b


def _fuse_args(args, arrays, in_args, in_nodes):
    fa = (_FuseArg * len(args))()
    node_of = dict(zip(in_args, in_nodes))
    for j, (a, la) in enumerate(zip(args, arrays)):
        if la is not None:
            fa[j].kind, fa[j].dtype, fa[j].ndim, fa[j].node = 0, la._dtype_code, la.ndim, node_of[j]
        else:
            fa[j].kind = _FUSE_KIND[type(a)]
            if isinstance(a, complex):
                fa[j].re, fa[j].im = a.real, a.imag
            elif isinstance(a, float):
                fa[j].re = a
            else:
                fa[j].i = int(a)
    return fa


def _record_fuse(lib, builder, call, name, examples):
    """Adds the size-free graph of @loom.fuse `call` for this signature, or warns why it cannot be."""
    from .._common import _from_numpy
    from .._fuse import aot_identity
    from .._ndarray import ndarray
    why = None
    if any(type(a) not in _FUSE_KIND and not isinstance(a, (numpy.ndarray, ndarray)) for a in examples):
        why = "only arrays and Python bool / int / float / complex scalars can be rebuilt"
    traces = []
    for k in range(2 if why is None else 0):
        args, arrays = [], []
        for j, a in enumerate(examples):
            if type(a) in _FUSE_KIND:
                args.append(_probe(type(a), j, k))
                arrays.append(None)
            else:
                a = numpy.asarray(a.get() if isinstance(a, ndarray) else a)
                a = a if k == 0 else _other_sizes(a)
                args.append(a)
                arrays.append(_from_numpy(a, copy=False))
        try:
            parts = call._trace_parts(tuple(args), arrays)
        except Exception as e:  # noqa: BLE001 (a probe value the function refuses: report, keep the kernels)
            why = f"tracing it with other sizes or scalar values failed: {e}"
            break
        traces.append((args, arrays, parts))
    if why is None:
        (a_args, a_arr, pa), (b_args, b_arr, pb) = traces
        if any(s is not None for s in pa[4]):
            why = "it returns a value that is not computed from its arguments"
    if why is None:
        i32 = ctypes.c_int32
        oa, ob = (i32 * max(1, len(pa[3])))(*pa[3]), (i32 * max(1, len(pb[3])))(*pb[3])
        w = (i32 * max(1, len(pa[7])))(*pa[7])
        fa = _fuse_args(a_args, a_arr, pa[1], pa[2])
        fb = _fuse_args(b_args, b_arr, pb[1], pb[2])
        reasons = []
        ident = aot_identity(call, reasons)
        if ident is None:
            why = reasons[0]
    if why is None:
        st = lib.loom_bundle_builder_add_fuse(builder, name.encode(), ident.encode(), len(a_args),
                                              _core.graph_address(pa[0]), fa, oa, _core.graph_address(pb[0]), fb, ob,
                                              len(pa[3]), len(pa[7]), w, 1 if pa[5] else 0)
        if st == _UNSUPPORTED:
            why = (lib.loom_last_error(_ctx()) or b"").decode(errors="replace")
        else:
            _check(st, f"recording @loom.fuse {name}")
    if why is not None:
        import warnings
        warnings.warn(f"loom.aot: {name}: calls with new sizes will trace the function (its kernels are bundled): {why}",
                      FuseTraceWarning, stacklevel=3)


def compile(functions, signatures=None, targets="host-all", path="loom_kernels.lbun", *, jobs=0, progress=None,
            emit_c=None, names=None, no_sleef=False, index_widths="both", summary=False, ptxas=None, fuse_records=True):
    """Bundles the kernels of `functions` for `signatures` into `path` (see the module doc).

    functions: one function or a list (@loom.fuse functions, ElementwiseKernel, ReductionKernel; a plain
      function is traced as @loom.fuse), or a dict {function: [signatures]} (then `signatures` is unused).

    signatures: {function: [signature, ...]}, or one list used for every function.

    targets: "host", "host-avx2", "host-avx512", "host-all", "sm_80", "sm_90", "ptx", "ptx_sm_XX", "gfx942" (any
      gfxNNN the AMD target knows), "all" (every host level, sm_80/sm_90 cubins when ptxas is there, PTX,
      gfx90a/gfx942/gfx1100 when LLVM has the AMDGPU target)
      (comma-separated). names: {function: name or [names]} (C identifiers); default: the function's
      name, with the signature's dtypes appended when it has several.

    emit_c: also write <emit_c>.c / <emit_c>.h (typed C functions over libloomrt).

    fuse_records: also bundle each @loom.fuse signature's size-free graph (format 1.2), so that its calls
      do not trace (see the module doc); False: kernels only.

    Returns the bundle's path."""
    from .._fuse import Fusion
    lib = _lib()
    widths = {"both": 3, "32": 1, "64": 2, 32: 1, 64: 2}.get(index_widths)
    if widths is None:
        raise ValueError("index_widths must be 'both', 32 or 64")
    pairs = _pairs(functions, signatures, names or {})
    builder = ctypes.c_void_p()
    _check(lib.loom_bundle_builder_create(_ctx(), ctypes.byref(builder)), "loom_bundle_builder_create")
    rng = numpy.random.default_rng(20261201)
    try:
        for fn, sigs, nms in pairs:
            call = _as_fused(fn)
            base = _fn_name(fn)
            tags = [_tag(_signature(s)[0]) for s in sigs]
            for i, sig in enumerate(sigs):
                args, kwargs = _signature(sig)
                if nms:
                    name = nms[i]
                elif len(sigs) == 1:
                    name = base
                else:
                    name = f"{base}_{tags[i]}" if tags.count(tags[i]) == 1 else f"{base}_{tags[i]}_{i}"
                examples = [a.example(rng) if isinstance(a, Array) else a for a in args]
                _check(lib.loom_bundle_builder_capture_begin(builder, name.encode()), f"capture of {name}")
                failed = None
                try:
                    out = call(*examples, **kwargs)
                    for o in out if isinstance(out, tuple) else (out,):  # lazy loom results: evaluate
                        if hasattr(o, "get") and not isinstance(o, numpy.ndarray):
                            o.get()
                except Exception as e:  # noqa: BLE001 (reported with the signature, after the capture ends)
                    failed = e
                n = ctypes.c_int32(0)
                st = lib.loom_bundle_builder_capture_end(builder, ctypes.byref(n))
                if failed is not None:
                    raise type(failed)(f"loom.aot: calling {base} with signature {sig!r} failed: {failed}") from failed
                _check(st, f"capture of {name}")
                if fuse_records and isinstance(call, Fusion) and not kwargs:
                    _record_fuse(lib, builder, call, name, examples)
        opt = _Options(targets=str(targets).encode(), jobs=int(jobs),
                       progress=-1 if progress is None else (1 if progress else 0), summary=1 if summary else 0,
                       no_sleef=1 if no_sleef else 0, index_widths=widths,
                       ptxas=_path(ptxas) if ptxas else None, producer=b"loom.aot")
        _check(lib.loom_bundle_builder_write(builder, ctypes.byref(opt), _path(path)), f"writing bundle {path}")
    finally:
        lib.loom_bundle_builder_destroy(builder)
    if emit_c:
        base = os.fspath(emit_c)
        prefix = re.sub(r"\W", "_", os.path.basename(base)) or "bundle"
        if prefix[0].isdigit():
            prefix = "_" + prefix
        _check(lib.loom_bundle_emit_c(_ctx(), _path(path), _path(base + ".c"), _path(base + ".h"), prefix.encode()),
               "emit_c")
    return path
