"""cupy.cuda._compiler_cache: CuPy's on-disk cache of compiled kernels. CuPy's tests patch an instance of
DiskKernelCacheBackend(tmpdir) in to isolate their compiles; loom's RawModule keeps its own cache, so the
backend is accepted and never called (tests that count its loads and stores fail: loom does not use it).
Its other names (the payload hashing CuPy's cache tests read) are stubs."""
from .. import _shim


class DiskKernelCacheBackend:
    """CuPy's disk cache backend at `cache_dir`: holds the directory; loom's compiles do not go through it."""

    def __init__(self, cache_dir):
        if not _shim.has_gpu():  # a cache of device code: as every cupy.cuda._compiler_cache name (DEVICE_APIS)
            raise _shim.NeedsCudaDevice("needs a CUDA device: cupy.cuda._compiler_cache.DiskKernelCacheBackend "
                                        "(loom's device here is the host)")
        self.cache_dir = cache_dir

    def load(self, name):  # CuPy: the cached payload of `name`, or None
        return None

    def save(self, name, data):  # CuPy: stores the payload; loom never calls it
        return None


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy.cuda._compiler_cache.{name}")
