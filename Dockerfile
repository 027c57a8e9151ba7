# syntax=docker/dockerfile:1
# One image for the API (default command), the Temporal worker, the export worker and the migration job.
#   docker build -t outbound-workspace-backend .
#   docker run ... outbound-workspace-backend                                           -> API on 0.0.0.0:3000
#   docker run ... outbound-workspace-backend node --import tsx worker/main.ts          -> worker
#   docker run ... outbound-workspace-backend node --import tsx worker/export-worker.ts -> export worker
#   docker run ... outbound-workspace-backend npx prisma migrate deploy                 -> migrations

FROM node:20-bookworm-slim AS base
WORKDIR /app
# Prisma's CLI probes OpenSSL to identify the platform, even with the JS/WASM engines this project uses.
RUN apt-get update \
 && apt-get install -y --no-install-recommends openssl \
 && rm -rf /var/lib/apt/lists/*
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    CHECKPOINT_DISABLE=1

##### Build: dependencies, Prisma client, workflow bundle #####
FROM base AS build
# The install runs the postinstall `prisma generate`, which reads prisma.config.ts (and the migration adapter it
# imports) and the schema. It only needs some DATABASE_URL to exist: a placeholder, never used to connect.
ENV DATABASE_URL=postgresql://generate-only@localhost/unused
COPY package.json package-lock.json prisma.config.ts tsconfig.json ./
COPY prisma ./prisma
# Locked versions; not `npm ci`, which refuses a lockfile without @swc/core's macOS/Windows optional packages
# (the registry these machines use does not serve them). See scripts/lib/ensure-tools.sh.
RUN npm install --no-save
COPY . .
# The worker loads this bundle (WORKFLOW_BUNDLE_PATH) instead of running webpack at start.
RUN node --import tsx worker/bundle-workflows.ts dist/workflow-bundle.js \
 && npm prune --omit=dev

##### Runtime #####
FROM base AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js
# Files stay owned by root and read-only to the process user.
COPY --from=build /app/package.json /app/package-lock.json /app/tsconfig.json /app/prisma.config.ts ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/generated ./generated
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/lib ./lib
COPY --from=build /app/api ./api
COPY --from=build /app/activities ./activities
# The worker resolves workflows/index.ts at start even when it runs the prebuilt bundle.
COPY --from=build /app/workflows ./workflows
COPY --from=build /app/worker ./worker
# Admin CLI (`node --import tsx cli/admin.ts ...`); it imports scripts/stack/paths.ts.
COPY --from=build /app/cli ./cli
COPY --from=build /app/scripts ./scripts

# A named volume mounted here takes this owner: the node user writes export files.
RUN mkdir -p /var/lib/workspace/exports && chown node:node /var/lib/workspace/exports
# The node image's unprivileged user (uid 1000).
USER node
EXPOSE 3000
CMD ["node", "--import", "tsx", "api/main.ts"]
