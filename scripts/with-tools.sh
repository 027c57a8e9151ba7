#!/usr/bin/env bash
# Runs a command with the Temporal CLI and PostgreSQL binaries installed and located (PG_BIN_DIR,
# TEMPORAL_CLI_PATH), for scripts that start an ephemeral stack.
set -euo pipefail
source "$(dirname "$0")/lib/ensure-tools.sh"
ensure_stack_tools
exec npx "$@"
