import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openCrmAdminConnection } from '../../lib/crm/admin-token';
import { CUSTOMERS_PAGE_SIZE } from '../../lib/crm/shopify-admin';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { createStoreAdminTwin, twinCustomers } from '../../simulators/shopify-twin/admin-twin';
import { runAdminCliWith } from '../support/admin-cli';
import { startTestApi } from '../support/api';
import { startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { killWorker, workerProcesses } from '../support/worker-process';
import { createTestWorkspace } from '../support/workspace';

// The proof of docs/features/crm.md#importing-through-the-admin-api: a store of 2,000 customers read through the store
// twin's Admin API by the production worker (worker/main.ts as a process), throttled by the twin's cost bucket and by
// THROTTLED answers, the worker killed mid-import and another started: each eligible customer listed once, every other
// counted under its reason.
const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue('crm-import'));
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db, { timeScale: 0.01 });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });
const k1 = newKeyringEntry('k1');
const k2 = newKeyringEntry('k2');

const SHOP = 'crash-test.myshopify.com';
const TOKEN = 'shpat_crash_test_token_never_shown_42';
// 8 pages of 250: enough for a drained bucket, a THROTTLED answer and a worker killed with pages still to read, and
// every one of the twin's 20 kinds of customer 100 times.
const CUSTOMERS = 2_000;
const PAGES = CUSTOMERS / CUSTOMERS_PAGE_SIZE;
// A bucket of Shopify's size restoring 10 times faster (500 points a second): a page (502 points) waits about a
// second for it, so the import is paced by the bucket yet reads its 8 pages in seconds.
const twin = createStoreAdminTwin({
  shops: [{ shopDomain: SHOP, accessToken: TOKEN, customers: twinCustomers(CUSTOMERS) }],
  bucketSize: 1000,
  restoreRate: 500,
});
const twinUrl = await twin.listen();
afterAll(() => twin.close());

const startWorker = workerProcesses({
  databaseUrl: url,
  taskQueue: temporal.taskQueue,
  carrierUrl: carrier.baseUrl,
  apiUrl: api.baseUrl,
  env: { SECRETS_KEYS: k1 },
});

const noDevStack = mkdtempSync(path.join(os.tmpdir(), 'crm-cli-'));
const admin = (args: string[], options: { keys?: string; input?: string; env?: Record<string, string> } = {}) =>
  runAdminCliWith(
    { env: { WORKSPACE_DATA_DIR: noDevStack, SECRETS_KEYS: options.keys ?? k1, ...options.env }, input: options.input },
    url,
    ...args,
  );

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ImportView {
  id: string;
  status: string;
  provider: string;
  pages: number;
  customersRead: number;
  imported: number;
  skippedTotal: number;
  skipped: Record<string, number>;
  throttledWaits: number;
  error: string | null;
}

async function importView(campaignId: string, importId: string): Promise<ImportView> {
  const response = await api.request('GET', `/campaigns/${campaignId}/crm-imports/${importId}`, { key: owner.key });
  expect(response.status).toBe(200);
  return (await response.json()) as ImportView;
}

async function until(campaignId: string, importId: string, done: (view: ImportView) => boolean, timeoutMs = 240_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await importView(campaignId, importId);
    if (done(view)) return view;
    if (view.status === 'failed') throw new Error(`the import failed: ${view.error}`);
    if (Date.now() > deadline) throw new Error(`the import did not get there: ${JSON.stringify(view)}`);
    await sleep(200);
  }
}

async function startImport(campaignId: string, connectionId: string) {
  const response = await api.request('POST', `/campaigns/${campaignId}/import-from-crm`, {
    key: owner.key,
    body: { connectionId },
  });
  expect(response.status).toBe(202);
  const { import: started } = (await response.json()) as { import: ImportView };
  expect(response.headers.get('location')).toBe(`/campaigns/${campaignId}/crm-imports/${started.id}`);
  expect(started).toMatchObject({ status: 'running', provider: 'shopify-twin', customersRead: 0, imported: 0 });
  return started.id;
}

// Of every 20 twin customers: 12 imported; one each NOT_SUBSCRIBED, PENDING, UNSUBSCRIBED, REDACTED, no phone and a
// phone already listed; two invalid phones (simulators/shopify-twin/admin-twin.ts twinCustomers).
const EACH = CUSTOMERS / 20;
const IMPORTED = 12 * EACH;
const SKIPPED_BY_STATE = { NOT_SUBSCRIBED: EACH, PENDING: EACH, UNSUBSCRIBED: EACH, REDACTED: EACH, no_phone: EACH };

describe('a Shopify Admin import through the store twin', () => {
  it('sets the token from stdin, never shows it, and lists and re-keys it', async () => {
    const connection = await db.crmConnection.create({
      data: { workspaceId: owner.workspaceId, kind: 'shopify', shopDomain: 'cli.myshopify.com', secret: 'S' },
    });
    const set = await admin(
      [
        'crm',
        'admin-token',
        '--connection',
        connection.id,
        '--provider',
        'shopify-twin',
        '--base-url',
        twinUrl,
        '--token-stdin',
      ],
      { input: `${TOKEN}\n` },
    );
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    expect(set.stdout).not.toContain(TOKEN);
    expect(JSON.parse(set.stdout)).toMatchObject({
      id: connection.id,
      provider: 'shopify-twin',
      keyId: 'k1',
      rotated: false,
    });
    const row = await db.crmConnection.findUniqueOrThrow({ where: { id: connection.id } });
    expect(JSON.stringify(row)).not.toContain(TOKEN);
    expect(row.secretKeyId).toBe('k1');

    // From a variable, again: a rotation. A twin without its URL is bad input, nothing changed.
    const rotated = await admin(['crm', 'admin-token', '--connection', connection.id, '--token-env', 'STORE_TOKEN'], {
      env: { STORE_TOKEN: `${TOKEN}-2` },
    });
    expect(rotated.code).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ provider: 'shopify', rotated: true });
    const noUrl = await admin(
      ['crm', 'admin-token', '--connection', connection.id, '--provider', 'shopify-twin', '--token', TOKEN],
      {},
    );
    expect(noUrl.code).toBe(64);
    expect(noUrl.stderr).toContain('base URL');

    const listed = await admin(['crm', 'list', '--workspace', owner.workspaceId]);
    expect(listed.stdout).not.toContain(TOKEN);
    expect(JSON.parse(listed.stdout).connections).toContainEqual(
      expect.objectContaining({ id: connection.id, adminToken: true, adminProvider: 'shopify', adminTokenKeyId: 'k1' }),
    );

    const rekeyed = await admin(['crm', 'rekey'], { keys: `${k2},${k1}` });
    expect(JSON.parse(rekeyed.stdout)).toMatchObject({ keyId: 'k2' });
    expect(JSON.parse(rekeyed.stdout).rekeyed).toContain(connection.id);
    const opened = await openCrmAdminConnection(db, keyringSchema.parse(`${k2},${k1}`), connection.id);
    expect(opened).toMatchObject({ accessToken: `${TOKEN}-2`, provider: 'shopify' });
    // The old key alone no longer opens it.
    await expect(openCrmAdminConnection(db, keyringSchema.parse(k1), connection.id)).rejects.toThrow();
    await db.crmConnection.update({ where: { id: connection.id }, data: { deletedAt: new Date() } });
  });

  it(`imports ${CUSTOMERS} customers across pages, throttled and with the worker killed mid-way: each eligible customer once`, async () => {
    const connection = await db.crmConnection.create({
      data: { workspaceId: owner.workspaceId, kind: 'shopify', shopDomain: SHOP, secret: 'S' },
    });
    const set = await admin(
      [
        'crm',
        'admin-token',
        '--connection',
        connection.id,
        '--provider',
        'shopify-twin',
        '--base-url',
        twinUrl,
        '--token-stdin',
      ],
      { input: TOKEN },
    );
    expect(set.code).toBe(0);
    const campaign = await db.campaign.create({ data: { workspaceId: owner.workspaceId, name: 'Store customers' } });

    const first = startWorker();
    const importId = await startImport(campaign.id, connection.id);
    // Another app of the store spends the bucket, again as soon as it refills, until the import's next query is
    // THROTTLED: drained once, a slow machine's next query could come after the refill (1 s) and never be. Between
    // drains 100 ms apart it regains some 50 points, far from a page's 502.
    await until(campaign.id, importId, (view) => view.pages >= 2);
    const drainDeadline = Date.now() + 120_000;
    while (twin.stats.throttled === 0) {
      if (Date.now() > drainDeadline) throw new Error('the import was not THROTTLED within 120 s of a drained bucket');
      await fetch(`${twinUrl}/control/shops/${SHOP}/drain`, { method: 'POST' });
      await sleep(100);
    }
    // Killed with 5 pages (about 5 s of refills) still to read.
    await until(campaign.id, importId, (view) => view.pages >= 3);
    await killWorker(first);
    const atCrash = await importView(campaign.id, importId);
    expect(atCrash.status).toBe('running');
    startWorker();

    const done = await until(campaign.id, importId, (view) => view.status === 'completed');
    expect(done).toMatchObject({
      provider: 'shopify-twin',
      pages: PAGES,
      customersRead: CUSTOMERS,
      imported: IMPORTED,
      skipped: { ...SKIPPED_BY_STATE, invalid_phone: 2 * EACH, duplicate: EACH },
      skippedTotal: CUSTOMERS - IMPORTED,
      error: null,
    });
    expect(done.throttledWaits).toBeGreaterThan(0);
    expect(twin.stats.throttled).toBeGreaterThan(0);

    // The list holds each eligible customer once, with the customer's id in its metadata.
    const listed = await db.$queryRaw<Array<{ contacts: number; phones: number; customers: number }>>`
      SELECT count(*)::int AS contacts, count(DISTINCT c.phone)::int AS phones,
             count(DISTINCT c.metadata->>'customerId')::int AS customers
        FROM "CampaignContact" cc JOIN "Contact" c ON c.id = cc."contactId"
       WHERE cc."campaignId" = ${campaign.id}::uuid`;
    expect(listed).toEqual([{ contacts: IMPORTED, phones: IMPORTED, customers: IMPORTED }]);
    const sample = await db.contact.findFirstOrThrow({
      where: { workspaceId: owner.workspaceId, phone: '+14155550000' },
    });
    expect(sample).toMatchObject({
      name: 'Customer 1',
      metadata: { source: 'crm', connectionId: connection.id, customerId: 'gid://shopify/Customer/1001' },
    });

    // Again: nobody is imported twice; the customers already imported are duplicates now.
    const again = await startImport(campaign.id, connection.id);
    const second = await until(campaign.id, again, (view) => view.status === 'completed');
    expect(second).toMatchObject({
      imported: 0,
      customersRead: CUSTOMERS,
      skipped: { ...SKIPPED_BY_STATE, invalid_phone: 2 * EACH, duplicate: IMPORTED + EACH },
    });
    expect(await db.campaignContact.count({ where: { campaignId: campaign.id } })).toBe(IMPORTED);

    const list = await api.request('GET', `/campaigns/${campaign.id}/crm-imports`, { key: owner.key });
    const { imports } = (await list.json()) as { imports: ImportView[] };
    expect(imports.map((each) => each.id)).toEqual([again, importId]);
  }, 300_000);

  it('refuses the order filters with a token, and an import of another campaign is 403', async () => {
    const connection = await db.crmConnection.findFirstOrThrow({ where: { shopDomain: SHOP, deletedAt: null } });
    const campaign = await db.campaign.create({ data: { workspaceId: owner.workspaceId, name: 'Filters' } });
    const response = await api.request('POST', `/campaigns/${campaign.id}/import-from-crm`, {
      key: owner.key,
      body: { connectionId: connection.id, financialStatus: 'paid' },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_body' });
    const unknown = await api.request('GET', `/campaigns/${campaign.id}/crm-imports/not-an-import`, { key: owner.key });
    expect(unknown.status).toBe(403);
  });
});
