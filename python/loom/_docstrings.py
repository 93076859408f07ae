"""_docstrings.py: the docstrings of loom's public functions and ndarray members that do not carry
their own, kept in one place (as NumPy's _add_newdocs.py does) so that the modules stay short and
several people can edit them without touching the same lines. A docstring written in the code wins:
add_docs only fills empty ones. tests/python/test_packaging.py checks that every public name has one.

Style: one summary line, then where Loom differs from NumPy / CuPy (laziness, host fallbacks,
dtype rules), then the NumPy function it follows.
"""
from . import _creation, _math, _reductions, _manipulation, _indexing, _complex
from ._ndarray import ndarray

_LAZY = "The result is pending (lazy): it fuses with the operations around it and is computed when observed."
_HOST = ("Computed by NumPy on the host (a GPU array is copied there and back); the result is a new "
         "loom array on the inputs' device.")
_RED = ("``axis`` may be None, an int or a tuple of ints; ``keepdims`` keeps the reduced axes with "
        "length 1. ") + _LAZY


def _see(name):
    return f"\n\nSee Also\n--------\nnumpy.{name}"


FUNCTIONS = {
    # ---- creation
    (_creation, "array"): "Creates a loom array from an array-like (a copy on the current device).\n\n"
        "Loom arrays, ``__cuda_array_interface__`` objects (CuPy, PyTorch, Numba) and DLPack producers are "
        "taken as they are and copied when ``copy`` or ``dtype`` asks; anything else goes through "
        "``numpy.asarray`` first. ``order`` and ``subok`` are accepted and ignored (loom arrays made here "
        "are C-contiguous)." + _see("array"),
    (_creation, "asnumpy"): "Returns a NumPy array with the value of ``a`` (a host copy of a GPU array).\n\n"
        "A pending array is evaluated first. NumPy arrays and array-likes are passed to ``numpy.asarray``; "
        "``out`` receives the value when given. CuPy's ``cupy.asnumpy``.",
    (_creation, "empty"): "A new array of the given shape and dtype whose contents are not set." + _see("empty"),
    (_creation, "zeros"): "A new array of the given shape and dtype filled with zeros." + _see("zeros"),
    (_creation, "ones"): "A new array of the given shape and dtype filled with ones." + _see("ones"),
    (_creation, "full"): "A new array of the given shape filled with ``fill_value``.\n\n"
        "``dtype`` defaults to NumPy's dtype of ``fill_value``." + _see("full"),
    (_creation, "empty_like"): "An array with the shape and dtype of ``a``, contents not set. "
        "``order`` and ``subok`` are accepted and ignored." + _see("empty_like"),
    (_creation, "zeros_like"): "An array of zeros with the shape and dtype of ``a``." + _see("zeros_like"),
    (_creation, "ones_like"): "An array of ones with the shape and dtype of ``a``." + _see("ones_like"),
    (_creation, "full_like"): "An array with the shape and dtype of ``a`` filled with ``fill_value``." + _see("full_like"),
    (_creation, "arange"): "Evenly spaced values in ``[start, stop)`` by ``step``.\n\n"
        "Made by NumPy on the host and copied to the current device (dtype and length exactly NumPy's)." + _see("arange"),
    (_creation, "linspace"): "``num`` evenly spaced values from ``start`` to ``stop``.\n\n"
        "Made by NumPy on the host and copied to the current device." + _see("linspace"),
    (_creation, "eye"): "A 2-D array with ones on the ``k``-th diagonal and zeros elsewhere.\n\n"
        "Made by NumPy on the host and copied to the current device." + _see("eye"),
    (_creation, "identity"): "The ``n`` x ``n`` identity matrix (``eye(n)``)." + _see("identity"),
    (_creation, "from_dlpack"): "A zero-copy loom array over a DLPack producer (host or CUDA memory).\n\n"
        "A CUDA producer is asked to order its work before the legacy default stream, which Loom then "
        "waits for. Other device types raise BufferError." + _see("from_dlpack"),
    # ---- elementwise and linear algebra
    (_math, "around"): "Rounds to ``decimals`` decimals, halves to even as NumPy does.\n\nInteger arrays with "
        "``decimals != 0`` raise NotImplementedError. " + _LAZY + _see("around"),
    (_math, "clip"): "Limits the values to ``[a_min, a_max]`` (either may be None).\n\n" + _LAZY + _see("clip"),
    (_math, "fabs"): "Absolute value of real numbers (complex input is a TypeError, as in NumPy).\n\n" + _LAZY + _see("fabs"),
    (_math, "positive"): "``+x``: a copy of the values.\n\n" + _LAZY + _see("positive"),
    (_math, "reciprocal"): "``1 / x`` elementwise; an integer ``1 // 0`` gives 0 where NumPy's result is undefined.\n\n"
        + _LAZY + _see("reciprocal"),
    (_math, "square"): "``x * x`` elementwise (integers wrap on overflow).\n\n" + _LAZY + _see("square"),
    (_math, "matmul"): "Matrix product with NumPy's broadcasting rules for stacks of matrices.\n\n" + _HOST + _see("matmul"),
    (_math, "dot"): "Dot product (NumPy's rules for 1-D, 2-D and N-D operands).\n\n" + _HOST + _see("dot"),
    (_math, "array_equal"): "True when both arrays have the same shape and elements (a Python bool).\n\n"
        "Evaluates both and compares on the host." + _see("array_equal"),
    (_math, "allclose"): "True when every element of ``a`` is within ``atol + rtol * |b|`` of ``b`` (a Python bool).\n\n"
        "Evaluates both and compares on the host." + _see("allclose"),
    (_math, "isclose"): "Elementwise ``|a - b| <= atol + rtol * |b|`` as a boolean array.\n\n" + _HOST + _see("isclose"),
    # ---- reductions
    (_reductions, "sum"): "Sum of the elements over the given axes.\n\n"
        "bool and signed integers sum to int64, unsigned to uint64, float16/bfloat16 accumulate in float32. "
        "An empty sum is 0. " + _RED + _see("sum"),
    (_reductions, "prod"): "Product of the elements over the given axes (integers wrap on overflow; "
        "empty: 1). " + _RED + _see("prod"),
    (_reductions, "mean"): "Arithmetic mean over the given axes (integers give float64; empty: NaN). " + _RED + _see("mean"),
    (_reductions, "var"): "Variance ``mean(|x - mean(x)|**2)`` with ``ddof`` subtracted from the count; real for "
        "complex input.\n\nBuilt from mean and sum, so it fuses into two passes over the data. " + _LAZY + _see("var"),
    (_reductions, "std"): "Standard deviation: ``sqrt(var(...))`` with the same arguments. " + _LAZY + _see("std"),
    (_reductions, "amin"): "Minimum over the given axes; NaN propagates; an empty reduction is an error. " + _RED + _see("amin"),
    (_reductions, "amax"): "Maximum over the given axes; NaN propagates; an empty reduction is an error. " + _RED + _see("amax"),
    (_reductions, "any"): "True where any element over the given axes is nonzero (empty: False). " + _RED + _see("any"),
    (_reductions, "all"): "True where every element over the given axes is nonzero (empty: True). " + _RED + _see("all"),
    (_reductions, "argmin"): "Index of the first minimum (or first NaN) along ``axis``; over the flattened "
        "array when None. " + _LAZY + _see("argmin"),
    (_reductions, "argmax"): "Index of the first maximum (or first NaN) along ``axis``; over the flattened "
        "array when None. " + _LAZY + _see("argmax"),
    (_reductions, "count_nonzero"): "Number of nonzero elements over the given axes (int64). " + _RED + _see("count_nonzero"),
    # ---- shapes and joins
    (_manipulation, "reshape"): "The same data with a new shape (a view when the layout allows, as in NumPy).\n\n"
        "A pending array is evaluated first (a view must see later writes to its base)." + _see("reshape"),
    (_manipulation, "transpose"): "A view with the axes permuted (reversed when ``axes`` is None)." + _see("transpose"),
    (_manipulation, "ravel"): "The array flattened to 1-D (a view when contiguous)." + _see("ravel"),
    (_manipulation, "squeeze"): "A view without the length-1 axes (or only those in ``axis``)." + _see("squeeze"),
    (_manipulation, "swapaxes"): "A view with two axes exchanged." + _see("swapaxes"),
    (_manipulation, "expand_dims"): "A view with a length-1 axis inserted at ``axis``." + _see("expand_dims"),
    (_manipulation, "broadcast_to"): "A read-only view broadcast to ``shape`` (stride 0 on the new axes)." + _see("broadcast_to"),
    (_manipulation, "astype"): "``a`` converted to ``dtype``.\n\nFloat to integer casts saturate (NaN gives 0) "
        "where NumPy's result is undefined. " + _LAZY + _see("astype"),
    (_manipulation, "copy"): "A copy of ``a`` (C-contiguous; ``order`` is accepted and ignored)." + _see("copy"),
    (_manipulation, "shape"): "The shape of ``a`` (a tuple)." + _see("shape"),
    (_manipulation, "ndim"): "The number of dimensions of ``a``." + _see("ndim"),
    (_manipulation, "size"): "The number of elements of ``a``." + _see("size"),
    (_manipulation, "result_type"): "The dtype NumPy 2's promotion gives for the arguments (NEP 50 for Python scalars)."
        + _see("result_type"),
    (_manipulation, "can_cast"): "Whether ``from_`` can be cast to ``to`` under the ``casting`` rule (NumPy's answer)."
        + _see("can_cast"),
    (_manipulation, "concatenate"): "Joins arrays along an existing axis.\n\n" + _HOST + _see("concatenate"),
    (_manipulation, "stack"): "Joins arrays along a new axis.\n\n" + _HOST + _see("stack"),
    # ---- indexing
    (_indexing, "where"): "``x`` where ``condition`` is true, else ``y``, with broadcasting; with the condition "
        "alone, ``nonzero(condition)``.\n\nThe three-argument form is a fused select (lazy); the one-argument "
        "form is computed by NumPy on the host." + _see("where"),
    (_indexing, "nonzero"): "A tuple of index arrays, one per dimension, of the nonzero elements.\n\n"
        "The output's length depends on the data, so this evaluates ``a`` and is computed by NumPy on "
        "the host." + _see("nonzero"),
    (_complex, "isrealobj"): "True unless ``x`` has a complex dtype." + _see("isrealobj"),
}

METHODS = {
    "get": "A NumPy array with the value (a host copy; a pending array is evaluated first). "
           "``out`` receives it when given. CuPy's ``ndarray.get``.",
    "item": "The element selected by the arguments (all of a size-1 array when none) as a Python scalar.",
    "tolist": "The value as nested Python lists of Python scalars.",
    "reshape": "The same data with a new shape; see :func:`loom.reshape`.",
    "transpose": "A view with the axes permuted; see :func:`loom.transpose`.",
    "swapaxes": "A view with two axes exchanged; see :func:`loom.swapaxes`.",
    "ravel": "The array flattened to 1-D; see :func:`loom.ravel`.",
    "flatten": "A flattened 1-D copy.",
    "squeeze": "A view without length-1 axes; see :func:`loom.squeeze`.",
    "astype": "A copy converted to ``dtype`` (no copy when ``copy=False`` and the dtype matches); "
              "see :func:`loom.astype`.",
    "copy": "A C-contiguous copy.",
    "view": "A view of the same memory with another dtype of the same item size "
            "(``view()`` with no dtype: a new array object over the same memory).",
    "fill": "Sets every element to ``value`` (in place).",
    "sum": "Sum over the given axes; see :func:`loom.sum`.",
    "prod": "Product over the given axes; see :func:`loom.prod`.",
    "mean": "Mean over the given axes; see :func:`loom.mean`.",
    "var": "Variance over the given axes; see :func:`loom.var`.",
    "std": "Standard deviation over the given axes; see :func:`loom.std`.",
    "min": "Minimum over the given axes; see :func:`loom.amin`.",
    "max": "Maximum over the given axes; see :func:`loom.amax`.",
    "any": "Whether any element is nonzero; see :func:`loom.any`.",
    "all": "Whether every element is nonzero; see :func:`loom.all`.",
    "argmin": "Index of the first minimum; see :func:`loom.argmin`.",
    "argmax": "Index of the first maximum; see :func:`loom.argmax`.",
    "clip": "Values limited to ``[min, max]``; see :func:`loom.clip`.",
    "round": "Rounded to ``decimals`` decimals; see :func:`loom.around`.",
    "conj": "The complex conjugate (the values themselves for real dtypes).",
    "conjugate": "The complex conjugate (the values themselves for real dtypes).",
    "dot": "Dot product with ``b``; see :func:`loom.dot` (computed by NumPy on the host).",
    "nonzero": "Indices of the nonzero elements; see :func:`loom.nonzero` (computed by NumPy on the host).",
}

PROPERTIES = {
    "dtype": "The NumPy dtype of the elements.",
    "itemsize": "Bytes per element.",
    "nbytes": "Bytes of the elements (size * itemsize).",
    "device": "The loom.cuda.Device the array lives on (Device(0) stands for the host on a machine "
              "without a GPU).",
    "T": "The transposed view (axes reversed).",
    "flags": "c_contiguous, f_contiguous and owndata, as NumPy's flags.",
    "data": "A memory pointer object whose ``.ptr`` is the address of the first element (evaluates a "
            "pending array).",
    "real": "The real part (a view for complex arrays; the array itself for real ones). Settable.",
    "imag": "The imaginary part (zeros for real arrays). Settable for complex arrays.",
}


def add_docs():
    """Fills the empty docstrings of loom's public functions and ndarray members from the tables above."""
    for (module, name), text in FUNCTIONS.items():
        fn = getattr(module, name, None)
        if fn is not None and not (fn.__doc__ or "").strip():
            fn.__doc__ = text
    for name, text in METHODS.items():
        fn = ndarray.__dict__.get(name)
        if fn is not None and not (fn.__doc__ or "").strip():
            fn.__doc__ = text
    for name, text in PROPERTIES.items():
        p = ndarray.__dict__.get(name)
        if isinstance(p, property) and not (p.__doc__ or "").strip():
            ndarray.__dict__[name].__doc__ = text  # property's __doc__ is writable
