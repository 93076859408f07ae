#!/usr/bin/env bash
# gpu_tables.sh: one device call that builds the package and runs workload tables with every peer
# (bench/suite/gpu.sh a table), for a current picture of where Loom stands:
#   GPU_TABLES="fresh2 probe" bash scripts/gpu_tables.sh     (on the GPU machine, .devkit/ and build-gpukit/ carried)
# Each table gets GPU_TABLE_BUDGET_S (150) seconds before the slow peers are skipped and GPU_TABLE_HARD_S (220)
# in all. Prints each table's workloads below 0.9x the best peer; the JSON/markdown come back through $OUT.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
t0=$SECONDS
LOOM_GPU_C=0 LOOM_GPU_PYTEST=0 LOOM_GPU_BENCH=0 LOOM_GPU_FUZZ=0 bash scripts/gpu_all.sh > /dev/null 2>&1
echo "== build at $((SECONDS - t0)) s"
for t in ${GPU_TABLES:-fresh2 probe}; do
  LOOM_SUITE_TABLE=$t LOOM_SUITE_BUDGET_S=${GPU_TABLE_BUDGET_S:-150} LOOM_SUITE_HARD_S=${GPU_TABLE_HARD_S:-220} \
    bash bench/suite/gpu.sh > /dev/null 2>&1
  for f in bench/results/*-"$t"-h[0-9]*.json; do :; done
  python3 - "$f" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1])); rows = []
for w in d["workloads"]:
    ms = w["ms"]; loom = ms.get("loom")
    peers = {k: v for k, v in ms.items() if not k.startswith("loom") and v}
    if loom and peers:
        best = min(peers, key=peers.get)
        rows.append((peers[best] / loom, w["name"], loom, peers[best], best,
                     ms.get("torch_compile") and ms["torch_compile"] / loom))
geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
print(sys.argv[1], len(rows), "workloads; geomean vs best peer %.3f, vs torch.compile %.3f"
      % (geo([r[0] for r in rows]), geo([r[5] for r in rows if r[5]])))
for r in sorted(rows)[:12]:
    print("  %.2f %-26s loom %.4f best %.4f (%s)" % r[:5])
PY
  echo "== $t at $((SECONDS - t0)) s"
done
