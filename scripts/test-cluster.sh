#!/usr/bin/env bash
# `npm run test:cluster`: the durability and journey suites against the production-shaped Temporal cluster (the
# real server on PostgreSQL, TEST_TEMPORAL_SHARDS history shards, default 4) instead of the dev server.
# docs/cluster.md#production-shaped-cluster-npm-run-startcluster-npm-run-testcluster.
# Extra arguments go to vitest (e.g. a file filter).
set -euo pipefail
source "$(dirname "$0")/lib/ensure-tools.sh"
# First: everything after, npm and npx included, runs on the Node.js .nvmrc pins (docs/runtime.md).
ensure_node
ensure_stack_tools
ensure_temporal_server
ensure_temporal_ui
export TEST_TEMPORAL=cluster
# test/temporal-ui-runbook.test.ts walks the runbook in the cluster's own Web UI (2.42.1, docker-compose's).
source "$(dirname "$0")/lib/cluster-suites.sh"
# Its own JSON report: `npm test` runs this after the dev-server suites and prints both summaries.
export VITEST_JSON=.test-results/vitest-cluster.json
if [ "$#" -gt 0 ]; then exec npx vitest run "$@"; fi
exec npx vitest run "${CLUSTER_SUITES[@]}"
