#!/usr/bin/env bash
# demo_aot.sh: ahead-of-time kernel bundles end to end.
#   1. a Python module lists @loom.fuse functions and user kernels with their signatures (LOOM_AOT);
#      `python -m loom.aot` traces them and writes ONE bundle (host x86-64 at three levels; NVIDIA cubins
#      and PTX too when the CUDA toolkit's ptxas is installed) plus a .c/.h pair for C programs;
#   2. loomc --describe lists what the bundle holds and checks every checksum;
#   3. a fresh Python process loads it with jit=False (production): the calls run the bundle's code, nothing
#      is compiled, and a signature outside the bundle raises;
#   4. a C program calls the generated typed functions, linked only against libloomrt (ldd shows no LLVM);
#   5. loomc also bundles kernel IR text directly (what LOOM_DUMP=kernels prints), for C users.
# Environment: PYTHON (interpreter with the loom package; scripts/setup.sh installs it), LOOM_BUILD_DIR.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
bash scripts/setup.sh >/dev/null
build=$root/${LOOM_BUILD_DIR:-build}
py=${PYTHON:-$root/.venv/bin/python} # the project venv scripts/setup.sh made
work=$(mktemp -d "${TMPDIR:-/tmp}/loom-aot-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

targets=host-all
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" ]; then targets=host-all,sm_80,sm_90,ptx; fi

echo "== 1. python -m loom.aot: kernels.py -> kernels.lbun (+ kernels.c / kernels.h), targets $targets"
cat > kernels.py <<'EOF'
import loom, loom.aot

@loom.fuse(kernel_name="axpb")
def axpb(x, y):
    return 2.5 * x + y

@loom.fuse(kernel_name="softmax")
def softmax(x):
    e = loom.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)

clip_scale = loom.ElementwiseKernel("float32 x, float32 s", "float32 y",
                                    "y = x * s > 1 ? 1 : x * s", "clip_scale")

LOOM_AOT = {
    axpb: [(("float32", 1), ("float32", 1))],
    softmax: [(("float32", 2),)],
    clip_scale: [(("float32", 1), ("float32", 1))],
}
EOF
"$py" -m loom.aot kernels.py -o kernels.lbun -t "$targets" --emit-c kernels

echo; echo "== 2. loomc --describe kernels.lbun"
"$build/loomc" --describe kernels.lbun

echo; echo "== 3. a fresh Python process: loom.load_bundle('kernels.lbun', jit=False)"
cat > use.py <<'EOF'
import time
import numpy as np
import loom
t0 = time.perf_counter()
loom.load_bundle("kernels.lbun", jit=False)
import kernels
x = np.linspace(0, 1, 1_000_000, dtype=np.float32)
y = np.ones_like(x)
r = kernels.axpb(x, y)
t1 = time.perf_counter()
print(f"axpb: max error {np.abs(r - (np.float32(2.5) * x + y)).max():.3g}, "
      f"{(t1 - t0) * 1e3:.1f} ms from load_bundle to the first result")
s = kernels.softmax(np.random.default_rng(0).random((64, 1000), dtype=np.float32))
print(f"softmax: rows sum to 1 within {np.abs(s.sum(1) - 1).max():.2g}")
v = np.array([0.5, 1.0, 1.5, 2.0], np.float32)
print(f"clip_scale({v}, 0.75) = {kernels.clip_scale(v, np.full(4, 0.75, np.float32))}")
print("loom.stats():", {k: v for k, v in loom.stats().items() if k in ("kernels_compiled", "cache_hits")})
try:
    kernels.axpb(x.astype(np.float64), y.astype(np.float64))
except NotImplementedError as e:
    print("float64 axpb (not in the bundle) raised NotImplementedError:", str(e)[:110], "...")
EOF
PYTHONPATH=$work "$py" use.py

echo; echo "== 4. C: the generated typed functions, linked only against libloomrt"
cat > main.c <<'EOF'
#include <stdio.h>
#include "kernels.h"
int main(void) {
  LoomrtRuntime *rt;
  if (loomrt_create(NULL, &rt) != LOOM_OK) return 1;
  float x[8], y[8], out[8];
  for (int i = 0; i < 8; i++) x[i] = (float)i, y[i] = 1.0f;
  if (axpb(loomrt_host_stream(rt), x, y, out, 8) != LOOM_OK) {
    fprintf(stderr, "axpb: %s\n", loomrt_last_error(rt));
    return 1;
  }
  printf("axpb from C (host code for x86-64 level %d):", loomrt_host_level());
  for (int i = 0; i < 8; i++) printf(" %g", out[i]);
  printf("\n");
  loomrt_destroy(rt);
  return 0;
}
EOF
cc -O2 -I"$root/include" -I. main.c kernels.c -L"$build" -lloomrt -Wl,-rpath,"$build" -o main
./main
echo "ldd main:"; ldd ./main | sed 's/^/  /'
strip -o libloomrt.stripped "$build/libloomrt.so"
echo "libloomrt.so stripped: $(stat -c %s libloomrt.stripped) bytes"

echo; echo "== 5. loomc on kernel IR text (tests/loomrt/kernels.loom), -j2, with the summary table"
"$build/loomc" "$root/tests/loomrt/kernels.loom" -o ir.lbun -t host-all -j2 --no-progress
