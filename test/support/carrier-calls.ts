import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Prisma } from '../../generated/prisma/client';
import type { Transcript } from '../../lib/calls/transcript';
import type { Carrier } from '../../lib/calls/carrier';
import type { SubscribableProgressState } from '../../lib/calls/call-states';
import { createConnectionCarrier } from '../../lib/carriers/connection-carrier';
import {
  connectCarrier,
  type CarrierAccount,
  type CarrierConnectRequest,
} from '../../lib/carrier-connections/connections';
import {
  TELNYX_TWIN_API_KEY,
  TELNYX_TWIN_CONNECTION_ID,
  TELNYX_TWIN_PUBLIC_KEY,
  TWILIO_TWIN_ACCOUNT_SID,
  TWILIO_TWIN_AUTH_TOKEN,
} from '../../lib/carriers/twin';
import type { Database } from '../../lib/database';
import type { DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { keyringSchema, newKeyringEntry, type Keyring } from '../../lib/secrets/keyring';
import type { WhatsAppProvider } from '../../lib/whatsapp/provider';
import { insertAgent } from './agents';
import { startTestApi, type RunningApi, type TestApiDependencies } from './api';
import { insertDialingCall } from './calls';
import { startTestCarrier } from './carrier';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from './ladders';
import { pushLeadWithWorkflow } from './lead-workflows';
import { startTestWorker, type TestTemporal } from './temporal';
import { until } from './until';
import { createTestWorkspace, type TestWorkspace } from './workspace';
import { transitionCampaign } from './campaign-transition';

/** What the carrier adapters' tests (test/carriers/twilio-*.test.ts, telnyx-*.test.ts) share about calls and leads. */

/** An API and a worker on a task queue, as the carrier tests run them. */
export interface CarrierPath {
  api: RunningApi;
  temporal: TestTemporal;
}

/**
 * An API and a worker on `temporal`'s task queue, the worker dialing through the carrier connections (`fallback`, the
 * simulated carrier, for a number bound to none). The carriers reach the API at `publicBaseUrl`, its own address unless
 * given (a proxy in front of it); `api` adds to the API's dependencies, `statusCallbackEvents` and `whatsappProvider`
 * to the worker's.
 */
export async function startCarrierPath(
  db: Database,
  options: {
    url: string;
    temporal: TestTemporal;
    keyring: Keyring;
    fallback: Carrier;
    publicBaseUrl?: string;
    api?: Partial<TestApiDependencies>;
    statusCallbackEvents?: readonly SubscribableProgressState[];
    /** The provider the worker sends WhatsApp messages through (none: the worker sends none). */
    whatsappProvider?: WhatsAppProvider;
    /** How long the worker waits for a call's end event before asking the carrier (default: the product's). */
    callEndDeadlineMs?: number;
  },
): Promise<CarrierPath> {
  const { url, temporal, keyring, publicBaseUrl } = options;
  const api = await startTestApi({ db, url, temporal, carrierKeyring: keyring, publicBaseUrl, ...options.api });
  await startTestWorker(temporal.taskQueue, {
    db,
    calls: createConnectionCarrier({
      db,
      keyring,
      fallback: options.fallback,
      publicBaseUrl: publicBaseUrl ?? api.baseUrl,
    }),
    statusCallbackBaseUrl: api.baseUrl,
    ...(options.statusCallbackEvents && { statusCallbackEvents: options.statusCallbackEvents }),
    ...(options.whatsappProvider && { whatsappProvider: options.whatsappProvider }),
    ...(options.callEndDeadlineMs !== undefined && { callEndDeadlineMs: options.callEndDeadlineMs }),
  });
  return { api, temporal };
}

/** The Twilio twin's development account (lib/carriers/twin.ts), as a connection holds it. */
export const TWILIO_TWIN_ACCOUNT: CarrierAccount = {
  family: 'twilio',
  accountSid: TWILIO_TWIN_ACCOUNT_SID,
  secrets: { authToken: TWILIO_TWIN_AUTH_TOKEN },
};

/** The Telnyx twin's development account (lib/carriers/twin.ts), as a connection holds it. */
export const TELNYX_TWIN_ACCOUNT: CarrierAccount = {
  family: 'telnyx',
  connectionId: TELNYX_TWIN_CONNECTION_ID,
  secrets: { apiKey: TELNYX_TWIN_API_KEY, publicKey: TELNYX_TWIN_PUBLIC_KEY },
};

/** A carrier connection of the request's workspace, with each of `callers` bound to it (their calls go through it). */
export async function connectCallers(
  db: Database,
  keyring: Keyring,
  request: CarrierConnectRequest,
  ...callers: string[]
) {
  const connection = await connectCarrier(db, keyring, request);
  for (const caller of callers) await assignPhoneNumber(db, request.workspaceId, caller, undefined, connection.id);
  return connection;
}

/**
 * A carrier test file's servers but its twins, and the workspace that calls: a key ring, the simulated carrier as the
 * fallback, the API and a worker dialing through the workspace's connections (startCarrierPath, `api` adding to the
 * API's dependencies), a workspace that may edit agents and campaigns, and `connectTwin`, which connects it to a
 * twin's development account at `baseUrl` (the twin's, or a recording proxy's in front of it) with `caller` bound to it.
 */
export async function startCarrierCallStack(
  db: Database,
  options: { url: string; temporal: TestTemporal; api?: Partial<TestApiDependencies> },
) {
  const keyring = keyringSchema.parse(newKeyringEntry('k1'));
  const simulated = await startTestCarrier(db);
  const { api } = await startCarrierPath(db, { ...options, keyring, fallback: simulated.client });
  const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view', 'agents.edit'] });
  const connectTwin = (provider: 'twilio-twin' | 'telnyx-twin', baseUrl: string, caller: string) =>
    connectCallers(
      db,
      keyring,
      {
        workspaceId: owner.workspaceId,
        provider,
        baseUrl,
        account: provider === 'twilio-twin' ? TWILIO_TWIN_ACCOUNT : TELNYX_TWIN_ACCOUNT,
      },
      caller,
    );
  return { api, owner, connectTwin };
}

export const SHOE_SHOP_OPENING = 'Hello {{name}}, this is the shoe shop.';
export const SHOE_SHOP_CLOSING = 'Thank you, goodbye.';

/**
 * The shoe shop's agent of the script-walk tests: its opening line, `questions` and closing, the colour and the number
 * of pairs extracted; any other column given.
 */
export function insertShoeShopAgent(
  db: Database,
  workspaceId: string,
  { questions, ...columns }: { questions: string[] } & Partial<Prisma.AgentUncheckedCreateInput>,
) {
  return insertAgent(db, workspaceId, {
    name: 'Shoes',
    script: { openingLine: SHOE_SHOP_OPENING, questions, closing: SHOE_SHOP_CLOSING },
    extractionFields: [
      { name: 'colour', type: 'enum', description: '', allowedValues: ['red', 'navy', 'green'] },
      { name: 'pairs', type: 'number', description: '' },
    ],
    ...columns,
  });
}

/**
 * A campaign of the agent taking pushed leads, calling from `caller` at any hour (one attempt unless a ladder is
 * given), started through `via`.
 */
export async function startedAgentCampaign(
  db: Database,
  via: RunningApi,
  owner: TestWorkspace,
  campaign: { name: string; caller: string; agentId: string; ladder?: DialLadder },
) {
  const created = await db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: campaign.name,
      acceptsLeadPush: true,
      dialLadder: campaign.ladder ?? SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
      callerNumbers: [campaign.caller],
      agentId: campaign.agentId,
    },
  });
  await transitionCampaign(via, owner.key, created.id, 'start');
  return created;
}

/** Pushes a lead (Ana at `phone`) through the path's API, waits for its ladder to finish, and reads its one call. */
export async function calledLead(
  db: Database,
  path: CarrierPath,
  owner: Pick<TestWorkspace, 'key'>,
  campaignId: string,
  phone: string,
) {
  const { leadId, handle } = await pushLeadWithWorkflow(path.api, owner.key, path.temporal.client, campaignId, phone, {
    name: 'Ana',
  });
  const result = await handle.result();
  const call = await db.call.findFirstOrThrow({ where: { leadId } });
  return { result, call, leadId };
}

/**
 * A call of the agent's campaign to Ana at `phone`, answered on a Twilio twin connection as the dial leaves it, for its
 * steps posted by hand: its CallSid one the twin does not know.
 */
export async function answeredTwilioCall(
  db: Database,
  side: { owner: TestWorkspace; connection: { id: string }; caller: string },
  campaign: { id: string; agentId: string | null },
  phone: string,
) {
  const dialing = await insertDialingCall(db, side.owner, campaign.id);
  await db.lead.update({ where: { id: dialing.leadId! }, data: { name: 'Ana', phone } });
  return db.call.update({
    where: { id: dialing.id },
    data: {
      provider: 'twilio-twin',
      carrierConnectionId: side.connection.id,
      providerCallId: `CA${randomUUID().replaceAll('-', '')}`,
      carrierStatus: 'in-progress',
      fromNumber: side.caller,
      toNumber: phone,
      agentId: campaign.agentId,
    },
  });
}

/**
 * A call recorded as dialing on a connection, as the ladder leaves it after the dial, for callbacks and webhooks sent
 * by hand: its campaign (running, one call in flight), its lead, and the call (bound to `providerCallId`, or not yet).
 */
export async function recordDialingCall(
  db: Database,
  side: { owner: TestWorkspace; connection: { id: string }; caller: string },
  { provider, providerCallId }: { provider: string; providerCallId: string | null },
) {
  const campaign = await db.campaign.create({
    data: { workspaceId: side.owner.workspaceId, name: 'Callbacks', status: 'RUNNING', callsInFlight: 1 },
  });
  const leadId = randomUUID();
  await db.lead.create({
    data: {
      id: leadId,
      workspaceId: side.owner.workspaceId,
      campaignId: campaign.id,
      idempotencyKey: leadId,
      phone: '+14155550120',
      workflowId: `no-such-workflow-${leadId}`,
      requestId: randomUUID(),
    },
  });
  return db.call.create({
    data: {
      workspaceId: side.owner.workspaceId,
      campaignId: campaign.id,
      leadId,
      attempt: 1,
      attemptId: `${leadId}:1`,
      provider,
      carrierConnectionId: side.connection.id,
      providerCallId,
      carrierStatus: providerCallId ? 'queued' : null,
      status: 'dialing',
      startedAt: new Date(),
      workflowId: `no-such-workflow-${leadId}`,
      fromNumber: side.caller,
      toNumber: '+14155550120',
    },
  });
}

/** The call once its call intelligence is stored (it starts when the call has ended). */
export const withIntelligence = (db: Database, callId: string) =>
  until(
    () => db.call.findUniqueOrThrow({ where: { id: callId } }),
    (call) => call.intelligence !== null,
  );

/** What one side said in a transcript, in order. */
export const said = (transcript: Transcript, speaker: 'agent' | 'lead') =>
  transcript.filter((turn) => turn.speaker === speaker).map((turn) => turn.text);

type PushedLead = { leadId: string; handle: { result(): Promise<unknown> } };

/**
 * The three-rung ladder through a carrier's twin (last digits 5 busy, 6 no answer, 2 a person, 7 a machine, 9 no such
 * number): busy and no-answer numbers three calls each, the answered one one, a machine three voicemails, the unknown
 * number one call invalid_number; each call's outcome, carrier state and answeredBy as the carrier's mapping says.
 * `push` pushes a lead of a campaign on QUICK_LADDER to the number `prefix` + the digit.
 */
export async function expectThreeRungLadder(
  db: Database,
  push: (phone: string) => Promise<PushedLead>,
  prefix: string,
) {
  const busy = await push(`${prefix}5`);
  const unanswered = await push(`${prefix}6`);
  const answered = await push(`${prefix}2`);
  const machine = await push(`${prefix}7`);
  const invalid = await push(`${prefix}9`);
  expect(await busy.handle.result()).toMatchObject({ outcome: 'busy', attempts: 3 });
  expect(await unanswered.handle.result()).toMatchObject({ outcome: 'no_answer', attempts: 3 });
  expect(await answered.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
  expect(await machine.handle.result()).toMatchObject({ outcome: 'voicemail', attempts: 3 });
  expect(await invalid.handle.result()).toMatchObject({ outcome: 'invalid_number', attempts: 1 });
  const outcomes = async (leadId: string) =>
    (await db.call.findMany({ where: { leadId }, orderBy: { attempt: 'asc' } })).map((call) => [
      call.outcome,
      call.carrierStatus,
      call.answeredBy,
    ]);
  expect(await outcomes(busy.leadId)).toEqual(Array(3).fill(['busy', 'busy', null]));
  expect(await outcomes(unanswered.leadId)).toEqual(Array(3).fill(['no_answer', 'no-answer', null]));
  expect(await outcomes(answered.leadId)).toEqual([['answered', 'completed', 'human']]);
  expect(await outcomes(machine.leadId)).toEqual(Array(3).fill(['voicemail', 'completed', 'machine']));
  expect(await outcomes(invalid.leadId)).toEqual([['invalid_number', 'failed', null]]);
}

/**
 * The transcript of a script walk in which the lead answered every question: the agent's opening, each question then
 * the lead's answer (with its confidence), the closing; its turns timed in order, the last after the first.
 */
export function expectAnsweredWalk(
  transcript: Transcript,
  expected: { agent: string[]; lead: Array<{ text: string; confidence: number | null }> },
) {
  expect(said(transcript, 'lead')).toEqual(expected.lead.map((answer) => answer.text));
  expect(said(transcript, 'agent')).toEqual(expected.agent);
  expect(transcript.map((turn) => turn.speaker)).toEqual([
    'agent',
    ...expected.lead.flatMap(() => ['agent', 'lead']),
    'agent',
  ]);
  expect(transcript.filter((turn) => turn.speaker === 'lead').map((turn) => turn.confidence ?? null)).toEqual(
    expected.lead.map((answer) => answer.confidence),
  );
  const offsets = transcript.map((turn) => turn.offsetMs);
  expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
  expect(offsets.at(-1)).toBeGreaterThan(0);
}
