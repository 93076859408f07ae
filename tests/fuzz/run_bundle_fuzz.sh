#!/usr/bin/env bash
# run_bundle_fuzz.sh: the closing run of the bundle loader's fuzzer (issue 16: >= 10^6 executions, 0 crashes)
# over a corpus of real bundles: the ctest seeds (tests/fuzz/CMakeLists.txt: every host level, one level)
# plus small bundles with GPU sections that loomc makes here from three kernels of tests/loomrt/kernels.loom
# (axpb, rowsum, scale_shift): host + AMD code objects (gfx942, gfx1100) + PTX, and an sm_90 cubin when
# ptxas is there, and bundles of format 1.2 with a FUSE section (@loom.fuse records): the committed one
# (tests/fuzz/bundle_seeds_fuse/) and a fresh one from test_bundle_fuse when it is built. Prints libFuzzer's
# last lines and the figure (executions, crashes, seconds, corpus).
#   bash tests/fuzz/run_bundle_fuzz.sh [RUNS] [BUILD_DIR]     (defaults: 1000000, build)
# With --kit DIR it only copies the fuzzer and its seeds into DIR (e.g. build-gpukit/fuzz, which the device
# tool carries): scripts/gpu_all.sh then runs the closing fuzz on the GPU machine's spare cores, where
# libFuzzer's -jobs spread it over several processes (the binary needs only libc, libm and libstdc++).
#   bash tests/fuzz/run_bundle_fuzz.sh --kit build-gpukit/fuzz [BUILD_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
kit=
if [ "${1:-}" = --kit ]; then
  kit=$2
  shift 2
  set -- 0 "${1:-build}"
fi
runs=${1:-1000000}
build=${2:-build}
fuzz=$build/tests/fuzz/fuzz_bundle
loomc=$build/loomc
[ -x "$fuzz" ] || { echo "run_bundle_fuzz.sh: $fuzz not built (needs clang-19 + libclang-rt-19-dev)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/seeds" "$work/corpus"
cp "$build"/tests/fuzz/bundle_seeds/*.lbun tests/fuzz/bundle_seeds_fuse/*.lbun "$work/seeds/"
if [ -x "$build/tests/test_bundle_fuse" ]; then
  LOOM_FUSE_SEED_OUT="$work/seeds/fuse_fresh.lbun" "$build/tests/test_bundle_fuse" >/dev/null 2>&1 || true
fi
awk '/^# (axpb_f32|rowsum_f32|scale_shift_f32):/,/^$/' tests/loomrt/kernels.loom > "$work/small.loom"
gpu=host,gfx942,gfx1100
"$loomc" "$work/small.loom" -o "$work/seeds/gpu_small.lbun" -t "$gpu,ptx" --index 32 -q --no-progress -j1 2>/dev/null ||
  "$loomc" "$work/small.loom" -o "$work/seeds/gpu_small.lbun" -t "$gpu" --index 32 -q --no-progress -j1
"$loomc" "$work/small.loom" -o "$work/seeds/cubin_small.lbun" -t sm_90 --index 64 -q --no-progress -j1 2>/dev/null || true
ls -l "$work/seeds"
if [ -n "$kit" ]; then
  rm -rf "$kit"
  mkdir -p "$kit"
  cp "$fuzz" "$kit/"
  cp -r "$work/seeds" "$kit/seeds"
  echo "run_bundle_fuzz.sh: kit in $kit ($(du -sh "$kit" | cut -f1))"
  exit 0
fi
start=$(date +%s)
set +e
"$fuzz" -runs="$runs" -timeout=10 -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 \
  -artifact_prefix="$work/" "$work/corpus" "$work/seeds" > "$work/log" 2>&1
rc=$?
set -e
end=$(date +%s)
tail -25 "$work/log"
crashes=$(ls "$work" | grep -cE '^(crash|leak|timeout|oom)-' || true)
execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$work/log" | grep -oE '[0-9]+$' || echo '?')
echo "run_bundle_fuzz.sh: exit $rc, $execs executions, $crashes crash/leak/timeout/oom artifacts, $((end - start)) s;" \
  "seeds $(ls "$work/seeds" | wc -l) files ($(du -sk "$work/seeds" | cut -f1) KB), corpus at the end" \
  "$(ls "$work/corpus" | wc -l) files ($(du -sk "$work/corpus" | cut -f1) KB)"
[ "$rc" -eq 0 ] && [ "$crashes" -eq 0 ]
