// Which Temporal the test suites run on: the CLI's dev server (default), or with TEST_TEMPORAL=cluster the
// production-shaped cluster (scripts/stack/temporal-cluster.ts; `npm run test:cluster`). Tests that need a
// server of their own (to kill and restart it, or to see its Web UI) get the same kind through ownTemporalServer.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './child-process';
import { DEFAULT_HISTORY_SHARDS, freeClusterPorts, startTemporalCluster } from './temporal-cluster';
import { startEmbeddedTemporal } from './temporal';

export type TestTemporalKind =
  | { kind: 'dev' }
  /** postgresAdminUrl: the PostgreSQL cluster of the tests' Temporal servers (not the app's). */
  | { kind: 'cluster'; postgresAdminUrl: string; historyShards: number };

export function requiredPath(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through \`npm test\` or \`npm run test:cluster\``);
  return value;
}

/** TEST_TEMPORAL ("dev" or "cluster") and TEST_TEMPORAL_SHARDS, checked. */
export function testTemporalChoice(env = process.env): { kind: 'dev' } | { kind: 'cluster'; historyShards: number } {
  const kind = env.TEST_TEMPORAL ?? 'dev';
  if (kind === 'dev') return { kind };
  if (kind !== 'cluster') throw new Error(`TEST_TEMPORAL must be "dev" or "cluster", not "${kind}"`);
  const historyShards = Number(env.TEST_TEMPORAL_SHARDS ?? DEFAULT_HISTORY_SHARDS);
  if (!Number.isInteger(historyShards) || historyShards < 1)
    throw new Error(`TEST_TEMPORAL_SHARDS must be a positive integer, not "${env.TEST_TEMPORAL_SHARDS}"`);
  return { kind, historyShards };
}

/** The CLI's dev server on a free port, headless: in memory (dbFile null, the tests) or on a SQLite file. */
export async function startDevServer(dbFile: string | null = null) {
  return startEmbeddedTemporal({
    cliPath: requiredPath('TEMPORAL_CLI_PATH'),
    port: await freePort(),
    uiPort: null,
    dbFile,
    quiet: true,
  });
}

/** The production-shaped cluster on free ports, headless, in databases `temporal_<suffix>` of a PostgreSQL cluster. */
export async function startClusterIn(postgresAdminUrl: string, rootDir: string, historyShards: number, suffix: string) {
  return startTemporalCluster({
    serverPath: requiredPath('TEMPORAL_SERVER_PATH'),
    sqlToolPath: requiredPath('TEMPORAL_SQL_TOOL_PATH'),
    postgresAdminUrl,
    databases: { persistence: `temporal_${suffix}`, visibility: `temporal_visibility_${suffix}` },
    rootDir,
    historyShards,
    ports: await freeClusterPorts(),
  });
}

export interface OwnTemporalServer {
  readonly address: string;
  readonly uiUrl: string | null;
  /** Kills the server outright (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same store and ports. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** A server of a test's own, durable in dataDir (dev) or in databases of its own (cluster). */
export async function ownTemporalServer(
  kind: TestTemporalKind,
  dataDir: string,
  { ui = false, uiCodecEndpoint }: { ui?: boolean; uiCodecEndpoint?: string } = {},
): Promise<OwnTemporalServer> {
  mkdirSync(dataDir, { recursive: true });
  let start: () => Promise<{ address: string; uiUrl: string | null; stop(): Promise<void>; kill(): Promise<void> }>;
  if (kind.kind === 'dev') {
    const options = {
      cliPath: requiredPath('TEMPORAL_CLI_PATH'),
      port: await freePort(),
      uiPort: ui ? await freePort() : null,
      dbFile: path.join(dataDir, 'temporal.db'),
      quiet: true,
      uiCodecEndpoint,
    };
    start = async () => {
      const server = await startEmbeddedTemporal(options);
      return { ...server, kill: () => server.process.stop('SIGKILL') };
    };
  } else {
    const suffix = randomBytes(4).toString('hex');
    const options = {
      serverPath: requiredPath('TEMPORAL_SERVER_PATH'),
      sqlToolPath: requiredPath('TEMPORAL_SQL_TOOL_PATH'),
      postgresAdminUrl: kind.postgresAdminUrl,
      databases: { persistence: `temporal_${suffix}`, visibility: `temporal_visibility_${suffix}` },
      rootDir: dataDir,
      historyShards: kind.historyShards,
      ports: await freeClusterPorts(),
      ...(ui && {
        ui: {
          serverPath: requiredPath('TEMPORAL_UI_SERVER_PATH'),
          port: await freePort(),
          codecEndpoint: uiCodecEndpoint,
        },
      }),
    };
    start = () => startTemporalCluster(options);
  }
  let server = await start();
  return {
    address: server.address,
    uiUrl: server.uiUrl,
    kill: () => server.kill(),
    restart: async () => {
      server = await start();
    },
    stop: () => server.stop(),
  };
}
