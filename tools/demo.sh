#!/usr/bin/env bash
# The example: bootstrap, then build the example model for Corstone-300 and run it on QEMU.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash tools/bootstrap.sh
.venv/bin/scons board=corstone300 pte=tests/models/mlp.bpte run=1 "$@"
