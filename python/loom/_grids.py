"""_grids.py: numerical ranges and grids (logspace, geomspace, meshgrid, mgrid, ogrid, indices) and
matrices built from index arithmetic (tri, tril, triu, diag, diagflat).

On the device: logspace (base ** a range), meshgrid and indices (broadcast views, copied unless asked
not to), tri/tril/triu (a mask from two broadcast index ranges, one fused where), diag (a strided
view, or a zero matrix whose diagonal view is written). The 1-d ranges themselves come from arange /
linspace (host-computed today, like those). geomspace, mgrid and ogrid are computed by NumPy on the
host (README's list).
"""
import numpy

from . import _core
from ._common import _OPS, _code
from ._ndarray import ndarray, _host_call, _from_host
from ._creation import asarray, arange, linspace, zeros


def _b(name, x, y):
    return _core.binary(_OPS[name], x, y)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop, num) (numpy.logspace)."""
    y = linspace(start, stop, num, endpoint, axis=axis)
    b = asarray(base) if isinstance(base, (ndarray, list, tuple, numpy.ndarray)) else base
    if isinstance(b, ndarray) and b.ndim:
        b = b.reshape(b.shape[:axis] + (1,) + b.shape[axis:]) if axis >= 0 else b
    r = _b("pow", b, y)
    return r if dtype is None else r.astype(dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Numbers spaced evenly on a log scale, endpoints exact (numpy.geomspace). Through NumPy on the host."""
    return _host_call(numpy.geomspace, start, stop, num, endpoint, dtype, axis)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from 1-d coordinate vectors (numpy.meshgrid): broadcast views of them, copied
    unless copy=False."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    xs = [asarray(x).ravel() for x in xi]
    outs = []
    for i, x in enumerate(xs):
        shape = [1] * nd
        shape[i] = -1
        if indexing == "xy" and nd > 1 and i < 2:
            shape[i] = 1
            shape[1 - i] = -1
        outs.append(x.reshape(tuple(shape)))
    if not sparse:
        from ._manipulation import broadcast_arrays
        outs = list(broadcast_arrays(*outs))
    if copy:
        outs = [o.copy() for o in outs]
    return tuple(outs)


class _Grid:
    """mgrid / ogrid: grid[start:stop:step, ...] (a complex step: that many points, ends included),
    computed by NumPy on the host."""

    def __init__(self, sparse):
        self._sparse = sparse

    def __getitem__(self, key):
        key = tuple(_host_value(k) for k in key) if isinstance(key, tuple) else _host_value(key)
        return _from_host((numpy.ogrid if self._sparse else numpy.mgrid)[key], None)


def _host_value(k):
    if isinstance(k, slice):
        return slice(*(v.get() if isinstance(v, ndarray) else v for v in (k.start, k.stop, k.step)))
    return k


mgrid = _Grid(False)
ogrid = _Grid(True)


def indices(dimensions, dtype=int, sparse=False):
    """The index grid of an array of shape `dimensions` (numpy.indices): broadcast ranges, copied."""
    dimensions = tuple(dimensions)
    n = len(dimensions)
    outs = []
    for i, d in enumerate(dimensions):
        shape = [1] * n
        shape[i] = d
        outs.append(arange(d, dtype=dtype).reshape(tuple(shape)))
    if sparse:
        return tuple(outs)
    from ._manipulation import broadcast_to, stack
    if n == 0:
        return zeros((0,), dtype)
    return stack([broadcast_to(o, dimensions) for o in outs])



def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``function(*coordinates, **kwargs)``, where coordinates are the index grids of `shape` in `dtype`
    (numpy.fromfunction: whatever function returns, unchanged; elementwise functions fuse)."""
    return function(*indices(shape, dtype=dtype), **kwargs)

def _tri_mask(n, m, k):
    """The n x m mask j - i <= k (below and on the k-th diagonal), fused."""
    i = arange(n).reshape((n, 1))
    j = arange(m).reshape((1, m))
    return _b("le", _b("sub", j, i), k)


def tri(N, M=None, k=0, dtype=float):
    """Ones at and below the k-th diagonal (numpy.tri)."""
    M = N if M is None else M
    return _core.cast(_tri_mask(N, M, k), _code(dtype))


def _tri_shape(m):
    """The mask shape of tril/triu: the last two axes; a 1-d m of length n is broadcast against an n x n
    mask (NumPy's result)."""
    if m.ndim == 0:
        raise ValueError("tril/triu: input array must be at least 1-d")
    return (m.shape[0], m.shape[0]) if m.ndim == 1 else m.shape[-2:]


def tril(m, k=0):
    """m with the elements above the k-th diagonal zeroed (numpy.tril), one fused where."""
    m = asarray(m)
    return _core.cast(_core.where(_tri_mask(*_tri_shape(m), k), m, 0), m._dtype_code)


def triu(m, k=0):
    """m with the elements below the k-th diagonal zeroed (numpy.triu), one fused where."""
    m = asarray(m)
    return _core.cast(_core.where(_tri_mask(*_tri_shape(m), k - 1), 0, m), m._dtype_code)


def diag(v, k=0):
    """The k-th diagonal of a 2-d v (a copy), or the square matrix with the 1-d v on its k-th diagonal
    (numpy.diag)."""
    v = asarray(v)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        r = zeros((n, n), v.dtype)
        if v.shape[0]:
            r._numpy_view(lambda a: a.diagonal(k))[...] = v
        return r
    if v.ndim == 2:
        return v._numpy_view(lambda a: a.diagonal(k)).copy()
    raise ValueError("Input must be 1- or 2-d.")


def diagflat(v, k=0):
    """The 2-d array with the flattened v on its k-th diagonal (numpy.diagflat)."""
    return diag(asarray(v).ravel(), k)


class _AxisConcatenator:
    """r_ and c_ (CuPy's AxisConcatenator): x[a, b, ...] joins arrays and scalars along `axis`, each
    made at least `ndmin`-d first (a 1-d array becomes a column for c_: trans1d=0); the result dtype is
    NumPy's result_type of the pieces (Python scalars weak). As in CuPy, slices (ranges) and string
    directives are NotImplementedError; use arange/linspace and concatenate for those."""

    def __init__(self, axis=0, ndmin=1, trans1d=-1):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        objs, dtypes = [], []
        for item in items:
            if isinstance(item, slice):
                raise NotImplementedError("r_/c_: slices (ranges) are not supported, as in CuPy; use "
                                          "loom.arange or loom.linspace and pass the array")
            if isinstance(item, str):
                raise NotImplementedError("r_/c_: string directives are not supported, as in CuPy; use "
                                          "loom.concatenate with axis= instead")
            if isinstance(item, (bool, int, float, complex)) or numpy.isscalar(item):
                a = asarray(numpy.array(item, ndmin=self.ndmin))
                dtypes.append(item if isinstance(item, (bool, int, float, complex)) else numpy.asarray(item).dtype)
            else:
                a = asarray(item)
                dtypes.append(a.dtype)
                nd = a.ndim
                if nd < self.ndmin:
                    a = a.reshape((1,) * (self.ndmin - nd) + a.shape)
                    if self.trans1d != -1:
                        k2, k1 = self.ndmin - nd, self.trans1d
                        k1 = k1 + k2 + 1 if k1 < 0 else k1
                        axes = list(range(self.ndmin))
                        a = a.transpose(axes[:k1] + axes[k2:] + axes[k1:k2])
            objs.append(a)
        from ._manipulation import concatenate
        dtype = numpy.result_type(*dtypes) if dtypes else numpy.float64
        return concatenate([o.astype(dtype, copy=False) for o in objs], axis=self.axis)

    def __len__(self):
        return 0


r_ = _AxisConcatenator(0, 1, -1)
c_ = _AxisConcatenator(-1, 2, 0)

__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
__all__ += ["mgrid", "ogrid", "r_", "c_"]
