// One conversation everywhere (issue 42, item 1; docs/features/agents.md#conversation-engine): an agent created with
// the API's defaults, on an API with the product's defaults (no CONVERSATION_ENGINE, no model), converses on every
// answered call through the dialogue engine: the script engine over Twilio's ConversationRelay and over Telnyx's, as in
// a web test session. It answers a question from the agent's knowledge and goes back to its script, books a callback,
// and offers a colleague for what it cannot answer and transfers the call. Real servers: the API, a worker, Temporal,
// PostgreSQL, and the Twilio and Telnyx twins as the carriers and the callers.
import { describe, expect, it } from 'vitest';
import type { Transcript } from '../../lib/calls/transcript';
import { startCarrierCallStack, startedAgentCampaign, withIntelligence } from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { pushLeadWithWorkflow } from '../support/lead-workflows';
import { scriptTelnyxPersona, startTestTelnyxTwin, telnyxTwinLog } from '../support/telnyx-twin';
import { useTemporalClient } from '../support/temporal';
import { scriptPersona, startTestTwilioTwin, twinLog } from '../support/twilio-twin';
import { until } from '../support/until';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const twilioTwin = await startTestTwilioTwin(db, { timeScale: 0.02 });
const telnyxTwin = await startTestTelnyxTwin(db, { timeScale: 0.04 });
// The product's defaults: no conversationEngine, no dialogue settings.
const { api, owner, connectTwin } = await startCarrierCallStack(db, { url, temporal });
const TWILIO_CALLER = '+14155569601';
const TELNYX_CALLER = '+14155569701';
await connectTwin('twilio-twin', twilioTwin.baseUrl, TWILIO_CALLER);
await connectTwin('telnyx-twin', telnyxTwin.baseUrl, TELNYX_CALLER);

const QUESTIONS = ['What colour would you like for the shoes?', 'How many pairs would you like?'];
const OPENING = 'Hello Ana, this is the shoe shop.';
const CLOSING = 'Thank you, goodbye.';
const TRANSFER_NUMBER = '+14155550100';
const DELIVERY =
  'We ship from Lisbon. Orders to Canada arrive within five working days, shipped by courier.\n\n' +
  'Tracking is sent by email.';

/**
 * The shoe shop's agent as POST /agents makes it with its defaults (and `settings`), with a transfer number and a
 * delivery document.
 */
async function shoeShopAgent(settings: Record<string, unknown> = {}) {
  const created = await api.request('POST', '/agents', {
    key: owner.key,
    body: {
      name: 'Shoes',
      language: 'en-US',
      voiceId: 'espeak-ng/en-us',
      script: { openingLine: 'Hello {{name}}, this is the shoe shop.', questions: QUESTIONS, closing: CLOSING },
      transferNumber: TRANSFER_NUMBER,
      ...settings,
    },
  });
  const agent = (await created.json()) as { id: string; conversationEngine: string };
  expect(created.status, JSON.stringify(agent)).toBe(201);
  expect(agent.conversationEngine).toBe(settings.conversationEngine ?? 'relay');
  const base = await db.knowledgeBase.create({ data: { workspaceId: owner.workspaceId, name: 'Shop' } });
  const document = await db.knowledgeDocument.create({
    data: {
      workspaceId: owner.workspaceId,
      knowledgeBaseId: base.id,
      title: 'Delivery',
      format: 'text',
      content: DELIVERY,
      charCount: DELIVERY.length,
    },
  });
  await db.agentDocument.create({ data: { agentId: agent.id, documentId: document.id } });
  return agent;
}

const agent = await shoeShopAgent();
/** An agent kept on the script walk (its conversationEngine gather), on the same deployment. */
const walkingAgent = await shoeShopAgent({ conversationEngine: 'gather' });

const lines = (transcript: Transcript) => transcript.map((turn) => `${turn.speaker}: ${turn.text}`);

const CARRIERS = [
  {
    name: 'Twilio',
    caller: TWILIO_CALLER,
    prefix: '+1415556961',
    persona: (number: string, answers: string[]) => scriptPersona(twilioTwin.baseUrl, { number, answers }),
    /** The numbers the twin dialed on to (a transfer), with how each leg went. */
    transfers: async (providerCallId: string) =>
      (await twinLog(twilioTwin.baseUrl, providerCallId)).log
        .filter((entry) => entry.kind === 'dial')
        .map((entry) => entry.text),
    transferred: [TRANSFER_NUMBER, `${TRANSFER_NUMBER}: completed`],
    /** Whether the call was handed to ConversationRelay (TwiML's <Connect>). */
    relayed: async (providerCallId: string) =>
      (await twinLog(twilioTwin.baseUrl, providerCallId)).log.some((entry) => entry.kind === 'connect'),
  },
  {
    name: 'Telnyx',
    caller: TELNYX_CALLER,
    prefix: '+1415556971',
    persona: (number: string, answers: string[]) => scriptTelnyxPersona(telnyxTwin.baseUrl, { number, answers }),
    transfers: async (providerCallId: string) =>
      (await telnyxTwinLog(telnyxTwin.baseUrl, providerCallId)).log
        .filter((entry) => entry.kind === ('transfer' as string))
        .map((entry) => entry.text),
    transferred: [`dialing ${TRANSFER_NUMBER}`, `answered by ${TRANSFER_NUMBER}; bridged`],
    /** Whether the call was handed to ConversationRelay (conversation_relay_start). */
    relayed: async (providerCallId: string) =>
      (await telnyxTwinLog(telnyxTwin.baseUrl, providerCallId)).log.some((entry) => entry.kind === ('relay' as string)),
  },
];

/** A campaign of each agent on each carrier's caller number, by carrier and agent id. */
const campaignIds = new Map<string, string>();
for (const carrier of CARRIERS)
  for (const { id } of [agent, walkingAgent]) {
    const campaign = await startedAgentCampaign(db, api, owner, {
      name: `Default conversation on ${carrier.name}`,
      caller: carrier.caller,
      agentId: id,
    });
    campaignIds.set(`${carrier.name} ${id}`, campaign.id);
  }

describe.each(CARRIERS)('a default-configured agent on $name', (carrier) => {
  /** Ana at `phone` pushed, and her first call once it has ended and its intelligence is stored. */
  async function callAna(phone: string, agentId = agent.id) {
    const campaignId = campaignIds.get(`${carrier.name} ${agentId}`)!;
    const { leadId, handle } = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaignId, phone, {
      name: 'Ana',
    });
    const ended = await until(
      () => db.call.findFirst({ where: { leadId, status: 'ended' } }),
      (found) => found !== null,
      30_000,
    );
    const call = await withIntelligence(db, ended!.id);
    return { call, transcript: call.transcript as Transcript, workflow: handle };
  }

  it("answers a question from the agent's knowledge, then goes back to its script", async () => {
    const phone = `${carrier.prefix}1`;
    await carrier.persona(phone, ['How long does delivery to Canada take?', 'Navy, please.', 'Two pairs.']);
    const { call, transcript, workflow } = await callAna(phone);
    expect(await workflow.result()).toMatchObject({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(call.outcome).toBe('answered');
    expect(lines(transcript)).toEqual([
      `agent: ${OPENING}`,
      `agent: ${QUESTIONS[0]}`,
      'lead: How long does delivery to Canada take?',
      'agent: Orders to Canada arrive within five working days, shipped by courier. Tracking is sent by email.',
      `agent: ${QUESTIONS[0]}`,
      'lead: Navy, please.',
      `agent: ${QUESTIONS[1]}`,
      'lead: Two pairs.',
      `agent: ${CLOSING}`,
    ]);
    expect(await carrier.relayed(call.providerCallId!)).toBe(true);
  });

  it('books the callback the lead asks for', async () => {
    const phone = `${carrier.prefix}2`;
    await carrier.persona(phone, ['Call me back tomorrow at 3 pm.']);
    const { call, transcript, workflow } = await callAna(phone);
    // The lead then waits for its callback tomorrow: the call is what counts.
    await workflow.terminate('the test is over');
    expect(call.outcome).toBe('callback_requested');
    expect(call.callbackAt).not.toBeNull();
    expect(transcript.find((turn) => turn.speaker === 'tool')!.tool).toMatchObject({
      name: 'schedule_callback',
      arguments: { when: 'Call me back tomorrow at 3 pm.' },
      ok: true,
    });
    expect(transcript.at(-1)!.text).toMatch(/^Of course\. We'll call you back on .*3:00.PM\. Goodbye\.$/);
  });

  it('offers a colleague for what it cannot answer, and transfers the call when the lead says yes', async () => {
    const phone = `${carrier.prefix}3`;
    await carrier.persona(phone, ['What does a pair cost?', 'Yes, please.']);
    const { call, transcript, workflow } = await callAna(phone);
    expect(await workflow.result()).toMatchObject({ status: 'completed', outcome: 'transferred', attempts: 1 });
    expect(lines(transcript)).toEqual([
      `agent: ${OPENING}`,
      `agent: ${QUESTIONS[0]}`,
      'lead: What does a pair cost?',
      "agent: I'm sorry, I don't have that information.",
      'agent: Would you like me to put you through to a colleague?',
      'lead: Yes, please.',
      'tool: transfer_to_human',
      'agent: Of course, let me put you through to a colleague. One moment, please.',
    ]);
    expect(await carrier.transfers(call.providerCallId!)).toEqual(carrier.transferred);
  });

  it("walks the script on the carrier's own speech recognition for an agent that asks for gather", async () => {
    const phone = `${carrier.prefix}4`;
    await carrier.persona(phone, ['Navy, please.', 'Two pairs.']);
    const { call, transcript, workflow } = await callAna(phone, walkingAgent.id);
    expect(await workflow.result()).toMatchObject({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(lines(transcript)).toEqual([
      `agent: ${OPENING}`,
      `agent: ${QUESTIONS[0]}`,
      'lead: Navy, please.',
      `agent: ${QUESTIONS[1]}`,
      'lead: Two pairs.',
      `agent: ${CLOSING}`,
    ]);
    expect(await carrier.relayed(call.providerCallId!)).toBe(false);
    // The carrier's recogniser's confidence, which ConversationRelay does not send.
    expect(transcript.filter((turn) => turn.speaker === 'lead').every((turn) => turn.confidence != null)).toBe(true);
  });
});
