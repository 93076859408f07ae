#!/usr/bin/env bash
# scan_sweep.sh: the look-back scan knob sweep (bench/scan_sweep.py) in ONE device call on the GPU machine,
# built and run by bench/_sweep.py (the install preamble both sweeps share; results copied into $OUT).
#   on the GPU machine, from the repository root, with .devkit/ and build-gpukit/ carried:
#   bash bench/scan_sweep.sh [repeats=10] [budget_s=100]
# Each knob setting runs in its own process with its own LOOM_CACHE_DIR (scan_sweep.py). LOOM_SWEEP_BENCH_SCAN=1
# also runs bench/bench_scan.py (defaults; ~20 s) afterwards. Exit: the sweep's status.
cd "$(dirname "$0")/.." || exit 1
[ -f .devkit/setup.sh ] && source .devkit/setup.sh
exec python3 bench/_sweep.py scan "$@"
