"""loom.polynomial: the power-series helpers of numpy.polynomial that CuPy provides
(cupy.polynomial.polynomial.polyvander / polycompanion, cupy.polynomial.polyutils.as_series / trimseq /
trimcoef), on loom arrays. The series' values stay on the device; only the trimming decisions (how many
trailing coefficients are zero, a length of the result) are read on the host, one small read per call."""
from . import polynomial, polyutils  # noqa: F401
