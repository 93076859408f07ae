"""loom.fft.config: CuPy's cupy.fft.config, the settings of the FFT routines that loom has.

enable_nd_planning (default True): a multi-dimensional transform on a GPU is planned as one library call
over up to three axes; False transforms one axis per call (CuPy's 1-D plans in sequence). The results
agree to rounding. As in CuPy 14 the setting is deprecated: reading or writing it warns
(DeprecationWarning). Host arrays are transformed by NumPy's pocketfft, which has no such choice.
"""
import sys
import types
import warnings

_state = {"nd_planning": True}


def _nd_planning():
    """The setting, read without the deprecation warning (for loom.fft itself)."""
    return _state["nd_planning"]


def _deprecated():
    warnings.warn("loom.fft.config.enable_nd_planning (cupy.fft.config.enable_nd_planning) is deprecated: "
                  "multi-dimensional transforms are planned over up to three axes per call",
                  DeprecationWarning, stacklevel=3)


class _ConfigModule(types.ModuleType):
    @property
    def enable_nd_planning(self):
        _deprecated()
        return _state["nd_planning"]

    @enable_nd_planning.setter
    def enable_nd_planning(self, value):
        _deprecated()
        _state["nd_planning"] = bool(value)


sys.modules[__name__].__class__ = _ConfigModule
