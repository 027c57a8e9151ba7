// Opt-outs honoured on every path (docs/features/leads.md#the-do-not-call-list), on the real servers: the API, a
// worker, Temporal and PostgreSQL, the Twilio twin as the carrier (its personas say what the person answers) and the
// WhatsApp twin as the provider (its contacts reply). Every way a number is listed, with its provenance; then every
// send path, call and WhatsApp, refusing or skipping a listed number; and a lead that opts out between two attempts.
import { describe, expect, it } from 'vitest';
import type { Transcript } from '../../lib/calls/transcript';
import type { OrderNotificationResult } from '../../lib/commerce/order-notification';
import { DEFAULT_DIAL_LADDER } from '../../lib/dial-ladder/dial-ladder';
import { grantCredits } from '../../lib/door/workspace-admin';
import { startCallIntelligence } from '../../lib/temporal/start-call-intelligence';
import { orderNotificationWorkflowId } from '../../lib/temporal/workflow-ids';
import { createSimulatedWhatsAppClient } from '../../lib/whatsapp/graph-client';
import { freePort } from '../../scripts/stack/child-process';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import { twilioClientAt } from '../../lib/carriers/twilio-base-url';
import { insertShoeShopAgent, said, startedAgentCampaign, withIntelligence } from '../support/carrier-calls';
import { insertAnsweredCall } from '../support/calls';
import { insertPaidOrder } from '../support/commerce-orders';
import { useTestDatabase } from '../support/database';
import { journey, runningJourneyCampaign } from '../support/journeys';
import { pushLeadWithWorkflow } from '../support/lead-workflows';
import { useTemporalClient } from '../support/temporal';
import { scriptPersona, twinLog } from '../support/twilio-twin';
import { connectTwinCaller, startTwilioTwinStack } from '../support/twilio-twin-stack';
import { until } from '../support/until';
import { providerRecord, startTestWhatsApp, TEST_WHATSAPP_APP_SECRET } from '../support/whatsapp';
import { connectedSender, reviewedTemplate } from '../support/whatsapp-stack';
import { createTestWorkspace } from '../support/workspace';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const whatsappPort = await freePort();
const whatsappClient = createSimulatedWhatsAppClient({ baseUrl: `http://127.0.0.1:${whatsappPort}` });
// The script walk (speech Gathers) explicitly: the engine the opt-out must be heard on without a dialogue engine.
const { keyring, twin, api } = await startTwilioTwinStack(
  { db, url, temporal },
  { conversationEngine: 'gather', whatsapp: { provider: whatsappClient, appSecret: TEST_WHATSAPP_APP_SECRET } },
  { whatsappProvider: whatsappClient },
);
const whatsapp = await startTestWhatsApp(db, { webhookUrl: `${api.baseUrl}/whatsapp/webhook`, port: whatsappPort });

const owner = await createTestWorkspace(db, {
  scopes: [
    ...['campaigns.edit', 'campaigns.view', 'agents.edit', 'calls.view', 'calls.edit', 'calls.test'],
    ...['whatsapp.send', 'whatsapp.edit', 'crm.edit'],
  ],
});
await grantCredits(db, owner.workspaceId, 100);
const caller = '+14155569701';
await connectTwinCaller(db, keyring, twin.baseUrl, owner.workspaceId, caller);
const sender = await connectedSender(db, owner, '+14155569702');
const template = await reviewedTemplate(api, owner, { name: 'optout_notice', body: 'Your order {{1}} shipped.' });
expect(template.status).toBe('APPROVED');

const QUESTIONS = ['What colour would you like for the shoes?', 'How many pairs would you like?'];
const agent = await insertShoeShopAgent(db, owner.workspaceId, { questions: QUESTIONS });
const OPTED_OUT_LINE = "I'm sorry to have bothered you. We won't call you again. Goodbye.";

const get = async (path: string) => api.request('GET', path, { key: owner.key });
const listing = async (phone: string) => {
  const response = await get(`/do-not-call/${encodeURIComponent(phone)}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
/** Until the number is listed: its entry. */
const listed = (phone: string) =>
  until(
    () => listing(phone),
    (answer) => answer.status === 200,
  ).then((answer) => answer.body);
const campaignOf = (ladder?: Parameters<typeof startedAgentCampaign>[3]['ladder']) =>
  startedAgentCampaign(db, api, owner, { name: 'Opt-outs', caller, agentId: agent.id, ...(ladder && { ladder }) });
const leadResult = async (leadId: string) => (await (await get(`/v1/results/${leadId}`)).json()) as any;
/** The product's record of an inbound message, by the provider's wamid. */
const inbound = (wamid: string) =>
  until(
    () => db.whatsAppMessage.findFirst({ where: { providerMessageId: wamid } }),
    (row) => row !== null,
  ).then((row) => row!);

describe('a number is listed, with its provenance, by', () => {
  it('a spoken opt-out on the script walk (call x spoken_opt_out): the agent says goodbye and hangs up, no further question', async () => {
    const phone = '+14155569712';
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['Please stop calling me.', 'Two pairs.'] });
    const campaign = await campaignOf();
    const { leadId, handle } = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaign.id, phone, {
      name: 'Ana',
    });
    expect(await handle.result()).toMatchObject({ status: 'completed', outcome: 'opted_out', attempts: 1 });
    const call = await db.call.findFirstOrThrow({ where: { leadId } });
    expect(call.outcome).toBe('opted_out');
    expect(await listed(phone)).toEqual({
      phone,
      source: 'spoken_opt_out',
      callId: call.id,
      messageId: null,
      listedAt: expect.any(String),
    });
    const transcript = (await withIntelligence(db, call.id)).transcript as Transcript;
    expect(said(transcript, 'agent')).toEqual(['Hello Ana, this is the shoe shop.', QUESTIONS[0], OPTED_OUT_LINE]);
    const log = await twinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === 'say').map((entry) => entry.text)).toEqual(
      said(transcript, 'agent'),
    );
    expect((await leadResult(leadId)).outcome).toBe('opted_out');
  });

  it('a WhatsApp reply that is only an opt-out keyword, or the opt-out button (whatsapp x whatsapp_reply); not a longer message', async () => {
    const stop = '+14155569721';
    const button = '+14155569722';
    const chatty = '+14155569723';
    const stopped = await whatsapp.reply(sender.phoneNumberId, stop, '  Stop! ');
    const tapped = await whatsapp.tapButton(sender.phoneNumberId, button, { text: 'Stop promotions' });
    const kept = await whatsapp.reply(sender.phoneNumberId, chatty, "Please don't stop, I love these");
    expect(await listed(stop)).toMatchObject({
      source: 'whatsapp_reply',
      messageId: (await inbound(stopped.id)).id,
      callId: null,
    });
    expect(await listed(button)).toMatchObject({ source: 'whatsapp_reply', messageId: (await inbound(tapped.id)).id });
    await inbound(kept.id);
    expect((await listing(chatty)).status).toBe(404);
    expect((await listing(chatty)).body).toMatchObject({ error: 'not_found' });
  });

  it("the call intelligence's opt-out rule (call x call_intelligence), which keeps an earlier listing's provenance", async () => {
    const phone = '+14155569731';
    const call = await insertAnsweredCall(db, owner, {
      toNumber: phone,
      transcript: [
        { speaker: 'agent', text: 'Hello, this is the shoe shop.', offsetMs: 0 },
        { speaker: 'lead', text: 'Not now. Actually, take me off your list.', offsetMs: 2_000 },
      ],
    });
    await startCallIntelligence(temporal.client, temporal.taskQueue, call.id);
    const done = await withIntelligence(db, call.id);
    expect(done.intelligence).toMatchObject({ optOut: { evidence: 'Not now. Actually, take me off your list.' } });
    expect(await listed(phone)).toMatchObject({ source: 'call_intelligence', callId: call.id });
    // The API's listing of it again changes nothing.
    await api.request('POST', '/do-not-call', { key: owner.key, body: { phones: [phone] } });
    expect(await listed(phone)).toMatchObject({ source: 'call_intelligence', callId: call.id });
  });

  it('the API (api)', async () => {
    const phone = '+14155569741';
    const added = await api.request('POST', '/do-not-call', { key: owner.key, body: { phones: [phone] } });
    expect(await added.json()).toEqual({ added: 1, total: 1 });
    expect(await listed(phone)).toMatchObject({ source: 'api', callId: null, messageId: null });
  });
});

describe('every send path checks the list first', () => {
  /** A number the contact opted out of by WhatsApp: listed as the contact does it. */
  async function optedOutByReply(phone: string) {
    await whatsapp.reply(sender.phoneNumberId, phone, 'BAJA');
    await listed(phone);
    return phone;
  }
  /** The messages sent to the number: the product's record and the provider's. */
  const messagesTo = async (phone: string) => {
    const [recorded] = await db.sql<{ count: number }>(
      `SELECT count(*)::int AS count FROM "WhatsAppMessage" m JOIN "WhatsAppConversation" c ON c.id = m."conversationId"
        WHERE m.direction = 'outbound' AND c."contactE164" = $1`,
      phone,
    );
    return (
      recorded!.count +
      (await providerRecord(db).count('message', `direction = 'outbound' AND "to" = $1`, phone.slice(1)))
    );
  };

  it("a campaign's call (call): never dialed, the lead's result says opted_out", async () => {
    const phone = await optedOutByReply('+14155569752');
    const { leadId, handle } = await pushLeadWithWorkflow(
      api,
      owner.key,
      temporal.client,
      (await campaignOf()).id,
      phone,
    );
    expect(await handle.result()).toMatchObject({ status: 'cancelled', outcome: 'do_not_call', attempts: 1 });
    expect(await db.call.count({ where: { leadId } })).toBe(0);
    expect(await leadResult(leadId)).toMatchObject({ status: 'cancelled', outcome: 'opted_out', calls: [] });
  });

  it('a test call (call): 409 number_on_do_not_call, nothing placed', async () => {
    const phone = await optedOutByReply('+14155569762');
    const before = await db.call.count({ where: { workspaceId: owner.workspaceId } });
    const response = await api.request('POST', '/calls/test', {
      key: owner.key,
      body: { agentId: agent.id, to: phone },
    });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ error: 'number_on_do_not_call' });
    expect(await db.call.count({ where: { workspaceId: owner.workspaceId } })).toBe(before);
  });

  it("a journey's call node (call) and its whatsapp node (whatsapp): neither calls nor messages", async () => {
    const phone = await optedOutByReply('+14155569772');
    const definition = journey(
      [
        { id: 'start', type: 'start' },
        { id: 'call1', type: 'call', data: { agentId: agent.id } },
        {
          id: 'notify',
          type: 'whatsapp',
          data: { templateName: 'optout_notice', language: 'en_US', parameters: ['A-1'] },
        },
        { id: 'end', type: 'end' },
      ],
      [
        ['start', 'call1'],
        ['call1', 'notify'],
        ['notify', 'end'],
      ],
    );
    const { campaign } = await runningJourneyCampaign(db, owner.workspaceId, definition);
    const pushed = await api.request('POST', `/v1/campaigns/${campaign.id}/leads`, {
      key: owner.key,
      body: { idempotencyKey: `journey-${phone}`, lead: { phone } },
    });
    const { leadId } = (await pushed.json()) as { leadId: string };
    const run = await until(
      () => db.journeyRun.findUnique({ where: { id: leadId } }),
      (row) => row?.status === 'completed',
    );
    const variables = run!.variables as Record<string, { outcome?: string; status?: string; attempts?: number }>;
    expect(variables.call1).toMatchObject({ outcome: 'do_not_call' });
    expect(variables.notify).toMatchObject({ status: 'failed' });
    expect(await db.call.count({ where: { leadId } })).toBe(0);
    expect(await messagesTo(phone)).toBe(0);
  });

  it("a WHATSAPP campaign's message (whatsapp): nothing sent, the lead cancelled", async () => {
    const phone = await optedOutByReply('+14155569782');
    const created = await api.request('POST', '/campaigns', {
      key: owner.key,
      body: { name: 'Notices', channel: 'WHATSAPP', acceptsLeadPush: true },
    });
    const campaignId = ((await created.json()) as { id: string }).id;
    const configured = await api.request('PUT', `/whatsapp/campaigns/${campaignId}`, {
      key: owner.key,
      body: {
        senderId: sender.id,
        templateId: template.id,
        variables: { 1: { value: 'A-2' } },
        sendingWindow: { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] },
      },
    });
    expect(configured.status).toBe(200);
    await transitionCampaign(api, owner.key, campaignId, 'start');
    const pushed = await api.request('POST', `/v1/campaigns/${campaignId}/leads`, {
      key: owner.key,
      body: { idempotencyKey: phone, lead: { phone } },
    });
    const { leadId } = (await pushed.json()) as { leadId: string };
    expect(
      await until(
        () => leadResult(leadId),
        (result) => result.status !== 'queued' && result.status !== 'dialing',
      ),
    ).toMatchObject({ status: 'cancelled', message: null });
    expect(await messagesTo(phone)).toBe(0);
  });

  it('an order notification (commerce x whatsapp): skipped, do_not_call', async () => {
    const phone = await optedOutByReply('+14155569792');
    const connection = await db.crmConnection.create({
      data: { workspaceId: owner.workspaceId, kind: 'shopify', shopDomain: 'optout.myshopify.com', secret: 'S' },
    });
    const rules = await api.request('PUT', `/crm/connections/${connection.id}/order-notifications`, {
      key: owner.key,
      body: { rules: [{ templateId: template.id, presetId: 'order_number', enabled: true, delayMinutes: 0 }] },
    });
    expect(rules.status).toBe(200);
    const ruleId = ((await rules.json()) as { rules: Array<{ id: string }> }).rules[0]!.id;
    const order = await insertPaidOrder(db, connection, { customerPhone: phone });
    const handle = await temporal.client.workflow.start('orderNotificationWorkflow', {
      workflowId: orderNotificationWorkflowId(ruleId, order.id),
      taskQueue: temporal.taskQueue,
      args: [{ ruleId, orderId: order.id }],
    });
    expect((await handle.result()) as OrderNotificationResult).toEqual({ status: 'skipped', reason: 'do_not_call' });
    expect(await messagesTo(phone)).toBe(0);
  });

  it('POST /whatsapp/messages (whatsapp): 409 number_on_do_not_call for a template and for text, nothing recorded', async () => {
    const phone = await optedOutByReply('+14155569802');
    for (const body of [
      { senderId: sender.id, to: phone, template: { id: template.id, variables: ['A-3'] } },
      { senderId: sender.id, to: phone, text: 'Sorry to see you go.' },
    ]) {
      const response = await api.request('POST', '/whatsapp/messages', { key: owner.key, body });
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({ error: 'number_on_do_not_call' });
    }
    expect(await messagesTo(phone)).toBe(0);
    // Another number is sent to as before.
    const other = await api.request('POST', '/whatsapp/messages', {
      key: owner.key,
      body: { senderId: sender.id, to: '+14155569811', template: { id: template.id, variables: ['A-4'] } },
    });
    expect(other.status).toBe(202);
  });
});

describe('a lead that opts out mid-ladder', () => {
  // A rung hours away: the lead ends only if the listing tells its ladder (docs/features/dial-ladder.md#an-opt-out-ends-the-wait).
  const HOURS_AWAY = {
    rungs: [{ delaySeconds: 0 }, { delaySeconds: 6 * 3_600 }, { delaySeconds: 6 * 3_600 }],
    outcomes: DEFAULT_DIAL_LADDER.outcomes,
  };
  const twilioTwin = twilioClientAt(twin.baseUrl, {
    accountSid: TWILIO_TWIN_ACCOUNT_SID,
    authToken: TWILIO_TWIN_AUTH_TOKEN,
  });

  /** A lead of a number nobody answers (...6), after its first call, waiting hours for its next rung. */
  async function waitingForItsNextRung(phone: string) {
    const campaign = await campaignOf(HOURS_AWAY);
    const pushed = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaign.id, phone);
    await until(
      () => db.lead.findUniqueOrThrow({ where: { id: pushed.leadId } }),
      (lead) => lead.waitingFor === 'rung',
    );
    return pushed;
  }

  /** The ladder ended at once: no further attempt, at the product or at the twin; its result says opted_out. */
  async function endedOptedOut({ leadId, handle }: Awaited<ReturnType<typeof waitingForItsNextRung>>, phone: string) {
    // Its row says cancelled once the ladder has ended it (not when its rung, hours away, comes due).
    await until(
      () => db.lead.findUniqueOrThrow({ where: { id: leadId } }),
      (lead) => lead.status === 'cancelled',
    );
    expect(await handle.result()).toMatchObject({ status: 'cancelled', outcome: 'do_not_call' });
    const calls = await db.call.findMany({ where: { leadId } });
    expect(calls.map((call) => call.outcome)).toEqual(['no_answer']);
    expect(await twilioTwin.calls.list({ to: phone })).toHaveLength(1);
    expect(await leadResult(leadId)).toMatchObject({
      status: 'cancelled',
      outcome: 'opted_out',
      attempts: 1,
      waiting: null,
    });
  }

  it('by a WhatsApp STOP between two attempts: it ends at once, no further attempt, its result says opted_out', async () => {
    const phone = '+14155569826';
    const lead = await waitingForItsNextRung(phone);
    await whatsapp.reply(sender.phoneNumberId, phone, 'stop');
    expect(await listed(phone)).toMatchObject({ source: 'whatsapp_reply' });
    await endedOptedOut(lead, phone);
  });

  it("by the call intelligence of another campaign's call to its number: it ends at once", async () => {
    const phone = '+14155569846';
    const lead = await waitingForItsNextRung(phone);
    const other = await insertAnsweredCall(db, owner, {
      toNumber: phone,
      transcript: [
        { speaker: 'agent', text: 'Hello, this is the shoe shop.', offsetMs: 0 },
        { speaker: 'lead', text: 'Please take me off your list.', offsetMs: 2_000 },
      ],
    });
    await startCallIntelligence(temporal.client, temporal.taskQueue, other.id);
    expect(await listed(phone)).toMatchObject({ source: 'call_intelligence', callId: other.id });
    await endedOptedOut(lead, phone);
  });

  it('by POST /do-not-call while its next rung is hours away: it ends at once, and the twin gets no further call', async () => {
    const phone = '+14155569836';
    const lead = await waitingForItsNextRung(phone);
    const added = await api.request('POST', '/do-not-call', { key: owner.key, body: { phones: [phone] } });
    expect(added.status).toBe(200);
    expect(await listed(phone)).toMatchObject({ source: 'api' });
    await endedOptedOut(lead, phone);
  });
});
