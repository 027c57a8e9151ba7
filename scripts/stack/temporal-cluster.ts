// The production shape of Temporal without Docker: the real server (go.temporal.io/server, built from the Go
// module proxy by scripts/lib/ensure-tools.sh) with persistence and visibility on PostgreSQL, its schemas
// created and updated by Temporal's own SQL tool, a configurable number of history shards, the `default`
// namespace and the search attributes the workflows set.
// docs/cluster.md#production-shaped-cluster-npm-run-startcluster-npm-run-testcluster.
import { execFile } from 'node:child_process';
import { openSync, closeSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import { runStatement } from '../../lib/pg-statement';
import { isPortFree, startProcess, waitFor } from './child-process';
import { SEARCH_ATTRIBUTES, type EmbeddedTemporal } from './temporal';
import { startTemporalUi } from './temporal-ui';

export const DEFAULT_HISTORY_SHARDS = 4;
/** auto-setup's default retention (DEFAULT_NAMESPACE_RETENTION=24h). */
const NAMESPACE_RETENTION = '24h';
const ROLE = 'temporal';

export interface ClusterPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

/** The ports of Temporal's own development configuration (config/development-postgres12.yaml), shifted by frontend - 7233. */
export function standardClusterPorts(frontend = 7233): ClusterPorts {
  const shift = frontend - 7233;
  return {
    frontend,
    frontendHttp: 7243 + shift,
    frontendMembership: 6933 + shift,
    history: 7234 + shift,
    historyMembership: 6934 + shift,
    matching: 7235 + shift,
    matchingMembership: 6935 + shift,
    worker: 7239 + shift,
    workerMembership: 6939 + shift,
  };
}

/**
 * Free loopback ports for every service of the server (tests, several clusters side by side). Below 32768: the
 * server records its services' ports in the cluster_membership table, whose PostgreSQL column is a smallint
 * (the kernel's ephemeral ports, which freePort() hands out, are above it and fail the server at start).
 */
export async function freeClusterPorts(): Promise<ClusterPorts> {
  const names = Object.keys(standardClusterPorts()) as Array<keyof ClusterPorts>;
  const ports = new Set<number>();
  while (ports.size < names.length) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    if (!ports.has(candidate) && (await isPortFree(candidate))) ports.add(candidate);
  }
  const values = [...ports];
  return Object.fromEntries(names.map((name, index) => [name, values[index]])) as unknown as ClusterPorts;
}

export interface TemporalClusterOptions {
  /** The `server` and `sql` binaries of go.temporal.io/server (cmd/server, cmd/tools/sql). */
  serverPath: string;
  sqlToolPath: string;
  /** A superuser URL of the PostgreSQL cluster that holds Temporal's databases. */
  postgresAdminUrl: string;
  /** Databases to use: several servers can share one PostgreSQL cluster under different names. */
  databases?: { persistence: string; visibility: string };
  /** Holds the generated config (config/cluster.yaml), the shard record and the server's log (temporal-server.log). */
  rootDir: string;
  historyShards: number;
  ports: ClusterPorts;
  /** The Web UI server (github.com/temporalio/ui-server) and its port; absent: headless. */
  ui?: { serverPath: string; port: number; codecEndpoint?: string };
}

export interface TemporalCluster extends EmbeddedTemporal {
  readonly historyShards: number;
  readonly logFile: string;
  /** Kills the server (and its UI) outright, as a crash would: no shutdown of any kind. */
  kill(): Promise<void>;
}

const run = promisify(execFile);

/** Refuses a shard count other than the one the data was created with: Temporal fixes it at the first start. */
export class ShardCountMismatch extends Error {}

function shardRecordPath(rootDir: string, persistence: string) {
  return path.join(rootDir, `history-shards.${persistence}.json`);
}

function checkShardRecord(rootDir: string, persistence: string, wanted: number) {
  const record = shardRecordPath(rootDir, persistence);
  if (!existsSync(record)) return;
  const { historyShards } = JSON.parse(readFileSync(record, 'utf8')) as { historyShards: number };
  if (historyShards !== wanted) throw shardMismatch(historyShards, wanted);
}

function shardMismatch(created: number, wanted: number) {
  return new ShardCountMismatch(
    `this Temporal cluster's data was created with ${created} history shards, and ${wanted} are configured. ` +
      `The count is fixed at the first start (the server would silently keep ${created}): set ` +
      `TEMPORAL_HISTORY_SHARDS=${created}, or start from empty data to use ${wanted}.`,
  );
}

/** Creates Temporal's role, databases and schemas with its SQL tool, or updates them; safe to run on every start. */
export async function setupTemporalSchemas(
  options: Pick<TemporalClusterOptions, 'sqlToolPath' | 'postgresAdminUrl'> & {
    databases: { persistence: string; visibility: string };
  },
) {
  const admin = new URL(options.postgresAdminUrl);
  const roles = await runStatement(options.postgresAdminUrl, 'SELECT 1 FROM pg_roles WHERE rolname = $1', [ROLE]);
  if (roles.length === 0)
    await runStatement(options.postgresAdminUrl, `CREATE ROLE ${ROLE} LOGIN CREATEDB PASSWORD '${ROLE}'`);
  const connection = ['--ep', admin.hostname, '-p', admin.port, '-u', ROLE, '--pw', ROLE, '--pl', 'postgres12'];
  const schemas = [
    { database: options.databases.persistence, schema: 'postgresql/v12/temporal' },
    { database: options.databases.visibility, schema: 'postgresql/v12/visibility' },
  ];
  for (const { database, schema } of schemas) {
    const tool = (...args: string[]) => run(options.sqlToolPath, [...connection, '--db', database, ...args]);
    const existing = await runStatement(options.postgresAdminUrl, 'SELECT 1 FROM pg_database WHERE datname = $1', [
      database,
    ]);
    // `create` and `setup-schema` are not idempotent; `update-schema` is (it applies only newer versions).
    if (existing.length === 0) await tool('create');
    const databaseUrl = new URL(options.postgresAdminUrl);
    databaseUrl.pathname = `/${database}`;
    const versioned = await runStatement(databaseUrl.toString(), "SELECT to_regclass('public.schema_version') AS t");
    if ((versioned[0] as { t: string | null }).t === null) await tool('setup-schema', '-v', '0.0');
    await tool('update-schema', '--schema-name', schema);
  }
}

/** The server's static config: Temporal's development-postgres12.yaml with our addresses, shards and no metrics endpoint. */
function clusterConfig(options: TemporalClusterOptions, databases: { persistence: string; visibility: string }) {
  const admin = new URL(options.postgresAdminUrl);
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${admin.hostname}:${admin.port}`,
      connectProtocol: 'tcp',
      user: ROLE,
      password: ROLE,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const { ports } = options;
  const service = (grpcPort: number, membershipPort: number, extra: object = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra },
  });
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: options.historyShards,
      datastores: {
        'postgres-default': store(databases.persistence, 20),
        'postgres-visibility': store(databases.visibility, 10),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: {
      frontend: service(ports.frontend, ports.frontendMembership, { httpPort: ports.frontendHttp }),
      history: service(ports.history, ports.historyMembership),
      matching: service(ports.matching, ports.matchingMembership),
      worker: service(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${ports.frontend}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    dynamicConfigClient: { filepath: path.join(options.rootDir, 'config', 'dynamicconfig.yaml'), pollInterval: '10s' },
  };
}

/** Temporal's development-sql.yaml, less what only its own test suites use. */
const DYNAMIC_CONFIG = {
  'limit.maxIDLength': [{ value: 255, constraints: {} }],
  'frontend.enableExecuteMultiOperation': [{ value: true }],
  'frontend.enableUpdateWorkflowExecution': [{ value: true }],
  'frontend.enableUpdateWorkflowExecutionAsyncAccepted': [{ value: true }],
};

/** The `default` namespace and the search attributes, as the dev server registers them at start. Idempotent. */
export async function registerDefaultNamespace(address: string) {
  const connection = await Connection.connect({ address });
  try {
    const namespace = 'default';
    try {
      await connection.workflowService.describeNamespace({ namespace });
    } catch {
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs(NAMESPACE_RETENTION),
      });
    }
    // A namespace just registered is known once the services' namespace caches refresh (every 2 s by default).
    const { customAttributes } = await waitFor(
      'the default namespace',
      () => connection.operatorService.listSearchAttributes({ namespace }),
      60_000,
    );
    const missing = SEARCH_ATTRIBUTES.map((entry) => entry.split('=')[0]!).filter(
      (name) => !(customAttributes && name in customAttributes),
    );
    if (missing.length > 0) {
      await connection.operatorService.addSearchAttributes({
        namespace,
        // INDEXED_VALUE_TYPE_KEYWORD: every attribute in SEARCH_ATTRIBUTES is a Keyword.
        searchAttributes: Object.fromEntries(missing.map((name) => [name, 2])),
      });
    }
    // The frontend's namespace and search-attribute caches refresh every few seconds: usable once a query on
    // one of the attributes is answered.
    const [firstAttribute] = SEARCH_ATTRIBUTES[0]!.split('=');
    await waitFor(
      'the search attributes',
      () => connection.workflowService.listWorkflowExecutions({ namespace, query: `${firstAttribute} = 'probe'` }),
      60_000,
    );
  } finally {
    await connection.close();
  }
}

/**
 * Starts the server on a PostgreSQL cluster that is already running: schemas, config, the process (its log in
 * rootDir/temporal-server.log), then the namespace. Refuses a shard count other than the data's.
 */
export async function startTemporalCluster(options: TemporalClusterOptions): Promise<TemporalCluster> {
  const databases = options.databases ?? { persistence: 'temporal', visibility: 'temporal_visibility' };
  mkdirSync(path.join(options.rootDir, 'config'), { recursive: true });
  checkShardRecord(options.rootDir, databases.persistence, options.historyShards);
  await setupTemporalSchemas({ ...options, databases });
  // YAML is a superset of JSON: the server reads these as its YAML config files.
  writeFileSync(
    path.join(options.rootDir, 'config', 'cluster.yaml'),
    JSON.stringify(clusterConfig(options, databases), null, 2),
  );
  writeFileSync(path.join(options.rootDir, 'config', 'dynamicconfig.yaml'), JSON.stringify(DYNAMIC_CONFIG, null, 2));

  const logFile = path.join(options.rootDir, 'temporal-server.log');
  const log = openSync(logFile, 'a');
  const server = startProcess(
    'temporal-server',
    options.serverPath,
    ['--root', options.rootDir, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start'],
    { stdio: ['ignore', log, log] },
  );
  closeSync(log);
  const address = `127.0.0.1:${options.ports.frontend}`;
  try {
    const historyShards = await waitFor(
      `Temporal server (log: ${logFile})`,
      async () => {
        const connection = await Connection.connect({ address, connectTimeout: 1_000 });
        try {
          await connection.healthService.check({});
          return (await connection.workflowService.getClusterInfo({})).historyShardCount ?? 0;
        } finally {
          await connection.close();
        }
      },
      120_000,
      server.exited,
    );
    if (historyShards !== options.historyShards) throw shardMismatch(historyShards, options.historyShards);
    writeFileSync(shardRecordPath(options.rootDir, databases.persistence), JSON.stringify({ historyShards }) + '\n');
    await registerDefaultNamespace(address);
  } catch (error) {
    await server.stop('SIGTERM', 15_000);
    throw error;
  }
  const ui = options.ui ? await startTemporalUi({ ...options.ui, rootDir: options.rootDir, address }) : null;
  return {
    address,
    uiUrl: ui?.url ?? null,
    historyShards: options.historyShards,
    logFile,
    process: server,
    stop: async () => {
      await Promise.all([server.stop('SIGTERM', 15_000), ui?.process.stop()]);
    },
    kill: async () => {
      await Promise.all([server.stop('SIGKILL'), ui?.process.stop('SIGKILL')]);
    },
  };
}
