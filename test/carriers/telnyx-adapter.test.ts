// The Telnyx adapter end to end (docs/features/carriers/telnyx.md), on the real servers: the API, a worker, Temporal and
// PostgreSQL, and the Telnyx twin (simulators/telnyx-twin/) as the carrier. Leads of campaigns whose caller number is
// bound to a telnyx-twin connection are dialed through the official SDK on Call Control; the twin's Ed25519-signed
// webhooks come back to the API, which walks the agent's script with speak and transcription commands. Every request
// the adapter sends passes through a recording proxy and is checked against Telnyx's published description.
import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createConnectionCarrier } from '../../lib/carriers/connection-carrier';
import { connectCarrier, removeCarrierConnection } from '../../lib/carrier-connections/connections';
import { OPENED_CONNECTION_TTL_MS } from '../../lib/carrier-connections/opened-connections';
import { createTelnyxCalls, TelnyxRequestError } from '../../lib/carriers/telnyx/telnyx-calls';
import { NO_ANSWER_TEXT, OPTED_OUT_LINES } from '../../lib/conversation/script-walk';
import { encodeClientState } from '../../lib/carriers/telnyx/telnyx-script';
import { telnyxWebhookUrl } from '../../lib/carriers/telnyx/telnyx-urls';
import { TELNYX_SPEAK_VOICES } from '../../lib/carriers/telnyx/telnyx-voices';
import { TELNYX_TWIN_API_KEY, TELNYX_TWIN_PRIVATE_KEY, TELNYX_TWIN_PUBLIC_KEY } from '../../lib/carriers/twin';
import type { Transcript } from '../../lib/calls/transcript';
import type { DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { VOICES } from '../../lib/voices/voices';
import { publicKeyBase64, signingKey, telnyxSignatureHeaders } from '../../simulators/telnyx-twin/signature';
import { TWIN_TIMES } from '../../simulators/twilio-twin/plan';
import { checkedFetch, startTestApi, type RunningApi, type TestApiDependencies } from '../support/api';
import { startTestCarrier } from '../support/carrier';
import {
  connectCallers,
  expectAnsweredWalk,
  expectThreeRungLadder,
  insertShoeShopAgent,
  recordDialingCall,
  said,
  startCarrierPath,
  startedAgentCampaign,
  withIntelligence as withIntelligenceOf,
} from '../support/carrier-calls';
import { carrierDescription } from '../support/carrier-openapi';
import { useTestDatabase } from '../support/database';
import { QUICK_LADDER } from '../support/ladders';
import { pushLeadWithWorkflow } from '../support/lead-workflows';
import { startRecordingProxy } from '../support/recording-proxy';
import { startTcpProxy } from '../support/tcp-proxy';
import {
  operationOf,
  OTHER_ACCOUNT,
  scriptTelnyxPersona,
  startTestTelnyxTwin,
  TELNYX_TWIN_CONNECTION_ID,
  telnyxTwinLog,
  telnyxTwinRecord,
} from '../support/telnyx-twin';
import { uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const keyring = keyringSchema.parse(newKeyringEntry('k1'));

// Twin time: a 60 s ring timeout 2.4 s, a person's 30 s of patience 1.2 s, a spoken word 16 ms. At half this scale a
// loaded machine's API sometimes commanded the answer's first words after the callee had hung up, in silence.
const twin = await startTestTelnyxTwin(db, { timeScale: 0.04 });
/** Everything the adapter sends to Telnyx, as sent, on its way to the twin. */
const recorder = await startRecordingProxy(new URL(twin.baseUrl).origin);
const simulated = await startTestCarrier(db);

const ACCOUNT_A = {
  apiKey: TELNYX_TWIN_API_KEY,
  connectionId: TELNYX_TWIN_CONNECTION_ID,
  publicKey: TELNYX_TWIN_PUBLIC_KEY,
  key: signingKey(TELNYX_TWIN_PRIVATE_KEY),
};
const otherKey = signingKey(OTHER_ACCOUNT.signingKey);
const ACCOUNT_B = {
  apiKey: OTHER_ACCOUNT.apiKeys[0]!,
  connectionId: OTHER_ACCOUNT.connections[0]!.id,
  publicKey: publicKeyBase64(otherKey),
  key: otherKey,
};
type Account = typeof ACCOUNT_A;

/**
 * An API and a worker on a task queue of their own, dialing through carrier connections (the simulated carrier for the
 * rest); the API on the script walk (CONVERSATION_ENGINE=gather), whose speak and transcription commands these tests read.
 */
const startPath = (
  taskQueue: string,
  publicBaseUrl?: string,
  questions?: Pick<TestApiDependencies, 'telnyxAnswerTimeoutMs' | 'sweepQuestionWaits'>,
) =>
  startCarrierPath(db, {
    url,
    temporal: { ...temporal, taskQueue },
    keyring,
    fallback: simulated.client,
    publicBaseUrl,
    api: { conversationEngine: 'gather', ...questions },
  });
const main = await startPath(temporal.taskQueue);
const api = main.api;

let numberSeq = 0;
const nextCaller = () => `+1415557${String(1000 + numberSeq++).slice(-4)}`;

async function telnyxWorkspace(account: Account, baseUrl = `${recorder.url}/v2`) {
  const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });
  const caller = nextCaller();
  const connection = await connectCallers(
    db,
    keyring,
    {
      workspaceId: owner.workspaceId,
      provider: 'telnyx-twin',
      baseUrl,
      account: {
        family: 'telnyx',
        connectionId: account.connectionId,
        secrets: { apiKey: account.apiKey, publicKey: account.publicKey },
      },
    },
    caller,
  );
  return { owner, connection, caller, account };
}

const A = await telnyxWorkspace(ACCOUNT_A);
const B = await telnyxWorkspace(ACCOUNT_B);

// A second twin, slower, for the questions' timeouts: a person's 30 s of patience 3 s, a spoken word 40 ms. At the
// first twin's scale a wait long enough to see a person begin answering on a loaded machine left too little of the
// person's patience (0.6 s) for the next question.
const SLOW_TIME_SCALE = 0.1;
const slowTwin = await startTestTelnyxTwin(db, { timeScale: SLOW_TIME_SCALE });
const slowRecorder = await startRecordingProxy(new URL(slowTwin.baseUrl).origin);
const C = await telnyxWorkspace(ACCOUNT_A, `${slowRecorder.url}/v2`);
type Side = typeof A;

const QUESTIONS = ['What colour would you like for the shoes?', 'How many pairs would you like?'];
const dictionary = await db.dictionary.create({
  data: { workspaceId: A.owner.workspaceId, name: 'Colours', terms: ['navy', 'crimson'], charCount: 11 },
});
// A pronunciation (docs/features/dictionaries.md#pronunciations): said through SSML to Telnyx's Polly voices.
const pronounced = await db.dictionary.create({
  data: { workspaceId: A.owner.workspaceId, name: 'Said', terms: ['shoe shop => shoo shop'], charCount: 22 },
});

async function runningCampaign(
  side: { owner: TestWorkspace; caller: string },
  options: {
    ladder?: DialLadder;
    questions?: string[];
    voicemailMessage?: string | null;
    via?: RunningApi;
    dictionaryId?: string;
  } = {},
) {
  const agent = await insertShoeShopAgent(db, side.owner.workspaceId, {
    questions: options.questions ?? [],
    voicemailMessage: options.voicemailMessage ?? null,
    ...(side.owner.workspaceId === A.owner.workspaceId && {
      dictionaries: { create: [{ dictionaryId: options.dictionaryId ?? dictionary.id, position: 0 }] },
    }),
  });
  return startedAgentCampaign(db, options.via ?? api, side.owner, {
    name: 'Telnyx',
    caller: side.caller,
    agentId: agent.id,
    ladder: options.ladder,
  });
}

const pushLead = (owner: TestWorkspace, campaignId: string, phone: string, path = main) =>
  pushLeadWithWorkflow(path.api, owner.key, path.temporal.client, campaignId, phone, { name: 'Ana' });

/** The calls the twin placed to a number (its own table). */
const twinCallsTo = (to: string) => telnyxTwinRecord(db).calls('"to" = $1', to);

/** The dials the adapter sent for a number, as the twin received them. */
const dialsTo = (to: string) =>
  recorder.exchanges
    .filter((exchange) => exchange.method === 'POST' && exchange.url === '/v2/calls' && exchange.body.includes(to))
    .map((exchange) => JSON.parse(exchange.body) as Record<string, unknown>);

const withIntelligence = (callId: string) => withIntelligenceOf(db, callId);

/** A webhook as Telnyx sends it, for a call of an attempt. */
function webhookBody(type: string, callControlId: string, attemptId: string, payload: Record<string, unknown> = {}) {
  return JSON.stringify({
    data: {
      event_type: type,
      id: randomUUID(),
      occurred_at: new Date().toISOString(),
      payload: {
        call_control_id: callControlId,
        call_leg_id: randomUUID(),
        call_session_id: randomUUID(),
        client_state: encodeClientState({ attemptId }),
        connection_id: TELNYX_TWIN_CONNECTION_ID,
        ...payload,
      },
      record_type: 'event',
    },
  });
}

/** Posts a webhook to the API; signed with `key` (at `timestamp`) unless raw headers are given. */
async function postWebhook(
  path: string,
  body: string,
  signing: { key: Account['key']; timestamp?: number } | { headers: Record<string, string> },
) {
  const headers = 'key' in signing ? telnyxSignatureHeaders(signing.key, body, signing.timestamp) : signing.headers;
  return checkedFetch(`${api.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

/** A call recorded as dialing on a connection, as the ladder leaves it after the dial, for webhooks sent by hand. */
async function dialingCallOn(side: Side, bound = true) {
  const callControlId = `v3:${randomUUID()}`;
  const call = await recordDialingCall(db, side, {
    provider: 'telnyx-twin',
    providerCallId: bound ? callControlId : null,
  });
  const path = new URL(telnyxWebhookUrl('http://api', { connectionId: side.connection.id, attemptId: call.attemptId }))
    .pathname;
  return { call, callControlId, path };
}

describe('a campaign on a telnyx-twin connection', () => {
  it('dials a lead through the SDK on Call Control; the signed webhooks end the call answered', async () => {
    const campaign = await runningCampaign(A, { dictionaryId: pronounced.id });
    const lead = await pushLead(A.owner, campaign.id, '+14155570101');
    expect(await lead.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    const [call] = await db.call.findMany({ where: { leadId: lead.leadId } });
    expect(call).toMatchObject({
      provider: 'telnyx-twin',
      carrierConnectionId: A.connection.id,
      status: 'ended',
      outcome: 'answered',
      carrierStatus: 'completed',
      answeredBy: 'human',
      fromNumber: A.caller,
    });
    expect(call!.providerCallId).toMatch(/^v3:/);
    expect(call!.durationMs).toBeGreaterThan(0);
    const events = await db.callEvent.findMany({ where: { callId: call!.id } });
    expect(events.map((event) => event.eventId)).toEqual(
      expect.arrayContaining([
        `${call!.providerCallId}:call.initiated`,
        `${call!.providerCallId}:call.answered`,
        `${call!.providerCallId}:call.hangup`,
        `${call!.providerCallId}:amd`,
      ]),
    );
    expect(new Set(events.map((event) => event.provider))).toEqual(new Set(['telnyx-twin']));
    // The dial as the twin received it: the product's webhook URL with the connection and the attempt, the attempt
    // as client_state and command_id.
    const [dial] = dialsTo('+14155570101');
    expect(dial).toEqual({
      connection_id: TELNYX_TWIN_CONNECTION_ID,
      to: '+14155570101',
      from: A.caller,
      webhook_url: `${api.baseUrl}/telephony/telnyx/${A.connection.id}/calls/${encodeURIComponent(call!.attemptId)}/webhook`,
      webhook_url_method: 'POST',
      client_state: Buffer.from(call!.attemptId).toString('base64'),
      command_id: call!.attemptId,
      timeout_secs: 60,
      time_limit_secs: 1800,
      answering_machine_detection: 'greeting_end',
    });
    const dialExchange = recorder.exchanges.find((exchange) => exchange.body.includes('+14155570101'))!;
    expect(dialExchange.headers.authorization).toBe(`Bearer ${ACCOUNT_A.apiKey}`);
    // The twin said the opening line and the closing in the mapped voice, and the product hung up after the closing;
    // the dictionary's pronunciation went as SSML (the twin reads the <sub>'s alias; its words are joined by spaces),
    // the transcript keeps the written form.
    const log = await telnyxTwinLog(twin.baseUrl, call!.providerCallId!);
    const opening = recorder.exchanges.find(
      (exchange) => exchange.url.endsWith('/actions/speak') && exchange.body.includes('Hello Ana'),
    );
    expect(JSON.parse(opening!.body)).toMatchObject({
      payload: '<speak>Hello Ana, this is the <sub alias="shoo shop">shoe shop</sub>.</speak>',
      payload_type: 'ssml',
    });
    expect(
      (
        await db.callTurn.findFirstOrThrow({
          where: { callId: call!.id, speaker: 'agent' },
          orderBy: [{ step: 'asc' }, { part: 'asc' }],
        })
      ).text,
    ).toBe('Hello Ana, this is the shoe shop.');
    expect(log.log.filter((entry) => entry.kind === 'say').map((entry) => [entry.text, entry.voice])).toEqual([
      ['Hello Ana, this is the shoo shop .', 'AWS.Polly.Joanna-Neural'],
      ['Thank you, goodbye.', 'AWS.Polly.Joanna-Neural'],
    ]);
    expect(log.log.at(-1)).toMatchObject({ kind: 'hangup', speaker: 'agent', text: 'normal_clearing' });
  });

  it('walks the three-rung ladder: busy and no-answer numbers three calls each, an answered one one, a machine voicemail, an unknown number invalid', async () => {
    const campaign = await runningCampaign(A, { ladder: QUICK_LADDER });
    await expectThreeRungLadder(db, (phone) => pushLead(A.owner, campaign.id, phone), '+1415557010');
    // One Telnyx call per attempt, no more.
    expect(await twinCallsTo('+14155570105')).toHaveLength(3);
    expect(await twinCallsTo('+14155570102')).toHaveLength(1);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
  });
});

describe("the agent's script walk on Call Control", () => {
  it('speaks each question and listens by transcription: the transcript is what the lead really answered', async () => {
    const campaign = await runningCampaign(A, { questions: QUESTIONS });
    await scriptTelnyxPersona(twin.baseUrl, {
      number: '+14155570201',
      answers: [
        { speech: "I'd like navy, please.", confidence: 0.93 },
        { speech: '3 pairs.', confidence: 0.88 },
      ],
    });
    const lead = await pushLead(A.owner, campaign.id, '+14155570201');
    expect(await lead.handle.result()).toMatchObject({ outcome: 'answered' });
    const call = await db.call.findFirstOrThrow({ where: { leadId: lead.leadId } });
    const done = await withIntelligence(call.id);
    const transcript = done.transcript as Transcript;
    expectAnsweredWalk(transcript, {
      agent: ['Hello Ana, this is the shoe shop.', ...QUESTIONS, 'Thank you, goodbye.'],
      lead: [
        { text: "I'd like navy, please.", confidence: 0.93 },
        { text: '3 pairs.', confidence: 0.88 },
      ],
    });
    // What the twin heard and said is the transcript; it listened with the agent's dictionaries as hints.
    const log = await telnyxTwinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === 'speech').map((entry) => entry.text)).toEqual(
      said(transcript, 'lead'),
    );
    expect(log.log.filter((entry) => entry.kind === 'say').map((entry) => entry.text)).toEqual(
      said(transcript, 'agent'),
    );
    const start = recorder.exchanges.find(
      (exchange) =>
        exchange.url.endsWith('/actions/transcription_start') &&
        exchange.url.includes(call.providerCallId!.slice(3, 20)),
    );
    expect(JSON.parse(start!.body)).toMatchObject({
      transcription_engine: 'Google',
      transcription_engine_config: { transcription_engine: 'Google', language: 'en', hints: ['navy', 'crimson'] },
    });
    const intelligence = done.intelligence as { extraction: Record<string, { value: unknown }> };
    expect(intelligence.extraction.colour!.value).toBe('navy');
    expect(intelligence.extraction.pairs!.value).toBe(3);
  });

  it('hears an opt-out in any language the rules know: the opted-out line, the hang-up, opted_out, the number listed', async () => {
    const phone = '+14155570202';
    const campaign = await runningCampaign(A, { questions: QUESTIONS });
    await scriptTelnyxPersona(twin.baseUrl, {
      number: phone,
      answers: ['No me vuelva a llamar, por favor.', '3 pairs.'],
    });
    const lead = await pushLead(A.owner, campaign.id, phone);
    expect(await lead.handle.result()).toMatchObject({ status: 'completed', outcome: 'opted_out', attempts: 1 });
    const call = await db.call.findFirstOrThrow({ where: { leadId: lead.leadId } });
    expect(call.outcome).toBe('opted_out');
    expect(
      await db.doNotCall.findUnique({ where: { workspaceId_phone: { workspaceId: A.owner.workspaceId, phone } } }),
    ).toMatchObject({ source: 'spoken_opt_out', callId: call.id });
    const transcript = (await withIntelligence(call.id)).transcript as Transcript;
    // An English agent: it answers in English, and asks nothing more.
    expect(said(transcript, 'agent')).toEqual(['Hello Ana, this is the shoe shop.', QUESTIONS[0], OPTED_OUT_LINES.en]);
    const log = await telnyxTwinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === 'say').map((entry) => entry.text)).toEqual(
      said(transcript, 'agent'),
    );
  });

  it("leaves the agent's message after a machine's greeting, then hangs up: voicemail_left", async () => {
    const message = 'Hi {{name}}, this is the shoe shop: please call us back.';
    const campaign = await runningCampaign(A, { questions: QUESTIONS, voicemailMessage: message });
    const lead = await pushLead(A.owner, campaign.id, '+14155570207');
    expect(await lead.handle.result()).toMatchObject({ outcome: 'voicemail_left' });
    const call = await db.call.findFirstOrThrow({ where: { leadId: lead.leadId } });
    expect(call).toMatchObject({ outcome: 'voicemail_left', answeredBy: 'machine' });
    expect(call.voicemailLeftAt).not.toBeNull();
    const log = await telnyxTwinLog(twin.baseUrl, call.providerCallId!);
    const greetingEnd = log.log.find(
      (entry) => entry.kind === 'amd' && entry.text?.startsWith('call.machine.greeting.ended'),
    )!;
    const says = log.log.filter((entry) => entry.kind === 'say');
    // Only the message: the script is never said to a machine.
    expect(says.map((entry) => entry.text)).toEqual(['Hi Ana, this is the shoe shop: please call us back.']);
    expect(says[0]!.atMs).toBeGreaterThanOrEqual(greetingEnd.atMs);
    expect(log.log.at(-1)).toMatchObject({ kind: 'hangup', speaker: 'agent' });
    const done = await withIntelligence(call.id);
    expect(said(done.transcript as Transcript, 'agent')).toEqual([
      'Hi Ana, this is the shoe shop: please call us back.',
    ]);
  });

  it('without a message, hangs up at the greeting end: plain voicemail', async () => {
    const campaign = await runningCampaign(A, { questions: QUESTIONS });
    const lead = await pushLead(A.owner, campaign.id, '+14155570217');
    expect(await lead.handle.result()).toMatchObject({ outcome: 'voicemail' });
    const call = await db.call.findFirstOrThrow({ where: { leadId: lead.leadId } });
    expect(call).toMatchObject({ outcome: 'voicemail', voicemailLeftAt: null, answeredBy: 'machine' });
    const log = await telnyxTwinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === 'say')).toEqual([]);
    expect(log.log.at(-1)).toMatchObject({ kind: 'hangup', speaker: 'agent' });
  });

  it('maps every catalogue voice to a Telnyx voice of the voice’s language', () => {
    for (const voice of VOICES) {
      expect(TELNYX_SPEAK_VOICES[voice.id]?.voice, voice.id).toMatch(/^AWS\.Polly\.[A-Za-z]+-Neural$/);
      expect(TELNYX_SPEAK_VOICES[voice.id]?.language, voice.id).toBe(voice.language);
    }
  });
});

describe('a question nobody answers', () => {
  // Two API processes that time questions, both sweeping (the main API does not: its 6 s outlast the first twin's
  // people). The wait is 1 s on the slow twin: its people begin answering 60 ms after a question, their first word
  // heard 40 ms later, and hang up after 3-3.9 s of silence. The API that receives the webhooks sweeps as in
  // production (woken by the waits it arms); the other looks every 10 ms, to race it for each wait.
  const ANSWER_TIMEOUT_MS = 1_000;
  const timed = startPath(uniqueTaskQueue('telnyx-question-waits'), undefined, {
    telnyxAnswerTimeoutMs: ANSWER_TIMEOUT_MS,
    sweepQuestionWaits: {},
  });
  const otherSweeper = startTestApi({
    db,
    url,
    temporal,
    carrierKeyring: keyring,
    telnyxAnswerTimeoutMs: ANSWER_TIMEOUT_MS,
    sweepQuestionWaits: { idlePollMs: 10 },
    conversationEngine: 'gather',
  });

  /** The speak commands the adapter sent on a call with that command_id (a question said twice would be sent twice). */
  const speaksSent = (callControlId: string, commandId: string) =>
    [...recorder.exchanges, ...slowRecorder.exchanges].filter(
      (exchange) =>
        exchange.url.endsWith('/actions/speak') &&
        exchange.url.includes(callControlId.slice(3)) &&
        (JSON.parse(exchange.body) as { command_id?: string }).command_id === commandId,
    );

  it('goes on with (no answer) after the timeout, as Twilio does, and reaches the closing', async () => {
    const path = await timed;
    await otherSweeper;
    const campaign = await runningCampaign(C, { questions: QUESTIONS, via: path.api });
    await scriptTelnyxPersona(slowTwin.baseUrl, { number: '+14155570291', answers: [null, '3 pairs.'] });
    const lead = await pushLead(C.owner, campaign.id, '+14155570291', path);
    expect(await lead.handle.result()).toMatchObject({ outcome: 'answered' });
    const call = await db.call.findFirstOrThrow({ where: { leadId: lead.leadId } });
    const done = await withIntelligence(call.id);
    const transcript = done.transcript as Transcript;
    expect(said(transcript, 'lead')).toEqual([NO_ANSWER_TEXT, '3 pairs.']);
    expect(said(transcript, 'agent')).toEqual([
      'Hello Ana, this is the shoe shop.',
      ...QUESTIONS,
      'Thank you, goodbye.',
    ]);
    expect(transcript.find((turn) => turn.text === NO_ANSWER_TEXT)).not.toHaveProperty('confidence');
    const intelligence = done.intelligence as { extraction: Record<string, { value: unknown }> };
    expect(intelligence.extraction.colour!.value).toBeNull();
    expect(intelligence.extraction.pairs!.value).toBe(3);
    // The twin: the person kept silent after question 1; each question said once, in order, the second one the
    // timeout later (in twin time); the product hung up after the closing, not the person out of patience.
    const log = await telnyxTwinLog(slowTwin.baseUrl, call.providerCallId!);
    const says = log.log.filter((entry) => entry.kind === 'say');
    expect(says.map((entry) => entry.text)).toEqual(said(transcript, 'agent'));
    expect(log.log.filter((entry) => entry.kind === 'silence')).toHaveLength(1);
    expect(log.log.at(-1)).toMatchObject({ kind: 'hangup', speaker: 'agent', text: 'normal_clearing' });
    const firstQuestionEndMs = log.log.find((entry) => entry.kind === 'silence')!.atMs - TWIN_TIMES.answerDelayMs;
    expect(says[2]!.atMs - firstQuestionEndMs).toBeGreaterThanOrEqual(ANSWER_TIMEOUT_MS / SLOW_TIME_SCALE);
    // Two API processes swept: question 2 was commanded once (by whichever claimed the wait).
    expect(speaksSent(call.providerCallId!, 'speak:1:0')).toHaveLength(1);
    // Question 2's wait, answered in time, lapses and is cleared, not walked.
    const lapsed = await until(
      () => db.callQuestionWait.findUniqueOrThrow({ where: { callId: call.id } }),
      (wait) => wait.dueAt === null,
    );
    expect(lapsed.step).toBe(2);
    const leadTurns = await db.callTurn.findMany({
      where: { callId: call.id, speaker: 'lead' },
      orderBy: { step: 'asc' },
    });
    expect(leadTurns.map((turn) => turn.text)).toEqual([NO_ANSWER_TEXT, '3 pairs.']);
  });

  it('waits out an answer longer than the timeout once speech has begun (interim results), as Twilio waits for a pause', async () => {
    const path = await timed;
    const campaign = await runningCampaign(C, { questions: QUESTIONS, via: path.api });
    // 40 words: 16 s of twin time, 1.6 s here, longer than the 1 s wait; begun 0.6 s (60 ms) after the question.
    const long = `Navy, ${Array.from({ length: 39 }, () => 'really').join(' ')}.`;
    await scriptTelnyxPersona(slowTwin.baseUrl, { number: '+14155570292', answers: [long, '3 pairs.'] });
    const lead = await pushLead(C.owner, campaign.id, '+14155570292', path);
    expect(await lead.handle.result()).toMatchObject({ outcome: 'answered' });
    const call = await db.call.findFirstOrThrow({ where: { leadId: lead.leadId } });
    const transcript = (await withIntelligence(call.id)).transcript as Transcript;
    expect(said(transcript, 'lead')).toEqual([long, '3 pairs.']);
    expect(said(transcript, 'agent')).toEqual([
      'Hello Ana, this is the shoe shop.',
      ...QUESTIONS,
      'Thank you, goodbye.',
    ]);
  });

  it('a transcript that comes after the timeout walked on changes nothing; the next question is answered as usual', async () => {
    const path = await timed;
    const { call, callControlId, path: webhookPath } = await dialingCallOn(A);
    const agent = await db.agent.create({
      data: {
        workspaceId: A.owner.workspaceId,
        name: 'Late',
        language: 'en-US',
        voiceId: 'espeak-ng/en-us',
        script: { openingLine: 'Hello.', questions: QUESTIONS, closing: 'Thank you, goodbye.' },
      },
    });
    await db.call.update({ where: { id: call.id }, data: { agentId: agent.id } });
    const send = async (type: string, step: number, payload: Record<string, unknown>) => {
      const body = webhookBody(type, callControlId, call.attemptId, {
        client_state: encodeClientState({ attemptId: call.attemptId, step }),
        ...payload,
      });
      const response = await checkedFetch(`${path.api.baseUrl}${webhookPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...telnyxSignatureHeaders(ACCOUNT_A.key, body) },
        body,
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { applied: boolean }).applied;
    };
    const turns = () =>
      db.callTurn.findMany({ where: { callId: call.id }, orderBy: [{ step: 'asc' }, { part: 'asc' }] });
    // Question 1 has been said: its wait begins; nothing is stored before the timeout.
    const armedAt = Date.now();
    expect(await send('call.speak.ended', 1, { status: 'completed' })).toBe(true);
    expect(await turns()).toEqual([]);
    const walked = await until(turns, (stored) => stored.length > 0);
    expect(Date.now() - armedAt).toBeGreaterThanOrEqual(ANSWER_TIMEOUT_MS);
    expect(walked.map((turn) => [turn.step, turn.part, turn.speaker, turn.text, turn.confidence])).toEqual([
      [1, 0, 'lead', NO_ANSWER_TEXT, null],
      [1, 2, 'agent', QUESTIONS[1], null],
    ]);
    // Walked once, though two API processes sweep: question 2 commanded once. The walk stores its turns before it
    // sends its commands: the speak is waited for first.
    await until(
      async () => speaksSent(callControlId, 'speak:1:0').length,
      (sent) => sent > 0,
    );
    expect(speaksSent(callControlId, 'speak:1:0')).toHaveLength(1);
    // Late: the answer to question 1, and question 1's speak ending again; neither stores, moves nor arms anything.
    expect(
      await send('call.transcription', 1, {
        transcription_data: { transcript: 'Navy.', confidence: 0.9, is_final: true },
      }),
    ).toBe(false);
    expect(await send('call.speak.ended', 1, { status: 'completed' })).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 2 * ANSWER_TIMEOUT_MS));
    expect(await turns()).toEqual(walked);
    expect(await db.callQuestionWait.findUniqueOrThrow({ where: { callId: call.id } })).toMatchObject({
      step: 1,
      dueAt: null,
    });
    // Question 2, said and answered in time: its answer, then the closing; its wait lapses unwalked.
    expect(await send('call.speak.ended', 2, { status: 'completed' })).toBe(true);
    expect(
      await send('call.transcription', 2, {
        transcription_data: { transcript: '3 pairs.', confidence: 0.8, is_final: true },
      }),
    ).toBe(true);
    await until(
      () => db.callQuestionWait.findUniqueOrThrow({ where: { callId: call.id } }),
      (wait) => wait.dueAt === null,
    );
    expect((await turns()).slice(2).map((turn) => [turn.step, turn.part, turn.text])).toEqual([
      [2, 0, '3 pairs.'],
      [2, 2, 'Thank you, goodbye.'],
    ]);
  });
});

describe('webhooks', () => {
  it('refuses unsigned, badly signed, stale and other-key webhooks with 401, and nothing changes', async () => {
    const { call, callControlId, path } = await dialingCallOn(A);
    const body = webhookBody('call.answered', callControlId, call.attemptId, { state: 'answered' });
    const now = Math.floor(Date.now() / 1000);
    const good = telnyxSignatureHeaders(ACCOUNT_A.key, body, now);
    const attempts: Array<Parameters<typeof postWebhook>[2]> = [
      { headers: {} },
      { headers: { 'telnyx-timestamp': String(now) } },
      { headers: { ...good, 'telnyx-signature-ed25519': Buffer.alloc(64, 1).toString('base64') } },
      // Signed for another body, or another time.
      { headers: telnyxSignatureHeaders(ACCOUNT_A.key, `${body} `, now) },
      { headers: { ...good, 'telnyx-timestamp': String(now + 1) } },
      // Stale: a captured webhook replayed ten minutes later, or one from the future.
      { key: ACCOUNT_A.key, timestamp: now - 600 },
      { key: ACCOUNT_A.key, timestamp: now + 600 },
      // Another account's key.
      { key: ACCOUNT_B.key },
    ];
    for (const signing of attempts) {
      const response = await postWebhook(path, body, signing);
      expect(response.status, JSON.stringify(signing)).toBe(401);
      expect(await response.json()).toMatchObject({ error: 'invalid_signature' });
    }
    expect(await db.callEvent.count({ where: { callId: call.id } })).toBe(0);
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({ carrierStatus: 'queued' });
    // The same webhook signed now is taken.
    expect((await postWebhook(path, body, { key: ACCOUNT_A.key })).status).toBe(200);
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({ carrierStatus: 'in-progress' });
  });

  it('refuses the webhooks of a removed connection, or of a Twilio connection, with 401', async () => {
    const gone = await connectCarrier(db, keyring, {
      workspaceId: A.owner.workspaceId,
      provider: 'telnyx-twin',
      baseUrl: `${recorder.url}/v2`,
      account: {
        family: 'telnyx',
        connectionId: ACCOUNT_A.connectionId,
        secrets: { apiKey: ACCOUNT_A.apiKey, publicKey: ACCOUNT_A.publicKey },
      },
    });
    const path = new URL(telnyxWebhookUrl('http://api', { connectionId: gone.id, attemptId: 'x:1' })).pathname;
    const body = webhookBody('call.initiated', 'v3:gone', 'x:1');
    expect((await postWebhook(path, body, { key: ACCOUNT_A.key })).status).toBe(404);
    await removeCarrierConnection(db, gone.id);
    // The API keeps an opened connection for OPENED_CONNECTION_TTL_MS (lib/carrier-connections/opened-connections.ts).
    await until(
      async () => (await postWebhook(path, body, { key: ACCOUNT_A.key })).status,
      (status) => status === 401,
      OPENED_CONNECTION_TTL_MS + 5_000,
    );
  });

  it('records duplicate, out-of-order and late webhooks applied: false, and they change nothing', async () => {
    const { call, callControlId, path } = await dialingCallOn(A);
    const send = async (body: string) => {
      const response = await postWebhook(path, body, { key: ACCOUNT_A.key });
      expect(response.status).toBe(200);
      return ((await response.json()) as { applied: boolean }).applied;
    };
    const answered = webhookBody('call.answered', callControlId, call.attemptId);
    expect(await send(answered)).toBe(true);
    // The same webhook delivered again (Telnyx: "identical webhooks may occasionally be delivered").
    expect(await send(answered)).toBe(false);
    // A copy with another id of the same event: the call's answer is recorded once.
    expect(await send(webhookBody('call.answered', callControlId, call.attemptId))).toBe(false);
    // call.initiated arriving after the answer: out of order.
    expect(await send(webhookBody('call.initiated', callControlId, call.attemptId))).toBe(false);
    expect(
      await send(webhookBody('call.machine.detection.ended', callControlId, call.attemptId, { result: 'machine' })),
    ).toBe(true);
    expect(
      await send(
        webhookBody('call.hangup', callControlId, call.attemptId, {
          hangup_cause: 'normal_clearing',
          hangup_source: 'callee',
          sip_hangup_cause: '200',
        }),
      ),
    ).toBe(true);
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({
      status: 'ended',
      outcome: 'voicemail',
      carrierStatus: 'completed',
      answeredBy: 'machine',
    });
    // Late: a second end, a detection result, a greeting end and a transcription after the end change nothing and
    // command nothing.
    const commandsBefore = recorder.exchanges.length;
    expect(await send(webhookBody('call.hangup', callControlId, call.attemptId, { hangup_cause: 'user_busy' }))).toBe(
      false,
    );
    expect(
      await send(webhookBody('call.machine.detection.ended', callControlId, call.attemptId, { result: 'human' })),
    ).toBe(false);
    expect(
      await send(
        webhookBody('call.machine.greeting.ended', callControlId, call.attemptId, { result: 'beep_detected' }),
      ),
    ).toBe(false);
    const transcription = JSON.parse(
      webhookBody('call.transcription', callControlId, call.attemptId, {
        client_state: encodeClientState({ attemptId: call.attemptId, step: 1 }),
        transcription_data: { transcript: 'Navy.', confidence: 0.9, is_final: true },
      }),
    ) as object;
    expect(await send(JSON.stringify(transcription))).toBe(false);
    expect(recorder.exchanges.length).toBe(commandsBefore);
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({
      outcome: 'voicemail',
      carrierStatus: 'completed',
      answeredBy: 'machine',
    });
    expect(await db.callTurn.count({ where: { callId: call.id } })).toBe(0);
    // Another call_control_id for an attempt already bound to its call: not this attempt's call.
    expect(
      (await postWebhook(path, webhookBody('call.initiated', 'v3:another', call.attemptId), { key: ACCOUNT_A.key }))
        .status,
    ).toBe(404);
    // A client_state naming another attempt: not this attempt's webhook.
    const crossed = webhookBody('call.answered', callControlId, call.attemptId, {
      client_state: encodeClientState({ attemptId: 'another:1' }),
    });
    expect((await postWebhook(path, crossed, { key: ACCOUNT_A.key })).status).toBe(404);
  });

  it('binds the call_control_id to an attempt whose dial answer was lost by its first webhook', async () => {
    const { call, path } = await dialingCallOn(A, false);
    const callControlId = `v3:${randomUUID()}`;
    expect(
      (await postWebhook(path, webhookBody('call.initiated', callControlId, call.attemptId), { key: ACCOUNT_A.key }))
        .status,
    ).toBe(200);
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({
      providerCallId: callControlId,
      carrierStatus: 'queued',
    });
  });

  it("never crosses workspaces: a webhook signed with workspace A's key for B's call is refused", async () => {
    const theirs = await dialingCallOn(B);
    const body = webhookBody('call.hangup', theirs.callControlId, theirs.call.attemptId, {
      hangup_cause: 'normal_clearing',
    });
    // B's call on A's connection's path, signed by A: A's signature is good, the call is not A's.
    const onA = theirs.path.replace(B.connection.id, A.connection.id);
    const crossed = await postWebhook(onA, body, { key: ACCOUNT_A.key });
    expect(crossed.status).toBe(404);
    expect(await crossed.json()).toMatchObject({ error: 'unknown_call' });
    // B's call on B's path, signed by A: the signature is not B's.
    expect((await postWebhook(theirs.path, body, { key: ACCOUNT_A.key })).status).toBe(401);
    expect(await db.call.findUniqueOrThrow({ where: { id: theirs.call.id } })).toMatchObject({
      status: 'dialing',
      carrierStatus: 'queued',
    });
    // Signed by B, it is applied.
    expect((await postWebhook(theirs.path, body, { key: ACCOUNT_B.key })).status).toBe(200);
    expect(await db.call.findUniqueOrThrow({ where: { id: theirs.call.id } })).toMatchObject({
      status: 'ended',
      outcome: 'answered',
    });
  });

  it("places workspace B's calls with B's key and connection, and takes its twin's webhooks signed with B's key", async () => {
    const campaign = await runningCampaign(B);
    const lead = await pushLead(B.owner, campaign.id, '+14155570301');
    expect(await lead.handle.result()).toMatchObject({ outcome: 'answered', attempts: 1 });
    const [dial] = dialsTo('+14155570301');
    expect(dial).toMatchObject({ connection_id: ACCOUNT_B.connectionId, from: B.caller });
    const exchange = recorder.exchanges.find((candidate) => candidate.body.includes('+14155570301'))!;
    expect(exchange.headers.authorization).toBe(`Bearer ${ACCOUNT_B.apiKey}`);
    const [onTwin] = await twinCallsTo('+14155570301');
    expect(onTwin!.account).toBe(OTHER_ACCOUNT.id);
  });
});

describe('a dial whose answer is lost', () => {
  it('ends with exactly one Telnyx call for the attempt: the retried dial, with the same command_id, places nothing and answers the call', async () => {
    // Telnyx's side: requests reach the twin, answers can be dropped. The API's side, as Telnyx reaches it: cut, so
    // that no webhook binds the call before the dial's retry.
    const carrierProxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(recorder.url).port) });
    let apiPort = 0;
    const apiProxy = await startTcpProxy(() => ({ host: '127.0.0.1', port: apiPort }));
    const lost = await startPath(uniqueTaskQueue('telnyx-lost-answer'), `http://127.0.0.1:${apiProxy.port}`);
    apiPort = Number(new URL(lost.api.baseUrl).port);
    const side = await telnyxWorkspace(ACCOUNT_A, `http://127.0.0.1:${carrierProxy.port}/v2`);
    const campaign = await runningCampaign(side, { via: lost.api });
    await carrierProxy.dropAnswers();
    await apiProxy.cut();
    const to = '+14155570123';
    const lead = await pushLead(side.owner, campaign.id, to, lost);
    // The twin placed the call; its answer never reached the adapter.
    await until(
      async () => dialsTo(to),
      (dials) => dials.length === 1,
    );
    expect(await twinCallsTo(to)).toHaveLength(1);
    await carrierProxy.restore();
    const bound = await until(
      () => db.call.findFirst({ where: { leadId: lead.leadId } }),
      (call) => call?.providerCallId != null,
    );
    const [onTwin] = await twinCallsTo(to);
    expect(bound!.providerCallId).toBe(onTwin!.callControlId);
    // The retry sent the same dial (same command_id); the twin placed nothing more.
    const dials = dialsTo(to);
    expect(dials.length).toBeGreaterThanOrEqual(2);
    expect(new Set(dials.map((dial) => dial.command_id))).toEqual(new Set([bound!.attemptId]));
    await apiProxy.restore();
    const result = await lead.handle.result();
    expect(result.attempts).toBe(1);
    expect(await twinCallsTo(to)).toHaveLength(1);
    expect(await db.call.findMany({ where: { leadId: lead.leadId } })).toEqual([
      expect.objectContaining({ status: 'ended', providerCallId: onTwin!.callControlId, provider: 'telnyx-twin' }),
    ]);
  });
});

describe('hang-up and lookup', () => {
  it('hangs up a ringing call with actions/hangup (command_id hangup), and reads it back by RetrieveCallStatus', async () => {
    const carrier = createConnectionCarrier({ db, keyring, fallback: simulated.client, publicBaseUrl: api.baseUrl });
    const campaign = await runningCampaign(A);
    // Last digit 6: rings until the 60 s ring timeout (1.2 s of twin time).
    const lead = await pushLead(A.owner, campaign.id, '+14155570406');
    const call = await until(
      () => db.call.findFirst({ where: { leadId: lead.leadId } }),
      (found) => found?.providerCallId != null,
    );
    const id = call!.providerCallId!;
    expect(await carrier.lookup({ providerCallId: id })).toMatchObject({ providerCallId: id, durationMs: null });
    await carrier.hangup(id);
    // Hung up again (a stop after the script's end): the same command_id, nothing more happens.
    await carrier.hangup(id);
    expect(await lead.handle.result()).toMatchObject({ outcome: 'no_answer', attempts: 1 });
    expect(await db.call.findUniqueOrThrow({ where: { id: call!.id } })).toMatchObject({ carrierStatus: 'canceled' });
    const [onTwin] = await twinCallsTo('+14155570406');
    expect(onTwin).toMatchObject({ hangupCause: 'originator_cancel' });
    const hangups = recorder.exchanges.filter(
      (exchange) => exchange.url.endsWith('/actions/hangup') && exchange.url.includes(id.slice(3)),
    );
    expect(hangups.map((exchange) => JSON.parse(exchange.body) as unknown)).toEqual([
      { command_id: 'hangup' },
      { command_id: 'hangup' },
    ]);
    // Ended and never answered: no-answer to reconciliation.
    expect(await carrier.lookup({ providerCallId: id })).toMatchObject({ status: 'no-answer', durationMs: null });
    // After the end, a hang-up is left alone.
    await expect(carrier.hangup(id)).resolves.toBeUndefined();
  });
});

describe('a request to Telnyx that fails', () => {
  it('rejects with what failed and nothing of the request: no API key for a log to keep', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(recorder.url).port) });
    await proxy.dropAnswers();
    const connectionOf = (baseUrl: string, apiKey: string) => ({
      id: A.connection.id,
      workspaceId: A.owner.workspaceId,
      label: 'twin',
      provider: 'telnyx-twin' as const,
      baseUrl,
      connectionId: ACCOUNT_A.connectionId,
      secrets: { apiKey, publicKey: ACCOUNT_A.publicKey },
    });
    const calls = createTelnyxCalls(connectionOf(`http://127.0.0.1:${proxy.port}/v2`, ACCOUNT_A.apiKey), {
      publicBaseUrl: api.baseUrl,
    });
    const failed = await calls.fetch('v3:nothing', 'x:1').catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(TelnyxRequestError);
    expect(failed).toMatchObject({ status: undefined });
    expect(inspect(failed, { depth: 20, showHidden: true })).not.toContain(ACCOUNT_A.apiKey);
    // Telnyx's own refusal keeps its status and code: an unknown key is 401, 10009.
    await proxy.restore();
    const refused = await createTelnyxCalls(connectionOf(`${recorder.url}/v2`, 'KEYnot_the_key_of_a'), {
      publicBaseUrl: api.baseUrl,
    })
      .fetch('v3:nothing', 'x:1')
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ name: 'TelnyxRequestError', status: 401, code: '10009' });
    expect(inspect(refused, { depth: 20, showHidden: true })).not.toContain('KEYnot_the_key_of_a');
  });
});

describe("Telnyx's description", () => {
  it('finds every request the adapter sent (dial, speak, transcription_start, hangup) as Telnyx describes it', () => {
    const telnyx = carrierDescription('telnyx');
    const seen = new Set<string>();
    expect(recorder.exchanges.length).toBeGreaterThan(20);
    for (const exchange of [...recorder.exchanges, ...slowRecorder.exchanges]) {
      const target = `http://twin${exchange.url}`;
      const operation = operationOf(exchange.method, target);
      seen.add(`${operation.method} ${operation.path}`);
      expect(
        telnyx.requestProblems(operation, {
          url: target,
          contentType: exchange.headers['content-type'],
          body: exchange.body ? JSON.parse(exchange.body) : undefined,
        }),
        `${exchange.method} ${exchange.url} ${exchange.body}`,
      ).toEqual([]);
    }
    expect(seen).toEqual(
      new Set([
        'post /calls',
        'post /calls/{call_control_id}/actions/speak',
        'post /calls/{call_control_id}/actions/transcription_start',
        'post /calls/{call_control_id}/actions/hangup',
        'get /calls/{call_control_id}',
      ]),
    );
  });
});
