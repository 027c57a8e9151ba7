import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import WebSocket from 'ws';
import { TEST_SESSION_PROTOCOL } from '../api/test-sessions/session-socket';
import { callIntelligenceModelFromConfig } from '../lib/providers';
import { parseConfig } from '../lib/config';
import { messageText } from '../lib/carriers/twilio/conversation-relay/frames';
import { listCrmConnectionsForOperator, openCrmAdminConnection } from '../lib/crm/admin-token';
import { readCustomersPage } from '../lib/crm/shopify-admin';
import { createDatabase } from '../lib/database';
import { dialogueEngineKind } from '../lib/conversation/create-engine';
import { grantCredits } from '../lib/door/workspace-admin';
import { keyringSchema } from '../lib/secrets/keyring';
import { listSheetConnections } from '../lib/sheets/connections';
import { openSheetConnection } from '../lib/sheets/opened-connection';
import { GoogleSpreadsheetProvider } from '../lib/sheets/google-provider';
import { serverFrameSchema } from '../lib/test-sessions/frames';
import { GRAPH_API_VERSION } from '../lib/whatsapp/graph-client';
import { listWhatsAppConnections, openWhatsAppConnection } from '../lib/whatsapp/connections';
import { freePort, isPortFree } from '../scripts/stack/child-process';
import { openAiTwinUse, pointModelsAtOpenAiTwin } from '../scripts/stack/openai-twin-defaults';
import { GOOGLE_TWIN_DEV_ACCOUNT_EMAIL, META_TWIN_DEV_ACCOUNT } from '../scripts/stack/provider-twins';
import { OPENAI_TWIN_API_KEY, OPENAI_TWIN_MODEL } from '../simulators/openai-twin/config';
import { TWIN_REPLIES } from '../simulators/openai-twin/model';
import { insertAgent } from './support/agents';
import { startTestProcess, type TestProcess } from './support/processes';

const projectRoot = path.resolve(import.meta.dirname, '..');

/** Live processes of a process group. Zombies are left out: they have exited and hold nothing. */
function processesInGroup(groupId: number): string[] {
  const lines = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args=']).toString().trim().split('\n');
  return lines.filter((line) => {
    const [, pgid, stat] = line.trim().split(/\s+/);
    return Number(pgid) === groupId && !stat!.startsWith('Z');
  });
}

/** A failure of the test with the end of what the stack printed, which says why it stopped if it did. */
function withStackOutput(error: unknown, output: string): unknown {
  if (error instanceof Error)
    error.message += `\n--- npm start printed (its last 6,000 characters) ---\n${output.slice(-6000)}`;
  return error;
}

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
}

/**
 * A port the test picked free (scripts/stack/child-process.ts freePort) may be taken by another test file's process
 * before the stack binds it: the stack then refuses to start, naming the port. Only that is tried again.
 */
const PORT_TAKEN = /port \d+ for .* is taken|EADDRINUSE/;

/** `npm start` minus the installs, on free ports with its data in a temporary folder. */
async function startDevStack(): Promise<DevStack> {
  const started = await startDevStackOnce();
  if (started.process.running || !PORT_TAKEN.test(started.output())) return started;
  return startDevStackOnce();
}

interface DevStack {
  process: TestProcess;
  stack: TestProcess['child'];
  ports: Record<string, number>;
  dataDir: string;
  exited: Promise<number | null>;
  output: () => string;
}

/**
 * The data folder of every stack of the file: the first start is a cold one (a new cluster, every migration, the dev
 * workspace and its key made), a later one finds them, as a second `npm start` does, and skips seconds of CPU. Killing
 * a stack outright does not need a cold one.
 */
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dev-stack-test-'));
chmodSync(dataDir, 0o711);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function startDevStackOnce(): Promise<DevStack> {
  const ports = {
    PORT: await freePort(),
    EMBEDDED_POSTGRES_PORT: await freePort(),
    EMBEDDED_TEMPORAL_PORT: await freePort(),
    EMBEDDED_TEMPORAL_UI_PORT: await freePort(),
    SIMULATED_CARRIER_PORT: await freePort(),
    SIMULATED_WHATSAPP_PORT: await freePort(),
    TWILIO_TWIN_PORT: await freePort(),
    TELNYX_TWIN_PORT: await freePort(),
    OPENAI_TWIN_PORT: await freePort(),
    POLLY_TWIN_PORT: await freePort(),
    GOOGLE_TWIN_PORT: await freePort(),
    SHOPIFY_TWIN_PORT: await freePort(),
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WORKSPACE_DATA_DIR: dataDir,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    // Voice previews through the stack's Polly twin (its endpoint and key filled in by the stack).
    VOICE_PREVIEW_SYNTHESIZER: 'polly-twin',
  };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  // The stack's own twin accounts and shops.
  for (const name of [
    'META_TWIN_ACCOUNTS',
    'GOOGLE_TWIN_ACCOUNTS',
    'SHOPIFY_TWIN_SHOPS',
    'SECRETS_KEYS',
    'POLLY_ENDPOINT',
  ])
    delete env[name];
  // No model of the caller's: the stack's defaults.
  for (const name of Object.keys(env)) if (/^(DIALOGUE|INTELLIGENCE)_/.test(name)) delete env[name];
  // Its own process group, as in a terminal: Ctrl-C sends SIGINT to the whole group. Killed, group and all,
  // when the test finishes (test/support/processes.ts).
  const started = startTestProcess('dev-stack', process.execPath, ['--import', 'tsx', 'scripts/stack/dev-stack.ts'], {
    cwd: projectRoot,
    env,
  });
  const stack = started.child;
  const exited = started.exited.then(({ code }) => code);
  await eventually(() => started.output().includes('Stack is up') || !started.running, 90_000);
  return { process: started, stack, ports, dataDir, exited, output: started.output };
}

/** The agent's first words in a web test session, over its socket (closed then). */
function firstWordsOfSession(sessionUrl: string, token: string): Promise<string> {
  const ws = new WebSocket(sessionUrl, [TEST_SESSION_PROTOCOL, token]);
  let words = '';
  return new Promise<string>((resolve, reject) => {
    ws.on('message', (data) => {
      const frame = serverFrameSchema.parse(JSON.parse(messageText(data)));
      if (frame.type === 'token') words += frame.token;
      else if (frame.type === 'turn_end') resolve(words.trim());
      else reject(new Error(`the session answered ${JSON.stringify(frame)}`));
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
    ws.once('error', reject);
  }).finally(() => ws.close());
}

/**
 * The OpenAI twin runs, and the API and the worker were given it under its own name: the API's and the worker's start
 * lines say openai-twin, and an agent with instructions talks through it in a test session of the dev workspace.
 */
async function throughTheOpenAiTwin(ports: Record<string, number>, dataDir: string, key: string, output: () => string) {
  const twinUrl = `http://127.0.0.1:${ports.OPENAI_TWIN_PORT}`;
  expect(output()).toContain(
    `OpenAI twin    ${twinUrl}/v1 (rules, not a model, recorded as openai-twin: the dialogue of agents with instructions and call intelligence)`,
  );
  expect(output()).toMatch(/\[api\] \{.*"dialogue":"openai-twin".*"msg":"API listening"/);
  const workerUp = /\[worker\] \{.*"intelligence":"openai-twin".*"msg":"worker polling task queue"/;
  await eventually(() => workerUp.test(output()), 30_000);
  expect(output()).toMatch(workerUp);

  const { databaseUrl } = JSON.parse(readFileSync(path.join(dataDir, 'dev-stack.json'), 'utf8')) as {
    databaseUrl: string;
  };
  const workspaceId = /Workspace +([0-9a-f-]{36})/.exec(output())![1]!;
  const db = createDatabase(databaseUrl, { poolSize: 1 });
  let agentId: string;
  try {
    await grantCredits(db, workspaceId, 1);
    ({ id: agentId } = await insertAgent(db, workspaceId, { instructions: 'You sell shoes.' }));
  } finally {
    await db.$disconnect();
  }
  const created = await fetch(`http://127.0.0.1:${ports.PORT}/v1/test-sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agentId, lead: { name: 'Ana', phone: '+14155550100' } }),
  });
  expect(created.status).toBe(201);
  const session = (await created.json()) as { url: string; token: string };
  // No first message: the model opens; the twin's rules answer it.
  expect(await firstWordsOfSession(session.url, session.token)).toContain(TWIN_REPLIES.opening);
  const { requests } = (await (await fetch(`${twinUrl}/control/requests`)).json()) as {
    requests: Array<{ body: { model: string } }>;
  };
  expect(requests.map((request) => request.body.model)).toEqual([OPENAI_TWIN_MODEL]);
}

/**
 * The provider twins of issue 31 run, and the development workspace's connections to them work with what they hold:
 * the meta-twin connection's token is one Meta's twin accepts (and a request without it is refused as Meta would), its
 * sender is bound to it; the google-twin connection's key gets a token from the Sheets twin and writes a spreadsheet
 * shared with its e-mail; the store connection's shopify-twin token reads the store twin's customers. No secret is
 * in the stack's output.
 */
async function throughTheProviderTwins(ports: Record<string, number>, dataDir: string, output: () => string) {
  const { databaseUrl } = JSON.parse(readFileSync(path.join(dataDir, 'dev-stack.json'), 'utf8')) as {
    databaseUrl: string;
  };
  const keyring = keyringSchema.parse(readFileSync(path.join(dataDir, 'secrets-keys'), 'utf8').trim());
  const workspaceId = /Workspace +([0-9a-f-]{36})/.exec(output())![1]!;
  const whatsappUrl = `http://127.0.0.1:${ports.SIMULATED_WHATSAPP_PORT}`;
  const sheetsUrl = `http://127.0.0.1:${ports.GOOGLE_TWIN_PORT}`;
  const storeUrl = `http://127.0.0.1:${ports.SHOPIFY_TWIN_PORT}`;
  const db = createDatabase(databaseUrl, { poolSize: 1 });
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    // Meta's twin: no token, 401 code 190; the connection's token, taken (an unknown object: 400 code 100).
    const [whatsapp, ...moreWhatsApp] = await listWhatsAppConnections(db, workspaceId);
    expect(moreWhatsApp).toEqual([]);
    expect(whatsapp).toMatchObject({ provider: 'meta-twin', baseUrl: whatsappUrl, keyId: expect.any(String) });
    const meta = (await openWhatsAppConnection(db, keyring, whatsapp!.id))!;
    const graph = (token?: string) =>
      fetch(`${whatsappUrl}/${GRAPH_API_VERSION}/${meta.phoneNumberId}`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
    const refused = await graph();
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: { code: 190, type: 'OAuthException' } });
    const taken = await graph(meta.accessToken);
    expect(await taken.json()).toMatchObject({ error: { code: 100 } });
    expect(taken.status).toBe(400);
    const sender = await db.whatsAppSender.findFirstOrThrow({ where: { workspaceId, connectionId: whatsapp!.id } });
    expect(sender).toMatchObject({ status: 'CONNECTED', provider: 'meta-twin', phoneNumberId: meta.phoneNumberId });
    expect(output()).toContain(`connection ${whatsapp!.id}, "Development Meta twin", sender ${sender.e164}`);

    // The Google Sheets twin: the provider writes, with the connection's key, a spreadsheet shared with its e-mail.
    const [sheets, ...moreSheets] = await listSheetConnections(db, workspaceId);
    expect(moreSheets).toEqual([]);
    expect(sheets).toMatchObject({
      provider: 'google-twin',
      serviceAccountEmail: GOOGLE_TWIN_DEV_ACCOUNT_EMAIL,
      baseUrl: `${sheetsUrl}/`,
    });
    const opened = (await openSheetConnection(sql, keyring, sheets!.id))!;
    const made = await fetch(`${sheetsUrl}/control/spreadsheets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sharedWith: [GOOGLE_TWIN_DEV_ACCOUNT_EMAIL] }),
    });
    const { spreadsheetId } = (await made.json()) as { spreadsheetId: string };
    const provider = new GoogleSpreadsheetProvider({
      name: 'google-twin',
      key: opened.key,
      rootUrl: opened.rootUrl,
      limiter: { reserve: () => Promise.resolve(0) },
    });
    await provider.create({ key: spreadsheetId, title: 'Leads', tab: 'Leads' });
    expect(await provider.batchUpdateValues(spreadsheetId, [{ range: 'Leads!A1:B1', values: [['Ana', 1]] }])).toEqual({
      totalUpdatedRows: 1,
    });
    expect(output()).toContain(`connection ${sheets!.id}, service account ${GOOGLE_TWIN_DEV_ACCOUNT_EMAIL}`);

    // The store twin: the store connection's Admin API token reads the first page of its development shop.
    const [store, ...moreStores] = await listCrmConnectionsForOperator(db, workspaceId);
    expect(moreStores).toEqual([]);
    expect(store).toMatchObject({ adminToken: true, adminProvider: 'shopify-twin', adminBaseUrl: storeUrl });
    const admin = (await openCrmAdminConnection(db, keyring, store!.id))!;
    const page = await readCustomersPage(admin, null, 5);
    expect(page).toMatchObject({ kind: 'page', hasNextPage: true });
    expect(page.kind === 'page' && page.customers).toHaveLength(5);
    expect(output()).toContain(`store connection ${store!.id}, ${store!.shopDomain}`);

    for (const secret of [meta.accessToken, opened.key.private_key.split('\n')[1]!, admin.accessToken])
      expect(output()).not.toContain(secret);
    expect(meta.accessToken).toBe(META_TWIN_DEV_ACCOUNT.accessToken);
  } finally {
    await sql.end();
    await db.$disconnect();
  }
}

describe("npm start's model settings (scripts/stack/openai-twin-defaults.ts)", () => {
  const twin = { baseURL: 'http://127.0.0.1:3500/v1', apiKey: OPENAI_TWIN_API_KEY };
  const base = { DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db' };

  it('points the dialogue and call intelligence at the twin, under its own name, when the operator set neither', () => {
    const env: NodeJS.ProcessEnv = { ...base };
    expect(pointModelsAtOpenAiTwin(env, twin)).toEqual(['DIALOGUE', 'INTELLIGENCE']);
    const config = parseConfig(env);
    expect(config).toMatchObject({
      DIALOGUE_PROVIDER: 'openai-twin',
      DIALOGUE_BASE_URL: twin.baseURL,
      DIALOGUE_MODEL: OPENAI_TWIN_MODEL,
      DIALOGUE_API_KEY: OPENAI_TWIN_API_KEY,
      INTELLIGENCE_PROVIDER: 'openai-twin',
      INTELLIGENCE_BASE_URL: twin.baseURL,
      INTELLIGENCE_MODEL: OPENAI_TWIN_MODEL,
      INTELLIGENCE_API_KEY: OPENAI_TWIN_API_KEY,
    });
    // The API's engine for an agent with instructions is the model's; the worker's model is recorded as the twin.
    expect(dialogueEngineKind({ instructions: 'Sell shoes.' }, config)).toBe('model');
    expect(dialogueEngineKind({ instructions: null }, config)).toBe('script');
    expect(callIntelligenceModelFromConfig(config)?.name).toBe('openai-twin');
    expect(openAiTwinUse(['DIALOGUE', 'INTELLIGENCE'])).toBe(
      'rules, not a model, recorded as openai-twin: the dialogue of agents with instructions and call intelligence',
    );
  });

  it('leaves an area the operator configured as set: a real endpoint wins, and so does a provider that asks no model', () => {
    const real = {
      DIALOGUE_PROVIDER: 'openai-compatible',
      DIALOGUE_BASE_URL: 'https://api.openai.com/v1',
      DIALOGUE_MODEL: 'gpt-4o-mini',
      DIALOGUE_API_KEY: 'sk-real-key-0123456789',
    };
    const env: NodeJS.ProcessEnv = { ...base, ...real };
    expect(pointModelsAtOpenAiTwin(env, twin)).toEqual(['INTELLIGENCE']);
    expect(env).toMatchObject({ ...real, INTELLIGENCE_PROVIDER: 'openai-twin', INTELLIGENCE_BASE_URL: twin.baseURL });
    expect(openAiTwinUse(['INTELLIGENCE'])).toBe(
      'rules, not a model, recorded as openai-twin: call intelligence; DIALOGUE_* as configured',
    );

    const own = { DIALOGUE_PROVIDER: 'script', INTELLIGENCE_PROVIDER: 'rule-based' };
    const none: NodeJS.ProcessEnv = { ...base, ...own };
    expect(pointModelsAtOpenAiTwin(none, twin)).toEqual([]);
    expect(none).toEqual({ ...base, ...own });
    expect(openAiTwinUse([])).toBe('unused; DIALOGUE_* and INTELLIGENCE_* as configured');

    // An endpoint of the operator's, whatever the provider (a twin of their own included), is theirs.
    const theirs = { INTELLIGENCE_PROVIDER: 'openai-twin', INTELLIGENCE_BASE_URL: 'http://10.0.0.5:3500/v1' };
    const twinOfTheirs: NodeJS.ProcessEnv = { ...base, DIALOGUE_BASE_URL: 'https://api.openai.com/v1', ...theirs };
    expect(pointModelsAtOpenAiTwin(twinOfTheirs, twin)).toEqual([]);
  });

  it('gives openai-twin without a base URL the embedded twin, its model kept, and never the twin a real key', () => {
    const env: NodeJS.ProcessEnv = {
      ...base,
      INTELLIGENCE_PROVIDER: 'openai-twin',
      INTELLIGENCE_MODEL: 'my-model',
      DIALOGUE_API_KEY: 'sk-real-key-0123456789',
    };
    expect(pointModelsAtOpenAiTwin(env, twin)).toEqual(['DIALOGUE', 'INTELLIGENCE']);
    expect(parseConfig(env)).toMatchObject({
      INTELLIGENCE_BASE_URL: twin.baseURL,
      INTELLIGENCE_MODEL: 'my-model',
      DIALOGUE_API_KEY: OPENAI_TWIN_API_KEY,
    });
  });
});

describe('npm start (scripts/stack/dev-stack.ts)', () => {
  it('brings up PostgreSQL, Temporal, migrations, the dev key, API, worker and export worker, and Ctrl-C leaves nothing running', async () => {
    const { process: started, stack, ports, dataDir, exited, output } = await startDevStack();
    try {
      expect(output()).toContain('Stack is up');
      const key = readFileSync(path.join(dataDir, 'dev-api-key'), 'utf8').trim();
      expect(output()).toContain(key);
      expect(output()).toContain(`http://127.0.0.1:${ports.EMBEDDED_TEMPORAL_UI_PORT}`);
      const health = await fetch(`http://127.0.0.1:${ports.PORT}/health`);
      expect(await health.json()).toEqual({ status: 'ok', database: 'up', temporal: 'up' });
      const campaign = await fetch(`http://127.0.0.1:${ports.PORT}/campaigns`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'smoke' }),
      });
      expect(campaign.status).toBe(201);
      // The export worker's JSON log line (lib/log.ts) behind the stack's [export-worker] prefix.
      const exportWorkerUp =
        /\[export-worker\] \{.*"taskQueue":"workspace-exports".*"msg":"export worker polling task queue"/;
      await eventually(() => exportWorkerUp.test(output()), 30_000);
      expect(output()).toMatch(exportWorkerUp);
      // The Telnyx twin answers in Telnyx's words (no key: 401 10009), and the workspace has its connection.
      const telnyx = await fetch(`http://127.0.0.1:${ports.TELNYX_TWIN_PORT}/v2/calls/v3:none`);
      expect(telnyx.status).toBe(401);
      expect(await telnyx.json()).toMatchObject({ errors: [{ code: '10009' }] });
      expect(output()).toMatch(
        /Telnyx twin +http:\/\/127\.0\.0\.1:\d+\/v2 .*connection [0-9a-f-]{36}, "Development Telnyx twin"/,
      );
      // A voice preview made by the Polly twin, and saying so (docs/features/voices.md#who-synthesises-previews).
      const preview = await fetch(
        `http://127.0.0.1:${ports.PORT}/voices/${encodeURIComponent('espeak-ng/en-us')}/preview`,
        {
          headers: { authorization: `Bearer ${key}` },
        },
      );
      expect([preview.status, preview.headers.get('x-preview-synthesizer')]).toEqual([200, 'polly-twin']);
      await throughTheOpenAiTwin(ports, dataDir, key, output);
      await throughTheProviderTwins(ports, dataDir, output);
      expect(processesInGroup(stack.pid!).length).toBeGreaterThanOrEqual(5);
    } catch (error) {
      throw withStackOutput(error, output());
    } finally {
      // Ctrl-C, if the stack is still up: one that stopped on its own has failed the test above, with its words.
      if (started.running) process.kill(-stack.pid!, 'SIGINT');
    }
    expect(await exited).toBe(0);
    expect(processesInGroup(stack.pid!)).toEqual([]);
    for (const port of Object.values(ports)) expect(await isPortFree(port)).toBe(true);
  }, 120_000);

  it('leaves nothing running even when the start command itself is killed outright', async () => {
    const { stack, ports, output } = await startDevStack();
    expect(output()).toContain('Stack is up');
    process.kill(stack.pid!, 'SIGKILL');
    await eventually(() => processesInGroup(stack.pid!).length === 0, 20_000);
    expect(processesInGroup(stack.pid!)).toEqual([]);
    for (const port of Object.values(ports)) expect(await isPortFree(port)).toBe(true);
  }, 120_000);
});
