"""pytest plugin of the CuPy-suite harness (tests/cupy/README.md): records every test's outcome with a
one-line reason category, as JSON lines, as the tests run (a crash loses nothing before it).

Loaded by run_suite.py with `-p loom_cupy_plugin`. Options:
  --loom-results=PATH   append one JSON object per test (and per collection error) to PATH
  --loom-done=PATH      node ids already recorded (a resumed run after a crash): deselected
  --loom-sample=K/N     keep only the tests whose node id hashes to K modulo N (CI's sample)
  --loom-timeout=S      a test running longer than S seconds fails with a timeout (SIGALRM)
  --loom-no-complex     drop complex dtypes from cupy.testing's dtype loops (tests left with no
                        dtype are skipped as "complex only"): the figure without complex numbers
  --loom-select=PATH    keep only the tests listed in PATH, one id a line below cupy_tests/
                        (core_tests/test_x.py::TestX::test_y): run_suite.py's --gpu-only
Tests that need a CUDA device (NEEDS_DEVICE below) are reported as skipped, with the reason, when loom's
device is the host; with a GPU the same tests count as failures.
Determinism: Python's `random` is seeded per test module before it is imported (cupy.testing shuffles
dtype combinations at import), so outcomes do not depend on which modules run in one process.
"""
import json
import os
import re
import signal
import time
import zlib

import pytest

_state = {"out": None, "sample": None, "timeout": 0, "no_complex": False}


class TestTimeout(Exception):
    pass


def pytest_addoption(parser):
    g = parser.getgroup("loom", "loom CuPy-suite harness")
    g.addoption("--loom-results", default=None)
    g.addoption("--loom-done", default=None)
    g.addoption("--loom-sample", default=None)
    g.addoption("--loom-timeout", type=float, default=0)
    g.addoption("--loom-no-complex", action="store_true", default=False)
    g.addoption("--loom-select", default=None)


def pytest_configure(config):
    import cupy  # noqa: F401 (installs the shim's finder: a test module may import cupy_backends before cupy)
    path = config.getoption("--loom-results")
    if path:
        _state["out"] = open(path, "a", buffering=1)
    s = config.getoption("--loom-sample")
    if s:
        k, n = (int(v) for v in s.split("/"))
        _state["sample"] = (k, n)
    _state["timeout"] = config.getoption("--loom-timeout")
    if config.getoption("--loom-no-complex"):
        _state["no_complex"] = True
        _drop_complex_dtypes()


# ---- dropping complex dtypes from cupy.testing's loops (--loom-no-complex) ---------------------------
def _is_complex(t):
    import numpy
    try:
        return numpy.dtype(t).kind == "c"
    except TypeError:
        return False


def _drop_complex_dtypes():
    import cupy.testing as testing
    from cupy.testing import _loops

    orig_for_dtypes, orig_combination = _loops.for_dtypes, _loops.for_dtypes_combination

    def for_dtypes(dtypes, name="dtype"):
        if isinstance(dtypes, str):
            dtypes = list(dtypes)
        kept = [d for d in dtypes if not _is_complex(d)]
        if dtypes and not kept:
            return pytest.mark.skip(reason="loom-harness: complex dtypes only")
        return orig_for_dtypes(kept, name)

    def for_dtypes_combination(types, names=("dtype",), full=None):
        kept = [d for d in types if not _is_complex(d)]
        if types and not kept:
            return pytest.mark.skip(reason="loom-harness: complex dtypes only")
        return orig_combination(kept, names, full)

    _loops._complex_dtypes = ()
    _loops.for_dtypes = testing.for_dtypes = for_dtypes
    _loops.for_dtypes_combination = testing.for_dtypes_combination = for_dtypes_combination
    _loops.for_complex_dtypes = testing.for_complex_dtypes = \
        lambda name="dtype": pytest.mark.skip(reason="loom-harness: complex dtypes only")


# ---- collection -----------------------------------------------------------------------------------------
@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    if isinstance(collector, pytest.Module):
        import random
        random.seed(zlib.crc32(collector.nodeid.encode()))
    yield


def pytest_collection_modifyitems(session, config, items):
    done = set()
    path = config.getoption("--loom-done")
    if path and os.path.exists(path):
        with open(path) as f:
            done = {line.rstrip("\n") for line in f if line.strip()}
    chosen = None
    path = config.getoption("--loom-select")
    if path:
        with open(path) as f:
            chosen = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    keep, drop = [], []
    for it in items:
        sel = it.nodeid not in done
        if sel and chosen is not None:
            sel = it.nodeid.split("cupy_tests/", 1)[-1] in chosen
        if sel and _state["sample"]:
            k, n = _state["sample"]
            sel = zlib.crc32(it.nodeid.encode()) % n == k
        (keep if sel else drop).append(it)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_sessionfinish(session, exitstatus):
    _write({"finished": int(exitstatus)})


def _write(rec):
    if _state["out"]:
        _state["out"].write(json.dumps(rec) + "\n")


def pytest_collectreport(report):
    if report.failed:
        exc_type, msg = _exception_of(report.longrepr)
        cat, detail = classify(exc_type, msg, "", "")
        r = {"id": report.nodeid, "module": _module_of(report.nodeid), "outcome": "error", "when": "collect",
             "exc": exc_type, "msg": msg, "category": cat, "detail": detail, "collect_error": True}
        skip_if_needs_device(r, has_gpu())
        _write(r)


# ---- running ----------------------------------------------------------------------------------------------
def _on_alarm(signum, frame):
    raise TestTimeout(f"test ran longer than {_state['timeout']:g} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _write({"start": item.nodeid})
    t = _state["timeout"]
    if t:
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, t)
    try:
        yield
    finally:
        if t:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if call.excinfo is not None and not call.excinfo.errisinstance(pytest.skip.Exception):
        tb = call.excinfo.traceback
        where = f"{os.path.basename(str(tb[-1].path))}:{tb[-1].lineno + 1}" if len(tb) else ""
        rep.loom_exc = (call.excinfo.typename, _first_lines(str(call.excinfo.value)), where)


_reports = {}


def pytest_runtest_logreport(report):
    r = _reports.setdefault(report.nodeid, {"id": report.nodeid, "module": _module_of(report.nodeid),
                                            "outcome": None, "duration": 0.0})
    r["duration"] += report.duration
    exc = getattr(report, "loom_exc", None)
    if report.when == "setup":
        if report.failed:
            r["outcome"] = "error"
        elif report.skipped:
            r["outcome"] = "skipped"
            r["msg"] = _skip_reason(report)
    elif report.when == "call":
        if hasattr(report, "wasxfail"):
            r["outcome"] = "xfailed" if report.skipped else "xpassed"
        elif report.passed:
            r["outcome"] = "passed"
        elif report.skipped:
            r["outcome"] = "skipped"
            r["msg"] = _skip_reason(report)
        else:
            r["outcome"] = "failed"
    elif report.when == "teardown":
        if report.failed and r["outcome"] in ("passed", None):
            r["outcome"] = "error"
        _finish(r)
        return
    if exc and r.get("exc") is None:
        r["exc"], r["msg"], r["where"] = exc
        r["stdout"] = _last_dtype_line(report.capstdout)


def _finish(r):
    """Writes the test's record: failures keep the raw facts (exception type, message, where it was
    raised, the dtype line) so that run_suite.py can classify them again with a newer classify()."""
    _reports.pop(r["id"], None)
    if r["outcome"] in ("failed", "error"):
        r["category"], r["detail"] = classify(r.get("exc"), r.get("msg", ""), r.get("stdout", ""), r.get("where", ""))
        r["msg"] = _compact(r.get("msg") or "")
        skip_if_needs_device(r, has_gpu())
    else:
        for k in ("exc", "stdout", "where"):
            r.pop(k, None)
        if r["outcome"] != "skipped":
            r.pop("msg", None)
    r["duration"] = round(r["duration"], 4)
    _write(r)


def _compact(msg, cap=2000):
    """msg shortened for the record, keeping what classify() reads: for cupy.testing's wrapped errors
    the header and, per side (cupy, numpy), the exception lines without their tracebacks."""
    if len(msg) <= cap:
        return msg
    if msg.startswith(("Only cupy raises error", "Only numpy raises error", "Different types of errors",
                       "Both cupy and numpy raise")):
        header, _, rest = msg.partition("\n")
        keep = []
        for part in rest.split("\nnumpy\n"):
            lines = [ln for ln in part.splitlines() if ln and not ln.startswith((" ", "Traceback", "^"))]
            keep.append("\n".join(lines[-3:]))
        return (header + "\n" + "\nnumpy\n".join(keep))[:cap]
    return msg[:cap]


def _module_of(nodeid):
    return nodeid.split("::")[0]


def _skip_reason(report):
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        return str(lr[2])[:200]
    return str(lr)[:200]


def _first_lines(s, n=4000):
    return s[:n]


def _last_dtype_line(out):
    """cupy.testing's dtype loops print '<name> is <dtype>' before re-raising a failure."""
    m = None
    for m in re.finditer(r"^(\w+) is (.+)$", out or "", re.M):
        pass
    return m.group(0) if m else ""


def _exception_of(longrepr):
    text = str(longrepr)
    m = None
    for m in re.finditer(r"^E\s+([\w.]+(?:Error|Exception|Warning|InLoom|Timeout|NeedsCudaDevice)):? ?(.*)$", text, re.M):
        pass
    if m:
        return m.group(1).split(".")[-1], m.group(2)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "CollectError", (lines[-1] if lines else text)[:300]


# ---- tests that need a CUDA device ----------------------------------------------------------------------
# The rule: a test fails *because it needs a CUDA device* when the error that failed it (for cupy.testing's
# comparisons, the cupy side's) is loom's or the shim's answer to a request only a CUDA device can serve:
#  - the shim's NeedsCudaDevice: a name of CuPy's low-level CUDA API (runtime, driver, device and pinned
#    memory, NVRTC, textures, graphs, library handles: _shim.DEVICE_APIS) that loom lacks, used on a
#    machine where loom has no GPU (CuPy itself raises cudaErrorNoDevice there);
#  - loom's own errors for a device that is not there: __cuda_array_interface__ of a host array, a second
#    device (Device(1)), the CUDA driver's facts (compute capability, memory info) without the driver.
# On a machine where loom's device is the host such a test is reported as skipped with that reason; with a
# GPU it stays a failure (loom then lacks the API). Every other failure of the same test counts as a failure:
# only the error's own type and words decide, never the test's name. A module whose import needs the device
# (a skip mark that asks the driver) is one skipped record, as its collection error was one error.
NEEDS_DEVICE = re.compile(r"needs a CUDA device|this machine has no CUDA device|no CUDA device is in use|"
                          r"this machine has no GPU|the CUDA driver \(libcuda\.so\.1\) cannot be loaded|"
                          r"device \d+ is not available: this machine has|"
                          r"no CUDA driver \(libcuda\.so\.1 not found|is a host array: raw kernels take")
_gpu = []


def has_gpu():
    """True when loom drives a GPU in this process (CUDA, or HIP on a ROCm machine)."""
    if not _gpu:
        try:
            import loom.cuda
            _gpu.append(bool(loom.cuda.is_available()))
        except Exception:
            _gpu.append(False)
    return _gpu[0]


def skip_if_needs_device(r, gpu):
    """Turns the failing record r into a skip when its reason is a CUDA device and the machine has none."""
    if r["outcome"] in ("failed", "error") and r.get("category") == "needs a CUDA device" and not gpu:
        r["outcome"], r["skip_reason"] = "skipped", f"loom-harness: needs a CUDA device ({r.get('detail', '')})"


# ---- reason categories --------------------------------------------------------------------------------
_INNER = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning|InLoom|Timeout|NeedsCudaDevice)): (.*)$", re.M)


def _inner_error(msg):
    """cupy.testing wraps errors of the cupy side in an AssertionError holding the formatted traceback
    ('Only cupy raises error', 'Different types of errors occurred'): the cupy side's exception line."""
    part = msg
    if "\nnumpy\n" in msg:
        part = msg.split("\nnumpy\n")[0]
    found = None
    for m in _INNER.finditer(part):
        found = m
    if found:
        return found.group(1).split(".")[-1], found.group(2)
    return None, None


def classify(exc, msg, stdout, where=""):
    """(category, detail) for a failure: exc is the exception type name, msg its text, stdout the
    dtype line cupy.testing printed (if any), where the file:line that raised it."""
    msg, stdout = msg or "", stdout or ""
    kind = None
    if exc == "AssertionError":
        if msg.startswith("Only cupy raises error"):
            kind = "error where NumPy answers"
        elif msg.startswith("Different types of errors"):
            kind = "different error type"
        elif msg.startswith("Both cupy and numpy raise exceptions"):
            kind = "different error type"
        if kind:
            iexc, imsg = _inner_error(msg)
            if iexc:
                cat, detail = _classify_exception(iexc, imsg, stdout)
                if cat != "other":
                    return cat, detail
                return kind, f"{iexc}: {imsg[:120]}"
            return kind, ""
        if msg.startswith("Only numpy raises error"):
            iexc, imsg = _inner_error(msg)
            return "no error where NumPy raises", f"{iexc}: {(imsg or '')[:120]}" if iexc else ""
        if "complex" in stdout:
            m = re.search(r"(complex\d+)", stdout)
            return "complex dtype", m.group(1) if m else "complex"
        if "ndarrays of different dtypes" in msg:
            m = re.search(r"cupy: (\S+)\s+numpy: (\S+)", msg)
            return "wrong dtype", f"{m.group(1)} vs NumPy {m.group(2)}" if m else ""
        if "different type of return value" in msg:
            m = re.search(r"cupy: (.*)\nnumpy: (.*)", msg)
            return "wrong return type", f"{m.group(1)} vs NumPy {m.group(2)}" if m else ""
        if "Not equal to tolerance" in msg or "Arrays are not equal" in msg or "Arrays are not almost" in msg \
                or "Mismatched elements" in msg:
            return "wrong values", stdout.strip()
        if "c_contiguous flag" in msg or "f_contiguous flag" in msg:
            return "wrong memory layout", msg.split(".")[0]
        if "shapes" in msg and "mismatch" in msg:
            return "wrong shape", ""
        if re.search(r"\.strides\b|strides", msg):
            return "wrong strides", msg.split("\n")[0][:120]
        if re.search(r"assert \(.*\) == \(.*\)", msg) or "shape" in msg:
            return "wrong shape", msg.split("\n")[0][:120]
        if "flags" in msg or "contiguous" in msg:
            return "wrong memory layout", msg.split("\n")[0][:120]
        if "Regex pattern did not match" in msg:
            return "different error message", ""
        return "assertion", (msg.split("\n")[0][:100] or f"assert at {where}")
    if exc is None:
        return "other", ""
    return _classify_exception(exc, msg, stdout)


def _classify_exception(exc, msg, stdout):
    first = msg.split("\n")[0]
    if exc == "NeedsCudaDevice" or NEEDS_DEVICE.search(first):
        return "needs a CUDA device", first[:120]
    m = re.search(r"module '(cupy[\w.]*)' \(loom\) has no attribute '(\w+)'", msg)
    if m:
        parent = m.group(1)[len("cupy."):] if m.group(1) != "cupy" else ""
        return "missing function", f"{parent}.{m.group(2)}" if parent else m.group(2)
    m = re.search(r"loom has no ((?:cupy|cupyx|cupy_backends)[\w.]*)", msg)
    if m:
        name = m.group(1)
        if name.startswith("cupy_backends") or any(part.startswith("_") for part in name.split(".")[1:]):
            return "missing CuPy internal", _prefix(name, 3)
        if name.startswith("cupy.cuda"):
            return "missing cupy.cuda API", _prefix(name, 3)
        if name.startswith("cupyx"):
            return "missing cupyx", _prefix(name, 3)
        return "missing module", _prefix(name, 2)
    m = re.search(r"'(\w+)' object has no attribute '(\w+)'", msg)
    if exc == "AttributeError" and m:
        if m.group(1) in ("ndarray", "Array"):
            return "missing ndarray attribute", m.group(2)
        return "missing attribute", f"{m.group(1)}.{m.group(2)}"
    m = re.search(r"module '([\w.]+)' has no attribute '(\w+)'", msg)
    if exc == "AttributeError" and m:
        mod = m.group(1).replace("loom", "cupy", 1)
        return ("missing cupy.cuda API" if mod.startswith("cupy.cuda") else "missing function"), f"{mod}.{m.group(2)}"
    m = re.search(r"type object '(\w+)' has no attribute '(\w+)'", msg)
    if exc == "AttributeError" and m:
        return "missing attribute", f"{m.group(1)}.{m.group(2)}"
    m = re.search(r"loom does not support dtype (.+?)(?: \(supported|$)", msg, re.S)
    if m:  # before the complex rule: the message lists the supported dtypes, complex64 among them
        return "unsupported dtype", m.group(1)[:60]
    if re.search(r"complex", msg, re.I) or "complex" in stdout:
        m = re.search(r"(complex\d+)", msg + " " + stdout)
        return "complex dtype", m.group(1) if m else "Python complex"
    if "DID NOT WARN" in msg:
        m = re.search(r"warnings of type \(?<class '([\w.]+)'", msg)
        return "no warning where CuPy warns", m.group(1).split(".")[-1] if m else ""
    m = re.search(r"DID NOT RAISE (.*)", msg)
    if m:
        return "no error where NumPy raises", m.group(1)[:80]
    if "Regex pattern did not match" in msg:
        return "different error message", ""
    m = re.search(r"(\w+)\(\) got an unexpected keyword argument '(\w+)'", msg)
    if m:
        return "unsupported argument", f"{m.group(1)}({m.group(2)}=)"
    m = re.search(r"(\w+)\(\) (takes|missing) .*", msg)
    if exc == "TypeError" and m:
        return "unsupported argument", first[:120]
    if exc in ("NotImplementedError", "MissingInLoom"):
        return "not implemented", first[:120]
    if exc == "TestTimeout":
        return "timeout", first
    if re.search(r"CUDA|cuda|GPU|device", msg) and "loom" in msg.lower():
        return "GPU only", first[:120]
    if exc == "OverflowError":
        return "error where NumPy answers", f"{exc}: {first[:100]}"
    return "other", f"{exc}: {first[:120]}"


def _prefix(name, n):
    return ".".join(name.split(".")[:n])
