// `npm start`: PostgreSQL and Temporal (embedded unless DATABASE_URL / TEMPORAL_ADDRESS are set),
// migrations, the development workspace, then the API, the worker and the export worker. Ctrl-C stops all of it.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfig, ConfigError } from '../../lib/config';
import { createDatabase } from '../../lib/database';
import { isPortFree, startProcess, waitFor, type ManagedProcess } from './child-process';
import { ensureDevWorkspace } from './dev-workspace';
import { migrateDeploy } from './migrate';
import { devDataDir, devStackStatePath, projectRoot } from './paths';
import { ensureDatabase, startEmbeddedPostgres } from './postgres';
import { startEmbeddedTemporal } from './temporal';

const startedAt = Date.now();
const stops: Array<() => Promise<void>> = [];
let shuttingDown = false;

async function shutdown(exitCode: number) {
  if (shuttingDown) return;
  shuttingDown = true;
  console.error('\nstopping…');
  for (const stop of stops.reverse()) await stop().catch((error) => console.error(String(error)));
  process.exit(exitCode);
}
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
process.on('SIGHUP', () => void shutdown(0));

function envPort(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > 65535)
    throw new ConfigError(`config: ${name} is invalid: expected a port number`);
  return value;
}

async function requireFreePort(port: number, what: string) {
  if (!(await isPortFree(port))) {
    throw new Error(
      `port ${port} for ${what} is taken: is another \`npm start\` running? Set the port variables to move it.`,
    );
  }
}

function watch(child: ManagedProcess) {
  stops.push(() => child.stop());
  void child.exited.then(async (code) => {
    // Ctrl-C reaches the whole process group: a child may exit just before our own handler runs.
    await new Promise((resolve) => setTimeout(resolve, 300));
    if (!shuttingDown) {
      console.error(`${child.name} exited unexpectedly (code ${code}); stopping the stack`);
      void shutdown(1);
    }
  });
}

async function main() {
  mkdirSync(devDataDir, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env };

  // PostgreSQL (then migrations and the dev workspace) and Temporal come up side by side.
  const database = (async () => {
    if (!env.DATABASE_URL) {
      const port = envPort('EMBEDDED_POSTGRES_PORT', 54329);
      await requireFreePort(port, 'PostgreSQL');
      const postgres = await startEmbeddedPostgres({
        binDir: process.env.PG_BIN_DIR!,
        dataDir: path.join(devDataDir, 'postgres'),
        port,
        durable: true,
        quiet: true,
      });
      watch(postgres.process);
      await ensureDatabase(postgres.urlFor('postgres'), 'workspace');
      env.DATABASE_URL = postgres.urlFor('workspace');
    }
    await migrateDeploy(env.DATABASE_URL);
    const db = createDatabase(env.DATABASE_URL, { poolSize: 1 });
    try {
      return await ensureDevWorkspace(db);
    } finally {
      await db.$disconnect();
    }
  })();
  const temporalServer = (async () => {
    if (env.TEMPORAL_ADDRESS) return;
    const port = envPort('EMBEDDED_TEMPORAL_PORT', 7233);
    const uiPort = envPort('EMBEDDED_TEMPORAL_UI_PORT', port + 1000);
    await requireFreePort(port, 'Temporal');
    await requireFreePort(uiPort, 'the Temporal Web UI');
    mkdirSync(path.join(devDataDir, 'temporal'), { recursive: true });
    const temporal = await startEmbeddedTemporal({
      cliPath: process.env.TEMPORAL_CLI_PATH!,
      port,
      uiPort,
      dbFile: path.join(devDataDir, 'temporal', 'dev.db'),
      quiet: true,
    });
    watch(temporal.process);
    env.TEMPORAL_ADDRESS = temporal.address;
    env.TEMPORAL_UI_URL = temporal.uiUrl!;
  })();
  const [{ workspaceId, apiKey }] = await Promise.all([database, temporalServer]);

  // The simulated carrier runs as its own process; it and the API share a signing secret made for this run
  // unless one is set, the worker dials it, and its events go to this API.
  env.SIMULATED_CARRIER_SIGNING_SECRET ??= randomBytes(32).toString('hex');
  // Likewise the simulated WhatsApp provider: it signs its webhooks to this API with an app secret made
  // for this run unless one is set, and senders go through it.
  env.WHATSAPP_APP_SECRET ??= randomBytes(32).toString('hex');
  const preliminary = parseConfig(env);
  env.TELEPHONY_CALLBACK_BASE_URL ??= `http://${preliminary.HOST}:${preliminary.PORT}`;
  env.SIMULATED_CARRIER_URL ??= `http://${preliminary.SIMULATED_CARRIER_HOST}:${preliminary.SIMULATED_CARRIER_PORT}`;
  env.SIMULATED_WHATSAPP_URL ??= `http://${preliminary.SIMULATED_WHATSAPP_HOST}:${preliminary.SIMULATED_WHATSAPP_PORT}`;
  env.SIMULATED_WHATSAPP_WEBHOOK_URL ??= `http://${preliminary.HOST}:${preliminary.PORT}/whatsapp/webhook`;
  const config = parseConfig(env);

  const apiUrl = `http://${config.HOST}:${config.PORT}`;
  await requireFreePort(config.PORT, 'the API');
  await requireFreePort(config.SIMULATED_CARRIER_PORT, 'the simulated carrier');
  await requireFreePort(config.SIMULATED_WHATSAPP_PORT, 'the simulated WhatsApp provider');
  const nodeArgs = ['--import', 'tsx'];
  watch(
    startProcess('simulated-carrier', process.execPath, [...nodeArgs, 'telephony/simulated-carrier/main.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  watch(
    startProcess('simulated-whatsapp', process.execPath, [...nodeArgs, 'whatsapp/simulated-provider/main.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  watch(startProcess('worker', process.execPath, [...nodeArgs, 'worker/main.ts'], { cwd: projectRoot, env }));
  watch(
    startProcess('export-worker', process.execPath, [...nodeArgs, 'worker/export-worker.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  const api = startProcess('api', process.execPath, [...nodeArgs, 'api/main.ts'], { cwd: projectRoot, env });
  watch(api);
  await waitFor(
    'API',
    async () => {
      const response = await fetch(`${apiUrl}/health`);
      if (response.status !== 200) throw new Error(`health answered ${response.status}`);
    },
    60_000,
    api.exited,
  );

  writeFileSync(
    devStackStatePath,
    JSON.stringify(
      {
        databaseUrl: config.DATABASE_URL,
        temporalAddress: config.TEMPORAL_ADDRESS,
        apiUrl,
        temporalUiUrl: config.TEMPORAL_UI_URL,
      },
      null,
      2,
    ),
  );
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  console.log(
    [
      '',
      `Stack is up in ${seconds} s. Ctrl-C stops everything.`,
      `  API            ${apiUrl}   (health: ${apiUrl}/health)`,
      `  Temporal UI    ${config.TEMPORAL_UI_URL}`,
      `  Carrier        ${config.SIMULATED_CARRIER_URL} (simulated, time scale ${config.SIMULATED_TELEPHONY_TIME_SCALE})`,
      `  WhatsApp       ${config.SIMULATED_WHATSAPP_URL} (simulated, time scale ${config.SIMULATED_WHATSAPP_TIME_SCALE}; webhooks to ${config.SIMULATED_WHATSAPP_WEBHOOK_URL})`,
      `  Temporal       ${config.TEMPORAL_ADDRESS} (namespace ${config.TEMPORAL_NAMESPACE}, task queues ${config.TEMPORAL_TASK_QUEUE} and ${config.EXPORT_TASK_QUEUE})`,
      `  Database       ${config.DATABASE_URL}`,
      `  Workspace      ${workspaceId} ("Development workspace", owner owner@dev.localhost)`,
      `  API key        ${apiKey}   (kept in .data/dev-api-key)`,
      '',
      `Try: curl -H "Authorization: Bearer $(cat .data/dev-api-key)" ${apiUrl}/health`,
      '',
    ].join('\n'),
  );
}

main().catch(async (error) => {
  console.error(
    error instanceof ConfigError
      ? error.message
      : `start failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  await shutdown(1);
});
