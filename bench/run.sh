#!/usr/bin/env bash
# Runs the benchmark harness from the repository root; flags pass through
# (go run ./bench -h lists them). The report goes to bench/results/<date>.md.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./bench "$@"
