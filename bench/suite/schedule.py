"""schedule.py: Loom's schedule of each workload as data: kernels, and the bytes each kernel reads and
writes, from the schedule text that LOOM_DUMP=kernels prints (passes/schedule_print.c's stable form:
"temp I DTYPE NELEM" lines, then per kernel "kernel NAME ...", "buf B in|out DTYPE [...]" lines and
one "run [shape] in0+off[strides] temp0+off[...] out0+off[...]" line). A buffer touches the product of
the iteration extents along which its stride is nonzero.

The Python API does not expose loom_dump (C) yet, and LOOM_DUMP is read when the context is created,
so the facts are taken in a child process:  python -m bench.suite.schedule [--size test] [names...]
prints one JSON object {name: {"kernels": n, "per_kernel": [{"name", "read", "write", "phases"}], "error"}}.
Bytes are what each kernel addresses, each buffer once (views of one buffer, such as x and x.T or
x[0::2] and x[1::2], count the memory they cover once); "phases" counts its phase lines (a row kernel
of softmax has max, sum and map phases).
"""
import json
import os
import re
import subprocess
import sys

_ITEMSIZE = {"b1": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "f16": 2, "bf16": 2, "i32": 4, "u32": 4, "f32": 4,
             "i64": 8, "u64": 8, "f64": 8}
_MARK = "=== loom-suite workload "


def parse_schedule(text):
    """[{name, read, write}] per kernel of one '# schedule' dump."""
    kernels = []
    cur = None
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"kernel (\S+) ", s)
        if m:
            cur = {"name": m.group(1), "bufs": [], "read": 0, "write": 0, "phases": 0}
            kernels.append(cur)
            continue
        m = re.match(r"buf (\d+) (in|out) (\S+)", s)
        if m and cur is not None:
            cur["bufs"].append((m.group(2), m.group(3)))
            continue
        if s.startswith("run [") and cur is not None:
            shape = [int(v) for v in re.match(r"run \[([^\]]*)\]", s).group(1).split(",") if v]
            # "index-1+0[1,0]": a buffer the kernel computes from the point's index (an arange under
            # @loom.fuse, read as an `offset`): it touches no memory, but holds its buf's place
            binds = re.findall(r"(in|temp|out|index)(-?\d+)([+-]\d+)\[([^\]]*)\]", s)
            groups = {}   # (direction, kind, index) -> [touched elements, itemsize, [(first, last)]]
            for (direction, dt), (kind, idx, off, strides) in zip(cur["bufs"], binds):
                if kind == "index":
                    continue
                st = [int(v) for v in strides.split(",") if v]
                n, first, last = 1, int(off), int(off)
                for extent, stride in zip(shape, st):
                    if stride != 0:
                        n *= extent
                        last += (extent - 1) * stride if stride > 0 else 0
                        first += (extent - 1) * stride if stride < 0 else 0
                g = groups.setdefault((direction, kind, idx), [0, _ITEMSIZE.get(dt, 8), []])
                g[0] += n
                g[2].append((first, last))
            for (direction, _k, _i), (n, size, spans) in groups.items():
                # views of one buffer (x and x.T, x[0::2] and x[1::2]) count the memory they cover once
                spans.sort()
                covered, (lo, hi) = 0, spans[0]
                for a, b in spans[1:]:
                    if a > hi + 1:
                        covered += hi - lo + 1
                        lo, hi = a, b
                    else:
                        hi = max(hi, b)
                covered += hi - lo + 1
                cur["read" if direction == "in" else "write"] += min(n, covered) * size
        elif s.startswith("phase ") and cur is not None:
            cur["phases"] = cur.get("phases", 0) + 1
    for k in kernels:
        del k["bufs"]
    return kernels


def _child(size, names):
    import numpy as np
    import loom
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from bench.suite import workloads as W
    from bench.suite.inputs import host_inputs
    for name in names:
        w = W.lookup(name)
        try:
            args = [loom.asarray(a) for a in host_inputs(w, size)]
            f = loom.fuse(kernel_name=w.name)(lambda *a, w=w: w.fn(loom, *a))
            sys.stderr.write(_MARK + name + "\n")
            sys.stderr.flush()
            out = f(*args)
            loom.eval(*(out if isinstance(out, tuple) else (out,)))
            sys.stderr.write(_MARK + "end " + str(loom.stats()["last_eval_kernels"]) + "\n")
        except Exception as e:  # noqa: BLE001
            sys.stderr.write(_MARK + "error " + f"{type(e).__name__}: {e}".replace("\n", " ")[:300] + "\n")
        sys.stderr.flush()
    _ = np


def collect(size="test", names=None, python=sys.executable):
    """{name: {"kernels", "per_kernel", "error"}} for the workloads (all by default)."""
    from bench.suite import workloads as W
    names = names or [w.name for w in W.WORKLOADS]
    # the host schedule, also on a GPU machine (a GPU splits full reductions into two kernels)
    env = dict(os.environ, LOOM_DUMP="kernels", CUDA_VISIBLE_DEVICES="")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([python, "-c", "import sys; from bench.suite.schedule import _child; "
                        f"_child({size!r}, sys.argv[1:])", *names], cwd=root, env=env,
                       capture_output=True, text=True, timeout=900)
    facts = {}
    cur, buf = None, []
    for line in p.stderr.splitlines(keepends=True):
        if line.startswith(_MARK):
            rest = line[len(_MARK):].strip()
            if rest.startswith("end ") and cur:
                dumps = "".join(buf).split("# schedule")
                per = parse_schedule(dumps[-1]) if len(dumps) > 1 else []
                facts[cur] = {"kernels": len(per), "per_kernel": per, "stats_kernels": int(rest[4:])}
                cur = None
            elif rest.startswith("error ") and cur:
                facts[cur] = {"kernels": None, "per_kernel": [], "error": rest[6:]}
                cur = None
            else:
                cur, buf = rest, []
        elif cur:
            buf.append(line)
    for n in names:
        facts.setdefault(n, {"kernels": None, "per_kernel": [],
                             "error": f"child process failed (exit {p.returncode}): {p.stderr[-300:]}"})
    return facts


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="test")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    print(json.dumps(collect(a.size, a.names or None), indent=1))
