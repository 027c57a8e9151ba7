import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createSimulatedWhatsApp } from '../../lib/whatsapp/simulated-whatsapp';
import { createActivities } from '../../activities';
import type { Prisma, WhatsAppMessageStatus } from '../../generated/prisma/client';
import { createResultWebhookEndpoint } from '../../lib/result-webhooks/result-webhooks';
import { grantCredits } from '../../lib/door/workspace-admin';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startReceiver } from '../support/http-receiver';
import { uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { connectedSender, reviewedTemplate, startWhatsAppStack } from '../support/whatsapp-stack';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';
import { testEgress } from '../support/egress';
import { TEST_KEYRING } from '../support/keyring';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue('whatsapp-results'));
const { api } = await startWhatsAppStack(db, url, temporal);
const SCOPES = ['campaigns.edit', 'campaigns.view', 'whatsapp.edit', 'whatsapp.send'];

let senders = 0;
const senderNumber = () => `+1415555${String(6000 + senders++).padStart(4, '0')}`;

async function get(workspace: TestWorkspace, path: string) {
  const response = await api.request('GET', path, { key: workspace.key });
  expect(response.status).toBe(200);
  return (await response.json()) as any;
}

/** The worker's activities (createActivities), run outside a worker on the test's task queue. */
const activities = createActivities({
  db,
  ...carrierDependencies(await startTestCarrier(db), api),
  whatsapp: createSimulatedWhatsApp(db),
  temporal: temporal.client,
  egress: testEgress(),
});
const activityEnvironment = () => new MockActivityEnvironment({ taskQueue: temporal.taskQueue });

interface SeededMessage {
  status: WhatsAppMessageStatus;
  /** The provider took it (it has a wamid). */
  taken: boolean;
  errorCode?: number;
}

/**
 * A WHATSAPP campaign written straight into the database with its leads and their messages in known
 * states, as leadMessageWorkflow leaves them: one outbound template message per lead, keyed by the lead.
 */
async function seededCampaign(
  workspace: TestWorkspace,
  leads: Array<{ phone: string; status: 'queued' | 'completed' | 'failed' | 'cancelled'; message?: SeededMessage }>,
) {
  const sender = await connectedSender(db, workspace, senderNumber());
  const campaign = await db.campaign.create({
    data: { workspaceId: workspace.workspaceId, name: 'Seeded', channel: 'WHATSAPP', acceptsLeadPush: true },
  });
  const base = Date.parse('2026-03-02T10:00:00.000Z');
  const seeded = [];
  for (const [index, { phone, status, message }] of leads.entries()) {
    const lead = await db.lead.create({
      data: {
        workspaceId: workspace.workspaceId,
        campaignId: campaign.id,
        idempotencyKey: `lead-${index}`,
        phone,
        status,
        workflowId: `not-started-${randomUUID()}`,
        requestId: randomUUID(),
        createdAt: new Date(base + index * 1_000),
      },
    });
    if (!message) {
      seeded.push({ lead, message: null });
      continue;
    }
    const conversation = await db.whatsAppConversation.upsert({
      where: { senderId_contactE164: { senderId: sender.id, contactE164: phone } },
      create: { workspaceId: workspace.workspaceId, senderId: sender.id, contactE164: phone },
      update: {},
    });
    const at = (seconds: number) => new Date(base + index * 1_000 + seconds * 1_000);
    const reached = ['sent', 'delivered', 'read'].indexOf(message.status);
    const row = await db.whatsAppMessage.create({
      data: {
        workspaceId: workspace.workspaceId,
        conversationId: conversation.id,
        senderId: sender.id,
        direction: 'outbound',
        type: 'template',
        body: `Hello ${phone}`,
        status: message.status,
        providerMessageId: message.taken ? `wamid.${randomUUID()}` : null,
        errorCode: message.errorCode ?? null,
        errorTitle: message.errorCode ? 'Message undeliverable' : null,
        idempotencyKey: `lead:${lead.id}`,
        campaignId: campaign.id,
        leadId: lead.id,
        createdAt: at(0),
        sentAt: reached >= 0 || (message.status === 'failed' && message.taken) ? at(1) : null,
        deliveredAt: reached >= 1 ? at(2) : null,
        readAt: reached >= 2 ? at(3) : null,
        failedAt: message.status === 'failed' ? at(4) : null,
      },
    });
    seeded.push({ lead, message: row });
  }
  return { campaign, sender, seeded };
}

/** The message as results and events show it. */
const messageView = (row: NonNullable<Awaited<ReturnType<typeof seededCampaign>>['seeded'][number]['message']>) => ({
  id: row.id,
  status: row.status,
  providerMessageId: row.providerMessageId,
  errorCode: row.errorCode,
  errorTitle: row.errorTitle,
  createdAt: row.createdAt.toISOString(),
  sentAt: row.sentAt?.toISOString() ?? null,
  deliveredAt: row.deliveredAt?.toISOString() ?? null,
  readAt: row.readAt?.toISOString() ?? null,
  failedAt: row.failedAt?.toISOString() ?? null,
  // Its sender is bound to no Meta connection: the simulated provider carries it (docs/configuration.md#simulators).
  simulated: true,
});

const workspace = await createTestWorkspace(db, { scopes: SCOPES });
// Leads in every state a WHATSAPP lead can be in; +14155550101 is two leads (the contacts are phones).
const { campaign, sender, seeded } = await seededCampaign(workspace, [
  { phone: '+14155550101', status: 'completed', message: { status: 'read', taken: true } },
  { phone: '+14155550102', status: 'completed', message: { status: 'delivered', taken: true } },
  { phone: '+14155550103', status: 'failed', message: { status: 'failed', taken: true, errorCode: 131026 } },
  // Refused when it was handed over: the provider never took it.
  { phone: '+14155550104', status: 'failed', message: { status: 'failed', taken: false, errorCode: 131026 } },
  // Out, its lead waiting for its delivery.
  { phone: '+14155550105', status: 'queued', message: { status: 'sent', taken: true } },
  // Its lead stopped waiting: undelivered.
  { phone: '+14155550106', status: 'failed', message: { status: 'sent', taken: true } },
  // Do-Not-Call: no message.
  { phone: '+14155550107', status: 'cancelled' },
  // Recorded, not handed over yet.
  { phone: '+14155550108', status: 'queued', message: { status: 'accepted', taken: false } },
  { phone: '+14155550101', status: 'completed', message: { status: 'delivered', taken: true } },
]);
type Seeded = (typeof seeded)[number];
const [read, delivered, failed, refused, waiting, undelivered, doNotCall, accepted, again] = seeded as [
  Seeded,
  Seeded,
  Seeded,
  Seeded,
  Seeded,
  Seeded,
  Seeded,
  Seeded,
  Seeded,
];
/** Another message, taken by the provider, in the conversation of +14155550101. */
const otherMessage = (
  data: Pick<Prisma.WhatsAppMessageUncheckedCreateInput, 'direction' | 'type' | 'status' | 'campaignId' | 'leadId'>,
) =>
  db.whatsAppMessage.create({
    data: {
      workspaceId: workspace.workspaceId,
      conversationId: read.message!.conversationId,
      senderId: sender.id,
      body: 'Thanks!',
      providerMessageId: `wamid.${randomUUID()}`,
      ...data,
    },
  });
// The contact's reply lands in the same conversation: an inbound message, no lead's.
await otherMessage({ direction: 'inbound', type: 'text', status: 'received' });

describe('GET /campaigns/{id}/kpis of a WHATSAPP campaign', () => {
  it("counts messaged, delivered and read contacts from its leads' messages, with the same fields as a voice campaign's", async () => {
    expect(await get(workspace, `/campaigns/${campaign.id}/kpis`)).toEqual({
      contacts: 8,
      // Taken by the provider: ...101 (twice), ...102, ...103, ...105, ...106; not ...104 (refused), ...108 (accepted).
      dialedContacts: 5,
      reachedContacts: 2,
      pickedUpContacts: 1,
      placed: 6,
      connectRate: 0.4,
      pickupRate: 0.2,
      avgDurationMs: 0,
      pending: 2,
      completed: 3,
      failed: 4,
      // ...105 waits for its delivery, but a lead never gets a second message.
      reengaging: 0,
      triggered: 9,
      // Its sender is bound to no Meta connection: the simulated provider took every message.
      simulatedPlaced: 6,
      pausedReason: null,
    });
  });

  it("answers a voice campaign's KPIs from its calls, not from messages of its leads", async () => {
    const voice = await db.campaign.create({
      data: { workspaceId: workspace.workspaceId, name: 'Voice', acceptsLeadPush: true },
    });
    // A message naming a voice campaign's lead (as a journey's could): the voice KPIs ignore it.
    const lead = await db.lead.create({
      data: {
        workspaceId: workspace.workspaceId,
        campaignId: voice.id,
        idempotencyKey: 'voice-1',
        phone: '+14155550111',
        status: 'queued',
        workflowId: `not-started-${randomUUID()}`,
        requestId: randomUUID(),
      },
    });
    await otherMessage({
      direction: 'outbound',
      type: 'template',
      status: 'read',
      campaignId: voice.id,
      leadId: lead.id,
    });
    expect(await get(workspace, `/campaigns/${voice.id}/kpis`)).toMatchObject({
      contacts: 1,
      dialedContacts: 0,
      reachedContacts: 0,
      pickedUpContacts: 0,
      placed: 0,
      pending: 1,
      reengaging: 0,
    });
    const result = await get(workspace, `/v1/results/${lead.id}`);
    expect(result).toMatchObject({ outcome: null, attempts: 0, calls: [] });
    expect(result).not.toHaveProperty('message');
  });
});

describe('results of a WHATSAPP campaign', () => {
  it("answers a lead's result with its message's outcome and the message where a voice lead has calls", async () => {
    expect(await get(workspace, `/v1/results/${read.lead.id}`)).toEqual({
      leadId: read.lead.id,
      campaignId: campaign.id,
      idempotencyKey: 'lead-0',
      phone: '+14155550101',
      name: null,
      status: 'completed',
      waiting: null,
      outcome: 'read',
      attempts: 1,
      calls: [],
      message: messageView(read.message!),
      createdAt: read.lead.createdAt.toISOString(),
      updatedAt: read.lead.updatedAt.toISOString(),
    });
    expect((await get(workspace, `/v1/results/${failed.lead.id}`)).message).toEqual({
      ...messageView(failed.message!),
      status: 'failed',
      errorCode: 131026,
      errorTitle: 'Message undeliverable',
    });
    expect(await get(workspace, `/v1/results/${doNotCall.lead.id}`)).toMatchObject({
      status: 'cancelled',
      outcome: null,
      attempts: 0,
      calls: [],
      message: null,
    });
  });

  it('lists every lead with its outcome: read, delivered, failed, undelivered, or none while it waits or without a message', async () => {
    const expected = [
      [read, 'read', 'read'],
      [delivered, 'delivered', 'delivered'],
      [failed, 'failed', 'failed'],
      [refused, 'failed', 'failed'],
      [waiting, null, 'sent'],
      [undelivered, 'undelivered', 'sent'],
      [doNotCall, null, null],
      [accepted, null, 'accepted'],
      [again, 'delivered', 'delivered'],
    ] as const;
    const rows = expected
      .map(([{ lead }, outcome, status]) => ({ leadId: lead.id, outcome, attempts: status ? 1 : 0, status }))
      .reverse();
    const summary = (item: any) => ({
      leadId: item.leadId,
      outcome: item.outcome,
      attempts: item.attempts,
      status: item.message?.status ?? null,
    });

    const leads = await get(workspace, `/campaigns/${campaign.id}/leads?limit=200`);
    expect(leads.total).toBe(9);
    expect(leads.items.map(summary)).toEqual(rows);
    expect(leads.items.every((item: any) => Array.isArray(item.calls) && item.calls.length === 0)).toBe(true);

    const first = await get(workspace, `/v1/results?limit=5&campaignId=${campaign.id}`);
    const second = await get(workspace, `/v1/results?limit=5&campaignId=${campaign.id}&cursor=${first.nextCursor}`);
    expect([...first.items, ...second.items].map(summary)).toEqual(rows);
    expect(second.nextCursor).toBeNull();
  });

  it('describes the message and the KPIs for messages in the OpenAPI description', async () => {
    const document = await get(workspace, '/v1/openapi.json');
    const text = JSON.stringify(document);
    const kpis = document.paths['/campaigns/{id}/kpis'].get;
    expect(kpis.summary).toContain('WHATSAPP');
    expect(text).toContain('WHATSAPP: phones whose message was read.');
    expect(text).toContain("A WHATSAPP campaign's lead only (absent for others)");
  });
});

describe('lead.finished events of a WHATSAPP campaign', () => {
  const enqueue = (input: Parameters<typeof activities.enqueueLeadFinished>[0]) =>
    activityEnvironment().run(activities.enqueueLeadFinished, input);
  const eventOf = async (leadId: string) =>
    (await db.resultWebhookDelivery.findFirstOrThrow({ where: { eventKey: `lead.finished:${leadId}` } }))
      .payload as any;

  it('carries the outcome its workflow gave and its message; without a message, null', async () => {
    const receiver = await startReceiver(() => 204);
    await createResultWebhookEndpoint(db, TEST_KEYRING, workspace.workspaceId, { url: receiver.url });

    await enqueue({ leadId: read.lead.id, outcome: 'delivered', attempts: 1 });
    expect(await eventOf(read.lead.id)).toEqual({
      type: 'lead.finished',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: {
        leadId: read.lead.id,
        campaignId: campaign.id,
        status: 'completed',
        outcome: 'delivered',
        attempts: 1,
        calls: [],
        message: messageView(read.message!),
      },
    });
    await enqueue({ leadId: doNotCall.lead.id, outcome: 'do_not_call', attempts: 0 });
    expect((await eventOf(doNotCall.lead.id)).data).toEqual({
      leadId: doNotCall.lead.id,
      campaignId: campaign.id,
      status: 'cancelled',
      outcome: 'do_not_call',
      attempts: 0,
      calls: [],
      message: null,
    });
    // Without the workflow's result: what the message tells.
    await enqueue({ leadId: undelivered.lead.id });
    expect((await eventOf(undelivered.lead.id)).data).toMatchObject({
      outcome: 'undelivered',
      attempts: 1,
      message: { id: undelivered.message!.id, status: 'sent' },
    });

    // Delivered, as signed and posted.
    await until(
      () => Promise.resolve(receiver.received.length),
      (n) => n === 3,
    );
    const bodies = receiver.received.map((request) => JSON.parse(request.body));
    expect(bodies.find((body) => body.data.leadId === read.lead.id)).toEqual(await eventOf(read.lead.id));
  });
});

describe('a WHATSAPP campaign run to its end', () => {
  it('answers results, events and KPIs from the messages its leads sent', async () => {
    const owner = await createTestWorkspace(db, { scopes: SCOPES });
    await grantCredits(db, owner.workspaceId, 100);
    const receiver = await startReceiver(() => 204);
    await createResultWebhookEndpoint(db, TEST_KEYRING, owner.workspaceId, { url: receiver.url });
    const runSender = await connectedSender(db, owner, senderNumber());
    const template = await reviewedTemplate(api, owner, { name: 'results_notice', body: 'Your order shipped.' });
    expect(template.status).toBe('APPROVED');
    const created = await api.request('POST', '/campaigns', {
      key: owner.key,
      body: { name: 'Run', channel: 'WHATSAPP', acceptsLeadPush: true },
    });
    const runId = ((await created.json()) as { id: string }).id;
    const put = await api.request('PUT', `/whatsapp/campaigns/${runId}`, {
      key: owner.key,
      body: {
        senderId: runSender.id,
        templateId: template.id,
        variables: {},
        sendingWindow: { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] },
      },
    });
    expect(put.status).toBe(200);
    await transitionCampaign(api, owner.key, runId, 'start');
    await db.doNotCall.create({ data: { workspaceId: owner.workspaceId, phone: '+14155556206', source: 'api' } });
    // The simulated provider: ...7 delivered (never read), ...8 sent then failed (131026); ...6 is on the Do-Not-Call list.
    const phones = ['+14155556207', '+14155556218', '+14155556206'];
    const pushed = await api.request('POST', `/v1/campaigns/${runId}/leads/batch`, {
      key: owner.key,
      body: { leads: phones.map((phone) => ({ idempotencyKey: phone, lead: { phone } })) },
    });
    expect(pushed.status).toBe(200);
    await until(
      () => db.resultWebhookDelivery.findMany({ where: { workspaceId: owner.workspaceId, status: 'delivered' } }),
      (rows) => rows.length === 3,
      60_000,
    );

    const results = (await get(owner, `/v1/results?campaignId=${runId}`)).items as any[];
    const byPhone = Object.fromEntries(results.map((item) => [item.phone, item]));
    expect(byPhone['+14155556207']).toMatchObject({
      status: 'completed',
      outcome: 'delivered',
      attempts: 1,
      calls: [],
      message: { status: 'delivered', providerMessageId: expect.stringMatching(/./), errorCode: null },
    });
    expect(byPhone['+14155556218']).toMatchObject({
      status: 'failed',
      outcome: 'failed',
      message: { status: 'failed', providerMessageId: expect.stringMatching(/./), errorCode: 131026 },
    });
    expect(byPhone['+14155556206']).toMatchObject({ status: 'cancelled', outcome: null, attempts: 0, message: null });

    const events = Object.fromEntries(
      receiver.received.map((request) => {
        const { data } = JSON.parse(request.body);
        return [results.find((item) => item.leadId === data.leadId).phone, data];
      }),
    );
    expect(events['+14155556207']).toEqual({
      leadId: byPhone['+14155556207'].leadId,
      campaignId: runId,
      status: 'completed',
      outcome: 'delivered',
      attempts: 1,
      calls: [],
      message: byPhone['+14155556207'].message,
    });
    expect(events['+14155556218']).toMatchObject({ status: 'failed', outcome: 'failed', attempts: 1 });
    expect(events['+14155556218'].message).toEqual(byPhone['+14155556218'].message);
    expect(events['+14155556206']).toMatchObject({
      status: 'cancelled',
      outcome: 'do_not_call',
      attempts: 0,
      message: null,
    });

    expect(await get(owner, `/campaigns/${runId}/kpis`)).toEqual({
      contacts: 3,
      dialedContacts: 2,
      reachedContacts: 1,
      pickedUpContacts: 0,
      placed: 2,
      connectRate: 0.5,
      pickupRate: 0,
      avgDurationMs: 0,
      pending: 0,
      completed: 1,
      failed: 2,
      reengaging: 0,
      triggered: 3,
      simulatedPlaced: 2,
      pausedReason: null,
    });
  });
});
