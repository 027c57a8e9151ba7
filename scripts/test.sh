#!/usr/bin/env bash
# `npm test`: every vitest suite against real PostgreSQL and Temporal servers that the test setup starts on free
# loopback ports, with the type check, format check and lint beside it.
set -euo pipefail
source "$(dirname "$0")/lib/ensure-tools.sh"
# First: everything after, npm and npx included, runs on the Node.js .nvmrc pins (docs/runtime.md).
ensure_node
ensure_stack_tools
# The cluster stage's Temporal server and Web UI, built with Go from the module proxy (minutes on a cold Go cache) while
# the static checks and vitest run, at the lowest CPU priority so that the tests come first; the stage waits for it.
# Started before the run's marker is set below: it is no process of the tests.
cluster_build=""
if [ "${CLUSTER_TESTS:-}" != 0 ] && [ "$#" = 0 ]; then
  mkdir -p .test-results
  (nice -n 19 bash -c 'source scripts/lib/ensure-tools.sh && ensure_temporal_server && ensure_temporal_ui') \
    >.test-results/cluster-build.log 2>&1 &
  cluster_build=$!
fi
# And the fuzz stage's Schemathesis, installed with pip meanwhile (network more than CPU).
fuzz_tools=""
if [ "${FUZZ_SECONDS:-}" != 0 ]; then
  mkdir -p .test-results
  (bash -c 'source scripts/lib/ensure-tools.sh && ensure_schemathesis') >.test-results/fuzz-tools.log 2>&1 &
  fuzz_tools=$!
fi
# The three static checks side by side (each prints only what it refuses; the run fails if any does), beside the test
# stages at a lower CPU priority (nice 10: under the tests, above the cluster build): they took a minute and a half of
# a busy 2-CPU machine before vitest could start, and the tests leave a CPU idle often enough (waiting on processes,
# timers, calls) to absorb them. Their output goes to .test-results/static-checks.log, printed at the end of the run.
mkdir -p .test-results
(nice -n 10 bash -c 'source scripts/lib/ensure-tools.sh && side_by_side "npx tsc --noEmit" "npx prettier --check . --log-level warn" "npx eslint ."') \
  >.test-results/static-checks.log 2>&1 &
static_checks=$!
rm -f .test-results/vitest.json .test-results/vitest-cluster.json
# Every process this run starts carries the marker; after each stage, one still alive fails the run, named, and is
# killed (scripts/leftover-processes.ts, docs/operations-stopping.md).
export WORKSPACE_TEST_RUN="${WORKSPACE_TEST_RUN:-$(date +%s)-$$}"
status_was() { return "$1"; }
stage() {
  local name="$1" status=0
  shift
  "$@" || status=$?
  node --import tsx scripts/leftover-processes.ts --after "$name" --kill || [ "$status" != 0 ] || status=1
  [ "$status" = 0 ] || exit "$status"
}
# Waited for last (static_checks_passed), so that no test stage waits on them.
static_checks_passed() {
  local status=0
  wait "$static_checks" || status=$?
  cat .test-results/static-checks.log
  [ "$status" = 0 ] || log "the static checks (tsc, prettier, eslint) refused the code: above"
  return "$status"
}
vitest_status=0
# When the cluster stage runs (below), the suites it alone runs are left out here (scripts/lib/cluster-suites.sh).
cluster_only_excluded=()
if [ "${CLUSTER_TESTS:-}" != 0 ] && [ "$#" = 0 ]; then
  source "$(dirname "$0")/lib/cluster-suites.sh"
  for suite in "${CLUSTER_ONLY_SUITES[@]}"; do cluster_only_excluded+=(--exclude "$suite"); done
fi
npx vitest run "${cluster_only_excluded[@]}" "$@" || vitest_status=$?
[ "$vitest_status" = 0 ] || static_checks_passed || true
stage "vitest run" status_was "$vitest_status"
# After vitest, two stages side by side: the durability and journey suites on the production-shaped cluster
# (docs/cluster.md#production-shaped-cluster-npm-run-startcluster-npm-run-testcluster; CLUSTER_TESTS=0 leaves them out),
# and the fuzzer, which runs for a fixed FUZZ_SECONDS (FUZZ_SECONDS=0 leaves it out), 60 s here (120 s in
# `npm run fuzz`): beside the cluster suites every second of it takes CPU from them on a 2-CPU runner. The fuzzer's output goes to .test-results/fuzz.log and is printed whole when it
# ends, so the two do not interleave. No process of either may outlive both (one leftover check after them).
cluster_stage=""
if [ "${CLUSTER_TESTS:-}" != 0 ] && [ "$#" = 0 ]; then
  # The first run builds the Temporal server with Go (above, beside vitest).
  wait "$cluster_build" || log "the background build of the cluster's Temporal server failed (.test-results/cluster-build.log); the stage tries again"
  bash "$(dirname "$0")/test-cluster.sh" &
  cluster_stage=$!
fi
fuzz_stage=""
if [ "${FUZZ_SECONDS:-}" != 0 ]; then
  wait "$fuzz_tools" || log "the background install of Schemathesis failed (.test-results/fuzz-tools.log); the stage tries again"
  env FUZZ_SECONDS="${FUZZ_SECONDS:-60}" bash "$(dirname "$0")/fuzz.sh" >.test-results/fuzz.log 2>&1 &
  fuzz_stage=$!
fi
after_vitest=0
if [ -n "$cluster_stage" ]; then wait "$cluster_stage" || { after_vitest=$?; log "the cluster suites failed"; }; fi
if [ -n "$fuzz_stage" ]; then
  fuzz_status=0
  wait "$fuzz_stage" || fuzz_status=$?
  cat .test-results/fuzz.log
  [ "$fuzz_status" = 0 ] || { after_vitest=$fuzz_status; log "the fuzz run failed"; }
fi
[ "$after_vitest" = 0 ] || static_checks_passed || true
if [ -n "$cluster_stage$fuzz_stage" ]; then stage "the cluster suites and the fuzz run" status_was "$after_vitest"; fi
static_status=0
static_checks_passed || static_status=$?
node -e 'for (const [name, file] of [["dev server", "vitest.json"], ["cluster", "vitest-cluster.json"]]) { let r; try { r = require(`./.test-results/${file}`); } catch { continue; } console.log(`${name}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`); }'
exit "$static_status"
