#!/usr/bin/env bash
# `npm test`: type check, format check, lint, then every vitest suite against real PostgreSQL and Temporal servers
# that the test setup starts on free loopback ports.
set -euo pipefail
source "$(dirname "$0")/lib/ensure-tools.sh"
ensure_stack_tools
npx tsc --noEmit
npx prettier --check . --log-level warn
npx eslint .
rm -f .test-results/vitest.json
npx vitest run "$@"
[ "${FUZZ_SECONDS:-}" = 0 ] || FUZZ_SECONDS="${FUZZ_SECONDS:-120}" bash "$(dirname "$0")/fuzz.sh"
node -e 'const r = require("./.test-results/vitest.json"); console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`)'
