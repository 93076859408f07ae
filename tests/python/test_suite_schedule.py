"""Deterministic facts of the workload suite (bench/suite/workloads.py) and of the three tables of unseen
workloads (bench/suite/workloads_probe.py, workloads_fresh.py, workloads_fresh2.py), not timings:

- the number of kernels Loom's schedule has for every workload, against the FUSED IDEAL the compiler
  should reach (workloads.py `ideal`: one kernel per independent reduction phase);
- the bytes each kernel reads and writes (bench/suite/schedule.py, from the LOOM_DUMP=kernels schedule
  text): for a one-kernel ideal, every input read once and every output written once, no temporaries;
- Loom's result of every workload against NumPy in float64 (at the small "test" sizes).

Current misses are strict xfails that name the cause (bench/suite/DIAGNOSIS.md): when the compiler
learns the mechanism, the xfail turns into a failure that asks for its marker to go.
"""
import os
import sys

import numpy as np
import pytest

import loom

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.suite import schedule, workloads as W  # noqa: E402
from bench.suite.inputs import host_inputs  # noqa: E402
from bench.suite import libs as L  # noqa: E402

# workloads whose schedule still has more kernels than the fused ideal (amp_unscale's any() joined the map
# kernel as its reduction epilogue, passes/fuse_place.c take_map_kernel)
KERNEL_MISSES: dict = {}
ALL = W.table("suite") + W.table("probe") + W.table("fresh") + W.table("fresh2")
ONE_KERNEL = [w.name for w in ALL if w.ideal == 1]


@pytest.fixture(scope="module")
def facts():
    return schedule.collect("test", [w.name for w in ALL])


def _xfail(request, name, table):
    if name in table:
        request.applymarker(pytest.mark.xfail(strict=True, reason=table[name]))


def test_suite_is_broad():
    ws = W.WORKLOADS
    assert len(ws) >= 40
    assert all(w.source and w.inputs for w in ws)
    groups = {w.group for w in ws}
    for g in ("activation", "broadcast", "strided", "reduce", "norm", "arg", "shape", "tiny", "optimizer",
              "dtype", "int", "where", "power"):
        assert g in groups, g
    dtypes = {i.dtype for w in ws for i in w.inputs}
    assert {"float16", "float32", "float64", "int8", "uint8", "int64"} <= dtypes


def test_schedule_parser_counts_views_once():
    text = """temp 0 f32 4
kernel k0_map ndim 2 keep 1 index 32
  buf 0 in f32 [s,1]
  buf 1 in f32 [1,s]
  buf 2 in f32 [0,1]
  buf 3 out f32 [s,1]
  phase map store buf 3 %0
  run [4,6] in0+0[6,1] in0+0[1,4] in1+0[0,1] out0+0[6,1]
"""
    (k,) = schedule.parse_schedule(text)
    # x and x.T of one 4x6 buffer: 24 elements once; a broadcast row of 6; 24 written
    assert (k["read"], k["write"], k["phases"]) == ((24 + 6) * 4, 24 * 4, 1)
    (k,) = schedule.parse_schedule("kernel k ndim 1\n  buf 0 in f64 [2]\n  buf 1 in f64 [2]\n  buf 2 out f64 [1]\n"
                                   "  run [5] in0+0[2] in0+1[2] out0+0[1]\n")
    assert (k["read"], k["write"]) == (10 * 8, 5 * 8)   # x[0::2] and x[1::2]: the 10 elements once
    # an arange under @loom.fuse is the point's index ("index-1" binds, no memory): tril by comparisons
    (k,) = schedule.parse_schedule("kernel k ndim 2\n  buf 0 in i64 [1,0]\n  buf 1 in i64 [0,1]\n  buf 2 in f32 [s,1]\n"
                                   "  buf 3 out f32 [s,1]\n  run [3,3] index-1+0[1,0] index-1+0[0,1] in0+0[3,1] "
                                   "out0+0[3,1] param0=0\n")
    assert (k["read"], k["write"]) == (9 * 4, 9 * 4)


@pytest.mark.parametrize("name", [w.name for w in ALL])
def test_kernel_count(facts, name, request):
    _xfail(request, name, KERNEL_MISSES)
    f = facts[name]
    assert f["kernels"] == W.lookup(name).ideal, f


@pytest.mark.parametrize("name", ONE_KERNEL)
def test_bytes_one_pass(facts, name, request):
    """A one-kernel workload reads each input at most once and writes each output once."""
    _xfail(request, name, KERNEL_MISSES)
    w = W.lookup(name)
    ins = host_inputs(w, "test")
    with np.errstate(all="ignore"):
        outs = L.as_tuple(w.fn(L.NumpyLib(None).ns, *ins))
    must_read = sum(a.nbytes for a in ins)
    must_write = sum(np.asarray(o).nbytes for o in outs)
    f = facts[name]
    read = sum(k["read"] for k in f["per_kernel"])
    write = sum(k["write"] for k in f["per_kernel"])
    # at most the inputs' bytes: a strided slice (x[:, ::3]) needs only the elements it names
    assert (f["kernels"], write) == (1, must_write) and read <= must_read, f


@pytest.mark.parametrize("name", [w.name for w in ALL])
def test_loom_matches_numpy_float64(name, request):
    w = W.lookup(name)
    ins = host_inputs(w, "test")
    ns = L.NumpyLib(None).ns
    with np.errstate(all="ignore"):
        expect = [np.asarray(o).dtype for o in L.as_tuple(w.fn(ns, *ins))]
        ref = [np.asarray(o) for o in L.as_tuple(w.fn(ns, *[
            a.astype(np.float64) if a.dtype.kind == "f" and w.upcast_ref else a for a in ins]))]
    f = loom.fuse(kernel_name=name)(lambda *a: w.fn(loom, *a))
    got = L.as_tuple(f(*[loom.asarray(a) for a in ins]))
    assert len(got) == len(ref)
    for g, r, e in zip(got, ref, expect):
        g = loom.asnumpy(g)
        assert g.shape == r.shape and g.dtype == e, (g.shape, g.dtype, r.shape, e)
        if r.dtype.kind == "f":
            tol = w.tol or {"float16": 5e-3, "float32": 1e-4, "float64": 1e-10}[e.name]
            scale = float(np.max(np.abs(r[np.isfinite(r)]), initial=0.0)) or 1.0
            np.testing.assert_array_equal(np.isnan(g), np.isnan(r))
            assert float(np.nanmax(np.abs(g.astype(np.float64) - r), initial=0.0)) <= tol * scale * (
                10 if r.size < max(a.size for a in ins) else 1)
        else:
            assert np.max(np.abs(g.astype(np.int64) - r.astype(np.int64)), initial=0) <= w.int_tol


TILED = {"symmetrize", "transpose_add"}  # elementwise with an operand read across its rows (x.T)


def test_host_tiled_walk_exactly_for_transposed_operands():
    """The host walks an elementwise kernel in 16 x 16 tiles (codegen/lower_host_tile.c) when an operand is
    contiguous along the second-to-last dim and strided along the last: the suite's transposes, and no
    other workload (broadcasts, strided slices and reductions keep the row walk)."""
    tiled = set()
    for w in W.WORKLOADS:
        outs = L.as_tuple(w.fn(loom, *[loom.asarray(a) for a in host_inputs(w, "test")]))
        ir = ""
        for o in outs:
            try:
                ir += loom.inspect(o, what="llvm")["llvm"]
            except ValueError:  # an output that is already computed (an input passed through)
                pass
        if "tile.rows" in ir:
            tiled.add(w.name)
    assert tiled == TILED


@pytest.mark.parametrize("path", ["fuse", "lazy"])
def test_new_scalar_values_do_not_compile(path):
    """Issue 11: calls with new scalar values reuse the kernel of their structure (an Adam step with a
    learning rate that changes every step). Counts compiles with loom.stats()."""
    x = loom.asarray(np.linspace(-1.0, 1.0, 1000, dtype=np.float32))
    f = loom.fuse(lambda a, s: a * s + 1.0)

    def call(s):
        if path == "fuse":
            return f(x, s)
        return loom.eval(x * s + 1.0)

    call(0.5)   # the structure's first compile
    before = loom.stats()["kernels_compiled"]
    for i in range(20):
        s = (0.625 if path == "fuse" else 2.625) + i / 64.0   # values not used before in this process
        np.testing.assert_allclose(loom.asnumpy(call(s)), loom.asnumpy(x) * np.float32(s) + 1.0, rtol=1e-6)
    assert loom.stats()["kernels_compiled"] - before == 0
