#!/usr/bin/env bash
# ab_knobs.sh: A/B timings of code-generation and launch knobs on the GPU machine, Loom alone, one process per
# setting (each its own LOOM_CACHE_DIR), over a list of suite workloads; then the peers once. After
# scripts/gpu_all.sh installed the package (LOOM_GPU_C=0 LOOM_GPU_PYTEST=0 LOOM_GPU_BENCH=0 LOOM_GPU_FUZZ=0).
#   AB_ONLY=gelu_tanh,silu AB_CONFIGS="base=|div1=LOOM_GPU_FAST_DIV=1" bash bench/suite/ab_knobs.sh
# AB_TABLE=probe times workloads of the probe table (bench/suite/workloads_probe.py) instead of the suite's.
# Prints one table (ms, median) and writes it with the per-setting JSON to $OUT when set.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
only=${AB_ONLY:-gelu_tanh,gelu_erf,silu,mish,gelu_f16,int8_quantize,huber,batchnorm_infer_nchw,swiglu,black_scholes,haversine}
configs=${AB_CONFIGS:-"base="}
tmp=$(mktemp -d)
export LOOM_CUDA_JIT_TIERS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
IFS='|' read -ra cfgs <<< "$configs"
for c in "${cfgs[@]}"; do
  name=${c%%=*}; envs=${c#*=}
  mkdir -p "$tmp/$name" "$tmp/cache-$name"
  echo "== $name: $envs"
  env $envs LOOM_CACHE_DIR="$tmp/cache-$name" timeout -k 5 "${AB_TIMEOUT_S:-120}" python3 bench/suite/run.py --machine h200 \
    --table "${AB_TABLE:-suite}" --only "$only" --libs loom --min-time "${AB_MIN_TIME:-0.05}" --out-dir "$tmp/$name" > "$tmp/$name.log" 2>&1 || echo "  exit $?"
done
if [ -n "${AB_PEERS:-}" ]; then
  mkdir -p "$tmp/peers"
  timeout -k 5 "${AB_PEERS_TIMEOUT_S:-200}" python3 bench/suite/run.py --machine h200 --table "${AB_TABLE:-suite}" --only "$only" --libs "$AB_PEERS" \
    --min-time "${AB_MIN_TIME:-0.05}" --out-dir "$tmp/peers" > "$tmp/peers.log" 2>&1 || echo "  peers exit $?"
fi
python3 - "$tmp" <<'PY'
import glob, json, os, sys
tmp = sys.argv[1]
rows, cols = {}, []
for d in sorted(glob.glob(os.path.join(tmp, "*"))):
    js = glob.glob(os.path.join(d, "*.json")) if os.path.isdir(d) else []
    if not js:
        continue
    name = os.path.basename(d)
    for w in json.load(open(js[0]))["workloads"]:
        for lib, ms in w["ms"].items():
            col = name if lib == "loom" else lib
            if col not in cols:
                cols.append(col)
            rows.setdefault(w["name"], {})[col] = ms
print("| workload | " + " | ".join(cols) + " |")
print("|---|" + "---:|" * len(cols))
for wname, r in rows.items():
    print(f"| {wname} | " + " | ".join(f"{r[c]:.4f}" if isinstance(r.get(c), (int, float)) else "-" for c in cols) + " |")
PY
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/ab" && cp -r "$tmp"/*.log "$tmp"/*/ "$OUT/ab/" 2>/dev/null; rm -rf "$OUT"/ab/cache-*; fi
