"""loom's I/O routines against NumPy's: .npy/.npz round trips (values, dtypes, shapes, non-contiguous and
0-d arrays), text files, formatting, arrays from buffers, iterators and strings, and NumPy's errors."""
import io
import os
import tempfile

import numpy as np
import pytest

import loom


def same(got: object, want: np.ndarray) -> None:
    assert isinstance(got, loom.ndarray)
    g = loom.asnumpy(got)
    assert g.dtype == want.dtype and g.shape == want.shape
    np.testing.assert_array_equal(g, want)


def test_npy_and_npz_round_trips() -> None:
    an = np.arange(24, dtype=np.int16).reshape(4, 6)[:, ::2]
    bn = np.array(2.5, dtype=np.float32)
    a, b = loom.asarray(an), loom.asarray(bn)
    buf = io.BytesIO()
    loom.save(buf, a)
    buf.seek(0)
    same(loom.load(buf), an)
    with tempfile.TemporaryDirectory() as d:
        for writer in (loom.savez, loom.savez_compressed):
            path = os.path.join(d, "x.npz")
            writer(path, a, scalar=b)
            with loom.load(path) as f:
                assert sorted(f.files) == ["arr_0", "scalar"] and "scalar" in f and len(f) == 2
                same(f["arr_0"], an)
                same(f["scalar"], bn)
        with pytest.raises(ValueError, match="allow_pickle"):
            np.save(os.path.join(d, "o.npy"), np.array([{}], dtype=object))
            loom.load(os.path.join(d, "o.npy"))


def test_text_files_and_formatting() -> None:
    xn = np.array([[1.5, -2.0, 3.25], [0.0, 1e-3, 7.0]])
    out = io.StringIO()
    loom.savetxt(out, loom.asarray(xn), fmt="%.4f", delimiter=",")
    assert out.getvalue() == "1.5000,-2.0000,3.2500\n0.0000,0.0010,7.0000\n"
    same(loom.loadtxt(io.StringIO(out.getvalue()), delimiter=","), np.round(xn, 4))
    same(loom.genfromtxt(io.StringIO("1 2\n3 nan\n")), np.array([[1.0, 2.0], [3.0, np.nan]]))
    x = loom.asarray(xn)
    assert loom.array2string(x, precision=2, separator=";") == np.array2string(xn, precision=2, separator=";")
    assert loom.array_repr(x) == np.array_repr(xn) and loom.array_str(x) == np.array_str(xn)
    assert loom.binary_repr(-5, width=8) == "11111011" and loom.base_repr(255, 16) == "FF"
    assert loom.format_float_positional(np.float32(0.1)) == "0.1"


def test_arrays_from_buffers_iterators_strings() -> None:
    raw = np.arange(5, dtype=np.uint16).tobytes()
    same(loom.frombuffer(raw, dtype=np.uint16, count=3, offset=2), np.frombuffer(raw, np.uint16, 3, 2))
    same(loom.fromiter((i * i for i in range(6)), dtype=np.int32), np.arange(6, dtype=np.int32) ** 2)
    same(loom.fromstring("1, 2, 3", dtype=np.int64, sep=","), np.array([1, 2, 3]))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "raw.bin")
        np.arange(4, dtype=np.float64).tofile(path)
        same(loom.fromfile(path, dtype=np.float64), np.arange(4, dtype=np.float64))
    with pytest.raises(ValueError):
        loom.frombuffer(b"abc", dtype=np.int16)  # NumPy: not a multiple of the element size


def test_pickle_dump_tofile_keep_values_and_layout() -> None:
    import pickle
    for order in ("C", "F"):
        an = np.asarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4), order=order)
        a = loom.asarray(an)
        b = pickle.loads(pickle.dumps(a))
        same(b, an)
        assert b.flags.c_contiguous == an.flags.c_contiguous and b.flags.f_contiguous == an.flags.f_contiguous
        same(pickle.loads(a.dumps()), an)
        buf = io.BytesIO()
        a.dump(buf)
        buf.seek(0)
        same(loom.load(buf, allow_pickle=True), an)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.txt")
        loom.asarray(np.array([1.5, 2.0])).tofile(path, sep=",")
        assert open(path).read() == "1.5,2.0"
