"""Host copies out of broadcast and permuted views, against NumPy: tile and repeat (a reshape of a
broadcast: no NumPy copy first, and the root reshape stored by its copy straight into the output,
LOOM_RESHAPE_ROOT_STORE), stack along a short-run axis (one select kernel, LOOM_STACK_SELECT) and a
copy into a permuted layout (astype(order='K') of a transposed view: the elementwise kernel iterates
in the output's memory order, LOOM_MAP_OUTPUT_ORDER). Every dtype, 0-d and empty arrays, negative
axes, non-contiguous inputs, and each knob off in a subprocess (the same values)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import loom
from conftest import ON_GPU

host = pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64, np.float16, np.float32,
          np.float64, np.complex64, np.complex128]


def sample(shape, dtype, seed=0):
    r = np.random.default_rng(seed)
    v = r.standard_normal(shape) * 50
    if np.dtype(dtype).kind == "c":
        v = v + 1j * r.standard_normal(shape)
    if np.dtype(dtype).kind == "b":
        v = v > 0
    return np.asarray(v).astype(dtype)


def same(got, want):
    got = loom.asnumpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tile_and_repeat_every_dtype(dtype):
    h = sample((37, 5), dtype)
    d = loom.asarray(h)
    same(loom.tile(d, 3), np.tile(h, 3))
    same(loom.tile(d, (2, 1, 3)), np.tile(h, (2, 1, 3)))
    same(loom.repeat(d, 3), np.repeat(h, 3))
    same(loom.repeat(d, 2, axis=-1), np.repeat(h, 2, axis=-1))
    same(loom.repeat(d, 4, axis=0), np.repeat(h, 4, axis=0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_stack_every_dtype_and_axis(dtype):
    hs = [sample((6, 7), dtype, s) for s in range(3)]
    ds = [loom.asarray(h) for h in hs]
    for axis in (0, 1, 2, -1, -2, -3):
        same(loom.stack(ds, axis=axis), np.stack(hs, axis=axis))
    same(loom.stack(ds[:2], axis=-1), np.stack(hs[:2], axis=-1))


def test_stack_mixed_dtypes_casting_and_dtype_argument():
    a, b = sample((9,), np.int16), sample((9,), np.float32, 1)
    same(loom.stack([loom.asarray(a), loom.asarray(b)], axis=1), np.stack([a, b], axis=1))
    same(loom.stack([loom.asarray(a), loom.asarray(a)], axis=-1, dtype=np.float64),
         np.stack([a, a], axis=-1, dtype=np.float64))
    with pytest.raises(TypeError):
        loom.stack([loom.asarray(b), loom.asarray(b)], axis=1, dtype=np.int32, casting="safe")
    with pytest.raises(ValueError):
        loom.stack([loom.asarray(a), loom.asarray(a[:3])], axis=1)
    out = loom.empty((9, 2), np.float32)
    r = loom.stack([loom.asarray(a), loom.asarray(b)], axis=1, out=out)
    assert r is out
    same(out, np.stack([a, b], axis=1).astype(np.float32))


def test_stack_many_pieces_pending_pieces_and_long_runs():
    hs = [sample((5, 3), np.float32, s) for s in range(11)]  # more pieces than one select takes
    ds = [loom.asarray(h) for h in hs]
    same(loom.stack(ds, axis=-1), np.stack(hs, axis=-1))
    same(loom.stack([d * 2 + 1 for d in ds[:3]], axis=2), np.stack([h * 2 + 1 for h in hs[:3]], axis=2))
    big = [sample((4, 300), np.float64, s) for s in range(2)]  # runs of 2400 bytes: a copy a piece
    same(loom.stack([loom.asarray(h) for h in big], axis=1), np.stack(big, axis=1))


def test_zero_d_and_empty():
    s = np.float32(2.5)
    same(loom.stack([loom.asarray(s), loom.asarray(s * 2)]), np.stack([s, s * 2]))
    same(loom.tile(loom.asarray(s), 3), np.tile(s, 3))
    same(loom.repeat(loom.asarray(s), 3), np.repeat(s, 3))
    e = np.zeros((0, 4), np.int32)
    same(loom.stack([loom.asarray(e)] * 2, axis=-1), np.stack([e] * 2, axis=-1))
    same(loom.tile(loom.asarray(e), (2, 3)), np.tile(e, (2, 3)))
    same(loom.repeat(loom.asarray(e), 3, axis=1), np.repeat(e, 3, axis=1))
    same(loom.repeat(loom.asarray(np.arange(4)), 0), np.repeat(np.arange(4), 0))
    same(loom.tile(loom.asarray(np.arange(4)), 0), np.tile(np.arange(4), 0))


def test_non_contiguous_inputs():
    h = sample((20, 30), np.float32)
    d = loom.asarray(h)
    for hv, dv in ((h[::2, 1::3], d[::2, 1::3]), (h.T, d.T), (h[::-1, ::-2], d[::-1, ::-2])):
        same(loom.tile(dv, (2, 2)), np.tile(hv, (2, 2)))
        same(loom.repeat(dv, 3, axis=1), np.repeat(hv, 3, axis=1))
        same(loom.repeat(dv, 2), np.repeat(hv, 2))
        same(loom.stack([dv, dv * 2], axis=-1), np.stack([hv, hv * 2], axis=-1))
        same(loom.stack([dv, dv], axis=1), np.stack([hv, hv], axis=1))


def test_reshape_errors_stay_numpys():
    d = loom.asarray(np.arange(12).reshape(3, 4))
    with pytest.raises(ValueError):
        d.T.reshape(5, 3)
    same(d.T.reshape(12), np.arange(12).reshape(3, 4).T.reshape(12))
    same(d.T.reshape(2, -1), np.arange(12).reshape(3, 4).T.reshape(2, -1))


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("dtype", [np.uint8, np.bool_, np.float16, np.int64, np.complex64])
def test_astype_of_a_permuted_view_keeps_numpys_layout(dtype):
    h = sample((16, 24, 3), dtype)
    d = loom.asarray(h)
    for perm in ((2, 0, 1), (1, 0, 2), (2, 1, 0)):
        for to in (np.float32, np.float64, np.int32):
            want = h.transpose(perm).astype(to)
            got = d.transpose(perm).astype(to)
            same(got, want)
            assert got.strides == want.strides, (perm, to, got.strides, want.strides)
            same(got / 3, want / 3)


@host
def test_tile_and_repeat_are_one_kernel():
    d = loom.asarray(np.arange(1 << 12, dtype=np.float32))
    for e in (loom.tile(d, 4), loom.repeat(d, 4)):
        text = loom.inspect(e, what=("kernels",))["kernels"]
        assert text.count("kernel k") == 1 and "temp" not in text, text


@host
def test_stack_on_the_last_axis_is_one_kernel_and_permuted_copies_run_in_memory_order():
    a = loom.asarray(np.arange(1 << 12, dtype=np.float32))
    text = loom.inspect(loom.stack([a, a + 1, a * 2], axis=1), what=("kernels",))["kernels"]
    assert text.count("kernel k") == 1, text
    with loom.capture_dumps("kernels", echo=False) as dumps:
        loom.asarray(np.zeros((64, 64, 3), np.uint8)).transpose(2, 0, 1).astype(np.float32)
    assert re.search(r"run \[12288\] in\d+\+0\[1\] out0\+0\[1\]", dumps.text), dumps.text


CHILD = r'''
import sys
import numpy as np
import loom
r = np.random.default_rng(3)
h = r.standard_normal((33, 17)).astype(np.float32)
u = r.integers(0, 255, (20, 30, 3)).astype(np.uint8)
d, du = loom.asarray(h), loom.asarray(u)
res = {
  "tile": loom.tile(d, (2, 3)), "repeat": loom.repeat(d, 3, axis=-1), "repeat_flat": loom.repeat(d[:, ::2], 2),
  "stack": loom.stack([d, d * 2, d + 1], axis=-1), "stack_mid": loom.stack([d.T, d.T], axis=1),
  "chw": du.transpose(2, 0, 1).astype(np.float32) / 255.0,
  "chw_k": du.transpose(2, 0, 1).astype(np.float64),
}
np.savez(sys.argv[1], **{k: loom.asnumpy(v) for k, v in res.items()})
'''


@host
@pytest.mark.parametrize("knob", ["LOOM_RESHAPE_ROOT_STORE", "LOOM_STACK_SELECT", "LOOM_MAP_OUTPUT_ORDER"])
def test_each_knob_off_gives_the_same_values(tmp_path, knob):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    outs = {}
    for value in ("1", "0"):
        env = dict(os.environ, **{knob: value, "LOOM_CACHE_DIR": str(tmp_path / f"cache{value}")})
        dest = tmp_path / f"{value}.npz"
        subprocess.run([sys.executable, str(script), str(dest)], check=True, env=env, timeout=300)
        outs[value] = np.load(dest)
    on, off = outs["1"], outs["0"]
    assert sorted(on.files) == sorted(off.files)
    for name in on.files:
        assert on[name].dtype == off[name].dtype and on[name].tobytes() == off[name].tobytes(), name
    h = np.random.default_rng(3).standard_normal((33, 17)).astype(np.float32)
    np.testing.assert_array_equal(on["stack"], np.stack([h, h * 2, h + 1], axis=-1))
    np.testing.assert_array_equal(on["tile"], np.tile(h, (2, 3)))


def test_stack_complex_to_real_warns_as_numpy():
    """stack(..., dtype=real, casting='unsafe') of complex pieces warns ComplexWarning as NumPy's cast does,
    on the one-kernel select path too (CuPy's test_stack_casting[unsafe])."""
    import warnings
    h = (np.arange(12) + 1j).reshape(3, 4).astype(np.complex64)
    a = loom.asarray(h)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = loom.stack((a, a), axis=1, dtype=np.float32, casting="unsafe")
        want = np.stack((h, h), axis=1, dtype=np.float32, casting="unsafe")
    assert any("imaginary part" in str(x.message) for x in w)
    np.testing.assert_array_equal(np.asarray(got.get()), want)
