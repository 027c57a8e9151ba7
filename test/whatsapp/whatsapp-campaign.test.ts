import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../lib/error-codes';
import { leadMessageStateQuery } from '../../lib/temporal/messages';
import { grantCredits } from '../../lib/door/workspace-admin';
import { creditUnits } from '../../lib/credits/money';
import { PRICE_TABLE } from '../../lib/credits/price-table';
import { startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { connectedSender, reviewedTemplate, startWhatsAppStack } from '../support/whatsapp-stack';
import { workerProcesses } from '../support/worker-process';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';
import { connectTwinSender, startMetaTwinStack, twinTemplate } from '../support/meta-twin';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue('whatsapp-campaign'));
const { api } = await startWhatsAppStack(db, url, temporal);

const SCOPES = ['campaigns.edit', 'campaigns.view', 'whatsapp.edit', 'whatsapp.send', 'billing.view'];
const ALWAYS = { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] };
let numbers = 0;
const senderNumber = () => `+1415555${String(3000 + numbers++).padStart(4, '0')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(workspace: TestWorkspace, method: string, path: string, body?: unknown, via = api) {
  const response = await via.request(method, path, { key: workspace.key, body });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
}

/** A WHATSAPP campaign of a workspace with credits, a sender and an approved template, its messaging set. */
async function whatsAppCampaign(via = api, credits = 100) {
  const workspace = await createTestWorkspace(db, { scopes: SCOPES });
  await grantCredits(db, workspace.workspaceId, credits);
  const sender = await connectedSender(db, workspace, senderNumber());
  const template = await reviewedTemplate(via, workspace, { name: 'spring_offer', body: 'Hi {{1}}, {{2}} is on us.' });
  expect(template.status).toBe('APPROVED');
  const created = await call(
    workspace,
    'POST',
    '/campaigns',
    { name: 'Spring', channel: 'WHATSAPP', acceptsLeadPush: true },
    via,
  );
  expect(created.status).toBe(201);
  const campaignId = created.body.id as string;
  const settings = {
    senderId: sender.id,
    templateId: template.id,
    variables: { '1': { field: 'name', fallback: 'there' }, '2': { value: 'delivery' } },
    sendingWindow: ALWAYS,
  };
  return { workspace, sender, template, campaignId, settings };
}

async function push(workspace: TestWorkspace, campaignId: string, phones: string[], via = api) {
  for (let start = 0; start < phones.length; start += 100) {
    const leads = phones.slice(start, start + 100).map((phone, index) => ({
      idempotencyKey: `lead-${phone}`,
      lead: { phone, ...(index % 2 === 0 && { name: `Lead ${phone.slice(-4)}` }) },
    }));
    const response = await call(workspace, 'POST', `/v1/campaigns/${campaignId}/leads/batch`, { leads }, via);
    expect(response.status).toBe(200);
  }
}

const leadsOf = (campaignId: string) =>
  db.lead.findMany({ where: { campaignId }, select: { id: true, phone: true, status: true, name: true } });
const finished = (campaignId: string, count: number, timeoutMs = 60_000) =>
  until(
    () => leadsOf(campaignId),
    (leads) => leads.length === count && leads.every((lead) => !['queued', 'dialing'].includes(lead.status)),
    timeoutMs,
  );

describe('PUT /whatsapp/campaigns/{id}', () => {
  it('sets the messaging of a WHATSAPP campaign, which may only start once it is set', async () => {
    const { workspace, campaignId, settings } = await whatsAppCampaign();
    const early = await call(workspace, 'POST', `/campaigns/${campaignId}/start`);
    expect(early.status).toBe(409);
    expect(early.body.error).toBe(ErrorCode.whatsapp_campaign_not_configured);
    const put = await call(workspace, 'PUT', `/whatsapp/campaigns/${campaignId}`, settings);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ campaignId, ...settings });
    expect((await call(workspace, 'GET', `/whatsapp/campaigns/${campaignId}`)).body).toMatchObject(settings);
    await transitionCampaign(api, workspace.key, campaignId, 'start');
  });

  it("refuses another channel, a template not APPROVED, variables that are not the template's, and keys without campaigns.edit", async () => {
    const { workspace, campaignId, settings } = await whatsAppCampaign();
    const voice = await call(workspace, 'POST', '/campaigns', { name: 'Calls', channel: 'VOICE' });
    const notWhatsApp = await call(workspace, 'PUT', `/whatsapp/campaigns/${voice.body.id as string}`, settings);
    expect(notWhatsApp).toMatchObject({ status: 409, body: { error: ErrorCode.campaign_not_whatsapp } });
    const rejected = await reviewedTemplate(api, workspace, { name: 'promo_reject', body: 'Buy now' });
    const notApproved = await call(workspace, 'PUT', `/whatsapp/campaigns/${campaignId}`, {
      ...settings,
      templateId: rejected.id,
      variables: {},
    });
    expect(notApproved).toMatchObject({ status: 409, body: { error: ErrorCode.whatsapp_template_not_approved } });
    const missing = await call(workspace, 'PUT', `/whatsapp/campaigns/${campaignId}`, {
      ...settings,
      variables: { '1': { value: 'x' } },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.issues).toEqual([expect.objectContaining({ path: ['variables'] })]);
    const editor = await createTestWorkspace(db, { scopes: ['whatsapp.edit'] });
    const scoped = await call(editor, 'PUT', `/whatsapp/campaigns/${campaignId}`, settings);
    expect(scoped).toMatchObject({ status: 403, body: { requiredPermission: 'campaigns.edit' } });
    expect(await db.whatsAppCampaignSettings.count({ where: { campaignId } })).toBe(0);
  });
});

describe('a running WHATSAPP campaign', () => {
  it('sends one template message per lead, billed, and ends each lead by its delivery', async () => {
    const { workspace, campaignId, settings } = await whatsAppCampaign();
    expect((await call(workspace, 'PUT', `/whatsapp/campaigns/${campaignId}`, settings)).status).toBe(200);
    await transitionCampaign(api, workspace.key, campaignId, 'start');
    // The simulated provider: ...1 read, ...7 delivered, ...9 undeliverable.
    await push(workspace, campaignId, ['+14155554001', '+14155554017', '+14155554029']);
    const leads = await finished(campaignId, 3);
    const byPhone = Object.fromEntries(leads.map((lead) => [lead.phone, lead.status]));
    expect(byPhone).toEqual({ '+14155554001': 'completed', '+14155554017': 'completed', '+14155554029': 'failed' });
    const messages = await db.whatsAppMessage.findMany({ where: { campaignId }, orderBy: { body: 'asc' } });
    expect(messages).toHaveLength(3);
    const named = messages.find(
      (message) => message.leadId === leads.find((lead) => lead.phone === '+14155554001')!.id,
    )!;
    expect(named.body).toBe('Hi Lead 4001, delivery is on us.');
    const fallback = messages.find(
      (message) => message.leadId === leads.find((lead) => lead.phone === '+14155554017')!.id,
    )!;
    expect(fallback.body).toBe('Hi there, delivery is on us.');
    // Charged for the two delivered (0.0200 each, utility), the undeliverable one's hold voided. The webhook commits a
    // status before it settles the hold, and a lead may end on the committed status in between: waited for, not read
    // once (a loaded run read 0.0200 still held).
    const balance = await until(
      async () => (await call(workspace, 'GET', '/credits/balance')).body,
      (body) => body.pendingHolds === '0.0000',
    );
    expect(balance).toEqual({ balance: '99.9600', pendingHolds: '0.0000' });
  });

  it('messages its calling list as it messages pushed leads', async () => {
    const { workspace, campaignId, settings } = await whatsAppCampaign();
    await call(workspace, 'PUT', `/whatsapp/campaigns/${campaignId}`, settings);
    const contacts = await call(workspace, 'POST', `/campaigns/${campaignId}/contacts`, {
      contacts: [{ phone: '+14155554201', name: 'Rosa' }, { phone: '+14155554212' }],
    });
    expect(contacts.status).toBe(200);
    await transitionCampaign(api, workspace.key, campaignId, 'start');
    const leads = await finished(campaignId, 2);
    expect(leads.map((lead) => lead.status)).toEqual(['completed', 'completed']);
    const bodies = (await db.whatsAppMessage.findMany({ where: { campaignId } })).map((message) => message.body).sort();
    expect(bodies).toEqual(['Hi Rosa, delivery is on us.', 'Hi there, delivery is on us.']);
  });

  it('holds its leads while paused, sends them when resumed, and cancels those left when stopped', async () => {
    const { workspace, campaignId, settings } = await whatsAppCampaign();
    await call(workspace, 'PUT', `/whatsapp/campaigns/${campaignId}`, settings);
    await transitionCampaign(api, workspace.key, campaignId, 'start');
    await transitionCampaign(api, workspace.key, campaignId, 'pause');
    await push(workspace, campaignId, ['+14155554101', '+14155554112']);
    await sleep(1_500);
    expect(await db.whatsAppMessage.count({ where: { campaignId } })).toBe(0);
    await transitionCampaign(api, workspace.key, campaignId, 'resume');
    await finished(campaignId, 2);
    expect(await db.whatsAppMessage.count({ where: { campaignId } })).toBe(2);

    await transitionCampaign(api, workspace.key, campaignId, 'pause');
    await push(workspace, campaignId, ['+14155554123', '+14155554134']);
    await sleep(500);
    await transitionCampaign(api, workspace.key, campaignId, 'stop');
    const leads = await finished(campaignId, 4);
    expect(
      leads
        .filter((lead) => lead.status === 'cancelled')
        .map((lead) => lead.phone)
        .sort(),
    ).toEqual(['+14155554123', '+14155554134']);
    expect(await db.whatsAppMessage.count({ where: { campaignId } })).toBe(2);
  });
});

// Enough leads for every claim of the crash test, few enough to finish in seconds: 10 answers lost (every 20th send),
// 40 that fail at Meta (phones ending 8 or 9), the worker killed a quarter of the way, with leads still in flight. The
// pace at scale (10,000 leads at >= 80 msg/s) is a benchmark's to show (docs/benchmarks/whatsapp.md), not a test's.
const CRASH_LEADS = 200;
const SENT_BEFORE_KILL = CRASH_LEADS / 4;
// Sends the killed worker claimed before their request left: a handful whatever the campaign's size (as many as it
// had in flight), which is why the bound does not scale with CRASH_LEADS.
const MOST_UNKNOWN = 10;

describe(`a WHATSAPP campaign of ${CRASH_LEADS} leads through the Meta twin, 5 % of send answers lost and a worker killed with SIGKILL in the middle`, () => {
  it('sends exactly one message per lead and charges each delivered one once', async () => {
    // Its own API, Meta twin and worker processes: the production worker entry point, killed and started again.
    const queue = uniqueTaskQueue('whatsapp-crash');
    const crashTemporal = { ...temporal, taskQueue: queue };
    const stack = await startMetaTwinStack(db, url, crashTemporal);
    const crashApi = stack.api;
    const carrier = await startTestCarrier(db);
    const startWorker = workerProcesses({
      databaseUrl: url,
      taskQueue: queue,
      carrierUrl: carrier.baseUrl,
      apiUrl: crashApi.baseUrl,
      whatsappUrl: stack.baseUrl,
      // The worker opens the connection's token with the ring. An ambiguous send waits 120 s for its status (900 s in
      // production): on a loaded machine the twin's webhooks were seen to lag more than 30 s behind its sends, and a
      // send whose status has not come by then is marked unknown. Each status comes here, so no lead waits that long.
      env: { SECRETS_KEYS: stack.secretsKeys, WHATSAPP_RESEND_AFTER_SECONDS: '120' },
    });
    const workspace = await createTestWorkspace(db, { scopes: SCOPES });
    await grantCredits(db, workspace.workspaceId, 100);
    const { sender } = await connectTwinSender(db, stack, workspace, senderNumber());
    const template = await twinTemplate(crashApi, workspace, {
      name: 'spring_offer',
      body: 'Hi {{1}}, {{2}} is on us.',
      examples: ['Ada', 'delivery'],
    });
    expect(template.body.status).toBe('APPROVED');
    const created = await call(
      workspace,
      'POST',
      '/campaigns',
      { name: 'Spring', channel: 'WHATSAPP', acceptsLeadPush: true },
      crashApi,
    );
    const campaignId = created.body.id as string;
    const settings = {
      senderId: sender.id,
      templateId: template.body.id,
      variables: { '1': { field: 'name', fallback: 'there' }, '2': { value: 'delivery' } },
      sendingWindow: ALWAYS,
    };
    await db.whatsAppSender.update({ where: { id: sender.id }, data: { messagesPerSecond: 200 } });
    expect((await call(workspace, 'PUT', `/whatsapp/campaigns/${campaignId}`, settings, crashApi)).status).toBe(200);
    // Every 20th send is taken by the twin but its answer lost (the connection reset).
    stack.twin.setFaults({ dropAnswerRate: 0.05 });
    // The campaign's start is an Update of its workflow: a worker must be polling to answer it.
    const first = startWorker();
    // A start that timed out (503) may still have been applied: a second one then finds it RUNNING (409).
    await until(
      () => call(workspace, 'POST', `/campaigns/${campaignId}/start`, undefined, crashApi),
      (response) => response.status !== 503,
      120_000,
    );
    await until(
      () => db.campaign.findUniqueOrThrow({ where: { id: campaignId } }),
      (campaign) => campaign.status === 'RUNNING',
    );
    const phones = Array.from(
      { length: CRASH_LEADS },
      (_, index) => `+1415555${String(5000 + index).padStart(4, '0')}`,
    );
    await push(workspace, campaignId, phones, crashApi);
    await until(
      () => db.whatsAppMessage.count({ where: { campaignId } }),
      (count) => count >= SENT_BEFORE_KILL,
      // Generous: a machine as loaded as a CI runner sharing its CPUs sent 92 in 120 s.
      300_000,
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const atCrash = await db.whatsAppMessage.count({ where: { campaignId } });
    expect(atCrash).toBeLessThan(CRASH_LEADS);
    startWorker();

    const leads = await finished(campaignId, CRASH_LEADS, 480_000).catch(async (error: unknown) => {
      const stuck = await db.lead.findMany({ where: { campaignId, status: { in: ['queued', 'dialing'] } } });
      console.log(
        'STUCK',
        stuck.length,
        stuck.slice(0, 5).map((lead) => [lead.phone, lead.workflowStartedAt]),
      );
      for (const lead of stuck.slice(0, 3)) {
        const handle = temporal.client.workflow.getHandle(lead.workflowId);
        const state = await handle.query(leadMessageStateQuery).catch((e: unknown) => String(e));
        console.log('STATE', JSON.stringify(state));
        const messages = await db.whatsAppMessage.findMany({ where: { leadId: lead.id } });
        console.log('MSG', JSON.stringify(messages.map((m) => [m.status, m.providerMessageId, m.handOver])));
      }
      throw error;
    });
    const messages = await db.whatsAppMessage.findMany({
      where: { campaignId },
      select: { id: true, leadId: true, status: true, handOver: true, ambiguousAt: true },
    });
    // One message per lead, and the twin reached no lead twice: answers lost, a worker killed, nothing sent twice.
    expect(messages).toHaveLength(CRASH_LEADS);
    expect(new Set(messages.map((message) => message.leadId)).size).toBe(CRASH_LEADS);
    const deliveries = new Map(
      await Promise.all(phones.map(async (phone) => [phone, await stack.twin.deliveriesTo(phone)] as const)),
    );
    expect([...deliveries.values()].filter((count) => count > 1)).toEqual([]);
    // A send claimed by the killed worker whose request had not left yet is indistinguishable from one whose answer
    // was lost: it is never resent, and no status ever comes, so it ends unknown (its lead failed, its hold pending).
    // Such a lead is the only one the twin never reached, and the claim is the request's last step, so there are few.
    const phoneOfLead = new Map(leads.map((lead) => [lead.id, lead.phone]));
    const unknown = messages.filter((message) => message.handOver === 'unknown');
    const neverReached = phones.filter((phone) => deliveries.get(phone) === 0);
    expect(unknown.map((message) => phoneOfLead.get(message.leadId ?? '')).sort()).toEqual(neverReached.sort());
    expect(unknown.every((message) => message.ambiguousAt !== null && message.status === 'accepted')).toBe(true);
    expect(unknown.length).toBeLessThanOrEqual(MOST_UNKNOWN);
    // Every 20th answer was lost. Such a send is ambiguous until its status comes, unless its status overtook the lost
    // answer (then it is handed over at once): how many of each depends on timing, the sum on the twin.
    // Of the sends that reached it: a lead the killed worker claimed but never sent is no send of the twin's.
    expect(stack.twin.answersLost).toBeGreaterThanOrEqual(Math.floor((CRASH_LEADS - neverReached.length) / 20));
    const ambiguous = messages.filter((message) => message.ambiguousAt !== null);
    expect(ambiguous.length).toBeGreaterThan(0);
    expect(ambiguous.length - unknown.length).toBeLessThanOrEqual(stack.twin.answersLost);
    console.log(
      `campaign via the Meta twin: ${stack.twin.answersLost} answers lost, ${ambiguous.length} of ${CRASH_LEADS} sends ` +
        `ambiguous, ${unknown.length} claimed by the killed worker before their request left (unknown)`,
    );
    expect(await db.whatsAppSender.count({ where: { id: sender.id, provider: 'meta-twin' } })).toBe(1);
    // Last digits 8 and 9 fail (a fifth of the leads); the rest the twin reached are delivered or read.
    const failsAtMeta = (phone: string) => phone.endsWith('8') || phone.endsWith('9');
    const deliverable = phones.filter((phone) => deliveries.get(phone) === 1 && !failsAtMeta(phone)).length;
    const delivered = messages.filter((message) => message.status === 'delivered' || message.status === 'read');
    expect(delivered).toHaveLength(deliverable);
    expect(deliverable).toBeGreaterThanOrEqual((CRASH_LEADS * 4) / 5 - MOST_UNKNOWN);
    expect(leads.filter((lead) => lead.status === 'completed')).toHaveLength(deliverable);
    expect(leads.filter((lead) => lead.status === 'failed')).toHaveLength(CRASH_LEADS - deliverable);
    // Each delivered message charged once; every hold settled but the unknown ones' (left to a late status or the
    // 30-day sweep); the ledger sums to the balance.
    // A lead may end on its committed status before the webhook settles the hold: the last holds are waited for.
    await until(
      () =>
        db.creditLedgerEntry.count({ where: { workspaceId: workspace.workspaceId, kind: 'hold', status: 'pending' } }),
      (pending) => pending <= unknown.length,
    );
    const entries = await db.creditLedgerEntry.findMany({ where: { workspaceId: workspace.workspaceId } });
    expect(entries.filter((entry) => entry.kind === 'whatsapp_message')).toHaveLength(deliverable);
    expect(entries.filter((entry) => entry.kind === 'hold' && entry.status === 'pending')).toHaveLength(unknown.length);
    const sum = entries.reduce((total, entry) => total + Math.round(Number(entry.amount) * 10_000), 0);
    const { balance } = (await call(workspace, 'GET', '/credits/balance', undefined, crashApi)).body as {
      balance: string;
    };
    expect(sum).toBe(Math.round(Number(balance) * 10_000));
    // A utility template's price a message: charged when delivered, held while unknown.
    const price = creditUnits(PRICE_TABLE.whatsapp_message.price.utility);
    expect(Math.round(Number(balance) * 10_000)).toBe(creditUnits('100') - price * (deliverable + unknown.length));
  }, 900_000);
});
