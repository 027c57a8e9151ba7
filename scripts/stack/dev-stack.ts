// `npm start`: PostgreSQL and Temporal (embedded unless DATABASE_URL / TEMPORAL_ADDRESS are set),
// migrations, the development workspace, the simulators and twins (the carriers', Meta's WhatsApp, OpenAI's, Google
// Sheets', the store's Admin API), then the API,
// the worker and the export worker. Ctrl-C stops all of it.
// `npm run start:cluster` (WORKSPACE_STACK=cluster): the production shape instead: the real Temporal server on a
// PostgreSQL cluster of its own with TEMPORAL_HISTORY_SHARDS shards and its Web UI server, two API processes
// behind the one API port and two workers
// (docs/cluster.md#production-shaped-cluster-npm-run-startcluster-npm-run-testcluster).
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfig, configVariables } from '../../lib/config';
import { ConfigError } from '../../lib/config-error';
import { createDatabase } from '../../lib/database';
import { freePort, isPortFree, startProcess, waitFor, type ManagedProcess } from './child-process';
import { ensureDevKeyring, ensureDevWorkspace } from './dev-workspace';
import { ensureTelnyxTwinConnection, ensureTwilioTwinConnection, TELNYX_TWIN_LABEL } from '../../lib/carriers/twin';
import { loadTwinConfigOrExit as loadGoogleSheetsTwinConfigOrExit } from '../../simulators/google-twin/config';
import { loadOpenAiTwinConfigOrExit } from '../../simulators/openai-twin/config';
import { loadPollyTwinConfigOrExit } from '../../simulators/polly-twin/config';
import { loadShopifyTwinConfigOrExit } from '../../simulators/shopify-twin/admin-twin-config';
import { loadTelnyxTwinConfigOrExit } from '../../simulators/telnyx-twin/config';
import { loadTwinConfigOrExit } from '../../simulators/twilio-twin/config';
import { migrateDeploy } from './migrate';
import { openAiTwinUse, pointModelsAtOpenAiTwin } from './openai-twin-defaults';
import {
  ensureGoogleTwinConnection,
  ensureGoogleTwinDevKey,
  ensureMetaTwinConnection,
  ensureShopifyTwinConnection,
  META_TWIN_DEV_ACCOUNT,
} from './provider-twins';
import { devApiKeyPath, devDataDir, devStackStatePath, projectRoot } from './paths';
import { ensureDatabase, startEmbeddedPostgres } from './postgres';
import { startEmbeddedTemporal } from './temporal';
import { DEFAULT_HISTORY_SHARDS, standardClusterPorts, startTemporalCluster } from './temporal-cluster';
import { startTcpBalancer } from './tcp-balancer';

const clusterShape = process.env.WORKSPACE_STACK === 'cluster';

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

function historyShards(): number {
  const value = Number(process.env.TEMPORAL_HISTORY_SHARDS ?? DEFAULT_HISTORY_SHARDS);
  if (!Number.isInteger(value) || value < 1)
    throw new ConfigError('config: TEMPORAL_HISTORY_SHARDS is invalid: expected a positive integer');
  return value;
}

/** The cluster's Temporal: the real server on a PostgreSQL cluster of its own, its Web UI when it was built. */
async function startClusterTemporal(port: number, uiPort: number, uiCodecEndpoint: string) {
  const shards = historyShards();
  const postgresPort = envPort('EMBEDDED_TEMPORAL_POSTGRES_PORT', 54330);
  await requireFreePort(postgresPort, "Temporal's PostgreSQL");
  const ports = standardClusterPorts(port);
  for (const [name, value] of Object.entries(ports) as Array<[string, number]>)
    await requireFreePort(value, `Temporal (${name})`);
  const postgres = await startEmbeddedPostgres({
    binDir: process.env.PG_BIN_DIR!,
    dataDir: path.join(devDataDir, 'temporal-postgres'),
    port: postgresPort,
    durable: true,
    quiet: true,
  });
  watch(postgres.process);
  const uiServerPath = process.env.TEMPORAL_UI_SERVER_PATH;
  const temporal = await startTemporalCluster({
    serverPath: process.env.TEMPORAL_SERVER_PATH!,
    sqlToolPath: process.env.TEMPORAL_SQL_TOOL_PATH!,
    postgresAdminUrl: postgres.urlFor('postgres'),
    rootDir: path.join(devDataDir, 'temporal'),
    historyShards: shards,
    ports,
    ...(uiServerPath && { ui: { serverPath: uiServerPath, port: uiPort, codecEndpoint: uiCodecEndpoint } }),
  });
  // Stopped before its PostgreSQL (stops run in reverse).
  stops.push(() => temporal.stop());
  watch(temporal.process);
  console.error(`Temporal server log: ${temporal.logFile} (${shards} history shards)`);
  return temporal;
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
  // Carrier secrets are sealed with it: the CLI, the API and the workers all get it (docs/features/carriers.md).
  env.SECRETS_KEYS = ensureDevKeyring(env);
  // Temporal payloads are sealed with it too; the embedded Web UI decodes them through the API's codec server, whose
  // token is made for this run unless one is set (docs/temporal-ui.md#the-codec-server).
  env.TEMPORAL_CODEC_TOKEN ??= randomBytes(32).toString('hex');
  const apiAddress = configVariables.pick({ HOST: true, PORT: true }).parse(env);
  const uiCodecEndpoint = `http://${apiAddress.HOST}:${apiAddress.PORT}/codec/${env.TEMPORAL_CODEC_TOKEN}`;

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
    if (clusterShape) {
      const cluster = await startClusterTemporal(port, uiPort, uiCodecEndpoint);
      env.TEMPORAL_ADDRESS = cluster.address;
      env.TEMPORAL_UI_URL = cluster.uiUrl ?? 'http://127.0.0.1/the-web-ui-server-was-not-built';
      return;
    }
    const temporal = await startEmbeddedTemporal({
      cliPath: process.env.TEMPORAL_CLI_PATH!,
      port,
      uiPort,
      dbFile: path.join(devDataDir, 'temporal', 'dev.db'),
      quiet: true,
      uiCodecEndpoint,
    });
    watch(temporal.process);
    env.TEMPORAL_ADDRESS = temporal.address;
    env.TEMPORAL_UI_URL = temporal.uiUrl!;
  })();
  const [{ workspaceId, apiKey }] = await Promise.all([database, temporalServer]);

  // Development: the simulated carrier and WhatsApp provider stand in for numbers and senders bound to no connection,
  // their calls and messages free and marked simulated (docs/configuration.md#simulators); production's default refuses them.
  env.SIMULATORS ??= 'enabled';
  // The simulated carrier runs as its own process; it and the API share a signing secret made for this run
  // unless one is set, the worker dials it, and its events go to this API.
  env.SIMULATED_CARRIER_SIGNING_SECRET ??= randomBytes(32).toString('hex');
  // Likewise the simulated WhatsApp provider: it signs its webhooks to this API with an app secret made
  // for this run unless one is set, and senders go through it.
  env.WHATSAPP_APP_SECRET ??= randomBytes(32).toString('hex');
  // The Polly twin: voice previews go through it when VOICE_PREVIEW_SYNTHESIZER is polly-twin, its endpoint and key
  // filled in unless set; espeak-ng stays the default (docs/features/voices.md#who-synthesises-previews).
  const pollyTwin = loadPollyTwinConfigOrExit(env);
  const pollyTwinUrl = `http://${pollyTwin.POLLY_TWIN_HOST}:${pollyTwin.POLLY_TWIN_PORT}`;
  if (env.VOICE_PREVIEW_SYNTHESIZER === 'polly-twin') {
    env.POLLY_ENDPOINT ??= pollyTwinUrl;
    env.POLLY_REGION ??= pollyTwin.POLLY_TWIN_REGION;
    if (!env.POLLY_ACCESS_KEY_ID && !env.POLLY_SECRET_ACCESS_KEY) {
      env.POLLY_ACCESS_KEY_ID = pollyTwin.POLLY_TWIN_CREDENTIALS[0]!.accessKeyId;
      env.POLLY_SECRET_ACCESS_KEY = pollyTwin.POLLY_TWIN_CREDENTIALS[0]!.secretAccessKey;
    }
  }
  const preliminary = parseConfig(env);
  env.TELEPHONY_CALLBACK_BASE_URL ??= `http://${preliminary.HOST}:${preliminary.PORT}`;
  env.SIMULATED_CARRIER_URL ??= `http://${preliminary.SIMULATED_CARRIER_HOST}:${preliminary.SIMULATED_CARRIER_PORT}`;
  env.SIMULATED_WHATSAPP_URL ??= `http://${preliminary.SIMULATED_WHATSAPP_HOST}:${preliminary.SIMULATED_WHATSAPP_PORT}`;
  env.SIMULATED_WHATSAPP_WEBHOOK_URL ??= `http://${preliminary.HOST}:${preliminary.PORT}/whatsapp/webhook`;
  // The Twilio twin runs as its own process at the simulated carrier's pace; its callbacks and TwiML requests go to
  // this API, whose public address (PUBLIC_BASE_URL, which the signatures cover) is its local one here.
  env.PUBLIC_BASE_URL ??= `http://${preliminary.HOST}:${preliminary.PORT}`;
  env.TWILIO_TWIN_TIME_SCALE ??= String(preliminary.SIMULATED_CARRIER_TIME_SCALE);
  const twin = loadTwinConfigOrExit(env);
  const twinUrl = `http://${twin.TWILIO_TWIN_HOST}:${twin.TWILIO_TWIN_PORT}`;
  // The Telnyx twin likewise, at the same pace; its webhooks go to this API's route of each call.
  env.TELNYX_TWIN_TIME_SCALE ??= String(preliminary.SIMULATED_CARRIER_TIME_SCALE);
  const telnyxTwin = loadTelnyxTwinConfigOrExit(env);
  const telnyxTwinUrl = `http://${telnyxTwin.TELNYX_TWIN_HOST}:${telnyxTwin.TELNYX_TWIN_PORT}/v2`;
  // The OpenAI twin: the model of the dialogue engine and of call intelligence, under the provider name openai-twin,
  // unless DIALOGUE_* or INTELLIGENCE_* name a model endpoint of the operator's (docs/features/conversation/model-engine.md#in-the-development-stack).
  const openAiTwin = loadOpenAiTwinConfigOrExit(env);
  const openAiTwinUrl = `http://${openAiTwin.OPENAI_TWIN_HOST}:${openAiTwin.OPENAI_TWIN_PORT}/v1`;
  const pointedAtOpenAiTwin = pointModelsAtOpenAiTwin(env, {
    baseURL: openAiTwinUrl,
    apiKey: openAiTwin.OPENAI_TWIN_API_KEYS[0]!,
  });
  // The simulated WhatsApp process runs as Meta's twin, knowing the development account (unless the operator gave it
  // accounts: then their first is the one connected); the Google Sheets twin knows the development service account
  // (its key made once, in .data) besides any given; the store twin's Admin API serves its shops (the first connected).
  env.META_TWIN_ACCOUNTS ??= JSON.stringify([META_TWIN_DEV_ACCOUNT]);
  const sheetsTwinPreliminary = loadGoogleSheetsTwinConfigOrExit(env);
  const sheetsTwinUrl = `http://${sheetsTwinPreliminary.GOOGLE_TWIN_HOST}:${sheetsTwinPreliminary.GOOGLE_TWIN_PORT}`;
  const googleDevKey = ensureGoogleTwinDevKey(sheetsTwinUrl);
  env.GOOGLE_TWIN_ACCOUNTS = JSON.stringify([
    ...sheetsTwinPreliminary.GOOGLE_TWIN_ACCOUNTS.filter(
      (account) => account.clientEmail !== googleDevKey.account.clientEmail,
    ),
    googleDevKey.account,
  ]);
  // Read under its old name too (simulators/google-twin/config.ts), merged above: the twin is given the new name alone.
  delete env.GOOGLE_SHEETS_TWIN_ACCOUNTS;
  const sheetsTwin = loadGoogleSheetsTwinConfigOrExit(env);
  const storeTwin = loadShopifyTwinConfigOrExit(env);
  const storeTwinUrl = `http://${storeTwin.SHOPIFY_TWIN_HOST}:${storeTwin.SHOPIFY_TWIN_PORT}`;
  const config = parseConfig(env);
  const metaAccount = config.META_TWIN_ACCOUNTS![0]!;
  // The development workspace calls through the local Twilio twin, its numbers bound to it; it has a connection to
  // the Telnyx twin too, to which a number is moved with `number assign --carrier-connection`.
  const twinDb = createDatabase(config.DATABASE_URL, { poolSize: 1 });
  let telnyxConnectionId: string;
  let meta: Awaited<ReturnType<typeof ensureMetaTwinConnection>>;
  let sheetsConnectionId: string;
  let storeConnectionId: string;
  try {
    await ensureTwilioTwinConnection(twinDb, config.SECRETS_KEYS!, workspaceId, twinUrl);
    ({ id: telnyxConnectionId } = await ensureTelnyxTwinConnection(
      twinDb,
      config.SECRETS_KEYS!,
      workspaceId,
      telnyxTwinUrl,
    ));
    // And it has a WhatsApp sender bound to a meta-twin connection, a google-twin sheets connection and a store
    // connection whose Admin API token is the store twin's (docs/operations.md#run-it).
    meta = await ensureMetaTwinConnection(
      twinDb,
      config.SECRETS_KEYS!,
      workspaceId,
      config.SIMULATED_WHATSAPP_URL!,
      metaAccount,
    );
    ({ id: sheetsConnectionId } = await ensureGoogleTwinConnection(
      twinDb,
      config.SECRETS_KEYS!,
      workspaceId,
      `${sheetsTwinUrl}/`,
      googleDevKey.keyJson,
    ));
    ({ id: storeConnectionId } = await ensureShopifyTwinConnection(
      twinDb,
      config.SECRETS_KEYS!,
      workspaceId,
      storeTwinUrl,
      storeTwin.SHOPIFY_TWIN_SHOPS[0]!,
    ));
  } finally {
    await twinDb.$disconnect();
  }

  const apiUrl = `http://${config.HOST}:${config.PORT}`;
  await requireFreePort(config.PORT, 'the API');
  await requireFreePort(config.SIMULATED_CARRIER_PORT, 'the simulated carrier');
  await requireFreePort(config.SIMULATED_WHATSAPP_PORT, 'the simulated WhatsApp provider');
  await requireFreePort(twin.TWILIO_TWIN_PORT, 'the Twilio twin');
  await requireFreePort(telnyxTwin.TELNYX_TWIN_PORT, 'the Telnyx twin');
  await requireFreePort(openAiTwin.OPENAI_TWIN_PORT, 'the OpenAI twin');
  await requireFreePort(pollyTwin.POLLY_TWIN_PORT, 'the Polly twin');
  await requireFreePort(sheetsTwin.GOOGLE_TWIN_PORT, 'the Google Sheets twin');
  await requireFreePort(storeTwin.SHOPIFY_TWIN_PORT, 'the store twin');
  const nodeArgs = ['--import', 'tsx'];
  watch(
    startProcess('simulated-carrier', process.execPath, [...nodeArgs, 'simulators/simulated-carrier/main.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  watch(
    startProcess('twilio-twin', process.execPath, [...nodeArgs, 'simulators/twilio-twin/main.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  watch(
    startProcess('telnyx-twin', process.execPath, [...nodeArgs, 'simulators/telnyx-twin/main.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  watch(
    startProcess('openai-twin', process.execPath, [...nodeArgs, 'simulators/openai-twin/main.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  watch(
    startProcess('polly-twin', process.execPath, [...nodeArgs, 'simulators/polly-twin/main.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  watch(
    startProcess('google-sheets-twin', process.execPath, [...nodeArgs, 'simulators/google-twin/main.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  watch(
    startProcess('store-twin', process.execPath, [...nodeArgs, 'simulators/shopify-twin/admin-twin-main.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  watch(
    startProcess('simulated-whatsapp', process.execPath, [...nodeArgs, 'simulators/meta-twin/main.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  const copies = clusterShape ? 2 : 1;
  for (let index = 1; index <= copies; index++) {
    const name = copies === 1 ? 'worker' : `worker-${index}`;
    watch(startProcess(name, process.execPath, [...nodeArgs, 'worker/main.ts'], { cwd: projectRoot, env }));
  }
  watch(
    startProcess('export-worker', process.execPath, [...nodeArgs, 'worker/export-worker.ts'], {
      cwd: projectRoot,
      env,
    }),
  );
  // The cluster shape runs two API processes on ports of their own behind the one API port.
  const apiPorts = clusterShape ? [await freePort(), await freePort()] : [config.PORT];
  await Promise.all(
    apiPorts.map(async (port, index) => {
      const name = apiPorts.length === 1 ? 'api' : `api-${index + 1}`;
      const api = startProcess(name, process.execPath, [...nodeArgs, 'api/main.ts'], {
        cwd: projectRoot,
        env: { ...env, PORT: String(port) },
      });
      watch(api);
      await waitFor(
        name,
        async () => {
          const response = await fetch(`http://${config.HOST}:${port}/health`);
          if (response.status !== 200) throw new Error(`health answered ${response.status}`);
        },
        60_000,
        api.exited,
      );
    }),
  );
  if (clusterShape) {
    const balancer = await startTcpBalancer({ host: config.HOST, port: config.PORT }, apiPorts);
    stops.push(() => balancer.stop());
  }

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
      `Stack is up in ${seconds} s${clusterShape ? ' (production shape: Temporal cluster, 2 APIs, 2 workers)' : ''}. Ctrl-C stops everything.`,
      `  API            ${apiUrl}   (health: ${apiUrl}/health)${clusterShape ? `, balanced over ports ${apiPorts.join(' and ')}` : ''}`,
      `  Temporal UI    ${config.TEMPORAL_UI_URL}`,
      `  Carrier        ${twinUrl} (the Twilio twin, time scale ${twin.TWILIO_TWIN_TIME_SCALE}: the development workspace's numbers); ${config.SIMULATED_CARRIER_URL} (simulated: numbers bound to no connection)`,
      `  Telnyx twin    ${telnyxTwinUrl} (time scale ${telnyxTwin.TELNYX_TWIN_TIME_SCALE}; connection ${telnyxConnectionId}, "${TELNYX_TWIN_LABEL}": number assign --carrier-connection ${telnyxConnectionId} to call through it)`,
      `  OpenAI twin    ${openAiTwinUrl} (${openAiTwinUse(pointedAtOpenAiTwin)})`,
      `  Polly twin     ${pollyTwinUrl} (Amazon Polly's speech; voice previews by ${config.VOICE_PREVIEW_SYNTHESIZER}${config.VOICE_PREVIEW_SYNTHESIZER === 'espeak-ng' ? ': VOICE_PREVIEW_SYNTHESIZER=polly-twin to hear them through the twin' : ''})`,
      `  WhatsApp       ${config.SIMULATED_WHATSAPP_URL} (Meta's twin, time scale ${config.SIMULATED_WHATSAPP_TIME_SCALE}; webhooks to ${config.SIMULATED_WHATSAPP_WEBHOOK_URL}; connection ${meta.connection.id}, "${meta.connection.label}", sender ${meta.e164})`,
      `  Sheets twin    ${sheetsTwinUrl} (Google Sheets v4, ${sheetsTwin.GOOGLE_TWIN_WRITES_PER_WINDOW} writes per ${sheetsTwin.GOOGLE_TWIN_QUOTA_WINDOW_MS} ms; connection ${sheetsConnectionId}, service account ${googleDevKey.account.clientEmail}: sheet attach --connection ${sheetsConnectionId})`,
      `  Store twin     ${storeTwinUrl} (Shopify Admin GraphQL; store connection ${storeConnectionId}, ${storeTwin.SHOPIFY_TWIN_SHOPS[0]!.shopDomain}, Admin API token shopify-twin)`,
      `  Temporal       ${config.TEMPORAL_ADDRESS} (namespace ${config.TEMPORAL_NAMESPACE}, task queues ${config.TEMPORAL_TASK_QUEUE} and ${config.EXPORT_TASK_QUEUE})`,
      `  Database       ${config.DATABASE_URL}`,
      `  Workspace      ${workspaceId} ("Development workspace", owner owner@dev.localhost; carrier: the Twilio twin at ${twinUrl})`,
      `  API key        ${apiKey}   (kept in ${path.relative(projectRoot, devApiKeyPath)})`,
      '',
      `Try: curl -H "Authorization: Bearer $(cat ${path.relative(projectRoot, devApiKeyPath)})" ${apiUrl}/health`,
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
