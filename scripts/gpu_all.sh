#!/usr/bin/env bash
# gpu_all.sh: the whole GPU check in ONE device call, inside the device tool's 600 s command limit,
# every log in ONE tarball under $OUT (the tool returns at most 8 files).
#   on the GPU machine, from the repository root, with .devkit/ and build-gpukit/ (and .whl/) carried:
#   bash scripts/gpu_all.sh
#
# Phases, each bounded by what is left of the budget (LOOM_GPU_DEADLINE_S, default 560 s after the start:
# by then the tarball is written, whatever is still running):
#   1. build, in parallel: the C tree (Release, build-gpu/) and the Python package (pip, no network,
#      into .venv-gpu or python3)
#   2. in parallel: ctest (every C test, the GPU ones included: test_gpu*, test_cuda*, test_threads_gpu,
#      test_cublaslt, test_random_gpu, loomrt), pytest on the GPU (tests/python), and in the background, on cores 4..
#      at nice 19 (the tests come first), the long host fuzz of issue 10: tests/c test_fuzz_graph in
#      chunks of LOOM_GPU_FUZZ_CHUNK (1000) graphs over LOOM_GPU_FUZZ_WORKERS (cores - 6) processes, and
#      scripts/fuzz_numpy.py on the host and on the GPU, and, when build-gpukit/fuzz/ holds its kit
#      (tests/fuzz/run_bundle_fuzz.sh --kit build-gpukit/fuzz), libFuzzer jobs on the bundle loader; they
#      stop before the deadline and the graphs of finished chunks / the executions are counted (summary.txt)
#   3. on a quiet GPU, pinned to cores 0-3 (the fuzz goes on beside): bench/gpu_bench.sh's benchmarks
#      (C, CuPy, torch), bench_user_kernels, loomrt on the GPU, bench_python_gpu.py, bench_scan.py, then
#      the workload suite (bench/suite/gpu.sh) on what time is left
# Splitting it (a shorter call, or a second one): LOOM_GPU_C=0 (no C build, ctest or C benchmarks),
# LOOM_GPU_PY=0 (no Python package, pytest or Python benchmarks), LOOM_GPU_PYTEST=0 (no pytest),
# LOOM_GPU_PYBENCH (which Python benchmarks, see want() below), LOOM_GPU_CBENCH=0 (not the C benchmarks of
# bench/gpu_bench.sh, user kernels and AOT bundles: ~4 min), LOOM_GPU_BENCH=0 (no benchmarks),
# LOOM_GPU_SUITE=0 (no workload suite), LOOM_GPU_FUZZ=0 (no background fuzz), LOOM_GPU_MATMUL=1
# (bench/bench_matmul.py and bench/bench_fft_linalg.py, ~4 min), LOOM_GPU_CTEST_ARGS (extra ctest arguments, e.g. "-R test_gpu"),
# LOOM_GPU_PYTEST_ARGS (extra pytest arguments, e.g. a file), LOOM_GPU_FUZZ_NUMPY_JOBS (host processes of
# scripts/fuzz_numpy.py, 1; with LOOM_GPU_FUZZ_WORKERS=1 the fuzz's cores go to them), LOOM_GPU_PYTEST_PER_FILE=1 (each test file in a
# process of its own: names the file of a crash). Dask (issue 18) runs when .whl/ holds its
# wheels (scripts/dask_wheels.sh) and time is left; scikit-learn (tests/python/test_sklearn_array_api.py,
# issue 14) is on pytest's path when .whl/sk/ holds its wheels (scripts/sklearn_wheels.sh).
# $OUT gets: gpu-all.tgz (build-gpu/logs, ctest's LastTest.log, the bench/results files this run wrote),
# summary.txt (also printed at the end), and the run's bench/results/*-h200.{json,md}.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PYTHONUNBUFFERED=1
t0=$SECONDS
deadline=${LOOM_GPU_DEADLINE_S:-560}
left() { echo $((deadline - (SECONDS - t0))); }
# `bounded SECONDS cmd...`: cmd under `timeout`, never past the deadline (minus a reserve of 15 s)
bounded() {
  local want=$1 l
  shift
  l=$(($(left) - 15))
  [ "$l" -lt "$want" ] && want=$l
  if [ "$want" -le 5 ]; then
    echo "gpu_all.sh: no time left for: $*" | tee -a "$logs/skipped.log"
    return 124
  fi
  timeout -k 5 "$want" "$@"
}
on() { [ "${!1:-1}" != 0 ]; }
# the Python benchmarks of phase 3 that run: LOOM_GPU_PYBENCH, a comma list (default: all but matmul,
# which also runs with LOOM_GPU_MATMUL=1): python scan sort gather matmul mlp dask suite probe (the
# probe table of unseen workloads, after the suite)
want() { [[ ",${LOOM_GPU_PYBENCH:-python,scan,sort,gather,dask,suite,probe}," == *",$1,"* ]]; }
ncpu=$(nproc 2>/dev/null || echo 4)
logs=build-gpu/logs
stamp=build-gpu/.start
date=${LOOM_BENCH_DATE:-$(date +%Y-%m-%d)}
export LOOM_BENCH_DATE=$date

[ "${LOOM_KEEP_BUILD:-0}" = 1 ] || rm -rf build-gpu # a stale build-gpu/ may be older than the sources
mkdir -p "$logs" bench/results
touch "$stamp"
summary=$logs/summary.txt
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }
note "gpu_all.sh $(date -u '+%F %T') UTC, $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $ncpu cores, budget ${deadline}s"
{ nvidia-smi || echo "nvidia-smi not available"; ldd build-gpukit/*.so* 2>&1; } > "$logs/nvidia-smi.log" 2>&1

# ---- environment: the devkit's LLVM, SLEEF from build-gpukit/, the Python interpreter ----------------
if [ -f .devkit/setup.sh ]; then
  source .devkit/setup.sh
else
  note "no .devkit/setup.sh: using the machine's LLVM"
fi
cmake_args=(-DCMAKE_BUILD_TYPE=Release ${LLVM_ROOT:+-DLLVM_ROOT="$LLVM_ROOT"})
pip_args=()
if [ -f build-gpukit/libsleefgnuabi.so.3 ] && ! ldconfig -p | grep -q libsleefgnuabi; then
  cmake_args+=(-DLOOM_SLEEF_LIB="$PWD/build-gpukit/libsleefgnuabi.so.3" -DLOOM_SLEEF_SCALAR_LIB="$PWD/build-gpukit/libsleef.so.3")
  pip_args=(--config-settings=cmake.define.LOOM_SLEEF_LIB="$PWD/build-gpukit/libsleefgnuabi.so.3"
            --config-settings=cmake.define.LOOM_SLEEF_SCALAR_LIB="$PWD/build-gpukit/libsleef.so.3")
  export LD_LIBRARY_PATH="$PWD/build-gpukit${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# libcuda keeps allocations until exit by design; the driver maps memory where ASan keeps its shadow gap
printf 'leak:libcuda.so\nleak:libnvidia-ptxjitcompiler.so\n' > build-gpu/lsan.supp
export ASAN_OPTIONS="protect_shadow_gap=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$PWD/build-gpu/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# The Python side runs in .venv-gpu/, which also sees the machine's packages (numpy, pytest,
# scikit-build-core, cupy, torch: the GPU machine has no network), made without pip of its own. PYTHON
# overrides; python3 when no venv can be made or the venv misses the machine's packages (the H200
# image's python3 is itself a venv).
py=${PYTHON:-}
if [ -z "$py" ]; then
  py=python3
  if python3 -m venv --clear --system-site-packages --without-pip .venv-gpu >"$logs/venv.log" 2>&1 &&
     .venv-gpu/bin/python -c "import scikit_build_core, numpy, pytest" 2>/dev/null; then
    py=$PWD/.venv-gpu/bin/python
  fi
fi
export PATH="$(dirname "$(command -v "$py")"):$PATH" # python3 in the scripts below is this one
note "python: $py ($("$py" -c 'import numpy, sys; print(sys.version.split()[0], "numpy", numpy.__version__)' 2>&1))"

# ---- 1. build the C tree and the Python package, in parallel ------------------------------------------
c_rc=skip py_rc=skip
if on LOOM_GPU_C; then
  (bounded 300 cmake -S . -B build-gpu "${cmake_args[@]}" >"$logs/configure.log" 2>&1 &&
   bounded 300 cmake --build build-gpu -j"$ncpu" >"$logs/build.log" 2>&1) &
  c_build=$!
fi
if on LOOM_GPU_PY; then
  CMAKE_BUILD_PARALLEL_LEVEL=$ncpu bounded 300 "$py" -m pip install -q --no-build-isolation --no-deps \
    --config-settings=build-dir=build-gpu/python "${pip_args[@]}" . >"$logs/pip.log" 2>&1 &
  py_build=$!
fi
if on LOOM_GPU_C; then
  wait "$c_build"
  c_rc=$?
  note "C build: exit $c_rc at $((SECONDS - t0))s"
  [ "$c_rc" = 0 ] || tail -30 "$logs/configure.log" "$logs/build.log"
fi
if on LOOM_GPU_PY; then
  wait "$py_build"
  py_rc=$?
  note "Python package: exit $py_rc at $((SECONDS - t0))s"
  [ "$py_rc" = 0 ] || tail -30 "$logs/pip.log"
  # what the package found: the host target (SLEEF or not) and the GPU it will use
  [ "$py_rc" = 0 ] && note "loom: $(cd /tmp && "$py" -c 'import loom; i = loom._core.config_info(); print("host:", i["host_target"], "| default device:", loom.asarray([1]).device)' 2>&1 | tail -1)"
  # scikit-learn + array-api-compat for tests/python/test_sklearn_array_api.py when .whl/sk/ holds their
  # wheels (scripts/sklearn_wheels.sh; the machine has no network): a site of their own on PYTHONPATH
  if ls .whl/sk/*.whl >/dev/null 2>&1; then
    if "$py" -m pip install -q --no-index --no-deps --no-compile --target /tmp/sk-site .whl/sk/*.whl >"$logs/sk-site.log" 2>&1; then
      export PYTHONPATH=/tmp/sk-site${PYTHONPATH:+:$PYTHONPATH}
      note "scikit-learn site: $(cd /tmp && "$py" -c 'import sklearn, scipy, array_api_compat as c; print("sklearn", sklearn.__version__, "scipy", scipy.__version__, "array_api_compat", c.__version__)' 2>&1 | tail -1)"
    else
      note "scikit-learn site: pip install of .whl/sk failed ($(tail -1 "$logs/sk-site.log"))"
    fi
  fi
fi

# ---- 2. ctest and pytest on the GPU; the host fuzz in the background -----------------------------------
fuzz_pids=()
# the fuzz takes cores 4.. (at nice 19: the tests of phase 2 come first), the benchmarks of phase 3 run
# pinned to cores 0-3; two of the fuzz's cores go to the Python fuzzers
lo=$((ncpu >= 8 ? 4 : ncpu / 2))
bjobs=0 # the bundle fuzz's processes (below), when its kit is carried
[ -x build-gpukit/fuzz/fuzz_bundle ] && bjobs=${LOOM_GPU_BUNDLE_FUZZ_JOBS:-$(((ncpu - lo - 2) / 2))}
workers=${LOOM_GPU_FUZZ_WORKERS:-$((ncpu - lo - 2 - bjobs))}
pin=()
if on LOOM_GPU_FUZZ && { [ "$c_rc" = 0 ] || [ "$py_rc" = 0 ]; } && [ "$workers" -ge 1 ]; then
  cores="$lo-$((ncpu - 1))"
  pin=(taskset -c "0-$((lo - 1))")
  chunk=${LOOM_GPU_FUZZ_CHUNK:-1000}
  stop_at=$((t0 + deadline - 40))
  [ "$c_rc" = 0 ] || workers=0 # no C build: the Python fuzzers only
  for w in $(seq 0 $((workers - 1))); do
    (
      k=0
      while [ $((SECONDS + 60)) -lt "$stop_at" ]; do
        seed=$((1000000 + (w + k * workers) * chunk))
        if LOOM_NUM_THREADS=1 LOOM_FUZZ_SEED=$seed LOOM_FUZZ_GRAPHS=$chunk timeout -k 5 $((stop_at - SECONDS)) \
             taskset -c "$cores" nice -n 19 build-gpu/tests/test_fuzz_graph >"$logs/fuzz_c_$w.tmp" 2>&1; then
          echo "ok $seed $chunk" >>"$logs/fuzz_c_chunks.log"
        else
          rc=$?
          if [ "$rc" -ge 124 ]; then break; fi # stopped at the deadline: the chunk does not count
          echo "FAIL $seed $chunk" >>"$logs/fuzz_c_chunks.log"
          cat "$logs/fuzz_c_$w.tmp" >>"$logs/fuzz_c_failures.log"
        fi
        k=$((k + 1))
      done
      rm -f "$logs/fuzz_c_$w.tmp"
    ) &
    fuzz_pids+=($!)
  done
  if on LOOM_GPU_PY && [ "$py_rc" = 0 ]; then
    # the Python differential fuzzer against NumPy: LOOM_GPU_FUZZ_NUMPY_JOBS (1) processes on the host, each
    # its own stream of programs (--stream k, base seed LOOM_GPU_FUZZ_NUMPY_SEED), and one on the GPU
    npj=${LOOM_GPU_FUZZ_NUMPY_JOBS:-1}
    for job in cuda $(seq 0 $((npj - 1))); do
      dev=host tag=host_$job seed=${LOOM_GPU_FUZZ_NUMPY_SEED:-500000}
      [ "$job" = cuda ] && dev=cuda tag=cuda seed=700000 job=0
      [ "$tag" = host_0 ] && tag=host
      (cd /tmp && LOOM_DEVICE=$dev LOOM_NUM_THREADS=1 timeout -k 5 $((stop_at - SECONDS)) taskset -c "$cores" \
         nice -n 19 "$py" "$OLDPWD/scripts/fuzz_numpy.py" --seed "$seed" --stream "$job" \
         --graphs 1000000 --minutes "$(awk "BEGIN {print ($stop_at - $SECONDS - 10) / 60}")" --every 500 \
         --report "$OLDPWD/$logs/fuzz_numpy_$tag.md" >"$OLDPWD/$logs/fuzz_numpy_$tag.log" 2>&1) &
      fuzz_pids+=($!)
    done
  fi
  note "fuzz: $workers test_fuzz_graph workers$([ "${#fuzz_pids[@]}" -gt "$workers" ] && echo " + fuzz_numpy.py (host, cuda)") on cores $cores until $((stop_at - t0))s"
  # issue 16's closing fuzz of the bundle loader (libFuzzer, >= 10^6 executions, 0 crashes) when the kit
  # is carried (tests/fuzz/run_bundle_fuzz.sh --kit build-gpukit/fuzz): LOOM_GPU_BUNDLE_FUZZ_JOBS processes
  # (default: half the fuzz's cores) beside the graph fuzz, until the fuzz's stop; executions summed below
  if [ "$bjobs" -ge 1 ]; then
    mkdir -p "$logs/bundle_fuzz/corpus"
    (cd "$logs/bundle_fuzz" && taskset -c "$cores" nice -n 19 "$OLDPWD/build-gpukit/fuzz/fuzz_bundle" \
       -jobs="$bjobs" -workers="$bjobs" -max_total_time=$((stop_at - SECONDS - 15)) -timeout=10 \
       -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 -artifact_prefix=./ \
       corpus "$OLDPWD/build-gpukit/fuzz/seeds" >run.log 2>&1) &
    fuzz_pids+=($!)
    note "bundle fuzz: $bjobs libFuzzer jobs on cores $cores"
  fi
fi
ctest_rc=skip pytest_rc=skip
if on LOOM_GPU_C && [ "$c_rc" = 0 ]; then
  # consumer_* rebuild Loom: LOOM_JOBS for them; every test's own timeout, and the budget's
  # shellcheck disable=SC2086
  # test_gpu_diff's random graphs: 1500 by default take ~3.5 min alone, past ctest's share beside pytest
  (LOOM_JOBS=4 LOOM_GPU_DIFF_GRAPHS=${LOOM_GPU_DIFF_GRAPHS:-600} bounded 330 ctest --test-dir build-gpu -j"$((ncpu / 2))" --timeout 300 --output-on-failure \
     ${LOOM_GPU_CTEST_ARGS:-} >"$logs/ctest.log" 2>&1) &
  ctest_pid=$!
fi
if on LOOM_GPU_PY && on LOOM_GPU_PYTEST && [ "$py_rc" = 0 ]; then
  # LOOM_GPU_PYTEST_SHARDS (3) processes side by side, each on every shards-th test file (kernel compiles
  # are host work: one process alone did not finish in the budget); LOOM_GPU_PYTEST_ARGS: one process
  shards=${LOOM_GPU_PYTEST_SHARDS:-3}
  [ -n "${LOOM_GPU_PYTEST_ARGS:-}" ] && shards=1
  pids=()
  if [ "${LOOM_GPU_PYTEST_PER_FILE:-0}" = 1 ]; then
    # every test file in a process of its own, LOOM_GPU_PYTEST_JOBS (8) at a time: a crash (an abort at
    # exit, a segfault) names its file in pytest_files.rc (file, exit status; >= 128: killed by a signal)
    mkdir -p "$logs/pytest_files"
    : > "$logs/pytest_files.rc"
    # LOOM_GPU_PYTEST_FILES: an extended regex of the test files to run (default: all). test_host_*.py test
    # the host's code generation: they run with LOOM_DEVICE=host (this machine's CPU), not on the GPU
    (cd /tmp && ls "$OLDPWD"/tests/python/test_*.py | grep -E "${LOOM_GPU_PYTEST_FILES:-.}" | bounded 330 xargs -P "${LOOM_GPU_PYTEST_JOBS:-8}" -I{} sh -c \
       'f={}; b=$(basename "$f" .py); dev=; case "$b" in test_host_*) dev=host;; esac
        LOOM_DEVICE=${dev:-${LOOM_DEVICE:-}} timeout -k 5 300 "$0" -m pytest "$f" -q -rfEs -p no:cacheprovider \
          >"$1/pytest_files/$b.log" 2>&1; echo "$b $?" >>"$1/pytest_files.rc"' "$py" "$OLDPWD/$logs") &
    pids+=($!)
    shards=0
  fi
  # the shards run on the GPU; test_host_*.py (the host's code generation: they assert host kernels) run
  # in one more process with LOOM_DEVICE=host, as the per-file mode does (on the GPU they are skipped)
  nproc_py=$shards
  [ "$shards" -gt 1 ] && nproc_py=$((shards + 1))
  for k in $(seq 0 $((nproc_py - 1))); do
    dev=
    if [ "$shards" = 1 ]; then
      sel=("$PWD/tests/python")
    elif [ "$k" = "$shards" ]; then
      mapfile -t sel < <(ls "$PWD"/tests/python/test_host_*.py)
      dev=host
    else
      mapfile -t sel < <(ls "$PWD"/tests/python/test_*.py | grep -v '/test_host_' | awk -v n="$shards" -v k="$k" 'NR % n == k')
    fi
    # shellcheck disable=SC2086
    (cd /tmp && LOOM_DEVICE=${dev:-${LOOM_DEVICE:-}} bounded 330 "$py" -m pytest "${sel[@]}" -q -rfEs -p no:cacheprovider --durations=10 \
       ${LOOM_GPU_PYTEST_ARGS:-} >"$OLDPWD/$logs/pytest_full.$k.log" 2>&1) &
    pids+=($!)
  done
  shards=$nproc_py
  pytest_rc=0
  for p in "${pids[@]}"; do
    wait "$p"
    r=$?
    [ "$r" -gt "$pytest_rc" ] && pytest_rc=$r
  done
  if [ -f "$logs/pytest_files.rc" ]; then
    cat "$logs"/pytest_files/*.log >"$logs/pytest_full.log" 2>/dev/null
    note "pytest per file: $(awk '$2 != 0 && $2 != 5' "$logs/pytest_files.rc" | sort | tr '\n' ' ')(files with a nonzero exit; the rest passed)"
    awk '$2 != 0 && $2 != 1 && $2 != 5 {bad = 1} END {exit bad}' "$logs/pytest_files.rc" || pytest_rc=134
  else
    cat "$logs"/pytest_full.*.log >"$logs/pytest_full.log"
  fi
  grep -E "^(FAILED|ERROR) " "$logs/pytest_full.log" | head -80 >"$logs/pytest.log"
  for k in $(seq 0 $((shards - 1))); do tail -1 "$logs/pytest_full.$k.log"; done >>"$logs/pytest.log"
  note "pytest: exit $pytest_rc at $((SECONDS - t0))s ($shards processes): $(for k in $(seq 0 $((shards - 1))); do tail -1 "$logs/pytest_full.$k.log"; done | tr '\n' ';')"
fi
if on LOOM_GPU_C && [ "$c_rc" = 0 ]; then
  wait "$ctest_pid"
  ctest_rc=$?
  cp build-gpu/Testing/Temporary/LastTest.log "$logs/LastTest.log" 2>/dev/null
  note "ctest: exit $ctest_rc at $((SECONDS - t0))s: $(grep -E 'tests passed|tests failed' "$logs/ctest.log" | tail -1)"
  # ctest's closing lists: "  41 - name (Failed)", "(Timeout)", "(Skipped)", "(Not Run)"
  grep -E "^[[:space:]]*[0-9]+ - .* \((Failed|Timeout|Not Run|SEGFAULT|Subprocess aborted)\)" "$logs/ctest.log" | tee -a "$summary"
  grep -E "^[[:space:]]*[0-9]+ - .* \(Skipped\)" "$logs/ctest.log" | sed 's/^[[:space:]]*/  skipped: /' >>"$summary"
fi

# ---- 3. benchmarks on a quiet GPU --------------------------------------------------------------------
if on LOOM_GPU_BENCH; then
  if on LOOM_GPU_C && on LOOM_GPU_CBENCH && [ "$c_rc" = 0 ]; then
    OUT='' LOOM_BENCH_ONLY=1 bounded 150 "${pin[@]}" bash bench/gpu_bench.sh >"$logs/gpu_bench.log" 2>&1
    note "bench/gpu_bench.sh: exit $? at $((SECONDS - t0))s"
    bounded 60 "${pin[@]}" build-gpu/bench/bench_user_kernels --gpu "bench/results/$date-user-kernels-h200.json" \
      "bench/results/$date-user-kernels-h200.md" >"$logs/bench_user_kernels_gpu.log" 2>&1
    # AOT bundles on the GPU (libloomrt): the bundle ctest made, checked and timed on device 0
    # (bench/aot_gpu.sh: per kernel, bundle open to first kernel finished, beside this run's cold compiles;
    # its log is $logs/loomrt_gpu.log, its table bench/results/<date>-aot-h200.{md,json})
    bounded 40 "${pin[@]}" bash bench/aot_gpu.sh build-gpu >"$logs/aot_gpu.log" 2>&1
    note "loomrt on the GPU (bench/aot_gpu.sh): exit $?"
  fi
  if on LOOM_GPU_PY && [ "$py_rc" = 0 ]; then
    if want python; then
    bounded 90 "${pin[@]}" "$py" bench/bench_python_gpu.py >"$logs/bench_python_gpu.log" 2>&1
    note "bench_python_gpu.py: exit $? at $((SECONDS - t0))s"
    fi
    # cumsum (scan kernels) vs CuPy / PyTorch (issue 15; < 1 min): bench/results/<date>-scan-h200.json
    if want scan; then
    bounded 120 "${pin[@]}" "$py" bench/bench_scan.py >"$logs/bench_scan.log" 2>&1
    note "bench_scan.py: exit $? at $((SECONDS - t0))s"
    fi
    # sort / argsort / unique (the device sorting network) vs CuPy / PyTorch: bench/results/<date>-sort-h200.json
    if want sort; then
    bounded 90 "${pin[@]}" "$py" bench/bench_sort.py 3 >"$logs/bench_sort.log" 2>&1
    note "bench_sort.py: exit $? at $((SECONDS - t0))s"
    fi
    # gathers / scatters / masks vs CuPy / PyTorch (issue 15): bench/results/<date>-gather-h200.json
    if want gather; then
      bounded 60 "${pin[@]}" "$py" bench/bench_gather.py >"$logs/bench_gather.log" 2>&1
      note "bench_gather.py: exit $? at $((SECONDS - t0))s"
    fi
    if [ "${LOOM_GPU_MATMUL:-0}" = 1 ] || want matmul; then
      bounded 200 "${pin[@]}" "$py" bench/bench_matmul.py >"$logs/bench_matmul.log" 2>&1
      note "bench_matmul.py: exit $?"
      # FFTs and decompositions vs CuPy / torch (issue 15): bench/results/<date>-fft-linalg-h200.{json,md}
      bounded 150 "${pin[@]}" "$py" bench/bench_fft_linalg.py 5 >"$logs/bench_fft_linalg.log" 2>&1
      note "bench_fft_linalg.py: exit $?"
    fi
    # the MLP step written once against the array API, loom / CuPy / torch / NumPy losses and step times,
    # no read-back inside loom's steps (issue 15): bench/results/<date>-mlp-h200.{json,md}
    if want mlp || want matmul; then
      bounded 90 "${pin[@]}" "$py" bench/mlp_array_api.py >"$logs/mlp_array_api.log" 2>&1
      note "mlp_array_api.py: exit $?"
    fi
    if want dask && ls .whl/dask-*.whl >/dev/null 2>&1 && [ "$(left)" -gt 150 ]; then
      if "$py" -m pip install -q --no-index --no-deps --no-compile --target /tmp/dask-site .whl/*.whl; then
        (export PYTHONPATH=/tmp/dask-site${PYTHONPATH:+:$PYTHONPATH}
         cd /tmp && bounded 60 "$py" -m pytest "$OLDPWD/tests/python/test_dask.py" -q -p no:cacheprovider -p no:logging
         cd "$OLDPWD" && LOOM_DASK_BENCH_GPUS=${LOOM_DASK_BENCH_GPUS:-1,2} bounded 120 "$py" bench/dask_gpu.py) \
          >"$logs/dask_gpu.log" 2>&1
        note "dask: exit $?"
      fi
    fi
    if on LOOM_GPU_SUITE && want suite; then
      # the workload suite vs torch / JAX / CuPy on what is left: its own budget shrinks with ours
      l=$(($(left) - 25))
      if [ "$l" -ge 60 ]; then
        OUT='' LOOM_SUITE_BUDGET_S=$((l * 2 / 3)) LOOM_SUITE_HARD_S=$l "${pin[@]}" bash bench/suite/gpu.sh \
          >"$logs/suite_gpu.log" 2>&1
        note "bench/suite/gpu.sh: exit $? at $((SECONDS - t0))s"
      else
        note "bench/suite/gpu.sh: skipped, ${l}s left"
      fi
    fi
    if on LOOM_GPU_SUITE && want probe; then
      # the probe table of unseen workloads (bench/suite/workloads_probe.py), the same way
      l=$(($(left) - 25))
      if [ "$l" -ge 60 ]; then
        OUT='' LOOM_SUITE_TABLE=probe LOOM_SUITE_BUDGET_S=$((l * 2 / 3)) LOOM_SUITE_HARD_S=$l "${pin[@]}" \
          bash bench/suite/gpu.sh >"$logs/probe_gpu.log" 2>&1
        note "bench/suite/gpu.sh (probe): exit $? at $((SECONDS - t0))s"
      else
        note "bench/suite/gpu.sh (probe): skipped, ${l}s left"
      fi
    fi
  fi
fi

# ---- the fuzz's figures, the tarball ---------------------------------------------------------------
if [ "${#fuzz_pids[@]}" -gt 0 ]; then
  # the workers stop by themselves before the deadline; whatever still runs is stopped now
  while [ "$(left)" -gt 20 ] && kill -0 "${fuzz_pids[@]}" 2>/dev/null; do sleep 2; done
  for p in "${fuzz_pids[@]}"; do kill -- "$p" 2>/dev/null; done
  touch "$logs/fuzz_c_chunks.log"
  ok=$(awk '$1 == "ok" {n += $3} END {print n + 0}' "$logs/fuzz_c_chunks.log")
  bad=$(grep -c FAIL "$logs/fuzz_c_chunks.log")
  note "host fuzz (test_fuzz_graph): $ok graphs in passing chunks, ${bad:-0} failing chunks (fuzz_c_failures.log)"
  if [ -d "$logs/bundle_fuzz" ]; then
    bexec=$(cat "$logs"/bundle_fuzz/fuzz-*.log 2>/dev/null | grep -oE 'stat::number_of_executed_units: *[0-9]+' |
      awk '{n += $2} END {print n + 0}')
    bcrash=$(find "$logs/bundle_fuzz" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' \
      -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
    note "bundle fuzz (fuzz_bundle): $bexec executions, $bcrash crash/leak/timeout/oom artifacts"
    rm -rf "$logs/bundle_fuzz/corpus"
    for f in "$logs"/bundle_fuzz/fuzz-*.log; do [ -f "$f" ] && tail -30 "$f" >"$f.tail" && mv "$f.tail" "$f"; done
  fi
  for f in "$logs"/fuzz_numpy_*.log; do
    [ -f "$f" ] || continue
    dev=$(basename "$f" .log)
    note "fuzz_numpy.py (${dev#fuzz_numpy_}): $(grep -E '^graphs|unexpected mismatch classes' "$f" | tail -2 | tr '\n' ' ')"
  done
  # the host streams together: graphs run and unexpected classes summed over the processes
  cat "$logs"/fuzz_numpy_host*.log 2>/dev/null | awk '/^graphs [0-9]+ \(base seed/ {g += $2; n++} /^## unexpected mismatch classes:/ {u += $5}
    END {if (n) printf "fuzz_numpy.py host, %d processes: %d graphs in all, %d unexpected classes\n", n, g, u}' | tee -a "$summary"
fi
note "gpu_all.sh: build C $c_rc, Python $py_rc; ctest $ctest_rc; pytest $pytest_rc; $((SECONDS - t0))s"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  new_results=$(find bench/results -newer "$stamp" -type f 2>/dev/null)
  # shellcheck disable=SC2086
  tar czf "$OUT/gpu-all.tgz" "$logs" $new_results 2>/dev/null
  cp "$summary" "$OUT/summary.txt"
  cp "bench/results/$date-h200.json" "bench/results/$date-h200.md" "$OUT"/ 2>/dev/null
  cp bench/results/"$date"-suite-h[0-9]*.md bench/results/"$date"-probe-h[0-9]*.md "$OUT"/ 2>/dev/null
fi
[ "$ctest_rc" != skip ] && [ "$ctest_rc" != 0 ] && exit 1
[ "$pytest_rc" != skip ] && [ "$pytest_rc" != 0 ] && exit 1
exit 0
