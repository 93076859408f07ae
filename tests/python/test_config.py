# SPDX-License-Identifier: Apache-2.0
"""Settings and inspection from Python (loom.config, show_config, config_info), docstrings and the
namespace of the public surface (issue 17)."""
import inspect
import io
import os
import pathlib
import subprocess
import sys
import time
import types
import warnings

import numpy as np
import pytest

import loom


def test_every_public_function_and_ndarray_member_has_a_docstring():
    missing = [n for n in dir(loom) if not n.startswith("_") and callable(getattr(loom, n))
               and not isinstance(getattr(loom, n), type) and not (getattr(loom, n).__doc__ or "").strip()]
    assert missing == [], f"public functions without a docstring: {missing}"
    members = [n for n, v in vars(loom.ndarray).items() if not n.startswith("_")
               and (callable(v) or isinstance(v, property)) and not (v.__doc__ or "").strip()]
    assert members == [], f"ndarray members without a docstring: {members}"


def test_no_standard_library_module_in_the_namespace():
    mods = {n: v.__name__ for n, v in vars(loom).items() if isinstance(v, types.ModuleType) and not n.startswith("_")}
    assert all(name.startswith("loom.") for name in mods.values()), mods  # loom's own submodules only


def test_py_typed_is_installed():
    assert (pathlib.Path(loom.__file__).parent / "py.typed").is_file()


def test_config_info_facts():
    i = loom.config_info()
    assert i["version"] == loom.__version__
    assert i["host_target"].startswith("LLVM ") and i["llvm"].count(".") == 2
    assert i["num_threads"] >= 1 and loom.config.num_threads == i["num_threads"]
    if os.environ.get("LOOM_NUM_THREADS", "").isdigit():
        assert i["num_threads"] == int(os.environ["LOOM_NUM_THREADS"])
    assert i["gpus"] == [] or len(i["gpus"]) == loom.cuda.runtime.getDeviceCount()
    if i["sleef"] is not None:  # the file the host code generator loaded (the wheel's own copy in a wheel)
        assert "libsleefgnuabi" in os.path.basename(i["sleef"]) and os.path.exists(i["sleef"])
        # and the scalar library, whose Sleef_*_u10 the host kernels call (loaded with the vector one)
        assert "libsleef." in os.path.basename(i["sleef_scalar"]) and os.path.exists(i["sleef_scalar"])
    if sys.platform == "linux" and os.uname().machine == "x86_64":
        assert "SSE2" in i["vector_isas"]
    out = io.StringIO()
    loom.show_config(file=out)
    text = out.getvalue()
    for row in ("host code", "vector ISA", "SLEEF", "threads", "GPUs", "kernel cache", "dump"):
        assert row in text, row


def test_cache_dir_follows_the_environment(tmp_path):
    code = "import loom; print(loom.config.cache_dir); print(loom.config.cache_max_bytes)"
    env = dict(os.environ, LOOM_CACHE_DIR=str(tmp_path / "c"), LOOM_CACHE_MAX_BYTES="64M", LOOM_NUM_THREADS="3")
    r = subprocess.run([sys.executable, "-c", code + "; print(loom.config.num_threads)"], env=env,
                       capture_output=True, text=True, check=True)
    assert r.stdout.split() == [str(tmp_path / "c"), str(64 << 20), "3"]
    assert (tmp_path / "c").is_dir() and (tmp_path / "c").stat().st_mode & 0o777 == 0o700
    env["LOOM_CACHE_DIR"] = ""
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert r.stdout.split()[0] == "None"


def test_dump_set_after_import_takes_effect(capfd):
    old = loom.config.dump
    try:
        loom.config.dump = "kernels"
        assert loom.config.dump == "kernels"
        x = loom.asarray(np.arange(5.0))
        float((loom.exp(x) * 3 + 1).sum())
        err = capfd.readouterr().err
        assert "kernel" in err.lower() and len(err) > 0
        loom.config.dump = ""
        float((loom.exp(x) * 5 + 1).sum())
        assert capfd.readouterr().err == ""
        with pytest.raises(ValueError, match="unknown word"):
            loom.config.dump = "kernels,nonsense"
        assert loom.config.dump == ""  # unchanged by the refused setting
        with pytest.raises(TypeError):
            loom.config.dump = 3
    finally:
        loom.config.dump = old


def test_other_settings():
    assert loom.config.eager is False
    loom.config.eager = True
    try:
        assert loom.config.eager is True
        assert not (loom.ones(3) + 1)._lazy
    finally:
        loom.config.eager = False
    old = loom.config.graph_bound
    loom.config.graph_bound = 17
    try:
        assert loom.config.graph_bound == 17
    finally:
        loom.config.graph_bound = old
    assert "dump=" in repr(loom.config)


def _process_threads() -> int:
    """The process's thread count once it holds still: a thread of another library or an earlier test that
    is just exiting (or starting) would move a single read by one (seen once in CI). Reads 20 ms apart until
    two agree."""
    prev = len(os.listdir("/proc/self/task"))
    for _ in range(100):
        time.sleep(0.02)
        cur = len(os.listdir("/proc/self/task"))
        if cur == prev:
            return cur
        prev = cur
    return prev


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through /proc (Linux)")
def test_num_threads_resizes_the_pool() -> None:
    old = loom.config.num_threads
    rng = np.random.default_rng(3)
    xn = rng.standard_normal((300, 2000))
    x = loom.asarray(xn)
    try:
        # thread counts are read right after each setting (an evaluation may start threads of its own,
        # e.g. a GPU's background compiler)
        loom.config.num_threads = 1
        with1 = _process_threads()
        assert loom.config.num_threads == 1 and loom.config_info()["num_threads"] == 1
        loom.config.num_threads = 5
        assert _process_threads() - with1 == 4 and loom.config.num_threads == 5  # the system's own count
        loom.config.num_threads = 2
        assert _process_threads() - with1 == 1 and loom.config.num_threads == 2
        for n in (1, 5, 2):
            loom.config.num_threads = n
            np.testing.assert_allclose(loom.asnumpy((x * x + n).sum(1)), (xn * xn + n).sum(1), rtol=1e-12)
            np.testing.assert_allclose(loom.asnumpy(loom.exp(-x).max(0)), np.exp(-xn).max(0), rtol=1e-12)
        for bad in (-1, 1025):
            with pytest.raises(ValueError, match="1 to 1024"):
                loom.config.num_threads = bad
        for wrong in (2.5, "2", True):
            with pytest.raises(TypeError):
                loom.config.num_threads = wrong
        assert loom.config.num_threads == 2  # refused settings change nothing
        loom.config.num_threads = None  # the default: LOOM_NUM_THREADS, else every online core
        env = os.environ.get("LOOM_NUM_THREADS", "")
        assert loom.config.num_threads == (int(env) if env.isdigit() and int(env) > 0 else min(os.cpu_count() or 1, 1024))
    finally:
        loom.config.num_threads = old


def test_num_threads_set_while_other_threads_evaluate() -> None:
    import threading
    old = loom.config.num_threads
    xn = np.arange(64 * 4096, dtype=np.float64).reshape(64, 4096) % 97
    want = (xn * 0.5 + 1).sum(1)
    errors: list[str] = []
    stop = threading.Event()

    def work() -> None:
        x = loom.asarray(xn)
        while not stop.is_set():
            got = loom.asnumpy((x * 0.5 + 1).sum(1))
            if not np.allclose(got, want, rtol=1e-12):
                errors.append("wrong row sums")

    ts = [threading.Thread(target=work) for _ in range(2)]
    try:
        for t in ts:
            t.start()
        for i in range(30):
            loom.config.num_threads = 1 + (i * 5) % 7
    finally:
        stop.set()
        for t in ts:
            t.join()
        loom.config.num_threads = old
    assert errors == []


def test_cache_settings_at_run_time(tmp_path: pathlib.Path) -> None:
    """cache_dir / cache_max_bytes set after import, in a process of their own (the environment's
    defaults are known there)."""
    code = f"""
import os, loom
d = {str(tmp_path / "a")!r}
loom.config.cache_dir = d
assert loom.config.cache_dir == d and os.stat(d).st_mode & 0o777 == 0o700
loom.config.cache_max_bytes = "64M"
assert loom.config.cache_max_bytes == 64 << 20
loom.config.cache_max_bytes = 12345
assert loom.config.cache_max_bytes == 12345 and loom.config.cache_dir == d  # the folder stays
loom.config.cache_max_bytes = None
assert loom.config.cache_max_bytes == 1 << 30
os.chdir({str(tmp_path)!r})
loom.config.cache_dir = "rel"  # made absolute: the working folder may change later
assert loom.config.cache_dir == {str(tmp_path / "rel")!r}
f = {str(tmp_path / "file")!r}
open(f, "w").close()
for bad in (f + "/sub", f):
    try:
        loom.config.cache_dir = bad
    except ValueError as e:
        assert "cache_dir" in str(e) and "kept" in str(e), e
    else:
        raise AssertionError("a folder under a file was accepted")
assert loom.config.cache_dir == {str(tmp_path / "rel")!r}  # unchanged
for bad, exc in ((0, ValueError), ("12X", ValueError), (-5, ValueError), (1.5, TypeError), (True, TypeError)):
    try:
        loom.config.cache_max_bytes = bad
    except exc:
        pass
    else:
        raise AssertionError(bad)
loom.config.cache_dir = ""
assert loom.config.cache_dir is None
loom.config.cache_dir = None
assert loom.config.cache_dir == {str(tmp_path / "env")!r}
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOM_CACHE")}
    env["LOOM_CACHE_DIR"] = str(tmp_path / "env")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_jit_level_setting() -> None:
    assert loom.config.jit_level is None  # the default: LOOM_CUDA_JIT_LEVEL, else 1
    try:
        for level in range(5):
            loom.config.jit_level = level
            assert loom.config.jit_level == level
        for bad in (-1, 5):
            with pytest.raises(ValueError, match="0 to 4"):
                loom.config.jit_level = bad
        for wrong in (1.0, "2", True):
            with pytest.raises(TypeError):
                loom.config.jit_level = wrong
        assert loom.config.jit_level == 4  # refused settings change nothing
    finally:
        loom.config.jit_level = None
    assert loom.config.jit_level is None


@pytest.mark.skipif(not loom.cuda.is_available() or loom.cuda._gpu_kind() != loom.cuda._CUDA,
                    reason="the driver JIT's level: needs a CUDA GPU")
def test_jit_level_reaches_the_cuda_jit() -> None:
    """A new elementwise kernel is linked at the level set (LOOM_DUMP=time's line says which), and computes
    the same values at every level. In a fresh process without tiers (LOOM_CUDA_JIT_TIERS=0: with them a
    new kernel is first linked at level 0 and the set level comes with the background tier-up) and
    without the disk cache (every kernel is linked here)."""
    code = """
import numpy as np, loom
x = loom.asarray(np.linspace(-2.0, 2.0, 4096))
xn = loom.asnumpy(x)
for level, fn, ref in ((0, lambda v: loom.sinh(v) * 3 - v, lambda v: np.sinh(v) * 3 - v),
                       (3, lambda v: loom.expm1(v) / 7 + v * v, lambda v: np.expm1(v) / 7 + v * v)):
    loom.config.jit_level = level
    with loom.capture_dumps("time", echo=False) as d:
        got = loom.asnumpy(fn(x))
    np.testing.assert_allclose(got, ref(xn), rtol=1e-13, atol=1e-13)
    assert f"(level {level})" in d.text, d.text
print("ok")
"""
    env = dict(os.environ, LOOM_CUDA_JIT_TIERS="0", LOOM_CACHE_DIR="")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


@pytest.mark.skipif(not loom.cuda.is_available(), reason="the disk cache holds GPU binaries: needs a GPU")
def test_cache_dir_change_reaches_the_gpu(tmp_path: pathlib.Path) -> None:
    """After loom.config.cache_dir changes, the next new GPU kernel is stored in the new folder."""
    old = loom.config_info()["cache_dir"]
    try:
        for i, folder in enumerate((tmp_path / "one", tmp_path / "two")):
            loom.config.cache_dir = folder
            x = loom.asarray(np.linspace(0.1, 2.0, 1000, dtype=np.float32 if i == 0 else np.float64))
            y = loom.tanh(x) ** 3 - loom.arcsinh(x) * (i + 2) if i == 0 else loom.cosh(x) * loom.log1p(x) / 3
            want = (np.tanh(loom.asnumpy(x)) ** 3 - np.arcsinh(loom.asnumpy(x)) * 2 if i == 0
                    else np.cosh(loom.asnumpy(x)) * np.log1p(loom.asnumpy(x)) / 3)
            np.testing.assert_allclose(loom.asnumpy(y), want, rtol=1e-5)
            entries = [p for p in folder.rglob("*") if p.is_file()]
            assert entries, f"no kernel was stored in {folder}"
    finally:
        loom.config.cache_dir = old if old else None


def test_no_sleef_warns(monkeypatch):
    class Core:  # loom._core, with the host target a build without SLEEF reports
        def __getattr__(self, name):
            return getattr(loom._core, name)

        def config_info(self):
            return dict(loom._core.config_info(), host_target="LLVM 19.1.7 host x86_64-pc-linux-gnu znver3 0123")

    monkeypatch.setattr(loom._config, "_core", Core())
    with pytest.warns(loom.PerformanceWarning, match="SLEEF"):
        loom._config._warn_slow_fallbacks()
    assert loom.config_info()["sleef"] is None
    out = io.StringIO()
    loom.show_config(file=out)
    assert "not loaded" in out.getvalue()


def test_no_vector_isa_warns(monkeypatch):
    # SLEEF present, but a CPU without SSE2/AVX/AVX2/AVX-512 (e.g. an aarch64 host): math is scalar
    monkeypatch.setattr(loom._config, "_cpu_vector_isas", lambda: ["NEON"])
    with pytest.warns(loom.PerformanceWarning, match="vector extensions"):
        loom._config._warn_slow_fallbacks()
    monkeypatch.setattr(loom._config, "_cpu_vector_isas", lambda: ["AVX2", "AVX", "SSE2"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if "sleef" in loom._core.config_info()["host_target"].split():
            loom._config._warn_slow_fallbacks()  # nothing to warn about


def test_hip_is_reported():
    # the HIP layer's own state: the runtime it loaded (libamdhip64, when installed), its devices, and why
    # there is no usable AMD GPU; the same count loom's device selection sees
    h = loom.config_info()["hip"]
    assert set(h) == {"runtime", "devices", "status"}
    assert len(h["devices"]) == loom._core.device_count(2)
    if not h["devices"]:
        assert h["status"] != "ok" and h["status"]
        out = io.StringIO()
        loom.show_config(file=out)
        assert h["status"] in out.getvalue()
    if h["runtime"] is not None:
        assert "libamdhip64" in os.path.basename(h["runtime"]) and os.path.exists(h["runtime"])


def test_repr_of_a_pending_array_says_so():
    x = loom.asarray(np.arange(4.0))
    y = x * 2
    assert y._lazy
    assert repr(y) == repr(np.arange(4.0) * 2) + "  # was pending: evaluated by repr"
    assert repr(y) == repr(np.arange(4.0) * 2) and str(y) == str(np.arange(4.0) * 2)


def test_signatures_of_the_documented_functions():
    # the docstrings name the NumPy function each follows; the names must exist in NumPy
    for name in ("sum", "matmul", "where", "zeros"):
        doc = getattr(loom, name).__doc__
        assert f"numpy.{name}" in doc and hasattr(np, name)
    assert "library call" in (loom.matmul.__doc__ or "") and "pending" in (loom.sum.__doc__ or "")
    assert inspect.signature(loom.sum).parameters["keepdims"].default is False


def test_capture_dumps_as_a_string(capfd):
    # a notebook does not show file descriptor 2: capture_dumps hands libloom's dumps over as a str
    # (and echoes them to sys.stderr); the setting in effect before the block comes back after it
    old = loom.config.dump
    x = loom.asarray(np.arange(7.0))
    with loom.capture_dumps("kernels,time", echo=False) as d:
        assert loom.config.dump == "kernels,time"
        got = float((loom.sin(x) * 2 - 1).sum())
    assert loom.config.dump == old
    assert got == pytest.approx(float((np.sin(np.arange(7.0)) * 2 - 1).sum()))
    assert "; ---- " in d.text and "# time eval" in d.text, d.text[:400]
    assert capfd.readouterr().err == ""  # nothing reached the real stderr (echo=False)
    with loom.capture_dumps() as d2:  # the setting in effect (none): nothing to catch
        float((loom.cos(x) + 2).sum())
    assert d2.text == ""
    with pytest.raises(ValueError, match="unknown word"):
        with loom.capture_dumps("nonsense"):
            pass
    assert loom.config.dump == old


def test_inspect_a_pending_expression():
    x = loom.asarray(np.linspace(0, 1, 100))
    y = loom.exp(-x * x) * 2 + 1
    parts = loom.inspect(y)
    assert set(parts) == {"graph", "kernels", "llvm", "ptx", "amdgpu", "time"}  # tests/python/test_inspect.py: the last two
    assert "exp" in parts["graph"] and "exp" in parts["kernels"]
    assert "define" in parts["llvm"]
    assert ".entry" in parts["ptx"] or parts["ptx"].startswith("unavailable")
    assert y._lazy  # nothing ran
    np.testing.assert_allclose(loom.asnumpy(y), np.exp(-np.linspace(0, 1, 100) ** 2) * 2 + 1)
    k = loom.inspect(lambda a: (a * 3).sum(), x, what="kernels")
    assert list(k) == ["kernels"] and "reduce sum" in k["kernels"] and "mul" in k["kernels"]
    assert k["kernels"].count("\nkernel ") == 0  # one fused kernel: the multiply inside the sum
    with pytest.raises(ValueError, match="not pending"):
        loom.inspect(y)  # computed above
    with pytest.raises(ValueError, match="unknown part"):
        loom.inspect(x * 2, what="asm")
    with pytest.raises(TypeError):
        loom.inspect(3)


def test_inspect_several_outputs_one_evaluation():
    """A tuple of pending arrays shows the one evaluation that computes them together: an Adam-like step's
    outputs in one kernel, with three stores."""
    rng = np.random.default_rng(4)
    p, g, m = (loom.asarray(rng.standard_normal(1000).astype(np.float32)) for _ in range(3))

    def step(p, g, m):
        m2 = 0.9 * m + 0.1 * g
        return p - 0.01 * m2, m2

    k = loom.inspect(step, p, g, m, what="kernels")["kernels"]
    assert k.count("store") >= 2, k  # both outputs stored by the kernels shown
    one = loom.inspect(step(p, g, m)[0], what="kernels")["kernels"]
    assert one.count("store") < k.count("store")
    parts = loom.inspect(list(step(p, g, m)), what=("graph", "ptx"))
    assert ".entry" in parts["ptx"] or parts["ptx"].startswith("unavailable")
    outs = step(p, g, m)
    loom.inspect(outs, what="graph")
    ref_m2 = 0.9 * loom.asnumpy(m).astype(np.float64) + 0.1 * loom.asnumpy(g).astype(np.float64)
    np.testing.assert_allclose(loom.asnumpy(outs[1]), ref_m2, rtol=1e-6, atol=1e-6)  # inspect ran nothing; values still right
    with pytest.raises(TypeError, match="pending loom arrays"):
        loom.inspect((outs[0], 3))
    with pytest.raises(TypeError):
        loom.inspect(())
