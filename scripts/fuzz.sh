#!/usr/bin/env bash
# `npm run fuzz`: Schemathesis over the whole API on a stack of its own (scripts/fuzz/fuzz.ts). FUZZ_SECONDS
# bounds the run (default 120); arguments go on to `st run`. Schemathesis and what it installs are pinned in
# scripts/fuzz/requirements.txt and live in a virtualenv under .tools/ (git-ignored), made once.
set -euo pipefail
source "$(dirname "$0")/lib/ensure-tools.sh"
# First: everything after, npm and npx included, runs on the Node.js .nvmrc pins (docs/runtime.md).
ensure_node

ensure_schemathesis() {
  local venv="$PROJECT_ROOT/.tools/schemathesis-venv" requirements="$PROJECT_ROOT/scripts/fuzz/requirements.txt"
  # The venv is remade whenever the pins change.
  if [ -x "$venv/bin/st" ] && cmp -s "$requirements" "$venv/requirements.txt"; then return 0; fi
  if ! command -v python3 >/dev/null 2>&1; then
    log "python3 is missing: install Python 3.10 or later (with its venv module) to run the fuzzer"
    return 1
  fi
  log "installing Schemathesis into .tools/schemathesis-venv (first run only)"
  rm -rf "$venv"
  python3 -m venv "$venv" || { log "python3 -m venv failed: install the venv module (Debian: python3-venv)"; return 1; }
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input --requirement "$requirements" || return 1
  cp "$requirements" "$venv/requirements.txt"
}

ensure_stack_tools
ensure_schemathesis
exec npx tsx scripts/fuzz/fuzz.ts "$@"
