"""cupy._core.flags: CuPy's Flags class is loom's flags type (ndarray.flags)."""
import loom as _loom

Flags = type(_loom.ones(1).flags)
