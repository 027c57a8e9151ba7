// The agent's conversation over Twilio's ConversationRelay (docs/features/conversation/relay.md), end to end on the
// real servers: the API (CONVERSATION_ENGINE=relay) with its WebSocket, a worker, Temporal and PostgreSQL, and the
// Twilio twin as the carrier, which opens the call's socket and plays the caller.
import { randomUUID } from 'node:crypto';
import twilio from 'twilio';
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import { twilioRelayUrl } from '../../lib/carriers/twilio/twilio-urls';
import { MAX_VOICE_PROMPT_CHARS, messageText } from '../../lib/carriers/twilio/conversation-relay/frames';
import { SOCKET_FRAME_LIMITS } from '../../lib/carriers/twilio/conversation-relay/turn-queue';
import type { Transcript } from '../../lib/calls/transcript';
import {
  answeredTwilioCall,
  calledLead,
  expectAnsweredWalk,
  insertShoeShopAgent,
  said,
  startedAgentCampaign,
  withIntelligence as withIntelligenceOf,
} from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { scriptPersona, twilioTwinRecord, twinLog } from '../support/twilio-twin';
import { until } from '../support/until';
import { connectTwinCaller, startTwilioTwinStack } from '../support/twilio-twin-stack';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const { keyring, twin, api } = await startTwilioTwinStack({ db, url, temporal }, { conversationEngine: 'relay' });

const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view', 'agents.edit'] });
const caller = '+14155569301';
const connection = await connectTwinCaller(db, keyring, twin.baseUrl, owner.workspaceId, caller);

const QUESTIONS = ['What colour would you like for the shoes?', 'How many pairs would you like?'];
const OPENING = 'Hello Ana, this is the shoe shop.';
const CLOSING = 'Thank you, goodbye.';

async function campaignWithAgent() {
  const agent = await insertShoeShopAgent(db, owner.workspaceId, { questions: QUESTIONS });
  return startedAgentCampaign(db, api, owner, { name: 'Relay', caller, agentId: agent.id });
}

const callLead = (campaignId: string, phone: string) => calledLead(db, { api, temporal }, owner, campaignId, phone);

const lines = (turns: { speaker: string; text: string }[]) => turns.map((turn) => `${turn.speaker}: ${turn.text}`);
const turnsOf = (callId: string) =>
  db.callTurn.findMany({ where: { callId }, orderBy: [{ step: 'asc' }, { part: 'asc' }] });

/**
 * A call of an agent's campaign to Ana at `phone`, answered on the twin's connection, its socket not opened yet. Its
 * CallSid is one the twin does not know: a dropped socket's hang-up finds it gone and leaves it.
 */
async function answeredCallOnTheTwin(phone: string) {
  const campaign = await campaignWithAgent();
  return answeredTwilioCall(db, { owner, connection, caller }, campaign, phone);
}

/** Sends the `setup` Twilio opens a session with, for the call `to` a lead from the caller. */
function sendSetup(ws: WebSocket, setup: { sessionId: string; callSid: string | null; to: string; attemptId: string }) {
  const { attemptId, ...frame } = setup;
  ws.send(
    JSON.stringify({
      type: 'setup',
      ...frame,
      from: caller,
      direction: 'outbound-api',
      customParameters: { attemptId },
    }),
  );
}

/** Opens a socket as Twilio would (signed with `token`; null: unsigned): the handshake's status, and the socket if open. */
function openSocket(target: string, token: string | null): Promise<{ status: number; ws: WebSocket | null }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(target, {
      headers: token === null ? {} : { 'x-twilio-signature': twilio.getExpectedTwilioSignature(token, target, {}) },
    });
    ws.on('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0, ws: null });
      ws.terminate();
    });
    ws.on('upgrade', (res) => resolve({ status: res.statusCode ?? 0, ws }));
    ws.on('error', () => resolve({ status: 0, ws: null }));
  });
}

describe("the agent's conversation over ConversationRelay", () => {
  it("answers <Connect><ConversationRelay>; the twin talks on the call's socket, the transcript is the persona's answers and the call ends answered", async () => {
    const campaign = await campaignWithAgent();
    await scriptPersona(twin.baseUrl, { number: '+14155569311', answers: ["I'd like navy, please.", '3 pairs.'] });
    const { result, call } = await callLead(campaign.id, '+14155569311');
    expect(result).toMatchObject({ outcome: 'answered' });
    const done = await withIntelligenceOf(db, call.id);
    const transcript = done.transcript as Transcript;
    expectAnsweredWalk(transcript, {
      agent: [OPENING, ...QUESTIONS, CLOSING],
      lead: [
        { text: "I'd like navy, please.", confidence: null },
        { text: '3 pairs.', confidence: null },
      ],
    });
    expect(done.outcome).toBe('answered');
    expect(lines(await turnsOf(call.id))).toEqual([
      `agent: ${OPENING}`,
      `agent: ${QUESTIONS[0]}`,
      "lead: I'd like navy, please.",
      `agent: ${QUESTIONS[1]}`,
      'lead: 3 pairs.',
      `agent: ${CLOSING}`,
    ]);
    // On the line: the relay, the greeting and each turn once, in order, then Twilio's hang-up at the document's end.
    const log = await twinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.find((entry) => entry.kind === 'connect')).toMatchObject({ text: 'ConversationRelay' });
    // The agent's voice as ConversationRelay's (ttsProvider Amazon): the Polly voice it says <Say> with, neural.
    for (const say of log.log.filter((entry) => entry.kind === 'say'))
      expect(say).toMatchObject({ voice: 'Joanna-Neural', language: 'en-US' });
    expect(log.log.filter((entry) => entry.kind === 'say').map((entry) => entry.text)).toEqual([
      OPENING,
      ...QUESTIONS,
      CLOSING,
    ]);
    expect(log.log.filter((entry) => entry.kind === 'speech').map((entry) => entry.text)).toEqual(
      said(transcript, 'lead'),
    );
    expect(log.log.some((entry) => entry.kind === 'error')).toBe(false);
    expect(log.status).toBe('completed');
    const onTwin = await twilioTwinRecord(db).call(call.providerCallId!);
    expect(onTwin.hangupRequestedAt).toBeNull();
    const intelligence = done.intelligence as { extraction: Record<string, { value: unknown }> };
    expect(intelligence.extraction.colour!.value).toBe('navy');
    expect(intelligence.extraction.pairs!.value).toBe(3);
  });

  it('ends the conversation politely when the lead asks not to be called: opt_out (test/conversation/)', async () => {
    const campaign = await campaignWithAgent();
    await scriptPersona(twin.baseUrl, { number: '+14155569312', answers: ['Stop calling me.', 'Two.'] });
    const { result, call } = await callLead(campaign.id, '+14155569312');
    expect(result).toMatchObject({ outcome: 'opted_out' });
    expect(lines(await turnsOf(call.id))).toEqual([
      `agent: ${OPENING}`,
      `agent: ${QUESTIONS[0]}`,
      'lead: Stop calling me.',
      'tool: opt_out',
      "agent: I'm sorry to have bothered you. We won't call you again. Goodbye.",
    ]);
  });

  it('refuses an unsigned, a badly signed and a misdirected handshake (nothing changes), then takes one socket per call: a second is refused', async () => {
    const call = await answeredCallOnTheTwin('+14155569313');
    const target = twilioRelayUrl(api.baseUrl, { connectionId: connection.id, attemptId: call.attemptId });
    expect((await openSocket(target, null)).status).toBe(401);
    expect((await openSocket(target, 'not-the-auth-token')).status).toBe(401);
    // Signed by the right token, for another connection's path, or for an attempt there is no call of.
    const elsewhere = twilioRelayUrl(api.baseUrl, { connectionId: randomUUID(), attemptId: call.attemptId });
    expect((await openSocket(elsewhere, TWILIO_TWIN_AUTH_TOKEN)).status).toBe(401);
    const unknown = twilioRelayUrl(api.baseUrl, { connectionId: connection.id, attemptId: randomUUID() });
    expect((await openSocket(unknown, TWILIO_TWIN_AUTH_TOKEN)).status).toBe(404);
    expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).relaySocketAt).toBeNull();
    expect(await turnsOf(call.id)).toEqual([]);

    const first = await openSocket(target, TWILIO_TWIN_AUTH_TOKEN);
    expect(first.status).toBe(101);
    expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).relaySocketAt).not.toBeNull();
    // A second socket for the call, while the first is open and after it closed: refused.
    expect((await openSocket(target, TWILIO_TWIN_AUTH_TOKEN)).status).toBe(409);
    const texts: string[] = [];
    first.ws!.on('message', (data) => texts.push(String((JSON.parse(messageText(data)) as { token?: string }).token)));
    sendSetup(first.ws!, {
      sessionId: 'VX1',
      callSid: call.providerCallId,
      to: '+14155569313',
      attemptId: call.attemptId,
    });
    await until(
      async () => texts.includes(''),
      (done) => done,
    );
    expect(texts.join('')).toBe(QUESTIONS[0]);
    first.ws!.close();
    await new Promise((resolve) => first.ws!.once('close', resolve));
    expect((await openSocket(target, TWILIO_TWIN_AUTH_TOKEN)).status).toBe(409);
    expect(lines(await turnsOf(call.id))).toEqual([`agent: ${OPENING}`, `agent: ${QUESTIONS[0]}`]);
  });

  it("closes a socket whose setup names another call's CallSid, unheard: nothing is said or stored", async () => {
    const call = await answeredCallOnTheTwin('+14155569314');
    const target = twilioRelayUrl(api.baseUrl, { connectionId: connection.id, attemptId: call.attemptId });
    const opened = await openSocket(target, TWILIO_TWIN_AUTH_TOKEN);
    expect(opened.status).toBe(101);
    const texts: string[] = [];
    opened.ws!.on('message', (data) => texts.push(messageText(data)));
    const closed = new Promise<number>((resolve) => opened.ws!.once('close', (code) => resolve(code)));
    sendSetup(opened.ws!, {
      sessionId: 'VX2',
      callSid: `CA${randomUUID().replaceAll('-', '')}`,
      to: '+14155569314',
      attemptId: call.attemptId,
    });
    expect(await closed).toBe(1008);
    expect(texts).toEqual([]);
    expect(await turnsOf(call.id)).toEqual([]);
  });

  it('bounds a socket that floods: prompts sent during a turn are one utterance, frames past the budget are dropped, and a sender that keeps on is closed (1008)', async () => {
    const call = await answeredCallOnTheTwin('+14155569315');
    const target = twilioRelayUrl(api.baseUrl, { connectionId: connection.id, attemptId: call.attemptId });
    const opened = await openSocket(target, TWILIO_TWIN_AUTH_TOKEN);
    expect(opened.status).toBe(101);
    const ws = opened.ws!;
    const lastTokens: string[] = [];
    ws.on('message', (data) => {
      const frame = JSON.parse(messageText(data)) as { type: string; last?: boolean };
      if (frame.type === 'text' && frame.last) lastTokens.push('turn');
    });
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    sendSetup(ws, { sessionId: 'VX3', callSid: call.providerCallId, to: '+14155569315', attemptId: call.attemptId });
    await until(
      async () => lastTokens.length,
      (turns) => turns >= 1,
    );
    // Far more than the budget, each a final prompt at the 4,000-character cap and over it.
    const sent = SOCKET_FRAME_LIMITS.burst + SOCKET_FRAME_LIMITS.droppedBeforeClose + 50;
    const prompt = JSON.stringify({ type: 'prompt', voicePrompt: 'red '.repeat(2_000), last: true });
    for (let i = 0; i < sent; i += 1) ws.send(prompt);
    expect(await closed).toBe(1008);
    const leadTurns = await until(
      async () => (await turnsOf(call.id)).filter((turn) => turn.speaker === 'lead'),
      (turns) => turns.length >= 1,
    );
    // At most the budget's frames were read, and those said during a turn joined: far fewer lead turns than frames.
    expect(leadTurns.length).toBeGreaterThanOrEqual(1);
    expect(leadTurns.length).toBeLessThan(SOCKET_FRAME_LIMITS.burst);
    for (const turn of leadTurns) expect(turn.text.length).toBeLessThanOrEqual(MAX_VOICE_PROMPT_CHARS);
  });

  it('hangs up a call whose socket dropped, through its connection; the lead is not dialed again', async () => {
    const campaign = await campaignWithAgent();
    // The twin cuts the socket when the agent asks question 2, and keeps the line open.
    await scriptPersona(twin.baseUrl, { number: '+14155569314', answers: ['Navy.', 'Two.'], relayDropsAt: 1 });
    const { result, call, leadId } = await callLead(campaign.id, '+14155569314');
    expect(result).toMatchObject({ outcome: 'answered' });
    const onTwin = await twilioTwinRecord(db).call(call.providerCallId!);
    // Hung up by the product's REST request, not by the twin's silence running out.
    expect(onTwin.hangupRequestedAt).not.toBeNull();
    expect(onTwin.status).toBe('completed');
    const log = await twinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.text === 'ConversationRelay socket dropped')).toHaveLength(1);
    expect(lines(await turnsOf(call.id))).toEqual([
      `agent: ${OPENING}`,
      `agent: ${QUESTIONS[0]}`,
      'lead: Navy.',
      `agent: ${QUESTIONS[1]}`,
    ]);
    expect(await db.call.count({ where: { leadId } })).toBe(1);
    expect(await twilioTwinRecord(db).count(`"to" = '+14155569314'`)).toBe(1);
  });
});
