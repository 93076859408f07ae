#!/usr/bin/env bash
# demo.sh: build Loom (scripts/setup.sh) and run the fusion demo (tools/demo.c). Arguments are
# passed to the demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec "${LOOM_BUILD_DIR:-build}/loom_demo" "$@"
