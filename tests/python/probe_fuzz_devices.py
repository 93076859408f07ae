"""probe_fuzz_devices.py SEED: runs one test_fuzz_numpy program and prints, per step, its code and the
device of loom's value (a debugging aid for device mix-ups that show only on a GPU)."""
import sys

import test_fuzz_numpy as t

orig = t.run_step


def traced(prog, i, vals, xp):
    r = orig(prog, i, vals, xp)
    if xp is t.loom:
        s, v = prog.steps[i], r[i]
        args = ", ".join(f"v{a}" if isinstance(a, int) else repr(a) for a in s.args)
        dev = getattr(v.value, "device", None)
        print(f"v{i}: {s.kind}:{s.op}({args}) -> {dev} {getattr(v.value, 'shape', '')} exc={v.exc!r}"[:300])
        state = " ".join(f"v{j}:{'L' if x.value._lazy else 'M'}{'g' if x.value._on_gpu else 'h'}"
                         for j, x in enumerate(r) if isinstance(getattr(x, "value", None), t.loom.ndarray))
        print("   ", state)
    return r


t.run_step = traced
for m in t.fuzz_one(int(sys.argv[1])):
    print(m.describe())
