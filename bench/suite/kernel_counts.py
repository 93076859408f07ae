"""kernel_counts.py: how many kernels Loom plans for every workload of the bench tables, without running them.

Each workload's inputs are made at a machine's sizes (host memory: the "h100"/"h200" sizes need a few GB) and
its expression is inspected (loom.inspect, what="kernels"): the host plan, or with --ptx the plan compiled for
the GPU target (sm_90). A change to the fuser or the lowering shows as a diff of two runs' JSON:

  python3 bench/suite/kernel_counts.py --size h200 --out /tmp/before.json
  python3 bench/suite/kernel_counts.py --size h200 --out /tmp/after.json --diff /tmp/before.json
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from bench.suite import inputs as I  # noqa: E402
from bench.suite import workloads as W  # noqa: E402


def count(loom, w, size, ptx):
    args = [loom.asarray(a) for a in I.host_inputs(w, size)]
    out = w.fn(loom, *args)
    outs = list(out) if isinstance(out, tuple) else [out]
    pending = [o for o in outs if isinstance(o, loom.ndarray)]
    if not pending:
        return 0
    kw = {"ptx_arch": "sm_90"} if ptx else {}
    text = loom.inspect(pending if len(pending) > 1 else pending[0], what="kernels", **kw)["kernels"]
    return len(re.findall(r"^kernel ", text, flags=re.M))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="cpu", help="the machine whose sizes the inputs take (cpu, h100, h200)")
    ap.add_argument("--tables", default="suite,probe,fresh,fresh2")
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--ptx", action="store_true", help="the GPU target's plan (inspect with ptx_arch)")
    ap.add_argument("--out", default="")
    ap.add_argument("--diff", default="", help="a JSON of an earlier run: print the workloads whose count changed")
    a = ap.parse_args()
    import loom
    only = set(filter(None, a.only.split(",")))
    res = {}
    for t in a.tables.split(","):
        for w in W.table(t):
            if only and w.name not in only:
                continue
            try:
                res[w.name] = count(loom, w, a.size, a.ptx)
            except Exception as e:  # a workload Loom cannot plan is reported, not fatal
                res[w.name] = f"error: {type(e).__name__}: {e}"[:200]
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
    if a.diff:
        old = json.load(open(a.diff))
        for name in sorted(res):
            if old.get(name) != res[name]:
                print(f"{name}: {old.get(name)} -> {res[name]}")
    else:
        for name, n in res.items():
            print(f"{name}: {n}")


if __name__ == "__main__":
    main()
