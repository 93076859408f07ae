"""ElementwiseKernel calls with texture / surface object arguments, run as CUDA C++ (RawModule).

Approach: loom's ElementwiseKernel compiles its snippet with loom's own compiler, which has no texture
fetches; a call with a TextureObject or SurfaceObject argument (an object with _loom_kernel_handle) comes
here instead. The kernel becomes CUDA C++ as CuPy writes it: one thread per point i of the broadcast
non-raw arguments (a grid-stride loop), each non-raw array argument `x` a reference to its element i
(inputs const), scalars and texture handles by value, type placeholders typedef'd to the bound C types, the
preamble before the kernel; it is compiled once per signature (RawModule: NVRTC or clang-19, whose prelude
has tex1D/tex2D/tex3D<T>) and launched on the current stream.

Contract (what this path takes; anything else is NotImplementedError or TypeError naming the argument):
loom GPU arrays (non-raw: broadcast to one shape, copied C-contiguous where they are not), NumPy / Python
scalars (a Python scalar takes its parameter's dtype where that is a named type or a bound placeholder,
else int64 / float64 / bool), texture / surface objects for a placeholder or a `uint64`-like parameter;
outputs are allocated (the broadcast shape, the bound dtype) or given as the trailing arguments. `raw`
parameters, loop_prep / after_loop and reduce kernels are not supported here.
"""
import numpy as np

_C_TYPES = {"bool": "bool", "int8": "signed char", "int16": "short", "int32": "int", "int64": "long long",
            "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
            "uint64": "unsigned long long", "float32": "float", "float64": "double"}
_HANDLE = "cudaTextureObject_t"  # a 64-bit handle: unsigned long long (NVRTC's and loom's prelude's)
_cache: dict = {}


def _params(text):
    """[(raw, type, name)] of a CuPy parameter list."""
    out = []
    for p in str(text or "").split(","):
        w = p.split()
        if not w:
            continue
        raw = w[0] == "raw"
        if raw:
            w = w[1:]
        if len(w) != 2:
            raise ValueError(f"bad parameter {p.strip()!r}")
        out.append((raw, w[0], w[1]))
    return out


def _is_placeholder(t):
    return len(t) == 1 and "A" <= t <= "Z"


def call(kernel, args, size=None, stream=None):
    """Runs ElementwiseKernel `kernel` on args (inputs, then optional outputs) as CUDA C++; returns the
    output(s) as the kernel's own call would."""
    import loom
    from .._raw import RawModule
    if getattr(kernel, "loop_prep", "") or getattr(kernel, "after_loop", ""):
        raise NotImplementedError(f"{kernel.name}: loop_prep / after_loop with texture arguments")
    ins, outs = _params(kernel.in_params), _params(kernel.out_params)
    if any(raw for raw, _, _ in ins + outs):
        raise NotImplementedError(f"{kernel.name}: raw parameters with texture arguments")
    if len(args) not in (len(ins), len(ins) + len(outs)):
        raise TypeError(f"{kernel.name}: takes {len(ins)} inputs (and optionally {len(outs)} outputs), got "
                        f"{len(args)} arguments")
    params = ins + outs
    bound: dict = {}
    kinds = []  # per argument: 'array', 'scalar', 'handle'
    for (_, t, name), a in zip(params, args):
        if getattr(a, "_loom_kernel_handle", None) is not None:
            kinds.append("handle")
            if _is_placeholder(t):
                bound.setdefault(t, _HANDLE)
        elif isinstance(a, loom.ndarray):
            kinds.append("array")
            if _is_placeholder(t):
                bound.setdefault(t, a.dtype.name)
        elif isinstance(a, (bool, int, float, np.generic)):
            kinds.append("scalar")
            if isinstance(a, np.generic) and _is_placeholder(t):
                bound.setdefault(t, a.dtype.name)
        else:
            raise TypeError(f"{kernel.name}: argument {name!r}: unsupported type {type(a).__name__} with texture "
                            "arguments (give loom arrays, scalars and texture objects)")
    for (_, t, name), a, k in zip(params, args, kinds):
        if k == "scalar" and _is_placeholder(t) and t not in bound:
            bound[t] = np.asarray(a).dtype.name
    missing = [t for _, t, _ in params if _is_placeholder(t) and t not in bound]
    if missing:
        raise TypeError(f"{kernel.name}: cannot infer the type{'s' if len(missing) > 1 else ''} {', '.join(missing)}")

    def ctype(t):
        t = bound.get(t, t)
        if t == _HANDLE:
            return t
        name = np.dtype(t).name
        if name not in _C_TYPES:
            raise NotImplementedError(f"{kernel.name}: dtype {name} with texture arguments")
        return _C_TYPES[name]

    arrays = [a for a, k in zip(args, kinds) if k == "array"]
    shape = tuple(np.broadcast_shapes(*[a.shape for a in arrays])) if arrays else ()
    if size is not None and not arrays:
        shape = (int(size),)
    given_outs = list(args[len(ins):])
    vals = []
    for i, ((_, t, name), a, k) in enumerate(zip(params, args, kinds)):
        if k == "array":
            if i >= len(ins):  # an output written in place: it must already have the shape, C-contiguous
                if a.shape != shape or not a.flags.c_contiguous:
                    raise ValueError(f"{kernel.name}: output {name!r} must be C-contiguous of shape {shape}")
                vals.append(a)
            else:
                vals.append(loom.ascontiguousarray(loom.broadcast_to(a, shape)))
        elif k == "handle":
            vals.append(np.uint64(a._loom_kernel_handle()))
        else:
            vals.append(np.asarray(a, dtype=np.dtype(bound.get(t, t))).reshape(()))
    new_outs = []
    for (_, t, name) in outs[len(given_outs):]:
        o = loom.empty(shape, dtype=np.dtype(bound.get(t, t)))
        new_outs.append(o)
        vals.append(o)
    kinds += ["array"] * len(new_outs)
    sig = tuple(ctype(t) for _, t, _ in params) + tuple(kinds)
    key = (kernel.in_params, kernel.out_params, kernel.operation, kernel.name, kernel.preamble, sig)
    fn = _cache.get(key)
    if fn is None:
        lines = [f"typedef {ctype(t)} {t};" for t in sorted(bound)]
        lines.append(str(kernel.preamble or ""))
        decl, refs = [], []
        for i, ((_, t, name), k) in enumerate(zip(params, kinds)):
            if k == "array":
                const = "const " if i < len(ins) else ""
                decl.append(f"{const}{ctype(t)} *_loom_p_{name}")
                refs.append(f"{const}{ctype(t)} &{name} = _loom_p_{name}[i];")
            else:
                decl.append(f"{ctype(t)} {name}")
        lines.append(f'extern "C" __global__ void {kernel.name}({", ".join(decl + ["long long _ind_size"])}) {{')
        lines.append("  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < _ind_size;"
                     " i += (long long)blockDim.x * gridDim.x) {")
        lines += ["    " + r for r in refs] + [str(kernel.operation), "  }", "}"]
        fn = RawModule(code="\n".join(lines), format="cuda").get_function(kernel.name)
        _cache[key] = fn
    n = int(np.prod(shape)) if shape else 1
    if n:
        block = 128
        fn((min((n + block - 1) // block, 0x7FFFFFFF),), (block,), tuple(vals) + (np.int64(n),), stream=stream)
    if given_outs:
        result = given_outs
    else:
        result = new_outs
    if getattr(kernel, "no_return", False):
        return None
    if len(result) == 1 and not getattr(kernel, "return_tuple", False):
        return result[0]
    return tuple(result)


_TEXTURE_CODE = None


def uses_textures(*code):
    """Whether kernel code calls CUDA's texture / surface functions (tex1D<T>, tex2D, tex3D, tex1Dfetch,
    surf*D*) or names cudaTextureObject_t / cudaSurfaceObject_t: code loom's snippet compiler cannot take."""
    import re
    global _TEXTURE_CODE
    if _TEXTURE_CODE is None:
        _TEXTURE_CODE = re.compile(r"\b(tex(1D|2D|3D|1Dfetch|1DLayered|2DLayered|Cubemap)\w*|surf(1D|2D|3D)\w*|"
                                   r"cuda(Texture|Surface)Object_t)\b")
    return any(_TEXTURE_CODE.search(str(c or "")) for c in code)


_classes: dict = {}


def texture_kernel_class(base):
    """The subclass of ElementwiseKernel class `base` whose calls run here (CUDA C++) instead of loom's
    snippet compiler; made once per base."""
    if base not in _classes:
        def __call__(self, *args, size=None, stream=None):
            return call(self, args, size=size, stream=stream)
        _classes[base] = type(base.__name__, (base,), {"__call__": __call__, "__module__": base.__module__,
                                                       "__doc__": base.__doc__})
    return _classes[base]
