"""loom.fft.config: CuPy's cupy.fft.config, the settings of the FFT routines that loom has.

enable_nd_planning (default True): a multi-dimensional transform on a GPU is planned as one library call
over up to three axes; False transforms one axis per call (CuPy's 1-D plans in sequence). The results
agree to rounding. As in CuPy 14 the setting is deprecated: reading or writing it warns
(DeprecationWarning). Host arrays are transformed by NumPy's pocketfft, which has no such choice.

Three environment switches (read at each call, for A/B runs; all default on) choose how the device path
builds its library calls:
LOOM_FFT_REAL_ND=0: multi-dim real transforms as a 1-d real transform of the last axis plus complex ones of
  the others (a transposed copy per pass) instead of one real-to-complex / complex-to-real plan over up to
  three trailing axes.
LOOM_FFT_FUSED_PAD=0: the zero-padding of n= / s= as a concatenate per axis (a new array each) instead of a
  lazy clipped gather per axis that fuses, with the dtype cast, into the one copy made for the library.
LOOM_FFT_REAL_SPECTRUM=0: fft / fft2 / fftn of a real input as a complex transform of the input cast to
  complex, and no inverse of a known-Hermitian spectrum as a complex-to-real transform (loom/fft.py's
  "Real inputs"), instead of the real-to-complex transform and its Hermitian fill.
"""
import os
import sys
import types
import warnings

_state = {"nd_planning": True}


def _nd_planning():
    """The setting, read without the deprecation warning (for loom.fft itself)."""
    return _state["nd_planning"]


def _switch(name):
    """An environment switch of the device path: on unless set to 0 / off / false / no."""
    return os.environ.get(name, "1").strip().lower() not in ("0", "off", "false", "no")


def _real_nd():
    return _switch("LOOM_FFT_REAL_ND")


def _fused_pad():
    return _switch("LOOM_FFT_FUSED_PAD")


def _real_spectrum():
    return _switch("LOOM_FFT_REAL_SPECTRUM")


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
