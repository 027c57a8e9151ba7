// The agent's conversation over Telnyx's ConversationRelay (docs/features/conversation/relay.md#telnyx) and the
// conversation tools on it (docs/features/conversation/tools.md), end to end on the real servers: the API
// (CONVERSATION_ENGINE=relay) with its WebSocket, a worker, Temporal and PostgreSQL, and the Telnyx twin as the carrier,
// which starts the session on conversation_relay_start, opens the call's socket, plays the caller and transfers.
// Everything the adapter sends to Telnyx passes through a recording proxy and is checked against Telnyx's description;
// the twin's new webhooks are checked against it too.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import WebSocket, { WebSocketServer } from 'ws';
import { describe, expect, it } from 'vitest';
import type { Transcript } from '../../lib/calls/transcript';
import { NO_ANSWER_TEXT } from '../../lib/conversation/script-walk';
import { telnyxRelayUrl } from '../../lib/carriers/telnyx/telnyx-urls';
import { TELNYX_TWIN_API_KEY } from '../../lib/carriers/twin';
import { messageText } from '../../lib/carriers/twilio/conversation-relay/frames';
import {
  calledLead,
  insertShoeShopAgent,
  recordDialingCall,
  startCarrierCallStack,
  startedAgentCampaign,
  withIntelligence,
} from '../support/carrier-calls';
import { carrierDescription } from '../support/carrier-openapi';
import { useTestDatabase } from '../support/database';
import { listenOnLoopback } from '../support/http-receiver';
import { QUICK_LADDER } from '../support/ladders';
import { pushLeadWithWorkflow } from '../support/lead-workflows';
import { startRecordingProxy } from '../support/recording-proxy';
import {
  callControlCommands,
  operationOf,
  scriptTelnyxPersona,
  startTestTelnyxTwin,
  startWebhookReceiver,
  TELNYX_TWIN_CONNECTION_ID,
  telnyxTwinLog,
  telnyxTwinRecord,
} from '../support/telnyx-twin';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
// Twin time: a spoken word 16 ms, a person's 30 s of patience 1.2 s (less, on a loaded machine, left the callee
// hanging up before the API's first command reached the twin).
const twin = await startTestTelnyxTwin(db, { timeScale: 0.04 });
const recorder = await startRecordingProxy(new URL(twin.baseUrl).origin);
const { api, owner, connectTwin } = await startCarrierCallStack(db, {
  url,
  temporal,
  api: { conversationEngine: 'relay' },
});
const caller = '+14155569501';
const connection = await connectTwin('telnyx-twin', `${recorder.url}/v2`, caller);

const QUESTIONS = ['What colour would you like for the shoes?', 'How many pairs would you like?'];
const OPENING = 'Hello Ana, this is the shoe shop.';
const CLOSING = 'Thank you, goodbye.';
const NOBODY_ANSWERED = "I'm sorry, nobody could take your call right now. We'll call you back. Goodbye.";

async function campaignWith(
  options: { transferNumber?: string; transferMode?: 'cold' | 'warm'; ladder?: typeof QUICK_LADDER } = {},
) {
  const agent = await insertShoeShopAgent(db, owner.workspaceId, {
    questions: QUESTIONS,
    language: 'en-US',
    transferNumber: options.transferNumber ?? null,
    transferMode: options.transferMode ?? 'cold',
  });
  return startedAgentCampaign(db, api, owner, {
    name: 'Telnyx relay',
    caller,
    agentId: agent.id,
    ...(options.ladder && { ladder: options.ladder }),
  });
}

const callLead = (campaignId: string, phone: string) => calledLead(db, { api, temporal }, owner, campaignId, phone);
/** Ana's lead pushed through the API, with its workflow once it exists. */
const pushLead = (campaignId: string, phone: string) =>
  pushLeadWithWorkflow(api, owner.key, temporal.client, campaignId, phone, { name: 'Ana' });

const lines = (transcript: Transcript) => transcript.map((turn) => `${turn.speaker}: ${turn.text}`);
const transcriptOf = async (callId: string) => (await withIntelligence(db, callId)).transcript as Transcript;

/** The requests the adapter sent for a call, as Telnyx's operations ("post /calls/{call_control_id}/actions/..."). */
const commandsTo = (callControlId: string) => callControlCommands(recorder.exchanges, callControlId);

/** Opens a socket as Telnyx would (no signature: the URL's token is the proof): the handshake's status, and the socket. */
function openSocket(target: string): Promise<{ status: number; ws: WebSocket | null }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(target);
    ws.on('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0, ws: null });
      ws.terminate();
    });
    ws.on('upgrade', (res) => resolve({ status: res.statusCode ?? 0, ws }));
    ws.on('error', () => resolve({ status: 0, ws: null }));
  });
}

describe("the agent's conversation over Telnyx's ConversationRelay", () => {
  it('starts ConversationRelay when a person answers; the twin talks on the socket, the transcript is what the lead said, and the call ends answered', async () => {
    const phone = '+14155569511';
    const campaign = await campaignWith();
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Navy, please.', 'Two pairs.'] });
    const { result, call } = await callLead(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(lines(await transcriptOf(call.id))).toEqual([
      `agent: ${OPENING}`,
      `agent: ${QUESTIONS[0]}`,
      'lead: Navy, please.',
      `agent: ${QUESTIONS[1]}`,
      'lead: Two pairs.',
      `agent: ${CLOSING}`,
    ]);
    // Call Control: the relay started once, with the greeting, voice and the socket's URL with its token; no speak,
    // no transcription (Telnyx hears and speaks); the product hung up once the conversation ended.
    const commands = commandsTo(call.providerCallId!);
    expect(commands.map((command) => command.action)).toEqual(['conversation_relay_start', 'hangup']);
    expect(commands[0]!.body).toMatchObject({
      url: telnyxRelayUrl(api.baseUrl, { connectionId: connection.id, attemptId: call.attemptId }, TELNYX_TWIN_API_KEY),
      greeting: OPENING,
      language: 'en-US',
      voice: 'AWS.Polly.Joanna-Neural',
      custom_parameters: { attemptId: call.attemptId },
      command_id: 'conversation-relay',
    });
    const log = await telnyxTwinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.speaker === 'callee').map((entry) => entry.text)).toEqual([
      'Navy, please.',
      'Two pairs.',
    ]);
    expect(log.log.filter((entry) => entry.kind === ('relay' as string)).map((entry) => entry.text)).toEqual([
      expect.stringMatching(/^started: ws:\/\/.*\/relay$/),
      'ended',
    ]);
    expect(log.hangupCause).toBe('normal_clearing');
  });

  it('opt_out: "stop calling me" lists the number at once and the call ends opted_out', async () => {
    const phone = '+14155569512';
    const campaign = await campaignWith();
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Please stop calling me.'] });
    const { result, call } = await callLead(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'opted_out' });
    expect(call.outcome).toBe('opted_out');
    // Listed by the tool, with its provenance (docs/features/leads.md#the-do-not-call-list).
    expect(
      await db.doNotCall.findUnique({ where: { workspaceId_phone: { workspaceId: owner.workspaceId, phone } } }),
    ).toMatchObject({ source: 'spoken_opt_out', callId: call.id, messageId: null });
    expect((await transcriptOf(call.id)).filter((turn) => turn.speaker === 'tool').map((turn) => turn.text)).toEqual([
      'opt_out',
    ]);
  });

  it('schedule_callback: the call ends callback_requested with the time the lead asked for', async () => {
    const phone = '+14155569513';
    const campaign = await campaignWith({ ladder: QUICK_LADDER });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Call me back tomorrow at 3 pm.'] });
    const { leadId, handle } = await pushLead(campaign.id, phone);
    const ended = await until(
      () => db.call.findFirst({ where: { leadId, status: 'ended' } }),
      (found) => found !== null,
      30_000,
    );
    expect(ended!.outcome).toBe('callback_requested');
    expect(ended!.callbackAt).not.toBeNull();
    expect(ended!.callbackAt!.getTime()).toBeGreaterThan(Date.now());
    await handle.terminate('the test is over');
  });

  it('transfer_to_human: the human answers: Call Control transfers the call, the legs are bridged, and the call ends transferred', async () => {
    const phone = '+14155569514';
    const transferNumber = '+14155550100';
    const campaign = await campaignWith({ transferNumber });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Can I talk to a real person?'] });
    const { result, call } = await callLead(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'transferred', attempts: 1 });
    const commands = commandsTo(call.providerCallId!);
    expect(commands.map((command) => command.action)).toEqual(['conversation_relay_start', 'transfer']);
    expect(commands[1]!.body).toMatchObject({
      to: transferNumber,
      from: caller,
      timeout_secs: 20,
      command_id: 'transfer',
    });
    const log = await telnyxTwinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === ('transfer' as string)).map((entry) => entry.text)).toEqual([
      `dialing ${transferNumber}`,
      `answered by ${transferNumber}; bridged`,
    ]);
    const transcript = await transcriptOf(call.id);
    expect(transcript.find((turn) => turn.speaker === 'tool')!.tool).toMatchObject({
      name: 'transfer_to_human',
      ok: true,
    });
  });

  it('transfer_to_human: nobody answers: the lead hears so on the same call, which ends callback_requested, and the ladder calls again', async () => {
    const phone = '+14155569520';
    const transferNumber = '+14155550106';
    const campaign = await campaignWith({ transferNumber, ladder: QUICK_LADDER });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['I want to speak to a human.'] });
    const { leadId, handle } = await pushLead(campaign.id, phone);
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', outcome: 'callback_requested', attempts: 3 });
    const calls = await db.call.findMany({ where: { leadId }, orderBy: { attempt: 'asc' } });
    expect(calls.map((call) => [call.outcome, call.callbackAt])).toEqual([
      ['callback_requested', null],
      ['callback_requested', null],
      ['callback_requested', null],
    ]);
    const commands = commandsTo(calls[0]!.providerCallId!);
    expect(commands.map((command) => command.action)).toEqual([
      'conversation_relay_start',
      'transfer',
      'speak',
      'hangup',
    ]);
    expect(commands[2]!.body).toMatchObject({ payload: NOBODY_ANSWERED, command_id: 'speak:transfer' });
    const log = await telnyxTwinLog(twin.baseUrl, calls[0]!.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === ('transfer' as string)).map((entry) => entry.text)).toEqual([
      `dialing ${transferNumber}`,
      `${transferNumber}: timeout`,
    ]);
    expect(log.log.filter((entry) => entry.kind === 'say').at(-1)!.text).toBe(NOBODY_ANSWERED);
  });

  /** The adapter's dial of a warm transfer's human (POST /calls to `to`), and the leg's call_control_id. */
  const humanDialTo = (to: string) => {
    const exchange = recorder.exchanges.find(
      (candidate) =>
        candidate.method === 'POST' && candidate.url.endsWith('/calls') && JSON.parse(candidate.body).to === to,
    )!;
    expect(exchange).toBeDefined();
    return {
      exchange,
      id: (JSON.parse(exchange.responseBody) as { data: { call_control_id: string } }).data.call_control_id,
    };
  };
  /** The adapter's requests and the twin's answers, as Telnyx describes them. */
  const expectDescribed = (exchange: (typeof recorder.exchanges)[number]) => {
    const telnyx = carrierDescription('telnyx');
    const url = `${recorder.url}${exchange.url}`;
    const operation = operationOf(exchange.method, url);
    const body = JSON.parse(exchange.body) as unknown;
    expect(telnyx.requestProblems(operation, { url, contentType: 'application/json', body })).toEqual([]);
    const answer = {
      status: exchange.status,
      contentType: exchange.responseContentType ?? undefined,
      body: exchange.responseBody,
    };
    expect(telnyx.responseProblems(operation, answer)).toEqual([]);
  };

  it('warm transfer_to_human, the human answers: their leg is dialed, hears the summary, then is bridged to the lead; the call ends transferred', async () => {
    const phone = '+14155569541';
    const transferNumber = '+14155550101';
    const campaign = await campaignWith({ transferNumber, transferMode: 'warm' });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Can I talk to a real person?'] });
    const { result, call } = await callLead(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'transferred', attempts: 1 });
    const human = humanDialTo(transferNumber);
    expect(JSON.parse(human.exchange.body)).toMatchObject({
      from: caller,
      timeout_secs: 20,
      command_id: `${call.attemptId}:human`,
      link_to: call.providerCallId,
      bridge_intent: true,
    });
    const whisper = `Transferred call. Ana asked to speak to a person: "Can I talk to a real person?" Connecting you now.`;
    expect(commandsTo(human.id).map((command) => [command.action, command.body?.payload])).toEqual([
      ['speak', whisper],
    ]);
    const lead = commandsTo(call.providerCallId!);
    expect(lead.map((command) => command.action)).toEqual(['conversation_relay_start', 'bridge']);
    expect(lead[1]!.body).toMatchObject({ call_control_id: human.id, command_id: 'bridge' });
    // The human's leg heard the summary, and only then was bridged.
    const { log } = await telnyxTwinLog(twin.baseUrl, human.id);
    const said = log.find((entry) => entry.kind === 'say')!;
    const bridged = log.find((entry) => entry.kind === ('bridge' as string))!;
    expect(said.text).toBe(whisper);
    expect(bridged.atMs).toBeGreaterThan(said.atMs);
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({
      transferMode: 'warm',
      transferStatus: 'answered',
    });
    expectDescribed(human.exchange);
    expectDescribed(recorder.exchanges.find((exchange) => exchange.url.endsWith('/actions/bridge'))!);
  });

  it('warm transfer_to_human, nobody answers: no summary is said, the lead hears the fallback line and the call ends callback_requested', async () => {
    const phone = '+14155569542';
    const transferNumber = '+14155550116';
    const campaign = await campaignWith({ transferNumber, transferMode: 'warm' });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['I want to speak to a human.'] });
    const { result, call } = await callLead(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'callback_requested', attempts: 1 });
    expect(commandsTo(humanDialTo(transferNumber).id)).toEqual([]);
    const lead = commandsTo(call.providerCallId!);
    expect(lead.map((command) => command.action)).toEqual(['conversation_relay_start', 'speak', 'hangup']);
    expect(lead[1]!.body).toMatchObject({ payload: NOBODY_ANSWERED, command_id: 'speak:transfer' });
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({
      transferMode: 'warm',
      transferStatus: 'unanswered',
    });
  });

  it('hangs up a call whose socket dropped, through its connection; the lead is not dialed again', async () => {
    const phone = '+14155569534';
    const campaign = await campaignWith();
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Navy.', 'Two.'], relayDropsAt: 1 });
    const { result, call, leadId } = await callLead(campaign.id, phone);
    expect(result).toMatchObject({ outcome: 'answered' });
    const commands = commandsTo(call.providerCallId!);
    expect(commands.map((command) => command.action)).toEqual(['conversation_relay_start', 'hangup']);
    const log = await telnyxTwinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === ('relay' as string)).at(-1)!.text).toBe('dropped');
    // Hung up by the product (the caller's side), not by the callee's silence running out.
    expect(log.log.filter((entry) => entry.kind === 'hangup')).toEqual([
      expect.objectContaining({ speaker: 'agent', text: 'normal_clearing' }),
    ]);
    expect(await db.call.count({ where: { leadId } })).toBe(1);
    expect(await telnyxTwinRecord(db).count('"to" = $1', phone)).toBe(1);
  });

  it("refuses a handshake without the call's token, with another call's or connection's token (nothing changes), then takes one socket per call", async () => {
    const call = await recordDialingCall(
      db,
      { owner, connection, caller },
      {
        provider: 'telnyx-twin',
        providerCallId: `v3:${randomUUID()}`,
      },
    );
    const target = telnyxRelayUrl(
      api.baseUrl,
      { connectionId: connection.id, attemptId: call.attemptId },
      TELNYX_TWIN_API_KEY,
    );
    const bare = target.split('?')[0]!;
    expect((await openSocket(bare)).status).toBe(401);
    expect((await openSocket(`${bare}?token=not-the-token`)).status).toBe(401);
    // Another attempt's token on this path; this call's token with another API key.
    const otherAttempt = telnyxRelayUrl(
      api.baseUrl,
      { connectionId: connection.id, attemptId: randomUUID() },
      TELNYX_TWIN_API_KEY,
    );
    expect((await openSocket(`${bare}?${otherAttempt.split('?')[1]}`)).status).toBe(401);
    const otherKey = telnyxRelayUrl(
      api.baseUrl,
      { connectionId: connection.id, attemptId: call.attemptId },
      'KEYnot_it',
    );
    expect((await openSocket(otherKey)).status).toBe(401);
    // A Twilio connection's path with the Telnyx token: not Twilio's proof.
    expect((await openSocket(target.replace('/telnyx/', '/twilio/'))).status).toBe(401);
    expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).relaySocketAt).toBeNull();

    const first = await openSocket(target);
    expect(first.status).toBe(101);
    expect((await openSocket(target)).status).toBe(409);
    // A setup naming another call_control_id: closed unheard.
    const closed = new Promise<number>((resolve) => first.ws!.once('close', (code) => resolve(code)));
    first.ws!.send(
      JSON.stringify({
        type: 'setup',
        sessionId: randomUUID(),
        callSid: `v3:${randomUUID()}`,
        callControlId: `v3:${randomUUID()}`,
        from: caller,
        to: call.toNumber,
        direction: 'outbound',
      }),
    );
    expect(await closed).toBe(1008);
    expect(await db.callTurn.count({ where: { callId: call.id } })).toBe(0);
    expect((await openSocket(target)).status).toBe(409);
  });
});

describe('the personas the twins play by the number (+1 AAA 555 07TD)', () => {
  it('each plays its caller without a script: a callback, an opt-out, a person, an interruption, silence, a hang-up halfway', async () => {
    const campaign = await campaignWith({ transferNumber: '+14155550100' });
    const expected: Record<string, string> = {
      '+14155550710': 'callback_requested',
      '+14155550720': 'opted_out',
      '+14155550730': 'transferred',
      '+14155550740': 'answered',
      '+14155550750': 'answered',
      '+14155550760': 'answered',
    };
    const pushed = await Promise.all(
      Object.keys(expected).map(async (phone) => ({ phone, ...(await pushLead(campaign.id, phone)) })),
    );
    const ended = await Promise.all(
      pushed.map(({ leadId }) =>
        until(
          () => db.call.findFirst({ where: { leadId, status: 'ended' } }),
          (found) => found !== null,
          60_000,
        ),
      ),
    );
    expect(Object.fromEntries(pushed.map(({ phone }, index) => [phone, ended[index]!.outcome]))).toEqual(expected);
    const transcripts = await Promise.all(ended.map((call) => transcriptOf(call!.id)));
    const byPhone = Object.fromEntries(pushed.map(({ phone }, index) => [phone, transcripts[index]!]));
    // The interruption: the first question was cut halfway, and only what was said is in the transcript.
    expect(byPhone['+14155550740']![1]).toMatchObject({ speaker: 'agent', text: 'What colour would you' });
    // Silence: nobody said anything; each silence is the lead's "(no answer)".
    const silent = byPhone['+14155550750']!.filter((turn) => turn.speaker === 'lead');
    expect(silent.length).toBeGreaterThan(0);
    expect(new Set(silent.map((turn) => turn.text))).toEqual(new Set([NO_ANSWER_TEXT]));
    // The hang-up at the agent's second turn: one answer, no closing.
    expect(byPhone['+14155550760']!.filter((turn) => turn.speaker === 'lead')).toHaveLength(1);
    expect(byPhone['+14155550760']!.at(-1)!.text).toBe(QUESTIONS[1]);
    for (const { handle } of pushed) await handle.terminate('the test is over').catch(() => undefined);
  });
});

describe("the twin's ConversationRelay and transfer, as Telnyx describes them", () => {
  it("sends call.conversation.ended, call.bridged and the human's leg's webhooks as the description has them, and answers the commands as described", async () => {
    const receiver = await startWebhookReceiver();
    // An application that ends the session as soon as it is set up.
    const server = createServer();
    const sockets = new WebSocketServer({ server });
    const setups: Record<string, unknown>[] = [];
    sockets.on('connection', (ws) =>
      ws.on('message', (data) => {
        const frame = JSON.parse(messageText(data)) as Record<string, unknown>;
        if (frame.type !== 'setup') return;
        setups.push(frame);
        ws.send(JSON.stringify({ type: 'text', token: 'Hello.', last: true }));
        ws.send(JSON.stringify({ type: 'end' }));
      }),
    );
    const port = await listenOnLoopback(server);
    const dial = await twin.client.calls.dial({
      connection_id: TELNYX_TWIN_CONNECTION_ID,
      to: '+14155569530',
      from: caller,
      webhook_url: receiver.url(),
    });
    const id = dial.data!.call_control_id;
    await until(
      async () => receiver.of(id),
      (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.answered'),
    );
    await twin.client.calls.actions.startConversationRelay(id, {
      url: `ws://127.0.0.1:${port}/relay?token=t`,
      greeting: 'Hi.',
      custom_parameters: { attemptId: 'att_1' },
      command_id: 'relay',
    });
    const ended = await until(
      async () => receiver.of(id),
      (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.conversation.ended'),
    );
    expect(setups).toEqual([
      expect.objectContaining({
        type: 'setup',
        callSid: id,
        callControlId: id,
        from: caller,
        to: '+14155569530',
        customParameters: { attemptId: 'att_1' },
      }),
    ]);
    expect(ended.find((webhook) => webhook.eventType === 'call.conversation.ended')!.payload.reason).toBeNull();

    await twin.client.calls.actions.transfer(id, {
      to: '+14155550100',
      timeout_secs: 20,
      target_leg_client_state: Buffer.from('human').toString('base64'),
      command_id: 'transfer',
    });
    const all = await until(
      async () => receiver.received,
      (webhooks) =>
        webhooks.some((webhook) => webhook.eventType === 'call.hangup' && webhook.payload.call_control_id === id),
      20_000,
    );
    const human = all.filter((webhook) => webhook.payload.client_state === Buffer.from('human').toString('base64'));
    expect(human.map((webhook) => webhook.eventType)).toEqual([
      'call.initiated',
      'call.answered',
      'call.bridged',
      'call.hangup',
    ]);
    expect(new Set(human.map((webhook) => webhook.payload.call_control_id)).size).toBe(1);
    expect(human[0]!.payload.call_control_id).not.toBe(id);
    expect(receiver.of(id).map((webhook) => webhook.eventType)).toContain('call.bridged');
    for (const webhook of all) expect(webhook.problems, webhook.eventType).toEqual([]);
    for (const webhook of all) expect(webhook.verified).toBe(true);

    // The SDK's requests and the twin's answers, against the description.
    const telnyx = carrierDescription('telnyx');
    const exchanges = twin.exchanges.filter((exchange) => /conversation_relay_start|transfer$/.test(exchange.url));
    expect(exchanges).toHaveLength(2);
    for (const exchange of exchanges) {
      const operation = operationOf(exchange.method, exchange.url);
      expect(
        telnyx.requestProblems(operation, {
          url: exchange.url,
          contentType: 'application/json',
          body: JSON.parse(exchange.requestBody!),
        }),
      ).toEqual([]);
      expect(
        telnyx.responseProblems(operation, {
          status: exchange.status,
          contentType: exchange.contentType,
          body: exchange.responseBody,
        }),
      ).toEqual([]);
    }
    sockets.close();
    server.close();
  });

  it('refuses a ConversationRelay start without a ws(s) URL, and a transfer to a number that is not E.164, as Telnyx does (422)', async () => {
    const receiver = await startWebhookReceiver();
    const dial = await twin.client.calls.dial({
      connection_id: TELNYX_TWIN_CONNECTION_ID,
      to: '+14155569531',
      from: caller,
      webhook_url: receiver.url(),
    });
    const id = dial.data!.call_control_id;
    await until(
      async () => receiver.of(id),
      (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.answered'),
    );
    await expect(
      twin.client.calls.actions.startConversationRelay(id, { url: 'https://example.com/relay' }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(twin.client.calls.actions.transfer(id, { to: '4155550100' })).rejects.toMatchObject({
      status: 422,
    });
    await twin.client.calls.actions.hangup(id, {});
  });
});
