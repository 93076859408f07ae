#!/usr/bin/env bash
# aot_gpu.sh: AOT bundles on the GPU (issue 16), for scripts/gpu_all.sh after bench/gpu_bench.sh in the same
# device call. tests/loomrt/loomrt_check (linked only against libloomrt) opens the bundle the ctest run made
# (tests/loomrt/loomrt_test.lbun: sm_80/sm_90 cubins + PTX), checks the GPU entries against references and
# times, per kernel, a fresh bundle open to its first kernel finished (its cubin loaded, launched,
# synchronized). This script puts those figures beside Loom's JIT cold compile and CuPy's cold compile
# that bench/gpu_bench.sh measured in the same run (bench/results/<date>-h200.json) and writes
# bench/results/<date>-aot-h200.{md,json}; the log is build-gpu/logs/loomrt_gpu.log.
#   bash bench/aot_gpu.sh [BUILD_DIR]    (default build-gpu)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:-build-gpu}
date=${LOOM_BENCH_DATE:-$(date +%Y-%m-%d)}
mkdir -p "$build/logs" bench/results
log=$build/logs/loomrt_gpu.log
"$build/tests/loomrt/loomrt_check" "$build/tests/loomrt/loomrt_test.lbun" > "$log" 2>&1
rc=$?
cat "$log"
python3 - "$log" "bench/results/$date-h200.json" "bench/results/$date-aot-h200" "$rc" <<'EOF'
import json, os, re, socket, sys
log, jit_json, out, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = open(log).read()
rows = [(m.group(1), float(m.group(2)), float(m.group(3)))
        for m in re.finditer(r"GPU (\S+) +bundle open to first kernel finished +([0-9.]+) ms \(a second launch ([0-9.-]+) ms\)", text)]
ctx = re.search(r"GPU: driver \+ context ([0-9.]+) ms", text)
jit = json.load(open(jit_json)) if os.path.exists(jit_json) else {}
res = {"date": os.path.basename(out)[:10], "machine": socket.gethostname(), "loomrt_check_exit": rc,
       "driver_and_context_ms": float(ctx.group(1)) if ctx else None,
       "per_kernel_open_to_first_finished_ms": {n: t for n, t, _ in rows},
       "per_kernel_second_launch_ms": {n: w for n, _, w in rows},
       "max_open_to_first_finished_ms": max((t for _, t, _ in rows), default=None),
       "loom_jit_cold_compile_ms": jit.get("loom_cold_compile_ms"),
       "loom_jit_cold_compile_reduction_ms": jit.get("loom_cold_compile_reduction_ms"),
       "cupy_cold_compile_ms": jit.get("cupy_cold_compile_ms"),
       "cupy_cold_compile_fresh_process_ms": jit.get("cupy_cold_compile_fresh_process_ms")}
json.dump(res, open(out + ".json", "w"), indent=1)
with open(out + ".md", "w") as f:
    f.write(f"# AOT bundles on the GPU ({res['date']}, {res['machine']})\n\n")
    f.write("libloomrt (tests/loomrt/loomrt_check, no LLVM in the process): per kernel, a fresh bundle open to the "
            "first kernel finished (cubin checked and loaded, launch, synchronize) on 2^20-point spaces; the CUDA "
            "context was up already (driver + context: %s ms). Beside it, the same run's cold compiles "
            "(bench/gpu_bench.sh).\n\n" % res["driver_and_context_ms"])
    f.write("| kernel | open to first finished, ms | a second launch, ms |\n| --- | --- | --- |\n")
    for n, t, w in rows:
        f.write(f"| {n} | {t:.3f} | {w:.3f} |\n")
    f.write(f"\n| figure | ms |\n| --- | --- |\n| libloomrt, largest per kernel (target < 1) | {res['max_open_to_first_finished_ms']} |\n"
            f"| Loom JIT cold compile, elementwise | {res['loom_jit_cold_compile_ms']} |\n"
            f"| Loom JIT cold compile, 8 reductions | {res['loom_jit_cold_compile_reduction_ms']} |\n"
            f"| CuPy cold compile (same process) | {res['cupy_cold_compile_ms']} |\n"
            f"| CuPy cold compile (fresh process) | {res['cupy_cold_compile_fresh_process_ms']} |\n")
print(open(out + ".md").read())
EOF
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  cp "$log" "bench/results/$date-aot-h200.md" "bench/results/$date-aot-h200.json" "$OUT"/ 2>/dev/null
fi
exit $rc
