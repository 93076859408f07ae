"""loom.aot, bundle format 1.2: @loom.fuse signatures served without tracing. A bundle made by
`python -m loom.aot` is loaded in a fresh interpreter; a spy on Fusion._trace records which calls traced
(the trace runs the Python function, the rebuild does not). Results are compared with NumPy (float64 where
the function is float); edge cases: new sizes of every kind, empty arrays, NaN, broadcasting and strided
views (jit on), scalar arguments of other values (weak NEP 50 conversions, a Python int out of range), in-place
updates, tuple results; graphs that depend on the sizes warn at compile time and trace at run time; an edited
function (another identity) traces, and so does one that reads a global dict; FUSE sections that lie with correct checksums are refused; a 1.1 bundle
still loads."""
import json
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import loom
import loom.aot

KERNELS = textwrap.dedent('''
    import loom

    @loom.fuse(kernel_name="axpb")
    def axpb(x, y):
        return 2.5 * x + y

    @loom.fuse
    def scaled(x, a):
        return a * x + 1

    @loom.fuse
    def lerp(x, y, a, b, flip):
        return loom.where(flip, a * y + b * x, a * x + b * y)

    @loom.fuse
    def shift(x, n):
        return x + n

    @loom.fuse
    def norm(x, y):
        return loom.sqrt(((x - y) ** 2).sum(-1)) / (1 + abs(x).max(-1))

    @loom.fuse
    def softmax(x):
        e = loom.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    @loom.fuse
    def both(x, y):
        x += y
        return x * 2, (x * y).sum()

    @loom.fuse
    def ratio(x, y):
        return x / y, x // y

    @loom.fuse
    def center_rows(x):
        return (x - x.mean(axis=1)[:, None])[None, ::-1]

    @loom.fuse
    def flat(x):
        return x.reshape(-1) * 2

    LOOM_AOT = {
        axpb: [(("float32", 1), ("float32", 1))],
        ratio: [(("int32", 1), ("int32", 1))],
        center_rows: [(("float64", 2),)],
        scaled: [(("float64", 2), 0.5)],
        shift: [(("int8", 1), 3)],
        lerp: [(("float32", 1), ("float32", 1), 0.5, 0.25, False)],
        norm: [(("float32", 2), ("float32", 2))],
        softmax: [(("float32", 2),)],
        both: [(("float64", 1), ("float64", 1))],
        flat: [(("float32", 2),)],
    }
''')

# the same names, one body edited: another identity, so its calls trace (and compute the edited body)
EDITED = KERNELS.replace("return 2.5 * x + y", "return 3.5 * x + y")

USE = textwrap.dedent('''
    import json, sys
    import numpy as np
    import loom
    from loom._fuse import Fusion
    CALLS = []  # which calls traced: the trace runs the Python function, the rebuild does not
    _trace = Fusion._trace
    def _spy(self, args, arrays):
        CALLS.append(self.name)
        return _trace(self, args, arrays)
    Fusion._trace = _spy
    loom.load_bundle(sys.argv[1], jit=False)
    import kernels as k
    rng = np.random.default_rng(11)
    out = {"err": {}}
    def err(name, got, ref, scale=None):  # relative to each reference value, or to scale (a cancelling sum)
        got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
        assert got.shape == ref.shape, (name, got.shape, ref.shape)
        bad = ~np.isclose(got, ref, rtol=0, atol=0, equal_nan=True)
        den = np.abs(ref[bad]) if scale is None else scale
        e = float(np.max(np.abs(got - ref)[bad] / np.maximum(den, 1e-300))) if bad.any() else 0.0
        out["err"][name] = max(out["err"].get(name, 0.0), e)
    for n in (7, 1000, 100003, 0):
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        out["axpb_exact_%d" % n] = bool(np.array_equal(k.axpb(x, y), np.float32(2.5) * x + y))
    for n in (5, 777):
        a = rng.integers(-50, 50, n).astype(np.int32)
        b = rng.integers(-3, 4, n).astype(np.int32)
        a[0], b[0], b[1] = 0, 0, 0  # 0 / 0 and a / 0
        q, f = k.ratio(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["ratio_exact_%d" % n] = bool(np.array_equal(q, a / b, equal_nan=True) and np.array_equal(f, a // b)
                                             and q.dtype == np.float64 and f.dtype == np.int32)
    for shape in ((3, 5), (64, 33), (1000, 7)):
        X = rng.random(shape) * 4 - 2
        for a in (0.5, -3.25, 1e300):
            with np.errstate(over="ignore"):
                err("scaled", k.scaled(X, a), a * X + 1)
        err("center_rows", k.center_rows(X), (X - X.mean(axis=1)[:, None])[None, ::-1], np.abs(X).max())
        Xf, Yf = rng.random(shape, dtype=np.float32), rng.random(shape, dtype=np.float32)
        X64, Y64 = Xf.astype(np.float64), Yf.astype(np.float64)
        err("norm", k.norm(Xf, Yf), np.sqrt(((X64 - Y64) ** 2).sum(-1)) / (1 + np.abs(X64).max(-1)))
        Xf[0, 1] = np.nan
        ref = np.exp(Xf.astype(np.float64) - Xf.max(axis=1, keepdims=True))
        err("softmax", k.softmax(Xf), ref / ref.sum(axis=1, keepdims=True))
    for n in (6, 3001):
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        for a, b, flip in ((0.5, 0.25, False), (-2.0, 3.0, True), (1e-3, 7.0, False)):
            r = k.lerp(x, y, a, b, flip)
            u, v = (y, x) if flip else (x, y)
            out["lerp_exact"] = out.get("lerp_exact", True) and r.dtype == np.float32 and bool(
                np.array_equal(r, np.float32(a) * u + np.float32(b) * v))
    i8 = np.arange(-60, 60, dtype=np.int8)
    out["shift_exact"] = all(np.array_equal(k.shift(i8, m), i8 + np.int8(m)) and k.shift(i8, m).dtype == np.int8
                             for m in (3, -7, 100, 127))
    for n in (9, 4097):
        x, y = rng.random(n), rng.random(n)
        x0 = x.copy()
        r2, s = k.both(x, y)
        err("both_inplace", x, x0 + y)
        err("both_r", r2, (x0 + y) * 2)
        err("both_s", s, ((x0 + y) * y).sum())
    out["calls_bundled"] = list(CALLS)
    out["compiled"] = loom.stats()["kernels_compiled"]
    try:
        k.shift(i8, 300)
        out["overflow"] = "no error"
    except Exception as e:  # the rebuild does not fit: the trace reports NumPy's error
        out["overflow"] = type(e).__name__ + ": " + str(e)
    F = rng.random((5, 8), dtype=np.float32)
    out["flat_exact"] = bool(np.array_equal(k.flat(F), F.reshape(-1) * np.float32(2)))
    out["calls_after"] = list(CALLS)
    del CALLS[:]
    loom.aot.set_jit(True)  # other layouts: other kernels, compiled; the graph is still rebuilt, not traced
    A, B = rng.random((6, 7), dtype=np.float32), rng.random((1, 7), dtype=np.float32)
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    err("norm_broadcast", k.norm(A, B), np.sqrt(((A64 - B64) ** 2).sum(-1)) / (1 + np.abs(A64).max(-1)))
    W = rng.random((9, 20), dtype=np.float32)[:, ::2]
    W64 = W.astype(np.float64)
    ref = np.exp(W64 - W64.max(axis=1, keepdims=True))
    err("softmax_strided", k.softmax(W), ref / ref.sum(axis=1, keepdims=True))
    try:
        k.norm(rng.random((3, 4), dtype=np.float32), rng.random((3, 5), dtype=np.float32))
        out["mismatch"] = "no error"
    except Exception as e:
        out["mismatch"] = type(e).__name__ + ": " + str(e)
    out["calls_jit"] = list(CALLS)
    import kernels2
    v, w = rng.random(50, dtype=np.float32), rng.random(50, dtype=np.float32)
    out["edited_exact"] = bool(np.array_equal(kernels2.axpb(v, w), np.float32(3.5) * v + w))
    out["edited_calls"] = list(CALLS[len(out["calls_jit"]):])
    print(json.dumps(out))
''')


def _run(args, cwd, **env):
    env = dict(os.environ, PYTHONPATH=str(cwd), **env)
    return subprocess.run([sys.executable] + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    d = tmp_path_factory.mktemp("aotfuse")
    (d / "kernels.py").write_text(KERNELS)
    (d / "kernels2.py").write_text(EDITED.replace("import loom\n", "import loom\n", 1))
    r = _run(["-W", "always", "-m", "loom.aot", "kernels.py", "-o", "k.lbun", "-t", "host", "-j", "2"], d)
    assert r.returncode == 0, r.stderr
    assert "FuseTraceWarning" in r.stderr and "flat" in r.stderr and "reshape" in r.stderr, r.stderr
    return d


def test_bundled_calls_do_not_trace(bundle):
    (bundle / "use.py").write_text(USE)
    r = _run(["use.py", "k.lbun"], bundle)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    for n in (7, 1000, 100003, 0):
        assert out[f"axpb_exact_{n}"], n
    assert out["shift_exact"] and out["lerp_exact"]
    assert out["ratio_exact_5"] and out["ratio_exact_777"], out
    tol = {"center_rows": 2e-15, "scaled": 4e-16, "norm": 1e-6, "softmax": 3e-6, "both_inplace": 0, "both_r": 0, "both_s": 1e-13,
           "norm_broadcast": 1e-6, "softmax_strided": 3e-6}
    for name, e in out["err"].items():
        assert e <= tol[name], (name, e)
    assert set(out["err"]) == set(tol)
    assert out["calls_bundled"] == [], out["calls_bundled"]  # no call above ran the Python function
    assert out["compiled"] == 0
    assert "out of bounds for int8" in out["overflow"] and out["overflow"].startswith("OverflowError"), out["overflow"]
    assert out["flat_exact"]
    assert out["calls_after"] == ["shift", "flat"], out["calls_after"]  # the failed rebuild and the sized graph trace
    assert out["calls_jit"] == ["norm"], out["calls_jit"]  # only the call whose sizes do not broadcast traced
    assert "broadcast" in out["mismatch"], out["mismatch"]
    assert out["edited_exact"] and out["edited_calls"] == ["axpb"], out


def _crc32c(data):
    table = _crc32c.table  # type: ignore[attr-defined]
    if table is None:
        table = _crc32c.table = [0] * 256  # type: ignore[attr-defined]
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table[i] = c
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


_crc32c.table = None  # type: ignore[attr-defined]


def _sections(data):
    toff, n = struct.unpack_from("<QI", data, 24)
    return toff, [struct.unpack_from("<IIQQI", data, toff + 32 * i) + (i,) for i in range(n)]


def _refresh_crcs(buf):
    """Recomputes the section CRCs (but the blobs'), the table's and the header's."""
    toff, secs = _sections(buf)
    for kind, flags, off, size, _, i in secs:
        if not flags & 1:
            struct.pack_into("<I", buf, toff + 32 * i + 24, _crc32c(buf[off:off + size]))
    struct.pack_into("<I", buf, 36, _crc32c(buf[toff:toff + 32 * len(secs)]))
    struct.pack_into("<I", buf, 60, _crc32c(buf[:60]))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("aotfuse_small")

    @loom.fuse
    def g(x, a):
        return a * x + 1

    p = d / "g.lbun"
    loom.aot.compile(g, [(("float32", 1), 2.0)], targets="host", path=p, index_widths=32)
    return p.read_bytes()


def test_format_1_2_fuse_section(small, tmp_path):
    data = small
    assert struct.unpack_from("<HH", data, 8) == (1, 2)
    _, secs = _sections(data)
    fuse = [s for s in secs if s[0] == 9]
    assert len(fuse) == 1
    _, _, off, size, _, _ = fuse[0]
    nrec, narg, nnode, nref, nstr = struct.unpack_from("<5I", data, off)
    assert (nrec, narg) == (1, 2) and nnode >= 4 and nref == 1
    node0 = off + 32 + 48 * nrec + 4 * narg
    cases = {
        "kind": (node0, 0x7F, "kind 127"),
        "source": (node0 + 64 * 2 + 8, 0x40, "source"),
        "bind": (node0 + 20, 0x05, "input of argument"),
        "reserved": (off + 24, 0x01, "reserved header byte"),
        "hash": (off + 32 + 40, 0x01, "does not match its hash"),
        "count": (off + 8, 0x01, "do not add up"),
    }
    for name, (at, bits, msg) in cases.items():
        buf = bytearray(data)
        buf[at] ^= bits
        _refresh_crcs(buf)
        p = tmp_path / f"{name}.lbun"
        p.write_bytes(bytes(buf))
        with pytest.raises(ValueError, match="section FUSE") as e:
            loom.load_bundle(p)
        assert msg in str(e.value), (name, str(e.value))
    buf = bytearray(data)
    buf[off + 40] ^= 0x08  # inside the section, CRC not refreshed
    (tmp_path / "crc.lbun").write_bytes(bytes(buf))
    with pytest.raises(ValueError, match="section FUSE checksum mismatch"):
        loom.load_bundle(tmp_path / "crc.lbun")
    assert loom.aot.bundle_stats()["bundles"] == 0


def test_older_bundles_load(tmp_path):
    @loom.fuse
    def h(x):
        return x * 3

    p = tmp_path / "h.lbun"
    loom.aot.compile(h, [(("int64", 1),)], targets="host", path=p, fuse_records=False)
    buf = bytearray(p.read_bytes())
    assert all(s[0] != 9 for s in _sections(buf)[1])
    struct.pack_into("<H", buf, 10, 1)  # what format 1.1 wrote: the same sections
    _refresh_crcs(buf)
    old = tmp_path / "old.lbun"
    old.write_bytes(bytes(buf))
    text = loom.aot.describe(old)
    assert "all checksums correct" in text


PARAMS = {"scale": 2.0}  # a global whose value may change after a bundle is made


def test_compile_warns_for_sized_graphs(tmp_path):
    @loom.fuse
    def centered(x):
        return x - x.sum() / x.size  # 1/n of this size is a constant of the graph

    @loom.fuse
    def picks(x):
        return x[1:] * 2

    with pytest.warns(loom.aot.FuseTraceWarning, match="computed from the sizes"):
        loom.aot.compile(centered, [(("float64", 1),)], targets="host", path=tmp_path / "c.lbun", index_widths=64)
    with pytest.warns(loom.aot.FuseTraceWarning, match="slice"):
        loom.aot.compile(picks, [(("float64", 1),)], targets="host", path=tmp_path / "p.lbun", index_widths=64)

    @loom.fuse
    def by_global(x):
        return x * PARAMS["scale"]

    with pytest.warns(loom.aot.FuseTraceWarning, match="the global 'PARAMS' .a dict., which may change"):
        loom.aot.compile(by_global, [(("float64", 1),)], targets="host", path=tmp_path / "g.lbun", index_widths=64)
    assert loom._fuse.aot_identity(by_global) is None
    SCALE = 3.0

    @loom.fuse
    def by_cell(x):
        return x * SCALE  # a closure's float: part of the identity

    a = loom._fuse.aot_identity(by_cell)
    assert a and a.startswith(__name__ + ":")
