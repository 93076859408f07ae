#!/usr/bin/env python3
"""fuzz_numpy.py: long runs of the loom-vs-NumPy differential fuzzer (tests/python/test_fuzz_numpy.py).

    python3 scripts/fuzz_numpy.py --graphs 100000 --seed 1            # a fixed number of graphs
    python3 scripts/fuzz_numpy.py --minutes 30 --report fuzz.md       # as many as fit in 30 minutes

Runs the seeds in order in this one process (one core); prints every NEW mismatch class as it is found
(with its minimal reproducer: the steps the mismatching value depends on, as a program over `xp` that
runs with xp = numpy and xp = loom), progress every --every graphs, and at the end a summary: graphs,
seeds, time, the unexpected mismatch classes with counts, and the hits of each known deviation
(KNOWN in the test module). --report writes the same as markdown. Exit status 1 when an unexpected
class was found. The run uses the installed loom package (scripts/setup.sh installs it).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
import test_fuzz_numpy as fz  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", type=int, default=100000, help="number of graphs (default 100000)")
    ap.add_argument("--seed", type=int, default=1, help="first seed (graph k uses seed + k)")
    ap.add_argument("--minutes", type=float, default=None, help="stop after this many minutes")
    ap.add_argument("--every", type=int, default=1000, help="progress line every N graphs")
    ap.add_argument("--report", default=None, help="write a markdown report here")
    a = ap.parse_args()
    t0 = time.monotonic()
    deadline = t0 + a.minutes * 60 if a.minutes else None
    classes, known_hits = {}, {}
    ran = 0
    seed = a.seed
    while ran < a.graphs and (deadline is None or time.monotonic() < deadline):
        mism = fz.fuzz_one(seed)
        un, kn = fz.classify(mism)
        for k, _m in kn:
            known_hits[k.name] = known_hits.get(k.name, 0) + 1
        for m in un:
            if m.key() not in classes:
                classes[m.key()] = [m, 0, seed]
                print(f"\n=== new mismatch class #{len(classes)} (seed {seed})\n{m.describe()}\n", flush=True)
            classes[m.key()][1] += 1
        ran += 1
        seed += 1
        if ran % a.every == 0:
            el = time.monotonic() - t0
            print(f"[{el:8.1f} s] {ran} graphs ({ran / el:.1f}/s), {len(classes)} unexpected classes, "
                  f"{sum(known_hits.values())} known-deviation hits", flush=True)
    el = time.monotonic() - t0
    lines = [f"# loom vs NumPy fuzz run", "",
             f"graphs {ran}, seeds {a.seed}..{a.seed + ran - 1}, {el:.1f} s ({ran / max(el, 1e-9):.1f} graphs/s), "
             f"numpy {fz.np.__version__}, loom {fz.loom.__version__}", "",
             f"## unexpected mismatch classes: {len(classes)}", ""]
    for i, (m, count, first) in enumerate(classes.values(), 1):
        lines += [f"### {i}. {m.kind} in {m.step.kind}:{m.op} {m.sig} ({count} graphs, first seed {first})", "",
                  "```", m.describe(), "```", ""]
    lines += ["## known deviations (tests/python/test_fuzz_numpy.py KNOWN)", ""]
    for k in fz.KNOWN:
        lines.append(f"- {k.name} ({k.item}): {known_hits.get(k.name, 0)} hits. {k.reason}")
    text = "\n".join(lines)
    print("\n" + text)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text + "\n")
    return 1 if classes else 0


if __name__ == "__main__":
    sys.exit(main())
