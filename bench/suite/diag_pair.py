"""diag_pair.py: paired timings of suite workloads under several builds or settings of Loom (and peers),
for codegen changes that one process cannot hold twice (a compiler build, LOOM_HOST_VECTOR_BITS, ...).

Each side is a worker process (its own interpreter, environment and library); the driver asks the
workers for one sample each in turn (A B C A B C ...), so a change of the shared machine's load falls on
every side alike, as in one process. A sample is a batch of calls lasting >= 1 ms (every call
synchronized). Every side's first output is checked against NumPy in float64 (run.py's tolerance).

    python bench/suite/diag_pair.py --side base=/work/venvs/x-base/bin/python:loom \\
        --side new=/work/venvs/x/bin/python:loom --side vw256=/work/venvs/x/bin/python:loom:LOOM_HOST_VECTOR_BITS=256 \\
        --side jax=/work/venvs/x/bin/python:jax [--size cpu] [--rounds 9] names...

A side is NAME=PYTHON:LIB[:VAR=VALUE,...] (LIB: a library name of libs.py: loom, loom_lazy, numpy, jax,
torch, torch_compile, numexpr, numba). Prints per workload each side's median and best ms and the
ratios to the first side; --json FILE also writes them.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---- worker ---------------------------------------------------------------------------------------------
def worker(lib_name, size):
    sys.path.insert(0, ROOT)
    import numpy as np  # noqa: F401
    from bench.suite import libs as L
    from bench.suite import run as R
    from bench.suite import workloads as W
    from bench.suite.inputs import host_inputs

    env = R.Env("cpu")
    cls = {c.name: c for c in L.CPU_LIBS}[lib_name]
    lib = cls(env)
    cur = None
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        out = {}
        try:
            if cmd == "prep":
                w = W.lookup(arg)
                master = host_inputs(w, size)
                ref = R.reference(env, w, master)
                args = lib.prepare([a.copy() for a in master])
                f = lib.build(w)
                t0 = time.perf_counter()
                got = f(*args)
                lib.sync(got)
                out["first_call_s"] = time.perf_counter() - t0
                expect = R.out_dtypes(w)
                err, _ = R.compare(env, w, got, ref, expect, sum(a.size for a in master))
                out["error"] = err
                cur = R.Timed(lib, f, args, "cpu")
            elif cmd == "sample":
                out["s"] = cur._batch()
            elif cmd == "quit":
                break
        except Exception as e:  # noqa: BLE001 (reported to the driver)
            out["error"] = f"{type(e).__name__}: {e}"[:300]
        print(json.dumps(out), flush=True)


# ---- driver ---------------------------------------------------------------------------------------------
class Side:
    def __init__(self, spec, size):
        name, _, rest = spec.partition("=")
        parts = rest.split(":")
        self.name, self.python, self.lib = name, parts[0], parts[1]
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as run.py: OpenMP workers must not spin into the next side
        env.setdefault("KMP_BLOCKTIME", "0")
        for kv in (parts[2].split(",") if len(parts) > 2 and parts[2] else []):
            k, _, v = kv.partition("=")
            env[k] = v
        self.p = subprocess.Popen([self.python, os.path.abspath(__file__), "--worker", self.lib, "--size", size],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd="/tmp")

    def ask(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            return {"error": "worker exited"}
        return json.loads(line)

    def close(self):
        try:
            self.ask("quit")
        except Exception:  # noqa: BLE001
            pass
        self.p.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--size", default="cpu")
    ap.add_argument("--side", action="append", default=[])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--gap-ms", type=float, default=0.0,
                    help="idle pause before every sample (lets other sides' spinning threads go to sleep)")
    ap.add_argument("--json")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker, a.size)
    sides = [Side(s, a.size) for s in a.side]
    results = []
    load0 = os.getloadavg()
    try:
        for name in a.names:
            row = {"name": name, "sides": {}}
            live = []
            for s in sides:
                r = s.ask("prep " + name)
                row["sides"][s.name] = {"first_call_s": r.get("first_call_s"), "error": r.get("error"), "samples": []}
                if not r.get("error"):
                    live.append(s)
            for rnd in range(a.rounds):
                for s in live[rnd % len(live):] + live[:rnd % len(live)]:  # rotated: see run.py time_round_robin
                    if a.gap_ms > 0:
                        time.sleep(a.gap_ms / 1e3)
                    r = s.ask("sample")
                    if "s" in r:
                        row["sides"][s.name]["samples"].append(r["s"] * 1e3)
            cells = []
            base = None
            for s in sides:
                d = row["sides"][s.name]
                if d["samples"]:
                    d["median_ms"], d["min_ms"] = statistics.median(d["samples"]), min(d["samples"])
                    if base is None:
                        base = d
                    cells.append(f"{s.name} {d['median_ms']:.3f}/{d['min_ms']:.3f}"
                                 f" (x{base['median_ms'] / d['median_ms']:.2f}/{base['min_ms'] / d['min_ms']:.2f})")
                else:
                    cells.append(f"{s.name} error: {d['error']}")
            print(f"{name:22s} " + "  ".join(cells), flush=True)
            results.append(row)
    finally:
        for s in sides:
            s.close()
    print(f"load average {load0} -> {os.getloadavg()}; cells: median/best ms (speed-up vs the first side)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"sides": a.side, "size": a.size, "load": [load0, os.getloadavg()], "workloads": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
