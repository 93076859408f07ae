#!/usr/bin/env bash
# pytest_isolate.sh FILE [JOBS]: every test function of a pytest FILE in a process of its own, JOBS (8)
# at a time, with Python's faulthandler on; prints "<exit status> <test function>" for each one that did
# not pass (>= 128: killed by a signal, e.g. 134 an abort at exit). For crashes that a whole-file run shows
# only at interpreter exit (the GPU run's "double free" after test_ops passed): which test leaves the state.
# PYTHON overrides the interpreter; run from anywhere (the file's path as given).
set -uo pipefail
file=$1
jobs=${2:-8}
py=${PYTHON:-python3}
out=$(mktemp -d)
"$py" -m pytest "$file" --collect-only -q -p no:cacheprovider 2>/dev/null | grep '::' | sed 's/\[.*//' | sort -u |
  xargs -P "$jobs" -I{} sh -c 'n=$(echo "$1" | tr "/:[]" "____"); timeout -k 5 300 "$0" -X faulthandler -m pytest "$1" \
    -q -p no:cacheprovider >"$2/$n.log" 2>&1; rc=$?; [ $rc = 0 ] || echo "$rc $1"' "$py" {} "$out"
for f in "$out"/*.log; do
  grep -q "Fatal Python error\|double free\|corruption\|Segmentation" "$f" && { echo "== $f"; tail -25 "$f"; }
done
rm -rf "$out"
