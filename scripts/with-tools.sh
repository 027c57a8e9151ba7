#!/usr/bin/env bash
# Runs a command with the Temporal CLI and PostgreSQL binaries installed and located (PG_BIN_DIR,
# TEMPORAL_CLI_PATH), for scripts that start an ephemeral stack. With --cluster first, also the real Temporal
# server and its SQL tool (TEMPORAL_SERVER_PATH, TEMPORAL_SQL_TOOL_PATH), for benches that start clusters.
set -euo pipefail
source "$(dirname "$0")/lib/ensure-tools.sh"
# First: everything after, npm and npx included, runs on the Node.js .nvmrc pins (docs/runtime.md).
ensure_node
ensure_stack_tools
if [ "${1:-}" = "--cluster" ]; then
  shift
  ensure_temporal_server
fi
exec npx "$@"
