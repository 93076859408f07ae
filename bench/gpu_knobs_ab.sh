#!/usr/bin/env bash
# gpu_knobs_ab.sh: Loom alone on chosen suite workloads, once per code-generation switch setting, in fresh
# processes with a fresh kernel cache each (the switches are part of the target's description, so of the
# cache key; a fresh cache also keeps one setting's disk entries from another's timing). For the GPU
# machine after scripts/gpu_all.sh installed the package:
#   bash bench/gpu_knobs_ab.sh WORKLOADS [VARIANT ...]
# WORKLOADS: comma list of bench/suite workload names; VARIANT: a space-free list of NAME=VALUE joined by
# '+', e.g. LOOM_NV_INLINE_MAX=200+LOOM_NV_FDIV=ieee ('default' = no switch). Prints one table row per
# workload and variant (median ms of bench/suite/run.py --libs loom) and writes build-gpu/logs/knobs_ab.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
only=${1:?workloads}
shift
variants=("$@")
[ ${#variants[@]} -eq 0 ] && variants=(default)
py=${PYTHON:-python3}
machine=${LOOM_AB_MACHINE:-h200}
mkdir -p build-gpu/logs
out=build-gpu/logs/knobs_ab.md
echo "| variant | workload | loom ms (median) |" > "$out"
echo "|---|---|---:|" >> "$out"
for v in "${variants[@]}"; do
  dir=$(mktemp -d)
  envs=(LOOM_CACHE_DIR="$dir/cache")
  if [ "$v" != default ]; then
    IFS='+' read -r -a kv <<< "$v"
    envs+=("${kv[@]}")
  fi
  env "${envs[@]}" timeout -k 5 "${LOOM_AB_TIMEOUT_S:-90}" "$py" bench/suite/run.py --machine "$machine" --only "$only" \
    --libs loom --min-time 0.03 --out-dir "$dir" --date ab > "$dir/log" 2>&1
  rc=$?
  "$py" - "$dir" "$v" "$rc" >> "$out" <<'EOF'
import glob, json, sys
d, v, rc = sys.argv[1:]
files = glob.glob(d + "/*.json")
if not files:
    print(f"| {v} | (run failed, exit {rc}) | |")
    sys.exit()
data = json.load(open(files[0]))
for w in data["workloads"]:
    print(f"| {v} | {w['name']} | {w['ms'].get('loom')} |")
EOF
  rm -rf "$dir"
done
cat "$out"
