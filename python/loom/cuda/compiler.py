"""loom.cuda.compiler: the errors and the disk cache of raw modules compiled from CUDA C++.

CompileException is the error of CUDA C++ that does not compile (CuPy's cupy.cuda.compiler.CompileException),
with the compiler's log as its message; it is also a ValueError (loom's error for code that does not compile
before this class existed). source, name, options and backend are the module's; dump(f) writes the message
and the numbered source to f.

The disk cache. Compiling CUDA C++ with NVRTC takes 0.1 to several seconds, so RawModule keeps NVRTC's
result on disk (not clang-19's: its parameter lists come from the LLVM IR, which PTX text does not keep):
the key hashes everything that decides the PTX (loom's build: version, shipped headers, libloom; the source,
the options with the name expressions, the compiler that will run, NVRTC's version) and the entry is the
payload `_encode_cache_payload(lowered names, PTX)`: a magic, the number of lowered names, each name, then the PTX
(which carries its header, runtime/cuda/cuda_nvrtc.c). A payload that does not decode with the expected
number of names (an entry of another format, a truncated file, bare PTX) is not used: the source is compiled
again and the entry replaced. DiskKernelCacheBackend(dir) stores each entry as `<key>.cubin` (CuPy's suffix
for a compiled entry) holding the entry's SHA-256 hex digest then the entry, and checks the digest on load,
so a torn write is a miss; MemoryKernelCacheBackend keeps entries in the process only. `_kernel_cache_backend`
is the backend in use: None means a DiskKernelCacheBackend under loom.config.cache_dir ('raw'), and no cache
where that is off.

compile_with_cache(source, ...) (CuPy's signature; _compile_module_with_cache is CuPy's internal name of it)
compiles CUDA C++ through RawModule and returns a Module: get_function(name) gives a Function,
kernel(grid, block, args) or kernel.linear_launch(size, args), with RawKernel's argument rules.
"""
import hashlib
import os
import struct
import tempfile
import threading


class CompileException(ValueError):
    def __init__(self, msg, source="", name="kernel.cu", options=(), backend="nvrtc"):
        self._msg = str(msg)
        self.source, self.name, self.options, self.backend = source, name, tuple(options), backend
        super().__init__(self._msg)

    def get_message(self):
        return self._msg

    def dump(self, f):
        lines = (self.source if isinstance(self.source, str) else "").splitlines()
        f.write(f"{self.backend} compilation of {self.name} with options {' '.join(self.options)} failed:\n")
        f.write(self._msg + "\n==========\n")
        for i, line in enumerate(lines, 1):
            f.write(f"{i:04d} {line}\n")
        f.write("==========\n")


# ---- cache payloads -----------------------------------------------------------------------------------
_cache_payload_magic = b"LOOM-RAW-PAYLOAD-1\n"
_COUNT = struct.Struct("<I")


def _encode_cache_payload(names, binary):
    """The cache entry of a compiled module: the magic, len(names), each lowered name (length, UTF-8), binary."""
    out = [_cache_payload_magic, _COUNT.pack(len(names))]
    for n in names:
        b = n.encode("utf-8")
        out += [_COUNT.pack(len(b)), b]
    out.append(bytes(binary))
    return b"".join(out)


def _decode_cache_payload(payload, count):
    """(names, binary) of a payload holding exactly `count` names; None for anything else (another format,
    another count, a header cut short)."""
    payload = bytes(payload)
    if not payload.startswith(_cache_payload_magic):
        return None
    pos = len(_cache_payload_magic)
    if len(payload) < pos + 4:
        return None
    (n,) = _COUNT.unpack_from(payload, pos)
    pos += 4
    if n != count:
        return None
    names = []
    for _ in range(n):
        if len(payload) < pos + 4:
            return None
        (ln,) = _COUNT.unpack_from(payload, pos)
        pos += 4
        if len(payload) < pos + ln:
            return None
        try:
            names.append(payload[pos:pos + ln].decode("utf-8"))
        except UnicodeDecodeError:
            return None
        pos += ln
    return names, payload[pos:]


# ---- the disk backend ---------------------------------------------------------------------------------
def _hash_hexdigest(data):
    return hashlib.sha256(bytes(data)).hexdigest()


_hash_length = len(_hash_hexdigest(b""))


class DiskKernelCacheBackend:
    """Cache entries as files `<name>.cubin` in cache_dir: the entry's SHA-256 hex digest, then the entry."""

    def __init__(self, cache_dir):
        self._cache_dir = os.fspath(cache_dir)

    def _path(self, name):
        return os.path.join(self._cache_dir, name + ".cubin")

    def load(self, name):
        """The entry stored under name, or None (none, unreadable, or its digest does not match)."""
        try:
            with open(self._path(name), "rb") as f:
                data = f.read()
        except OSError:
            return None
        body = data[_hash_length:]
        return body if data[:_hash_length] == _hash_hexdigest(body).encode("ascii") else None

    def save(self, name, binary, source=None):
        """Stores binary under name (written to a temporary file, then renamed: readers see all or nothing).
        A cache that cannot be written is skipped silently: the module is compiled either way."""
        try:
            os.makedirs(self._cache_dir, mode=0o700, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self._cache_dir, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(_hash_hexdigest(binary).encode("ascii") + bytes(binary))
            os.replace(tmp, self._path(name))
        except OSError:
            pass


class MemoryKernelCacheBackend:
    """Cache entries in this process only (nothing is written to disk): a dict of name -> entry."""

    def __init__(self):
        self._entries = {}

    def load(self, name):
        return self._entries.get(name)

    def save(self, name, binary, source=None):
        self._entries[name] = bytes(binary)


_kernel_cache_backend = None  # None: the default (loom.config.cache_dir/raw); else an object with load / save


def _backend():
    if _kernel_cache_backend is not None:
        return _kernel_cache_backend
    from .. import config
    root = config.cache_dir
    return DiskKernelCacheBackend(os.path.join(root, "raw")) if root else None


_nvrtc_version_cache: list = []


def _nvrtc_version():
    """NVRTC's (major, minor), (0, 0) without libnvrtc; searched as runtime/cuda/cuda_nvrtc.c does."""
    if not _nvrtc_version_cache:
        import ctypes
        names = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"]
        names += [os.path.join(h, "lib64", "libnvrtc.so") for h in (os.environ.get("CUDA_HOME"), "/usr/local/cuda") if h]
        version = (0, 0)
        for n in names:
            try:
                lib = ctypes.CDLL(n)
            except OSError:
                continue
            major, minor = ctypes.c_int(0), ctypes.c_int(0)
            if lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) == 0:
                version = (major.value, minor.value)
            break
        _nvrtc_version_cache.append(version)
    return _nvrtc_version_cache[0]


_build_token_cache: list = []


def _build_token():
    """What identifies this build of loom for the cache: its version, the headers it ships for raw kernels
    (their bytes) and the libloom beside loom._core (size and time: its clang prelude and NVRTC options)."""
    if not _build_token_cache:
        import glob
        from .. import __version__, _core
        h = hashlib.sha256(__version__.encode())
        pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for path in sorted(glob.glob(os.path.join(pkg, "include", "cupy", "*"))):
            with open(path, "rb") as f:
                h.update(path.encode() + b"\0" + f.read())
        for path in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(_core.__file__)), "libloom.so*"))):
            st = os.stat(path)
            h.update(f"{path}:{st.st_size}:{st.st_mtime_ns}".encode())
        _build_token_cache.append(h.hexdigest())
    return _build_token_cache[0]


def _cache_key(data, options):
    """The cache key of CUDA C++ `data` compiled with `options`: everything that decides the PTX."""
    import shutil
    compiler = os.environ.get("LOOM_RAW_CUDA_COMPILER", "auto")
    h = hashlib.sha256()
    for part in ("raw-cache-2", _build_token(), compiler, str(bool(shutil.which("clang-19"))), "%d.%d" % _nvrtc_version(),
                 os.environ.get("CUDA_HOME", ""), *options):
        h.update(part.encode("utf-8") + b"\0")
    h.update(bytes(data))
    return "raw_" + h.hexdigest()


# ---- CuPy's compile_with_cache: a Module of Functions ---------------------------------------------------
class Function:
    """One kernel of a Module (CuPy's cupy.cuda.function.Function): kernel(grid, block, args, shared_mem=0,
    stream=None) launches it as RawKernel does (same argument rules: loom arrays by address, scalars by
    the parameter's type, NumPy structured scalars / one-element record arrays by value as their bytes);
    linear_launch(size, args, ...) covers `size` threads in blocks of up to block_max_size."""

    def __init__(self, module, kernel):
        self.module, self._kernel = module, kernel

    @property
    def ptr(self):
        """The driver's CUfunction of the kernel on the current device (the module is loaded there)."""
        from .. import _core
        from .device import get_device_id
        return _core.raw_function_handle(self._kernel._f, get_device_id())

    @property
    def attributes(self):
        return self._kernel.attributes

    def __call__(self, grid, block, args, shared_mem=0, stream=None, enable_cooperative_groups=False):
        self._kernel(grid, block, tuple(args), shared_mem=shared_mem, stream=stream)

    def linear_launch(self, size, args, shared_mem=0, block_max_size=128, stream=None,
                      enable_cooperative_groups=False):
        size, block_max_size = int(size), int(block_max_size)
        if size < 0 or block_max_size < 1:
            raise ValueError(f"linear_launch: size must be >= 0 and block_max_size >= 1, got {size}, {block_max_size}")
        if size == 0:
            return  # no threads: nothing to launch
        block = min(block_max_size, size)
        grid = min(0x7FFFFFFF, (size + block - 1) // block)
        self(grid, block, args, shared_mem=shared_mem, stream=stream)


class Module:
    """A compiled module (CuPy's cupy.cuda.function.Module) over loom's RawModule: get_function(name) (a
    Function; a name the module lacks is a CUDADriverError), get_global(name) (a MemoryPointer to a
    __device__ / __constant__ variable); `raw_module` is the RawModule."""

    def __init__(self, raw_module):
        self.raw_module = raw_module
        self._functions: dict = {}

    def get_function(self, name):
        if name not in self._functions:
            self._functions[name] = Function(self, self.raw_module.get_function(name))
        return self._functions[name]

    def get_global(self, name):
        return self.raw_module.get_global(name)

    get_global_var = get_global


_compile_lock = threading.Lock()  # compile_with_cache(cache_dir=) swaps _kernel_cache_backend meanwhile


def compile_with_cache(source, options=(), arch=None, cache_dir=None, extra_source=None, backend="nvrtc", *,
                       enable_cooperative_groups=False, name_expressions=None, log_stream=None, jitify=False):
    """Compiles CUDA C++ `source` (through loom's RawModule: NVRTC or clang-19, kept in loom's kernel cache)
    and returns a Module (CuPy's signature). arch: a compute capability ('90') to compile for, else the
    current device's (options may name one instead: -arch=sm_XX); cache_dir: a directory for this
    compilation's cache entries (else loom's cache, loom.cuda.compiler._kernel_cache_backend); extra_source:
    code placed before `source` (CuPy's hipRTC workaround); log_stream receives the compiler's messages.
    CUDA C++ that does not compile raises CompileException."""
    from .._raw import RawModule
    if not isinstance(source, str):
        raise TypeError(f"compile_with_cache: source must be a str, got {type(source).__name__}")
    code = source if not extra_source else str(extra_source) + "\n" + source
    opts = tuple(str(o) for o in options)
    if arch is not None and not any(o.startswith(("-arch", "--gpu-architecture", "--cuda-gpu-arch")) for o in opts):
        a = str(arch)
        opts += ("-arch=" + (a if a.startswith(("sm_", "compute_")) else "sm_" + a),)
    global _kernel_cache_backend
    with _compile_lock:
        saved = _kernel_cache_backend
        if cache_dir is not None:
            _kernel_cache_backend = DiskKernelCacheBackend(cache_dir)
        try:
            m = RawModule(code=code, options=opts, backend=backend, name_expressions=name_expressions,
                          enable_cooperative_groups=enable_cooperative_groups, jitify=jitify, format="cuda")
        finally:
            _kernel_cache_backend = saved
    if log_stream is not None:
        m.compile(log_stream)
    return Module(m)


def _compile_module_with_cache(source, options=(), arch=None, cache_dir=None, extra_source=None, backend="nvrtc",
                               *, enable_cooperative_groups=False, name_expressions=None, log_stream=None,
                               jitify=False):
    """CuPy's internal name of compile_with_cache (its tests call this one); the same."""
    return compile_with_cache(source, options, arch, cache_dir, extra_source, backend,
                              enable_cooperative_groups=enable_cooperative_groups, name_expressions=name_expressions,
                              log_stream=log_stream, jitify=jitify)
