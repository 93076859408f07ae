#!/usr/bin/env bash
# sort_sweep.sh: the radix sort's shape sweep (bench/sort_sweep.py) in ONE device call on the GPU machine,
# built and run by bench/_sweep.py (the install preamble both sweeps share; results copied into $OUT).
#   on the GPU machine, from the repository root, with .devkit/ and build-gpukit/ carried:
#   bash bench/sort_sweep.sh [repeats=5] [budget_s=110]
# LOOM_SWEEP_BENCH_SORT=1 also runs bench/bench_sort.py (~30 s) afterwards. Exit: the sweep's status.
cd "$(dirname "$0")/.." || exit 1
[ -f .devkit/setup.sh ] && source .devkit/setup.sh
exec python3 bench/_sweep.py sort "$@"
