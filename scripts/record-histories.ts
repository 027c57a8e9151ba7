// `npm run record-histories [-- name ...]`: runs replay scenarios on real servers (an ephemeral
// PostgreSQL and Temporal, as in the tests) and writes each run's event history to
// test/histories/<name>.json, the same JSON the Temporal Web UI downloads. Commit the files; CI
// replays them. Without names, only scenarios with no committed history are recorded: a committed
// history is the record of what runs in flight did, and re-recording it would hide a break.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ConversationEngine } from '../lib/conversation/conversation-engine';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { registerRoutes } from '../api/http/register-routes';
import { telephonyEventRoutes } from '../api/calls/telephony-events-routes';
import { twilioRoutes } from '../api/carriers/twilio-routes';
import { attachConversationRelay } from '../api/carriers/relay-socket';
import { createConnectionCarrier } from '../lib/carriers/connection-carrier';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../lib/carriers/twin';
import { keyringSchema, newKeyringEntry } from '../lib/secrets/keyring';
import { createTwilioTwin } from '../simulators/twilio-twin/server';
import { createStoreAdminTwin, twinCustomers } from '../simulators/shopify-twin/admin-twin';
import { whatsAppWebhookRoutes } from '../api/whatsapp/webhook-routes';
import { createSimulatedWhatsAppClient } from '../lib/whatsapp/graph-client';
import { createSimulatedWhatsAppProvider } from '../simulators/meta-twin/server';
import type { AppServices } from '../api/app-services';
import { createSimulatedCarrierClient } from '../lib/simulated-carrier/client';
import { createSimulatedCarrier } from '../simulators/simulated-carrier/server';
import { createSimulatedWhatsApp } from '../lib/whatsapp/simulated-whatsapp';
import { defaultExportTaskQueue, defaultSpeechTaskQueue } from '../lib/config';
import { SPEECH_DECODE_TIMEOUT_MS, SPEECH_LIMITS } from '../lib/speech/limits';
import { PocketsphinxTranscriber } from '../lib/speech/pocketsphinx';
import { createSpeechWorker } from '../worker/create-speech-worker';
import { createDatabase } from '../lib/database';
import { createSqlPool } from '../lib/sql-pool';
import { replayScenarios } from '../test/replay/scenarios';
import { createExportWorker } from '../worker/create-export-worker';
import { createEgress, LOOPBACK_ALLOWANCES } from '../lib/http/egress';
import { createWorker } from '../worker/create-worker';
import { startTestStack } from './stack/ephemeral-stack';
import { projectRoot } from './stack/paths';
import { ensureDatabase } from './stack/postgres';

const { stack, stop } = await startTestStack();
const exportDir = mkdtempSync(path.join(os.tmpdir(), 'record-exports-'));
try {
  await ensureDatabase(stack.postgresAdminUrl, 'recording', stack.templateDatabase);
  const databaseUrl = stack.postgresAdminUrl.replace(/\/postgres$/, '/recording');
  const db = createDatabase(databaseUrl);
  const sql = createSqlPool(databaseUrl);
  const taskQueue = `record-${randomUUID()}`;
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection });
  const nativeConnection = await NativeConnection.connect({ address: stack.temporalAddress });
  // The carrier path: the simulated carrier over HTTP (a 40 s call lasts 40 ms), and the API's event
  // endpoint alone, which its signed events reach.
  const signingSecret = randomBytes(24).toString('hex');
  const carrier = createSimulatedCarrier({
    sql: db.sql,
    signingSecret,
    timeScale: 0.001,
    retry: { firstMs: 50, maxMs: 1_000 },
  });
  const carrierUrl = await carrier.listen(0);
  const events = express();
  // The WhatsApp channel: the simulated provider over HTTP, its signed webhooks to the same endpoint app.
  const appSecret = randomBytes(24).toString('hex');
  // The Twilio path: the Twilio twin (a 40 s call lasts 0.4 s), a connection to it per scenario sealed with this key
  // ring, and the API's Twilio routes (callbacks, the script walk's TwiML) on the same endpoint app.
  const keyring = keyringSchema.parse(newKeyringEntry('record'));
  const twin = createTwilioTwin({
    sql: db.sql,
    accounts: [{ sid: TWILIO_TWIN_ACCOUNT_SID, authToken: TWILIO_TWIN_AUTH_TOKEN }],
    timeScale: 0.01,
    retry: { firstMs: 50, maxMs: 1_000 },
  });
  const twinUrl = await twin.listen(0);
  // The store twin's Admin API: 25 customers read 10 a page from a 30-point bucket (a page asks for 22), so the
  // workflow waits for it between pages.
  const store = { shopDomain: 'replay-store.myshopify.com', accessToken: 'shpat_replay_store_token', keyring };
  const storeTwin = createStoreAdminTwin({
    shops: [{ shopDomain: store.shopDomain, accessToken: store.accessToken, customers: twinCustomers(25) }],
    bucketSize: 30,
    restoreRate: 100,
    maxQueryCost: 30,
  });
  const storeTwinUrl = await storeTwin.listen(0);
  const services = {
    db,
    sql,
    temporal: client,
    // The lead workflows' task queue: a line the endpoint hands to a lead queued by its push starts its workflow there.
    taskQueue,
    telephonySigningSecrets: { simulated: signingSecret },
    whatsapp: { appSecret },
    carrierKeyring: keyring,
    publicBaseUrl: '',
    // Set for each scenario: relay for those whose calls hold their conversation over ConversationRelay, else gather
    // (the script walk the other scenarios were recorded with).
    conversationEngine: 'gather' as ConversationEngine,
  };
  registerRoutes(
    events,
    [...telephonyEventRoutes, ...whatsAppWebhookRoutes, ...twilioRoutes],
    services as unknown as AppServices,
  );
  const eventServer = events.listen(0, '127.0.0.1');
  await new Promise((resolve) => eventServer.once('listening', resolve));
  const statusCallbackBaseUrl = `http://127.0.0.1:${(eventServer.address() as AddressInfo).port}`;
  // What Twilio's requests are signed over: the endpoint app's own address.
  services.publicBaseUrl = statusCallbackBaseUrl;
  // The calls' ConversationRelay sockets, on the same server (the relay's handshakes are its only upgrades).
  const relay = attachConversationRelay(eventServer, services as unknown as AppServices);
  const whatsappServer = createSimulatedWhatsAppProvider({
    sql: db.sql,
    appSecret,
    webhookUrl: `${statusCallbackBaseUrl}/whatsapp/webhook`,
    timeScale: 0.001,
    retry: { firstMs: 50, maxMs: 1_000 },
  });
  const whatsappProvider = createSimulatedWhatsAppClient({ baseUrl: await whatsappServer.listen(0) });
  const worker = await createWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: stack.workflowBundlePath,
    dependencies: {
      db,
      // A call on a carrier connection goes to the Twilio twin, any other to the simulated carrier (as worker/main.ts).
      calls: createConnectionCarrier({
        db,
        keyring,
        fallback: createSimulatedCarrierClient({ baseUrl: carrierUrl }),
        publicBaseUrl: statusCallbackBaseUrl,
      }),
      statusCallbackBaseUrl,
      whatsapp: createSimulatedWhatsApp(db),
      whatsappProvider,
      // An ambiguous send is resolved a second on, so that the resend window is recorded quickly.
      whatsappResendAfterMs: 1_000,
      temporal: client,
      // An order notification's delay minute lasts 50 ms, so that its durable timer is recorded quickly.
      orderNotificationMinuteMs: 50,
      secretsKeyring: keyring,
      // The journey scenarios' webhook receivers listen on loopback (test/replay/scenarios.ts).
      egress: createEgress(LOOPBACK_ALLOWANCES),
      crmImportPageSize: 10,
    },
  });
  // Export jobs send their activities to the export queue, as in production.
  const exportWorker = await createExportWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue: defaultExportTaskQueue(taskQueue),
    dependencies: { sql, exportDir },
  });
  const exportWorkerRun = exportWorker.run();
  // Recording analyses send theirs to the speech queue, as in production.
  const speechWorker = await createSpeechWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue: defaultSpeechTaskQueue(taskQueue),
    slots: 2,
    dependencies: {
      db,
      sox: { soxPath: 'sox', timeoutMs: SPEECH_DECODE_TIMEOUT_MS },
      transcriber: new PocketsphinxTranscriber(),
      limits: SPEECH_LIMITS,
    },
  });
  const speechWorkerRun = speechWorker.run();
  await worker.runUntil(async () => {
    const names = process.argv.slice(2);
    const chosen = replayScenarios.filter((scenario) =>
      names.length
        ? names.includes(scenario.name)
        : !existsSync(path.join(projectRoot, 'test/histories', `${scenario.name}.json`)),
    );
    for (const scenario of chosen) {
      services.conversationEngine = scenario.conversationEngine ?? 'gather';
      const workflowId = await scenario.run({
        db,
        client,
        taskQueue,
        whatsappProvider,
        whatsappFaults: (faults) => whatsappServer.setFaults(faults),
        twilio: { twinUrl, keyring },
        store: { ...store, twinUrl: storeTwinUrl },
      });
      // The Temporal CLI writes the canonical proto3 JSON form, the one the Web UI downloads.
      const history = execFileSync(process.env.TEMPORAL_CLI_PATH!, [
        'workflow',
        'show',
        '--workflow-id',
        workflowId,
        '--address',
        stack.temporalAddress,
        '--output',
        'json',
      ]).toString();
      const file = path.join(projectRoot, 'test/histories', `${scenario.name}.json`);
      writeFileSync(file, history);
      console.log(
        `recorded ${path.relative(projectRoot, file)} (${(JSON.parse(history) as { events: unknown[] }).events.length} events)`,
      );
    }
  });
  exportWorker.shutdown();
  speechWorker.shutdown();
  await Promise.all([exportWorkerRun, speechWorkerRun]);
  await carrier.close();
  relay.close();
  await twin.close();
  await storeTwin.close();
  await whatsappServer.close();
  await new Promise((resolve) => eventServer.close(resolve));
  await connection.close();
  await nativeConnection.close();
  await db.$disconnect();
  await sql.end();
} finally {
  rmSync(exportDir, { recursive: true, force: true });
  await stop();
}
