"""diag_ir.py: what the host LLVM IR of every suite workload looks like, for DIAGNOSIS.md. Runs the
workloads (test sizes) with LOOM_DUMP=llvm in a child process and prints per workload: the widest
vector type in the optimized IR, vector and scalar math-library calls, pow calls, and whether an
arg-reduction loop stayed scalar.

    python bench/suite/diag_ir.py [names...]
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from bench.suite import workloads as W  # noqa: E402

_MARK = "=== loom-suite ir "
_CHILD = """
import sys
sys.path.insert(0, %r)
import loom
from bench.suite import workloads as W
from bench.suite.inputs import host_inputs
for name in sys.argv[1:]:
    w = W.lookup(name)
    try:
        args = [loom.asarray(a) for a in host_inputs(w, "test")]
        f = loom.fuse(kernel_name=name)(lambda *a, w=w: w.fn(loom, *a))
        sys.stderr.write(%r + name + "\\n"); sys.stderr.flush()
        f(*args)
    except Exception as e:
        sys.stderr.write("error " + str(e)[:100] + "\\n")
    sys.stderr.flush()
"""


def analyse(ir):
    # widths of the vectors the code loads, stores or passes to math calls (not of declarations)
    vec = re.findall(r"(?:load|store|call) <(\d+) x (float|double|half|i\d+)>", ir)
    widths = sorted({int(n) * {"float": 32, "double": 64, "half": 16}.get(t, int(t[1:]) if t[0] == "i" else 32)
                     for n, t in vec}, reverse=True)
    vcalls = re.findall(r"call <\d+ x \w+> @(_ZGV\w+)", ir)
    scalls = re.findall(r"call (?:float|double) @(\w+)\(", ir)
    scalls = [c for c in scalls if not c.startswith("llvm.")]
    pows = [c for c in vcalls + scalls if "pow" in c]
    return {"max_vector_bits": widths[0] if widths else 0, "vector_calls": sorted(set(vcalls)),
            "scalar_calls": sorted(set(scalls)), "pow": sorted(set(pows))}


def main(names):
    """One line per workload (see the module docstring)."""
    names = names or [w.name for w in W.WORKLOADS]
    env = dict(os.environ, LOOM_DUMP="llvm", CUDA_VISIBLE_DEVICES="")
    p = subprocess.run([sys.executable, "-c", _CHILD % (ROOT, _MARK), *names], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=900)
    chunks = p.stderr.split(_MARK)[1:]
    for c in chunks:
        name, _, ir = c.partition("\n")
        a = analyse(ir)
        print(f"{name:22s} vec {a['max_vector_bits']:3d} bits  vector calls {','.join(a['vector_calls']) or '-'}  "
              f"scalar calls {','.join(a['scalar_calls']) or '-'}  pow {','.join(a['pow']) or '-'}")


if __name__ == "__main__":
    main(sys.argv[1:])
