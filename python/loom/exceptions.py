"""loom.exceptions: the exception and warning classes loom raises, NumPy's own (as in cupy.exceptions),
so that `except numpy.exceptions.AxisError` and `except loom.exceptions.AxisError` catch the same."""
import numpy

_source = numpy.exceptions if hasattr(numpy, "exceptions") else numpy  # NumPy < 1.25: top level

AxisError = _source.AxisError
ComplexWarning = _source.ComplexWarning
ModuleDeprecationWarning = _source.ModuleDeprecationWarning
TooHardError = _source.TooHardError
VisibleDeprecationWarning = _source.VisibleDeprecationWarning
RankWarning = _source.RankWarning

__all__ = ["AxisError", "ComplexWarning", "ModuleDeprecationWarning", "TooHardError", "VisibleDeprecationWarning",
           "RankWarning"]
