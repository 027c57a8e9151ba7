#!/usr/bin/env bash
# `npm run bench:cold-start -- [runs] [commit]`: how long `npm start` takes on a fresh machine, from the command to
# /health answering 200 (README.md#run-it states the result). Each run: a fresh clone at the commit (default: HEAD,
# as committed) in a new temporary folder (mode 755), so no node_modules, no .tools, no .data; npm's
# and pip's caches pointed at empty folders; the machine's own node first on PATH (the pinned one is fetched as on
# a fresh machine). Debian packages already installed system-wide stay installed (the one apt-get is then skipped).
# Every port the stack opens is a free one, so another stack on the machine does not disturb it. The [setup] lines
# are printed with the second they came at, then the time to /health; Ctrl-C (SIGINT to its process group)
# stops the stack and the run checks nothing it started is left.
set -euo pipefail
runs="${1:-1}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
commit="$(git -C "$repo" rev-parse --verify "${2:-HEAD}^{commit}")"
# The pinned node and the node_modules/.bin of this checkout off PATH: the fresh machine has only its own node.
PATH="$(tr ':' '\n' <<<"$PATH" | grep -v '/\.tools/\|/node_modules/\.bin' | paste -sd: -)"
export PATH

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

for run in $(seq 1 "$runs"); do
  scratch="$(mktemp -d)"
  chmod 755 "$scratch"
  git clone --quiet --no-hardlinks --no-checkout "$repo" "$scratch/clone"
  git -C "$scratch/clone" checkout --quiet --detach "$commit"
  port="$(free_port)"
  log="$scratch/start.log"
  started="$(date +%s.%N)"
  (
    cd "$scratch/clone"
    export npm_config_cache="$scratch/npm-cache" PIP_CACHE_DIR="$scratch/pip-cache" PORT="$port"
    for name in EMBEDDED_POSTGRES_PORT EMBEDDED_TEMPORAL_POSTGRES_PORT EMBEDDED_TEMPORAL_PORT EMBEDDED_TEMPORAL_UI_PORT \
      SIMULATED_CARRIER_PORT SIMULATED_WHATSAPP_PORT TWILIO_TWIN_PORT TELNYX_TWIN_PORT OPENAI_TWIN_PORT GOOGLE_TWIN_PORT \
      SHOPIFY_TWIN_PORT; do
      export "$name=$(free_port)"
    done
    exec setsid npm start
  ) > >(while IFS= read -r line; do
    printf '%6.1f %s\n' "$(echo "$(date +%s.%N) - $started" | bc)" "$line"
  done >"$log") 2>&1 &
  pid=$!
  status=timeout
  for _ in $(seq 1 3000); do
    if curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1; then status=up; break; fi
    kill -0 "$pid" 2>/dev/null || { status=exited; break; }
    sleep 0.1
  done
  elapsed="$(echo "$(date +%s.%N) - $started" | bc)"
  kill -INT -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  sleep 2
  cat "$log"
  printf 'run %s (%s): %s after %.1f s, load average %s\n' "$run" "${commit:0:7}" "$status" "$elapsed" "$(cut -d' ' -f1-3 /proc/loadavg)"
  left="$(ps -eo pid=,args= | grep -F "$scratch/clone" | grep -v grep || true)"
  [ -z "$left" ] || { echo "left running:"; echo "$left"; }
  rm -rf "$scratch"
done
