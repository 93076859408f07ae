"""loom.linalg: NumPy's numpy.linalg and the array API's linalg extension on the arrays' device.

Decompositions and solvers (solve, inv, cholesky, qr, svd, svdvals, eigh, eigvalsh) run at once through
loom_linalg: LAPACK on the host, cuSOLVER on CUDA devices, over every matrix of the batch in one call.
Where the device has no solver library (cuSOLVER not installed, or an AMD device) a GPU array's
decomposition runs on the host and its results are copied back, with a RuntimeWarning that says why,
once per reason (_lapack). cuSOLVER's SVD wants rows >= columns: a wider GPU matrix is decomposed through
its conjugate transpose (svd). The library wants column-major matrices packed one after another, so an input is first copied
into that layout (a lazy transpose-copy, skipped when the input already has it); the results come back in
that layout as well (their strides say so). det, slogdet and inv skip the copy of a C-ordered input, whose
column-major reading is its transpose: det(a^T) = det(a), and inv(a^T)^T = inv(a) is a free, C-ordered
view (_transposed). On the host, LU and solves of small real matrices run in runtime/host_lapack.c over
the batch on loom's thread pool, larger ones in LAPACK. What is built from them (det, slogdet, pinv, lstsq,
matrix_rank, matrix norms) is ordinary loom operations, lazy and fused. Matrix products (matmul,
tensordot, vecdot, multi_dot, matrix_power) are graph nodes (loom._products). Errors follow NumPy:
numpy.linalg.LinAlgError for a singular or non-positive-definite matrix and for arrays of fewer than two
dims. float32, float64, complex64 and complex128 (integers and bools as float64); singular values and
eigh's eigenvalues are real. eig and eigvals (general matrices; no geev in loom_linalg yet) are LAPACK's
through NumPy on the host, their results complex as CuPy's.
"""
import builtins
import collections
import operator
import warnings

import numpy
from numpy.linalg import LinAlgError

from . import _core
from ._common import _code, _from_numpy
from ._creation import asarray, arange, eye, zeros
from ._math import absolute, sqrt, log, sign, reciprocal, isnan
from ._reductions import amax, amin, sum, prod, count_nonzero, any as _any
from ._indexing import where
from ._manipulation import broadcast_to
from ._numeric import outer
from ._products import matmul, tensordot, vecdot, matrix_transpose, _permute, _reshape, _diagonal_last, _cast

_core.set_linalg_error(LinAlgError)

_LU, _SOLVE, _CHOLESKY, _QR, _SVD, _EIGH = range(6)
_UPPER, _COMPLETE, _VALUES_ONLY, _ANY_VH_LAYOUT = 1, 2, 4, 8  # loom.h's LOOM_LINALG_* flags

EigResult = collections.namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = collections.namedtuple("QRResult", ["Q", "R"])
SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])
_NoValue = object()


def _float_dtype(*arrays, half=False):
    """The dtype a decomposition computes in: float32, float64, complex64 or complex128 (NumPy's linalg
    rules); half=True: float16 computes in float32 (CuPy's rule for eigh, whose results are float16)."""
    dt = numpy.result_type(*[a.dtype for a in arrays])
    if dt.kind in "biu":
        return numpy.dtype(numpy.float64)
    if half and dt == numpy.float16:
        return numpy.dtype(numpy.float32)
    if dt not in (numpy.float32, numpy.float64, numpy.complex64, numpy.complex128):
        raise TypeError(f"array type {dt} is unsupported in linalg")
    return dt


def _matrix(a, name, square=False):
    a = asarray(a)
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if square and a.shape[-1] != a.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return a


def _colmajor(x, dtype):
    """x (cast to dtype) as column-major matrices packed one after another, loom_linalg's layout."""
    return _colmajors((x, dtype))[0]


def _colmajors(*pairs):
    """_colmajor of each (x, dtype) pair; the copies that are needed run in one evaluation."""
    out = []  # (array, whether it is a C-ordered copy of the swapped matrices)
    for x, dtype in pairs:
        x = _cast(x, dtype)
        if not x._lazy and not x._tracer and _packed(x):
            out.append((x, False))
            continue
        nd = x.ndim
        swap = list(range(nd - 2)) + [nd - 1, nd - 2]
        out.append((_core.cast(_permute(x, swap), x._dtype_code), True))
    copies = [y for y, copied in out if copied]
    if copies:
        _core.eval(*copies)
    return [y.swapaxes(-1, -2) if copied else y for y, copied in out]


def _transposed(x, dtype):
    """(y, True) with y the matrices of x (cast to dtype) transposed, a free view in loom_linalg's layout,
    where x already lies C-ordered (what most arrays are): the column-major reading of a row-major matrix
    is its transpose. Else (_colmajor(x, dtype), False). What a transpose does not change (det, slogdet)
    or undoes at no cost (inv: inv(a^T)^T, itself C-ordered) takes y and skips the copy."""
    x = _cast(x, dtype)
    if not x._lazy and not x._tracer and x.ndim >= 2:
        y = x.swapaxes(-1, -2)
        if _packed(y):
            return y, True
    return _colmajor(x, dtype), False


_HOST_FALLBACKS: set[str] = set()  # the reasons already warned about


def _lapack(op, flags, *arrays):
    """loom_linalg on the arrays' device. A GPU without a solver library (cuSOLVER missing, AMD) runs the
    operation on the host and copies the results back: a host round trip, said once per reason."""
    try:
        res = _core.linalg(op, flags, *arrays)
        return _nan_carried(arrays[0], res) if op in (_LU, _SOLVE) and arrays[0]._on_gpu else res
    except NotImplementedError as e:
        if not arrays[0]._on_gpu:
            raise
        reason = str(e)
        if reason not in _HOST_FALLBACKS:
            _HOST_FALLBACKS.add(reason)
            warnings.warn(f"loom.linalg runs on the host (a round trip): {reason}", RuntimeWarning, stacklevel=3)
    kind, index = arrays[0]._device
    host = [_colmajor(_core.to_device(a, 0, 0), a.dtype) for a in arrays]
    return tuple(_core.to_device(r, kind, index) for r in _core.linalg(op, flags, *host))


def _nan_carried(a, results):
    """The results of an LU factorization or solve with those of each matrix of a holding a NaN set to NaN.
    LAPACK's getrf carries a NaN entry into U and every solve from it (NumPy: det, inv and solve of such a
    matrix are NaN); cuSOLVER's getrf drops it (H100, 2026-12-06: a finite LU, det, inv and solve, exactly
    those of the matrix with the NaN read as 0). One lazy reduction of a, fused into the results' uses."""
    if a.dtype.kind not in "fc":
        return results
    bad = _any(isnan(a), axis=(-2, -1), keepdims=True)
    nan = complex(numpy.nan, numpy.nan)
    return tuple(where(bad, numpy.asarray(nan if r.dtype.kind == "c" else nan.real, r.dtype), r)
                 if r.dtype.kind in "fc" else r for r in results)


def _packed(x):
    nd, it = x.ndim, x.itemsize
    want = it
    for ax in [nd - 2, nd - 1] + list(range(nd - 3, -1, -1)):
        if x.shape[ax] != 1 and x.strides[ax] != want:
            return False
        want *= x.shape[ax]
    return True


def _tri(n, m, lower, like):
    """A bool (n, m) mask of the lower (or upper) triangle, diagonal included."""
    i = _reshape(arange(n), (n, 1))
    j = _reshape(arange(m), (1, m))
    return _core.binary(_core.ops["ge" if lower else "le"], i, j)


def _zero_triangle(x, lower):
    """x with the triangle other than `lower` (diagonal kept) set to zero."""
    return where(_tri(x.shape[-2], x.shape[-1], lower, x), x, 0)


def _herm(x):
    """The conjugate transpose of each matrix (the transpose of a real one)."""
    t = matrix_transpose(x)
    if x.dtype.kind == "c":
        from ._complex import conjugate
        t = conjugate(t)
    return t


def _batch_broadcast(a, b):
    batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if a.shape[:-2] != batch:
        a = broadcast_to(a, batch + a.shape[-2:])
    if b.shape[:-2] != batch:
        b = broadcast_to(b, batch + b.shape[-2:])
    return a, b


# ---- solvers and decompositions (loom_linalg) -----------------------------------------------------------
def solve(a, b):
    """x with a @ x == b; b is a vector when 1-d (NumPy 2's rule), else a stack of (M, K) matrices."""
    a = _matrix(a, "solve", square=True)
    b = asarray(b)
    dt = _float_dtype(a, b)
    n = a.shape[-1]
    vec = b.ndim == 1
    if vec:
        b = _reshape(b, (b.shape[0], 1))
    if b.ndim < 2 or b.shape[-2] != n:
        raise ValueError(f"solve: b has {b.shape[0] if vec else (b.shape[-2] if b.ndim >= 2 else 0)} rows; "
                         f"a is {n} x {n}")
    a, b = _batch_broadcast(a, b)
    (x,) = _lapack(_SOLVE, 0, *_colmajors((a, dt), (b, dt)))
    return x[..., 0] if vec else x


def inv(a):
    """The inverse of each square matrix (LinAlgError "Singular matrix" when there is none). A C-ordered a
    is solved as it lies, read column-major as a^T: inv(a^T) = inv(a)^T, whose transposed view is the
    C-ordered inverse (no copy either way)."""
    a = _matrix(a, "inv", square=True)
    dt = _float_dtype(a)
    n = a.shape[-1]
    x, tr = _transposed(a, dt)
    if not a._on_gpu and not a._tracer:
        # host identities written by NumPy into memory loom_linalg reads in place (zero-copy): a lazy
        # broadcast would be evaluated and copied by a kernel of 8-element rows (1000 x 8 x 8: 0.24 ms)
        h = numpy.zeros(a.shape, dt)
        numpy.einsum("...ii->...i", h)[...] = 1
        i = _from_numpy(h, copy=False).swapaxes(-1, -2)  # symmetric: the swapped view is column-major
    else:
        i = _colmajor(broadcast_to(_identity(n, dt, a), a.shape), dt)
    (r,) = _lapack(_SOLVE, 0, x, i)
    return r.swapaxes(-1, -2) if tr else r


def _identity(n, dtype, like):
    """The n x n identity as a lazy expression (row index == column index) on like's device: it becomes the
    right-hand sides in the one copy _colmajor makes, with no host array and no host-to-device copy (an
    eager eye(4096) of float64 is 128 MiB through PCIe, which cost inv more than its solve did)."""
    if not like._on_gpu or like._tracer:
        return eye(n, dtype=dtype)
    r = _core.iota((n,))  # computed by the kernel that reads it, on any device
    one = _core.binary(_core.ops["eq"], _reshape(r, (n, 1)), _reshape(r, (1, n)))
    return _cast(one, dtype)


def cholesky(a, /, *, upper=False):
    """The Cholesky factor: lower (a = L L^T) or, with upper=True, upper (a = U^T U)."""
    a = _matrix(a, "cholesky", square=True)
    (l,) = _lapack(_CHOLESKY, _UPPER if upper else 0, _colmajor(a, _float_dtype(a)))
    return _zero_triangle(l, not upper)


def qr(a, mode="reduced"):
    """NumPy's qr: modes 'reduced' (Q m x k, R k x n), 'complete' (Q m x m, R m x n) and 'r' (R only)."""
    if mode not in ("reduced", "complete", "r"):
        if mode == "raw":
            raise NotImplementedError("qr: mode='raw' (LAPACK's Householder form) is not supported")
        raise ValueError(f"Unrecognized mode '{mode}'")
    a = _matrix(a, "qr")
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    x = _colmajor(a, _float_dtype(a))
    if mode == "r":
        (r,) = _lapack(_QR, _VALUES_ONLY, x)
        return _zero_triangle(r[..., :k, :], False)
    complete = mode == "complete"
    r, q = _lapack(_QR, _COMPLETE if complete else 0, x)
    return QRResult(q, _zero_triangle(r if complete else r[..., :k, :], False))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """NumPy's svd: (U, S, Vh) with a = U diag(S) Vh, S descending; S alone when compute_uv=False."""
    a = _matrix(a, "svd")
    if a._on_gpu and a.shape[-2] < a.shape[-1]:
        # cuSOLVER's gesvd wants rows >= columns: a^H = U1 S Vh1, so a = Vh1^H S U1^H (conjugate transposes
        # are lazy views / fused maps)
        r = svd(_herm(a), full_matrices, compute_uv)
        return r if not compute_uv else SVDResult(_herm(r.Vh), r.S, _herm(r.U))
    x = _colmajor(a, _float_dtype(a))
    if not compute_uv:
        return _lapack(_SVD, _VALUES_ONLY, x)[0]
    # any vh layout: cuSOLVER's Jacobi SVD (real dtypes) writes V, which read row-major is vh (no transpose)
    s, u, vh = _lapack(_SVD, (_COMPLETE if full_matrices else 0) | (_ANY_VH_LAYOUT if a._on_gpu else 0), x)
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """The singular values of each matrix, descending."""
    return svd(x, compute_uv=False)


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices, from one triangle."""
    return EighResult(*_eigh(a, UPLO, 0))


def eigvalsh(a, UPLO="L"):
    return _eigh(a, UPLO, _VALUES_ONLY)[0]


def _eigh(a, uplo, flags):
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    a = _matrix(a, "eigh", square=True)
    res = _lapack(_EIGH, flags | (_UPPER if uplo == "U" else 0), _colmajor(a, _float_dtype(a, half=True)))
    return tuple(_cast(r, a.dtype) for r in res) if a.dtype == numpy.float16 else res


def eig(a):
    """Eigenvalues and right eigenvectors (columns of unit length) of general square matrices.

    As CuPy's, the results are complex (complex64 from float32 and complex64, else complex128) even where
    every eigenvalue is real (NumPy then returns real arrays); an empty stack gives empty arrays of the
    dtypes NumPy gives. loom's solver layer has no geev yet: LAPACK's, through NumPy on the host (a GPU
    array is copied there and back, as loom's other NumPy-computed functions, README)."""
    w, v = _geev(a, "eig", True)
    return EigResult(w, v)


def eigvals(a):
    """The eigenvalues of general square matrices, complex as eig's."""
    return _geev(a, "eigvals", False)[0]


def _geev(a, name, vectors):
    a = _matrix(a, name, square=True)
    dt = _float_dtype(a)
    cdt = numpy.result_type(dt, numpy.complex64)
    h = a._np().astype(dt)
    if h.size == 0:  # the installed NumPy's empty results (real before NumPy 2.5, complex from it)
        res = tuple(numpy.linalg.eig(h)) if vectors else (numpy.linalg.eigvals(h),)
    elif vectors:
        res = tuple(r.astype(cdt, copy=False) for r in numpy.linalg.eig(h))
    else:
        res = (numpy.linalg.eigvals(h).astype(cdt, copy=False),)
    return tuple(_from_numpy(r, copy=True, device=a._device) for r in res)


def _lu_parts(a):
    """(diagonal of U, where its row was interchanged) of each matrix's LU factorization: det is the product
    of the diagonal with each interchanged entry negated, one reduction (a product of the entries times a
    parity counted by another reduction took two kernels and the Python to build them)."""
    a = _matrix(a, "det", square=True)
    lu, piv = _lapack(_LU, 0, _transposed(a, _float_dtype(a))[0])  # det(a^T) = det(a): either will do
    n = a.shape[-1]
    d = _diagonal_last(lu, lu.ndim - 2, lu.ndim - 1)
    return d, _core.binary(_core.ops["ne"], piv, _core.iota((n,)) + 1)  # 1-based row numbers, computed in place


def det(a):
    """The determinant of each square matrix (from its LU factorization); a singular one's is +0.0, as
    NumPy's (sign * exp(logdet) there)."""
    d, flip = _lu_parts(a)
    return prod(where(flip, -d, d), axis=-1) + 0.0  # + 0.0: -0.0 becomes 0.0


def slogdet(a):
    """(sign, ``log|det|``) of each square matrix; (0, -inf) for a singular one. A complex matrix's sign is the
    complex number of modulus 1 (or 0) ``det / |det|``, its logabsdet real."""
    d, flip = _lu_parts(a)
    # NumPy's sign of a real determinant counts the negative pivots: a NaN pivot counts as positive
    s = sign(d) if d.dtype.kind == "c" else where(d < 0, -1.0, where(d == 0, 0.0, 1.0)).astype(d.dtype)
    return SlogdetResult(prod(where(flip, -s, s), axis=-1) + 0.0, sum(log(absolute(d)), axis=-1))


# ---- built from the decompositions ---------------------------------------------------------------------
def lstsq(a, b, rcond=None):
    """NumPy's lstsq: (x, residuals, rank, s) minimizing ``|b - a x|``, through the SVD of a (of its R
    factor when a has at least as many rows as columns)."""
    a = _matrix(a, "lstsq")
    if a.ndim != 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    b = asarray(b)
    dt = _float_dtype(a, b)
    m, n = a.shape
    vec = b.ndim == 1
    b2 = _reshape(b, (b.shape[0], 1)) if vec else b
    if b2.ndim != 2 or b2.shape[0] != m:
        raise LinAlgError("Incompatible dimensions")
    a, b2 = _cast(a, dt), _cast(b2, dt)
    eps = numpy.finfo(dt).eps
    rc = eps * builtins.max(m, n) if rcond is None else (eps if rcond < 0 else rcond)
    kk = b2.shape[1]
    if builtins.min(m, n) == 0:
        x = zeros((n, kk), dtype=dt)
        rdt = numpy.empty(0, dt).real.dtype
        res = sum(_abs2(b2), axis=0) if m > n else zeros((0,), dtype=rdt)
        s = zeros((0,), dtype=rdt)
        return (x[:, 0] if vec else x), res, numpy.int32(0), s
    if m >= n:
        # a = Q R: the QR of [a | b] leaves Q^H b in b's columns above row n (the reflectors of a's columns
        # applied to them, as LAPACK's gelsd does with ormqr), so Q is never formed, and R = U S V^H is a
        # small SVD with a's singular values. gesdd of a tall a takes the same QR and SVD of R but also
        # forms Q and multiplies U = Q U_R out (4096 x 64 float32: 7 ms against 3)
        from ._manipulation import concatenate
        # [a | b] column-major is [a^T ; b^T] C-ordered: concatenate writes it in one pass, no second copy
        ab = concatenate((matrix_transpose(a), matrix_transpose(b2)), axis=0).swapaxes(-1, -2)
        (r,) = _lapack(_QR, _VALUES_ONLY, _colmajor(ab, dt))
        u, s, vh = svd(_zero_triangle(r[:n, :n], False))
        c = r[:n, n:]
    else:
        u, s, vh = svd(a, full_matrices=False)
        c = b2
    cut = amax(s) * rc
    big = _core.binary(_core.ops["gt"], s, cut)
    rank = numpy.int32(int(count_nonzero(big)))  # NumPy's type for the rank
    s_inv = where(big, reciprocal(s), 0)
    x = matmul(_herm(vh), _reshape(s_inv, (s.shape[0], 1)) * matmul(_herm(u), c))
    if rank == n and m > n:
        r = b2 - matmul(a, x)
        res = sum(_abs2(r), axis=0)
    else:
        res = zeros((0,), dtype=s.dtype)
    return (x[:, 0] if vec else x), res, rank, s


def pinv(a, rcond=None, hermitian=False, *, rtol=_NoValue):
    """The Moore-Penrose pseudo-inverse of each matrix: V diag(1/s) U^T over the singular values above
    rcond * max(s) (rcond: 1e-15, or rtol; rtol=None: max(M, N) * eps)."""
    a = _matrix(a, "pinv")
    m, n = a.shape[-2:]
    if builtins.min(m, n) == 0:  # NumPy's: empty matrices give an empty result of the input's own dtype
        return zeros(a.shape[:-2] + (n, m), dtype=a.dtype)
    dt = _float_dtype(a)
    if rcond is None:
        rcond = 1e-15 if rtol is _NoValue else (builtins.max(m, n) * numpy.finfo(dt).eps if rtol is None else rtol)
    u, s, vh = svd(a, full_matrices=False)
    rc = asarray(rcond, dtype=s.dtype)
    cut = amax(s, axis=-1, keepdims=True) * (_reshape(rc, rc.shape + (1,)) if rc.ndim else rc)
    big = _core.binary(_core.ops["gt"], s, cut)
    s_inv = where(big, reciprocal(s), 0)
    return matmul(_herm(vh) * _reshape(s_inv, s_inv.shape[:-1] + (1, s_inv.shape[-1])), _herm(u))


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The number of singular values above tol (default: max(s) * max(M, N) * eps)."""
    A = asarray(A)
    if A.ndim < 2:  # a 0-d array, as CuPy's (NumPy: a Python int)
        return _core.cast(_core.binary(_core.ops["ne"], count_nonzero(A), 0), _code(numpy.int64))
    s = svdvals(A)
    if tol is None:
        if rtol is None:
            rtol = builtins.max(A.shape[-2:]) * numpy.finfo(s.dtype).eps
        rt = asarray(rtol, dtype=s.dtype)
        tol = amax(s, axis=-1, keepdims=True) * (_reshape(rt, rt.shape + (1,)) if rt.ndim else rt)
    else:
        t = asarray(tol, dtype=s.dtype)
        tol = _reshape(t, t.shape + (1,)) if t.ndim else t
    return count_nonzero(_core.binary(_core.ops["gt"], s, tol), axis=-1)


def cond(x, p=None):
    """The condition number of each matrix: s_max / s_min for p None, 2 (-2: the inverse), else
    norm(x, p) * norm(inv(x), p) (p 1, -1, inf, -inf, 'fro', 'nuc')."""
    x = _matrix(x, "cond")
    if x.shape[-1] == 0 or x.shape[-2] == 0:
        raise LinAlgError("cond is not defined on empty arrays")
    if p is None or p in (2, -2):
        s = svdvals(x)
        big, small = amax(s, axis=-1), amin(s, axis=-1)
        r = big / small if p != -2 else small / big
    else:
        if x.shape[-1] != x.shape[-2]:
            raise LinAlgError("Last 2 dimensions of the array must be square")
        r = _cond_p(x, p)
    # NumPy's rule: a NaN from a singular matrix (not from NaN inputs) is an infinite condition number
    from ._math import isnan
    from ._reductions import any as _any
    return where(isnan(r) & ~_any(isnan(x), axis=(-2, -1)), numpy.inf, r)


def _cond_p(x, p):
    """norm(x, p) * norm(inv(x), p); a singular matrix's is NaN (NumPy's inv gives NaNs, cond makes it inf)."""
    try:
        return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))
    except LinAlgError:
        if x.ndim == 2:
            return asarray(numpy.nan, dtype=_float_dtype(x)).real
    from ._manipulation import stack
    flat = _reshape(x, (-1,) + x.shape[-2:])
    parts = [_cond_p(flat[i], p) for i in range(flat.shape[0])]
    return _reshape(stack(parts), x.shape[:-2])


def matrix_power(a, n):
    """a raised to the integer power n by repeated squaring (n < 0: of inv(a))."""
    a = asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    n = operator.index(n)
    if n == 0:
        return broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
    if n < 0:
        a, n = inv(a), -n
    result = None
    while n:
        if n & 1:
            result = a if result is None else matmul(result, a)
        n >>= 1
        if n:
            a = matmul(a, a)
    return result if result._lazy else result.copy()


def multi_dot(arrays, *, out=None):
    """NumPy's multi_dot: the chain of products in the order of fewest multiplications."""
    arrays = [asarray(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    first_vec, last_vec = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vec:
        arrays[0] = _reshape(arrays[0], (1, arrays[0].shape[0]))
    if last_vec:
        arrays[-1] = _reshape(arrays[-1], (arrays[-1].shape[0], 1))
    for x in arrays:
        if x.ndim != 2:
            raise ValueError(f"{x.ndim}-dimensional array given. Array must be two-dimensional")
    dims = [arrays[0].shape[0]] + [x.shape[1] for x in arrays]
    k = len(arrays)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for ln in range(1, k):
        for i in range(k - ln):
            j = i + ln
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def chain(i, j):
        return arrays[i] if i == j else matmul(chain(i, split[i][j]), chain(split[i][j] + 1, j))

    r = chain(0, k - 1)
    if first_vec and last_vec:
        r = _reshape(r, ())
    elif first_vec:
        r = _reshape(r, (r.shape[1],))
    elif last_vec:
        r = _reshape(r, (r.shape[0],))
    if out is not None:
        from ._ndarray import _finish
        return _finish(r, out)
    return r


def diagonal(x, /, *, offset=0):
    """The array API's linalg.diagonal: the diagonals of the last two dims (a view)."""
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError("diagonal: x must be at least 2-dimensional")
    return x._numpy_view(lambda v: numpy.diagonal(v, offset, -2, -1))


def trace(x, /, *, offset=0, dtype=None):
    """The array API's linalg.trace: the sums of the diagonals of the last two dims."""
    return sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def cross(x1, x2, /, *, axis=-1):
    """The array API's linalg.cross: cross products of 3-vectors along axis (elementwise, fused)."""
    a, b = asarray(x1), asarray(x2)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError("cross: both arrays need 3 elements along axis")
    nd = builtins.max(a.ndim, b.ndim)
    ax = axis % nd if axis < 0 else axis

    def comp(v, i):  # component i along axis, kept as a dim of 1 (a view)
        key = (slice(None),) * (ax - nd + v.ndim) + (slice(i, i + 1),)
        return v._numpy_view(lambda w: w[key])

    a0, a1, a2 = (comp(a, i) for i in range(3))
    b0, b1, b2 = (comp(b, i) for i in range(3))
    from ._manipulation import concatenate
    return concatenate([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=ax - nd)


# ---- norms ----------------------------------------------------------------------------------------------
def _abs2(x):
    ax = absolute(x) if x.dtype.kind == "c" else x
    return ax * ax


def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's norm: vector norms over one axis, matrix norms over two (2, -2 and 'nuc' through the SVD)."""
    x = asarray(x)
    if x.dtype.kind not in "fc":
        x = x.astype(numpy.float64)
    if axis is None:
        if ord is None:
            r = sqrt(sum(_abs2(x), axis=None))
            return _reshape(r, (1,) * x.ndim) if keepdims else r
        if x.ndim == 1:
            axis = 0
        elif x.ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError("Improper number of dimensions to norm.")
    if isinstance(axis, (int, numpy.integer)):
        return _vector_norm(x, ord, int(axis), keepdims)
    axis = tuple(operator.index(i) for i in axis)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis[0], keepdims)
    if len(axis) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    return _matrix_norm(x, ord, axis, keepdims)


def _max_magnitude(m, axis, keepdims=False):
    """amax of magnitudes m (>= 0) along one axis; 0 where the axis is empty, as NumPy's norms give (the
    largest of no magnitudes): the sum over the empty axis is those zeros, in m's dtype and on its device."""
    if m.shape[axis] == 0:
        return sum(m, axis=axis, keepdims=keepdims)
    return amax(m, axis=axis, keepdims=keepdims)


def _vector_norm(x, ord, ax, keepdims):
    if ord is None or ord == 2:
        return sqrt(sum(_abs2(x), axis=ax, keepdims=keepdims))
    if ord == numpy.inf:
        return _max_magnitude(absolute(x), ax, keepdims)
    if ord == -numpy.inf:
        return amin(absolute(x), axis=ax, keepdims=keepdims)
    if ord == 1:
        return sum(absolute(x), axis=ax, keepdims=keepdims)
    if ord == 0:
        return sum((x != 0).astype(absolute(x).dtype), axis=ax, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    return sum(absolute(x) ** ord, axis=ax, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x, ord, axis, keepdims):
    r, c = (a % x.ndim for a in axis)
    if r == c:
        raise ValueError("Duplicate axes given.")
    if ord in (None, "fro"):
        res = sqrt(sum(_abs2(x), axis=(r, c)))
    elif ord in (2, -2, "nuc"):
        rest = [i for i in range(x.ndim) if i not in (r, c)]
        y = _permute(x, rest + [r, c])
        s = svdvals(y)
        res = _max_magnitude(s, -1) if ord == 2 else amin(s, axis=-1) if ord == -2 else sum(s, axis=-1)
    elif ord in (1, -1, numpy.inf, -numpy.inf):
        inner_ax, outer_ax = (r, c) if ord in (1, -1) else (c, r)
        s = sum(absolute(x), axis=inner_ax)
        outer_ax = outer_ax - 1 if outer_ax > inner_ax else outer_ax
        res = _max_magnitude(s, outer_ax) if ord in (1, numpy.inf) else amin(s, axis=outer_ax)
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(x.shape)
        shape[r] = shape[c] = 1
        res = _reshape(res, shape)
    return res


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The array API's vector_norm (axis=None: over every element; integers and bools as float64)."""
    x = asarray(x)
    if x.dtype.kind not in "fc":
        x = x.astype(numpy.float64)
    if axis is None:
        r = _vector_norm(_reshape(x, (x.size,)), ord, 0, False)
        return _reshape(r, (1,) * x.ndim) if keepdims else r
    if isinstance(axis, tuple):
        if len(axis) == 1:
            axis = axis[0]
        else:
            axes = tuple(a % x.ndim for a in axis)
            rest = [i for i in range(x.ndim) if i not in axes]
            n = 1
            for i in axes:
                n *= x.shape[i]
            y = _reshape(_permute(x, rest + list(axes)), [x.shape[i] for i in rest] + [n])
            r = _vector_norm(y, ord, -1, False)
            if keepdims:
                shape = [1 if i in axes else x.shape[i] for i in range(x.ndim)]
                r = _reshape(r, shape)
            return r
    return _vector_norm(x, ord, axis, keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The array API's matrix_norm over the last two dims."""
    x = asarray(x)
    if x.dtype.kind not in "fc":
        x = x.astype(numpy.float64)
    return _matrix_norm(x, ord, (-2, -1), keepdims)


def tensorsolve(a, b, axes=None):
    """NumPy's tensorsolve: x with tensordot(a, x, x.ndim) == b (a's trailing dims: x's shape)."""
    a, b = asarray(a), asarray(b)
    if axes is not None:
        axes = [i % a.ndim for i in axes]
        rest = [i for i in range(a.ndim) if i not in axes]
        a = _permute(a, rest + axes)
    xshape = a.shape[b.ndim:]
    n = 1
    for d in xshape:
        n *= d
    if a.size != n * n:
        raise LinAlgError("Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == "
                          "prod(a.shape[:b.ndim])")
    return _reshape(solve(_reshape(a, (n, n)), _reshape(b, (n,))), xshape)


def tensorinv(a, ind=2):
    """NumPy's tensorinv: the inverse of a under tensordot over its first ind dims."""
    a = asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    inv_shape = a.shape[ind:] + a.shape[:ind]
    n = 1
    for d in a.shape[ind:]:
        n *= d
    return _reshape(inv(_reshape(a, (-1, n))), inv_shape)


__all__ = ["LinAlgError", "tensorsolve", "tensorinv", "solve", "inv", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "det", "slogdet",
           "lstsq", "pinv", "cond", "matrix_rank", "matrix_power", "multi_dot", "norm", "vector_norm", "matrix_norm",
           "matmul", "tensordot", "vecdot", "matrix_transpose", "outer", "diagonal", "trace", "cross"]
