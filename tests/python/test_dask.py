# SPDX-License-Identifier: Apache-2.0
"""loom arrays as Dask chunks (issue 18): dispatch registrations, the serializers of distributed, the
backend entry point, and a distributed.LocalCluster of 2 worker processes computing a normalized
reduction, a blockwise expression, a rechunk and x.T @ x over loom chunks against NumPy, with loom's
kernel counters read in the workers (one fused kernel per chunk for the blockwise part).

Skipped without dask[array] / distributed (the `dask` dependency group of pyproject.toml).
LOOM_DASK_TEST_MB sets the size of the cluster test's array (default 256 MB; the issue's CI figure is
2048).
"""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import loom

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(loom.asnumpy(a) if isinstance(a, loom.ndarray) else a, b, rtol=rtol, atol=atol)


@pytest.fixture
def sync():
    with dask.config.set(scheduler="synchronous"):
        yield


def test_registration_follows_either_import_order():
    code = ("import sys\n"
            "{first}\n{second}\n"
            "from dask.array import dispatch as d\n"
            "x = loom.ones(3)\n"
            "assert d.concatenate_lookup.dispatch(loom.ndarray) is loom.concatenate\n"
            "assert d.empty_lookup.dispatch(loom.ndarray) is loom.empty\n"
            "from dask.base import normalize_token\n"
            "assert normalize_token.dispatch(loom.ndarray).__module__ == 'loom._dask'\n"
            "from dask.sizeof import sizeof\n"
            "assert sizeof(loom.ones((100, 10))) == 8000\n"
            "print('ok')\n")
    for first, second in (("import loom", "import dask.array"), ("import dask.array", "import loom")):
        r = subprocess.run([sys.executable, "-c", code.format(first=first, second=second)],
                           capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    # importing loom alone imports no part of Dask
    r = subprocess.run([sys.executable, "-c", "import sys, loom; print(any(m.split('.')[0] in "
                        "('dask', 'distributed') for m in sys.modules))"], capture_output=True, text=True)
    assert r.stdout.strip() == "False", r.stderr


def test_from_array_map_blocks_and_meta(sync):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((60, 40))
    d = da.from_array(loom.asarray(x), chunks=(16, 15))  # chunks are views of the loom array
    assert isinstance(d._meta, loom.ndarray)
    blocks = d.blocks[1, 2].compute()
    assert isinstance(blocks, loom.ndarray)
    _close(blocks, x[16:32, 30:40])
    m = da.from_array(x, chunks=(16, 15)).map_blocks(loom.asarray)
    assert isinstance(m._meta, loom.ndarray)
    y = da.exp(-m) * 2 + m * m - 1
    assert isinstance(y._meta, loom.ndarray)
    r = y.compute()
    assert isinstance(r, loom.ndarray)
    _close(r, np.exp(-x) * 2 + x * x - 1)


def test_percentile(sync):
    """da.percentile (Dask's approximate merge of chunk percentiles) equals Dask's over NumPy chunks, and
    stays in loom arrays throughout: the chunk percentiles are loom arrays on the chunk's device and Dask's
    merge_percentiles creates its arrays with np.array(..., like=<a loom array>) (NEP 35), so a GPU chunk
    is never converted implicitly (LOOM_STRICT_CONVERSION makes the host behave as a GPU here)."""
    rng = np.random.default_rng(1)
    xn = rng.standard_normal((50, 30))
    col = np.ascontiguousarray(xn[:, 0])
    for method in ("linear", "nearest", "lower", "midpoint"):
        got = da.percentile(da.from_array(loom.asarray(col), chunks=13), [10, 50, 90], method=method).compute()
        assert isinstance(got, loom.ndarray)
        _close(got, da.percentile(da.from_array(col, chunks=13), [10, 50, 90], method=method).compute())
    from dask.array.dispatch import percentile_lookup
    values, n = percentile_lookup(loom.asarray(xn[:, 0]), np.array([10.0, 50.0, 90.0]))
    assert isinstance(values, loom.ndarray)
    _close(values, np.percentile(xn[:, 0], [10, 50, 90]))
    assert n == 50
    assert percentile_lookup(loom.zeros(0), np.array([50.0])) == (None, 0)


def test_rechunk_concatenate_stack_stay_loom_on_the_device(sync):
    """Rechunking, concatenating and stacking Dask arrays of loom chunks: Dask calls np.concatenate on the
    chunks (its concatenate_lookup: loom.concatenate), so every new chunk is a loom array on the chunks'
    device."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((40, 30))
    lx = loom.asarray(x)
    d = da.from_array(lx, chunks=(7, 11))
    r = d.rechunk((20, 15))
    for i in range(2):
        for j in range(2):
            b = r.blocks[i, j].compute()
            assert isinstance(b, loom.ndarray) and b.device == lx.device
            _close(b, x[20 * i:20 * (i + 1), 15 * j:15 * (j + 1)])
    whole = d.rechunk((40, 30))  # one chunk from 24: one concatenate of them all
    assert whole.npartitions == 1
    _close(whole.compute(), x)
    c = da.concatenate([d, d * 2], axis=0).rechunk((80, 10))
    got = c.compute()
    assert isinstance(got, loom.ndarray) and got.device == lx.device
    _close(got, np.concatenate([x, x * 2]))
    s = da.stack([d, d + 1], axis=1).rechunk((40, 2, 30))
    _close(s.compute(), np.stack([x, x + 1], axis=1))
    _close(d[:, :0].rechunk((5, 0)).compute(), x[:, :0])  # empty chunks


def test_reductions_rechunk_slicing_and_linear_algebra(sync):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((50, 30))
    x[3, 4] = np.nan
    d = da.from_array(loom.asarray(x), chunks=(12, 7))
    dn = da.from_array(loom.asarray(np.where(np.isnan(x), 0.0, x)), chunks=(12, 7))
    xn = np.where(np.isnan(x), 0.0, x)
    _close(d.sum(axis=0).compute(), x.sum(axis=0))  # NaN propagates in column 4
    _close(dn.mean(axis=1).compute(), xn.mean(axis=1))
    _close(dn.std(axis=0).compute(), xn.std(axis=0))
    _close(dn.var(axis=(0, 1), ddof=1).compute(), xn.var(ddof=1))
    _close(d.max(axis=1).compute(), x.max(axis=1))
    _close(dn.argmax(axis=0).compute(), xn.argmax(axis=0))
    _close((dn > 0).any(axis=0).compute(), (xn > 0).any(axis=0))
    _close(dn.prod(axis=1, keepdims=True).compute(), xn.prod(axis=1, keepdims=True), rtol=1e-9)
    _close(((dn - dn.mean(0)) / dn.std(0)).sum(1).compute(), ((xn - xn.mean(0)) / xn.std(0)).sum(1))
    _close(dn.rechunk((25, 30)).compute(), xn)
    _close(dn.rechunk((7, 11))[5:40:3, ::-2].compute(), xn[5:40:3, ::-2])
    _close((dn.T @ dn).compute(), xn.T @ xn)
    _close(da.tensordot(dn, dn, axes=([0], [0])).compute(), np.tensordot(xn, xn, axes=([0], [0])))
    _close(da.einsum("ij,ij->j", dn, dn).compute(), np.einsum("ij,ij->j", xn, xn))
    _close(da.concatenate([dn, dn * 2], axis=1).compute(), np.concatenate([xn, xn * 2], axis=1))
    np.testing.assert_array_equal(dn.to_backend("numpy").compute(), xn)
    assert isinstance(dn.to_backend("numpy")._meta, np.ndarray)
    # empty and 0-d corners
    e = da.from_array(loom.zeros((0, 4)), chunks=(2, 2))
    _close(e.sum(axis=0).compute(), np.zeros(4))
    assert float(dn[0, 0].compute()) == xn[0, 0]


class _TaskKernels:
    """A Dask callback (local schedulers) recording, per task, loom's kernels launched while it ran,
    whether it reads a chunk of the array named `source` (a dependency, or a chunk inlined into the
    fused task), and whether its result still holds a pending loom array."""

    def __init__(self, source):
        from dask.callbacks import Callback
        self.source = source
        self.tasks: list[tuple] = []
        self._k0 = 0
        outer = self

        class CB(Callback):
            def _pretask(self, key, dsk, state):
                outer._k0 = loom.stats()["kernels_launched"]

            def _posttask(self, key, result, dsk, state, worker_id):
                outer.tasks.append((key, loom.stats()["kernels_launched"] - outer._k0,
                                    outer._reads_source(dsk[key]), _holds_pending(result)))
        self.callback = CB()

    def _reads_source(self, node):
        from dask._task_spec import DataNode, GraphNode, TaskRef
        keys = set(getattr(node, "dependencies", ()) or ())
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, (TaskRef, DataNode)):
                keys.add(n.key)
            if isinstance(n, GraphNode) and hasattr(n, "args"):
                stack.extend(list(getattr(n, "args")) + list(getattr(n, "kwargs").values()))
            elif isinstance(n, dict):  # a fused task's subgraph
                stack.extend(list(n.keys()) + list(n.values()))
            elif isinstance(n, (list, tuple)) and not isinstance(n, str):
                if isinstance(n, tuple) and n and n[0] == self.source:
                    keys.add(n)
                else:
                    stack.extend(n)
        return any(isinstance(k, tuple) and k[0] == self.source for k in keys)

    def chunk_kernels(self):
        return [k for _, k, reads, _ in self.tasks if reads]


def _holds_pending(v):
    if isinstance(v, loom.ndarray):
        return bool(v._lazy)
    if isinstance(v, dict):
        v = list(v.values())
    return isinstance(v, (list, tuple)) and any(_holds_pending(w) for w in v)


def test_kernels_per_chunk_task(sync):
    """Per chunk, each task that reads the chunk runs as few kernels as Dask's graph allows (the floor):
    Dask fuses a blockwise chain with the reduction's chunk step (and, over an axis of one chunk, with
    the aggregate step: a reduction over an axis of extent 1, a map in loom), and every task's loom
    results are finished together at its end (one evaluation). Blockwise: 1 kernel per chunk. The
    normalized reduction: 4 = mean's chunk step (1: the sum; the count is a broadcast view), var's
    (2: the two-phase moment kernel computing the total and the centred squares in one pass over the
    chunk, plus one kernel for the int64 cast of the count moment_chunk makes) and the final pass (1);
    three of them read the chunk. No task result is left pending."""
    pytest.importorskip("dask._task_spec")
    rng = np.random.default_rng(3)
    xn = rng.standard_normal((4 * 96, 40))
    x = da.from_array(loom.asarray(xn), chunks=(96, 40)).map_blocks(lambda b: b + 0, meta=loom.empty((0, 0)))
    x = x.persist()
    cases = {
        "blockwise": ((da.exp(-x * x) * 2 + x * 3 - 1).sum(), [1] * 4,
                      (np.exp(-xn * xn) * 2 + xn * 3 - 1).sum()),
        "rows": ((da.sin(x) * x).sum(axis=1), [1] * 4, (np.sin(xn) * xn).sum(axis=1)),
        "normalized": (((x - x.mean(0)) / x.std(0)).sum(1), [1] * 4 + [2] * 4 + [1] * 4,
                       ((xn - xn.mean(0)) / xn.std(0)).sum(1)),
    }
    for name, (expr, want, ref) in cases.items():
        rec = _TaskKernels(x.name)
        with rec.callback:
            got = expr.compute()
        _close(got, ref, rtol=1e-9, atol=1e-9)
        assert sorted(rec.chunk_kernels()) == sorted(want), (name, rec.tasks)
        assert not any(pending for *_, pending in rec.tasks), name
    # optimization.fuse.active off: tasks are left as Dask made them (no wrapper), results still right
    with dask.config.set({"optimization.fuse.active": False}):
        _close(((x - x.mean(0)) / x.std(0)).sum(1).compute(), cases["normalized"][2], rtol=1e-9, atol=1e-9)


def test_numel_matches_numpy_chunks_without_kernels_or_copies(sync):
    """Dask's numel for a loom chunk (what mean, var and std divide by) has the values, shape and dtype of
    Dask's numel for the same NumPy chunk (its own np.full_like), for every axis / keepdims / dtype, an
    empty chunk included (axes as Dask passes them: normalized, non-negative), and launches no kernel.
    On a GPU the count's one element is copied to the device once per (count, dtype, device), not in
    every task: a synchronous host-to-device copy waits for the GPU's whole queue and stalled each mean
    / var chunk task."""
    from dask.array.reductions import numel
    for shape in ((6, 5, 4), (0, 3), (7,)):
        xn = np.zeros(shape)
        xl = loom.asarray(xn)
        axes = [None] + list(range(len(shape))) + [tuple(range(len(shape)))]
        axes += [(0, 2), (1, 2)] if len(shape) == 3 else []
        for axis in axes:
            for keepdims in (False, True):
                for dtype in (None, "f8", "i8", "f4"):
                    kw = {"axis": axis, "keepdims": keepdims, **({"dtype": dtype} if dtype else {})}
                    want = np.asarray(numel(xn, **kw))
                    k0 = loom.stats()["kernels_launched"]
                    got = numel(xl, **kw)
                    assert loom.stats()["kernels_launched"] == k0, kw
                    got = loom.asnumpy(got) if isinstance(got, loom.ndarray) else np.asarray(got)
                    assert got.shape == want.shape and got.dtype == want.dtype, (shape, kw, got, want)
                    np.testing.assert_array_equal(got, want)
    if not loom.cuda.is_available():
        return
    import loom._common as common
    copies = []
    real = common._from_numpy

    def counting(a, copy=True, device=None):
        copies.append(copy)
        return real(a, copy, device)
    common._from_numpy = counting
    try:
        g = loom.asarray(np.ones((9, 4)))
        first = numel(g, axis=(0,), keepdims=True)
        again = [numel(g, axis=(0,), keepdims=True) for _ in range(5)]
    finally:
        common._from_numpy = real
    assert sum(copies) <= 1, copies  # at most the first call copies the count to the device
    for v in [first] + again:
        assert v._on_gpu
        np.testing.assert_array_equal(loom.asnumpy(v), np.full((1, 4), 9.0))


def _optimized_tasks(expr):
    """(tasks, aliases) of expr's optimized graph (data nodes, e.g. persisted chunks, are neither)."""
    from dask._task_spec import Alias, Task
    g = dict(dask.optimize(expr)[0].__dask_graph__())
    return sum(isinstance(t, Task) for t in g.values()), sum(isinstance(t, Alias) for t in g.values())


def _tree_tasks(n, split):
    """Tasks of Dask's tree reduction over n chunks along one axis, split at a time: the partial levels
    above the chunks, then one aggregate."""
    tasks, level = 1, n
    while level > split:
        level = -(-level // split)
        tasks += level
    return tasks


def test_optimized_graph_task_counts(sync):
    """Loom chunks add no task to Dask's optimized graph: for each workload the graph over loom chunks has
    as many tasks as over NumPy chunks. One task per chunk per pass over it (the elementwise chain and the
    reduction's chunk step fused into it), plus Dask's tree reduction, whose size follows split_every (a
    full reduction of a 2-d array splits each axis by int(split_every ** 0.5): 2 with Dask's default 4,
    so 32 chunks along one axis take 31 tree tasks; dask.config's split_every={0: 32} makes it one)."""
    pytest.importorskip("dask._task_spec")
    n = 32
    xn = da.from_array(np.random.default_rng(2).standard_normal((n * 8, 16)), chunks=(8, 16)).persist()
    xl = xn.map_blocks(loom.asarray, meta=loom.empty((0, 0))).persist()

    def exprs(x, xp):
        return {"blockwise": (xp.exp(-x * x) * 2 + x * 3 - 1).sum(),
                "compute": (xp.sin(x) ** 2 + xp.cos(x) ** 2 * xp.tanh(x)).sum(),
                "normalized": ((x - x.mean(0)) / x.std(0)).sum(1)}
    for split_every, full_tree, axis0_tree in ((None, _tree_tasks(n, 2), _tree_tasks(n, 4)),
                                               ({0: 32}, 1, 1), (16, _tree_tasks(n, 4), _tree_tasks(n, 16))):
        with dask.config.set({"split_every": split_every} if split_every else {}):
            want = {"blockwise": n + full_tree, "compute": n + full_tree,
                    "normalized": 3 * n + 2 * axis0_tree}  # mean and var: chunk steps + trees; the final pass
            got_numpy = {k: _optimized_tasks(e)[0] for k, e in exprs(xn, da).items()}
            got_loom = {k: _optimized_tasks(e)[0] for k, e in exprs(xl, da).items()}
        assert got_loom == got_numpy == want, (split_every, got_loom, got_numpy, want)


def test_no_compile_after_warm_up(sync):
    """A second run of the same workloads over chunks of the same shapes compiles nothing: every kernel a
    chunk task or a tree task needs is in loom's kernel cache after the first run (the keys do not depend
    on the chunk's data or address), so timed repetitions measure no compiler."""
    xn = np.random.default_rng(4).standard_normal((5 * 40, 24))
    x = da.from_array(loom.asarray(xn), chunks=(40, 24)).map_blocks(lambda b: b * 1, meta=loom.empty((0, 0))).persist()
    work = [((x - x.mean(0)) / x.std(0)).sum(1), (da.exp(-x * x) * 2 + x * 3 - 1).sum(),
            (da.sin(x) ** 2 + da.cos(x) ** 2 * da.tanh(x)).sum()]
    dask.compute(*work)
    c0 = loom.stats()["kernels_compiled"]
    got = dask.compute(*work)
    assert loom.stats()["kernels_compiled"] == c0
    _close(got[0], ((xn - xn.mean(0)) / xn.std(0)).sum(1), rtol=1e-9, atol=1e-9)
    _close(got[1], (np.exp(-xn * xn) * 2 + xn * 3 - 1).sum(), rtol=1e-12)
    _close(got[2], (np.sin(xn) ** 2 + np.cos(xn) ** 2 * np.tanh(xn)).sum(), rtol=1e-12)


def test_tokenize_hashes_contents_as_for_numpy():
    """Dask's token of a loom array (the name da.from_array gives its chunks, the key of an argument to
    map_blocks) hashes the contents as Dask does for NumPy, not through Dask's pickling fallback: equal
    contents give equal tokens, any change (one element, dtype, shape, device-side pending result)
    another; views, 0-d and empty arrays included."""
    from dask.base import normalize_token, tokenize
    assert normalize_token.dispatch(loom.ndarray).__module__ == "loom._dask"
    a = np.random.default_rng(8).standard_normal((50, 40))
    la = loom.asarray(a)
    assert tokenize(la) == tokenize(loom.asarray(a.copy())) == tokenize(la)
    assert tokenize(la) != tokenize(a)  # another chunk type
    changed = loom.asarray(a.copy())
    changed[3, 4] = changed[3, 4] + 1.0
    assert tokenize(changed) != tokenize(la)
    assert tokenize(loom.asarray(a.view(np.int64))) != tokenize(la)
    assert tokenize(la.reshape(40, 50)) != tokenize(la)
    assert tokenize(la[:, ::2]) == tokenize(loom.asarray(np.ascontiguousarray(a[:, ::2])))
    assert tokenize(la * 2) == tokenize(loom.asarray(a * 2))  # a pending array: its value
    assert tokenize(loom.asarray(np.float64(2.5))) != tokenize(loom.asarray(np.float64(3.5)))
    assert tokenize(loom.zeros((0, 3))) != tokenize(loom.zeros((3, 0)))
    d = da.from_array(la, chunks=(25, 40))
    assert d.name == da.from_array(loom.asarray(a.copy()), chunks=(25, 40)).name
    assert d.name != da.from_array(changed, chunks=(25, 40)).name


def test_sizeof_is_nbytes():
    """Dask's sizeof of a loom array is its nbytes, as for NumPy chunks (distributed's memory accounting,
    spilling and transfer costs read it): views, pending arrays (no evaluation), 0-d and empty arrays,
    and containers of chunks (a task's dict result)."""
    from dask.sizeof import sizeof
    a = np.ones((300, 70))
    la = loom.asarray(a)
    assert sizeof(la) == sizeof(a) == a.nbytes
    assert sizeof(la[:, ::2]) == a[:, ::2].nbytes
    pending = la * 2
    assert sizeof(pending) == a.nbytes and pending._lazy  # still pending
    assert sizeof(loom.zeros((0, 4))) == 0
    assert sizeof(loom.asarray(np.float32(1.0))) == 4
    assert sizeof(loom.ones(1000, dtype=np.int16)) == 2000
    assert sizeof({"n": la, "total": la[:1]}) >= a.nbytes + a[:1].nbytes


def test_backend_entry_point_makes_loom_chunks(sync):
    with dask.config.set({"array.backend": "loom"}):
        o = da.ones((10, 6), chunks=(4, 3))
        f = da.full((5,), 2.5, chunks=2)
        a = da.arange(0, 20, 2, chunks=3)
        r = da.random.random((30, 4), chunks=(10, 4))
    for arr in (o, f, a, r):
        assert isinstance(arr._meta, loom.ndarray), type(arr._meta)
        assert isinstance(arr.blocks[0].compute(), loom.ndarray)
    _close(o.sum().compute(), 60.0)
    _close(f.compute(), np.full(5, 2.5))
    _close(a.compute(), np.arange(0, 20, 2))
    rv = loom.asnumpy(r.compute())
    assert rv.shape == (30, 4) and (rv >= 0).all() and (rv < 1).all() and rv.std() > 0.1
    # da.random draws on loom's counter-based stream, on the worker's device: the chunk is pending until
    # its task ends (one kernel, or none of its own when a blockwise op fuses with it); a seed gives the
    # same chunks again; a method loom.random lacks comes from NumPy's RandomState with the chunk's seed
    with dask.config.set({"array.backend": "loom"}):
        a = da.random.RandomState(5).standard_normal((4000, 3), chunks=(1000, 3))
        b = da.random.RandomState(5).standard_normal((4000, 3), chunks=(1000, 3))
        assert isinstance(a._meta, loom.ndarray)
        av, bv = loom.asnumpy(a.compute()), loom.asnumpy(b.compute())
        np.testing.assert_array_equal(av, bv)
        assert abs(av.mean()) < 0.1 and abs(av.std() - 1) < 0.1 and len(np.unique(av)) == av.size
        per_chunk = []
        for expr in (a, a * 2 + 1):
            rec = _TaskKernels("none")
            with rec.callback:
                expr.compute()
            per_chunk.append(sorted(k for key, k, _, _ in rec.tasks if isinstance(key, tuple))[-4:])
        # the draw computed by its task's kernel, * 2 + 1 included (no kernel more); on the host the
        # 16-byte key and counter upload of loom.random is a copy kernel of its own (a copy to a GPU)
        assert per_chunk[0] == per_chunk[1] and max(per_chunk[0]) <= 2, per_chunk
        import loom.random as loom_random
        assert not hasattr(loom_random.RandomState, "multinomial")
        z = da.random.RandomState(7).multinomial(10, [0.2, 0.3, 0.5], size=(50,), chunks=25)
        zv = z.compute()
        assert isinstance(zv, loom.ndarray) and zv.shape == (50, 3)
        np.testing.assert_array_equal(loom.asnumpy(zv).sum(axis=1), np.full(50, 10))
        np.testing.assert_array_equal(loom.asnumpy(zv), loom.asnumpy(
            da.random.RandomState(7).multinomial(10, [0.2, 0.3, 0.5], size=(50,), chunks=25).compute()))


def test_serializers_are_zero_copy_for_host_memory():
    pytest.importorskip("distributed")
    from distributed.protocol import serialize, deserialize
    x = loom.asarray(np.arange(12.0).reshape(3, 4))
    y = x * 3  # pending: serialized by value, evaluated once
    header, frames = serialize(y, serializers=("dask",))
    assert header["serializer"] == "dask"
    z = deserialize(header, frames)
    gpu = loom.cuda.is_available()  # arrays live on the GPU: they travel through host frames
    assert isinstance(z, loom.ndarray) and z._on_gpu == gpu
    _close(z, np.arange(12.0).reshape(3, 4) * 3)
    header, frames = serialize(x, serializers=("dask",))
    assert memoryview(frames[-1]).nbytes == x.nbytes
    if not gpu:
        assert np.frombuffer(frames[-1], dtype=np.uint8).ctypes.data == x._ptr  # the array's own memory
    back = deserialize(header, [bytearray(f) if isinstance(f, (bytes, memoryview)) and i == len(frames) - 1
                                else f for i, f in enumerate(frames)])
    _close(back, loom.asnumpy(x))
    t = loom.asarray(np.arange(10, dtype=np.int16))[::3]  # a strided view
    header, frames = serialize(t, serializers=("dask",))
    np.testing.assert_array_equal(loom.asnumpy(deserialize(header, frames)), np.arange(10, dtype=np.int16)[::3])
    if hasattr(loom, "bfloat16"):
        b = loom.asarray(np.arange(6, dtype=np.float32)).astype(loom.bfloat16)
        header, frames = serialize(b, serializers=("dask",))
        out = deserialize(header, frames)
        assert out.dtype == b.dtype
        np.testing.assert_array_equal(loom.asnumpy(out).astype(np.float32), np.arange(6, dtype=np.float32))


def test_cuda_serializer_family():
    """distributed's "cuda" serializers (the ones its UCX comm asks for): a GPU array is one device frame
    (a flat uint8 view of its memory, with __cuda_array_interface__) and comes back equal, on the device;
    a host array is left to the "dask" serializers. On a GPU with CuPy, CuPy reads loom's frames and loom
    reads CuPy's (the headers agree on shape, typestr and strides)."""
    pytest.importorskip("distributed")
    from distributed.protocol import serialize, deserialize
    from distributed.protocol.cuda import cuda_deserialize
    x = loom.asarray(np.arange(12.0).reshape(3, 4))
    gpu = x._on_gpu
    header, frames = serialize(x, serializers=("cuda", "dask"))
    assert header["serializer"] == ("cuda" if gpu else "dask")
    _close(deserialize(header, frames, deserializers=("cuda", "dask")), np.arange(12.0).reshape(3, 4))
    if not gpu:  # nothing but "cuda": distributed's error message in place of the frames
        header, frames = serialize(x, serializers=("cuda",))
        assert header["serializer"] == "error" and b"Could not serialize" in bytes(frames[0])
        return
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    cases = [loom.asarray(base), loom.asarray(np.asfortranarray(base)), loom.asarray(base)[:, ::2],
             loom.asarray(np.arange(-5, 5, dtype=np.int8)), loom.asarray(np.float64(3.5)), loom.zeros((0, 3)),
             loom.asarray(base) * 2 + 1]  # the last one pending: evaluated by the serializer
    for a in cases:
        want = loom.asnumpy(a)
        header, frames = serialize(a, serializers=("cuda",))
        assert header["serializer"] == "cuda" and len(frames) == 1
        frame: object = frames[0]
        assert getattr(frame, "__cuda_array_interface__")["shape"] == (want.nbytes,)
        back = deserialize(header, frames, deserializers=("cuda",))
        assert isinstance(back, loom.ndarray) and back._on_gpu and back.dtype == want.dtype
        np.testing.assert_array_equal(loom.asnumpy(back), want)
    if hasattr(loom, "bfloat16"):
        b = loom.asarray(np.arange(6, dtype=np.float32)).astype(loom.bfloat16)
        back = deserialize(*serialize(b, serializers=("cuda",)), deserializers=("cuda",))
        assert back.dtype == b.dtype
        np.testing.assert_array_equal(loom.asnumpy(back).astype(np.float32), np.arange(6, dtype=np.float32))
    cupy = pytest.importorskip("cupy")
    a = loom.asarray(base)
    header, frames = serialize(a, serializers=("cuda",))
    from distributed.protocol.cupy import cuda_deserialize_cupy_ndarray, cuda_serialize_cupy_ndarray
    np.testing.assert_array_equal(cupy.asnumpy(cuda_deserialize_cupy_ndarray(header["sub-header"]
                                                                             if "sub-header" in header else header,
                                                                             frames)), base)
    ch, cf = cuda_serialize_cupy_ndarray(cupy.asarray(base))
    mine = cuda_deserialize.dispatch(loom.ndarray)(ch, cf)
    np.testing.assert_array_equal(loom.asnumpy(mine), base)


# ---- a LocalCluster of 2 worker processes --------------------------------------------------------------
def _kernels():
    import loom
    return loom.stats()["kernels_launched"]


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    # no work stealing: a task runs where its chunks are, so the kernel counts below are the tasks' own
    # (a chunk that moves is copied into aligned memory on arrival when its frame is not: one kernel)
    with dask.config.set({"distributed.scheduler.work-stealing": False}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, memory_limit="6GiB", silence_logs=40)
    c = distributed.Client(cluster)
    c.run(lambda: __import__("loom") and None)
    yield c
    c.close()
    cluster.close()


def _sized_arrays(seed):
    mb = int(os.environ.get("LOOM_DASK_TEST_MB", "2048"))  # issue 18: a 2 GB array in CI (~90 s on 2 cores)
    cols = 2048
    rows = max(64, (mb << 20) // (8 * cols))
    chunk_rows = max(16, rows // 8)
    xn = da.random.RandomState(seed).standard_normal((rows, cols), chunks=(chunk_rows, cols // 2))
    xl = xn.map_blocks(loom.asarray, meta=loom.empty((0, 0)))  # the same values, made on the workers
    return xn, xl


def test_cluster_normalized_reduction_blockwise_rechunk_matmul(client):
    import distributed
    xn, xl = _sized_arrays(7)
    nchunks = xl.npartitions
    norm_n = ((xn - xn.mean(0)) / xn.std(0)).sum(1)
    norm_l = ((xl - xl.mean(0)) / xl.std(0)).sum(1)
    got, want = client.compute([norm_l, norm_n], sync=True)
    assert isinstance(got, loom.ndarray)
    _close(got, want, rtol=1e-9, atol=1e-8)

    # blockwise: one fused kernel per chunk, counted in the workers (the chunks are made first: the
    # copy of a NumPy chunk into loom memory is a kernel of its own)
    xl = xl.persist()
    distributed.wait(xl)
    before = sum(client.run(_kernels).values())
    blocks = (da.exp(-xl * xl) * 2 + xl * 3 - 1).to_delayed().ravel().tolist()
    got = client.compute(blocks, sync=True)  # each block evaluated once, when a worker sends it
    after = sum(client.run(_kernels).values())
    assert after - before == nchunks, (after - before, nchunks)
    want = client.compute((da.exp(-xn * xn) * 2 + xn * 3 - 1).to_delayed().ravel().tolist(), sync=True)
    assert all(isinstance(g, loom.ndarray) for g in got)
    for g, w in zip(got, want):
        _close(g, w)

    got, want = client.compute([xl.rechunk((xl.shape[0] // 3, 700)).sum(0), xn.rechunk((xn.shape[0] // 3, 700)).sum(0)],
                               sync=True)
    _close(got, want, rtol=1e-9, atol=1e-8)
    s = xl[:, :256]
    got = client.compute(s.T @ s, sync=True)
    want = client.compute(xn[:, :256].T @ xn[:, :256], sync=True)
    _close(got, want, rtol=1e-9, atol=1e-7)


def test_cluster_survives_a_killed_worker(client):
    distributed = pytest.importorskip("distributed")
    xn, xl = _sized_arrays(11)
    want = client.compute((da.sin(xn) * xn).sum(0), sync=True)
    slow = xl.map_blocks(_slow_identity, meta=loom.empty((0, 0)))
    fut = client.compute((da.sin(slow) * slow).sum(0))
    time.sleep(1.0)
    pids = client.run(os.getpid)
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)
    got = fut.result(timeout=300)
    _close(got, want, rtol=1e-9, atol=1e-8)
    distributed.wait(fut)


def _slow_identity(b):
    time.sleep(0.2)
    return b


# ---- bench/dask_gpu.py's measurements, on the host ------------------------------------------------------
def _bench_module():
    import importlib.util
    path = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "dask_gpu.py")
    spec = importlib.util.spec_from_file_location("dask_gpu_bench", path)
    assert spec is not None and spec.loader is not None, path
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_chunk_timing_and_summary(capsys):
    """The bench's per-chunk timing (one at a time, and back to back: whether the calls wait for the device)
    runs every workload's chunk steps on loom and NumPy chunks, and its summary prints the issue's figures
    (end to end, ratio, GB/s, kernels per chunk) for each size and setting."""
    b = _bench_module()
    x = np.random.default_rng(3).standard_normal((512, 256))
    for chunk in (x, loom.asarray(x)):
        t = b._time_chunk(chunk, 3)
        assert set(t) == {"normalized", "blockwise", "compute", "rechunk"}
        for v in t.values():
            assert set(v) == {"call_s", "done_s", "pipe_call_s", "pipe_done_s"}
            assert all(np.isfinite(s) and s >= 0 for s in v.values())
            assert v["pipe_call_s"] <= v["pipe_done_s"] and v["call_s"] <= v["done_s"]
    w = {"match": True, "numpy_s": 2.0, "loom_s": 1.0, "loom_vs_numpy": 2.0, "numpy_GBps": 0.5, "loom_GBps": 1.0,
         "tasks_per_chunk": 1.03, "loom_kernels_per_chunk": 2.5,
         "chunk": {"loom": {"pipe_call_s": 0.001, "pipe_done_s": 0.004}}}
    out = {"gb": 1, "gpus": 0, "sizes": [{"chunk_mb": 64, "chunks": 16, "dask_config": {"split_every": "{0: 32, 1: 32}"},
                                          "workloads": {"blockwise": w, "compute": dict(w, match=False)}}]}
    b._summary(out, "numpy")
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert "target loom/numpy >= 1.5" in lines[0] and "GB/s" in lines[1] and "kern/ch" in lines[1]
    row = lines[2].split()
    assert row[:2] == ["64", "16"] and "blockwise" in row and "2.00" in row and "2.50" in row and row[-1] == "1.00/4.00"
    assert lines[3].endswith("MISMATCH") and not lines[2].endswith("MISMATCH")


def test_bench_budget_from_environment(monkeypatch):
    b = _bench_module()
    monkeypatch.delenv("LOOM_DASK_BENCH_BUDGET_S", raising=False)
    assert b._budget() is None
    monkeypatch.setenv("LOOM_DASK_BENCH_BUDGET_S", "140")
    assert b._budget() == 140.0
