#!/usr/bin/env bash
# `npm run fuzz`: Schemathesis over the whole API on a stack of its own (scripts/fuzz/fuzz.ts). FUZZ_SECONDS
# bounds the run (default 120); arguments go on to `st run`. Schemathesis and what it installs are pinned in
# scripts/fuzz/requirements.txt and live in a virtualenv under .tools/ (git-ignored), made once.
set -euo pipefail
source "$(dirname "$0")/lib/ensure-tools.sh"
# First: everything after, npm and npx included, runs on the Node.js .nvmrc pins (docs/runtime.md).
ensure_node

ensure_stack_tools
ensure_schemathesis
exec npx tsx scripts/fuzz/fuzz.ts "$@"
