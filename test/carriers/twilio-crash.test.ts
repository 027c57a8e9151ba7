// The Twilio path across crashes (issue 29): leads of a campaign whose caller number is bound to a twilio-twin
// connection, with calls ringing and answered (the agent's script walk running), while one process is killed with
// SIGKILL and started again: the worker, the API (which receives Twilio's callbacks and TwiML requests), the Twilio
// twin. Every process is the production entry point, on the test file's database: worker/main.ts, api/main.ts,
// simulators/twilio-twin/main.ts. Whatever dies, every lead finishes, the twin placed exactly one call per attempt
// (its own table), every line is given back and no lead is left waiting. With Twilio's default delivery (each callback
// sent once), the callbacks sent while the API is down are lost, and reconciliation (the adapter's lookup, past
// CALL_END_DEADLINE_SECONDS) ends those calls.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { connectCarrier } from '../../lib/carriers/connections';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { freePort, waitFor } from '../../scripts/stack/child-process';
import { insertAgent } from '../support/agents';
import { checkedFetch } from '../support/api';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';
import { leadResult } from '../support/lead-workflows';
import { startEntryPoint, type TestProcess } from '../support/processes';
import { uniqueTaskQueue, useTemporalClient, type TestTemporal } from '../support/temporal';
import { until } from '../support/until';
import { workerProcesses, killWorker } from '../support/worker-process';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const SECRETS_KEYS = newKeyringEntry('k1');
const keyring = keyringSchema.parse(SECRETS_KEYS);
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
const twinPort = await freePort();
const twinUrl = `http://127.0.0.1:${twinPort}`;
const connection = await connectCarrier(db, keyring, {
  workspaceId: owner.workspaceId,
  provider: 'twilio-twin',
  baseUrl: twinUrl,
  account: { family: 'twilio', accountSid: TWILIO_TWIN_ACCOUNT_SID, secrets: { authToken: TWILIO_TWIN_AUTH_TOKEN } },
});
const caller = '+14155579000';
await assignPhoneNumber(db, owner.workspaceId, caller, undefined, connection.id);
const QUESTIONS = ['Which colour would you like?', 'How many pairs would you like?'];
const agent = await insertAgent(db, owner.workspaceId, {
  name: 'Crash',
  script: {
    openingLine: 'Hello {{name}}, this is the shoe shop.',
    questions: QUESTIONS,
    closing: 'Thank you, goodbye.',
  },
  voicemailMessage: 'Hi {{name}}, this is the shoe shop: please call us back.',
});
/** What the agent says to a person, in order, when the walk runs to its end. */
const SCRIPT = [
  'agent: Hello Ana, this is the shoe shop.',
  ...QUESTIONS.map((question) => `agent: ${question}`),
  'agent: Thank you, goodbye.',
];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Twin time at a tenth: ringing 0.1 s after the dial, a person answers 0.5 s later and the script walk (opening line,
 * two questions and their answers, the closing) lasts some 2 s; busy after 0.2 s of ringing, no answer after 6 s.
 */
const TIME_SCALE = '0.1';

/** The Twilio twin as its own process (npm run twilio-twin) on the connection's port, with the development account. */
async function startTwin(delivery: 'until-answered' | 'once'): Promise<TestProcess> {
  const twin = startEntryPoint(
    'simulators/twilio-twin/main.ts',
    {
      DATABASE_URL: url,
      TWILIO_TWIN_PORT: String(twinPort),
      TWILIO_TWIN_TIME_SCALE: TIME_SCALE,
      TWILIO_TWIN_CALLBACK_DELIVERY: delivery,
    },
    { output: 'ignore' },
  );
  await waitFor('twilio twin', () => fetch(`${twinUrl}/control/calls/CA0/log`), 30_000, twin.exited);
  return twin;
}

/** The production API (api/main.ts): the callbacks' and TwiML's receiver, at PUBLIC_BASE_URL; also takes the pushes. */
function apiProcesses(temporal: TestTemporal, port: number) {
  const baseUrl = `http://127.0.0.1:${port}`;
  return async (): Promise<TestProcess> => {
    const api = startEntryPoint(
      'api/main.ts',
      {
        DATABASE_URL: url,
        PORT: String(port),
        TEMPORAL_ADDRESS: temporal.connection.options.address,
        TEMPORAL_TASK_QUEUE: temporal.taskQueue,
        SECRETS_KEYS,
        PUBLIC_BASE_URL: baseUrl,
      },
      { output: 'ignore' },
    );
    await waitFor('api/main.ts', () => fetch(`${baseUrl}/health`), 30_000, api.exited);
    return api;
  };
}

/** A whole stack for one test: the twin, the API and the worker, each a process of its own. */
async function twilioStack(name: string, options: { delivery?: 'until-answered' | 'once'; deadlineSeconds?: number }) {
  const temporal = await useTemporalClient(uniqueTaskQueue(name));
  const twin = await startTwin(options.delivery ?? 'until-answered');
  const apiPort = await freePort();
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const startApi = apiProcesses(temporal, apiPort);
  const api = await startApi();
  const startWorker = workerProcesses({
    databaseUrl: url,
    taskQueue: temporal.taskQueue,
    // Nothing here calls through the simulated carrier: every call is on the connection.
    carrierUrl: 'http://127.0.0.1:9',
    apiUrl,
    env: {
      SECRETS_KEYS,
      PUBLIC_BASE_URL: apiUrl,
      TELEPHONY_STATUS_CALLBACK_EVENTS: 'ringing,in-progress',
      ...(options.deadlineSeconds !== undefined && { CALL_END_DEADLINE_SECONDS: String(options.deadlineSeconds) }),
    },
  });
  const worker = startWorker();
  return { temporal, twin, api, apiUrl, startApi, startWorker, worker };
}

let numberBlock = 0;
/**
 * Ten leads by the twin's numbering plan (the last digit): four people who answer (…0-…3: one call, the script walk),
 * two busy (…5) and one unanswered (…6) number (three calls each, a rung a second apart), two answering machines (…7:
 * three calls, the voicemail message left on each) and one more person. Numbers of their own for each test.
 */
function leadsOfTest() {
  const block = 10 + numberBlock++;
  return ['0', '1', '5', '7', '2', '6', '3', '5', '7', '0'].map((digit, index) => ({
    lead: { phone: `+1415557${block}${index}${digit}`, name: 'Ana' },
    idempotencyKey: randomUUID(),
  }));
}

async function campaignWithLeads(apiUrl: string, name: string) {
  const campaign = await db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name,
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: QUICK_LADDER,
      callingWindow: ALWAYS_OPEN,
      callerNumbers: [caller],
      agentId: agent.id,
    },
  });
  const leads = leadsOfTest();
  const response = await checkedFetch(`${apiUrl}/v1/campaigns/${campaign.id}/leads/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ leads }),
  });
  expect(((await response.json()) as { summary: unknown }).summary).toEqual({
    queued: leads.length,
    duplicate: 0,
    rejected: 0,
  });
  return { campaignId: campaign.id, leads };
}

/**
 * Waits until the campaign has a call ringing and a call answered by a person whose script walk has stored one of the
 * lead's answers and goes on (not ended): the moment to kill a process.
 */
async function midCall(campaignId: string) {
  return until(
    async () => {
      const calls = await db.call.findMany({
        where: { campaignId, status: 'dialing' },
        select: { id: true, carrierStatus: true, answeredBy: true },
      });
      const walking = await db.callTurn.count({
        where: {
          speaker: 'lead',
          callId: { in: calls.filter((call) => call.carrierStatus === 'in-progress').map((call) => call.id) },
        },
      });
      return { ringing: calls.filter((call) => call.carrierStatus === 'ringing').length, walking };
    },
    (now) => now.ringing > 0 && now.walking > 0,
    60_000,
  );
}

const busy = (phone: string) => phone.endsWith('5');
const unanswered = (phone: string) => phone.endsWith('6');
const machine = (phone: string) => phone.endsWith('7');
const person = (phone: string) => !busy(phone) && !unanswered(phone) && !machine(phone);

/**
 * What no crash may change: each lead finished (its workflow's result, its row: completed or failed, waiting for
 * nothing), its calls attempts 1..n each ended and one per attempt of its result; the twin's own table holds exactly
 * one call per attempt (its SIDs are the calls' providerCallIds, each ended on the twin), no other; every line given
 * back and the line queue empty.
 */
async function expectEveryLeadFinished(
  temporal: TestTemporal,
  campaignId: string,
  leads: ReturnType<typeof leadsOfTest>,
) {
  const results = await Promise.all(leads.map((lead) => leadResult(temporal.client, campaignId, lead.idempotencyKey)));
  const stored = await db.lead.findMany({
    where: { campaignId },
    include: { calls: { orderBy: { attempt: 'asc' } } },
  });
  expect(stored).toHaveLength(leads.length);
  for (const [index, lead] of leads.entries()) {
    const row = stored.find((each) => each.idempotencyKey === lead.idempotencyKey)!;
    expect(row, row.phone).toMatchObject({ waitingFor: null, nextAttemptAt: null });
    expect(['completed', 'failed'], row.phone).toContain(row.status);
    expect(
      row.calls.map((call) => call.attempt),
      row.phone,
    ).toEqual(Array.from({ length: results[index]!.attempts }, (_, attempt) => attempt + 1));
    expect(
      row.calls.every((call) => call.status === 'ended' && call.carrierConnectionId === connection.id),
      row.phone,
    ).toBe(true);
    // The ladder's rule: every call before the last moved it on, and the last ended it (answered) or was the third.
    // A person ends it at the first call; busy and unanswered numbers walk all three rungs. A machine does too, unless
    // its call ended before detection finished (the API down for its TwiML: Twilio ends the call, 11200, and sends no
    // AnsweredBy): a call completed with no one known to have answered is answered.
    const outcomes = row.calls.map((call) => call.outcome);
    expect(outcomes.slice(0, -1).includes('answered'), row.phone).toBe(false);
    expect(outcomes.at(-1) === 'answered' || outcomes.length === 3, row.phone).toBe(true);
    if (person(row.phone)) expect(outcomes, row.phone).toEqual(['answered']);
    if (busy(row.phone) || unanswered(row.phone)) expect(outcomes, row.phone).toHaveLength(3);
    // The twin's own record: one call to this number per attempt, and they are the calls the product holds.
    const onTwin = await db.twilioTwinCall.findMany({ where: { to: row.phone, from: caller } });
    expect(onTwin.map((call) => call.sid).sort(), row.phone).toEqual(
      row.calls.map((call) => call.providerCallId).sort(),
    );
    expect(
      onTwin.every((call) => ['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(call.status)),
      row.phone,
    ).toBe(true);
  }
  const campaign = await db.campaign.findUniqueOrThrow({ where: { id: campaignId } });
  expect(campaign.callsInFlight).toBe(0);
  expect(await db.lineQueue.count({ where: { campaignId } })).toBe(0);
  return { results, stored };
}

/** The turns of a call's script walk, in order: speaker and text. */
async function walkOf(callId: string) {
  return (await db.callTurn.findMany({ where: { callId }, orderBy: [{ step: 'asc' }, { part: 'asc' }] })).map(
    (turn) => `${turn.speaker}: ${turn.text}`,
  );
}

/** A person's call walked the whole script: every line of the agent once, in order, and an answer to each question. */
async function expectWholeWalk(callId: string, phone: string) {
  const walk = await walkOf(callId);
  expect(
    walk.filter((turn) => turn.startsWith('agent: ')),
    phone,
  ).toEqual(SCRIPT);
  expect(
    walk.filter((turn) => turn.startsWith('lead: ')),
    phone,
  ).toHaveLength(QUESTIONS.length);
}

/** Calls of the campaign ended by reconciliation (the lookup's event, lookup:<CallSid>:<status>) rather than a callback. */
async function reconciledCalls(campaignId: string) {
  return db.callEvent.count({
    where: { eventId: { startsWith: 'lookup:' }, applied: true, call: { campaignId } },
  });
}

describe('the Twilio path with a process killed with SIGKILL mid-call', () => {
  it('the worker: calls ring and talk on without it, the next worker finishes every lead, one Twilio call per attempt', async () => {
    const stack = await twilioStack('twilio-crash-worker', {});
    const { campaignId, leads } = await campaignWithLeads(stack.apiUrl, 'Twilio, worker crash');
    await midCall(campaignId);
    await killWorker(stack.worker);
    // Calls go on at the twin meanwhile: their callbacks and script steps reach the API, whatever runs the workflows.
    await sleep(1_500);
    stack.startWorker();
    const { stored } = await expectEveryLeadFinished(stack.temporal, campaignId, leads);
    for (const lead of stored) {
      const outcomes = lead.calls.map((call) => call.outcome);
      if (person(lead.phone)) {
        expect(outcomes, lead.phone).toEqual(['answered']);
        // The whole walk, each turn once: no step recorded twice or skipped.
        await expectWholeWalk(lead.calls[0]!.id, lead.phone);
      } else if (busy(lead.phone)) expect(outcomes, lead.phone).toEqual(['busy', 'busy', 'busy']);
      else if (unanswered(lead.phone)) expect(outcomes, lead.phone).toEqual(['no_answer', 'no_answer', 'no_answer']);
      else expect(outcomes, lead.phone).toEqual(['voicemail_left', 'voicemail_left', 'voicemail_left']);
    }
    expect(await reconciledCalls(campaignId)).toBe(0);
  }, 180_000);

  it("the API: the twin retries its callbacks until the next API answers; a script step it could not fetch ends that call (Twilio's 11200)", async () => {
    const stack = await twilioStack('twilio-crash-api', {});
    const { campaignId, leads } = await campaignWithLeads(stack.apiUrl, 'Twilio, API crash');
    await midCall(campaignId);
    await stack.api.kill();
    await sleep(1_500);
    await stack.startApi();
    const { stored } = await expectEveryLeadFinished(stack.temporal, campaignId, leads);
    for (const lead of stored.filter((each) => person(each.phone))) {
      expect(lead.calls[0]!.outcome, lead.phone).toBe('answered');
      // Stored once each, in order: a walk cut short by the outage is a prefix of the script, never a step twice.
      const said = (await walkOf(lead.calls[0]!.id)).filter((turn) => turn.startsWith('agent: '));
      expect(said, lead.phone).toEqual(SCRIPT.slice(0, said.length));
    }
    // Every callback the twin owed was delivered: none is left, and no call needed the lookup.
    expect(await db.twilioTwinCallback.count({ where: { deliveredAt: null, call: { from: caller } } })).toBe(0);
    expect(await reconciledCalls(campaignId)).toBe(0);
  }, 180_000);

  it('the twin: it goes on with its calls from its table, callbacks owed delivered after the restart, each call still placed once', async () => {
    const stack = await twilioStack('twilio-crash-twin', {});
    const { campaignId, leads } = await campaignWithLeads(stack.apiUrl, 'Twilio, twin crash');
    await midCall(campaignId);
    await stack.twin.kill();
    const killedAt = Date.now();
    // Dials fail meanwhile (refused: retried by Temporal), hang-ups and redirects too.
    await sleep(1_500);
    await startTwin('until-answered');
    const { stored } = await expectEveryLeadFinished(stack.temporal, campaignId, leads);
    console.log(`twin crash: every lead finished ${Date.now() - killedAt} ms after the kill`);
    for (const lead of stored.filter((each) => person(each.phone))) {
      expect(lead.calls[0]!.outcome, lead.phone).toBe('answered');
      // The twin takes its calls' programs up where they were: the whole walk, a step it fetched again stored once.
      await expectWholeWalk(lead.calls[0]!.id, lead.phone);
    }
    // Nothing was lost: the callbacks the twin owed at its death were sent by its next start.
    expect(await reconciledCalls(campaignId)).toBe(0);
  }, 180_000);

  it("Twilio's default delivery (each callback once), the API killed: lost callbacks, and reconciliation ends those calls past the deadline", async () => {
    const DEADLINE_SECONDS = 15;
    const stack = await twilioStack('twilio-crash-lost', { delivery: 'once', deadlineSeconds: DEADLINE_SECONDS });
    const { campaignId, leads } = await campaignWithLeads(stack.apiUrl, 'Twilio, lost callbacks');
    await midCall(campaignId);
    await stack.api.kill();
    await sleep(1_500);
    const restartedAt = Date.now();
    await stack.startApi();
    await expectEveryLeadFinished(stack.temporal, campaignId, leads);
    console.log(
      `lost callbacks: every lead finished ${Date.now() - restartedAt} ms after the API's restart (deadline ${DEADLINE_SECONDS} s)`,
    );
    // The callbacks sent into the outage were not sent again: the calls they would have ended were ended by the lookup.
    expect(await reconciledCalls(campaignId)).toBeGreaterThan(0);
    const reconciled = await db.callEvent.findMany({
      where: { eventId: { startsWith: 'lookup:' }, applied: true, call: { campaignId } },
      include: { call: true },
    });
    const lags: number[] = [];
    for (const event of reconciled) {
      expect(event.call.status).toBe('ended');
      expect(event.eventId).toBe(`lookup:${event.call.providerCallId}:${event.call.carrierStatus}`);
      const onTwin = await db.twilioTwinCall.findUniqueOrThrow({ where: { sid: event.call.providerCallId! } });
      lags.push(event.receivedAt.getTime() - onTwin.endTime!.getTime());
    }
    console.log(
      `lost callbacks: ${reconciled.length} call(s) ended by the lookup, ${Math.min(...lags)}-${Math.max(...lags)} ms after the twin ended them`,
    );
  }, 240_000);
});
