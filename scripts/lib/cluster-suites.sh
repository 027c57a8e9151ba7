# Sourced by test.sh and test-cluster.sh: the suites that run on the production-shaped cluster
# (docs/cluster.md#production-shaped-cluster-npm-run-startcluster-npm-run-testcluster).
CLUSTER_SUITES=(
  test/worker-crash.test.ts
  test/credits/credits-crash.test.ts
  test/calls/carrier-crash.test.ts
  test/durability.test.ts
  test/journeys/journeys.test.ts
  test/replay.test.ts
  test/temporal-ui-runbook.test.ts
)
# Of those, the ones `npm test` runs on the cluster only, not on the dev server first: the same assertions twice cost
# a busy 2-CPU runner about 280 s of test time (100 s of wall time), and the cluster is the server production runs.
# The other two stay on both: the runbook walks two different Web UIs (the dev server's embedded 2.54.1, the
# cluster's 2.42.1), and the replay test is short. `CLUSTER_TESTS=0 npm test` runs every suite on the dev server.
CLUSTER_ONLY_SUITES=(
  test/worker-crash.test.ts
  test/credits/credits-crash.test.ts
  test/calls/carrier-crash.test.ts
  test/durability.test.ts
  test/journeys/journeys.test.ts
)
