"""run_suite.py: runs CuPy's own test suite (vendored, tests/cupy/vendor) against loom and reports the
outcome of every test with a reason category (tests/cupy/README.md). Usually called through
scripts/cupy_suite.sh.

Tests run in one pytest process per test directory (core_tests, math_tests, ...), through the plugin
loom_cupy_plugin.py, which writes each outcome as it happens. A process that dies (a crash) or passes
its time limit is restarted on what it had not run yet; the test it was running is recorded as a crash
or timeout. Outputs: a summary JSON (totals, per directory and module, failure categories, reasons,
missing functions, per module and reason), every test's outcome in a gzipped JSON-lines file beside it
(id, outcome, and for a failure its category, detail and message) and a markdown summary. Exit status:
0, or 1 when --min-pass-rate is given and the run's pass rate is below it (CI's regression gate), or 2
on a harness failure.
"""
import argparse
import collections
import datetime
import gzip
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import failure_table

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SUITE = os.path.join(HERE, "vendor", "tests", "cupy_tests")
CUPY_VERSION = "14.2.0"
# The directories issue 13 names as the acceptance set (fusion is core_tests/fusion_tests).
ACCEPTANCE = ("core_tests", "math_tests", "statistics_tests", "creation_tests", "manipulation_tests",
              "indexing_tests", "logic_tests", "binary_tests", "linalg_tests")
FAILING = ("failed", "error")
# the tests a host run skips for want of a CUDA device (--write-gpu-list writes it, --gpu-only runs it): the
# harness's needs-a-CUDA-device skips, and CuPy's own skips of tests that need a GPU feature the host lacks
GPU_LIST = os.path.join(HERE, "gpu_only_tests.txt")
GPU_SKIP_REASONS = ("loom-harness: needs a CUDA device", "Skipped: Requires CUDA grid synchronization")
README = os.path.join(HERE, "README.md")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--all", action="store_true", help="every directory of tests/cupy_tests, not only the acceptance set")
    p.add_argument("--paths", nargs="+", help="test directories or files (relative to cupy_tests) to run instead")
    p.add_argument("--sample", help="K/N: only tests whose node id hashes to K mod N (CI's sample)")
    p.add_argument("--no-complex", action="store_true", help="drop complex dtypes from cupy.testing's dtype loops")
    p.add_argument("--slow", action="store_true", help="run the tests CuPy marks slow too (they allocate "
                   "arrays of 2**31 elements and more)")
    p.add_argument("--mem-limit-gb", type=float, default=6,
                   help="data size limit of a pytest process (default 6 GiB; 0: none): a test that needs more "
                   "fails with MemoryError instead of taking the machine's memory")
    p.add_argument("--timeout", type=float, default=120, help="seconds one test may take (default 120)")
    p.add_argument("--chunk-timeout", type=float, default=7200, help="seconds one pytest process may take")
    p.add_argument("--jobs", type=int, default=1, help="pytest processes at once (default 1)")
    p.add_argument("--json", help="summary JSON path (default bench/results/<date>-cupy-suite-<tag>.json)")
    p.add_argument("--md", help="summary markdown path (default: the JSON path with .md)")
    p.add_argument("--tag", default="host", help="machine tag of the default output names (default host)")
    p.add_argument("--no-write", action="store_true", help="print the summary only")
    p.add_argument("--min-pass-rate", type=float, help="exit 1 when passed/(passed+failed+errors) is below this")
    p.add_argument("--list-failures", action="store_true", help="print every failing test with its reason")
    p.add_argument("--tracebacks", action="store_true", help="keep pytest's tracebacks in its log (slower)")
    p.add_argument("--log", help="write pytest's output there (default: dropped)")
    p.add_argument("--work-dir", help="keep the per-directory results there: a later run with the same directory "
                   "skips the directories that completed and resumes the others (delete a directory's .jsonl "
                   "file to run it again)")
    p.add_argument("--python", default=sys.executable, help="interpreter with loom installed")
    p.add_argument("--gpu-only", action="store_true", help="run only the tests listed in tests/cupy/gpu_only_tests.txt "
                   "(those the host run skips for want of a CUDA device), one pytest process per module; for the "
                   "GPU machine, with --tag")
    g = p.add_argument_group("from an earlier run's tests file (bench/results/*-tests.jsonl.gz); nothing is run")
    g.add_argument("--failure-table", metavar="TESTS", help="print the table of failing tests (module, test, reason)")
    g.add_argument("--update-readme", metavar="TESTS", help="write that table into tests/cupy/README.md's section "
                   "'Tests that still fail'")
    g.add_argument("--merge", nargs="+", metavar="WORK_DIR", help="summarize the records of earlier runs' --work-dir "
                   "directories together (runs split by --paths or --sample, or a rerun of some modules after a "
                   "change): a test recorded in several takes its record from the last directory named")
    g.add_argument("--write-gpu-list", metavar="TESTS", help="write tests/cupy/gpu_only_tests.txt: the tests that "
                   "run skipped for want of a CUDA device")
    return p.parse_args(argv)


def gpu_list():
    """The test ids of tests/cupy/gpu_only_tests.txt (below cupy_tests/)."""
    with open(GPU_LIST) as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]


def chunks_of(args):
    if args.gpu_only:  # one process per module: the list is short and spread over many files
        return [os.path.join(SUITE, m) for m in sorted({t.split("::")[0] for t in gpu_list()})]
    if args.paths:
        return [os.path.join(SUITE, p) for p in args.paths]
    dirs = sorted(d for d in os.listdir(SUITE) if os.path.isdir(os.path.join(SUITE, d)) and d.endswith("_tests"))
    if not args.all:
        dirs = [d for d in dirs if d in ACCEPTANCE]
    out = [os.path.join(SUITE, d) for d in dirs]
    if args.all:  # the loose test files at the top of cupy_tests
        out += [os.path.join(SUITE, f) for f in sorted(os.listdir(SUITE)) if f.startswith("test_") and f.endswith(".py")]
    return out


def env_for(args):
    env = dict(os.environ)
    # CuPy's own switch for its multi-GPU tests (cupy.testing.multi_gpu(n) skips when n exceeds it): the
    # number of GPUs loom drives, 0 on the host
    env.setdefault("CUPY_TEST_GPU_LIMIT", str(loom_gpu_count(args.python)))
    paths = [HERE, os.path.join(HERE, "shim"), os.path.join(HERE, "vendor", "tests")]
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("CUPY_TEST_FULL_COMBINATION", "0")
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def limit_memory(gib):
    """In the child: RLIMIT_DATA (private memory, mmap included since Linux 4.7) of gib GiB."""
    if gib > 0:
        import resource
        n = int(gib * (1 << 30))
        resource.setrlimit(resource.RLIMIT_DATA, (n, n))


def read_results(path):
    """({node id: record}, the node id started last without a result, whether pytest reported the end
    of its session) from a results file."""
    recs, last_start, finished = {}, None, False
    if not os.path.exists(path):
        return recs, None, False
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash
            if "start" in r:
                last_start, finished = r["start"], False
            elif "finished" in r:
                finished = True
            else:
                recs[r["id"]] = r
                if r["id"] == last_start:
                    last_start = None
    return recs, last_start, finished


def run_chunk(args, chunk, workdir, log):
    """Runs one chunk to completion (restarting after crashes); returns its records."""
    name = os.path.relpath(chunk, SUITE).replace(os.sep, "_")
    results = os.path.join(workdir, name + ".jsonl")
    done = os.path.join(workdir, name + ".done")
    base = [args.python, "-m", "pytest", "-c", os.path.join(HERE, "pytest.ini"), "--rootdir", HERE,
            "-p", "loom_cupy_plugin", "-p", "no:cacheprovider", "-q", "--no-header", "-rN",
            "--tb=short" if args.tracebacks else "--tb=no",
            "--continue-on-collection-errors", f"--loom-results={results}", f"--loom-done={done}",
            f"--loom-timeout={args.timeout:g}"]
    if args.sample:
        base.append(f"--loom-sample={args.sample}")
    if args.no_complex:
        base.append("--loom-no-complex")
    if args.gpu_only:
        base.append(f"--loom-select={GPU_LIST}")
    if not args.slow:
        base += ["-m", "not slow"]
    recs, _, finished = read_results(results)
    if finished:
        return recs  # completed by an earlier run with this --work-dir
    for attempt in range(1000):
        recs, _, _ = read_results(results)
        with open(done, "w") as f:
            f.write("".join(i + "\n" for i in recs))
        t0 = time.time()
        try:
            p = subprocess.run(base + [chunk], cwd=HERE, env=env_for(args), stdout=log, stderr=subprocess.STDOUT,
                               timeout=args.chunk_timeout, preexec_fn=lambda: limit_memory(args.mem_limit_gb))
            rc, timed_out = p.returncode, False
        except subprocess.TimeoutExpired:
            rc, timed_out = None, True
        new_recs, last, finished = read_results(results)
        if not timed_out and rc in (0, 1, 5) and finished:
            return new_recs
        log.write(f"\nrun_suite: {name}: pytest exit status {rc}{' (time limit)' if timed_out else ''}, "
                  f"{'session finished' if finished else 'session cut short'}\n")
        if last is None:  # stopped outside a test (collection, an internal error): report it, resume
            what = "timeout" if timed_out else "harness error"
            rec = {"id": f"{os.path.relpath(chunk, HERE)}::<pytest exit status {rc}, attempt {attempt}>",
                   "module": os.path.relpath(chunk, HERE), "outcome": "error", "category": what,
                   "detail": f"pytest exit status {rc} outside a test (see the pytest log)", "collect_error": True}
            with open(results, "a") as f:
                f.write(json.dumps(rec) + "\n")
            if len(new_recs) == len(recs):  # no progress: give up on this chunk
                new_recs[rec["id"]] = rec
                return new_recs
            continue
        what = "timeout" if timed_out else "crash"
        rec = {"id": last, "module": last.split("::")[0], "outcome": "failed", "category": what,
               "detail": f"pytest exit status {rc}" if rc is not None else f"chunk ran {time.time() - t0:.0f} s",
               "msg": f"the test process {'ran out of time' if timed_out else 'died'} during this test"}
        with open(results, "a") as f:
            f.write(json.dumps(rec) + "\n")
        log.write(f"run_suite: {name}: {what} in {last}; resuming\n")
    raise RuntimeError(f"{name}: too many restarts")


def short_module(mod_id):
    """tests path -> the path below cupy_tests (math_tests/test_arithmetic.py)."""
    key = "cupy_tests/"
    return mod_id[mod_id.index(key) + len(key):] if key in mod_id else mod_id


def counts(recs):
    c = collections.Counter(r["outcome"] for r in recs)
    total = sum(c.values())
    judged = c["passed"] + c["failed"] + c["error"]
    needs_device = sum(1 for r in recs if r["outcome"] == "skipped" and r.get("skip_reason", "").startswith(
        "loom-harness: needs a CUDA device"))
    return {"total": total, "passed": c["passed"], "failed": c["failed"], "errors": c["error"],
            "skipped": c["skipped"], "skipped_needs_device": needs_device, "xfailed": c["xfailed"], "xpassed": c["xpassed"],
            "pass_rate": round(c["passed"] / judged, 4) if judged else None}


def reclassify(recs, gpu):
    """Classifies the failures again from their raw facts with the current classify(), and applies the
    needs-a-CUDA-device rule (loom_cupy_plugin.skip_if_needs_device) for a machine with or without a GPU."""
    sys.path.insert(0, HERE)
    import loom_cupy_plugin
    for r in recs.values():
        if r["outcome"] in FAILING and "exc" in r:
            r["category"], r["detail"] = loom_cupy_plugin.classify(r.get("exc"), r.get("msg", ""),
                                                                   r.get("stdout", ""), r.get("where", ""))
            loom_cupy_plugin.skip_if_needs_device(r, gpu)


_gpu_counts = {}


def loom_gpu_count(python):
    """The number of GPUs loom drives under this interpreter (0: its device is the host)."""
    if python not in _gpu_counts:
        try:
            out = subprocess.run([python, "-c", "import loom.cuda; print(loom.cuda.runtime.getDeviceCount())"],
                                 capture_output=True, text=True, timeout=120, cwd=tempfile.gettempdir()).stdout
            _gpu_counts[python] = int(out.strip() or 0)
        except (OSError, subprocess.SubprocessError, ValueError):
            _gpu_counts[python] = 0
    return _gpu_counts[python]


def summarize(args, recs, wall):
    gpu = loom_gpu_count(args.python) > 0
    reclassify(recs, gpu)
    by_module = collections.defaultdict(list)
    for r in recs.values():
        r["module"] = short_module(r["module"])
        by_module[r["module"]].append(r)
    modules = {m: counts(v) for m, v in sorted(by_module.items())}
    for m, v in by_module.items():
        ce = [r for r in v if r.get("collect_error")]
        if ce:
            modules[m]["collection_error"] = f"{ce[0].get('exc', '')}: {ce[0].get('msg', ce[0].get('detail', ''))}"[:300]
    dirs = collections.defaultdict(list)
    for r in recs.values():
        dirs[r["module"].split("/")[0]].append(r)
    failing = [r for r in recs.values() if r["outcome"] in FAILING]
    cats = collections.Counter(r.get("category", "other") for r in failing)
    details = collections.Counter((r.get("category", "other"), r.get("detail", "")) for r in failing)
    missing = collections.Counter(r["detail"] for r in failing if r.get("category") == "missing function")
    acc = [r for r in recs.values() if r["module"].split("/")[0] in ACCEPTANCE]
    tests = sorted(({"id": r["id"].split("cupy_tests/", 1)[-1], "outcome": r["outcome"],
                     **({"category": r.get("category", "other"), "detail": r.get("detail", ""),
                         "msg": _one_line(r.get("msg", ""))} if r["outcome"] in FAILING else {}),
                     **({"reason": (r.get("skip_reason") or r.get("msg") or "")[:160]}
                        if r["outcome"] in ("skipped", "xfailed") else {})}
                    for r in recs.values()), key=lambda t: t["id"])
    module_reasons = collections.Counter((r["module"], r.get("category", "other"), r.get("detail", ""))
                                         for r in failing)
    selection = {}
    if args.gpu_only:  # which listed tests ran: a test renamed or not collected there shows here
        listed, ran = gpu_list(), {t["id"] for t in tests}
        selection = {"gpu_only_listed": len(listed), "gpu_only_not_run": [t for t in listed if t not in ran]}
    return {
        "meta": {
            "what": "CuPy's own test suite (tests/cupy_tests of CuPy " + CUPY_VERSION + ") run against loom "
                    "through the shim in tests/cupy/shim",
            "cupy_version": CUPY_VERSION,
            "date": datetime.date.today().isoformat(),
            "machine": f"{platform.node()} ({os.cpu_count()} CPUs), {platform.platform()}",
            "command": "scripts/cupy_suite.sh " + " ".join(sys.argv[1:]),
            "set": ("gpu-only" if args.gpu_only else "merged runs" if args.merge else "paths " + " ".join(args.paths)
                    if args.paths else "all" if args.all else "acceptance"),
            "sample": args.sample,
            "no_complex": args.no_complex,
            "gpu": gpu,
            "slow_tests": "run" if args.slow else "deselected (-m 'not slow', as CuPy's CI)",
            "wall_s": round(wall, 1),
            "test_time_s": round(sum(r.get("duration", 0) for r in recs.values()), 1),
            "loom_version": _version(args.python, "loom"),
            "numpy_version": _version(args.python, "numpy"),
            "pass_rate_is": "passed / (passed + failed + errors); skipped and xfailed tests are not counted",
            **selection,
        },
        "totals": counts(list(recs.values())),
        "acceptance_totals": counts(acc),
        "directories": {d: counts(v) for d, v in sorted(dirs.items())},
        "modules": modules,
        "categories": [{"category": k, "tests": n} for k, n in cats.most_common()],
        "reasons": [{"category": k[0], "detail": k[1], "tests": n} for k, n in details.most_common()],
        "missing_functions": [{"name": k, "tests": n} for k, n in missing.most_common()],
        "module_reasons": [{"module": k[0], "category": k[1], "detail": k[2], "tests": n}
                           for k, n in sorted(module_reasons.items(), key=lambda kv: (kv[0][0], -kv[1]))],
        "tests": tests,
    }


def _one_line(s):
    s = s or ""
    if s.startswith(("Only cupy raises error", "Different types of errors", "Both cupy and numpy raise")):
        head = s.split("\n")[0]
        lines = [ln for ln in s.split("\nnumpy\n")[0].splitlines() if ln and not ln.startswith((" ", "Traceback"))]
        return f"{head}: {lines[-1] if len(lines) > 1 else ''}"[:200]
    return s.split("\n")[0][:200]


def _version(python, mod):
    try:
        return subprocess.run([python, "-c", f"import {mod}; print({mod}.__version__)"], capture_output=True,
                              text=True, timeout=60, cwd=tempfile.gettempdir()).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def pct(x):
    return "-" if x is None else f"{100 * x:.1f} %"


def markdown(s):
    m = s["meta"]
    out = [f"# CuPy's test suite on loom ({m['date']}, {m['set']} set{', sample ' + m['sample'] if m['sample'] else ''}"
           f"{', complex dtypes dropped from the dtype loops' if m['no_complex'] else ''})", "",
           f"CuPy {m['cupy_version']} tests (vendored in tests/cupy/vendor), loom {m['loom_version']}, NumPy "
           f"{m['numpy_version']}; machine: {m['machine']}; time in tests {m['test_time_s']:.0f} s (wall time of "
           f"this invocation {m['wall_s']:.0f} s; a run resumed from --work-dir counts only its own part).",
           f"Command: `{m['command']}`. Pass rate = {m['pass_rate_is']}.",
           "" if m.get("gpu") else "loom's device here is the host: tests failing only for want of a CUDA device "
           "(tests/cupy/README.md, 'Tests that need a CUDA device') are counted as skipped (column 'needs device').",
           ""]
    if "gpu_only_listed" in m:
        miss = m["gpu_only_not_run"]
        out += [f"GPU-only set: the {m['gpu_only_listed']} tests of tests/cupy/gpu_only_tests.txt (those the host run "
                f"skips for want of a CUDA device); {len(miss)} of them did not run here"
                + (": " + ", ".join(f"`{t}`" for t in miss[:20]) + (" ..." if len(miss) > 20 else "") if miss else "")
                + ".", ""]
    t, a = s["totals"], s["acceptance_totals"]
    out += ["| set | tests | passed | failed | errors | skipped | xfailed | pass rate |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, c in (("all run", t), ("acceptance directories", a)):
        out.append(f"| {name} | {c['total']} | {c['passed']} | {c['failed']} | {c['errors']} | {c['skipped']} | "
                   f"{c['xfailed']} | {pct(c['pass_rate'])} |")
    out += ["", "## Per directory", "",
            "| directory | tests | passed | failed | errors | skipped | of them: needs device | pass rate |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for d, c in s["directories"].items():
        out.append(f"| {d} | {c['total']} | {c['passed']} | {c['failed']} | {c['errors']} | {c['skipped']} | "
                   f"{c.get('skipped_needs_device', 0)} | {pct(c['pass_rate'])} |")
    out += ["", "## Failure categories", "", "| category | failing tests |", "|---|---:|"]
    out += [f"| {c['category']} | {c['tests']} |" for c in s["categories"]]
    out += ["", "## Missing functions (tests each one fails)", "", "| function | tests |", "|---|---:|"]
    out += [f"| `{c['name']}` | {c['tests']} |" for c in s["missing_functions"]]
    out += ["", "## Top reasons (category, detail)", "", "| category | detail | tests |", "|---|---|---:|"]
    out += [f"| {c['category']} | {c['detail'] or ''} | {c['tests']} |" for c in s["reasons"][:80]]
    out += ["", "## Per module", "", "| module | tests | passed | failed | errors | skipped | pass rate | collection error |",
            "|---|---:|---:|---:|---:|---:|---:|---|"]
    for mod, c in s["modules"].items():
        ce = c.get("collection_error", "").replace("|", "/")
        out.append(f"| {mod} | {c['total']} | {c['passed']} | {c['failed']} | {c['errors']} | {c['skipped']} | "
                   f"{pct(c['pass_rate'])} | {ce} |")
    nfail = sum(1 for t in s["tests"] if t["outcome"] in FAILING)
    out += ["", f"## Failing tests by module and reason ({nfail} tests; every one, with its message, is in the "
            "tests file: `*-tests.jsonl.gz`, one JSON object per test)", "",
            "| module | category | detail | tests |", "|---|---|---|---:|"]
    out += [f"| {r['module']} | {r['category']} | {(r['detail'] or '').replace('|', '/')[:100]} | {r['tests']} |"
            for r in s["module_reasons"]]
    out += ["", "## Failing tests, one row per test function (parametrizations collapsed)", ""]
    out += failure_table.markdown(s["tests"])
    return "\n".join(out) + "\n"


def _shown_path(path):
    """path relative to the repository when it is inside it, else as given."""
    p = os.path.relpath(os.path.abspath(path), ROOT)
    return path if p.startswith("..") else p


def from_tests_file(args):
    """--failure-table, --update-readme, --write-gpu-list: work on an earlier run's tests file."""
    if args.failure_table:
        print("\n".join(failure_table.markdown(failure_table.read_tests(args.failure_table))))
    if args.update_readme:
        tests = failure_table.read_tests(args.update_readme)
        acc = [t for t in tests if t["id"].split("/")[0] in ACCEPTANCE]
        c = counts([{"outcome": t["outcome"]} for t in acc])
        note = (f"From `{_shown_path(args.update_readme)}`: of the acceptance set's "
                f"{c['passed'] + c['failed'] + c['errors']} judged tests, {c['passed']} pass ({pct(c['pass_rate'])}), "
                f"{c['failed']} fail, {c['errors']} are errors; {c['skipped']} skipped.")
        failure_table.update_readme(README, acc, note)
        print(f"run_suite: updated {os.path.relpath(README, ROOT)}")
    if args.write_gpu_list:
        tests = failure_table.read_tests(args.write_gpu_list)
        ids = sorted(t["id"] for t in tests if t["outcome"] == "skipped"
                     and (t.get("reason") or "").startswith(GPU_SKIP_REASONS))
        with open(GPU_LIST, "w") as f:
            f.write(f"# The tests a host run skips for want of a CUDA device (tests/cupy/README.md), from\n"
                    f"# {_shown_path(args.write_gpu_list)}; scripts/cupy_suite.sh "
                    f"--gpu-only runs them. Written by run_suite.py --write-gpu-list.\n")
            f.writelines(i + "\n" for i in ids)
        print(f"run_suite: wrote {len(ids)} test ids to {os.path.relpath(GPU_LIST, ROOT)}")
    return 0


def main(argv):
    args = parse_args(argv)
    if args.failure_table or args.update_readme or args.write_gpu_list:
        return from_tests_file(args)
    if args.merge:
        return report(args, merged_records(args.merge), 0.0)
    chunks = chunks_of(args)
    if not chunks:
        print("run_suite: no tests to run", file=sys.stderr)
        return 2
    t0 = time.time()
    recs = {}
    with tempfile.TemporaryDirectory(prefix="cupy-suite-") as tmp:
        work = args.work_dir or tmp
        os.makedirs(work, exist_ok=True)
        log_path = args.log or os.path.join(tmp, "pytest.log")
        with open(log_path, "a" if args.log else "w") as log:
            if args.jobs > 1:
                from concurrent.futures import ThreadPoolExecutor
                with ThreadPoolExecutor(args.jobs) as ex:
                    for r in ex.map(lambda c: run_chunk(args, c, work, log), chunks):
                        recs.update(r)
            else:
                for c in chunks:
                    recs.update(run_chunk(args, c, work, log))
                    print(f"run_suite: {os.path.relpath(c, SUITE)}: {len(recs)} tests so far, "
                          f"{time.time() - t0:.0f} s", flush=True)
        if not recs:
            print(open(log_path).read()[-5000:], file=sys.stderr)
            print("run_suite: no test ran (see the pytest log above)", file=sys.stderr)
            return 2
    return report(args, recs, time.time() - t0)


def merged_records(dirs):
    """{test id: record} of the results files in the work directories dirs (later ones win)."""
    recs = {}
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if name.endswith(".jsonl"):
                recs.update(read_results(os.path.join(d, name))[0])
    return recs


def report(args, recs, wall):
    """Summarizes recs, writes the result files and prints the figures; the exit status."""
    s = summarize(args, recs, wall)
    if not args.no_write:
        path = args.json or os.path.join(ROOT, "bench", "results", f"{s['meta']['date']}-cupy-suite-{args.tag}.json")
        md = args.md or os.path.splitext(path)[0] + ".md"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tests_path = os.path.splitext(path)[0] + "-tests.jsonl.gz"
        with open(path, "w") as f:
            json.dump({k: v for k, v in s.items() if k != "tests"}, f, indent=1)
            f.write("\n")
        with gzip.open(tests_path, "wt") as f:
            f.writelines(json.dumps(t) + "\n" for t in s["tests"])
        with open(md, "w") as f:
            f.write(markdown(s))
        print(f"run_suite: wrote {os.path.relpath(path, ROOT)}, {os.path.relpath(tests_path, ROOT)} and "
              f"{os.path.relpath(md, ROOT)}")
    t = s["totals"]
    print(f"run_suite: {t['total']} tests: {t['passed']} passed, {t['failed']} failed, {t['errors']} errors, "
          f"{t['skipped']} skipped, {t['xfailed']} xfailed; pass rate {pct(t['pass_rate'])}; "
          f"{s['meta']['wall_s']:.0f} s")
    for d, c in s["directories"].items():
        print(f"  {d:24s} {c['total']:6d} tests  {c['passed']:6d} passed  {c['failed']:5d} failed  "
              f"{c['errors']:4d} errors  {c['skipped']:5d} skipped  {pct(c['pass_rate'])}")
    print("top failure categories: " + ", ".join(f"{c['category']} {c['tests']}" for c in s["categories"][:8]))
    if args.list_failures:
        for f in s["tests"]:
            if f["outcome"] in FAILING:
                print(f"FAIL {f['id']}  [{f['category']}] {f['detail']}")
    if args.min_pass_rate is not None and (t["pass_rate"] or 0) < args.min_pass_rate:
        print(f"run_suite: pass rate {pct(t['pass_rate'])} is below the threshold {pct(args.min_pass_rate)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
