#!/usr/bin/env bash
# Runs every test: bootstrap (toolchains, emulators, venv), then pytest over tests/.
# With CI set, a build/emu test may not skip: tests/conftest.py turns such skips into failures, so
# they show in pytest's summary and its exit status.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash tools/bootstrap.sh
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
.venv/bin/python -m pytest -q -rs tests/ "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if [[ $rc -eq 5 ]]; then
  echo "tools/test.sh: pytest collected no tests" >&2
  exit 1
fi
if [[ -n "${CI:-}" ]] && grep -q "skipped under CI" "$log"; then
  echo "tools/test.sh: CI is set and build/emu tests tried to skip (see above)" >&2
  exit 1
fi
exit "$rc"
