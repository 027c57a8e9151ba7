# Sourced by start.sh and test.sh: installs, once, what the stack needs and exports where it is.
# Everything lands in git-ignored folders of the checkout, so a second run reuses it.

TEMPORAL_CLI_VERSION=v1.5.1
PROJECT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

log() { printf '[setup] %s\n' "$*" >&2; }

ensure_node_modules() {
  # package-lock.json newer than the install marker means dependencies changed since the last install.
  local marker="$PROJECT_ROOT/node_modules/.package-lock.json"
  if [ ! -f "$marker" ] || [ "$PROJECT_ROOT/package-lock.json" -nt "$marker" ] || [ ! -d "$PROJECT_ROOT/generated/prisma" ]; then
    # Not `npm ci`: the registry here serves no macOS/Windows builds of @swc/core's optional
    # platform packages, so the lockfile cannot list them and `npm ci` refuses it as out of sync.
    # `npm install --no-save` installs the locked versions and leaves the lockfile untouched.
    log "installing node modules (locked versions)"
    (cd "$PROJECT_ROOT" && npm install --no-save --no-audit --no-fund --loglevel=error) || return 1
  fi
}

ensure_temporal_cli() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ] && [ -x "$TEMPORAL_CLI_PATH" ]; then return 0; fi
  local dir="$PROJECT_ROOT/.tools/temporal-cli-$TEMPORAL_CLI_VERSION"
  export TEMPORAL_CLI_PATH="$dir/temporal"
  [ -x "$TEMPORAL_CLI_PATH" ] && return 0
  if ! command -v go >/dev/null 2>&1; then
    log "the Temporal CLI is missing and Go is not installed: install Go >= 1.25, or set TEMPORAL_CLI_PATH, or point TEMPORAL_ADDRESS at a running Temporal server"
    return 1
  fi
  log "building the Temporal CLI $TEMPORAL_CLI_VERSION from the Go module proxy (first run only, a few minutes)"
  mkdir -p "$dir"
  GOBIN="$dir" GOFLAGS=-buildvcs=false go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" || return 1
}

ensure_postgres() {
  local bindir
  bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$bindir" ]; then
    if [ "$(id -u)" != 0 ]; then
      log "PostgreSQL server binaries not found: install Debian's postgresql package, or set DATABASE_URL"
      return 1
    fi
    log "installing PostgreSQL from Debian's packages"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) || return 1
    bindir="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  fi
  export PG_BIN_DIR="$bindir"
}

# The browser tests (GET /docs, the runbook walked in the Temporal Web UI) drive Debian's chromium
# through playwright-core. Not being root is no reason to stop the other tests: those tests then fail
# with a message saying what is missing.
ensure_chromium() {
  if [ -n "${CHROMIUM_PATH:-}" ] && [ -x "$CHROMIUM_PATH" ]; then return 0; fi
  if [ -x /usr/bin/chromium ]; then return 0; fi
  if [ "$(id -u)" != 0 ]; then
    log "chromium not found: the browser tests will fail; install Debian's chromium package or set CHROMIUM_PATH"
    return 0
  fi
  log "installing chromium from Debian's packages (the browser tests drive it)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || return 1
}

# Everything a script that starts the ephemeral stack needs (tests, history recording).
ensure_stack_tools() {
  ensure_node_modules && ensure_temporal_cli && ensure_postgres && ensure_chromium && cd "$PROJECT_ROOT"
}
