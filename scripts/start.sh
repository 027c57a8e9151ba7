#!/usr/bin/env bash
# `npm start`: the whole stack for development. See docs/operations.md#run-it.
# `npm run start:cluster` (this script with --cluster): the production shape,
# docs/cluster.md#production-shaped-cluster-npm-run-startcluster-npm-run-testcluster.
set -euo pipefail
source "$(dirname "$0")/lib/ensure-tools.sh"
# First: everything after, npm and npx included, runs on the Node.js .nvmrc pins (docs/runtime.md). The plain
# `npm start` gets it in ensure_dev_stack_tools, beside the downloads that do not run on it.
if [ "${1:-}" = --cluster ] || [ -n "${TEMPORAL_ADDRESS:-}" ]; then ensure_node; fi
if [ "${1:-}" = --cluster ]; then
  export WORKSPACE_STACK=cluster
  # State of its own, beside (not inside) the dev server's: .data/cluster/.
  export WORKSPACE_DATA_DIR="${WORKSPACE_DATA_DIR:-$PROJECT_ROOT/.data/cluster}"
  ensure_node_modules --omit-dev
  if [ -z "${TEMPORAL_ADDRESS:-}" ]; then
    ensure_temporal_server
    ensure_temporal_ui || log "the Temporal Web UI server could not be built: the cluster runs without its UI"
  fi
  install_missing_debian_packages "${STACK_PACKAGE_CHECKS[@]}"
  [ -n "${DATABASE_URL:-}" ] || ensure_postgres
  ensure_platform_audio
elif [ -n "${TEMPORAL_ADDRESS:-}" ]; then
  side_by_side "ensure_node_modules --omit-dev" "install_missing_debian_packages ${STACK_PACKAGE_CHECKS[*]}"
  ensure_node_modules --omit-dev
  [ -n "${DATABASE_URL:-}" ] || ensure_postgres
  ensure_platform_audio
else
  # On a fresh machine: Node.js then the node modules (without the devDependencies), the Temporal CLI and Debian's
  # packages side by side (docs/operations.md#run-it).
  ensure_dev_stack_tools
fi
cd "$PROJECT_ROOT"
exec node --import tsx scripts/stack/dev-stack.ts
