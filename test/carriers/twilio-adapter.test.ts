// The Twilio adapter end to end (docs/features/carriers/twilio.md), on the real servers: the API, a worker, Temporal
// and PostgreSQL, and the Twilio twin (simulators/twilio-twin/) as the carrier. Leads of campaigns whose caller number
// is bound to a twilio-twin connection are dialed through the official SDK; the twin's signed callbacks and TwiML
// requests come back to the API. Every request the adapter sends passes through a recording proxy and is checked
// against Twilio's published description.
import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { createConnectionCarrier } from '../../lib/carriers/connection-carrier';
import {
  connectCarrier,
  removeCarrierConnection,
  rotateCarrierSecrets,
} from '../../lib/carrier-connections/connections';
import { OPENED_CONNECTION_TTL_MS } from '../../lib/carrier-connections/opened-connections';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import { AmbiguousAttemptError, createTwilioCalls, TwilioRequestError } from '../../lib/carriers/twilio/twilio-calls';
import { twilioCallbackUrl } from '../../lib/carriers/twilio/twilio-urls';
import type { DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { checkedFetch, startTestApi, type RunningApi } from '../support/api';
import { startTestCarrier } from '../support/carrier';
import {
  connectCallers,
  expectThreeRungLadder,
  recordDialingCall,
  startCarrierPath,
  startedAgentCampaign,
} from '../support/carrier-calls';
import { carrierDescription, type OperationRef } from '../support/carrier-openapi';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';
import { pushLeadWithWorkflow, startedLeadWorkflow } from '../support/lead-workflows';
import { startRecordingProxy } from '../support/recording-proxy';
import { startTcpProxy } from '../support/tcp-proxy';
import { uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { startProductStandIn, startTestTwilioTwin, twilioTwinRecord } from '../support/twilio-twin';
import { until } from '../support/until';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const keyring = keyringSchema.parse(newKeyringEntry('k1'));

const ACCOUNT_A = { sid: TWILIO_TWIN_ACCOUNT_SID, authToken: TWILIO_TWIN_AUTH_TOKEN };
const ACCOUNT_B = { sid: `AC${'b0'.repeat(16)}`, authToken: 'account-b-auth-token-not-a-secret' };
/** An account that may call only from the one number it owns: Twilio refuses any other From (21210). */
const C_OWNED = '+14155569990';
const ACCOUNT_C = { sid: `AC${'c0'.repeat(16)}`, authToken: 'account-c-auth-token-not-a-secret' };
/** An account whose Voice Geographic Permissions enable +1 only: Twilio refuses any other destination (21215). */
const ACCOUNT_G = { sid: `AC${'e0'.repeat(16)}`, authToken: 'account-g-auth-token-not-a-secret' };
/** An account the product reaches with an API key pair (REST); Twilio still signs its callbacks with its auth token. */
const ACCOUNT_K = {
  sid: `AC${'d0'.repeat(16)}`,
  authToken: 'account-k-auth-token-not-a-secret',
  apiKey: { sid: `SK${'d1'.repeat(16)}`, secret: 'account-k-api-key-secret-not-a-secret' },
};
// Twin time: ringing 0.1 s before an answer, a 60 s ring timeout 1.2 s, a spoken word 8 ms.
const twin = await startTestTwilioTwin(db, {
  timeScale: 0.02,
  accounts: [
    { sid: ACCOUNT_A.sid, authToken: ACCOUNT_A.authToken },
    { sid: ACCOUNT_B.sid, authToken: ACCOUNT_B.authToken },
    { sid: ACCOUNT_C.sid, authToken: ACCOUNT_C.authToken, callerIds: [C_OWNED] },
    { sid: ACCOUNT_K.sid, authToken: ACCOUNT_K.authToken, apiKeys: [ACCOUNT_K.apiKey] },
    { sid: ACCOUNT_G.sid, authToken: ACCOUNT_G.authToken, geoPermissions: ['+1'] },
  ],
});
/** Everything the adapter sends to Twilio, as sent, on its way to the twin. */
const recorder = await startRecordingProxy(twin.baseUrl);
const simulated = await startTestCarrier(db);

/**
 * An API and a worker on a task queue of their own, dialing through carrier connections (and the simulated carrier for
 * the rest); the API on the script walk's speech Gathers (CONVERSATION_ENGINE=gather), whose TwiML these tests read.
 */
const startPath = (taskQueue: string, publicBaseUrl?: string) =>
  startCarrierPath(db, {
    url,
    temporal: { ...temporal, taskQueue },
    keyring,
    fallback: simulated.client,
    publicBaseUrl,
    statusCallbackEvents: ['ringing', 'in-progress'],
    api: { conversationEngine: 'gather' },
  });
const main = await startPath(temporal.taskQueue);
const api = main.api;

let numberSeq = 0;
/** A caller number of its own for each connection: From is what tells one campaign's Twilio calls from another's. */
const nextCaller = () => `+1415556${String(1000 + numberSeq++).slice(-4)}`;

async function twilioWorkspace(
  account: { sid: string; authToken: string; apiKey?: { sid: string; secret: string } },
  baseUrl = recorder.url,
) {
  const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });
  const caller = nextCaller();
  const connection = await connectCallers(
    db,
    keyring,
    {
      workspaceId: owner.workspaceId,
      provider: 'twilio-twin',
      baseUrl,
      account: account.apiKey
        ? {
            family: 'twilio',
            accountSid: account.sid,
            apiKeySid: account.apiKey.sid,
            secrets: { apiKeySecret: account.apiKey.secret, authToken: account.authToken },
          }
        : { family: 'twilio', accountSid: account.sid, secrets: { authToken: account.authToken } },
    },
    caller,
  );
  return { owner, connection, caller };
}

const A = await twilioWorkspace(ACCOUNT_A);
const B = await twilioWorkspace(ACCOUNT_B);

async function runningCampaign(
  { owner, caller }: { owner: TestWorkspace; caller: string },
  options: { ladder?: DialLadder; openingLine?: string; via?: RunningApi } = {},
) {
  const agent = await db.agent.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Caller',
      language: 'en-US',
      voiceId: 'en-US-standard',
      script: {
        // Long enough (some 30 words: 0.24 s of twin time) for the machine detection's result to come before its end.
        openingLine:
          options.openingLine ??
          'Hello {{name}}, this is a short call about your order, which we shipped this morning and which should reach you by the end of the week, if all goes well.',
        questions: [],
        closing: 'Thank you, goodbye.',
      },
    },
  });
  return startedAgentCampaign(db, options.via ?? api, owner, {
    name: 'Twilio',
    caller,
    agentId: agent.id,
    ladder: options.ladder,
  });
}

const pushLead = (owner: TestWorkspace, campaignId: string, phone: string, path = main) =>
  pushLeadWithWorkflow(path.api, owner.key, path.temporal.client, campaignId, phone, { name: 'Ana' });

/** The calls the twin placed to a number, through the SDK (the twin's own REST listing). */
const twinCallsTo = (to: string) => twin.client.calls.list({ to });

/** A form posted to the API as Twilio posts it; signed with `token` over the URL called unless a signature is given. */
async function postForm(
  path: string,
  form: Record<string, string>,
  signing: { token: string } | { signature: string | null },
  baseUrl = api.baseUrl,
) {
  const url = `${baseUrl}${path}`;
  const signature =
    'token' in signing ? twilio.getExpectedTwilioSignature(signing.token, url, form) : signing.signature;
  return checkedFetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(signature !== null && { 'x-twilio-signature': signature }),
    },
    body: new URLSearchParams(form).toString(),
  });
}

/** A call recorded as dialing on a connection, as the ladder leaves it after the dial, for callbacks sent by hand. */
async function dialingCallOn(side: { owner: TestWorkspace; connection: { id: string }; caller: string }) {
  const callSid = `CA${randomUUID().replaceAll('-', '')}`;
  const call = await recordDialingCall(db, side, { provider: 'twilio-twin', providerCallId: callSid });
  const path = (kind: 'status' | 'amd' | 'twiml') =>
    new URL(twilioCallbackUrl('http://api', kind, { connectionId: side.connection.id, attemptId: call.attemptId }))
      .pathname;
  return { call, callSid, path };
}

/** The campaign once the service has paused it, as GET /campaigns/{id} answers it. */
const pausedCampaign = (owner: TestWorkspace, campaignId: string) =>
  until(
    async () =>
      (await (await api.request('GET', `/campaigns/${campaignId}`, { key: owner.key })).json()) as {
        status: string;
        statusReason: { code: string; detail: string } | null;
      },
    (body) => body.status === 'PAUSED',
  );

/** Twilio's answers ([status, code]) to the creates of calls to `to`, as the recorder saw them. */
const createsTo = (to: string) =>
  recorder.exchanges
    .filter(
      (exchange) =>
        exchange.method === 'POST' &&
        exchange.url.endsWith('/Calls.json') &&
        exchange.body.includes(`To=${encodeURIComponent(to)}`),
    )
    .map((exchange) => [exchange.status, JSON.parse(exchange.responseBody).code as number | undefined]);

const statusForm = (callSid: string, status: string, sequence: number, extra: Record<string, string> = {}) => ({
  AccountSid: ACCOUNT_A.sid,
  CallSid: callSid,
  CallStatus: status,
  SequenceNumber: String(sequence),
  Timestamp: new Date().toUTCString().replace('GMT', '+0000'),
  CallbackSource: 'call-progress-events',
  ...extra,
});

describe('a campaign on a twilio-twin connection', () => {
  it('dials a lead through the SDK; the signed callbacks and the TwiML request end the call answered', async () => {
    const campaign = await runningCampaign(A);
    const lead = await pushLead(A.owner, campaign.id, '+14155550101');
    expect(await lead.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    const [call] = await db.call.findMany({ where: { leadId: lead.leadId } });
    expect(call).toMatchObject({
      provider: 'twilio-twin',
      carrierConnectionId: A.connection.id,
      status: 'ended',
      outcome: 'answered',
      carrierStatus: 'completed',
      answeredBy: 'human',
      fromNumber: A.caller,
    });
    expect(call!.providerCallId).toMatch(/^CA[0-9a-f]{32}$/);
    const events = await db.callEvent.findMany({ where: { callId: call!.id }, orderBy: { occurredAt: 'asc' } });
    expect(events.map((event) => event.eventId)).toEqual(
      expect.arrayContaining([`${call!.providerCallId}:0`, `${call!.providerCallId}:amd`]),
    );
    expect(new Set(events.map((event) => event.provider))).toEqual(new Set(['twilio-twin']));
    // The dial as the twin received it: the product's URLs, with the connection and the attempt in their paths.
    const create = recorder.exchanges.find(
      (exchange) =>
        exchange.method === 'POST' && exchange.url.endsWith('/Calls.json') && exchange.body.includes('14155550101'),
    )!;
    const sent = new URLSearchParams(create.body);
    const callPath = `/telephony/twilio/${A.connection.id}/calls/${encodeURIComponent(call!.attemptId)}`;
    expect(Object.fromEntries(sent)).toMatchObject({
      To: '+14155550101',
      From: A.caller,
      Url: `${api.baseUrl}${callPath}/twiml`,
      StatusCallback: `${api.baseUrl}${callPath}/status`,
      AsyncAmdStatusCallback: `${api.baseUrl}${callPath}/amd`,
      MachineDetection: 'DetectMessageEnd',
      AsyncAmd: 'true',
      Timeout: '60',
    });
    // Not initiated: the create's answer tells it (lib/carriers/twilio/twilio-calls.ts).
    expect(sent.getAll('StatusCallbackEvent')).toEqual(['ringing', 'answered', 'completed']);
    expect(create.headers.authorization).toBe(
      `Basic ${Buffer.from(`${ACCOUNT_A.sid}:${ACCOUNT_A.authToken}`).toString('base64')}`,
    );
    // The twin fetched the TwiML and spoke the agent's opening line with the lead's name.
    const log = (await (await fetch(`${twin.baseUrl}/control/calls/${call!.providerCallId}/log`)).json()) as {
      log: Array<{ speaker: string; text?: string }>;
    };
    expect(log.log.some((entry) => entry.text?.startsWith('Hello Ana, this is a short call about your order'))).toBe(
      true,
    );
  });

  it("dials through an API key connection with the key, and verifies its callbacks and TwiML requests with the account's auth token", async () => {
    const K = await twilioWorkspace(ACCOUNT_K);
    const campaign = await runningCampaign(K, { ladder: QUICK_LADDER });
    const person = await pushLead(K.owner, campaign.id, '+14155550171');
    const machine = await pushLead(K.owner, campaign.id, '+14155550177');
    expect(await person.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(await machine.handle.result()).toMatchObject({ outcome: 'voicemail' });
    const [call] = await db.call.findMany({ where: { leadId: person.leadId } });
    expect(call).toMatchObject({
      carrierConnectionId: K.connection.id,
      carrierStatus: 'completed',
      answeredBy: 'human',
    });
    // Every state the twin sent was verified and applied: ringing, answered, completed, and detection.
    const events = await db.callEvent.findMany({ where: { callId: call!.id } });
    expect(events.map((event) => event.eventId)).toEqual(
      expect.arrayContaining(
        [0, 1, 2].map((n) => `${call!.providerCallId}:${n}`).concat(`${call!.providerCallId}:amd`),
      ),
    );
    // The REST requests carried the key pair, never the auth token.
    const sent = recorder.exchanges.filter((exchange) => exchange.url.includes(`/Accounts/${ACCOUNT_K.sid}/`));
    expect(sent.length).toBeGreaterThan(0);
    for (const exchange of sent)
      expect(exchange.headers.authorization).toBe(
        `Basic ${Buffer.from(`${ACCOUNT_K.apiKey.sid}:${ACCOUNT_K.apiKey.secret}`).toString('base64')}`,
      );
    // The TwiML request was answered: the agent's opening line was spoken.
    const log = (await (await fetch(`${twin.baseUrl}/control/calls/${call!.providerCallId}/log`)).json()) as {
      log: Array<{ speaker: string; text?: string }>;
    };
    expect(log.log.some((entry) => entry.text?.startsWith('Hello Ana, this is a short call'))).toBe(true);

    // Signed with the key's secret (what Twilio never does) or another token: 401, nothing changes.
    const { call: dialing, callSid, path } = await dialingCallOn(K);
    const form = { ...statusForm(callSid, 'in-progress', 2), AccountSid: ACCOUNT_K.sid };
    for (const token of [ACCOUNT_K.apiKey.secret, ACCOUNT_A.authToken]) {
      for (const [kind, body] of [
        ['status', form],
        ['amd', { CallSid: callSid, AnsweredBy: 'machine_end_beep' }],
        ['twiml', { CallSid: callSid }],
      ] as const) {
        const refused = await postForm(path(kind), body, { token });
        expect(refused.status, `${kind} signed with ${token}`).toBe(401);
        expect(await refused.json()).toMatchObject({ error: 'invalid_signature' });
      }
    }
    expect(await db.callEvent.count({ where: { callId: dialing.id } })).toBe(0);
    expect(await db.call.findUniqueOrThrow({ where: { id: dialing.id } })).toMatchObject({
      carrierStatus: 'queued',
      answeredBy: null,
    });
    // Signed with the account's auth token: applied.
    const applied = await postForm(path('status'), form, { token: ACCOUNT_K.authToken });
    expect(applied.status).toBe(200);
    expect(await applied.json()).toEqual({ received: true, applied: true });
    expect((await db.call.findUniqueOrThrow({ where: { id: dialing.id } })).carrierStatus).toBe('in-progress');
    const twiml = await postForm(path('twiml'), { CallSid: callSid }, { token: ACCOUNT_K.authToken });
    expect(twiml.status).toBe(200);
    // The call has no agent: it hangs up at once.
    expect(await twiml.text()).toContain('<Hangup/>');
  });

  it('walks the three-rung ladder: busy and no-answer numbers three calls each, an answered one one, a machine voicemail', async () => {
    const campaign = await runningCampaign(A, { ladder: QUICK_LADDER });
    await expectThreeRungLadder(db, (phone) => pushLead(A.owner, campaign.id, phone), '+1415555010');
    // One Twilio call per attempt, no more.
    expect(await twinCallsTo('+14155550105')).toHaveLength(3);
    expect(await twinCallsTo('+14155550102')).toHaveLength(1);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
  });

  it("ends failed a call whose answer's TwiML request fails (Twilio's 11200: nobody heard the agent), and the ladder calls the lead again; an answered call stays answered", async () => {
    const unheard = '+14155550191';
    const heard = '+14155550192';
    // The product's API behind a proxy that is down for the answer's TwiML request of the first attempt to `unheard`
    // (502): the twin ends that call as Twilio does, completed, no AnsweredBy, error 11200 in its log.
    let behind = '';
    const proxy = await startRecordingProxy(
      () => behind,
      ({ method, url, body }) =>
        method === 'POST' &&
        decodeURIComponent(url).endsWith(':1/twiml') &&
        new URLSearchParams(body).get('To') === unheard
          ? 502
          : null,
    );
    const path = await startPath(uniqueTaskQueue('twilio-11200'), proxy.url);
    behind = path.api.baseUrl;
    const U = await twilioWorkspace(ACCOUNT_A);
    const campaign = await runningCampaign(U, { ladder: QUICK_LADDER, via: path.api });
    const [retried, answered] = await Promise.all(
      [unheard, heard].map((phone) => pushLead(U.owner, campaign.id, phone, path)),
    );
    expect(await retried!.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 2 });
    expect(await answered!.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    const callsOf = (leadId: string) =>
      db.call.findMany({ where: { leadId }, orderBy: { attempt: 'asc' }, include: { turns: true } });
    const [lost, second] = await callsOf(retried!.leadId);
    expect(lost).toMatchObject({ attempt: 1, outcome: 'failed', carrierStatus: 'completed', answeredBy: null });
    expect(lost!.turns).toEqual([]);
    expect(proxy.exchanges.filter((exchange) => exchange.status === 502)).toHaveLength(1);
    const log = (await (await fetch(`${twin.baseUrl}/control/calls/${lost!.providerCallId}/log`)).json()) as {
      log: Array<{ kind: string; code?: number }>;
    };
    expect(log.log).toContainEqual(expect.objectContaining({ kind: 'error', code: 11200 }));
    expect(second).toMatchObject({ attempt: 2, outcome: 'answered', carrierStatus: 'completed' });
    expect(second!.turns.filter((turn) => turn.step === 0).length).toBeGreaterThan(0);
    const [talked] = await callsOf(answered!.leadId);
    expect(talked).toMatchObject({ outcome: 'answered', answeredBy: 'human' });
    expect(talked!.turns.length).toBeGreaterThan(0);
  });

  it('ends invalid_number at once, without a call or a retry, an attempt whose number Twilio refuses at the dial', async () => {
    // A lead's number that Twilio answers 21211 for (not a phone number to it): pushed while its campaign waits,
    // written over before the campaign starts, as no push would accept it.
    const agentless = await db.campaign.create({
      data: {
        workspaceId: A.owner.workspaceId,
        name: 'Refused',
        acceptsLeadPush: true,
        dialLadder: QUICK_LADDER,
        callingWindow: ALWAYS_OPEN,
        callerNumbers: [A.caller],
      },
    });
    const idempotencyKey = randomUUID();
    const pushed = await api.request('POST', `/v1/campaigns/${agentless.id}/leads`, {
      key: A.owner.key,
      body: { lead: { phone: '+14155550141' }, idempotencyKey },
    });
    expect(pushed.status).toBe(202);
    const lead = (await pushed.json()) as { leadId: string };
    await db.lead.update({ where: { id: lead.leadId }, data: { phone: '+1415' } });
    await transitionCampaign(api, A.owner.key, agentless.id, 'start');
    const handle = await startedLeadWorkflow(temporal.client, agentless.id, idempotencyKey);
    expect(await handle.result()).toMatchObject({ outcome: 'invalid_number', attempts: 1 });
    expect(await db.call.findMany({ where: { leadId: lead.leadId } })).toEqual([
      expect.objectContaining({ status: 'ended', outcome: 'invalid_number', providerCallId: null }),
    ]);
    const creates = recorder.exchanges.filter(
      (exchange) => exchange.method === 'POST' && exchange.body.includes(`To=${encodeURIComponent('+1415')}&`),
    );
    expect(creates.map((exchange) => [exchange.status, JSON.parse(exchange.responseBody).code])).toEqual([
      [400, 21211],
    ]);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: agentless.id } })).callsInFlight).toBe(0);
  });

  it('pauses the campaign naming the number when Twilio refuses its caller number (21210): the lead keeps its attempt, the breaker counts nothing, and it calls once the number is fixed', async () => {
    const side = await twilioWorkspace(ACCOUNT_C);
    await assignPhoneNumber(db, side.owner.workspaceId, C_OWNED, undefined, side.connection.id);
    const campaign = await runningCampaign(side, { ladder: QUICK_LADDER });
    const to = '+14155550160';
    const lead = await pushLead(side.owner, campaign.id, to);
    // Paused by the service, and the operator is told why: the number, Twilio's code and words.
    const paused = await pausedCampaign(side.owner, campaign.id);
    expect(paused.statusReason).toMatchObject({ code: 'caller_number_refused' });
    expect(paused.statusReason!.detail).toContain(side.caller);
    expect(paused.statusReason!.detail).toContain('21210');
    expect(paused.statusReason!.detail).toContain('is not yet verified for your account');
    const kpis = (await (
      await api.request('GET', `/campaigns/${campaign.id}/kpis`, { key: side.owner.key })
    ).json()) as {
      pausedReason: { code: string } | null;
    };
    expect(kpis.pausedReason).toMatchObject({ code: 'caller_number_refused' });
    // Twilio's answer to the create, as sent by the SDK.
    const refused = recorder.exchanges.filter(
      (exchange) =>
        exchange.method === 'POST' &&
        exchange.url.endsWith('/Calls.json') &&
        exchange.body.includes(`From=${encodeURIComponent(side.caller)}`),
    );
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.map((exchange) => [exchange.status, JSON.parse(exchange.responseBody).code])).toEqual(
      refused.map(() => [400, 21210]),
    );
    // The attempt was withdrawn, not spent: no call kept, the line back, nothing for the carrier breaker, the lead
    // not finished.
    await until(
      () => db.call.count({ where: { leadId: lead.leadId } }),
      (count) => count === 0,
    );
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
    expect(await db.carrierDialRefusal.count({ where: { campaignId: campaign.id } })).toBe(0);
    expect((await db.lead.findUniqueOrThrow({ where: { id: lead.leadId } })).status).not.toMatch(/completed|failed/);
    expect(await twinCallsTo(to)).toHaveLength(0);
    // The operator puts the account's own number first and resumes: the lead makes its first attempt from it.
    const patched = await api.request('PATCH', `/campaigns/${campaign.id}`, {
      key: side.owner.key,
      body: { callerNumbers: [C_OWNED] },
    });
    expect(patched.status).toBe(200);
    await transitionCampaign(api, side.owner.key, campaign.id, 'resume');
    expect(await lead.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(await db.call.findMany({ where: { leadId: lead.leadId } })).toEqual([
      expect.objectContaining({ attempt: 1, fromNumber: C_OWNED, outcome: 'answered' }),
    ]);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).statusReason).toBeNull();
  });

  it("pauses the campaign naming the destination when the account's Geo Permissions do not enable its country (21215): the lead keeps its attempt, the breaker counts nothing", async () => {
    const side = await twilioWorkspace(ACCOUNT_G);
    const campaign = await runningCampaign(side, { ladder: QUICK_LADDER });
    const to = '+442071838750';
    const lead = await pushLead(side.owner, campaign.id, to);
    const paused = await pausedCampaign(side.owner, campaign.id);
    expect(paused.statusReason).toMatchObject({ code: 'destination_not_permitted' });
    expect(paused.statusReason!.detail).toContain(to);
    expect(paused.statusReason!.detail).toContain('Twilio error 21215: Account not authorized to call');
    expect(paused.statusReason!.detail).toContain('Geographic Permissions');
    const creates = createsTo(to);
    expect(creates.length).toBeGreaterThan(0);
    expect(creates).toEqual(creates.map(() => [400, 21215]));
    await until(
      () => db.call.count({ where: { leadId: lead.leadId } }),
      (count) => count === 0,
    );
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
    expect(await db.carrierDialRefusal.count({ where: { campaignId: campaign.id } })).toBe(0);
    expect((await db.lead.findUniqueOrThrow({ where: { id: lead.leadId } })).status).not.toMatch(/completed|failed/);
  });

  it("pauses the campaign when Twilio refuses the connection's credentials (20003), and the lead makes its first attempt once they are rotated and the campaign resumed", async () => {
    const side = await twilioWorkspace({
      ...ACCOUNT_K,
      apiKey: { ...ACCOUNT_K.apiKey, secret: 'a-revoked-api-key-secret' },
    });
    const campaign = await runningCampaign(side, { ladder: QUICK_LADDER });
    const to = '+14155550181';
    const lead = await pushLead(side.owner, campaign.id, to);
    const paused = await pausedCampaign(side.owner, campaign.id);
    expect(paused.statusReason).toMatchObject({ code: 'carrier_account_refused' });
    expect(paused.statusReason!.detail).toContain('Twilio error 20003: Authenticate');
    expect(paused.statusReason!.detail).toContain('carrier rotate');
    expect(paused.statusReason!.detail).not.toContain('a-revoked-api-key-secret');
    expect(createsTo(to)[0]).toEqual([401, 20003]);
    expect(await db.carrierDialRefusal.count({ where: { campaignId: campaign.id } })).toBe(0);
    // The twin's own table (every account's calls).
    expect(await twilioTwinRecord(db).count('"to" = $1', to)).toBe(0);
    await rotateCarrierSecrets(db, keyring, side.connection.id, { apiKeySecret: ACCOUNT_K.apiKey.secret });
    await transitionCampaign(api, side.owner.key, campaign.id, 'resume');
    expect(await lead.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(await twilioTwinRecord(db).count('"to" = $1', to)).toBe(1);
  });

  it('stop hangs up through the SDK a call that talks (Status=completed) and one that rings (Status=canceled)', async () => {
    // The ringing call must still ring when the stop's hangup reaches the twin: this file's twin gives up ringing after
    // 1.2 s, which a loaded machine outlasted between the two calls' states and the stop (CI saw no-answer). A twin of
    // its own, five times slower: 6 s of ringing, and an opening line of about 250 words some 10 s on the line.
    const slow = await startTestTwilioTwin(db, {
      timeScale: 0.1,
      accounts: [{ sid: ACCOUNT_A.sid, authToken: ACCOUNT_A.authToken }],
    });
    const slowRecorder = await startRecordingProxy(slow.baseUrl);
    const workspace = await twilioWorkspace(ACCOUNT_A, slowRecorder.url);
    const campaign = await runningCampaign(workspace, {
      ladder: QUICK_LADDER,
      openingLine: Array(50).fill('this line goes on and on').join(', '),
    });
    const talking = await pushLead(workspace.owner, campaign.id, '+14155550111');
    const ringing = await pushLead(workspace.owner, campaign.id, '+14155550116');
    await until(
      () => db.call.findMany({ where: { leadId: { in: [talking.leadId, ringing.leadId] } } }),
      (calls) =>
        calls.find((call) => call.leadId === talking.leadId)?.carrierStatus === 'in-progress' &&
        calls.find((call) => call.leadId === ringing.leadId)?.carrierStatus === 'ringing',
    );
    await transitionCampaign(api, workspace.owner.key, campaign.id, 'stop');
    expect(await talking.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(await ringing.handle.result()).toMatchObject({ status: 'cancelled', outcome: 'campaign_stopped' });
    const calls = await db.call.findMany({ where: { campaignId: campaign.id } });
    const byLead = new Map(calls.map((call) => [call.leadId, call]));
    expect(byLead.get(talking.leadId)).toMatchObject({
      status: 'ended',
      carrierStatus: 'completed',
      outcome: 'answered',
    });
    expect(byLead.get(ringing.leadId)).toMatchObject({
      status: 'ended',
      carrierStatus: 'canceled',
      outcome: 'no_answer',
    });
    const updates = slowRecorder.exchanges.filter(
      (exchange) => exchange.method === 'POST' && /\/Calls\/CA\w+\.json$/.test(exchange.url),
    );
    const statusSent = (sid: string) =>
      updates
        .filter((exchange) => exchange.url.includes(sid))
        .map((exchange) => new URLSearchParams(exchange.body).get('Status'));
    expect(statusSent(byLead.get(talking.leadId)!.providerCallId!)).toEqual(['completed']);
    expect(statusSent(byLead.get(ringing.leadId)!.providerCallId!)).toEqual(['canceled']);
    for (const call of calls) expect(call.hangupRequestedAt).not.toBeNull();
    // The workflow's own view says completed; the lead keeps the stop's cancelled (a final status never changes).
    expect((await db.lead.findUniqueOrThrow({ where: { id: talking.leadId } })).status).toBe('cancelled');
  });

  it('hangs up a call that talks while its recorded status lags (no in-progress callback yet): canceled, then completed', async () => {
    const campaign = await runningCampaign(A, {
      ladder: QUICK_LADDER,
      openingLine: Array(50).fill('this line goes on and on').join(', '),
    });
    const talking = await pushLead(A.owner, campaign.id, '+14155550112');
    const { providerCallId } = await until(
      () => db.call.findFirst({ where: { leadId: talking.leadId } }),
      (call) => call?.providerCallId != null,
    ).then((call) => call!);
    const callSid = providerCallId!;
    await until(
      () => twin.client.calls(callSid).fetch(),
      (call) => call.status === 'in-progress',
    );
    const calls = createTwilioCalls(
      {
        id: A.connection.id,
        workspaceId: A.owner.workspaceId,
        label: 'twin',
        provider: 'twilio-twin',
        baseUrl: recorder.url,
        accountSid: ACCOUNT_A.sid,
        apiKeySid: null,
        secrets: { authToken: ACCOUNT_A.authToken },
      },
      { publicBaseUrl: api.baseUrl },
    );
    // As a stop whose record still says ringing: Twilio leaves the call alone on canceled, and answers it in progress.
    await calls.hangup(callSid, 'ringing');
    expect((await twin.client.calls(callSid).fetch()).status).toBe('completed');
    const sent = recorder.exchanges
      .filter((exchange) => exchange.method === 'POST' && exchange.url.includes(`/Calls/${callSid}.json`))
      .map((exchange) => new URLSearchParams(exchange.body).get('Status'));
    expect(sent).toEqual(['canceled', 'completed']);
  });
});

describe("Twilio's callbacks on the API", () => {
  it('refuses unsigned, badly signed, wrongly keyed and unknown-connection callbacks with 401, changing nothing', async () => {
    const { call, callSid, path } = await dialingCallOn(A);
    const form = statusForm(callSid, 'ringing', 1);
    const refusals = [
      await postForm(path('status'), form, { signature: null }),
      await postForm(path('status'), form, { signature: 'RSOYDt4T1cUTdK1PDd93/VVr8B8=' }),
      await postForm(path('status'), form, { token: ACCOUNT_B.authToken }),
      // Signed for another URL (the local one, where PUBLIC_BASE_URL says a proxy's).
      await postForm(path('status'), form, {
        signature: twilio.getExpectedTwilioSignature(ACCOUNT_A.authToken, `http://localhost${path('status')}`, form),
      }),
      // A body changed after signing.
      await checkedFetch(`${api.baseUrl}${path('status')}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': twilio.getExpectedTwilioSignature(
            ACCOUNT_A.authToken,
            `${api.baseUrl}${path('status')}`,
            form,
          ),
        },
        body: new URLSearchParams({ ...form, CallStatus: 'completed' }).toString(),
      }),
      await postForm(path('status').replace(A.connection.id, randomUUID()), form, { token: ACCOUNT_A.authToken }),
      await postForm(path('status').replace(A.connection.id, 'not-a-uuid'), form, { token: ACCOUNT_A.authToken }),
      await postForm(path('amd'), { CallSid: callSid, AnsweredBy: 'human' }, { signature: null }),
      await postForm(path('twiml'), { CallSid: callSid }, { token: ACCOUNT_B.authToken }),
    ];
    for (const response of refusals) {
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: 'invalid_signature' });
    }
    expect(await db.callEvent.count({ where: { callId: call.id } })).toBe(0);
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({
      carrierStatus: 'queued',
      answeredBy: null,
    });
  });

  it('refuses the callbacks of a removed connection with 401', async () => {
    const gone = await connectCarrier(db, keyring, {
      workspaceId: A.owner.workspaceId,
      provider: 'twilio-twin',
      baseUrl: recorder.url,
      account: { family: 'twilio', accountSid: ACCOUNT_A.sid, secrets: { authToken: ACCOUNT_A.authToken } },
    });
    const path = new URL(twilioCallbackUrl('http://api', 'status', { connectionId: gone.id, attemptId: 'x:1' }))
      .pathname;
    const form = statusForm(`CA${'1'.repeat(32)}`, 'ringing', 1);
    expect((await postForm(path, form, { token: ACCOUNT_A.authToken })).status).toBe(404);
    await removeCarrierConnection(db, gone.id);
    // The API keeps an opened connection for OPENED_CONNECTION_TTL_MS (lib/carrier-connections/opened-connections.ts).
    const removedAt = Date.now();
    await until(
      async () => (await postForm(path, form, { token: ACCOUNT_A.authToken })).status,
      (status) => status === 401,
      OPENED_CONNECTION_TTL_MS + 5_000,
    );
    expect(Date.now() - removedAt).toBeLessThan(OPENED_CONNECTION_TTL_MS + 5_000);
  });

  it('takes callbacks signed with a rotated auth token at once, and from then on refuses the old token', async () => {
    const oldToken = 'a'.repeat(32);
    const newToken = 'b'.repeat(32);
    const rotating = await connectCarrier(db, keyring, {
      workspaceId: A.owner.workspaceId,
      provider: 'twilio-twin',
      baseUrl: recorder.url,
      account: { family: 'twilio', accountSid: ACCOUNT_A.sid, secrets: { authToken: oldToken } },
    });
    const path = new URL(twilioCallbackUrl('http://api', 'status', { connectionId: rotating.id, attemptId: 'x:1' }))
      .pathname;
    const form = statusForm(`CA${'2'.repeat(32)}`, 'ringing', 1);
    // Verified, then unknown_call: no call of this attempt on the connection. The connection is now kept.
    expect((await postForm(path, form, { token: oldToken })).status).toBe(404);
    expect((await postForm(path, form, { token: newToken })).status).toBe(401);
    await rotateCarrierSecrets(db, keyring, rotating.id, { authToken: newToken });
    // The kept token refuses the new one: the connection is read again at once, and the new token kept.
    expect((await postForm(path, form, { token: newToken })).status).toBe(404);
    expect((await postForm(path, form, { token: oldToken })).status).toBe(401);
    expect((await postForm(path, form, { token: newToken })).status).toBe(404);
  });

  it('records duplicate, out-of-order, late and stale callbacks applied: false, and they change nothing', async () => {
    const { call, callSid, path } = await dialingCallOn(A);
    const send = async (form: Record<string, string>) => {
      const response = await postForm(path('status'), form, { token: ACCOUNT_A.authToken });
      expect(response.status).toBe(200);
      return ((await response.json()) as { applied: boolean }).applied;
    };
    expect(await send(statusForm(callSid, 'in-progress', 3))).toBe(true);
    // The same callback again (same CallSid and SequenceNumber): a duplicate.
    expect(await send(statusForm(callSid, 'in-progress', 3))).toBe(false);
    // ringing, sent before the answer but arriving after it: out of order.
    expect(await send(statusForm(callSid, 'ringing', 2))).toBe(false);
    const amd = await postForm(
      path('amd'),
      { CallSid: callSid, AccountSid: ACCOUNT_A.sid, AnsweredBy: 'machine_end_beep' },
      { token: ACCOUNT_A.authToken },
    );
    expect(await amd.json()).toEqual({ received: true, applied: true });
    expect(await send(statusForm(callSid, 'completed', 4, { CallDuration: '31' }))).toBe(true);
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({
      status: 'ended',
      outcome: 'voicemail',
      carrierStatus: 'completed',
      answeredBy: 'machine',
      durationMs: 31_000,
    });
    // Stale: Twilio signs no time, so a callback is stale when its call has already ended. A signed callback
    // replayed later (or a second end) is recorded and changes nothing.
    expect(await send(statusForm(callSid, 'canceled', 5))).toBe(false);
    expect(await send(statusForm(callSid, 'in-progress', 3))).toBe(false);
    const lateAmd = await postForm(
      path('amd'),
      { CallSid: callSid, AnsweredBy: 'human' },
      { token: ACCOUNT_A.authToken },
    );
    expect(await lateAmd.json()).toEqual({ received: true, applied: false });
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({
      outcome: 'voicemail',
      carrierStatus: 'completed',
      answeredBy: 'machine',
    });
    const events = await db.callEvent.findMany({ where: { callId: call.id } });
    expect(
      events
        .filter((event) => event.applied)
        .map((event) => event.eventId)
        .sort(),
    ).toEqual([`${callSid}:3`, `${callSid}:4`, `${callSid}:amd`].sort());
    // Another CallSid for an attempt already bound to its call: not this attempt's call.
    expect(
      (await postForm(path('status'), statusForm(`CA${'2'.repeat(32)}`, 'ringing', 1), { token: ACCOUNT_A.authToken }))
        .status,
    ).toBe(404);
  });

  it("never crosses workspaces: a callback signed with workspace A's token for B's call is refused", async () => {
    const theirs = await dialingCallOn(B);
    const form = statusForm(theirs.callSid, 'completed', 4, { AccountSid: ACCOUNT_A.sid });
    // B's call on A's connection's path, signed by A: A's signature is good, the call is not A's.
    const onA = theirs.path('status').replace(B.connection.id, A.connection.id);
    const crossed = await postForm(onA, form, { token: ACCOUNT_A.authToken });
    expect(crossed.status).toBe(404);
    expect(await crossed.json()).toMatchObject({ error: 'unknown_call' });
    // B's call on B's path, signed by A: the signature is not B's.
    expect((await postForm(theirs.path('status'), form, { token: ACCOUNT_A.authToken })).status).toBe(401);
    expect(
      (await postForm(onA.replace('/status', '/twiml'), { CallSid: theirs.callSid }, { token: ACCOUNT_A.authToken }))
        .status,
    ).toBe(404);
    expect(await db.call.findUniqueOrThrow({ where: { id: theirs.call.id } })).toMatchObject({
      status: 'dialing',
      carrierStatus: 'queued',
    });
    // Signed by B, it is applied.
    expect(
      (await postForm(theirs.path('status'), { ...form, AccountSid: ACCOUNT_B.sid }, { token: ACCOUNT_B.authToken }))
        .status,
    ).toBe(200);
    expect(await db.call.findUniqueOrThrow({ where: { id: theirs.call.id } })).toMatchObject({
      status: 'ended',
      outcome: 'answered',
    });
  });

  it("never crosses workspaces on detection and the script's steps either: A's signature for B's call is refused there too", async () => {
    const theirs = await dialingCallOn(B);
    const onA = (path: string) => path.replace(B.connection.id, A.connection.id);
    const amd = { CallSid: theirs.callSid, AccountSid: ACCOUNT_A.sid, AnsweredBy: 'machine_end_beep' };
    // On A's path, signed by A: the call is not A's.
    for (const response of [
      await postForm(onA(theirs.path('amd')), amd, { token: ACCOUNT_A.authToken }),
      await postForm(
        `${onA(theirs.path('twiml'))}/voicemail`,
        { CallSid: theirs.callSid },
        { token: ACCOUNT_A.authToken },
      ),
      await postForm(
        `${onA(theirs.path('twiml'))}/1`,
        { CallSid: theirs.callSid, SpeechResult: 'Yes.' },
        { token: ACCOUNT_A.authToken },
      ),
    ]) {
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error: 'unknown_call' });
    }
    // On B's path, signed by A: not B's signature.
    for (const response of [
      await postForm(theirs.path('amd'), amd, { token: ACCOUNT_A.authToken }),
      await postForm(`${theirs.path('twiml')}/voicemail`, { CallSid: theirs.callSid }, { token: ACCOUNT_A.authToken }),
    ])
      expect(response.status).toBe(401);
    expect(await db.call.findUniqueOrThrow({ where: { id: theirs.call.id } })).toMatchObject({
      status: 'dialing',
      answeredBy: null,
      voicemailLeftAt: null,
    });
    expect(await db.callEvent.count({ where: { callId: theirs.call.id } })).toBe(0);
    expect(await db.callTurn.count({ where: { callId: theirs.call.id } })).toBe(0);
  });

  it('two workspaces calling the same number at once through their own accounts: each call, callback and line its own', async () => {
    const [campaignA, campaignB] = await Promise.all([
      runningCampaign(A, { openingLine: 'Hello {{name}}, this is workspace A.' }),
      runningCampaign(B, { openingLine: 'Hello {{name}}, this is workspace B.' }),
    ]);
    const to = '+14155550152';
    const [leadA, leadB] = await Promise.all([
      pushLead(A.owner, campaignA.id, to),
      pushLead(B.owner, campaignB.id, to),
    ]);
    expect(await leadA.handle.result()).toMatchObject({ outcome: 'answered', attempts: 1 });
    expect(await leadB.handle.result()).toMatchObject({ outcome: 'answered', attempts: 1 });
    for (const [side, lead, account, campaign] of [
      [A, leadA, ACCOUNT_A, campaignA],
      [B, leadB, ACCOUNT_B, campaignB],
    ] as const) {
      const [call] = await db.call.findMany({ where: { leadId: lead.leadId } });
      expect(call).toMatchObject({
        carrierConnectionId: side.connection.id,
        fromNumber: side.caller,
        outcome: 'answered',
      });
      // Placed with its own account on the twin, and only its own callbacks applied to it.
      const onTwin = await twilioTwinRecord(db).call(call!.providerCallId!);
      expect(onTwin).toMatchObject({ accountSid: account.sid, to, from: side.caller });
      const events = await db.callEvent.findMany({ where: { callId: call!.id } });
      expect(events.length).toBeGreaterThan(0);
      expect(events.every((event) => event.eventId.startsWith(`${call!.providerCallId}:`))).toBe(true);
      // Its own agent's words, as stored and as said on the line.
      const turns = await db.callTurn.findMany({
        where: { callId: call!.id },
        orderBy: [{ step: 'asc' }, { part: 'asc' }],
      });
      const workspace = side === A ? 'A' : 'B';
      expect(turns[0]!.text).toBe(`Hello Ana, this is workspace ${workspace}.`);
      const log = (await (await fetch(`${twin.baseUrl}/control/calls/${call!.providerCallId}/log`)).json()) as {
        log: Array<{ kind: string; text?: string }>;
      };
      expect(log.log.filter((entry) => entry.kind === 'say').map((entry) => entry.text)).toEqual(
        turns.map((turn) => turn.text),
      );
      expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
    }
  });

  it('answers the TwiML of the call to a signed request', async () => {
    const { callSid, path } = await dialingCallOn(A);
    const response = await postForm(
      path('twiml'),
      { CallSid: callSid, AccountSid: ACCOUNT_A.sid, CallStatus: 'in-progress' },
      { token: ACCOUNT_A.authToken },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/xml/);
    // The call has no agent: it hangs up at once.
    expect(await response.text()).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>');
  });

  it('checks the signature against PUBLIC_BASE_URL behind a proxy, not against the address the API sees', async () => {
    let apiPort = 0;
    const proxy = await startTcpProxy(() => ({ host: '127.0.0.1', port: apiPort }));
    const behind = await startTestApi({
      db,
      url,
      temporal,
      carrierKeyring: keyring,
      publicBaseUrl: `http://127.0.0.1:${proxy.port}/`,
      conversationEngine: 'gather',
    });
    apiPort = Number(new URL(behind.baseUrl).port);
    const { callSid, path } = await dialingCallOn(A);
    const form = statusForm(callSid, 'ringing', 1);
    const publicUrl = `http://127.0.0.1:${proxy.port}`;
    expect((await postForm(path('status'), form, { token: ACCOUNT_A.authToken }, publicUrl)).status).toBe(200);
    // Signed for the local address it reached: not the URL Twilio would have called.
    const local = await checkedFetch(`${behind.baseUrl}${path('status')}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilio.getExpectedTwilioSignature(
          ACCOUNT_A.authToken,
          `${behind.baseUrl}${path('status')}`,
          form,
        ),
      },
      body: new URLSearchParams(form).toString(),
    });
    expect(local.status).toBe(401);
  });
});

describe('a dial whose answer is lost', () => {
  it('ends with exactly one Twilio call for the attempt: the retry finds the call by To, From and StartTime and adopts it', async () => {
    // Twilio's side: requests reach the twin, answers can be dropped. The API's side, as Twilio reaches it: can be cut,
    // so that no callback binds the call before the dial's retry has to find it.
    const carrierProxy = await startTcpProxy({ host: '127.0.0.1', port: recorder.port });
    let apiPort = 0;
    const apiProxy = await startTcpProxy(() => ({ host: '127.0.0.1', port: apiPort }));
    const lost = await startPath(uniqueTaskQueue('lost-answer'), `http://127.0.0.1:${apiProxy.port}`);
    apiPort = Number(new URL(lost.api.baseUrl).port);
    const side = await twilioWorkspace(ACCOUNT_A, `http://127.0.0.1:${carrierProxy.port}`);
    const campaign = await runningCampaign(side, { via: lost.api });
    await carrierProxy.dropAnswers();
    await apiProxy.cut();
    const to = '+14155550123';
    const lead = await pushLead(side.owner, campaign.id, to, lost);
    // The twin created the call; its answer never reached the adapter.
    await until(
      async () =>
        recorder.exchanges.filter(
          (exchange) =>
            exchange.method === 'POST' &&
            exchange.url.endsWith('/Calls.json') &&
            exchange.body.includes(encodeURIComponent(to)),
        ),
      (creates) => creates.length === 1,
    );
    await carrierProxy.restore();
    const bound = await until(
      () => db.call.findFirst({ where: { leadId: lead.leadId } }),
      (call) => call?.providerCallId != null,
    );
    const [onTwin] = await twinCallsTo(to);
    expect(bound!.providerCallId).toBe(onTwin!.sid);
    // Found by listing, while no callback could reach the API.
    expect(
      recorder.exchanges.some(
        (exchange) =>
          exchange.method === 'GET' &&
          exchange.url.includes('/Calls.json?') &&
          exchange.url.includes(encodeURIComponent(to)),
      ),
    ).toBe(true);
    await apiProxy.restore();
    const result = await lead.handle.result();
    expect(result.attempts).toBe(1);
    expect(await twinCallsTo(to)).toHaveLength(1);
    expect(
      recorder.exchanges.filter(
        (exchange) =>
          exchange.method === 'POST' &&
          exchange.url.endsWith('/Calls.json') &&
          exchange.body.includes(encodeURIComponent(to)),
      ),
    ).toHaveLength(1);
    expect(await db.call.findMany({ where: { leadId: lead.leadId } })).toEqual([
      expect.objectContaining({ status: 'ended', providerCallId: onTwin!.sid, provider: 'twilio-twin' }),
    ]);
  });

  it('refuses to dial again while two calls could be the attempt’s, and adopts the one no other attempt holds', async () => {
    const product = await startProductStandIn();
    const side = await twilioWorkspace(ACCOUNT_A);
    const carrier = createConnectionCarrier({ db, keyring, fallback: simulated.client, publicBaseUrl: api.baseUrl });
    const { call } = await dialingCallOn(side);
    const to = '+14155550134';
    await db.call.update({ where: { id: call.id }, data: { providerCallId: null, carrierStatus: null, toNumber: to } });
    // Nothing placed yet: the attempt may be dialed.
    expect(await carrier.lookup({ attemptId: call.attemptId })).toBeNull();
    const place = () =>
      twin.client.calls.create({
        to,
        from: side.caller,
        url: `${product.baseUrl}/twiml`,
        statusCallback: `${product.baseUrl}/status`,
      });
    const first = await place();
    const second = await place();
    await expect(carrier.lookup({ attemptId: call.attemptId })).rejects.toThrow(AmbiguousAttemptError);
    // The first belongs to another attempt: the second is this one's.
    const other = await dialingCallOn(side);
    await db.call.update({ where: { id: other.call.id }, data: { providerCallId: first.sid, toNumber: to } });
    expect(await carrier.lookup({ attemptId: call.attemptId })).toMatchObject({ providerCallId: second.sid });
    // Once bound, the call is read by its CallSid (GET .../Calls/{Sid}.json), as reconciliation reads it.
    await db.call.update({ where: { id: call.id }, data: { providerCallId: second.sid } });
    expect(await carrier.lookup({ providerCallId: second.sid })).toMatchObject({
      providerCallId: second.sid,
      attemptId: call.attemptId,
    });
  });
  it('adopts no listed call while another attempt to the same number and from the same caller has no CallSid yet', async () => {
    // Many leads of one campaign may share a number: a create another attempt sent, answered late or lost, lists like
    // this attempt's own. Adopting it would make one Twilio call two attempts' and leave this one without a call.
    const product = await startProductStandIn();
    const side = await twilioWorkspace(ACCOUNT_A);
    const carrier = createConnectionCarrier({ db, keyring, fallback: simulated.client, publicBaseUrl: api.baseUrl });
    const to = '+14155550145';
    const mine = await dialingCallOn(side);
    const other = await dialingCallOn(side);
    for (const { call } of [mine, other])
      await db.call.update({
        where: { id: call.id },
        data: { providerCallId: null, carrierStatus: null, toNumber: to },
      });
    const placed = await twin.client.calls.create({
      to,
      from: side.caller,
      url: `${product.baseUrl}/twiml`,
      statusCallback: `${product.baseUrl}/status`,
    });
    await expect(carrier.lookup({ attemptId: mine.call.attemptId })).rejects.toThrow(AmbiguousAttemptError);
    await expect(carrier.lookup({ attemptId: other.call.attemptId })).rejects.toThrow(AmbiguousAttemptError);
    // The other attempt records its call (its create's answer, or a callback whose URL names it): this attempt has
    // none at Twilio, and may be dialed.
    await db.call.update({ where: { id: other.call.id }, data: { providerCallId: placed.sid } });
    expect(await carrier.lookup({ attemptId: mine.call.attemptId })).toBeNull();
  });
});

describe('a request to Twilio that fails', () => {
  it('rejects with what failed and nothing of the request: no credentials for a log to keep', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: recorder.port });
    await proxy.dropAnswers();
    const calls = createTwilioCalls(
      {
        id: A.connection.id,
        workspaceId: A.owner.workspaceId,
        label: 'twin',
        provider: 'twilio-twin',
        baseUrl: `http://127.0.0.1:${proxy.port}`,
        accountSid: ACCOUNT_A.sid,
        apiKeySid: null,
        secrets: { authToken: ACCOUNT_A.authToken },
      },
      { publicBaseUrl: api.baseUrl },
    );
    const failed = await calls.fetch(`CA${'3'.repeat(32)}`, 'x:1').catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(TwilioRequestError);
    expect(failed).toMatchObject({ status: undefined, code: 'ECONNRESET' });
    const written = inspect(failed, { depth: 20, showHidden: true });
    expect(written).not.toContain(ACCOUNT_A.authToken);
    expect(written).not.toContain(Buffer.from(`${ACCOUNT_A.sid}:${ACCOUNT_A.authToken}`).toString('base64'));
    // Twilio's own refusal keeps its status and code: another account's credentials are 401, 20003.
    await proxy.restore();
    const refused = await createTwilioCalls(
      {
        id: B.connection.id,
        workspaceId: B.owner.workspaceId,
        label: 'twin',
        provider: 'twilio-twin',
        baseUrl: recorder.url,
        accountSid: ACCOUNT_B.sid,
        apiKeySid: null,
        secrets: { authToken: 'not-the-token-of-b' },
      },
      { publicBaseUrl: api.baseUrl },
    )
      .fetch(`CA${'3'.repeat(32)}`, 'x:1')
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ name: 'TwilioRequestError', status: 401, code: 20003 });
    expect(inspect(refused, { depth: 20, showHidden: true })).not.toContain('not-the-token-of-b');
  });
});

describe("Twilio's description", () => {
  const OPERATIONS: Array<[RegExp, string, OperationRef]> = [
    [/\/Calls\.json$/, 'POST', { method: 'post', path: '/2010-04-01/Accounts/{AccountSid}/Calls.json' }],
    [/\/Calls\.json(\?|$)/, 'GET', { method: 'get', path: '/2010-04-01/Accounts/{AccountSid}/Calls.json' }],
    [/\/Calls\/CA\w+\.json$/, 'GET', { method: 'get', path: '/2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json' }],
    [/\/Calls\/CA\w+\.json$/, 'POST', { method: 'post', path: '/2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json' }],
  ];

  it('finds every request the adapter sent (create, list, fetch, update) as Twilio describes it', () => {
    const seen = new Set<string>();
    expect(recorder.exchanges.length).toBeGreaterThan(10);
    for (const exchange of recorder.exchanges) {
      const path = new URL(exchange.url, 'http://twin').pathname;
      const [, , operation] =
        OPERATIONS.find(([pattern, method]) => method === exchange.method && pattern.test(path)) ?? [];
      expect(operation, `${exchange.method} ${exchange.url}`).toBeDefined();
      seen.add(`${operation!.method} ${operation!.path}`);
      expect(
        carrierDescription('twilio').requestProblems(operation!, {
          url: exchange.url,
          contentType: exchange.headers['content-type'],
          body: exchange.body || undefined,
        }),
        `${exchange.method} ${exchange.url}`,
      ).toEqual([]);
    }
    expect(seen.size).toBe(4);
  });
});
