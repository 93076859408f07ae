"""loom.aot: bundles made from @loom.fuse functions, ElementwiseKernels and ReductionKernels, loaded in a
fresh interpreter (so no kernel is in memory already): results equal NumPy's, nothing compiles, jit=False
refuses what the bundle lacks; python -m loom.aot; the errors of bad signatures and bad bundles."""
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import loom
import loom.aot

KERNELS = textwrap.dedent('''
    import loom, loom.aot

    @loom.fuse(kernel_name="axpb")
    def axpb(x, y):
        return 2.5 * x + y

    @loom.fuse
    def softmax(x):
        e = loom.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    @loom.fuse
    def center(x):
        return x - x.mean()

    maxish = loom.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x > y ? x : y * 2", "maxish")
    l2 = loom.ReductionKernel("float64 x", "float64 y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")

    LOOM_AOT = {
        axpb: [(("float32", 1), ("float32", 1)), (("float64", 2, "F"), ("float64", 2, "F"))],
        softmax: [(("float32", 2),)],
        center: [(("float64", 1),)],
        maxish: [(("float32", 1), ("float32", 1))],
        l2: [loom.aot.Call(("float64", 2), axis=1)],
    }
''')

USE = textwrap.dedent('''
    import json, sys
    import numpy as np
    import loom
    loom.load_bundle(sys.argv[1], jit=False)
    import kernels as k
    rng = np.random.default_rng(5)
    out = {}
    x, y = rng.random(100003, dtype=np.float32), rng.random(100003, dtype=np.float32)
    r = k.axpb(x, y)
    t = (np.float32(2.5) * x).astype(np.float32)
    out["axpb_exact"] = bool(np.array_equal(r, t + y))
    X, Y = np.asfortranarray(rng.random((31, 47))), np.asfortranarray(rng.random((31, 47)))
    out["axpb_f_err"] = float(np.abs(k.axpb(X, Y) - (2.5 * X + Y)).max())
    S = (rng.random((37, 1001)) * 20 - 10).astype(np.float32)
    ref = np.exp(S.astype(np.float64) - S.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    out["softmax_rel"] = float((np.abs(k.softmax(S) - ref) / ref).max())
    v = rng.random(300001)
    out["center_err"] = float(np.abs(k.center(v) - (v - v.mean())).max())
    out["maxish_exact"] = bool(np.array_equal(k.maxish(x, y), np.where(x > y, x, y * np.float32(2))))
    D = rng.random((13, 999))
    out["l2_err"] = float(np.abs(k.l2(D, axis=1) - np.sqrt((D * D).sum(1))).max())
    out["stats"] = loom.stats()
    out["bundle"] = loom.aot.bundle_stats()
    try:
        k.axpb(x.astype(np.float64), y.astype(np.float64))  # not bundled: float64 1-d
        out["unbundled"] = "ran"
    except NotImplementedError as e:
        out["unbundled"] = str(e)
    loom.aot.set_jit(True)
    out["jit_back"] = float(np.abs(k.axpb(x.astype(np.float64), y.astype(np.float64)) - (2.5 * x + y)).max())
    out["compiled_after"] = loom.stats()["kernels_compiled"]
    print(json.dumps(out))
''')


def _run(args, cwd, **env):
    env = dict(os.environ, PYTHONPATH=str(cwd), **env)
    return subprocess.run([sys.executable] + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    d = tmp_path_factory.mktemp("aot")
    (d / "kernels.py").write_text(KERNELS)
    r = _run(["-m", "loom.aot", "kernels.py", "-o", "k.lbun", "-t", "host-all", "-j", "2", "--emit-c", "kgen"], d)
    assert r.returncode == 0, r.stderr
    return d


def test_cli_outputs(bundle):
    assert (bundle / "k.lbun").stat().st_size > 1000
    h = (bundle / "kgen.h").read_text()
    # the scalar 2.5 of axpb is a parameter of the kernel: the typed function takes it by value (p0)
    assert ("LoomStatus axpb_f32_f32(LoomrtStream *stream, const float *in0, const float *in1, float *out0, float p0, "
            "int64_t n0);") in h
    assert "extern const LoomrtEmbedded kgen_bundle;" in h
    text = loom.aot.describe(bundle / "k.lbun")
    for name in ("axpb_f32_f32", "axpb_f64r2F_f64r2F", "softmax", "center", "maxish", "l2norm",
                 "all checksums correct", "host-avx512"):
        assert name in text, name


@pytest.mark.parametrize("level", ["1", "3", "4"])
def test_load_in_fresh_process(bundle, level):
    (bundle / "use.py").write_text(USE)
    import json
    r = _run(["use.py", "k.lbun"], bundle, LOOM_AOT_HOST_LEVEL=level)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["axpb_exact"] and out["maxish_exact"]
    assert out["axpb_f_err"] < 1e-15
    assert out["softmax_rel"] < 2e-5
    assert out["center_err"] < 1e-14  # the mean's summation order is not NumPy's
    assert out["l2_err"] < 1e-13
    assert out["stats"]["kernels_compiled"] == 0, out["stats"]
    assert out["bundle"] == {"bundles": 1, "kernels_used": 6}, out["bundle"]
    assert "is not in the loaded bundles" in out["unbundled"], out["unbundled"]
    assert out["jit_back"] < 1e-6 and out["compiled_after"] == 1


def test_cli_errors(tmp_path):
    (tmp_path / "none.py").write_text("x = 1\n")
    r = _run(["-m", "loom.aot", "none.py", "-o", "x.lbun"], tmp_path)
    assert r.returncode == 2 and "defines no LOOM_AOT" in r.stderr
    (tmp_path / "bad.py").write_text(KERNELS.replace('"host-all"', '"x"'))
    r = _run(["-m", "loom.aot", "bad.py", "-o", "x.lbun", "-t", "host,quantum"], tmp_path)
    assert r.returncode == 1 and "bundle target 'quantum' is unknown" in r.stderr


def test_compile_errors(tmp_path):
    @loom.fuse
    def f(x):
        return x * 2

    with pytest.raises(TypeError, match="signature argument"):
        loom.aot.compile(f, [("float32",)], path=tmp_path / "a.lbun")
    with pytest.raises(ValueError, match="no signatures for"):
        loom.aot.compile([f], {}, path=tmp_path / "a.lbun")
    with pytest.raises(ValueError, match="ndim must be"):
        loom.aot.Array("float32", 99)

    @loom.fuse
    def needs_two(x, y):
        return x + y

    with pytest.raises(TypeError, match="calling needs_two with signature"):
        loom.aot.compile(needs_two, [(("float32", 1),)], path=tmp_path / "b.lbun")

    @loom.fuse
    def scalar_only(x):
        return x.shape[0]

    with pytest.raises(ValueError, match="no kernel ran on the host"):
        loom.aot.compile(scalar_only, [(("float32", 1),)], path=tmp_path / "c.lbun")
    with pytest.raises(ValueError, match="is not a C identifier"):
        loom.aot.compile(f, [(("float32", 1),)], path=tmp_path / "d.lbun", names={f: "has space"})


def test_bad_bundles(tmp_path):
    @loom.fuse
    def g(x):
        return x + 1

    p = tmp_path / "g.lbun"
    loom.aot.compile(g, [(("int32", 1),)], targets="host", path=p)
    data = p.read_bytes()
    (tmp_path / "cut.lbun").write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match="truncated"):
        loom.load_bundle(tmp_path / "cut.lbun")
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0x10
    (tmp_path / "flip.lbun").write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="corrupted"):
        loom.load_bundle(tmp_path / "flip.lbun")
    with pytest.raises(ValueError, match="cannot open bundle"):
        loom.load_bundle(tmp_path / "missing.lbun")
    assert loom.aot.bundle_stats()["bundles"] == 0


def test_layouts_and_scalars(tmp_path):
    """Every layout class makes its own kernel; scalars are kernel parameters (test_scalar_params.py)."""
    @loom.fuse
    def h(x, a):
        return x * a

    sigs = [(loom.aot.Array("float32", 2, layout), 3.0) for layout in ("C", "F", "strided", "broadcast")]
    p = loom.aot.compile(h, sigs, targets="host", path=tmp_path / "h.lbun", index_widths=32)
    text = loom.aot.describe(p)
    for tag in ("h_f32r2\n", "h_f32r2F", "h_f32r2s", "h_f32r2b"):
        assert tag in text, (tag, text)


GPU = loom.cuda.is_available() and not loom.cuda.runtime.is_hip  # NVIDIA (AMD: test_amd_gpu_bundle)


def _ptxas():
    for d in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if d and os.access(os.path.join(d, "bin", "ptxas"), os.X_OK):
            return True
    return shutil.which("ptxas") is not None


GPU_USE = textwrap.dedent('''
    import json, sys
    import numpy as np
    import loom
    loom.load_bundle(sys.argv[1], jit=False)
    import kernels as k
    rng = np.random.default_rng(3)
    x, y = rng.random(1 << 20, dtype=np.float32), rng.random(1 << 20, dtype=np.float32)
    gx, gy = loom.asarray(x), loom.asarray(y)
    out = {"device": list(gx._device)}
    r = k.axpb(gx, gy).get()
    out["axpb_exact"] = bool(np.array_equal(r, (np.float32(2.5) * x).astype(np.float32) + y))
    S = (rng.random((64, 4000)) * 10).astype(np.float32)
    ref = np.exp(S.astype(np.float64) - S.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    out["softmax_rel"] = float((np.abs(k.softmax(loom.asarray(S)).get() - ref) / ref).max())
    out["compiled"] = loom.stats()["kernels_compiled"]
    try:
        k.axpb(loom.asarray(x.astype(np.float64)), loom.asarray(y.astype(np.float64))).get()
        out["unbundled"] = "ran"
    except NotImplementedError as e:
        out["unbundled"] = str(e)
    print(json.dumps(out))
''')


@pytest.mark.skipif(not GPU, reason="no CUDA device visible to loom")
def test_gpu_bundle(tmp_path):
    """A bundle's cubin (with ptxas at build time) or PTX runs @loom.fuse calls on the GPU: 0 compiles."""
    cc = int(loom.cuda.Device(0).compute_capability)
    targets = f"host,sm_{cc},ptx" if _ptxas() else f"host,ptx_sm_{min(cc, 90)}"
    (tmp_path / "kernels.py").write_text(KERNELS)
    r = _run(["-m", "loom.aot", "kernels.py", "-o", "g.lbun", "-t", targets, "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    (tmp_path / "use.py").write_text(GPU_USE)
    import json
    r = _run(["use.py", "g.lbun"], tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["device"] == [1, 0], out
    assert out["axpb_exact"] and out["softmax_rel"] < 2e-5, out
    assert out["compiled"] == 0, out
    assert "is not in the loaded bundles" in out["unbundled"], out


AMD_GPU = loom.cuda._gpu_count() > 0 and loom.cuda.runtime.is_hip


def test_amd_code_objects_in_a_bundle(tmp_path):
    """gfx targets: python -m loom.aot bundles an AMD code object per kernel and chip (no GPU needed);
    the description lists them and every checksum holds."""
    (tmp_path / "kernels.py").write_text(KERNELS)
    r = _run(["-m", "loom.aot", "kernels.py", "-o", "a.lbun", "-t", "host,gfx942,gfx1100", "-j", "2", "-q"], tmp_path)
    missing = [line for line in r.stderr.splitlines()
               if "ROCm device libraries (ocml.bc) not found" in line or "and no ld.lld found" in line]
    if r.returncode != 0 and missing:  # a machine without ROCm (the H200 image): nothing to build AMD code with
        pytest.skip(missing[0].strip())
    assert r.returncode == 0, r.stderr
    text = loom.aot.describe(tmp_path / "a.lbun")
    for name in ("gfx942", "gfx1100", "AMDGPU code object", "all checksums correct", "softmax", "l2norm"):
        assert name in text, (name, text)


@pytest.mark.skipif(not AMD_GPU, reason="no AMD GPU visible to loom (scripts/amd_all.sh)")
def test_amd_gpu_bundle(tmp_path):
    """A bundle's code object for the device's gfx runs @loom.fuse calls on the AMD GPU: 0 compiles."""
    gfx = "gfx" + loom.cuda.Device(0).compute_capability
    (tmp_path / "kernels.py").write_text(KERNELS)
    r = _run(["-m", "loom.aot", "kernels.py", "-o", "a.lbun", "-t", f"host,{gfx}", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    (tmp_path / "use.py").write_text(GPU_USE)
    import json
    r = _run(["use.py", "a.lbun"], tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["device"] == [2, 0], out
    assert out["axpb_exact"] and out["softmax_rel"] < 2e-5, out
    assert out["compiled"] == 0, out
    assert "is not in the loaded bundles" in out["unbundled"], out
