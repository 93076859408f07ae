from __future__ import annotations

import operator

import numpy
import pytest

import cupy
from cupy import testing
from cupy.testing._protocol_helpers import DummyObjectWithCudaArrayInterface


class TestCreation:
    def test_empty(self):
        a = cupy.empty((2, 3, 4), dtype="i,i")
        assert a.dtype == "i,i"
        assert a.shape == (2, 3, 4)

    @testing.numpy_cupy_array_equal()
    def test_zeros(self, xp):
        return xp.zeros((2, 3, 4), dtype="i,i")

    @pytest.mark.parametrize("func", [
        cupy.array,
        lambda x: cupy.asarray([x, x]),
        # Uses __cuda_array_interface__ only which doesn't check as strictly:
        pytest.param(cupy.asarray, marks=pytest.mark.xfail(strict=True)),
    ])
    def test_reject_references(self, func):
        arr = numpy.array([1, 2, 3], dtype="q,O")
        # Check coming from a NumPy array
        with pytest.raises(ValueError):
            func(arr)

        # Check coming from a bad cupy array-like
        base = cupy.zeros(3, dtype="q,q")

        class WithReferences(DummyObjectWithCudaArrayInterface):
            @property
            def __cuda_array_interface__(self):
                # Fake the dtype to something bad
                iface = super().__cuda_array_interface__
                iface["typestr"] = arr.dtype.str
                iface["descr"] = arr.dtype.descr
                return iface

        with pytest.raises(ValueError):
            func(WithReferences(base))

    def test_cuda_array_interface_dtype(self):
        # This dtype requires padding, let's make it so it round-trips fine
        # in __cuda_array_interface__...
        a = cupy.zeros(3, dtype=cupy.make_aligned_dtype("?,q"))
        res = cupy.asarray(DummyObjectWithCudaArrayInterface(a))

        assert a.dtype == res.dtype
        assert cupy.may_share_memory(a, res)


class TestFieldCasting:
    @testing.numpy_cupy_array_equal()
    def test_casting_simple(self, xp):
        a = xp.array([(1, 2.), (3, 4.)], dtype="i8,f8")
        return a.astype("f8,i8")

    @testing.numpy_cupy_array_equal()
    def test_casting_swapped_fields(self, xp):
        a = xp.array([(1, 2.), (3, 4.)], dtype="i8,f8")
        return a[["f0", "f1"]].astype("f8,i8")

    @testing.numpy_cupy_array_equal()
    def test_casting_nested(self, xp):
        dt_nested = xp.dtype("i8,f8")
        dtype = xp.dtype([("a", "f8"), ("b", dt_nested)])
        a = xp.array([(1, 2.), (3, 4.)], dtype=dtype)

        new_nested = xp.dtype("f4,i4")
        new_dtype = xp.dtype([("a", "f4"), ("b", new_nested)])
        return a.astype(new_dtype)


class TestGetTypename:
    def test_final_alignment_check(self):
        dt = numpy.dtype("f8,?")
        with pytest.raises(ValueError, match="Itemsize 9 is not a multiple"):
            cupy._core._scalar.get_typename(dt, None)

        with pytest.raises(ValueError, match="Itemsize 9 is not a multiple"):
            cupy.ones(10, dtype=dt)  # kernel launch should fail the same way

    def test_bad_field(self):
        dt = numpy.dtype("?,f8")
        with pytest.raises(ValueError, match="Field f1 with offset 1 is not "):
            cupy._core._scalar.get_typename(dt, None)

        with pytest.raises(ValueError, match="Field f1 with offset 1 is not "):
            cupy.ones(10, dtype=dt)  # kernel launch should fail the same way


@pytest.mark.parametrize("op", [operator.eq, operator.ne])
class TestComparison:
    @testing.numpy_cupy_array_equal()
    def test_simple(self, xp, op):
        a = xp.array([(1, 2)], dtype="i8,f8")
        b = xp.array([(1, 2.), (1, 3), (3, 2)], dtype="i8,f8")
        return op(a, b)

    @testing.numpy_cupy_array_equal()
    def test_with_cast_simple(self, xp, op):
        a = xp.array([(1, 2)], dtype="i8,f8")
        b = xp.array([(1, 2.), (1, 3), (3, 2)], dtype="f8,i8")
        return op(a, b)

    @testing.numpy_cupy_array_equal(accept_error=TypeError)
    def test_field_order(self, xp, op):
        # Swapped fields with name mis-match are unclear how they
        # should be compared, so NumPy raises.
        a = xp.array([(1, 2)], dtype="i8,f8")[["f1", "f0"]]
        b = xp.array([(1, 2.), (1, 3), (3, 2)], dtype="f8,i8")
        return op(a, b)

    @testing.numpy_cupy_array_equal()
    def test_nested(self, xp, op):
        adt_nested = xp.dtype("i8,f8")
        adtype = xp.dtype([("a", "f8"), ("b", adt_nested)])
        bdt_nested = xp.dtype("f4,i4")
        bdtype = xp.dtype([("a", "f4"), ("b", bdt_nested)])

        a = xp.array([(1, (2, 3))], dtype=adtype)
        b = xp.array([(1, (2, 3)), (1, (2, 4)), (1, (3, 3))], dtype=bdtype)

        return op(a, b)

    def test_promotion_aligned(self, op):
        a = cupy.array([(1, 2)], dtype="f8,c8")
        b = cupy.array([(1, 2), (1, 3), (2, 3)], dtype="f8,f8")
        # For comparison, promotion would go to f8,c16. But the NumPy
        # promoted dtype would not be sufficiently aligned for this.
        cmp_dtype = numpy.result_type(a.dtype, b.dtype)
        assert cmp_dtype.itemsize == 24
        # However, this isn't aligned for the GPU which wants itemsize
        # alignment for complex.
        assert cupy.make_aligned_dtype(cmp_dtype).itemsize == 32
        res = op(a, b)
        assert numpy.array_equal(res.get(), op(a.get(), b.get()))

    def test_subarray_of_struct_error(self, op):
        # subarrays are unsupported right now (but ideally give a nice error).
        # This error is currently given pretty explicitly.
        inner = numpy.dtype([("x", "i4"), ("y", "f4")])
        dtype = numpy.dtype([("a", inner, (3,))])
        a = cupy.zeros(2, dtype=dtype)
        with pytest.raises(ValueError, match=".*subarray dtypes"):
            op(a, a)

    def test_many_fields(self, op):
        fields = [(f"f{i}", "i1") for i in range(256)]
        dtype = numpy.dtype(fields)
        a = cupy.zeros(3, dtype=dtype)
        b = cupy.zeros(3, dtype=dtype)
        testing.assert_array_equal(op(a, b), op(a.get(), b.get()))


class TestMakeAlignedDtype:
    # Note also tested partially in promotion for comparison
    @pytest.mark.parametrize("dt,itemsize", [
        # Complex is 8 byte aligned, padded to 16 (CPU would align 4)
        ("?,c8", 16),
        ("c8,?", 16),
        # Subarray is also aligned (via base dtype)
        ("?,(3,)c8", 32),
        ("(3,)c8,?", 32),
        # Nested structure works (first one is padded so full needs 24)
        (numpy.dtype([("a", "c8,?"), ("b", "?")]), 24),
        (numpy.dtype([("a", "?"), ("b", "c8,?")]), 24),
        # Nested void works and doesn't do much:
        ("?,(4,)V3", 13),  # All char aligned
    ])
    def test_make_aligned_dtype(self, dt, itemsize):
        assert cupy.make_aligned_dtype(dt).itemsize == itemsize

    @pytest.mark.parametrize("dt", ["c16", "V3"])
    def test_make_aligned_dtype_non_structured_error(self, dt):
        # Currently, we really only support structured dtypes. This could
        # be removed in which case the code should correctly do nothing
        # except possibly attach the `__cuda_alignment__` metadata.
        with pytest.raises(
                ValueError, match="only supports structured dtypes"):
            cupy.make_aligned_dtype(dt)


class TestFieldAccess:
    @testing.numpy_cupy_array_equal()
    @pytest.mark.parametrize("index", ["f0", "f1"])
    def test_getitem(self, xp, index):
        a = xp.array([(1, 2), (3, 4)], dtype="i,i")
        res = a[index]
        assert a.flags.c_contiguous and a.flags.f_contiguous
        assert not res.flags.c_contiguous
        assert not res.flags.f_contiguous
        return res

    @testing.numpy_cupy_array_equal()
    @pytest.mark.parametrize("index, value", [("f0", -1), ("f1", -2)])
    def test_setitem(self, xp, index, value):
        a = xp.array([(1, 2), (3, 4)], dtype="i,i")
        a[index] = value
        return a

    @pytest.mark.parametrize("field, dtype", [("f1", "?,f8"), ("f0", "f8,?")])
    def test_bad_alignment(self, field, dtype):
        # If a field is not aligned (default for NumPy) using it leads to
        # RuntimeError. It may make sense to raise a nicer error earlier
        # (e.g. at indexing time)
        a = cupy.array([(1, 2), (3, 4), (5, 6), (7, 8)], dtype=dtype)
        msg = "result array with.* sufficiently aligned for GPU"
        with pytest.raises(ValueError, match=msg):
            a[field]

        with pytest.raises(ValueError, match=msg):
            a[field] = 1

    @testing.numpy_cupy_array_equal()
    @pytest.mark.parametrize("field, dtype", [("f1", "?,f8"), ("f0", "f8,?")])
    def test_alignment_empty_ok(self, xp, field, dtype):
        a = xp.array([(1, 2), (3, 4), (5, 6), (7, 8)], dtype=dtype)
        a = a[:0]
        return a[field]

    @testing.numpy_cupy_array_equal()
    def test_nested(self, xp):
        dtype = xp.dtype([("a", "i,i"), ("b", "i,i")])
        a = xp.array([((1, 2), (3, 4)), ((5, 6), (7, 8))], dtype=dtype)

        # Chained indexing into substructures is OK since the intermediate is.
        a["a"]["f0"] += a["b"]["f1"]
        return a

    def test_nested_subarray(self):
        # We could support it, but it changes the resulting array shape.
        a = cupy.zeros(10, dtype="i,(3,3)i")
        msg = "CuPy does not yet support accessing nested subarrays"
        with pytest.raises(ValueError, match=msg):
            a["f1"]

    @testing.numpy_cupy_array_equal()
    def test_multiple_fields(self, xp):
        a = xp.ones(10, "i,f,i")
        a["f1"] = xp.arange(10)
        a["f2"] = -xp.arange(10)
        return a[["f2", "f1"]]

    @testing.numpy_cupy_array_equal()
    def test_multifield_assignment(self, xp):
        a = xp.ones(10, "i,f,i,f,i,f")
        for i in range(6):
            a[f'f{i}'] = xp.arange(i, 10+i)

        # in-place modify `a` with mixed fields that have holes.
        # This also requires casting the fields.
        # NOTE(seberg): Behavior is not identical if source and destination
        # point to the same memory. Don't do that... (i.e. the copy is needed)
        a[["f1", "f0", "f4"]] = a[["f2", "f1", "f5"]].copy()
        return a


class TestIndexing:
    def test_assign(self):
        src = cupy.array([(1, 1.5), (2, 2.5), (3, 3.5)], dtype="i4,f4")
        dst = cupy.zeros(src.shape, dtype="i4,f4")
        dst[:] = src
        testing.assert_array_equal(dst, src)

    @testing.numpy_cupy_array_equal()
    @pytest.mark.parametrize("sl", [slice(1, None), slice(None, None, 2)])
    def test_slicing(self, xp, sl):
        # As of writing, we can't copy a structured array because that
        # requires a kernel launch.  But we can slice it fine.
        a = xp.array([(1, 2), (3, 4), (5, 6)], dtype="i,i")
        # Compare fields, because we cannot copy the strided structured array
        # to a contiguous one to copy back to the CPU.
        return (a[sl]["f0"], a[sl]["f1"])


class TestKernelFieldAccess:
    def test_elementwise_kernel(self):
        # Structured values are intentionally not exposed as named structs.
        # Field access is supported by field index only.
        # NOTE(seberg): We could expose `.data` as a custom struct or field
        # access by name (which seems to require very modern C++).
        kernel = cupy.ElementwiseKernel(
            'T in', 'T out',
            '''
            static_assert(T::field_count == 2, "expected 2 fields");
            out.at<1>() = -in.at<0>();
            ''',
            'test_struct_access')
        x = cupy.array([1, 2, 3], dtype="i,i")
        y = cupy.array([4, 5, 6], dtype="i,i")
        # kernel mutates field 1 via field-index access.
        kernel(x, y)
        expected = cupy.array([(4, -1), (5, -2), (6, -3)], dtype="i,i")
        testing.assert_array_equal(y, expected)


class TestUnstructuredVoid:
    # Unstructured void support is a bit shaky with it being easy to
    # run into compilation errors e.g. due to using "V" dtype which is
    # then V0.
    @pytest.mark.parametrize("func", [cupy.empty, cupy.zeros])
    def test_creation(self, func):
        a = func(10, dtype="V10")
        assert a.dtype == "V10"

    @pytest.mark.parametrize("from_values", [
        numpy.arange(10).astype("int64"),
        numpy.arange(10).astype("float32"),
        numpy.arange(10).astype("int8"),
        numpy.arange(10).astype("complex128"),
        numpy.arange(10).astype("int8").astype("V1"),
        numpy.arange(10).astype("int64").astype("V8"),
        numpy.arange(10).astype("complex128").astype("V16"),
    ])
    @testing.numpy_cupy_array_equal()
    def test_casts_assignments(self, xp, from_values):
        a = xp.empty(10, dtype="int64")
        a[...] = -1
        a = a.view("V8")  # filled with all 1bits.

        xp.copyto(a, xp.array(from_values), casting="unsafe")
        return a

    @pytest.mark.parametrize("op", [operator.eq, operator.ne])
    @testing.numpy_cupy_array_equal()
    def test_comparison_equal_same_size(self, xp, op):
        a = xp.array([b"87654321", b"12345678"], dtype="V8")
        b = xp.array([b"87654321", b"1234567_"], dtype="V8")
        return op(a, b)


@pytest.mark.parametrize("scalar", [
    1.0,
    numpy.int32(-1),
    # Structured scalar and larger than the CScalar data storage:
    numpy.void((1, 2, 3, 4, 5, 6), dtype="q,q,q,q,i,i"),
    # Scalar has larger dtype than array:
    numpy.void((-1, 2, 3, 4, 5, -6), dtype="d,d,d,d,d,d"),
])
class TestScalar:
    @testing.numpy_cupy_array_equal()
    def test_full(self, xp, scalar):
        return xp.full(10, scalar, dtype="i,i,q,q,q,q")

    @testing.numpy_cupy_array_equal()
    def test_assignment(self, xp, scalar):
        a = xp.empty(10, dtype="i,i,q,q,q,q")
        a[...] = scalar
        return a

    @pytest.mark.parametrize("op", [operator.eq, operator.ne])
    @testing.numpy_cupy_array_equal(accept_error=TypeError)
    def test_comparison_with_scalar_large(self, xp, scalar, op):
        scalar = xp.array(scalar)
        arr = xp.array([(1, 2, 3, 4, 5, 6), (-1, 2, 3, 4, 5, -6)],
                       dtype="i,i,q,q,q,q")
        # Comparison should work (but only with structured ones).
        return op(arr, scalar)
