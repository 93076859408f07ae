"""Host elementwise kernels that read an operand broadcast along the rows (a vector along the last dim, x + b;
b[None, :]; x + b[:, None, :] on a middle axis) run 4 rows per iteration of the inner loop, sharing that
operand's load (codegen/lower_host.c row_jam / jam_rows), once the rows are a page long and the kernel
streams an input. Values against NumPy: widths around the threshold and with vector tails, row counts that
leave 1-3 rows, tasks that start mid-row, strided and offset views, 3-d forms, several dtypes, several
outputs, the point index, in-place updates, empty and 0-d arrays; the IR (one load of the broadcast vector
per 4 stores) and LOOM_HOST_ROW_JAM=0."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import loom
from conftest import ON_GPU

host = pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")


def same(got, want):
    got = loom.asnumpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
@pytest.mark.parametrize("shape", [(9, 1024), (13, 1500), (6, 2048), (5, 1030), (3, 4096), (17, 100), (4, 523)])
def test_row_broadcast_matches_numpy(dtype, shape):
    r = np.random.default_rng(shape[0] * 7919 + shape[1])
    x = (r.standard_normal(shape) * 10).astype(dtype)
    b = (r.standard_normal(shape[-1]) * 10).astype(dtype)
    same(loom.asarray(x) + loom.asarray(b), x + b)
    same(loom.asarray(b) * loom.asarray(x) - loom.asarray(b)[None, :], b * x - b[None, :])


def test_tasks_that_start_mid_row():
    """Several tasks over 41 rows of 1030: their ranges start and end inside rows, and the jam must
    begin only at a row start and stop where fewer than 4 whole rows are left in the range."""
    r = np.random.default_rng(3)
    x = r.standard_normal((41, 1030)).astype(np.float32)
    b = r.standard_normal(1030).astype(np.float32)
    old = loom.config.num_threads
    try:
        for n in (2, 3, 5):
            loom.config.num_threads = n
            same(loom.asarray(x) + loom.asarray(b), x + b)
    finally:
        loom.config.num_threads = old


def test_views_and_3d_forms():
    r = np.random.default_rng(4)
    big = r.standard_normal((30, 2100)).astype(np.float32)
    bb = r.standard_normal(4200).astype(np.float32)
    g, gb = loom.asarray(big), loom.asarray(bb)
    same(g[::3, 5:2053] + gb[7:2055], big[::3, 5:2053] + bb[7:2055])      # offset and strided rows
    same(g[1:, 3:1027] + gb[::2][:1024], big[1:, 3:1027] + bb[::2][:1024])  # a stride-2 vector
    x3 = r.standard_normal((3, 10, 1100)).astype(np.float32)
    b1 = r.standard_normal(1100).astype(np.float32)
    b3 = r.standard_normal((3, 1, 1100)).astype(np.float32)
    bm = r.standard_normal((10, 1)).astype(np.float32)
    g3 = loom.asarray(x3)
    same(g3 + loom.asarray(b1), x3 + b1)
    same(g3 * loom.asarray(b3), x3 * b3)                                   # broadcast on the middle axis
    same(g3 - loom.asarray(bm), x3 - bm)                                   # a column (not jammed)
    a = r.standard_normal(2048).astype(np.float32)
    c = r.standard_normal(1024).astype(np.float32)
    same(loom.asarray(a)[:, None] + loom.asarray(c)[None, :], a[:, None] + c[None, :])


def test_two_outputs_and_the_point_index():
    r = np.random.default_rng(5)
    x = r.standard_normal((11, 1024)).astype(np.float32)
    b = r.standard_normal(1024).astype(np.float32)
    g, gb = loom.asarray(x), loom.asarray(b)
    s, d = loom.eval(g + gb, g - gb)
    same(s, x + b)
    same(d, x - b)
    idx = np.arange(x.size, dtype=np.float32).reshape(x.shape)
    same(g + gb + loom.arange(x.size, dtype=loom.float32).reshape(x.shape), x + b + idx)


def test_in_place_and_self_broadcast():
    """The broadcast row is a row of the array written (g[:] = g + g[0]): no reordering may read it
    after it was written."""
    r = np.random.default_rng(6)
    x = r.standard_normal((16, 1024)).astype(np.float32)
    b = r.standard_normal(1024).astype(np.float32)
    g = loom.asarray(x.copy())
    g += loom.asarray(b)
    same(g, x + b)
    g = loom.asarray(x.copy())
    g[:, :] = g + g[0]
    same(g, x + x[0])
    g = loom.asarray(x.copy())
    g[4:] = g[4:] + g[3]
    want = x.copy()
    want[4:] = x[4:] + x[3]
    same(g, want)


def test_empty_and_0d():
    b = np.arange(1024, dtype=np.float32)
    same(loom.asarray(np.zeros((0, 1024), np.float32)) + loom.asarray(b), np.zeros((0, 1024), np.float32) + b)
    same(loom.asarray(np.zeros((4, 0), np.float32)) + loom.asarray(np.zeros(0, np.float32)), np.zeros((4, 0), np.float32))
    same(loom.asarray(np.float32(2.5)) + loom.asarray(np.float32(1.0)), np.float32(3.5))


def vector_loops(text):
    """(loads, stores) of float vectors per basic block of the optimized IR, for blocks with stores."""
    out = []
    for block in re.split(r"\n(?=[\w.]+:)", text):
        st = len(re.findall(r"store <\d+ x float>", block))
        if st:
            out.append((len(re.findall(r"load <\d+ x float>", block)), st))
    return out


@host
def test_ir_shares_the_vector_load_across_4_rows():
    x = loom.asarray(np.ones((64, 1024), np.float32))
    b = loom.asarray(np.ones(1024, np.float32))
    f = loom.fuse(kernel_name="row_jam_ir")(lambda x, b: x + b)
    with loom.capture_dumps("llvm", echo=False) as d:
        loom.asnumpy(f(x, b))
    loops = vector_loops(d.text)
    assert (5, 4) in loops, loops  # 4 rows of x and one of b per 4 stores


@host
def test_knob_turns_it_off():
    code = ("import loom, numpy as np\n"
            "x = loom.asarray(np.ones((64, 1024), np.float32)); b = loom.asarray(np.ones(1024, np.float32))\n"
            "with loom.capture_dumps('llvm', echo=False) as d:\n"
            "    loom.asnumpy(loom.fuse(kernel_name='row_jam_off')(lambda x, b: x + b)(x, b))\n"
            "print('jrow' in d.text)\n")
    env = dict(os.environ, LOOM_HOST_ROW_JAM="0", LOOM_HOST_DISK_CACHE="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
