"""Signed integers cast to wider unsigned ones, then to floats or through unsigned arithmetic, against
NumPy, exactly. A negative int16 cast to uint64 is 2^64 + x; LLVM 19's SLP vectorizer narrowed
`uitofp (sext x)` to `uitofp x` (47421.0 for -18115 where NumPy has 1.8446744073709533e19), which the
host kernels met where a row-invariant operand of a 2-d broadcast was converted as straight-line code
(found by scripts/fuzz_numpy.py, seed 6019768508871736576). Shapes: 2-d broadcasts of rows of 3 to 9
(the straight-line form), 1-d, 0-d; every signed source and wider unsigned target."""
import numpy as np
import pytest

import loom

SIGNED = ["int8", "int16", "int32"]
UNSIGNED = {"int8": ["uint16", "uint32", "uint64"], "int16": ["uint32", "uint64"], "int32": ["uint64"]}
PAIRS = [(s, u) for s in SIGNED for u in UNSIGNED[s]]


def values(dtype: str, n: int) -> np.ndarray:
    info = np.iinfo(dtype)
    base = np.array([info.min, -18115 if info.bits >= 16 else -100, -1, 0, 1, info.max, 11, -7, 3], dtype=np.int64)
    return np.resize(base, n).astype(dtype)


@pytest.mark.parametrize("src,dst", PAIRS)
@pytest.mark.parametrize("ncols", [3, 4, 5, 8, 9])
@pytest.mark.parametrize("fdt", ["float32", "float64"])
def test_broadcast_rows(src: str, dst: str, ncols: int, fdt: str) -> None:
    a = values(src, ncols)
    z = np.zeros((4, 1), fdt)
    got = (loom.asarray(a).astype(dst) + loom.asarray(z)).get()
    want = a.astype(dst) + z
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src,dst", PAIRS)
def test_where_mixed(src: str, dst: str) -> None:
    """the fuzzer's program: where(cond, x, x.astype(uint)) promotes to float64"""
    c = np.array([1, 39359, 0, 42548], dtype=np.uint16)[:, None]
    a = values(src, 5)
    got = loom.where(loom.asarray(c), loom.asarray(a), loom.asarray(a).astype(dst)).get()
    want = np.where(c, a, a.astype(dst))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src,dst", PAIRS)
def test_unsigned_arithmetic_then_float(src: str, dst: str) -> None:
    a = values(src, 7)
    x = loom.asarray(a).astype(dst)
    one = np.array(1, dtype=dst)
    for got, want in (((x + loom.asarray(one)).astype("float64"), (a.astype(dst) + one).astype("float64")),
                      ((x // loom.asarray(np.array(3, dst))) + loom.asarray(np.zeros((2, 1))),
                       (a.astype(dst) // np.array(3, dst)) + np.zeros((2, 1)))):
        got = got.get()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_zero_d_and_long() -> None:
    for s, u in PAIRS:
        a = values(s, 1)[0]
        np.testing.assert_array_equal(loom.asarray(np.array(a)).astype(u).astype("float64").get(),
                                      np.array(a).astype(u).astype("float64"))
        big = values(s, 1001)
        np.testing.assert_array_equal(loom.asarray(big).astype(u).astype("float64").get(),
                                      big.astype(u).astype("float64"))
