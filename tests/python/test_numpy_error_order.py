"""Errors NumPy 2 raises, with the class NumPy raises, where loom used to raise another one or none
(found by scripts/fuzz_numpy.py: the KNOWN entries transpose-empty-axes and inplace-check-order)."""
import numpy as np
import pytest

import loom


def _outcome(f, xp):
    try:
        r = f(xp)
        return "ok", loom.asnumpy(r) if isinstance(r, loom.ndarray) else np.asarray(r)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e), None


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 0, 4)])
@pytest.mark.parametrize("form", ["method_tuple", "method_none", "method_noargs", "function_tuple", "function_none"])
@pytest.mark.parametrize("lazy", [False, True])
def test_transpose_empty_axes(shape, form, lazy):
    calls = {
        "method_tuple": lambda xp, a: a.transpose(()),
        "method_none": lambda xp, a: a.transpose(None),
        "method_noargs": lambda xp, a: a.transpose(),
        "function_tuple": lambda xp, a: xp.transpose(a, ()),
        "function_none": lambda xp, a: xp.transpose(a, None),
    }

    def f(xp):
        a = xp.asarray(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))
        if lazy and xp is loom:
            a = a + 0  # a pending array: the graph's own permute, not NumPy's view
        return calls[form](xp, a)

    want, want_v = _outcome(f, np)
    got, got_v = _outcome(f, loom)
    assert got is want, (shape, form, got, want)
    if want == "ok":
        assert got_v.shape == want_v.shape
        np.testing.assert_array_equal(got_v, want_v)


@pytest.mark.parametrize("op", ["__iadd__", "__itruediv__", "__imul__", "__isub__"])
@pytest.mark.parametrize("dst,src", [(np.int16, np.float64), (np.int32, np.float32), (np.bool_, np.int8),
                                     (np.float32, np.float64), (np.int64, np.int64)])
@pytest.mark.parametrize("src_shape", [(5,), (2,), (3, 2)])
def test_inplace_errors_resolve_dtypes_before_shapes(op, dst, src, src_shape):
    def f(xp):
        t = xp.asarray(np.zeros(2, dtype=dst))
        s = xp.asarray(np.ones(src_shape, dtype=src))
        return getattr(t, op)(s)

    with np.errstate(all="ignore"):
        want, want_v = _outcome(f, np)
    got, got_v = _outcome(f, loom)
    if want is NotImplemented or want == "ok":
        assert got == want
        if want == "ok":
            np.testing.assert_array_equal(got_v, want_v)
    else:
        # NumPy's UFuncTypeError is a TypeError subclass; loom raises TypeError itself
        assert issubclass(want, TypeError) == issubclass(got, TypeError), (got, want)
        assert issubclass(want, ValueError) == issubclass(got, ValueError), (got, want)
