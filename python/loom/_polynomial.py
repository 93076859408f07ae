"""_polynomial.py: loom.poly1d, the one-dimensional polynomial class of NumPy and CuPy
(cupy/lib/_polynomial.py): coefficients in a loom array (highest power first, leading zeros trimmed),
arithmetic, evaluation and calculus through loom's polynomial functions (polyval, polyadd, polysub,
polymul, polyder, polyint, roots, poly), get() / set() to and from numpy.poly1d. repr() and str() are
NumPy's (they read the coefficients on the host).
"""
import numbers
import operator

import numpy

from ._ndarray import ndarray
from ._creation import asarray, zeros


def _numeric():
    from . import _numeric as n  # the polynomial functions (some computed on the host, as listed there)
    return n


class poly1d:
    """poly1d(c_or_r, r=False, variable=None): the polynomial with coefficients c_or_r (highest power
    first), or with roots c_or_r when r is True, like numpy.poly1d; its coefficients are a loom array."""

    __hash__ = None  # type: ignore[assignment]  # unhashable, as numpy.poly1d

    def __init__(self, c_or_r, r=False, variable=None):
        if isinstance(c_or_r, (poly1d, numpy.poly1d)):
            self._variable = c_or_r.variable
            self._coeffs = asarray(c_or_r.coeffs)
            if variable is not None:
                self._variable = variable
            return
        if r:
            c_or_r = _numeric().poly(c_or_r)
        c = asarray(c_or_r)
        if c.ndim > 1:
            raise ValueError("Polynomial must be 1d only.")
        c = c.reshape(c.size) if c.ndim == 0 else c
        nz = numpy.flatnonzero(c.get())  # trim the leading zeros (reads the coefficients, as NumPy does)
        c = c[int(nz[0]):] if nz.size else zeros(1, c.dtype)
        self._coeffs = c
        self._variable = "x" if variable is None else variable

    # ---- attributes -------------------------------------------------------------------------------
    @property
    def coeffs(self):
        return self._coeffs

    @coeffs.setter
    def coeffs(self, value):
        if value is not self._coeffs:  # NumPy allows only in-place changes through the property
            raise AttributeError("Cannot set attribute")

    @property
    def variable(self):
        return self._variable

    @property
    def order(self):
        return self._coeffs.size - 1

    @property
    def roots(self):
        return _numeric().roots(self._coeffs)

    r = roots
    c = coef = coefficients = coeffs
    o = order

    def __array__(self, dtype=None, copy=None):
        h = self._coeffs.get()
        return h if dtype is None else h.astype(dtype, copy=False)

    def get(self, stream=None):
        """The polynomial as a numpy.poly1d."""
        return numpy.poly1d(self._coeffs.get(), variable=self._variable)

    def set(self, a, stream=None):
        """Takes the coefficients and variable of the numpy.poly1d a."""
        if not isinstance(a, numpy.poly1d):
            raise TypeError(f"poly1d.set takes a numpy.poly1d, got {type(a).__name__}")
        self._variable = a.variable
        self._coeffs = asarray(a.coeffs)

    def __repr__(self):
        return repr(self.get())

    def __str__(self):
        return str(self.get())

    def __len__(self):
        return self.order

    def __iter__(self):
        return iter(self._coeffs)

    # ---- evaluation and arithmetic --------------------------------------------------------------------
    def __call__(self, val):
        if isinstance(val, (poly1d, numpy.poly1d)):
            return poly1d(numpy.polyval(self.get(), numpy.poly1d(val.coeffs.get() if isinstance(val, poly1d)
                                                                  else val.coeffs)))
        return _numeric().polyval(self._coeffs, val)

    def __neg__(self):
        return poly1d(-self._coeffs)

    def __pos__(self):
        return self

    @staticmethod
    def _coeffs_of(other):
        return other.coeffs if isinstance(other, (poly1d, numpy.poly1d)) else other

    def __mul__(self, other):
        if isinstance(other, (numbers.Number, numpy.generic)) or (isinstance(other, ndarray) and other.ndim == 0):
            return poly1d(self._coeffs * other)
        return poly1d(_numeric().polymul(self._coeffs, asarray(self._coeffs_of(other))))

    def __rmul__(self, other):
        return self.__mul__(other)

    def __add__(self, other):
        return poly1d(_numeric().polyadd(self._coeffs, asarray(self._coeffs_of(other))))

    __radd__ = __add__

    def __sub__(self, other):
        return poly1d(_numeric().polysub(self._coeffs, asarray(self._coeffs_of(other))))

    def __rsub__(self, other):
        return poly1d(_numeric().polysub(asarray(self._coeffs_of(other)), self._coeffs))

    def __pow__(self, val):
        """self ** val for a non-negative integral scalar val (ValueError otherwise; a float such as 3.0 is a
        TypeError, as in NumPy, whose loop count must be an int). The product starts from the int64
        polynomial 1, so the coefficients promote as NumPy's (poly1d(...) ** 0 is int64 [1])."""
        if not numpy.isscalar(val) or isinstance(val, (str, bytes)) or int(val) != val or val < 0:
            raise ValueError("Power to non-negative integers only.")
        n = operator.index(val)
        res = poly1d(asarray([1]))
        for _ in range(n):
            res = res * self
        return res

    def __truediv__(self, other):
        if isinstance(other, (numbers.Number, numpy.generic)):
            return poly1d(self._coeffs / other)
        raise NotImplementedError("poly1d / poly1d (polynomial division) is not supported; divide by a scalar")

    def __eq__(self, other):
        if not isinstance(other, (poly1d, numpy.poly1d)):
            return NotImplemented
        a, b = self._coeffs, asarray(other.coeffs)
        return a.shape == b.shape and bool((a == b).all())

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    # ---- coefficients by power ----------------------------------------------------------------------
    def __getitem__(self, val):
        if val > self.order or val < 0:
            return self._coeffs.dtype.type(0)
        return self._coeffs[self.order - val]

    def __setitem__(self, key, val):
        if key < 0:
            raise ValueError("Negative powers are not supported.")
        if key > self.order:
            from ._manipulation import concatenate
            self._coeffs = concatenate([zeros(key - self.order, self._coeffs.dtype), self._coeffs])
        self._coeffs[self.order - key] = val

    # ---- calculus -----------------------------------------------------------------------------------------
    def deriv(self, m=1):
        """The m-th derivative (numpy.poly1d.deriv)."""
        return poly1d(_numeric().polyder(self._coeffs, m))

    def integ(self, m=1, k=0):
        """The m-th antiderivative with integration constants k (numpy.poly1d.integ)."""
        return poly1d(_numeric().polyint(self._coeffs, m, k))


__all__ = ["poly1d"]
