#!/usr/bin/env bash
# run_host.sh: build Loom in Release (scripts/setup.sh) and run the host benchmark; the table goes to
# stdout and the JSON to bench/results/<date>-host.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
mkdir -p bench/results
exec "${LOOM_BUILD_DIR:-build}/bench/bench_host" bench/results "$@"
