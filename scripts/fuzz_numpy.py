#!/usr/bin/env python3
"""fuzz_numpy.py: long runs of the loom-vs-NumPy differential fuzzer (tests/python/test_fuzz_numpy.py).

    python3 scripts/fuzz_numpy.py --graphs 100000 --seed 1            # a fixed number of graphs
    python3 scripts/fuzz_numpy.py --minutes 30 --report fuzz.md       # as many as fit in 30 minutes
    python3 scripts/fuzz_numpy.py --seed 7 --stream 3 --minutes 60    # worker 3 of a parallel campaign
    python3 scripts/fuzz_numpy.py --replay 700402                     # one program again, by its seed

Graph k of a run is program graph_seed(seed, stream, k) (a splitmix64 hash of the three numbers, 63
bits): runs with different --seed or --stream values are independent streams of programs, never
overlapping ranges, so parallel workers need only distinct streams (or bases). Every mismatch is
reported with the program's exact seed; --replay SEED... runs those programs only and describes every
mismatch they have (test_fuzz_numpy.fuzz_one(SEED) is the same program; the seeds CI replays are
test_fuzz_numpy.REGRESSION_SEEDS).

Runs in this one process (one core); prints every NEW mismatch class as it is found (with its minimal
reproducer: the steps the mismatching value depends on, as a program over `xp` that runs with
xp = numpy and xp = loom), progress every --every graphs, and at the end a summary: graphs, time, the
unexpected mismatch classes with counts and the seed of each class's first program, and the hits of each
known deviation (KNOWN in the test module). --report writes the same as markdown. Exit status 1 when an
unexpected class was found. The run uses the installed loom package (scripts/setup.sh installs it).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
import test_fuzz_numpy as fz  # noqa: E402

_M64 = (1 << 64) - 1


def _splitmix64(x):
    """One splitmix64 step from state x: a bijective 64-bit hash (x + golden ratio, then the finalizer)."""
    z = (x + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def graph_seed(base, stream, k):
    """The seed of graph k of the run (base, stream): the three chained through splitmix64, top 63 bits."""
    h = _splitmix64(base & _M64)
    h = _splitmix64(h ^ (stream & _M64))
    return _splitmix64(h ^ (k & _M64)) >> 1


def replay(seeds):
    bad = 0
    for s in seeds:
        un, kn = fz.classify(fz.fuzz_one(s))
        for k, _m in kn:
            print(f"seed {s}: known deviation {k.name}")
        for m in un:
            print(f"\n=== seed {s}: unexpected mismatch\n{m.describe()}\n", flush=True)
        bad += bool(un)
        if not un and not kn:
            print(f"seed {s}: no mismatch")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", type=int, default=100000, help="number of graphs (default 100000)")
    ap.add_argument("--seed", type=int, default=1, help="base seed of the run (default 1)")
    ap.add_argument("--stream", type=int, default=0,
                    help="stream (worker or chunk index) within the base seed (default 0)")
    ap.add_argument("--replay", type=int, nargs="+", metavar="SEED", help="run these program seeds only")
    ap.add_argument("--minutes", type=float, default=None, help="stop after this many minutes")
    ap.add_argument("--every", type=int, default=1000, help="progress line every N graphs")
    ap.add_argument("--report", default=None, help="write a markdown report here")
    a = ap.parse_args()
    if a.replay:
        return replay(a.replay)
    t0 = time.monotonic()
    deadline = t0 + a.minutes * 60 if a.minutes else None
    classes, known_hits = {}, {}
    ran = 0
    while ran < a.graphs and (deadline is None or time.monotonic() < deadline):
        seed = graph_seed(a.seed, a.stream, ran)
        mism = fz.fuzz_one(seed)
        un, kn = fz.classify(mism)
        for k, _m in kn:
            known_hits[k.name] = known_hits.get(k.name, 0) + 1
        for m in un:
            if m.key() not in classes:
                classes[m.key()] = [m, 0, seed]
                print(f"\n=== new mismatch class #{len(classes)} (seed {seed}; replay: scripts/fuzz_numpy.py "
                      f"--replay {seed})\n{m.describe()}\n", flush=True)
            classes[m.key()][1] += 1
        ran += 1
        if ran % a.every == 0:
            el = time.monotonic() - t0
            print(f"[{el:8.1f} s] {ran} graphs ({ran / el:.1f}/s), {len(classes)} unexpected classes, "
                  f"{sum(known_hits.values())} known-deviation hits", flush=True)
    el = time.monotonic() - t0
    lines = ["# loom vs NumPy fuzz run", "",
             f"graphs {ran} (base seed {a.seed}, stream {a.stream}), {el:.1f} s ({ran / max(el, 1e-9):.1f} "
             f"graphs/s), numpy {fz.np.__version__}, loom {fz.loom.__version__}", "",
             f"## unexpected mismatch classes: {len(classes)}", ""]
    for i, (m, count, first) in enumerate(classes.values(), 1):
        lines += [f"### {i}. {m.kind} in {m.step.kind}:{m.op} {m.sig} ({count} graphs, first seed {first}; "
                  f"replay: scripts/fuzz_numpy.py --replay {first})", "",
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
