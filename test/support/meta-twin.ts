import { afterAll, expect } from 'vitest';
import { freePort } from '../../scripts/stack/child-process';
import type { Database } from '../../lib/database';
import { keyringSchema, newKeyringEntry, type Keyring } from '../../lib/secrets/keyring';
import { connectWhatsApp } from '../../lib/whatsapp/connections';
import { createConnectionWhatsAppProvider } from '../../lib/whatsapp/connection-provider';
import { createSimulatedWhatsAppClient } from '../../lib/whatsapp/graph-client';
import { connectWhatsAppSender } from '../../lib/whatsapp/senders';
import { createSimulatedWhatsAppProvider, type MetaTwinAccount } from '../../simulators/meta-twin/server';
import type { WhatsAppProvider } from '../../lib/whatsapp/provider';
import { startTestApi, type RunningApi, type TestApiDependencies } from './api';
import type { TestTemporal } from './temporal';
import { TEST_WHATSAPP_APP_SECRET, TEST_WHATSAPP_TIME_SCALE } from './whatsapp';
import type { TestWorkspace } from './workspace';
import { until } from './until';

/** A 15-digit id as Meta's are, unique enough for a test file. */
export const metaId = (prefix: string) =>
  `${prefix}${String(Date.now()).slice(-8)}${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`.slice(0, 15);

/**
 * The Meta twin (simulators/meta-twin in twin mode) over the test file's database, an API whose provider routes
 * connected senders to it (lib/whatsapp/connection-provider.ts), and the key ring their tokens are sealed with.
 */
export async function startMetaTwinStack(
  db: Database,
  url: string,
  temporal: TestTemporal,
  options: {
    /** What carries a sender bound to no connection: by default the twin's embedded simulated provider. */
    fallback?: WhatsAppProvider;
    /** More of the API's dependencies (SIMULATORS, a carrier's key ring...). */
    api?: Partial<TestApiDependencies>;
  } = {},
) {
  const secretsKeys = newKeyringEntry('k1');
  const keyring: Keyring = keyringSchema.parse(secretsKeys);
  const port = await freePort();
  const fallback = options.fallback ?? createSimulatedWhatsAppClient({ baseUrl: `http://127.0.0.1:${port}` });
  const provider = createConnectionWhatsAppProvider({ db, keyring, fallback });
  const api = await startTestApi({
    db,
    url,
    temporal,
    whatsapp: { provider, appSecret: TEST_WHATSAPP_APP_SECRET, verifyToken: 'twin-verify-token' },
    ...options.api,
  });
  const twin = createSimulatedWhatsAppProvider({
    sql: db.sql,
    appSecret: TEST_WHATSAPP_APP_SECRET,
    webhookUrl: `${api.baseUrl}/whatsapp/webhook`,
    timeScale: TEST_WHATSAPP_TIME_SCALE,
    retry: { firstMs: 50, maxMs: 1_000 },
    accounts: [],
  });
  const baseUrl = await twin.listen(port);
  afterAll(() => twin.close());
  return { api, twin, baseUrl, keyring, secretsKeys, provider };
}

export type MetaTwinStack = Awaited<ReturnType<typeof startMetaTwinStack>>;

/**
 * A Meta account on the twin (its token, WABA and one number) connected to the workspace as a meta-twin connection,
 * and a sender bound to it, as the operator does with `whatsapp connect` and `whatsapp sender connect --connection`.
 */
export async function connectTwinSender(db: Database, stack: MetaTwinStack, workspace: TestWorkspace, e164: string) {
  const account: MetaTwinAccount = {
    accessToken: `EAAT${metaId('9')}twin${Math.random().toString(36).slice(2)}`,
    businessAccountId: metaId('1'),
    phoneNumbers: [{ id: metaId('2'), displayPhoneNumber: e164.slice(1) }],
  };
  stack.twin.putAccount(account);
  const connection = await connectWhatsApp(db, stack.keyring, {
    workspaceId: workspace.workspaceId,
    provider: 'meta-twin',
    phoneNumberId: account.phoneNumbers[0]!.id,
    businessAccountId: account.businessAccountId,
    displayPhoneNumber: account.phoneNumbers[0]!.displayPhoneNumber,
    baseUrl: stack.baseUrl,
    accessToken: account.accessToken,
  });
  const { id } = await connectWhatsAppSender(db, {
    workspaceId: workspace.workspaceId,
    e164,
    provider: 'simulated',
    connectionId: connection.id,
  });
  const sender = await db.whatsAppSender.findUniqueOrThrow({ where: { id } });
  return { account, connection, sender };
}

/** A template created through the API with its examples and reviewed by the twin (its name decides how). */
export async function twinTemplate(
  api: RunningApi,
  workspace: TestWorkspace,
  template: { name: string; body: string; examples?: string[] },
) {
  const created = await api.request('POST', '/whatsapp/templates', {
    key: workspace.key,
    body: { language: 'en_US', category: 'utility', ...template },
  });
  const body = (await created.json()) as { id: string; status: string; provider?: string };
  if (created.status !== 201) return { status: created.status, body };
  expect(created.status).toBe(201);
  const reviewed = await until(
    async () =>
      (await (await api.request('GET', `/whatsapp/templates/${body.id}`, { key: workspace.key })).json()) as {
        id: string;
        status: string;
      },
    (row) => row.status !== 'PENDING',
  );
  return { status: 201, body: reviewed };
}
