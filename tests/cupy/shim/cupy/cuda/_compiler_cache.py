"""cupy.cuda._compiler_cache: CuPy's on-disk cache of compiled kernels, mapped to loom's disk cache of raw
modules (loom.cuda.compiler): DiskKernelCacheBackend(dir) stores entries as `<key>.cubin` files (the entry's
hex digest, then the entry), _hash_hexdigest / _hash_length are that digest's. CuPy's tests patch an
instance into cupy.cuda.compiler._kernel_cache_backend, which is loom's backend setting (compiler.py), so
loom's RawModule stores and loads through it. Other names are stubs."""
from loom.cuda.compiler import DiskKernelCacheBackend, _hash_hexdigest, _hash_length  # noqa: F401

from .. import _shim


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy.cuda._compiler_cache.{name}")
