"""cupy.cuda.device: loom.cuda.Device and CuPy's get_compute_capability ('0' for loom's host stand-in,
so the tests that need a given GPU generation skip on the host)."""
import loom.cuda as _cuda

from .. import _shim

Device = _cuda.Device


def get_device_id():
    return _cuda.get_device_id()


def get_compute_capability():
    cc = _cuda.Device().compute_capability
    return "0" if cc == "host" else cc


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy.cuda.device.{name}")
