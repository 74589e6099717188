#!/usr/bin/env bash
# Runs every test: bootstrap (toolchains, emulators, venv), then pytest over tests/, one worker per
# core (pytest-xdist; a test file stays on one worker, so its module fixtures and caches are built once).
# With CI set, a build/emu test may not skip: tests/conftest.py turns such skips into failures, so
# they show in pytest's summary and its exit status. Under CI the session also stops starting tests
# when the budget (ETD_CI_BUDGET seconds from the start of this script, 90 min less a margin) runs
# out, so a slow runner still prints its summary and the slowest tests instead of being killed mute.
# ETD_TEST_WORKERS=0 runs in one process.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
start=$SECONDS
bash tools/bootstrap.sh
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
args=(-q -rs --durations=15 -n "${ETD_TEST_WORKERS:-auto}" --dist loadfile)
if [[ -n "${CI:-}" ]]; then
  left=$(( ${ETD_CI_BUDGET:-5100} - (SECONDS - start) ))
  (( left > 300 )) || left=300
  args+=(--session-timeout "$left")
fi
echo "tools/test.sh: bootstrap took $((SECONDS - start)) s; pytest ${args[*]}" >&2
set +e
.venv/bin/python -m pytest "${args[@]}" tests/ "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
echo "tools/test.sh: $((SECONDS - start)) s in all" >&2
if [[ $rc -eq 5 ]]; then
  echo "tools/test.sh: pytest collected no tests" >&2
  exit 1
fi
if [[ -n "${CI:-}" ]] && grep -q "skipped under CI" "$log"; then
  echo "tools/test.sh: CI is set and build/emu tests tried to skip (see above)" >&2
  exit 1
fi
exit "$rc"
