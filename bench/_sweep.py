"""_sweep.py: what the knob sweeps (bench/scan_sweep.py, bench/sort_sweep.py) share.

- In the sweeps (imported; bench/ is first on sys.path): `table` (a markdown table) and `write_report`
  (bench/results/<date>-<kind>-sweep-<h200|host>.{json,md}: the machine, date, command and the table).
- On the GPU machine (run by bench/scan_sweep.sh and bench/sort_sweep.sh, from the repository root, after
  they source .devkit/setup.sh): `python3 bench/_sweep.py <scan|sort> [repeats] [budget_s]` builds the
  package as scripts/gpu_all.sh does (the devkit's LLVM, SLEEF from build-gpukit/, a .venv-gpu seeing the
  machine's numpy / cupy / torch), runs bench/<kind>_sweep.py, then bench/bench_<kind>.py when
  LOOM_SWEEP_BENCH_<KIND>=1, and copies the results into $OUT. Exit: the sweep's status.
"""
import datetime
import glob
import json
import os
import platform
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULTS = {"scan": ("10", "100"), "sort": ("5", "110")}  # repeats, budget_s


def table(header, rows):
    """The markdown lines of a table: header cells, then one list of cells per row."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
        ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]


def write_report(kind, title, out, text, gpu):
    """Writes out (plus machine, date, gpu) as <date>-<kind>-sweep-<tag>.json and the text under a title
    as the .md beside it; prints and returns the base path."""
    date = os.environ.get("LOOM_BENCH_DATE", datetime.date.today().isoformat())
    tag = "h200" if gpu else "host"
    base = os.path.join(ROOT, "bench", "results", f"{date}-{kind}-sweep-{tag}")
    full = {"machine": platform.node(), "processor": platform.processor(), "cpus": os.cpu_count(), "gpu": gpu,
            "date": date}
    full.update(out)
    with open(base + ".json", "w") as fh:
        json.dump(full, fh, indent=1)
    with open(base + ".md", "w") as fh:
        fh.write(f"# {title} ({tag}, {date})\n\n`{full.get('command', '')}` on {full['machine']}\n\n{text}\n")
    print("wrote", base + ".json", "and .md")
    return base


def _python():
    """The interpreter to build with: $PYTHON, else a .venv-gpu over the system's packages when it has
    scikit-build-core and numpy, else python3."""
    if os.environ.get("PYTHON"):
        return os.environ["PYTHON"]
    venv = os.path.join(ROOT, ".venv-gpu")
    py = os.path.join(venv, "bin", "python")
    made = subprocess.run(["python3", "-m", "venv", "--clear", "--system-site-packages", "--without-pip", venv],
                          capture_output=True).returncode == 0
    if made and subprocess.run([py, "-c", "import scikit_build_core, numpy"], capture_output=True).returncode == 0:
        return py
    return "python3"


def _install(py, kind, env):
    """pip-installs the package (build dir build-gpu/python); False (and the log's tail) when it fails."""
    args = []
    sleef = os.path.join(ROOT, "build-gpukit", "libsleefgnuabi.so.3")
    have = subprocess.run("ldconfig -p | grep -q libsleefgnuabi", shell=True).returncode == 0
    if os.path.exists(sleef) and not have:
        kit = os.path.join(ROOT, "build-gpukit")
        args = [f"--config-settings=cmake.define.LOOM_SLEEF_LIB={sleef}",
                f"--config-settings=cmake.define.LOOM_SLEEF_SCALAR_LIB={kit}/libsleef.so.3"]
        env["LD_LIBRARY_PATH"] = kit + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    os.makedirs(os.path.join(ROOT, "build-gpu", "logs"), exist_ok=True)
    log = os.path.join(ROOT, "build-gpu", "logs", f"{kind}_sweep_pip.log")
    t0 = time.time()
    with open(log, "w") as fh:
        try:
            rc = subprocess.run([py, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
                                 "--config-settings=build-dir=build-gpu/python"] + args + ["."], cwd=ROOT,
                                env=dict(env, CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count())), stdout=fh,
                                stderr=subprocess.STDOUT, timeout=400).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    if rc != 0:
        print(f"{kind}_sweep: pip install failed:")
        with open(log) as fh:
            print("".join(fh.readlines()[-30:]))
        return False
    print(f"{kind}_sweep: package built in {time.time() - t0:.0f} s", flush=True)
    return True


def main(argv):
    if len(argv) < 1 or argv[0] not in DEFAULTS:
        print("usage: python3 bench/_sweep.py <scan|sort> [repeats] [budget_s]", file=sys.stderr)
        return 2
    kind = argv[0]
    repeats = argv[1] if len(argv) > 1 else DEFAULTS[kind][0]
    budget = argv[2] if len(argv) > 2 else DEFAULTS[kind][1]
    env = dict(os.environ)
    py = _python()
    if not _install(py, kind, env):
        return 1
    date = datetime.date.today().isoformat()
    env.update(PYTHONUNBUFFERED="1", LOOM_BENCH_DATE=date)
    rc = subprocess.run([py, f"bench/{kind}_sweep.py", repeats, budget], cwd=ROOT, env=env).returncode
    if env.get(f"LOOM_SWEEP_BENCH_{kind.upper()}", "0") == "1":
        try:
            subprocess.run([py, f"bench/bench_{kind}.py"], cwd=ROOT, env=env, timeout=90)
        except subprocess.TimeoutExpired:
            print(f"bench_{kind}.py: over 90 s, stopped")
    out = os.environ.get("OUT")
    if out:
        for f in glob.glob(os.path.join(ROOT, "bench", "results", f"{date}-{kind}-*h200.*")):
            shutil.copy(f, out)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
