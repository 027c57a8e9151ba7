// What the Twilio twin's callers do to a ConversationRelay conversation (docs/features/conversation/relay.md): speak
// over the agent, stay silent, hang up halfway; and the same call held by a model (the OpenAI twin) with the agent's
// knowledge and the tools. Real servers: the API, a worker, Temporal, PostgreSQL, the Twilio and OpenAI twins.
import { describe, expect, it } from 'vitest';
import { createConnectionCarrier } from '../../lib/carriers/connection-carrier';
import { connectCarrier } from '../../lib/carrier-connections/connections';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import type { Transcript } from '../../lib/calls/transcript';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { startTestApi } from '../support/api';
import { withIntelligence } from '../support/carrier-calls';
import { startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { pushLeadWithWorkflow } from '../support/lead-workflows';
import { startOpenAiTwin, twinDialogue } from '../support/openai-twin';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { scriptPersona, startTestTwilioTwin, twilioTwinRecord, twinLog } from '../support/twilio-twin';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { transitionCampaign } from '../support/campaign-transition';
import { functionDefinitionSchema } from '../../lib/functions/function-definition';
import { bindFunction, createFunction } from '../../lib/functions/functions';
import { idempotencyKeyOf } from '../../lib/functions/invoke-function';
import { verifyFunctionRequest } from '../support/function-requests';
import { startReceiver } from '../support/http-receiver';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const keyring = keyringSchema.parse(newKeyringEntry('k1'));
const twin = await startTestTwilioTwin(db, {
  timeScale: 0.02,
  accounts: [{ sid: TWILIO_TWIN_ACCOUNT_SID, authToken: TWILIO_TWIN_AUTH_TOKEN }],
});
const model = await startOpenAiTwin();
const simulated = await startTestCarrier(db);
const api = await startTestApi({
  db,
  url,
  temporal,
  carrierKeyring: keyring,
  conversationEngine: 'relay',
  relaySilenceMs: 300,
  dialogue: twinDialogue(model.baseURL),
});
await startTestWorker(temporal.taskQueue, {
  db,
  calls: createConnectionCarrier({ db, keyring, fallback: simulated.client, publicBaseUrl: api.baseUrl }),
  statusCallbackBaseUrl: api.baseUrl,
});

const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view', 'agents.edit'] });
const connection = await connectCarrier(db, keyring, {
  workspaceId: owner.workspaceId,
  provider: 'twilio-twin',
  baseUrl: twin.baseUrl,
  account: { family: 'twilio', accountSid: TWILIO_TWIN_ACCOUNT_SID, secrets: { authToken: TWILIO_TWIN_AUTH_TOKEN } },
});
const caller = '+14155569501';
await assignPhoneNumber(db, owner.workspaceId, caller, undefined, connection.id);

const QUESTIONS = ['What colour would you like for the shoes today?', 'How many pairs would you like?'];
const OPENING = 'Hello Ana, this is the shoe shop.';

async function campaignWith(agent: { instructions?: string; documents?: { title: string; content: string }[] } = {}) {
  const created = await db.agent.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Shoes',
      language: 'en-US',
      voiceId: 'espeak-ng/en-us',
      script: { openingLine: 'Hello {{name}}, this is the shoe shop.', questions: QUESTIONS, closing: 'Goodbye.' },
      instructions: agent.instructions ?? null,
    },
  });
  if (agent.documents) {
    const base = await db.knowledgeBase.create({ data: { workspaceId: owner.workspaceId, name: 'Shop' } });
    for (const document of agent.documents) {
      const row = await db.knowledgeDocument.create({
        data: {
          workspaceId: owner.workspaceId,
          knowledgeBaseId: base.id,
          format: 'text',
          charCount: document.content.length,
          ...document,
        },
      });
      await db.agentDocument.create({ data: { agentId: created.id, documentId: row.id } });
    }
  }
  const campaign = await db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Personas',
      acceptsLeadPush: true,
      dialLadder: SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
      callerNumbers: [caller],
      agentId: created.id,
    },
  });
  await transitionCampaign(api, owner.key, campaign.id, 'start');
  return campaign;
}

/** Ana's lead pushed through the API, with its workflow once it exists. */
async function pushAna(campaignId: string, phone: string) {
  const { leadId, handle } = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaignId, phone, {
    name: 'Ana',
  });
  return { leadId, workflow: handle };
}

async function callAna(campaignId: string, phone: string) {
  const { leadId, workflow } = await pushAna(campaignId, phone);
  const result = await workflow.result();
  const calls = await db.call.findMany({ where: { leadId } });
  expect(calls).toHaveLength(1);
  const call = await withIntelligence(db, calls[0]!.id);
  return { result, call, transcript: call.transcript as Transcript };
}

const lines = (transcript: Transcript) => transcript.map((turn) => `${turn.speaker}: ${turn.text}`);

describe('callers on a ConversationRelay call', () => {
  it('a caller who speaks over the agent: the agent turn is trimmed to what was heard before the interruption', async () => {
    const phone = '+14155569511';
    const campaign = await campaignWith();
    // Speaks over question 1 halfway through it, then answers it and the next.
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['Navy.', 'Two.'], relayInterruptsAt: 0 });
    const { result, transcript } = await callAna(campaign.id, phone);
    expect(result).toMatchObject({ outcome: 'answered' });
    const heard = QUESTIONS[0]!.split(' ').slice(0, 4).join(' ');
    expect(lines(transcript)).toEqual([
      `agent: ${OPENING}`,
      `agent: ${heard}`,
      'lead: Navy.',
      `agent: ${QUESTIONS[1]}`,
      'lead: Two.',
      'agent: Goodbye.',
    ]);
  });

  it('a number of the personas range plays its caller without a script: +1 415 555 0720 says "stop calling me"', async () => {
    const campaign = await campaignWith();
    const { result, transcript } = await callAna(campaign.id, '+14155550720');
    expect(result).toMatchObject({ outcome: 'opted_out', attempts: 1 });
    expect(lines(transcript)).toContain('lead: Please stop calling me.');
  });

  it('a silent caller: asked again once, then the agent says goodbye and the call ends answered, once', async () => {
    const phone = '+14155569512';
    const campaign = await campaignWith();
    await scriptPersona(twin.baseUrl, { number: phone, answers: [null, null, null] });
    const { result, call, transcript } = await callAna(campaign.id, phone);
    expect(result).toMatchObject({ outcome: 'answered', attempts: 1 });
    expect(lines(transcript)).toEqual([
      `agent: ${OPENING}`,
      `agent: ${QUESTIONS[0]}`,
      'lead: (no answer)',
      'agent: Are you still there?',
      `agent: ${QUESTIONS[0]}`,
      'lead: (no answer)',
      "agent: It seems this isn't a good time. We'll try another time. Goodbye.",
    ]);
    const log = await twinLog(twin.baseUrl, call.providerCallId!);
    expect(log.status).toBe('completed');
  });

  it('a caller who hangs up halfway: the call ends once, answered, with the transcript as far as it went', async () => {
    const phone = '+14155569513';
    const campaign = await campaignWith();
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['Red.'], relayHangsUpAt: 1 });
    const { result, call, transcript } = await callAna(campaign.id, phone);
    expect(result).toMatchObject({ outcome: 'answered', attempts: 1 });
    expect(lines(transcript)).toEqual([
      `agent: ${OPENING}`,
      `agent: ${QUESTIONS[0]}`,
      'lead: Red.',
      `agent: ${QUESTIONS[1]}`,
    ]);
    const log = await twinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === 'hangup').map((entry) => entry.speaker)).toEqual(['callee']);
    expect(await twilioTwinRecord(db).count('"to" = $1', phone)).toBe(1);
  });

  it("an agent with instructions is held by the model: it answers from the agent's documents and books a callback with its tool", async () => {
    const phone = '+14155569514';
    const campaign = await campaignWith({
      instructions: 'You sell shoes for the shoe shop. Answer questions from the documents.',
      documents: [
        { title: 'Delivery', content: 'Orders to Canada arrive within five working days, shipped by courier.' },
        { title: 'Returns', content: 'Returns are free for thirty days in the original box.' },
      ],
    });
    await scriptPersona(twin.baseUrl, {
      number: phone,
      answers: ['How long does delivery to Canada take?', 'Call me back tomorrow at 3 pm.'],
    });
    // The lead then waits for its callback tomorrow (one more attempt past the single rung): the call is what counts.
    const { workflow, leadId } = await pushAna(campaign.id, phone);
    const ended = await until(
      () => db.call.findFirst({ where: { leadId, status: 'ended' } }),
      (found) => found !== null,
      30_000,
    );
    // The lead's workflow starts the call's intelligence after the call ends (afterCallEnded): terminated before
    // that, no intelligence would ever come. So it is ended once the intelligence is there.
    const call = await withIntelligence(db, ended!.id);
    await workflow.terminate('the test is over');
    const transcript = call.transcript as Transcript;
    expect(call.outcome).toBe('callback_requested');
    expect(call.callbackAt).not.toBeNull();
    const agentSaid = transcript.filter((turn) => turn.speaker === 'agent').map((turn) => turn.text);
    expect(agentSaid[0]).toBe(OPENING);
    expect(agentSaid.some((text) => text.includes('Orders to Canada arrive within five working days'))).toBe(true);
    const tools = transcript.filter((turn) => turn.speaker === 'tool');
    expect(tools.map((turn) => turn.tool)).toMatchObject([
      { name: 'schedule_callback', arguments: { when: 'Call me back tomorrow at 3 pm.' }, ok: true },
    ]);
    // The model was asked with the agent's instructions, over the OpenAI twin's API.
    expect(model.twin.requests.some((request) => JSON.stringify(request.body).includes('You sell shoes'))).toBe(true);
  });

  it("a script's custom function on the call: the signed request, verified as the docs say, and its answer said to the caller", async () => {
    const phone = '+14155569504';
    const endpoint = await startReceiver(() => ({ status: 200, json: { result: 'Two pairs are held for you.' } }));
    const campaign = await campaignWith();
    const { id, signingSecret } = await createFunction(
      db,
      keyring,
      owner.workspaceId,
      functionDefinitionSchema.parse({
        name: 'hold_stock',
        description: 'Holds the pairs the lead wants.',
        presets: { lead: '{{lead.name}}' },
        url: endpoint.url,
        fillerLine: 'Let me check the stock.',
      }),
    );
    await bindFunction(db, owner.workspaceId, id, campaign.agentId!, 2);
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['Navy, please.', 'Two pairs.'] });
    const { result, call, transcript } = await callAna(campaign.id, phone);
    expect(result).toMatchObject({ outcome: 'answered' });
    // The customer's endpoint got one request, genuine by the documented check, keyed by the call and the tool call.
    expect(endpoint.received).toHaveLength(1);
    const [request] = endpoint.received;
    expect(verifyFunctionRequest(signingSecret!, request!.headers, request!.body)).toBe(true);
    expect(request!.headers['idempotency-key']).toBe(idempotencyKeyOf(call.id, 'script-question-2'));
    expect(JSON.parse(request!.body)).toMatchObject({
      function: 'hold_stock',
      call: { id: call.id },
      arguments: { answer: 'Two pairs.' },
      presets: { lead: 'Ana' },
    });
    // The caller heard the filler line and the answer on the Twilio twin; the transcript has the tool turn.
    const heard = (await twinLog(twin.baseUrl, call.providerCallId!)).log
      .filter((entry) => entry.speaker === 'agent')
      .map((entry) => entry.text)
      .join(' ');
    expect(heard).toContain('Let me check the stock.');
    expect(heard).toContain('Two pairs are held for you.');
    expect(transcript.find((turn) => turn.speaker === 'tool')).toMatchObject({
      text: 'hold_stock',
      tool: { name: 'hold_stock', ok: true, result: 'Two pairs are held for you.' },
    });
  });
});
