#!/usr/bin/env bash
# jit_probe.sh: the CUDA driver's JIT cost for a folder of PTX files (bench/bench_jit.c), on the GPU
# machine, with the driver's JIT cache off: cuLink vs cuModuleLoadDataEx at JIT levels 1 and 4, then
# (JIT_PROBE_BW, at each level of JIT_PROBE_BW_LEVELS) the bandwidth of files that are Loom elementwise vector entries of two float32 inputs,
# then (JIT_PROBE_CHECK) a check kernel. Usage: bash scripts/jit_probe.sh DIR
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
dir=${1:?usage: jit_probe.sh DIR}
mkdir -p build-gpu
cc -O2 -o build-gpu/bench_jit bench/bench_jit.c -ldl || exit 1
export CUDA_CACHE_DISABLE=1
BENCH_JIT_ROUNDS=${JIT_PROBE_ROUNDS:-7} build-gpu/bench_jit "$dir"/*.ptx
if [ -n "${JIT_PROBE_BW:-}" ]; then
  for lv in ${JIT_PROBE_BW_LEVELS:-1}; do
    echo "# bandwidth at JIT level $lv"
    (cd "$dir" && BENCH_JIT_BW=$lv BENCH_JIT_ROUNDS=1 "$OLDPWD"/build-gpu/bench_jit $JIT_PROBE_BW)
  done
fi
if [ -n "${JIT_PROBE_CHECK:-}" ]; then BENCH_JIT_CHECK="$dir/$JIT_PROBE_CHECK" build-gpu/bench_jit; fi
