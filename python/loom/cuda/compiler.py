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
"""
import hashlib
import os
import struct
import tempfile


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
