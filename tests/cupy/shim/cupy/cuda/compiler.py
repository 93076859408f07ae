"""cupy.cuda.compiler: CuPy's front end of NVRTC and nvcc. _run_cc runs a toolkit command (e.g.
`nvcc --version`, which CuPy's tests read at import) and returns its output: a fact of the machine's
CUDA toolkit, not a device call. Everything else compiles for or queries a device: stubs
(NeedsCudaDevice without a GPU, MissingInLoom with one)."""
import subprocess

from .. import _shim


def _run_cc(cmd, cwd, backend, log_stream=None):
    try:
        return subprocess.check_output(cmd, cwd=cwd, stderr=subprocess.STDOUT, universal_newlines=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError(f"{backend} failed: {e}") from e


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy.cuda.compiler.{name}")
