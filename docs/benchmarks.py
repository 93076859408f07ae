# SPDX-License-Identifier: Apache-2.0
"""benchmarks.py: the documentation's benchmark page, made from bench/results/ at every build (docs/conf.py
runs it; `python docs/benchmarks.py OUTDIR` by hand).

bench/results/ holds one file per run, named DATE-SERIES (2026-12-01-h200.md, -suite-cpu.md with its chart
-suite-cpu.png, ...). The page shows the newest run of every benchmark series: its Markdown report with the
headings moved one level down, and its chart where the run made one (copied next to the page). The test
suites' pass rates (cupy-suite*, array-api*) are conformance results, not benchmarks, and stay out.
"""
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "..", "bench", "results")
NOT_BENCHMARKS = ("cupy-suite", "array-api")
DATED = re.compile(r"^(\d{4}-\d{2}-\d{2})-(.+)\.md$")


def newest_runs(folder):
    """{series: (date, file name)} of the newest Markdown report of each benchmark series."""
    newest = {}
    for name in sorted(os.listdir(folder)):
        m = DATED.match(name)
        if not m or m.group(2).startswith(NOT_BENCHMARKS):
            continue
        date, series = m.groups()
        if series not in newest or date > newest[series][0]:
            newest[series] = (date, name)
    return newest


def page(folder, outdir):
    parts = ["# Benchmarks", "",
             "Generated from `bench/results/` by `docs/benchmarks.py`: the newest run of each benchmark "
             "series, as its script reported it (the command, the machine and the date are in each report; "
             "`bench/` holds the scripts, `scripts/gpu_all.sh` the GPU runs).", ""]
    for series, (date, name) in sorted(newest_runs(folder).items(), key=lambda kv: kv[1], reverse=True):
        with open(os.path.join(folder, name)) as f:
            text = f.read()
        text = re.sub(r"^(#+) ", lambda m: "#" + m.group(1) + " ", text, flags=re.M)  # one level down
        if not text.lstrip().startswith("## "):
            text = f"## {series}, {date}\n\n" + text
        parts.append(text.rstrip() + "\n")
        chart = name[:-3] + ".png"
        if os.path.exists(os.path.join(folder, chart)):
            shutil.copyfile(os.path.join(folder, chart), os.path.join(outdir, chart))
            parts.append(f"![{series}, {date}](/_generated/{chart})\n")
    return "\n".join(parts)


def generate(outdir):
    os.makedirs(outdir, exist_ok=True)
    text = page(RESULTS, outdir)
    path = os.path.join(outdir, "benchmarks.md")
    old = open(path).read() if os.path.exists(path) else None
    if old != text:
        with open(path, "w") as f:
            f.write(text)


if __name__ == "__main__":
    generate(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "_generated"))
