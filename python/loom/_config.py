"""_config.py: settings and inspection from Python: loom.config (run-time settings of the process's
context), loom.show_config() / loom.config_info() (what Loom runs with: LLVM, host CPU, SLEEF, threads,
GPUs and drivers, cache folder) and the one-time warning when a slow fallback is in effect.

The facts come from the C library (loom_get_config: the host code generator's own description, the
thread pool's size, the disk cache's folder as the GPU devices open it); what the C API does not know
(which SLEEF file the process loaded, the CPU's vector extensions as the kernel reports them, GPU names)
is read from the process (/proc) and the CUDA driver.
"""
import contextlib
import os
import sys
import tempfile
import warnings

from . import _core

__all__ = ["config", "show_config", "config_info", "inspect", "capture_dumps", "PerformanceWarning"]


class PerformanceWarning(UserWarning):
    """Loom runs, but slower than it could (e.g. without SLEEF's vector math)."""


_DUMP_WORDS = ("graph", "kernels", "llvm", "time")
_SLEEF_ISAS = (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"), ("sse2", "SSE2"),
               ("asimd", "NEON"), ("sve", "SVE"))


def _mapped_libraries(*stems):
    """Paths of the shared libraries mapped into this process whose file name starts with one of stems."""
    found = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rsplit(None, 1)[-1]
                if path.startswith("/") and os.path.basename(path).startswith(stems) and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def _loaded_sleef():
    """(vector, scalar): paths of SLEEF's libraries mapped into this process, each or both None: the
    vector one (libsleefgnuabi: Sleef's GNU-ABI vector functions) and the scalar one (libsleef, whose
    Sleef_*_u10 the host kernels call)."""
    found = _mapped_libraries("libsleef")
    vector = [p for p in found if "gnuabi" in os.path.basename(p)]
    scalar = [p for p in found if "gnuabi" not in os.path.basename(p)]
    return (vector[0] if vector else None), (scalar[0] if scalar else None)


def _cpu_vector_isas():
    """The CPU's vector extensions that SLEEF has kernels for, widest first (from /proc/cpuinfo)."""
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags.update(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    return [name for flag, name in _SLEEF_ISAS if flag in flags]


def _gpus():
    """[(index, name)] of the CUDA devices Loom can use, and the driver's version string (or None)."""
    from . import cuda
    try:
        n = _core.device_count(cuda._CUDA)
    except Exception:
        n = 0
    if n == 0:
        return [], None
    import ctypes
    lib = cuda._driver()
    names, version = [], None
    if lib is not None:
        v = ctypes.c_int()
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0:
            version = f"CUDA driver API {v.value // 1000}.{v.value % 1000 // 10}"
        for i in range(n):
            dev, buf = ctypes.c_int(), ctypes.create_string_buffer(256)
            ok = lib.cuDeviceGet(ctypes.byref(dev), i) == 0 and lib.cuDeviceGetName(buf, 256, dev) == 0
            names.append((i, buf.value.decode() if ok else "?"))
    return names, version


def _hip():
    """The AMD side as libloom's HIP device sees it (runtime/hip/): a dict with ``runtime`` (path of the
    libamdhip64 it loaded, None when none was found), ``devices`` (list of ``(index, gfx arch)``) and
    ``status`` (the HIP layer's own words when there is no usable AMD GPU, else "ok")."""
    from . import cuda
    try:
        n = _core.device_count(cuda._HIP)
    except Exception:
        n = 0
    status = "ok" if n > 0 else cuda._no_device_reason(cuda._HIP)
    devices = []
    for i in range(n):
        try:
            devices.append((i, cuda._hip_arch(i).split(":")[0]))
        except Exception as e:  # the properties record could not be read: say so, keep the device
            devices.append((i, f"? ({e})"))
    runtime = _mapped_libraries("libamdhip64")  # the layer loads it RTLD_NODELETE: it stays mapped
    return {"runtime": runtime[0] if runtime else None, "devices": devices, "status": status}


def config_info():
    """What Loom runs with, as a dict (the data of :func:`show_config`).

    Keys: ``version``, ``llvm``, ``host_target`` (the host code generator's description: LLVM version,
    triple, CPU), ``host_cpu``, ``vector_isas`` (the CPU's vector extensions, widest first), ``sleef``
    (path of the loaded SLEEF vector library or None), ``sleef_scalar`` (SLEEF's scalar library, whose
    Sleef_*_u10 the kernels call, or None), ``num_threads``, ``dump``,
    ``cache_dir`` (None when disabled), ``cache_max_bytes``, ``cache_error``, ``gpus`` (the CUDA devices,
    list of ``(index, name)``), ``gpu_driver`` and ``hip`` (the AMD side: a dict with ``runtime``, the
    libamdhip64 loaded or None, ``devices``, list of ``(index, gfx arch)``, and ``status``, why there is
    no usable AMD GPU or "ok").
    """
    c = _core.config_info()
    words = c["host_target"].split()
    gpus, driver = _gpus()
    sleef = _loaded_sleef() if "sleef" in words else (None, None)
    return {
        "version": _core.version,
        "llvm": words[1] if len(words) > 1 else None,
        "host_target": c["host_target"],
        "host_cpu": words[4] if len(words) > 4 else None,
        "vector_isas": _cpu_vector_isas(),
        "sleef": sleef[0],
        "sleef_scalar": sleef[1],
        "num_threads": c["num_threads"],
        "dump": config.dump,
        "cache_dir": c["cache_dir"] or None,
        "cache_max_bytes": c["cache_max_bytes"],
        "cache_error": c["cache_error"] or None,
        "gpus": gpus,
        "gpu_driver": driver,
        "hip": _hip(),
    }


def show_config(file=None):
    """Prints what Loom runs with: version, LLVM and host CPU, SLEEF, vector ISA, threads, GPUs and
    their driver, the kernel cache folder and the settings in effect (loom.config).

    Like ``numpy.show_config`` / ``cupy.show_config``; :func:`config_info` returns the same as a dict.
    """
    i = config_info()
    out = file if file is not None else sys.stdout
    rows = [
        ("loom", f"{i['version']} ({os.path.dirname(__file__)})"),
        ("host code", i["host_target"]),
        ("vector ISA", ", ".join(i["vector_isas"]) or "none found (scalar loops)"),
        ("SLEEF", ", ".join(p for p in (i["sleef"], i["sleef_scalar"]) if p)
         or "not loaded: math functions call scalar libm (about 3x slower)"),
        ("threads", str(i["num_threads"]) + " (loom.config.num_threads)"),
        ("GPUs (CUDA)", "; ".join(f"{k}: {n}" for k, n in i["gpus"]) or "none"),
        ("CUDA driver", i["gpu_driver"] or "-"),
        ("GPUs (AMD)", "; ".join(f"{k}: {n}" for k, n in i["hip"]["devices"]) or f"none ({i['hip']['status']})"),
        ("HIP runtime", i["hip"]["runtime"] or "-"),
        ("kernel cache", i["cache_dir"] or (f"unusable: {i['cache_error']}" if i["cache_error"] else "disabled")),
        ("cache bound", f"{i['cache_max_bytes'] / 2**30:.2f} GiB" if i["cache_dir"] else "-"),
        ("dump", i["dump"] or "-"),
        ("eager", str(config.eager)),
        ("graph bound", str(config.graph_bound)),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}", file=out)


class _Config:
    """loom.config: the process's settings, read and set at run time.

    - ``dump``: which dumps print to stderr at every evaluation, as LOOM_DUMP's words
      (``"graph,kernels,llvm,time"``; ``""`` for none). Takes effect at the next evaluation. libloom
      writes them to the process's file descriptor 2, which a notebook does not show:
      :func:`capture_dumps` turns them into a string (and echoes them to ``sys.stderr``), and
      :func:`inspect` returns the graph, kernels, LLVM IR and PTX of one expression without running it.
    - ``eager``: evaluate every operation at once (same as :func:`loom.set_eager`).
    - ``graph_bound``: pending graphs larger than this many nodes are evaluated (:func:`loom.set_graph_bound`).
    - ``num_threads``: threads of the host pool (the calling thread included), 1 to 1024; ``None`` (or 0)
      goes back to the default (LOOM_NUM_THREADS, else all online cores). The pool is resized at once.
    - ``cache_dir``: the folder of the disk cache of GPU binaries (a str or ``os.PathLike``); ``""`` turns
      the cache off, ``None`` goes back to the environment's (LOOM_CACHE_DIR, else
      ``$XDG_CACHE_HOME/loom``, else ``~/.cache/loom``). The folder is created (mode 0700) and checked when
      set: one that cannot be made or is not the user's raises and keeps the setting in effect.
    - ``cache_max_bytes``: the disk cache's bound in bytes (an int, or a str with a K, M or G suffix as
      LOOM_CACHE_MAX_BYTES takes); ``None`` goes back to the default (LOOM_CACHE_MAX_BYTES, else 1 GiB).
      The bound applies from the next store on.
    - ``jit_level``: the optimization level 0..4 of the GPU driver's JIT (CUDA's ptxas) for elementwise
      kernels compiled from then on; ``None`` (reads back as None) is the default, LOOM_CUDA_JIT_LEVEL or
      1. Kernels already loaded keep their code; AMD code objects are final, so there it has no effect.
    - ``cuda_array_interface_version``: the version of the CUDA Array Interface GPU arrays export, 3 (with
      the ``stream`` entry) or 2 (without; the stream in use is synchronized at export); ``None`` is the
      default, LOOM_CUDA_ARRAY_INTERFACE_EXPORT_VERSION, else 3 (CuPy's CUPY_CUDA_ARRAY_INTERFACE_EXPORT_VERSION).
    """

    __slots__ = ()

    @property
    def dump(self):
        flags = _core.config_info()["dump_flags"]
        return ",".join(w for b, w in enumerate(_DUMP_WORDS) if flags >> b & 1)

    @dump.setter
    def dump(self, words):
        if isinstance(words, (list, tuple, set)):
            words = ",".join(words)
        if not isinstance(words, str):
            raise TypeError(f"loom.config.dump takes LOOM_DUMP's words as a str, not {type(words).__name__}")
        try:
            _core.set_dump(words)
        except ValueError as e:
            raise ValueError(f"{e}; e.g. loom.config.dump = 'kernels,time'") from None

    @property
    def eager(self):
        old = _core.set_eager(False)
        _core.set_eager(old)
        return bool(old)

    @eager.setter
    def eager(self, flag):
        _core.set_eager(bool(flag))

    @property
    def graph_bound(self):
        old = _core.set_graph_bound(1)  # the only reader is the setter, which returns the old bound
        _core.set_graph_bound(old)
        return old

    @graph_bound.setter
    def graph_bound(self, nodes):
        _core.set_graph_bound(nodes)

    @property
    def num_threads(self):
        return _core.config_info()["num_threads"]

    @num_threads.setter
    def num_threads(self, n):
        if n is None:
            n = 0
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"loom.config.num_threads takes an int (1 to 1024) or None, not {type(n).__name__}")
        if not 0 <= n <= 1024:
            raise ValueError(f"loom.config.num_threads = {n}: give 1 to 1024 threads (the calling thread "
                             "included), or None for the default (LOOM_NUM_THREADS, else all online cores)")
        _core.set_num_threads(n)

    @property
    def cache_dir(self):
        return _core.config_info()["cache_dir"] or None

    @cache_dir.setter
    def cache_dir(self, folder):
        if folder is not None:
            if not isinstance(folder, (str, os.PathLike)):
                raise TypeError("loom.config.cache_dir takes a folder (str or os.PathLike), '' (off) or None "
                                f"(the environment's), not {type(folder).__name__}")
            folder = os.fspath(folder)
            if isinstance(folder, bytes):
                folder = os.fsdecode(folder)
            if folder and not os.path.isabs(folder):
                folder = os.path.abspath(folder)  # the process may change its working folder later
        try:
            _core.set_cache(folder, _cache_bound_setting[0])
        except (RuntimeError, ValueError, OSError) as e:  # the folder could not be used: name the setting
            raise ValueError(f"loom.config.cache_dir = {folder!r}: {e}") from None
        _cache_dir_setting[0] = folder

    @property
    def cache_max_bytes(self):
        return _core.config_info()["cache_max_bytes"]

    @cache_max_bytes.setter
    def cache_max_bytes(self, bound):
        n = _parse_bytes(bound)
        _core.set_cache(_cache_dir_setting[0], n)
        _cache_bound_setting[0] = n

    @property
    def jit_level(self):
        level = _core.jit_level(None)
        return None if level < 0 else level

    @jit_level.setter
    def jit_level(self, level):
        if level is None:
            level = -1
        elif isinstance(level, bool) or not isinstance(level, int):
            raise TypeError(f"loom.config.jit_level takes an int 0..4 or None, not {type(level).__name__}")
        elif not 0 <= level <= 4:
            raise ValueError(f"loom.config.jit_level = {level}: give 0 to 4 (the GPU driver JIT's optimization "
                             "level), or None for the default (LOOM_CUDA_JIT_LEVEL, else 1)")
        _core.jit_level(level)

    @property
    def cuda_array_interface_version(self):
        v = _cai_version[0]
        if v is None:
            env = os.environ.get("LOOM_CUDA_ARRAY_INTERFACE_EXPORT_VERSION", "")
            v = 3 if env in ("", "3") else 2 if env == "2" else None
            if v is None:
                raise ValueError(f"LOOM_CUDA_ARRAY_INTERFACE_EXPORT_VERSION={env!r}: give 2 or 3")
        return v

    @cuda_array_interface_version.setter
    def cuda_array_interface_version(self, version):
        if version is not None and (isinstance(version, bool) or version not in (2, 3)):
            raise ValueError(f"loom.config.cuda_array_interface_version = {version!r}: give 2 or 3 (the CUDA "
                             "Array Interface version arrays export), or None for the default "
                             "(LOOM_CUDA_ARRAY_INTERFACE_EXPORT_VERSION, else 3)")
        _cai_version[0] = version

    def __repr__(self):
        return (f"loom.config(dump={self.dump!r}, eager={self.eager}, graph_bound={self.graph_bound}, "
                f"num_threads={self.num_threads}, cache_dir={self.cache_dir!r})")


_cai_version = [None]  # loom.config.cuda_array_interface_version as set (None: the environment's, else 3)


_cache_dir_setting = [None]   # what loom.config.cache_dir was set to (None: the environment's)
_cache_bound_setting = [0]    # loom.config.cache_max_bytes in bytes (0: the default)


def _parse_bytes(bound):
    """A byte count from an int >= 1, a str of digits with an optional K, M or G suffix (powers of 1024),
    or None (0: the default)."""
    if bound is None:
        return 0
    if isinstance(bound, bool):
        raise TypeError("loom.config.cache_max_bytes takes a byte count (int or str like '2G') or None, not bool")
    if isinstance(bound, int):
        n = bound
    elif isinstance(bound, str):
        t = bound.strip()
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:].upper(), 1)
        digits = t[:-1] if scale > 1 else t
        if not digits.isdigit():
            raise ValueError(f"loom.config.cache_max_bytes = {bound!r}: give bytes as an int or digits with an "
                             "optional K, M or G suffix (e.g. '512M')")
        n = int(digits) * scale
    else:
        raise TypeError("loom.config.cache_max_bytes takes a byte count (int or str like '2G') or None, not "
                        f"{type(bound).__name__}")
    if not 1 <= n < 1 << 64:
        raise ValueError(f"loom.config.cache_max_bytes = {bound!r}: the bound must be at least 1 byte "
                         "(None: the default; cache_dir = '' turns the cache off)")
    return n


config = _Config()


class DumpCapture:
    """What :func:`capture_dumps` caught: ``text`` (a str, complete when the ``with`` block ends)."""

    __slots__ = ("text",)

    def __init__(self):
        self.text = ""

    def __repr__(self):
        return f"<loom.DumpCapture {len(self.text)} characters>"


@contextlib.contextmanager
def capture_dumps(words=None, echo=True):
    """``with loom.capture_dumps("kernels,time") as d: ...`` sets ``loom.config.dump`` to ``words`` for the
    block (None: keep the setting in effect) and catches what libloom prints (LOOM_DUMP's dumps, its
    warnings) while the block runs; ``d.text`` holds it as a string after the block, and ``echo`` writes
    it to ``sys.stderr`` too (where a notebook shows it). Arrays are lazy: evaluate inside the block
    (print, ``.get()``, ``loom.eval``) to see their kernels.

    libloom writes to the process's file descriptor 2, so the block redirects that descriptor to a
    temporary file: output of other C code in the process during the block (and Python's, when
    ``sys.stderr`` is that descriptor) is caught with it, and other threads' writes to it as well.
    """
    cap = DumpCapture()
    old = config.dump if words is not None else None
    if words is not None:
        config.dump = words
    for stream in (sys.stderr, sys.__stderr__):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as tmp:
            os.dup2(tmp.fileno(), 2)
            try:
                yield cap
            finally:
                with contextlib.suppress(Exception):
                    sys.__stderr__.flush()
                os.dup2(saved, 2)
                tmp.seek(0)
                cap.text = tmp.read().decode("utf-8", "replace")
    finally:
        os.close(saved)
        if words is not None:
            config.dump = old
    if echo and cap.text:
        sys.stderr.write(cap.text)


_HOST_MATH_ISAS = ("AVX-512", "AVX2", "AVX", "SSE2")  # the ones codegen/host.c calls SLEEF's vector functions for


def _warn_slow_fallbacks(core=None):
    """One PerformanceWarning per process (at import) when the host's math runs a slow fallback: no SLEEF
    (math functions call scalar libm, about 3x slower), or no vector extension the host code generator
    vectorizes math with (codegen/host.c: SSE2, AVX, AVX2, AVX-512; math then runs one element at a time)."""
    words = (core or _core).config_info()["host_target"].split()
    why = []
    if "sleef" not in words:
        why.append("SLEEF's vector math library was not found, so math functions (exp, sin, ...) on the host "
                   "call scalar libm (about 3x slower). Install libsleef (Debian: libsleef3) or use the "
                   "loom-jit wheel, which carries it")
    elif not set(_cpu_vector_isas()) & set(_HOST_MATH_ISAS):
        why.append("this CPU has none of the vector extensions Loom's host code vectorizes math with "
                   f"({', '.join(_HOST_MATH_ISAS)}), so math functions run one element at a time")
    if why:
        warnings.warn("loom: " + "; ".join(why) + ".", PerformanceWarning, stacklevel=3)


_DUMP_KINDS = {"graph": 0, "kernels": 1, "llvm": 2, "ptx": 3, "amdgpu": 4, "time": 5}  # LoomDumpKind


def inspect(x, *args, what=tuple(_DUMP_KINDS), ptx_arch=None, amdgpu_chip=None, **kwargs):
    """What Loom would run for a pending array, as text (for notebooks; LOOM_DUMP prints the same to
    stderr at every evaluation). Nothing is run and ``x`` stays pending.

    ``inspect(array)`` or ``inspect(fn, *args, **kwargs)`` (``fn`` is called and must return a pending
    loom array, or a tuple or list of them: a function of loom operations, not a ``@loom.fuse`` one,
    which evaluates). A tuple or list of pending arrays of one graph shows the one evaluation that computes
    them together (a multi-output kernel such as an optimizer step's). Returns a
    dict of strings with the requested parts (``what``: one name or several; all by default):

    - ``graph``: the graph IR of the expression;
    - ``kernels``: the fused kernels' kernel IR;
    - ``llvm``: their optimized LLVM IR for the host CPU;
    - ``ptx``: their PTX for ``ptx_arch`` (``"sm_80"``-style; default ``sm_90``, the H200's);
    - ``amdgpu``: the assembly of their AMD code objects for ``amdgpu_chip`` (``"gfx90a"``-style; default
      LOOM_DUMP_AMDGPU_CHIP, else ``gfx942``, the MI300's);
    - ``time``: compile times in milliseconds, one line each: ``# time NAME MS ms`` per compiler pass,
      then per kernel ``# time kernel NAME host MS ms`` (a fresh compile, the kernel cache is not asked)
      and ``# time kernel NAME sm_90 MS ms (phases)`` / ``... gfx942 MS ms (phases)`` for the GPU targets
      this build has.

    PTX and AMD code are made here without a GPU. A part this build cannot make (no such LLVM target)
    holds ``"unavailable: "`` and the reason; an architecture Loom does not know raises ``ValueError``.
    """
    from ._ndarray import ndarray
    if callable(x) and not isinstance(x, ndarray):
        x = x(*args, **kwargs)
    elif args or kwargs:
        raise TypeError("inspect(array) takes no further arguments; inspect(fn, *args, **kwargs) calls fn")
    if isinstance(x, (tuple, list)):
        if not x or not all(isinstance(a, ndarray) for a in x):
            raise TypeError("inspect: expected pending loom arrays, got a "
                            f"{type(x).__name__} of {', '.join(sorted({type(a).__name__ for a in x})) or 'nothing'}")
        x = tuple(x)
    elif not isinstance(x, ndarray):
        raise TypeError(f"inspect: expected a pending loom array (or a function returning one), not {type(x).__name__}")
    for name, arch in (("ptx_arch", ptx_arch), ("amdgpu_chip", amdgpu_chip)):
        if arch is not None and not isinstance(arch, str):
            raise TypeError(f"inspect: {name} must be a str such as {'sm_80' if name == 'ptx_arch' else 'gfx90a'}, "
                            f"not {type(arch).__name__}")
    if isinstance(what, str):
        what = (what,)
    out = {}
    for part in what:
        if part not in _DUMP_KINDS:
            raise ValueError(f"inspect: unknown part {part!r}; choose from {', '.join(_DUMP_KINDS)}")
        try:
            out[part] = _core.dump(x, _DUMP_KINDS[part], ptx_arch, amdgpu_chip)
        except NotImplementedError as e:
            out[part] = f"unavailable: {e}"
    return out
