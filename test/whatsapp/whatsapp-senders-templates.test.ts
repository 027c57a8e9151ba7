import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/stack/child-process';
import { createSimulatedWhatsAppClient } from '../../lib/whatsapp/graph-client';
import { runAdminCli } from '../support/admin-cli';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { startReceiver } from '../support/http-receiver';
import { useTemporalClient } from '../support/temporal';
import { providerRecord, startTestWhatsApp } from '../support/whatsapp';
import { META_TWIN_TABLES, type TemplateRow } from '../../simulators/meta-twin/store';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
// The simulated provider over real HTTP; its webhooks go to a receiver that takes and drops them, so
// what the API stores of a review is what sync-status read (the webhooks have tests of their own).
const webhooks = await startReceiver(() => 200);
const provider = await startTestWhatsApp(db, { webhookUrl: webhooks.url });
const api = await startTestApi({ db, url, temporal, whatsapp: { provider: provider.client } });
/** The same API and database, its provider at an address nothing listens on. */
const unreachable = await startTestApi({
  db,
  url,
  temporal,
  whatsapp: { provider: createSimulatedWhatsAppClient({ baseUrl: `http://127.0.0.1:${await freePort()}` }) },
});
/** Templates the provider holds (submitted to it). */
const submitted = () => providerRecord(db).count('template');
const ALL_SCOPES = ['whatsapp.edit', 'whatsapp.delete'];
const owner = await createTestWorkspace(db, { scopes: ALL_SCOPES });
const other = await createTestWorkspace(db, { scopes: ALL_SCOPES });
const viewer = await createTestWorkspace(db, { scopes: ['whatsapp.view'] });

interface SenderBody {
  id: string;
  e164: string;
  displayName: string | null;
  provider: string;
  phoneNumberId: string;
  businessAccountId: string;
  status: 'CONNECTED' | 'DISCONNECTED';
  dailyRecipientLimit: number;
  messagesPerSecond: number;
  connectedAt: string;
  disconnectedAt: string | null;
}
interface TemplateBody {
  id: string;
  name: string;
  language: string;
  category: string;
  body: string;
  variableCount: number;
  status: string;
  rejectedReason: string | null;
  qualityRating: string;
  providerTemplateId: string | null;
  statusUpdatedAt: string;
  createdAt: string;
}
interface ErrorBody {
  error: string;
  issues?: Array<{ path: Array<string | number>; message: string }>;
  requiredPermission?: string;
  upstreamStatus?: number;
  detail?: string;
}

async function call<T>(method: string, path: string, who: { key: string } = owner, body?: unknown, through = api) {
  const response = await through.request(method, path, { key: who.key, body });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

const admin = (...args: string[]) => runAdminCli(url, ...args);
async function connect(workspace: TestWorkspace, e164: string, ...more: string[]) {
  const result = await admin(
    'whatsapp',
    'sender',
    'connect',
    '--workspace',
    workspace.workspaceId,
    '--e164',
    e164,
    ...more,
  );
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as { id: string };
}

describe('WhatsApp senders: connected by the operator CLI, read and disconnected through the API', () => {
  it('connects a number, prints {"id"}, and stores it CONNECTED with provider ids', async () => {
    const printed = await connect(owner, '+1 415 555 0100', '--display-name', 'Acme Support');
    expect(Object.keys(printed)).toEqual(['id']);
    const stored = await db.whatsAppSender.findUniqueOrThrow({ where: { id: printed.id } });
    expect(stored).toMatchObject({
      workspaceId: owner.workspaceId,
      e164: '+14155550100',
      displayName: 'Acme Support',
      provider: 'simulated',
      status: 'CONNECTED',
      disconnectedAt: null,
    });
    expect(stored.phoneNumberId).toMatch(/^\d{15}$/);
    expect(stored.businessAccountId).toMatch(/^\d{15}$/);

    // A second number of the workspace: a phone number id of its own, the same Business Account.
    const second = await connect(owner, '+14155550101');
    const secondRow = await db.whatsAppSender.findUniqueOrThrow({ where: { id: second.id } });
    expect(secondRow.phoneNumberId).not.toBe(stored.phoneNumberId);
    expect(secondRow.businessAccountId).toBe(stored.businessAccountId);
    expect(secondRow.displayName).toBeNull();

    const list = await call<SenderBody[]>('GET', '/whatsapp/senders');
    expect(list.status).toBe(200);
    expect(list.body.map((sender) => sender.e164)).toEqual(['+14155550100', '+14155550101']);
    expect(list.body[0]).toEqual({
      id: printed.id,
      e164: '+14155550100',
      displayName: 'Acme Support',
      provider: 'simulated',
      phoneNumberId: stored.phoneNumberId,
      businessAccountId: stored.businessAccountId,
      status: 'CONNECTED',
      dailyRecipientLimit: 1000,
      messagesPerSecond: 80,
      connectedAt: stored.connectedAt.toISOString(),
      disconnectedAt: null,
    });
    const one = await call<SenderBody>('GET', `/whatsapp/senders/${printed.id}`);
    expect(one).toEqual({ status: 200, body: list.body[0] });
  });

  it('disconnects with whatsapp.delete (204, idempotent, kept listed); connecting the number again re-connects the same sender', async () => {
    const { id } = await connect(owner, '+14155550102', '--display-name', 'Old');
    const before = await db.whatsAppSender.findUniqueOrThrow({ where: { id } });

    const noDelete = await call<ErrorBody>('DELETE', `/whatsapp/senders/${id}`, viewer);
    expect(noDelete).toEqual({ status: 403, body: { error: 'forbidden', requiredPermission: 'whatsapp.delete' } });

    expect((await call('DELETE', `/whatsapp/senders/${id}`)).status).toBe(204);
    const disconnected = await db.whatsAppSender.findUniqueOrThrow({ where: { id } });
    expect(disconnected.status).toBe('DISCONNECTED');
    expect(disconnected.disconnectedAt).not.toBeNull();
    expect((await call('DELETE', `/whatsapp/senders/${id}`)).status).toBe(204);
    expect((await db.whatsAppSender.findUniqueOrThrow({ where: { id } })).disconnectedAt).toEqual(
      disconnected.disconnectedAt,
    );
    const read = await call<SenderBody>('GET', `/whatsapp/senders/${id}`);
    expect(read.body).toMatchObject({
      status: 'DISCONNECTED',
      disconnectedAt: disconnected.disconnectedAt!.toISOString(),
    });

    // Re-connected: the same row and provider ids, CONNECTED again, a new connectedAt, the new display name.
    expect(await connect(owner, '+14155550102', '--display-name', 'New')).toEqual({ id });
    const reconnected = await db.whatsAppSender.findUniqueOrThrow({ where: { id } });
    expect(reconnected).toMatchObject({
      status: 'CONNECTED',
      disconnectedAt: null,
      displayName: 'New',
      phoneNumberId: before.phoneNumberId,
      businessAccountId: before.businessAccountId,
    });
    expect(reconnected.connectedAt.getTime()).toBeGreaterThan(before.connectedAt.getTime());
    // Connecting a connected number changes nothing but a given display name.
    expect(await connect(owner, '+14155550102')).toEqual({ id });
    expect(await db.whatsAppSender.findUniqueOrThrow({ where: { id } })).toEqual(reconnected);
  });

  it('refuses a number connected in another workspace, until it is disconnected there', async () => {
    const { id } = await connect(other, '+14155550110');
    const refused = await admin(
      'whatsapp',
      'sender',
      'connect',
      '--workspace',
      owner.workspaceId,
      '--e164',
      '+14155550110',
    );
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^\+14155550110 is a connected WhatsApp sender of workspace /);
    expect(await db.whatsAppSender.count({ where: { e164: '+14155550110' } })).toBe(1);
    expect((await call('DELETE', `/whatsapp/senders/${id}`, other)).status).toBe(204);
    const mine = await connect(owner, '+14155550110');
    expect(mine.id).not.toBe(id);
  });

  it.each([
    [['--e164', '+14155550199'], /--workspace/, 64],
    [['--workspace', 'not-a-uuid', '--e164', '+14155550199'], /--workspace/, 64],
    [['--e164', '555-0100', '--workspace', randomUUID()], /--e164: must be a valid E\.164 number/, 64],
    [['--e164', '+80012345678', '--workspace', randomUUID()], /--e164/, 64],
    [['--e164', '+14155550199', '--workspace', randomUUID(), '--colour', 'red'], /--colour: is not a flag/, 64],
    [['--e164', '+14155550199', '--workspace', randomUUID()], /^workspace .* not found/, 1],
  ])('the CLI refuses %j with a one-line message (exit %s) and stores nothing', async (args, message, code) => {
    const before = await db.whatsAppSender.count();
    const result = await admin('whatsapp', 'sender', 'connect', ...args);
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(message);
    expect(await db.whatsAppSender.count()).toBe(before);
  });

  it("answers another workspace's sender, an unknown id and a non-uuid with the same 403 and changes nothing", async () => {
    const theirs = await connect(other, '+14155550111');
    for (const id of [theirs.id, randomUUID(), 'nope']) {
      for (const method of ['GET', 'DELETE']) {
        expect(await call<ErrorBody>(method, `/whatsapp/senders/${id}`)).toEqual({
          status: 403,
          body: { error: 'forbidden' },
        });
      }
    }
    expect((await db.whatsAppSender.findUniqueOrThrow({ where: { id: theirs.id } })).status).toBe('CONNECTED');
    const list = await call<SenderBody[]>('GET', '/whatsapp/senders');
    expect(list.body.map((sender) => sender.id)).not.toContain(theirs.id);
  });

  it('lets a key with whatsapp.send read (it implies whatsapp.view), and refuses a key of another area', async () => {
    const sender = await createTestWorkspace(db, { scopes: ['whatsapp.send'] });
    expect(await call('GET', '/whatsapp/senders', sender)).toEqual({ status: 200, body: [] });
    const stranger = await createTestWorkspace(db, { scopes: ['dictionaries.view'] });
    expect(await call('GET', '/whatsapp/senders', stranger)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'whatsapp.view' },
    });
  });

  it('refuses sender signup, QR connection and number reservation to keys whatever their scopes', async () => {
    const full = await createTestWorkspace(db, {
      scopes: ['whatsapp.view', 'whatsapp.edit', 'whatsapp.delete', 'whatsapp.send'],
    });
    for (const path of [
      '/whatsapp/senders/signup',
      `/whatsapp/senders/${randomUUID()}/qr`,
      '/whatsapp/numbers/reserve',
    ])
      expect(await call('POST', path, full, {})).toEqual({ status: 403, body: { error: 'api_key_not_allowed' } });
  });
});

describe('WhatsApp templates: submitted for review, listed, synced, deleted', () => {
  const template = (overrides: Record<string, unknown> = {}) => ({
    name: 'order_shipped',
    language: 'en_US',
    category: 'utility',
    body: 'Hi {{1}}, your order {{2}} has shipped. Thanks, {{1}}!',
    ...overrides,
  });
  const create = (body: unknown, who: { key: string } = owner) =>
    call<TemplateBody & ErrorBody>('POST', '/whatsapp/templates', who, body);

  it('refuses a template in a workspace without a connected sender (409 whatsapp_sender_required), submitting nothing', async () => {
    const lonely = await createTestWorkspace(db, { scopes: ALL_SCOPES });
    const before = await submitted();
    const refused = await create(template(), lonely);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('whatsapp_sender_required');
    // A disconnected sender does not count.
    const { id } = await connect(lonely, '+14155550120');
    expect((await call('DELETE', `/whatsapp/senders/${id}`, lonely)).status).toBe(204);
    expect((await create(template(), lonely)).body.error).toBe('whatsapp_sender_required');
    expect(await submitted()).toBe(before);
    expect(await db.whatsAppTemplate.count({ where: { workspaceId: lonely.workspaceId } })).toBe(0);
  });

  it("creates PENDING, submitted under the workspace's Business Account, with its variables counted", async () => {
    const sender = await db.whatsAppSender.findFirstOrThrow({
      where: { workspaceId: owner.workspaceId, status: 'CONNECTED' },
      orderBy: { connectedAt: 'asc' },
    });
    const created = await create(template());
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const [submission] = await db.sql<TemplateRow>(
      `SELECT * FROM ${META_TWIN_TABLES.template} WHERE name = 'order_shipped' LIMIT 1`,
    );
    if (!submission) throw new Error('the provider holds no template order_shipped');
    expect(submission).toMatchObject({
      businessAccountId: sender.businessAccountId,
      language: 'en_US',
      category: 'UTILITY',
      body: template().body,
    });
    expect(created.body).toEqual({
      id: created.body.id,
      name: 'order_shipped',
      language: 'en_US',
      category: 'utility',
      body: template().body,
      variableCount: 2,
      status: 'PENDING',
      rejectedReason: null,
      qualityRating: 'UNKNOWN',
      providerTemplateId: submission.id,
      statusUpdatedAt: created.body.statusUpdatedAt,
      createdAt: created.body.createdAt,
    });
    expect(await db.whatsAppTemplate.findUniqueOrThrow({ where: { id: created.body.id } })).toMatchObject({
      workspaceId: owner.workspaceId,
      provider: 'simulated',
      providerTemplateId: submission.id,
      variableCount: 2,
    });
    expect(await call('GET', `/whatsapp/templates/${created.body.id}`)).toEqual({ status: 200, body: created.body });

    const noVariables = await create(template({ name: 'hello', body: 'Hello there' }));
    expect(noVariables.body).toMatchObject({ status: 'PENDING', variableCount: 0 });
  });

  it('refuses a name already used in the language (409 whatsapp_template_exists); another language is another template', async () => {
    await create(template({ name: 'welcome' }));
    const before = await submitted();
    const again = await create(template({ name: 'welcome', body: 'Other text' }));
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('whatsapp_template_exists');
    expect(await submitted()).toBe(before);
    const spanish = await create(template({ name: 'welcome', language: 'es', body: 'Hola {{1}}' }));
    expect(spanish.status).toBe(201);
    // Another workspace's names are its own.
    await connect(other, '+14155550112');
    expect((await create(template({ name: 'welcome' }), other)).status).toBe(201);
  });

  it.each([
    ['name', { name: 'Order_Shipped' }],
    ['name', { name: 'order-shipped' }],
    ['name', { name: '' }],
    ['name', { name: 'a'.repeat(513) }],
    ['language', { language: 'english' }],
    ['language', { language: 'en-US' }],
    ['category', { category: 'promotional' }],
    ['body', { body: '' }],
    ['body', { body: 'x'.repeat(1025) }],
    ['body', { body: 'Hi {{2}}' }],
    ['body', { body: 'Hi {{1}} and {{3}}' }],
    ['body', { body: 'Hi {{ 1 }}' }],
    ['body', { body: 'Hi {{01}}' }],
    ['body', { body: 'Hi {{name}}' }],
    ['body', { body: 'Hi {{1}} }} there' }],
    ['body', { body: 'Hi {{1' }],
    ['extra', { extra: true }],
  ])(
    'refuses a bad %s with 400 invalid_body at that field, submitting and storing nothing (%j)',
    async (field, overrides) => {
      const before = await submitted();
      const stored = await db.whatsAppTemplate.count();
      const refused = await create(template({ name: `bad_${randomUUID().slice(0, 8)}`, ...overrides }));
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
      const paths = refused.body.issues!.map((issue) => issue.path.join('.'));
      expect(paths.some((path) => path === field || (field === 'extra' && path === ''))).toBe(true);
      expect(await submitted()).toBe(before);
      expect(await db.whatsAppTemplate.count()).toBe(stored);
    },
  );

  it('accepts the limits: a 512-character name, a 1024-character body, variables reused and out of order', async () => {
    const body = `{{2}} then {{1}} then {{2}} `.padEnd(1024, 'x');
    const created = await create(template({ name: 'n'.repeat(512), language: 'pt_BR', category: 'marketing', body }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ variableCount: 2, category: 'marketing', language: 'pt_BR' });
  });

  it('answers 502 provider_error with upstreamStatus when the provider refuses or cannot be reached, and keeps nothing', async () => {
    // Deleted here only: the provider still holds the name in this language, and refuses it again (its 400).
    const first = (await create(template({ name: 'held_by_provider' }))).body;
    expect((await call('DELETE', `/whatsapp/templates/${first.id}`)).status).toBe(204);
    const stored = await db.whatsAppTemplate.count();
    const refused = await create(template({ name: 'held_by_provider' }));
    expect(refused).toEqual({ status: 502, body: { error: 'provider_error', upstreamStatus: 400 } });
    expect(await db.whatsAppTemplate.count()).toBe(stored);

    const before = await submitted();
    const lost = await call<ErrorBody>('POST', '/whatsapp/templates', owner, template({ name: 'lost' }), unreachable);
    expect(lost).toEqual({ status: 502, body: { error: 'provider_error', upstreamStatus: 503 } });
    expect(await db.whatsAppTemplate.count()).toBe(stored);
    expect(await submitted()).toBe(before);
    // The name is free here: once the provider takes it, it is created.
    expect((await create(template({ name: 'lost' }))).status).toBe(201);
  });

  it("sync-status stores the provider's review (status, reason, quality); statusUpdatedAt moves only on a change", async () => {
    const sync = (id: string, through = api) =>
      call<TemplateBody & ErrorBody>('POST', `/whatsapp/templates/${id}/sync-status`, owner, undefined, through);
    // The simulated provider's rules (simulators/meta-twin/rules.ts), at the tests' time scale:
    // approved after 2 ms; a name with "reject" rejected; with "pause" approved, then RED and PAUSED after 7 ms.
    const approvedOne = (await create(template({ name: 'to_approve' }))).body;
    const rejectedOne = (await create(template({ name: 'to_reject' }))).body;
    const pausedOne = (await create(template({ name: 'to_pause' }))).body;
    for (const created of [approvedOne, rejectedOne, pausedOne]) {
      expect(created).toMatchObject({ status: 'PENDING', qualityRating: 'UNKNOWN' });
      // Nothing reaches the API by itself here (the webhooks are dropped): it stays PENDING until synced.
      expect((await call<TemplateBody>('GET', `/whatsapp/templates/${created.id}`)).body).toEqual(created);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));

    const approved = await sync(approvedOne.id);
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual({
      ...approvedOne,
      status: 'APPROVED',
      qualityRating: 'GREEN',
      rejectedReason: null,
      statusUpdatedAt: approved.body.statusUpdatedAt,
    });
    expect(Date.parse(approved.body.statusUpdatedAt)).toBeGreaterThan(Date.parse(approvedOne.statusUpdatedAt));
    expect(await db.whatsAppTemplate.findUniqueOrThrow({ where: { id: approvedOne.id } })).toMatchObject({
      status: 'APPROVED',
      qualityRating: 'GREEN',
      statusUpdatedAt: new Date(approved.body.statusUpdatedAt),
    });
    // Nothing changed at the provider: nothing changes here, statusUpdatedAt included.
    expect(await sync(approvedOne.id)).toEqual(approved);

    expect((await sync(rejectedOne.id)).body).toMatchObject({
      status: 'REJECTED',
      rejectedReason: 'INVALID_FORMAT',
      qualityRating: 'UNKNOWN',
    });
    expect((await sync(pausedOne.id)).body).toMatchObject({
      status: 'PAUSED',
      qualityRating: 'RED',
      rejectedReason: null,
    });
    const listed = await call<TemplateBody[]>('GET', '/whatsapp/templates?status=REJECTED');
    expect(listed.body.map((row) => row.id)).toEqual([rejectedOne.id]);

    // The provider unreachable: 502, the stored review untouched.
    const before = await db.whatsAppTemplate.findUniqueOrThrow({ where: { id: approvedOne.id } });
    expect(await sync(approvedOne.id, unreachable)).toEqual({
      status: 502,
      body: { error: 'provider_error', upstreamStatus: 503 },
    });
    expect(await db.whatsAppTemplate.findUniqueOrThrow({ where: { id: approvedOne.id } })).toEqual(before);
  });

  it('sync-status needs whatsapp.edit of a key (whatsapp.view is the dashboard permission only)', async () => {
    const created = (await create(template({ name: 'scoped_sync' }))).body;
    const viewOnly = await createTestWorkspace(db, { scopes: ['whatsapp.view'] });
    const refused = await call<ErrorBody>('POST', `/whatsapp/templates/${created.id}/sync-status`, viewOnly);
    expect(refused).toEqual({ status: 403, body: { error: 'forbidden', requiredPermission: 'whatsapp.edit' } });
    const sendOnly = await createTestWorkspace(db, { scopes: ['whatsapp.send'] });
    expect((await call<ErrorBody>('POST', `/whatsapp/templates/${created.id}/sync-status`, sendOnly)).body).toEqual({
      error: 'forbidden',
      requiredPermission: 'whatsapp.edit',
    });
    expect((await call<ErrorBody>('POST', '/whatsapp/templates', viewOnly, template())).body).toEqual({
      error: 'forbidden',
      requiredPermission: 'whatsapp.edit',
    });
  });

  it('lists every template of the workspace at once, newest first, filtered by status, none of another workspace', async () => {
    const theirs = (await create(template({ name: 'theirs_only' }), other)).body;
    const list = await call<TemplateBody[]>('GET', '/whatsapp/templates');
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(await db.whatsAppTemplate.count({ where: { workspaceId: owner.workspaceId } }));
    expect(list.body.map((row) => row.id)).not.toContain(theirs.id);
    const createdAts = list.body.map((row) => row.createdAt);
    expect([...createdAts].sort().reverse()).toEqual(createdAts);
    const pending = await call<TemplateBody[]>('GET', '/whatsapp/templates?status=PENDING');
    expect(pending.body.length).toBeGreaterThan(0);
    expect(pending.body.length).toBeLessThan(list.body.length);
    expect(pending.body.every((row) => row.status === 'PENDING')).toBe(true);
    expect((await call<ErrorBody>('GET', '/whatsapp/templates?status=pending')).status).toBe(400);
  });

  it("deletes with whatsapp.delete (204, then 403 like any unknown id); another workspace's template is 403 everywhere", async () => {
    const doomed = (await create(template({ name: 'doomed' }))).body;
    const editor = await createTestWorkspace(db, { scopes: ['whatsapp.edit'] });
    expect(await call('DELETE', `/whatsapp/templates/${doomed.id}`, editor)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'whatsapp.delete' },
    });
    const theirs = (await create(template({ name: 'not_yours' }), other)).body;
    for (const [method, suffix] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/sync-status'],
    ] as const)
      expect(await call(method, `/whatsapp/templates/${theirs.id}${suffix}`)).toEqual({
        status: 403,
        body: { error: 'forbidden' },
      });
    expect(await db.whatsAppTemplate.findUnique({ where: { id: theirs.id } })).not.toBeNull();

    expect((await call('DELETE', `/whatsapp/templates/${doomed.id}`)).status).toBe(204);
    expect(await db.whatsAppTemplate.findUnique({ where: { id: doomed.id } })).toBeNull();
    for (const method of ['GET', 'DELETE'])
      expect(await call(method, `/whatsapp/templates/${doomed.id}`)).toEqual({
        status: 403,
        body: { error: 'forbidden' },
      });
  });
});
