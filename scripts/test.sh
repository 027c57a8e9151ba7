#!/usr/bin/env bash
# `npm test`: type check, format check, lint, then every vitest suite against real PostgreSQL and Temporal servers
# that the test setup starts on free loopback ports.
set -euo pipefail
source "$(dirname "$0")/lib/ensure-tools.sh"
# First: everything after, npm and npx included, runs on the Node.js .nvmrc pins (docs/runtime.md).
ensure_node
ensure_stack_tools
# The three static checks side by side (each prints only what it refuses; the run fails if any does).
side_by_side "npx tsc --noEmit" "npx prettier --check . --log-level warn" "npx eslint ."
rm -f .test-results/vitest.json .test-results/vitest-cluster.json
# Every process this run starts carries the marker; after each stage, one still alive fails the run, named, and is
# killed (scripts/leftover-processes.ts, docs/operations-stopping.md).
export WORKSPACE_TEST_RUN="${WORKSPACE_TEST_RUN:-$(date +%s)-$$}"
stage() {
  local name="$1" status=0
  shift
  "$@" || status=$?
  node --import tsx scripts/leftover-processes.ts --after "$name" --kill || [ "$status" != 0 ] || status=1
  [ "$status" = 0 ] || exit "$status"
}
stage "vitest run" npx vitest run "$@"
# The durability and journey suites again on the production-shaped cluster
# (docs/cluster.md#production-shaped-cluster-npm-run-startcluster-npm-run-testcluster); CLUSTER_TESTS=0 leaves them out.
# The first run builds the Temporal server with Go (about 12 minutes here).
if [ "${CLUSTER_TESTS:-}" != 0 ] && [ "$#" = 0 ]; then stage "the cluster suites" bash "$(dirname "$0")/test-cluster.sh"; fi
if [ "${FUZZ_SECONDS:-}" != 0 ]; then stage "the fuzz run" env FUZZ_SECONDS="${FUZZ_SECONDS:-120}" bash "$(dirname "$0")/fuzz.sh"; fi
node -e 'for (const [name, file] of [["dev server", "vitest.json"], ["cluster", "vitest-cluster.json"]]) { let r; try { r = require(`./.test-results/${file}`); } catch { continue; } console.log(`${name}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`); }'
