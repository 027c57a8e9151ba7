# syntax=docker/dockerfile:1
# One image for the API (default command), the Temporal worker, the export worker, the migration job and the
# operator CLI. It runs the JavaScript `npm run build` compiled, with plain node: no TypeScript loader at run time.
#   docker build -t outbound-workspace-backend .
#   docker run ... outbound-workspace-backend                                       -> API on 0.0.0.0:3000
#   docker run ... outbound-workspace-backend node dist/worker/main.js              -> worker
#   docker run ... outbound-workspace-backend node dist/worker/export-worker.js     -> export worker
#   docker run ... outbound-workspace-backend node dist/simulators/simulated-carrier/main.js -> simulated carrier
#   docker run ... outbound-workspace-backend npx prisma migrate deploy             -> migrations
#   docker run ... outbound-workspace-backend node dist/cli/admin.js workspace ...  -> operator CLI

# The Node.js major .nvmrc pins for `npm start` and `npm test` (docs/runtime.md): the tag follows its newest patch
# release, so a rebuild takes the line's security fixes; test/node-runtime.test.ts checks the major matches.
FROM node:24-bookworm-slim AS base
WORKDIR /app
# Prisma's CLI probes OpenSSL to identify the platform, even with the JS/WASM engines this project uses.
RUN apt-get update \
 && apt-get install -y --no-install-recommends openssl \
 && rm -rf /var/lib/apt/lists/*
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false \
    CHECKPOINT_DISABLE=1

##### Build: the locked dependencies, the Prisma client, the compiled JavaScript and the workflow bundle #####
FROM base AS build
# npm ci's postinstall `prisma generate` reads prisma.config.ts, which imports the migration adapter and the
# code it uses: the whole context is copied first. It only needs some DATABASE_URL to exist: a placeholder,
# never used to connect.
ENV DATABASE_URL=postgresql://generate-only@localhost/unused
COPY . .
# Exactly package-lock.json; npm ci refuses a lockfile out of step with package.json. The cache mount keeps
# downloaded tarballs between builds.
RUN --mount=type=cache,target=/root/.npm npm ci
# dist/: the API, the workers, the CLI and the generated Prisma client as ES modules, and dist/workflow-bundle.js
# (and dist/workflow-bundle.traced.js, loaded instead when tracing is on), which the worker loads instead of
# bundling workflows/ at start. Then the dev dependencies (TypeScript,
# vitest, ...) are removed from node_modules. tsx stays (a dependency, since `npm start` runs on it), unused here.
RUN npm run build \
 && npm prune --omit=dev

##### Runtime #####
FROM base AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js \
    PREVIEW_CACHE_DIR=/var/lib/workspace/voice-previews \
    BACKGROUND_AUDIO_DIR=/app/background-audio
# Voice previews: espeak-ng speaks, lame encodes the MP3, sox (with its MP3 reader) measures audio. sox also makes
# the platform's background audio, and decodes and measures uploads. apertium and its language pairs (at least
# English <-> Spanish, scripts/lib/ensure-tools.sh TRANSLATION_PACKAGES) translate transcripts. pocketsphinx and
# its US English model (SPEECH_PACKAGES) transcribe uploaded recordings for speech analysis.
RUN apt-get update \
 && apt-get install -y --no-install-recommends espeak-ng lame sox libsox-fmt-mp3 apertium apertium-eng-spa \
      pocketsphinx pocketsphinx-en-us \
 && rm -rf /var/lib/apt/lists/*
# Files stay owned by root and read-only to the process user.
# package.json's "type": "module" makes dist/**/*.js ES modules; node_modules holds production dependencies only.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The platform's background audio loops, made by their sox recipes now: part of the image, read-only at run time.
RUN node dist/scripts/make-platform-audio.js
# The migration job, `npx prisma migrate deploy`: Prisma's CLI loads prisma.config.ts itself (with its own
# TypeScript loader), and with it the driver adapter and the one module that imports; then the migrations.
COPY --from=build /app/prisma.config.ts ./
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/lib/pg-statement.ts ./lib/pg-statement.ts

# A named volume mounted here takes this owner: the node user writes export files.
RUN mkdir -p /var/lib/workspace/exports /var/lib/workspace/voice-previews \
 && chown node:node /var/lib/workspace/exports /var/lib/workspace/voice-previews
# The node image's unprivileged user (uid 1000).
USER node
EXPOSE 3000
CMD ["node", "dist/api/main.js"]
