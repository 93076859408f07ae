#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh: Loom as a C user meets it (ctest runs it; see CMakeLists.txt at the top).
#   run.sh install BUILD WORK        cmake --install BUILD into WORK/prefix, check the tree (versioned
#                                    soname, headers, LoomConfig*.cmake, loom.pc, only loom_* exported,
#                                    the installed demo runs), then build and run app.c with
#                                    find_package(Loom) and with pkg-config; find_package of an
#                                    incompatible version must fail
#   run.sh subdirectory BUILD WORK   build app.c with add_subdirectory(<this source tree>) and run it
# BUILD is a configured and built Loom tree; WORK is a scratch folder (emptied). LOOM_JOBS as in setup.sh.
# The new trees take BUILD's LLVM_ROOT and SLEEF libraries (a machine where they are not in the system's
# paths, as the GPU machine's devkit). Exit 77 (ctest: skipped) when the rest passed but a tool a part
# needs is missing (pkg-config), naming it.
set -euo pipefail
mode=${1:?usage: run.sh install|subdirectory BUILD WORK}
build=$(cd "${2:?BUILD}" && pwd)
work=${3:?WORK}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
jobs=${LOOM_JOBS:-$(nproc 2>/dev/null || echo 2)}
version=$(sed -n 's/^#define LOOM_VERSION_STRING "\(.*\)"$/\1/p' "$src/include/loom/loom.h")
IFS=. read -r major minor _ <<<"$version"
soname=libloom.so.$major.$minor
[ "$major" = 0 ] || soname=libloom.so.$major
mkdir -p "$work"
work=$(cd "$work" && pwd)
fail() { echo "consumer ($mode): $*" >&2; exit 1; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
# the tree's own LLVM and SLEEF, for the trees configured here
tree_args=()
for v in LLVM_ROOT LOOM_SLEEF_LIB LOOM_SLEEF_SCALAR_LIB; do
  val=$(cache "$v")
  [ -n "$val" ] && [ "${val%-NOTFOUND}" = "$val" ] && tree_args+=("-D$v=$val")
done
# run quietly; on failure show the log
step() {
  local log=$work/$mode-step.log
  "$@" >"$log" 2>&1 || { cat "$log" >&2; fail "failed: $*"; }
}

if [ "$mode" = install ]; then
  prefix=$work/prefix
  rm -rf "$prefix" "$work/pkg" "$work/pc"
  step cmake --install "$build" --prefix "$prefix"
  libdir=$prefix/lib
  [ -d "$libdir" ] || libdir=$(dirname "$(find "$prefix" -name 'libloom.so' | head -1)")
  for f in "$prefix/include/loom/loom.h" "$prefix/include/loom/ops_public.def" "$libdir/libloom.so.$version" \
           "$libdir/cmake/Loom/LoomConfig.cmake" "$libdir/cmake/Loom/LoomConfigVersion.cmake" \
           "$libdir/cmake/Loom/LoomTargets.cmake" "$libdir/pkgconfig/loom.pc" "$prefix/bin/loom_demo" \
           "$prefix/include/loom/loomrt.h" "$libdir/libloomrt.so.$version" "$libdir/pkgconfig/loomrt.pc" \
           "$prefix/bin/loomc"; do
    [ -f "$f" ] || fail "not installed: ${f#"$prefix"/}"
  done
  [ "$(readlink "$libdir/libloom.so")" = "$soname" ] || fail "libloom.so does not point at $soname"
  [ "$(readlink "$libdir/$soname")" = "libloom.so.$version" ] || fail "$soname does not point at libloom.so.$version"
  for lib in loom loomrt; do
    got=$(objdump -p "$libdir/lib$lib.so.$version" | awk '$1 == "SONAME" {print $2}')
    [ "$got" = "${soname/libloom/lib$lib}" ] || fail "lib$lib SONAME is '$got', expected ${soname/libloom/lib$lib}"
  done
  "$prefix/bin/loomc" --help >/dev/null 2>&1 || fail "the installed loomc does not run"
  # only the public API is exported
  others=$(nm -D --defined-only "$libdir/libloom.so.$version" | awk 'NF == 3 && $3 !~ /^loom_/ {print $3}')
  [ -z "$others" ] || fail "libloom exports symbols beyond loom_*: $(echo $others | head -c 300)"
  # (the table read whole first: grep -q ending the pipe early would fail it with SIGPIPE under pipefail)
  exported=$(nm -D --defined-only "$libdir/libloom.so.$version")
  grep -q ' T loom_version$' <<<"$exported" || fail "loom_version not exported"
  demo_out=$("$prefix/bin/loom_demo" 2>&1) || { echo "$demo_out" >&2; fail "the installed loom_demo failed"; }

  # find_package(Loom MAJOR.MINOR), as a user asks for it
  step cmake -S "$here" -B "$work/pkg" -DCMAKE_PREFIX_PATH="$prefix" -DLOOM_EXPECTED_VERSION="$major.$minor" \
    -DCMAKE_BUILD_TYPE=Release
  step cmake --build "$work/pkg" -j"$jobs"
  out=$("$work/pkg/consumer") || fail "the find_package consumer failed: $out"
  echo "find_package: $out"
  # the version file refuses a newer release and, while MAJOR is 0, an older MINOR (the ABI changed)
  wrong=("$major.$((minor + 1))" "$((major + 1)).0")
  if [ "$major" = 0 ] && [ "$minor" -gt 0 ]; then wrong+=("0.$((minor - 1))"); fi
  for v in "${wrong[@]}"; do
    rm -rf "$work/pkg-wrong"
    if cmake -S "$here" -B "$work/pkg-wrong" -DCMAKE_PREFIX_PATH="$prefix" -DLOOM_EXPECTED_VERSION="$v" \
         >"$work/wrong.log" 2>&1; then
      fail "find_package(Loom $v) accepted the installed $version"
    fi
    grep -q "compatible with requested version\|requested version \"$v\"" "$work/wrong.log" ||
      { cat "$work/wrong.log" >&2; fail "find_package(Loom $v) failed for another reason than the version"; }
  done
  rm -rf "$work/pkg-wrong"

  # pkg-config
  if ! command -v pkg-config >/dev/null; then
    echo "consumer ($mode): the pkg-config part is skipped: pkg-config not found (apt-get install pkg-config)"
    exit 77
  fi
  export PKG_CONFIG_PATH=$libdir/pkgconfig
  [ "$(pkg-config --modversion loom)" = "$version" ] || fail "pkg-config --modversion loom: $(pkg-config --modversion loom)"
  [[ "$(pkg-config --libs loomrt)" == *-lloomrt* ]] || fail "pkg-config --libs loomrt: $(pkg-config --libs loomrt)"
  mkdir -p "$work/pc"
  # shellcheck disable=SC2046
  step cc -std=c11 -O2 -o "$work/pc/consumer" "$here/app.c" $(pkg-config --cflags --libs loom) -lm
  out=$(LD_LIBRARY_PATH=$libdir "$work/pc/consumer") || fail "the pkg-config consumer failed: $out"
  echo "pkg-config: $out"
elif [ "$mode" = subdirectory ]; then
  # the build type, LLVM and SLEEF of the tree under test
  rm -rf "$work/sub"
  step cmake -S "$here" -B "$work/sub" -DLOOM_CONSUMER_MODE=subdirectory -DLOOM_SOURCE_DIR="$src" \
    -DCMAKE_BUILD_TYPE=Release "${tree_args[@]}"
  step cmake --build "$work/sub" -j"$jobs"
  # a subproject builds neither Loom's tests nor its benchmarks
  [ ! -e "$work/sub/loom/tests" ] || fail "the subproject built Loom's tests"
  out=$("$work/sub/consumer") || fail "the add_subdirectory consumer failed: $out"
  echo "add_subdirectory: $out"
else
  fail "unknown mode $mode"
fi
