# SPDX-License-Identifier: Apache-2.0
"""NumPy's array creation with like=<a loom array> (NEP 35), as Dask calls it on chunks (issue 18):
the result is a loom array on the like= array's device, with NumPy's values, dtype and shape; NumPy's
own functions are the reference. concatenate/stack of loom arrays through NumPy's names stay loom
arrays on their device."""
import io

import numpy as np
import pytest

import loom


def _like() -> loom.ndarray:
    return loom.ones(3)


def _same(got: object, want: np.ndarray) -> None:
    assert isinstance(got, loom.ndarray), type(got)
    assert got.device == _like().device
    h = loom.asnumpy(got)
    assert h.dtype == want.dtype and h.shape == want.shape, (h.dtype, want.dtype, h.shape, want.shape)
    np.testing.assert_array_equal(h, want)


@pytest.mark.parametrize("make", [
    lambda like: np.array([1, 2, 3], like=like),
    lambda like: np.array([[1.5, 2], [3, 4]], dtype=np.float32, like=like),
    lambda like: np.array(5.0, like=like),
    lambda like: np.array([], like=like),
    lambda like: np.array([1, 2, 3], ndmin=3, like=like),
    lambda like: np.asarray(np.arange(6).reshape(2, 3), like=like),
    lambda like: np.asarray([True, False], like=like),
    lambda like: np.asanyarray([1, 2], dtype=np.int16, like=like),
    lambda like: np.ascontiguousarray(np.arange(12.0).reshape(3, 4)[:, ::2], like=like),
    lambda like: np.asfortranarray(np.arange(6.0).reshape(2, 3), like=like),
    lambda like: np.empty((0, 4), like=like),
    lambda like: np.zeros((2, 3), dtype=np.int64, like=like),
    lambda like: np.ones(4, like=like),
    lambda like: np.ones((2, 2), dtype=np.uint8, order="F", like=like),
    lambda like: np.full((2, 3), 7.5, like=like),
    lambda like: np.full(3, np.nan, dtype=np.float32, like=like),
    lambda like: np.arange(10, like=like),
    lambda like: np.arange(2, 11, 3, dtype=np.float64, like=like),
    lambda like: np.arange(0, -1, 0.25, like=like),
    lambda like: np.identity(3, dtype=np.int32, like=like),
    lambda like: np.eye(3, 4, k=1, like=like),
    lambda like: np.tri(3, 3, -1, like=like),
    lambda like: np.frombuffer(np.arange(4, dtype=np.int16).tobytes(), dtype=np.int16, like=like),
    lambda like: np.fromfunction(lambda i, j: i * 10 + j, (3, 2), like=like),
    lambda like: np.fromiter(iter(range(5)), dtype=np.float64, like=like),
    lambda like: np.loadtxt(io.StringIO("1 2\n3 4"), like=like),
    lambda like: np.require(np.arange(4), dtype=np.float32, like=like),
], ids=["array", "array-dtype", "array-0d", "array-empty", "array-ndmin", "asarray", "asarray-bool",
        "asanyarray", "ascontiguousarray", "asfortranarray", "empty", "zeros", "ones", "ones-F", "full",
        "full-nan", "arange", "arange-step", "arange-negative", "identity", "eye", "tri", "frombuffer",
        "fromfunction", "fromiter", "loadtxt", "require"])
def test_creation_with_like_gives_loom_arrays(make: object) -> None:
    like = _like()
    got = make(like)  # type: ignore[operator]
    want = make(None)  # type: ignore[operator]
    if want.size == 0:  # np.empty's values are whatever memory held: compare the description
        assert isinstance(got, loom.ndarray) and got.shape == want.shape and got.dtype == want.dtype
        return
    _same(got, want)
    if want.flags.f_contiguous and not want.flags.c_contiguous:
        assert got.flags.f_contiguous


def test_like_takes_loom_arrays_as_they_are() -> None:
    like = _like()
    x = loom.asarray(np.arange(5.0))
    assert np.asarray(x, like=like) is x  # no copy, as loom.asarray
    y = np.array(x, like=like)  # a copy, as numpy.array
    assert y is not x
    _same(y, np.arange(5.0))
    parts = [loom.asarray(np.float64(v)) for v in (1.0, 2.5, -3.0)]  # 0-d loom arrays, as Dask's q[0]
    _same(np.array(parts, like=parts[0]), np.array([1.0, 2.5, -3.0]))
    _same(np.asarray(parts, like=like), np.array([1.0, 2.5, -3.0]))


def test_like_device_argument() -> None:
    like = _like()
    _same(np.ones(2, device="cpu", like=like), np.ones(2))  # NumPy 2's device="cpu": the like= device
    with pytest.raises(ValueError, match="(?i)device"):  # NumPy refuses it before dispatching
        np.zeros(2, device="cuda:0", like=like)  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        np.zeros(2, dtype="not a dtype", like=like)


@pytest.mark.skipif(not loom.cuda.is_available(), reason="needs a GPU: results go to the like= array's device")
def test_like_on_the_gpu_stays_on_the_gpu() -> None:
    like = loom.ones(3)
    assert like._on_gpu
    for r in (np.array([1.0, 2.0], like=like), np.zeros((2, 2), like=like), np.arange(5, like=like),
              np.fromfunction(lambda i: i * 2, (3,), like=like)):
        assert isinstance(r, loom.ndarray) and r._on_gpu and r.device == like.device


def test_concatenate_and_stack_through_numpy_names_stay_loom() -> None:
    a = loom.asarray(np.arange(6.0).reshape(2, 3))
    b = loom.asarray(np.arange(6.0, 12.0).reshape(2, 3))
    for got, want in ((np.concatenate([a, b]), np.concatenate([np.arange(6.0).reshape(2, 3),
                                                             np.arange(6.0, 12.0).reshape(2, 3)])),
                      (np.concatenate([a, b], axis=1), np.arange(12.0).reshape(2, 2, 3).transpose(1, 0, 2).reshape(2, 6)),
                      (np.stack([a, b]), np.arange(12.0).reshape(2, 2, 3)),
                      (np.concatenate([a[:0], b]), np.arange(6.0, 12.0).reshape(2, 3))):
        _same(got, want)
