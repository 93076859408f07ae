"""report.py: the markdown table and the chart of one suite result (JSON written by run.py).
    python bench/suite/report.py bench/results/<date>-suite-<machine>.json   # rewrites .md and .png"""
import json
import os
import sys


def _fmt(v, nd=3):
    return "-" if v is None else f"{v:.{nd}f}"


def write_markdown(res, path):
    libs = list(res["libs"])
    s = res.get("summary", {})
    lines = [f"# Workload suite, {res['machine']}, {res['date']}", "",
             f"`{res['command']}`; copy bandwidth {res['copy_GBps']} GB/s (read + write; the median of the "
             f"per-workload copies timed in the same rounds as the libraries; at the start: {res.get('copy_detail')}); "
             f"host {res['host']}; libraries {res['libs']}; wall {res.get('wall_s')} s.", "",
             "ratio = best peer's median time / Loom's median time (> 1: Loom faster); ratio (min) = the same on "
             "the best samples; GB/s = bytes that must move (inputs read "
             "once, outputs written once) / median time; copy = GB/s of a copy of the same bytes timed in the same rounds; "
             "%copy = Loom's GB/s / that copy GB/s. Times in ms (median).",
             "",
             "| workload | MB | kernels | copy GB/s | Loom GB/s | %copy | best peer | ratio | ratio (min) | " +
             " | ".join(libs) + " |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | " + " | ".join("---:" for _ in libs) + " |"]
    for r in res["workloads"]:
        g = r["GBps"].get("loom")
        fc = r["fraction_of_copy"].get("loom")
        ratio = r.get("loom_over_best")
        flag = " **<0.9**" if ratio is not None and ratio < 0.9 else ""
        cells = []
        for lib in libs:
            v = r["ms"].get(lib)
            if v is None:
                e = r["errors"].get(lib, "")
                cells.append("mismatch" if e.startswith("MISMATCH") else "n/a" if e else "-")
            else:
                cells.append(f"{v:.4g}")
        lines.append(f"| {r['name']} | {_fmt(r['bytes'] / 1e6 if r['bytes'] else None, 1)} | {r['kernels'] or '-'} | "
                     f"{_fmt(r.get('copy_GBps'), 1)} | {_fmt(g, 1)} | {_fmt(fc * 100 if fc is not None else None, 0)} | {r.get('best_peer') or '-'} | "
                     f"{_fmt(ratio, 2)}{flag} | {_fmt(r.get('loom_over_best_min'), 2)} | " + " | ".join(cells) + " |")
    lines += ["", "## Summary", ""]
    for k, v in s.items():
        lines.append(f"- {k}: {v}")
    lines += ["", "## Errors and notes (n/a and mismatch cells)", ""]
    for r in res["workloads"]:
        for lib, e in r["errors"].items():
            lines.append(f"- {r['name']} / {lib}: {e}")
        for lib, n in r.get("notes", {}).items():
            lines.append(f"- {r['name']} / {lib} (note): {n}")
    lines += ["", "## Sources", ""]
    for r in res["workloads"]:
        lines.append(f"- {r['name']} ({r['group']}): {r['source']}")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def write_chart(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [(r["name"], r["loom_over_best"], r.get("best_peer")) for r in res["workloads"]
            if r.get("loom_over_best")]
    rows.sort(key=lambda t: t[1])
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(9, 0.26 * len(rows) + 1.5))
    names = [f"{n} (vs {p})" for n, _, p in rows]
    vals = [v for _, v, _ in rows]
    colors = ["#c0392b" if v < 0.9 else "#e67e22" if v < 1.0 else "#27ae60" for v in vals]
    ax.barh(range(len(rows)), vals, color=colors)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(names, fontsize=7)
    ax.set_xscale("log")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.axvline(0.9, color="#c0392b", lw=0.8, ls="--")
    s = res.get("summary", {})
    ax.set_xlabel("best peer time / Loom time (log; > 1: Loom faster; dashed: 0.9)")
    ax.set_title(f"Loom vs the best peer per workload, {res['machine']} {res['date']} "
                 f"(geomean {s.get('geomean_loom_over_best_peer')})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    src = sys.argv[1]
    with open(src) as fh:
        r = json.load(fh)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from bench.suite.run import summarize
    summarize(r)   # (again: a run cut short has none, and the summary's rules may be newer than the run)
    with open(src, "w") as fh:
        json.dump(r, fh, indent=1)
    base = os.path.splitext(src)[0]
    write_markdown(r, base + ".md")
    write_chart(r, base + ".png")
