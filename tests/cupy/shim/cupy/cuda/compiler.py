"""cupy.cuda.compiler: CuPy's front end of NVRTC and nvcc. CompileException is loom's
(loom.cuda.compiler.CompileException: what loom's RawModule raises for CUDA C++ that does not compile);
_get_arch is the current device's compute capability ('90' on an H200), which CuPy compiles for and its tests
pass to nvcc; _run_cc runs a toolkit command (e.g. `nvcc --version`, which CuPy's tests read at import) and
returns its output: a fact of the machine's CUDA toolkit, not a device call; the kernel-cache internals
CuPy's tests patch are accepted without effect (below). Everything else compiles for or queries a device:
stubs (NeedsCudaDevice without a GPU, MissingInLoom with one)."""
import subprocess

from loom.cuda.compiler import CompileException  # noqa: F401

from .. import _shim


def _get_arch():
    """The compute capability raw kernels are compiled for: the current device's ('90'), as CuPy's."""
    import loom
    return loom.cuda.Device().compute_capability


def _run_cc(cmd, cwd, backend, log_stream=None):
    try:
        return subprocess.check_output(cmd, cwd=cwd, stderr=subprocess.STDOUT, universal_newlines=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError(f"{backend} failed: {e}") from e


# CuPy's kernel-cache internals that its tests patch to isolate a test's compiles (TestRaw's fixture,
# use_temporary_cache_dir, compile_in_memory). Loom's RawModule keeps its own cache (by source and options):
# these are accepted and without effect, as the shim's other CuPy settings loom has no knob for.
_kernel_cache_backend = None  # CuPy: the DiskKernelCacheBackend of ~/.cupy/kernel_cache
_empty_file_preprocess_cache: dict = {}  # CuPy: preprocessed empty sources per options (nvcc)


def _get_bool_env_variable(name, default):
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


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy.cuda.compiler.{name}")
