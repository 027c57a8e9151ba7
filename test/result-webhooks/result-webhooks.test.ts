import { createHmac, randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createSimulatedWhatsApp } from '../../lib/whatsapp/simulated-whatsapp';
import { createActivities } from '../../activities';
import { createResultWebhookEndpoint } from '../../lib/result-webhooks/result-webhooks';
import { webhookDeliveryWorkflowId } from '../../lib/temporal/workflow-ids';
import { createApiKey, createWorkspace } from '../../lib/door/workspace-admin';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { sealingAdminCli } from '../support/admin-cli';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { leadResult } from '../support/lead-workflows';
import { startReceiver, type ReceivedRequest } from '../support/http-receiver';
import { until } from '../support/until';
import { testEgress } from '../support/egress';
import { createEgress } from '../../lib/http/egress';
import { TEST_KEYRING, TEST_SECRETS_KEYS } from '../support/keyring';
import { ENDPOINT_SECRET_COLUMNS, openEndpointSecret } from '../../lib/result-webhooks/endpoint-secrets';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = carrierDependencies(await startTestCarrier(db), api);
await startTestWorker(temporal.taskQueue, { db, ...carrier });

/** What a receiver does to check a Standard Webhooks signature, written out independently of the service. */
function expectedSignature(secret: string, request: ReceivedRequest): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = `${String(request.headers['webhook-id'])}.${String(request.headers['webhook-timestamp'])}.${request.body}`;
  return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
}

async function leadCampaign(workspaceId: string) {
  return db.campaign.create({
    data: {
      workspaceId,
      name: 'Webhooks',
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
    },
  });
}

/** A finished lead written straight into the database, for driving the activities directly. */
async function finishedLead(workspaceId: string) {
  const campaign = await leadCampaign(workspaceId);
  return db.lead.create({
    data: {
      workspaceId,
      campaignId: campaign.id,
      idempotencyKey: randomUUID(),
      phone: '+14155550120',
      status: 'failed',
      workflowId: `not-started-${randomUUID()}`,
      requestId: randomUUID(),
    },
  });
}

/** The activities as the worker has them, run outside a worker: the activity context names the test's task queue. */
const activities = createActivities({
  db,
  ...carrier,
  whatsapp: createSimulatedWhatsApp(db),
  temporal: temporal.client,
  egress: testEgress(),
});
/** A lead.finished delivery row of an endpoint, as enqueueLeadFinished makes one, with what a test gives. */
const deliveryRow = (
  workspaceId: string,
  endpointId: string,
  eventKey: string,
  state: { attempts?: number; lastError?: string } = {},
) =>
  db.resultWebhookDelivery.create({
    data: {
      id: `msg_${randomUUID()}`,
      workspaceId,
      endpointId,
      eventKey,
      eventType: 'lead.finished',
      payload: {},
      ...state,
    },
  });
const activityEnvironment = () => new MockActivityEnvironment({ taskQueue: temporal.taskQueue });

describe('lead.finished result webhooks', () => {
  it('sends one signed event per live endpoint when a lead finishes, and retries a failed attempt under the same webhook-id', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const receiver = await startReceiver((n) => (n === 1 ? 500 : 200));
    const endpoint = await createResultWebhookEndpoint(db, TEST_KEYRING, owner.workspaceId, { url: receiver.url });
    const deleted = await createResultWebhookEndpoint(db, TEST_KEYRING, owner.workspaceId, {
      url: `${receiver.url}/deleted`,
    });
    await db.resultWebhookEndpoint.update({ where: { id: deleted.id }, data: { deletedAt: new Date() } });
    const elsewhere = await createTestWorkspace(db);
    await createResultWebhookEndpoint(db, TEST_KEYRING, elsewhere.workspaceId, { url: `${receiver.url}/elsewhere` });
    const campaign = await leadCampaign(owner.workspaceId);

    const pushed = await api.request('POST', `/v1/campaigns/${campaign.id}/leads`, {
      key: owner.key,
      body: { lead: { phone: '+14155550120' }, idempotencyKey: 'hook-1' },
    });
    expect(pushed.status).toBe(202);
    const { leadId } = (await pushed.json()) as { leadId: string };
    expect(await leadResult(temporal.client, campaign.id, 'hook-1')).toEqual({
      status: 'completed',
      outcome: 'answered',
      attempts: 1,
    });

    const eventKey = `lead.finished:${leadId}`;
    const delivery = (await until(
      () => db.resultWebhookDelivery.findFirst({ where: { eventKey } }),
      (row) => row?.status === 'delivered',
    ))!;
    expect(delivery).toMatchObject({
      endpointId: endpoint.id,
      workspaceId: owner.workspaceId,
      eventType: 'lead.finished',
      status: 'delivered',
      attempts: 2,
      lastStatusCode: 200,
      lastError: null,
    });
    expect(delivery.id).toMatch(/^msg_/);
    expect(delivery.deliveredAt).not.toBeNull();
    // One event only: none for the deleted endpoint, none for another workspace's.
    expect(await db.resultWebhookDelivery.count({ where: { eventKey } })).toBe(1);
    expect(await temporal.client.workflow.getHandle(webhookDeliveryWorkflowId(delivery.id)).result()).toBe('delivered');

    expect(receiver.received).toHaveLength(2);
    const [first, second] = receiver.received as [ReceivedRequest, ReceivedRequest];
    for (const request of [first, second]) {
      expect(request.path).toBe('/hooks');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['webhook-id']).toBe(delivery.id);
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(120);
      expect(request.headers['webhook-signature']).toBe(expectedSignature(endpoint.secret, request));
    }
    // A signature over anything else does not verify.
    expect(expectedSignature(endpoint.secret, { ...first, body: first.body.replace('completed', 'failed') })).not.toBe(
      first.headers['webhook-signature'],
    );
    // The retry waited for Temporal's first retry interval (5 s) rather than looping at once.
    expect(second.at - first.at).toBeGreaterThanOrEqual(4_000);
    expect(second.body).toBe(first.body);

    const call = await db.call.findFirstOrThrow({ where: { leadId } });
    expect(JSON.parse(second.body)).toEqual({
      type: 'lead.finished',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: {
        leadId,
        campaignId: campaign.id,
        status: 'completed',
        outcome: 'answered',
        attempts: 1,
        calls: [
          {
            attempt: 1,
            outcome: 'answered',
            durationMs: 32_000,
            startedAt: call.startedAt.toISOString(),
            // The simulated carrier placed it (docs/configuration.md#simulators).
            simulated: true,
          },
        ],
      },
    });
  });

  const busyLead = (leadId: string): Parameters<typeof activities.enqueueLeadFinished>[0] => ({
    leadId,
    outcome: 'busy',
    attempts: 3,
  });

  it('makes no second event when the enqueueing activity runs again', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const receiver = await startReceiver(() => 204);
    await createResultWebhookEndpoint(db, TEST_KEYRING, workspaceId, { url: receiver.url });
    const lead = await finishedLead(workspaceId);

    expect(await activityEnvironment().run(activities.enqueueLeadFinished, busyLead(lead.id))).toEqual({
      deliveries: 1,
    });
    // As if the activity were retried after a crash: the row exists and its workflow is already started.
    await activityEnvironment().run(activities.enqueueLeadFinished, busyLead(lead.id));
    const delivery = (await until(
      () => db.resultWebhookDelivery.findFirst({ where: { eventKey: `lead.finished:${lead.id}` } }),
      (row) => row?.status === 'delivered',
    ))!;
    expect(await activityEnvironment().run(activities.enqueueLeadFinished, { leadId: lead.id })).toEqual({
      deliveries: 0,
    });

    expect(await db.resultWebhookDelivery.count({ where: { eventKey: `lead.finished:${lead.id}` } })).toBe(1);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 204 });
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({
      data: { leadId: lead.id, status: 'failed', outcome: 'busy', attempts: 3, calls: [] },
    });
  });

  it('ends a delivery failed when its endpoint is deleted while it is being retried, and when the retries are spent', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['result_webhooks.delete'] });
    const receiver = await startReceiver(() => 503);
    const endpoint = await createResultWebhookEndpoint(db, TEST_KEYRING, owner.workspaceId, { url: receiver.url });
    const lead = await finishedLead(owner.workspaceId);
    await activityEnvironment().run(activities.enqueueLeadFinished, { leadId: lead.id });

    const eventKey = `lead.finished:${lead.id}`;
    const retrying = (await until(
      () => db.resultWebhookDelivery.findFirst({ where: { eventKey } }),
      (row) => (row?.attempts ?? 0) >= 1,
    ))!;
    expect(retrying).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 503, lastError: 'HTTP 503' });
    expect((await api.request('DELETE', `/result-webhooks/${endpoint.id}`, { key: owner.key })).status).toBe(204);
    expect(await temporal.client.workflow.getHandle(webhookDeliveryWorkflowId(retrying.id)).result()).toBe('failed');
    expect(await db.resultWebhookDelivery.findUniqueOrThrow({ where: { id: retrying.id } })).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'endpoint deleted',
    });
    expect(receiver.received).toHaveLength(1);

    // What the workflow calls once the 26 hours of retries are spent.
    const spent = await deliveryRow(owner.workspaceId, endpoint.id, 'spent', { attempts: 35, lastError: 'HTTP 500' });
    await activityEnvironment().run(activities.giveUpWebhook, {
      deliveryId: spent.id,
      reason: 'gave up: retries spent',
    });
    expect(await db.resultWebhookDelivery.findUniqueOrThrow({ where: { id: spent.id } })).toMatchObject({
      status: 'failed',
      lastError: 'gave up: retries spent; last attempt: HTTP 500',
    });
  });
});

describe('result webhook endpoints and deliveries over the API', () => {
  it('lists endpoints without their secrets, and deletes only its own (403 forbidden otherwise)', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['result_webhooks.delete'] });
    const viewerKey = (await createApiKey(db, owner.memberId, { scopes: ['result_webhooks.view'] })).key;
    const other = await createTestWorkspace(db, { scopes: ['result_webhooks.delete'] });
    const first = await createResultWebhookEndpoint(db, TEST_KEYRING, owner.workspaceId, {
      url: 'https://hooks.example.com/a',
      description: 'CRM',
    });
    const second = await createResultWebhookEndpoint(db, TEST_KEYRING, owner.workspaceId, {
      url: 'https://hooks.example.com/b',
    });
    const foreign = await createResultWebhookEndpoint(db, TEST_KEYRING, other.workspaceId, {
      url: 'https://hooks.example.com/c',
    });

    const listed = await api.request('GET', '/result-webhooks', { key: viewerKey });
    expect(listed.status).toBe(200);
    const text = await listed.text();
    for (const secret of [first.secret, second.secret, 'whsec_', '"secret"']) expect(text).not.toContain(secret);
    const items = (JSON.parse(text) as Array<{ id: string }>).sort((a, b) => a.id.localeCompare(b.id));
    expect(items).toEqual(
      [
        {
          id: first.id,
          url: 'https://hooks.example.com/a',
          description: 'CRM',
          createdAt: expect.stringMatching(/Z$/),
        },
        {
          id: second.id,
          url: 'https://hooks.example.com/b',
          description: null,
          createdAt: expect.stringMatching(/Z$/),
        },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );

    const byViewer = await api.request('DELETE', `/result-webhooks/${first.id}`, { key: viewerKey });
    expect(byViewer.status).toBe(403);
    expect(await byViewer.json()).toEqual({ error: 'forbidden', requiredPermission: 'result_webhooks.delete' });
    for (const id of [foreign.id, randomUUID(), 'not-a-uuid']) {
      const refused = await api.request('DELETE', `/result-webhooks/${id}`, { key: owner.key });
      expect({ status: refused.status, body: await refused.json() }, id).toEqual({
        status: 403,
        body: { error: 'forbidden' },
      });
    }
    expect((await db.resultWebhookEndpoint.findUniqueOrThrow({ where: { id: foreign.id } })).deletedAt).toBeNull();

    const deleted = await api.request('DELETE', `/result-webhooks/${first.id}`, { key: owner.key });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    // Removed, its secret is not kept, sealed or clear.
    expect(await db.resultWebhookEndpoint.findUniqueOrThrow({ where: { id: first.id } })).toMatchObject({
      deletedAt: expect.any(Date),
      secret: null,
      secretKeyId: null,
      secretCiphertext: null,
    });
    expect((await api.request('DELETE', `/result-webhooks/${first.id}`, { key: owner.key })).status).toBe(403);
    const after = (await (await api.request('GET', '/result-webhooks', { key: owner.key })).json()) as Array<{
      id: string;
    }>;
    expect(after.map((endpoint) => endpoint.id)).toEqual([second.id]);
  });

  it('pages deliveries newest first by an opaque cursor, and refuses a bad limit or cursor with 400 invalid_body', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['result_webhooks.view'] });
    const other = await createTestWorkspace(db);
    const endpoint = await createResultWebhookEndpoint(db, TEST_KEYRING, owner.workspaceId, {
      url: 'https://hooks.example.com/d',
    });
    const foreignEndpoint = await createResultWebhookEndpoint(db, TEST_KEYRING, other.workspaceId, {
      url: 'https://hooks.example.com/e',
    });
    const prefix = `msg_page${randomUUID().slice(0, 8)}`;
    const at = (second: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, second));
    const row = (suffix: string, createdAt: Date, endpointId = endpoint.id, workspaceId = owner.workspaceId) => ({
      id: `${prefix}_${suffix}`,
      workspaceId,
      endpointId,
      eventKey: `lead.finished:${suffix}`,
      eventType: 'lead.finished',
      payload: {},
      createdAt,
    });
    await db.resultWebhookDelivery.createMany({
      data: [
        row('a', at(1)),
        row('b', at(2)),
        row('c', at(2)),
        row('d', at(3)),
        row('x', at(4), foreignEndpoint.id, other.workspaceId),
      ],
    });
    await db.resultWebhookDelivery.update({
      where: { id: `${prefix}_d` },
      data: { status: 'delivered', attempts: 2, lastStatusCode: 200, deliveredAt: at(5) },
    });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response = await api.request(
        'GET',
        `/result-webhooks/deliveries?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { key: owner.key },
      );
      expect(response.status).toBe(200);
      const page = (await response.json()) as { items: Array<{ id: string }>; nextCursor: string | null };
      expect(page.items).toHaveLength(1);
      seen.push(page.items[0]!.id);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(seen).toEqual(['d', 'c', 'b', 'a'].map((suffix) => `${prefix}_${suffix}`));
    expect(cursor).toBeNull();

    const all = (await (await api.request('GET', '/result-webhooks/deliveries', { key: owner.key })).json()) as {
      items: unknown[];
      nextCursor: unknown;
    };
    expect(all.nextCursor).toBeNull();
    expect(all.items).toHaveLength(4);
    expect(all.items[0]).toEqual({
      id: `${prefix}_d`,
      endpointId: endpoint.id,
      eventType: 'lead.finished',
      status: 'delivered',
      attempts: 2,
      lastStatusCode: 200,
      lastError: null,
      createdAt: '2030-01-01T00:00:03.000Z',
      deliveredAt: '2030-01-01T00:00:05.000Z',
    });

    for (const [query, field] of [
      ['limit=101', 'limit'],
      ['limit=0', 'limit'],
      ['limit=ten', 'limit'],
      ['cursor=garbage', 'cursor'],
    ] as const) {
      const refused = await api.request('GET', `/result-webhooks/deliveries?${query}`, { key: owner.key });
      expect(refused.status, query).toBe(400);
      expect(await refused.json(), query).toMatchObject({ error: 'invalid_body', issues: [{ path: [field] }] });
    }
  });
});

describe('npm run admin -- webhook create', () => {
  const cli = sealingAdminCli(url, TEST_SECRETS_KEYS);
  const admin = (...args: string[]) => cli.admin(args);

  it('creates an endpoint and prints its id and its secret, this once', async () => {
    const { id: workspaceId } = await createWorkspace(db, 'CLI hooks', {});
    const result = await admin(
      'webhook',
      'create',
      '--workspace',
      workspaceId,
      '--url',
      'https://hooks.example.com/results',
      '--description',
      'Results',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const printed = JSON.parse(lines[0]!) as { id: string; secret: string };
    expect(Object.keys(printed).sort()).toEqual(['id', 'secret']);
    expect(printed.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(printed.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const stored = await db.resultWebhookEndpoint.findUniqueOrThrow({ where: { id: printed.id } });
    expect(stored).toMatchObject({
      workspaceId,
      url: 'https://hooks.example.com/results',
      description: 'Results',
      secret: null,
      secretKeyId: 'test-ring',
      deletedAt: null,
    });
    // Sealed: nothing of the row shows the secret, its envelope opens to it, and only as this endpoint's.
    expect(JSON.stringify(stored)).not.toContain(printed.secret.slice('whsec_'.length, 20));
    const row = await db.resultWebhookEndpoint.findUniqueOrThrow({
      where: { id: printed.id },
      select: ENDPOINT_SECRET_COLUMNS,
    });
    expect(openEndpointSecret(TEST_KEYRING, row)).toBe(printed.secret);
    expect(() => openEndpointSecret(TEST_KEYRING, { ...row, url: 'https://elsewhere.example.com/' })).toThrow(
      /fails authentication/,
    );
    expect(() => openEndpointSecret(undefined, row)).toThrow(/SECRETS_KEYS is required/);
  });

  it.each([
    [['--url', 'ftp://hooks.example.com/x'], /--url/],
    [['--url', 'not a url'], /--url/],
    [['--url', 'javascript:alert(1)'], /--url/],
    [['--url'], /--url: needs a value/],
    [[], /--url/],
  ])('refuses %j with a one-line message and a non-zero exit', async (flags, message) => {
    const { id: workspaceId } = await createWorkspace(db, 'CLI refusals', {});
    const result = await admin('webhook', 'create', '--workspace', workspaceId, ...flags);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(message);
    expect(await db.resultWebhookEndpoint.count({ where: { workspaceId } })).toBe(0);
  });

  it('refuses an unknown workspace', async () => {
    const result = await admin(
      'webhook',
      'create',
      '--workspace',
      randomUUID(),
      '--url',
      'https://hooks.example.com/x',
    );
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/workspace .* not found/);
  });
});

describe('a delivery through the egress guard', () => {
  it('records only "refused" for an endpoint on the inside, and never reaches it', async () => {
    // As in production, but for plain http: no loopback allowance.
    const guarded = createActivities({
      db,
      ...carrier,
      whatsapp: createSimulatedWhatsApp(db),
      temporal: temporal.client,
      egress: createEgress({ allowHttp: true }),
      secretsKeyring: TEST_KEYRING,
    });
    const owner = await createTestWorkspace(db);
    const receiver = await startReceiver(() => 200);
    const endpoint = await createResultWebhookEndpoint(db, TEST_KEYRING, owner.workspaceId, { url: receiver.url });
    const delivery = await deliveryRow(owner.workspaceId, endpoint.id, 'inside');
    await expect(activityEnvironment().run(guarded.deliverWebhook, { deliveryId: delivery.id })).rejects.toMatchObject({
      type: 'webhook_delivery_failed',
      message: `delivery ${delivery.id}: refused`,
    });
    expect(await db.resultWebhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: null,
      lastError: 'refused',
    });
    expect(receiver.received).toEqual([]);
  });
});
