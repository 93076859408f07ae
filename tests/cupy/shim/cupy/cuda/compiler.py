"""cupy.cuda.compiler: CuPy's front end of NVRTC and nvcc. CompileException is loom's
(loom.cuda.compiler.CompileException: what loom's RawModule raises for CUDA C++ that does not compile);
_get_arch is the current device's compute capability ('90' on an H200), which CuPy compiles for and its tests
pass to nvcc; _run_cc runs a toolkit command (e.g. `nvcc --version`, which CuPy's tests read at import) and
returns its output: a fact of the machine's CUDA toolkit, not a device call; compile_with_cache and its internal
name _compile_module_with_cache are loom's (a Module of Functions over RawModule); the kernel-cache internals
CuPy's tests patch map to loom's RawModule cache (below). Everything else compiles for or queries a device:
stubs (NeedsCudaDevice without a GPU, MissingInLoom with one)."""
import subprocess

import sys
import types

import loom.cuda.compiler as _loom_compiler
from loom.cuda.compiler import CompileException  # noqa: F401
from loom.cuda.compiler import _compile_module_with_cache, compile_with_cache  # noqa: F401
from loom.cuda.compiler import _cache_payload_magic, _decode_cache_payload, _encode_cache_payload  # noqa: F401

from .. import _shim


def _get_arch():
    """The compute capability raw kernels are compiled for: the current device's ('90'), as CuPy's."""
    import loom
    if not _shim.has_gpu():
        raise _shim.NeedsCudaDevice("needs a CUDA device: cupy.cuda.compiler._get_arch (loom's device here is "
                                    "the host)")
    return loom.cuda.Device().compute_capability


def _run_cc(cmd, cwd, backend, log_stream=None):
    try:
        return subprocess.check_output(cmd, cwd=cwd, stderr=subprocess.STDOUT, universal_newlines=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError(f"{backend} failed: {e}") from e


# CuPy's kernel-cache internals, mapped to loom's RawModule cache (loom.cuda.compiler). The entry payload
# format is loom's (_encode_cache_payload, _decode_cache_payload, _cache_payload_magic). The backend CuPy's
# tests patch in (_kernel_cache_backend) and CuPy's switch to keep compiled kernels in memory only
# (_get_bool_env_variable('CUPY_CACHE_IN_MEMORY'), which tests patch too) together decide loom's backend:
# loom's MemoryKernelCacheBackend while the switch is on, else the patched backend (None: loom's default
# disk cache); _Compiler below pushes the choice to loom at every set and restore.
# _empty_file_preprocess_cache (CuPy: preprocessed empty sources per options, for nvcc) has no loom
# counterpart: accepted, without effect.
_empty_file_preprocess_cache: dict = {}


def _read_bool_env(name, default):
    """CuPy's reading of a boolean environment variable (CUPY_CACHE_IN_MEMORY, ...): unset or empty is
    `default`, else whether its integer value is 1 (a value that is not an integer is False)."""
    import os
    val = os.environ.get(name)
    if val is None or len(val) == 0:
        return default
    try:
        return int(val) == 1
    except ValueError:
        return False


_settings = {"backend": None, "get_bool_env_variable": _read_bool_env}


def _push():
    in_memory = _settings["get_bool_env_variable"]("CUPY_CACHE_IN_MEMORY", False)
    _loom_compiler._kernel_cache_backend = (_loom_compiler.MemoryKernelCacheBackend() if in_memory
                                            else _settings["backend"])


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy.cuda.compiler.{name}")


def _setting(key, default):
    def get(self):
        return _settings[key]

    def set_(self, value):
        _settings[key] = value
        _push()

    def del_(self):  # mock.patch's restore of a name that is not in the module's __dict__
        _settings[key] = default
        _push()
    return property(get, set_, del_)


class _Compiler(types.ModuleType):
    _kernel_cache_backend = _setting("backend", None)
    _get_bool_env_variable = _setting("get_bool_env_variable", _read_bool_env)


sys.modules[__name__].__class__ = _Compiler
_push()
