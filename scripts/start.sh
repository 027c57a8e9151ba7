#!/usr/bin/env bash
# `npm start`: the whole stack for development. See README "Run it".
set -euo pipefail
source "$(dirname "$0")/lib/ensure-tools.sh"
ensure_node_modules
[ -n "${TEMPORAL_ADDRESS:-}" ] || ensure_temporal_cli
[ -n "${DATABASE_URL:-}" ] || ensure_postgres
ensure_media_tools
ensure_translation_tools
ensure_speech_tools
ensure_platform_audio
cd "$PROJECT_ROOT"
exec node --import tsx scripts/stack/dev-stack.ts
