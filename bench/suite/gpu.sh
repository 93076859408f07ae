#!/usr/bin/env bash
# gpu.sh: the workload suite on the GPU machine, one step of scripts/gpu_all.sh (after it installed the
# loom Python package there): bench/suite/run.py --machine <h100 or h200, the card it ran on> against torch eager, torch.compile, JAX,
# CuPy and cupy.fuse, within ~4 minutes of wall time (after LOOM_SUITE_BUDGET_S seconds, default 170,
# torch.compile/JAX/cupy.fuse are skipped for the remaining workloads, after 1.3x every peer; a hard
# stop at LOOM_SUITE_HARD_S seconds, default 260, keeps what was measured: the JSON is written after every workload). Writes
# bench/results/<date>-suite-<machine>.{json,md,png} and copies them with the log into $OUT when it is set.
# LOOM_SUITE_TABLE=probe runs the probe table of unseen workloads (workloads_probe.py) instead:
# bench/results/<date>-probe-<machine>.*; LOOM_SUITE_TABLE=fresh the fresh table (workloads_fresh.py):
# bench/results/<date>-fresh-<machine>.*.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
date=${LOOM_BENCH_DATE:-$(date +%Y-%m-%d)}
table=${LOOM_SUITE_TABLE:-suite}
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
mkdir -p build-gpu/logs
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "build-gpu/logs/${table}_gpu.txt" 2>&1
# the machine's name in the results' file names: the card that ran them (an H100 or an H200 may be lent)
machine=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -oiE 'h[0-9]{3}' | tr 'H' 'h')
machine=${machine:-gpu}
timeout -k 10 "${LOOM_SUITE_HARD_S:-260}" python3 bench/suite/run.py --machine "$machine" --table "$table" --date "$date" \
  --min-time 0.03 --budget-s "${LOOM_SUITE_BUDGET_S:-170}" > "build-gpu/logs/${table}_$machine.log" 2>&1
rc=$?
tail -40 "build-gpu/logs/${table}_$machine.log"
res=bench/results/$date-$table-$machine
if [ -f "$res.json" ] && [ ! -f "$res.md" -o "$res.md" -ot "$res.json" ]; then
  python3 bench/suite/report.py "$res.json" >> "build-gpu/logs/${table}_$machine.log" 2>&1   # a run cut short
fi
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  cp "$res".* "build-gpu/logs/${table}_$machine.log" "build-gpu/logs/${table}_gpu.txt" "$OUT"/ 2>/dev/null
fi
echo "bench/suite/gpu.sh: exit $rc"
exit $rc
