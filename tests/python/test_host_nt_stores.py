"""Streaming (non-temporal) stores of large host elementwise outputs (codegen/lower_host_stream.c): run()
computes a chunk of points into a stack buffer and copies it to the output with 64-byte non-temporal
stores when the launch's output bytes reach LOOM_HOST_NT_STORES' threshold. The same kernels run in
child processes with the threshold at 64 bytes (nearly every output streams) and with the knob off; their
results must have the same bits and equal NumPy's: sizes that are not a multiple of the vector or the
line, offset views, 2-d / 3-d broadcasts, strided operands, several outputs, dtypes of 1 to 16 bytes,
tasks that start mid-chunk, empty and 0-d arrays, in place updates. The IR test: the nontemporal store
and its threshold appear in run() of an eligible kernel, not with the knob off nor in a kernel that calls
exp."""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ON_GPU

host = pytest.mark.skipif(ON_GPU, reason="host code generation (the default device is a GPU)")

CHILD = r'''
import sys
import numpy as np
import loom

out = {}
r = np.random.default_rng(7)

def put(name, got, want):
    got = loom.asnumpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, got.shape)
    if want.dtype.kind == "f" or want.dtype.kind == "c":
        np.testing.assert_allclose(got, want, rtol=2e-6 if want.dtype.itemsize <= 8 else 1e-14, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)
    out[name] = got

for n in (0, 1, 15, 17, 63, 64, 65, 1000, 4095, 4097, 33333, 100003):
    x = r.standard_normal(n).astype(np.float32)
    put(f"lin{n}", loom.asarray(x) * np.float32(2) + np.float32(1), x * np.float32(2) + np.float32(1))
big = r.standard_normal(70001).astype(np.float32)
g = loom.asarray(big)
for off in (1, 3, 5, 16):                               # offset views as inputs and as outputs
    n = 50000 + off
    put(f"view_in{off}", g[off:off + n] * np.float32(3), big[off:off + n] * np.float32(3))
    o = loom.zeros(n + 40, np.float32)
    loom.multiply(g[:n], np.float32(3), out=o[off:off + n])
    want = np.zeros(n + 40, np.float32)
    want[off:off + n] = big[:n] * np.float32(3)
    put(f"view_out{off}", o, want)
for shape in ((13, 1030), (41, 1500), (3, 7, 999)):     # broadcasts
    x = r.standard_normal(shape).astype(np.float32)
    b = r.standard_normal(shape[-1]).astype(np.float32)
    put(f"bias{shape}", loom.asarray(x) + loom.asarray(b), x + b)
x = r.standard_normal((300, 514)).astype(np.float32)     # strided operands (rope-like)
gx = loom.asarray(x)
put("rope", gx[:, ::2] * np.float32(0.5) - gx[:, 1::2] * np.float32(0.25), x[:, ::2] * np.float32(0.5) - x[:, 1::2] * np.float32(0.25))
put("transposed", loom.asarray(x[:, :300]).T + loom.asarray(x[:, 1:301]), x[:, :300].T + x[:, 1:301])
for dt in ("float64", "float16", "int8", "uint16", "complex64", "complex128"):
    x = (r.standard_normal(9001) * 20).astype(dt)
    put(f"dt_{dt}", loom.asarray(x) + loom.asarray(x), x + x)
put("bool", loom.asarray(big) > 0, big > 0)

@loom.fuse
def three(a, b):
    return a + b, a * b, (a - b).astype(np.float64)

a, b = r.standard_normal(20011).astype(np.float32), r.standard_normal(20011).astype(np.float32)
for i, (got, want) in enumerate(zip(three(loom.asarray(a), loom.asarray(b)), (a + b, a * b, (a - b).astype(np.float64)))):
    put(f"multi{i}", got, want)
old = loom.config.num_threads
for t in (2, 3, 5):                                     # tasks that start and end mid-chunk
    loom.config.num_threads = t
    x = r.standard_normal(123457).astype(np.float32)
    put(f"threads{t}", loom.asarray(x) * np.float32(1.5), x * np.float32(1.5))
loom.config.num_threads = old
put("zero_d", loom.asarray(np.float32(3)) * np.float32(2), np.float32(3) * np.float32(2))
put("empty2d", loom.asarray(np.zeros((0, 5), np.float32)) + 1, np.zeros((0, 5), np.float32) + 1)
y = r.standard_normal(40000).astype(np.float32)          # in place: the output is an operand
gy = loom.asarray(y)
gy += loom.asarray(big[:40000])
put("inplace", gy, y + big[:40000])
np.savez(sys.argv[1], **{k: v for k, v in out.items()})
'''


def run_child(tmp_path, tag, knob):
    env = dict(os.environ, LOOM_HOST_NT_STORES=str(knob), LOOM_CACHE_DIR=str(tmp_path / f"cache-{tag}"))
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    dest = tmp_path / f"{tag}.npz"
    subprocess.run([sys.executable, str(script), str(dest)], check=True, env=env, timeout=600)
    return np.load(dest)


@host
def test_streamed_outputs_have_the_bits_of_ordinary_stores(tmp_path):
    streamed = run_child(tmp_path, "nt", 64)
    plain = run_child(tmp_path, "plain", 0)
    assert sorted(streamed.files) == sorted(plain.files)
    for name in streamed.files:
        s, p = streamed[name], plain[name]
        assert s.dtype == p.dtype and s.shape == p.shape, name
        assert s.tobytes() == p.tobytes(), name


IR_CHILD = r'''
import numpy as np
import loom
x = loom.asarray(np.ones(1000, np.float32))
big = loom.inspect(x * np.float32(3) + np.float32(1), what=("llvm",))["llvm"]
transcendental = loom.inspect(loom.exp(x) * np.float32(2), what=("llvm",))["llvm"]
print("NT" if "!nontemporal" in big else "no-NT")
try:  # the default threshold: 3/4 of the L3 as sysfs gives it (lscpu's figure), else 24 MiB
    with open("/sys/devices/system/cpu/cpu0/cache/index3/size") as f:
        kb = int(f.read().strip().rstrip("K"))
    t = kb * 1024 // 4 * 3 if 1024 <= kb <= 2**30 else 24 << 20
except (OSError, ValueError):
    t = 24 << 20
print("THRESHOLD" if (str(t - 1) in big or str(t) in big) else "no-threshold")
print("SFENCE" if "llvm.x86.sse.sfence" in big else "no-sfence")
print("NT" if "!nontemporal" in transcendental else "no-NT")
'''


@host
@pytest.mark.skipif(os.uname().machine not in ("x86_64", "AMD64"), reason="streaming stores are x86 only")
def test_ir_has_the_streamed_copy_behind_the_threshold(tmp_path):
    def ir(knob):
        env = dict(os.environ, LOOM_CACHE_DIR=str(tmp_path / f"c{knob}"))
        env.pop("LOOM_HOST_NT_STORES", None)
        if knob is not None:
            env["LOOM_HOST_NT_STORES"] = knob
        return subprocess.run([sys.executable, "-c", IR_CHILD], check=True, env=env, capture_output=True,
                              text=True, timeout=300).stdout.split()
    # default: the streamed copy is there, guarded by the launch bytes >= 3/4 of the L3 (the run-time choice)
    # (a kernel that calls exp keeps ordinary stores: compute-bound, lower_host_stream.c)
    assert ir(None) == ["NT", "THRESHOLD", "SFENCE", "no-NT"]
    assert ir("0") == ["no-NT", "no-threshold", "no-sfence", "no-NT"]
