"""issue15_report.py: one table of issue 15's figures (matrix products and their epilogue, decompositions, FFT,
sorting, scans, gathers, the MLP step) from the results files of ONE run, each row beside the issue's target.

    python3 bench/issue15_report.py OUT.md RESULTS.json...

The JSON files are those bench_matmul.py, bench_fft_linalg.py, bench_sort.py, bench_scan.py, bench_gather.py
and mlp_array_api.py write (bench/results/<date>[-<time>]-<kind>-<machine>.json); the kind is read from the
file name. Targets (issue 15, H200, same run): products 4096^2 / 8192^2 >= 0.95x torch.matmul per dtype;
gelu(x @ w + b) >= 1.0x torch.compile; FFTs >= 0.9x CuPy; sorting / scans / gathers at 2^26 elements
>= 0.8x the better of CuPy and PyTorch; the MLP step >= 1.0x PyTorch eager with no read-back inside loom's
steps. Decompositions have no figure to reach (cuSOLVER is the library: the ratios are reported). On the
host the peer is NumPy: products >= 0.9x NumPy's matmul with the same BLAS, the rest reported.
"""
import json
import os
import sys


def _ratio(row, peer):
    v = row.get(f"{peer}_over_loom")
    if v is None and row.get("loom_ms") and row.get(f"{peer}_ms"):
        v = row[f"{peer}_ms"] / row["loom_ms"]
    return v


def _kind(path):
    name = os.path.basename(path)
    for k in ("matmul", "fft-linalg", "sort", "scan", "gather", "mlp"):
        if f"-{k}-" in name:
            return k
    return None


def _target(kind, row, gpu):
    """(peer words, needed ratio, ratio got) or None when the row has no target."""
    case = row.get("case", "")
    if "LOOM_" in case or "former path" in case:  # an A/B row of a non-default setting: reported only
        return None
    if kind == "matmul":
        if case.startswith("matmul ") and any(s in case for s in ("4096^2", "8192^2")):
            return ("torch", 0.95, _ratio(row, "torch")) if gpu else ("numpy", 0.9, _ratio(row, "numpy"))
        if case.startswith("gelu(") and gpu:
            return "torch.compile", 1.0, _ratio(row, "torch_compile")
        if case.startswith("MLP step") and gpu:
            return "torch", 1.0, _ratio(row, "torch")
        return None
    if kind == "fft-linalg":
        if case.split(" ")[0].lstrip("i").lstrip("r").startswith("fft") and gpu:
            return "cupy", 0.9, _ratio(row, "cupy")
        return None
    if kind in ("sort", "scan", "gather") and gpu:
        big = "2^26" in case or row.get("n") == 1 << 26 or (row.get("shape") and _prod(row["shape"]) == 1 << 26)
        if not big:
            return None
        got = [r for r in (_ratio(row, "cupy"), _ratio(row, "torch")) if r is not None]
        return ("min(cupy, torch)", 0.8, min(got)) if got else None
    return None


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    out, paths = argv[1], argv[2:]
    lines, failing, meta = [], [], []
    for path in paths:
        kind = _kind(path)
        if kind is None:
            print(f"issue15_report: {path}: not a results file of a known kind", file=sys.stderr)
            return 2
        with open(path) as f:
            doc = json.load(f)
        gpu = doc.get("machine") == "h200" or "h200" in os.path.basename(path)
        meta.append(f"- `{os.path.basename(path)}`: `{doc.get('command', '?')}` ({doc.get('date', '?')})")
        lines += [f"## {kind} ({'H200' if gpu else 'host'})", "",
                  "| case | dtype | loom ms | peers ms | target | got | met |", "|---|---|---|---|---|---|---|"]
        rows = doc.get("rows", [])
        if kind == "mlp":
            loom_row = next((r for r in rows if r["library"] == "loom"), None)
            for r in rows:
                tgt = ""
                if r is loom_row and gpu:
                    got = r.get("torch_over_loom")
                    ok = got is not None and got >= 1.0 and r.get("copies_to_host") == 0
                    tgt = f"torch eager >= 1.0, 0 read-backs | {got} ({r.get('copies_to_host')} read-backs) | " \
                          f"{'yes' if ok else '**no**'}"
                    if not ok:
                        failing.append(f"mlp: {got}")
                lines.append(f"| MLP step, {r['library']} | float32 | {r.get('step_ms')} | loss diff vs NumPy "
                             f"{r.get('max_rel_diff_vs_numpy', 0):.1e} | {tgt or ' | | '} |")
            lines.append("")
            continue
        for r in rows:
            peers = ", ".join(f"{p} {r[p + '_ms']:.4g}" for p in ("cupy", "torch", "torch_compile", "numpy")
                              if isinstance(r.get(p + "_ms"), (int, float)))
            t = _target(kind, r, gpu)
            if t:
                who, need, got = t
                met = got is not None and got >= need
                cells = f"{who} >= {need} | {got if got is None else round(got, 3)} | {'yes' if met else '**no**'}"
                if not met:
                    failing.append(f"{kind}: {r.get('case')} {r.get('dtype', '')} {got}")
            else:
                cells = " | | "
            loom_ms = r.get("loom_ms")
            lines.append(f"| {r.get('case')} | {r.get('dtype', '')} | "
                         f"{loom_ms if not isinstance(loom_ms, float) else round(loom_ms, 4)} | {peers} | {cells} |")
        lines.append("")
    head = ["# Issue 15's figures, one run", "", "Files:", *meta, "",
            f"Rows with a target: {'all met' if not failing else str(len(failing)) + ' not met'}.", ""]
    if failing:
        head += ["Not met:", *[f"- {x}" for x in failing], ""]
    with open(out, "w") as f:
        f.write("\n".join(head + lines) + "\n")
    print("\n".join(head))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
