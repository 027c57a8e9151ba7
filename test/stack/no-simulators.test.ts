// A production-mode stack (SIMULATORS disabled, the production default: docs/configuration.md#simulators), on the
// real servers: the API refuses, at the request that would use it, a caller number bound to no carrier connection and a
// WhatsApp sender bound to no Meta connection, naming it; the worker never dials or sends through a simulator (none
// runs here). Numbers and senders bound to a connection go on as before, through the Twilio twin and the Meta twin.
import { describe, expect, it } from 'vitest';
import { CarrierRefusedSetupError } from '../../lib/calls/carrier';
import { createUnboundCarrier, UNBOUND_CARRIER } from '../../lib/carriers/unbound-carrier';
import { createConnectionCarrier } from '../../lib/carriers/connection-carrier';
import { parseConfig } from '../../lib/config';
import { grantCredits } from '../../lib/door/workspace-admin';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { createCarrier, createWhatsAppProvider, createWhatsAppSender } from '../../lib/providers';
import { WhatsAppProviderError } from '../../lib/whatsapp/provider';
import { connectWhatsAppSender } from '../../lib/whatsapp/senders';
import {
  createUnboundWhatsAppProvider,
  NO_WHATSAPP_CONNECTION_CODE,
  UNBOUND_WHATSAPP_PROVIDER,
} from '../../lib/whatsapp/unbound-provider';
import { insertAgent } from '../support/agents';
import { connectCallers, TWILIO_TWIN_ACCOUNT } from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { TEST_KEYRING } from '../support/keyring';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { pushLeadWithWorkflow } from '../support/lead-workflows';
import { connectTwinSender, startMetaTwinStack, twinTemplate } from '../support/meta-twin';
import { startTestWorker, uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { startTestTwilioTwin } from '../support/twilio-twin';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue('no-simulators'));
// The API as production runs it: simulators disabled, and the WhatsApp provider's fallback refusing (lib/providers.ts).
const stack = await startMetaTwinStack(db, url, temporal, {
  fallback: createUnboundWhatsAppProvider(),
  api: { simulators: 'disabled', carrierKeyring: TEST_KEYRING },
});
const { api } = stack;
const twilio = await startTestTwilioTwin(db, { timeScale: 0.02 });
// The worker as production builds it: the connection carrier with the refusing fallback (lib/providers.ts createCarrier).
await startTestWorker(temporal.taskQueue, {
  db,
  calls: createConnectionCarrier({
    db,
    keyring: TEST_KEYRING,
    fallback: createUnboundCarrier(),
    publicBaseUrl: api.baseUrl,
  }),
  statusCallbackBaseUrl: api.baseUrl,
  whatsappProvider: stack.provider,
});

const SCOPES = [
  'campaigns.edit',
  'campaigns.view',
  'calls.test',
  'calls.view',
  'whatsapp.send',
  'whatsapp.edit',
  'whatsapp.view',
];
let numbers = 0;
const nextNumber = () => `+1415558${String(1000 + numbers++).padStart(4, '0')}`;

/** A workspace with credits, an agent, a number bound to a Twilio twin connection and one bound to none. */
async function setUp() {
  const owner = await createTestWorkspace(db, { scopes: SCOPES });
  await grantCredits(db, owner.workspaceId, 100);
  const agent = await insertAgent(db, owner.workspaceId);
  // Assigned first, so that it is the workspace's first voice number.
  const unbound = nextNumber();
  await assignPhoneNumber(db, owner.workspaceId, unbound);
  const bound = nextNumber();
  const connection = await connectCallers(
    db,
    TEST_KEYRING,
    { workspaceId: owner.workspaceId, provider: 'twilio-twin', baseUrl: twilio.baseUrl, account: TWILIO_TWIN_ACCOUNT },
    bound,
  );
  return { owner, agent, unbound, bound, connection };
}

const json = async (response: Response) => (await response.json()) as Record<string, unknown>;

describe('calls with simulators disabled', () => {
  it('refuses an unbound caller number at campaign create and edit, naming it; a bound one is taken', async () => {
    const { owner, unbound, bound } = await setUp();
    const create = (callerNumbers: string[]) =>
      api.request('POST', '/campaigns', {
        key: owner.key,
        body: { name: 'Production', kind: 'CLASSIC', channel: 'VOICE', callerNumbers },
      });
    const refused = await create([bound, unbound]);
    expect(refused.status).toBe(409);
    expect(await json(refused)).toEqual({
      error: 'no_carrier_connection',
      e164: unbound,
      detail: expect.stringContaining(`${unbound} is bound to no carrier connection`),
    });
    const created = await create([bound]);
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const edited = await api.request('PATCH', `/campaigns/${id}`, {
      key: owner.key,
      body: { callerNumbers: [unbound] },
    });
    expect(edited.status).toBe(409);
    expect(await json(edited)).toMatchObject({ error: 'no_carrier_connection', e164: unbound });
    const stored = await db.campaign.findUniqueOrThrow({ where: { id } });
    expect(stored.callerNumbers).toEqual([bound]);
  });

  it('refuses to start a campaign whose caller number is unbound, or a CLASSIC one without any', async () => {
    const { owner, agent, unbound } = await setUp();
    // As a campaign set while simulators were enabled would be.
    const withUnbound = await db.campaign.create({
      data: { workspaceId: owner.workspaceId, name: 'Old', callerNumbers: [unbound], agentId: agent.id },
    });
    const start = (id: string) => api.request('POST', `/campaigns/${id}/start`, { key: owner.key, body: {} });
    const refused = await start(withUnbound.id);
    expect(refused.status).toBe(409);
    expect(await json(refused)).toMatchObject({ error: 'no_carrier_connection', e164: unbound });
    const withNone = await db.campaign.create({
      data: { workspaceId: owner.workspaceId, name: 'None', agentId: agent.id },
    });
    const none = await start(withNone.id);
    expect(none.status).toBe(409);
    expect(await json(none)).toMatchObject({ error: 'no_carrier_connection', e164: null });
    for (const id of [withUnbound.id, withNone.id])
      expect((await db.campaign.findUniqueOrThrow({ where: { id } })).status).toBe('DRAFT');
  });

  it('calls through the bound connection; a number unbound since the start pauses the campaign, never simulated', async () => {
    const { owner, agent, bound } = await setUp();
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Bound',
        acceptsLeadPush: true,
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
        callerNumbers: [bound],
        agentId: agent.id,
      },
    });
    await transitionCampaign(api, owner.key, campaign.id, 'start');
    const first = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaign.id, '+14155550142');
    await first.handle.result();
    const placed = await db.call.findFirstOrThrow({ where: { leadId: first.leadId } });
    expect(placed).toMatchObject({ provider: 'twilio-twin', fromNumber: bound, status: 'ended' });
    // A twin's connection is a connection: its calls are never marked simulated (docs/configuration.md#simulators).
    const view = await api.request('GET', `/calls/${placed.id}`, { key: owner.key });
    expect(await json(view)).toMatchObject({ provider: 'twilio-twin', simulated: false });
    const result = await api.request('GET', `/v1/results/${first.leadId}`, { key: owner.key });
    expect((await json(result)).calls).toEqual([expect.objectContaining({ simulated: false })]);

    // Unbound behind the API's back (the API itself never unbinds a number): the worker's dial refuses it.
    await db.phoneNumber.update({ where: { e164: bound }, data: { carrierConnectionId: null } });
    const second = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaign.id, '+14155550143');
    const paused = await until(
      () => db.campaign.findUniqueOrThrow({ where: { id: campaign.id } }),
      (row) => row.status === 'PAUSED',
    );
    expect(paused.statusReason).toMatchObject({
      code: 'no_carrier_connection',
      detail: expect.stringContaining(bound),
    });
    // Withdrawn, never handed to any carrier: the lead keeps its attempt for after the resume.
    await until(
      () => db.call.count({ where: { leadId: second.leadId } }),
      (count) => count === 0,
    );
    expect(await db.call.count({ where: { provider: { in: ['simulated', UNBOUND_CARRIER] } } })).toBe(0);
  });

  it('refuses a test call from an unbound number, or with none bound; without from, takes the bound one', async () => {
    const { owner, agent, unbound, bound } = await setUp();
    const test = (body: Record<string, unknown>) =>
      api.request('POST', '/calls/test', { key: owner.key, body: { agentId: agent.id, to: '+14155550144', ...body } });
    const refused = await test({ from: unbound });
    expect(refused.status).toBe(409);
    expect(await json(refused)).toMatchObject({ error: 'no_carrier_connection', e164: unbound });

    const placed = await test({});
    expect(placed.status).toBe(202);
    const { callId } = (await placed.json()) as { callId: string };
    const call = await until(
      () => db.call.findUniqueOrThrow({ where: { id: callId } }),
      (row) => row.status === 'ended',
    );
    expect(call).toMatchObject({ provider: 'twilio-twin', fromNumber: bound });

    const lonely = await createTestWorkspace(db, { scopes: SCOPES });
    await grantCredits(db, lonely.workspaceId, 100);
    const lonelyAgent = await insertAgent(db, lonely.workspaceId);
    await assignPhoneNumber(db, lonely.workspaceId, nextNumber());
    const none = await api.request('POST', '/calls/test', {
      key: lonely.key,
      body: { agentId: lonelyAgent.id, to: '+14155550145' },
    });
    expect(none.status).toBe(409);
    expect(await json(none)).toMatchObject({ error: 'no_carrier_connection', e164: null });
    expect(await db.call.count({ where: { workspaceId: lonely.workspaceId } })).toBe(0);
    // Refused before any hold: nothing held or charged.
    expect(await db.creditLedgerEntry.count({ where: { workspaceId: lonely.workspaceId, kind: 'hold' } })).toBe(0);
  });
});

describe('WhatsApp with simulators disabled', () => {
  async function whatsAppSetUp() {
    const { owner } = await setUp();
    // The bound sender first: its Business Account is the one templates are submitted to.
    const { sender: boundSender } = await connectTwinSender(db, stack, owner, nextNumber());
    const template = await twinTemplate(api, owner, { name: 'order_ready', body: 'Hi {{1}}', examples: ['Ada'] });
    expect(template).toMatchObject({ status: 201, body: { status: 'APPROVED' } });
    const { id: unboundId } = await connectWhatsAppSender(db, {
      workspaceId: owner.workspaceId,
      e164: nextNumber(),
      provider: 'simulated',
    });
    const unboundSender = await db.whatsAppSender.findUniqueOrThrow({ where: { id: unboundId } });
    const campaign = await db.campaign.create({
      data: { workspaceId: owner.workspaceId, name: 'Messages', channel: 'WHATSAPP', callingWindow: ALWAYS_OPEN },
    });
    return { owner, unboundSender, boundSender, templateId: template.body.id, campaign };
  }

  it('refuses a send from an unbound sender, naming it; a bound sender sends through its connection', async () => {
    const { owner, unboundSender, boundSender, templateId } = await whatsAppSetUp();
    const send = (senderId: string) =>
      api.request('POST', '/whatsapp/messages', {
        key: owner.key,
        body: { senderId, to: '+14155550146', template: { id: templateId, variables: ['Ada'] } },
      });
    const refused = await send(unboundSender.id);
    expect(refused.status).toBe(409);
    expect(await json(refused)).toEqual({
      error: 'no_whatsapp_connection',
      senderId: unboundSender.id,
      e164: unboundSender.e164,
      detail: expect.stringContaining(unboundSender.e164),
    });
    expect(await db.whatsAppMessage.count({ where: { senderId: unboundSender.id } })).toBe(0);

    const accepted = await send(boundSender.id);
    expect(accepted.status).toBe(202);
    const { message } = (await accepted.json()) as { message: { id: string; simulated: boolean } };
    expect(message.simulated).toBe(false);
    const sent = await until(
      () => db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } }),
      (row) => row.status === 'delivered' || row.status === 'read' || row.status === 'failed',
    );
    expect(sent.status).not.toBe('failed');
  });

  it('refuses a template of a Business Account only an unbound sender has, naming the sender', async () => {
    const owner = await createTestWorkspace(db, { scopes: SCOPES });
    const { id } = await connectWhatsAppSender(db, {
      workspaceId: owner.workspaceId,
      e164: nextNumber(),
      provider: 'simulated',
    });
    const created = await api.request('POST', '/whatsapp/templates', {
      key: owner.key,
      body: { name: 'unbound_hello', language: 'en_US', category: 'utility', body: 'Hello' },
    });
    expect(created.status).toBe(409);
    expect(await json(created)).toMatchObject({ error: 'no_whatsapp_connection', senderId: id });
    expect(await db.whatsAppTemplate.count({ where: { workspaceId: owner.workspaceId } })).toBe(0);
  });

  it("refuses an unbound sender as a campaign's messaging and at the campaign's start", async () => {
    const { owner, unboundSender, boundSender, templateId, campaign } = await whatsAppSetUp();
    const put = (senderId: string) =>
      api.request('PUT', `/whatsapp/campaigns/${campaign.id}`, {
        key: owner.key,
        body: { senderId, templateId, variables: { '1': { field: 'name' } }, sendingWindow: ALWAYS_OPEN },
      });
    const refused = await put(unboundSender.id);
    expect(refused.status).toBe(409);
    expect(await json(refused)).toMatchObject({ error: 'no_whatsapp_connection', senderId: unboundSender.id });
    expect((await put(boundSender.id)).status).toBe(200);

    // Its sender unbound since (as one set while simulators were enabled would be): the start is refused.
    await db.whatsAppSender.update({ where: { id: boundSender.id }, data: { connectionId: null } });
    const start = await api.request('POST', `/campaigns/${campaign.id}/start`, { key: owner.key, body: {} });
    expect(start.status).toBe(409);
    expect(await json(start)).toMatchObject({ error: 'no_whatsapp_connection', senderId: boundSender.id });
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).status).toBe('DRAFT');
  });
});

describe('the providers a production worker and API are built with (lib/providers.ts)', () => {
  const production = parseConfig({ DATABASE_URL: url, SIMULATORS: undefined });

  it('is the default: an unset SIMULATORS is disabled', () => {
    expect(production.SIMULATORS).toBe('disabled');
  });

  it('refuses the dial of a number bound to no connection as the setup, and finds nothing of it', async () => {
    const carrier = createCarrier(production, db);
    const dialed = carrier.dial({
      attemptId: 'no-simulators:1',
      from: '+14155550147',
      to: '+14155550148',
      agent: null,
      lead: { name: null, fields: {} },
      statusCallbackUrl: `${api.baseUrl}/telephony/simulated/events`,
    });
    await expect(dialed).rejects.toBeInstanceOf(CarrierRefusedSetupError);
    await expect(dialed).rejects.toMatchObject({ refusal: 'no_carrier_connection', number: '+14155550147' });
    await expect(carrier.lookup({ attemptId: 'no-simulators:1' })).resolves.toBeNull();
  });

  it('refuses for good the send of a sender bound to no Meta connection', async () => {
    const { id } = await connectWhatsAppSender(db, {
      workspaceId: (await createTestWorkspace(db)).workspaceId,
      e164: nextNumber(),
      provider: 'simulated',
    });
    const { phoneNumberId } = await db.whatsAppSender.findUniqueOrThrow({ where: { id } });
    const provider = createWhatsAppProvider(production, db);
    const sent = provider.sendMessage({
      phoneNumberId,
      to: '+14155550149',
      callbackData: 'no-simulators',
      message: { type: 'text', text: 'Hello' },
    });
    await expect(sent).rejects.toBeInstanceOf(WhatsAppProviderError);
    await expect(sent).rejects.toMatchObject({ code: NO_WHATSAPP_CONNECTION_CODE, httpStatus: 409 });
  });

  it('answers failed, never simulated, the message node of a journey run older than its provider', async () => {
    const sender = createWhatsAppSender(production, db);
    expect(sender.name).toBe(UNBOUND_WHATSAPP_PROVIDER);
    const sent = await sender.sendTemplate({
      messageKey: 'old-run:1',
      workspaceId: (await createTestWorkspace(db)).workspaceId,
      to: '+14155550150',
      templateName: 'hello',
      language: 'en_US',
      parameters: [],
    });
    expect(sent.status).toBe('failed');
  });
});
