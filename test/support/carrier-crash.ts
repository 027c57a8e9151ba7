import { killWorker } from './worker-process';
import { randomUUID } from 'node:crypto';
import { expect, TestRunner } from 'vitest';
import type { Database } from '../../lib/database';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { keyringSchema, newKeyringEntry, type Keyring } from '../../lib/secrets/keyring';
import { freePort, waitFor } from '../../scripts/stack/child-process';
import { insertAgent } from './agents';
import { checkedFetch } from './api';
import { useTestDatabase } from './database';
import { ALWAYS_OPEN, QUICK_LADDER } from './ladders';
import { leadResult } from './lead-workflows';
import { forTheFile, startEntryPoint, type TestProcess } from './processes';
import { uniqueTaskQueue, useTemporalClient, type TestTemporal } from './temporal';
import { until } from './until';
import { PLAIN_TEST_PAYLOADS, workerProcesses } from './worker-process';
import { createTestWorkspace, type TestWorkspace } from './workspace';

/**
 * What the carrier crash tests (test/carriers/twilio-crash.test.ts, telnyx-crash.test.ts) share: ten leads of a
 * campaign whose caller number is bound to a twin's connection, the API and the worker as production processes of
 * their own, the moment to kill one (a call ringing, a person's script walk under way), and the invariants no crash may
 * change. Each carrier gives its twin's process and how to read the twin's own table.
 */

/** A call as the twin's own table holds it: its id (the call's providerCallId), its state there, whether it has ended. */
export interface TwinCallRow {
  id: string;
  status: string;
  ended: boolean;
  /** When it ended on the twin. */
  endedAt: Date | null;
}

export interface CarrierCrashSetup {
  db: Database;
  /** The test file's database URL, for every process. */
  url: string;
  secretsKeys: string;
  owner: TestWorkspace;
  connectionId: string;
  caller: string;
  /** The twin's own record of the calls from the caller to `phone`. */
  twinCallsTo(phone: string): Promise<TwinCallRow[]>;
}

export const CRASH_QUESTIONS = ['Which colour would you like?', 'How many pairs would you like?'];
/** What the agent says to a person, in order, when the walk runs to its end. */
export const CRASH_SCRIPT = [
  'agent: Hello Ana, this is the shoe shop.',
  ...CRASH_QUESTIONS.map((question) => `agent: ${question}`),
  'agent: Thank you, goodbye.',
];

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The twins' numbering plan (the last digit): busy …5, no answer …6, a machine …7, a person otherwise. */
export const busy = (phone: string) => phone.endsWith('5');
export const unanswered = (phone: string) => phone.endsWith('6');
export const machine = (phone: string) => phone.endsWith('7');
export const person = (phone: string) => !busy(phone) && !unanswered(phone) && !machine(phone);

/** Starts a twin's process and waits until its control route answers at `twinUrl`. */
export async function startTwinProcess(
  name: string,
  entry: string,
  twinUrl: string,
  env: Record<string, string>,
): Promise<TestProcess> {
  const twin = startEntryPoint(entry, env, { output: 'ignore' });
  await waitFor(name, () => fetch(`${twinUrl}/control/calls/none/log`), 30_000, twin.exited);
  return twin;
}

/** How a twin delivers its callbacks or webhooks: again until the product answers 2xx, or each once (as Twilio does). */
export type TwinDelivery = 'until-answered' | 'once';

/**
 * What a carrier's crash test file sets up before its tests: its database, a workspace whose caller number is bound to
 * a connection (`connect`) to the carrier's twin on a free port, the bench on them, and the twin's process (`twin`: its
 * name, entry point and environment on that port with that delivery) to start in each test's stack, with the API and
 * the worker (`workerEnv` added to the worker's environment).
 */
export async function carrierCrashFile(carrier: {
  caller: string;
  connect(db: Database, keyring: Keyring, workspaceId: string, twinUrl: string): Promise<{ id: string }>;
  /** The twin's own record of the calls from the caller to `phone`. */
  twinCallsTo(db: Database, phone: string): Promise<TwinCallRow[]>;
  twin: { name: string; entry: string; env(port: number, delivery: TwinDelivery): Record<string, string> };
  workerEnv?: Record<string, string>;
  /** Added to the API's environment (e.g. CONVERSATION_ENGINE=gather). */
  apiEnv?: Record<string, string>;
}) {
  const { db, url } = await useTestDatabase();
  const secretsKeys = newKeyringEntry('k1');
  const keyring = keyringSchema.parse(secretsKeys);
  const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
  const twinPort = await freePort();
  const twinUrl = `http://127.0.0.1:${twinPort}`;
  const connection = await carrier.connect(db, keyring, owner.workspaceId, twinUrl);
  await assignPhoneNumber(db, owner.workspaceId, carrier.caller, undefined, connection.id);
  const bench = await carrierCrashBench({
    db,
    url,
    secretsKeys,
    owner,
    connectionId: connection.id,
    caller: carrier.caller,
    twinCallsTo: (phone) => carrier.twinCallsTo(db, phone),
  });

  /** The twin as its own process (its npm script) on the connection's port, with the development account. */
  const startTwin = (delivery: TwinDelivery) => () =>
    startTwinProcess(carrier.twin.name, carrier.twin.entry, twinUrl, {
      DATABASE_URL: url,
      ...carrier.twin.env(twinPort, delivery),
    });

  /** A whole stack (bench.stack): the twin, the API and the worker, each a process of its own. */
  const stack = (name: string, options: { delivery?: TwinDelivery; deadlineSeconds?: number }) =>
    bench.stack(name, {
      startTwin: startTwin(options.delivery ?? 'until-answered'),
      deadlineSeconds: options.deadlineSeconds,
      workerEnv: carrier.workerEnv,
      apiEnv: carrier.apiEnv,
    });

  return { db, bench, stack };
}

export async function carrierCrashBench(setup: CarrierCrashSetup) {
  const { db, url, owner, secretsKeys } = setup;
  const agent = await insertAgent(db, owner.workspaceId, {
    name: 'Crash',
    script: {
      openingLine: 'Hello {{name}}, this is the shoe shop.',
      questions: CRASH_QUESTIONS,
      closing: 'Thank you, goodbye.',
    },
    voicemailMessage: 'Hi {{name}}, this is the shoe shop: please call us back.',
  });

  /** The production API (api/main.ts): the carrier's receiver at PUBLIC_BASE_URL; also takes the pushes. */
  function apiProcesses(temporal: TestTemporal, port: number, env: Record<string, string> = {}) {
    const baseUrl = `http://127.0.0.1:${port}`;
    return async (): Promise<TestProcess> => {
      const api = startEntryPoint(
        'api/main.ts',
        {
          DATABASE_URL: url,
          PORT: String(port),
          TEMPORAL_ADDRESS: temporal.connection.options.address,
          TEMPORAL_TASK_QUEUE: temporal.taskQueue,
          // Plain payloads, as the test's own client reads them.
          ...PLAIN_TEST_PAYLOADS,
          SECRETS_KEYS: secretsKeys,
          PUBLIC_BASE_URL: baseUrl,
          ...env,
        },
        { output: 'ignore' },
      );
      await waitFor('api/main.ts', () => fetch(`${baseUrl}/health`), 30_000, api.exited);
      return api;
    };
  }

  /**
   * A whole stack: the twin (`startTwin`), the API and the worker, each a process of its own, started side by side; the
   * worker with `deadlineSeconds` as its CALL_END_DEADLINE_SECONDS when given (the setting itself: no test-only code).
   * Started while the file is collected, it is the file's (`shared`): its restarts (a crash's) live on to the next test.
   * Each restart replaces the stack's process of that kind.
   */
  async function stack(
    name: string,
    options: {
      startTwin: () => Promise<TestProcess>;
      deadlineSeconds?: number;
      workerEnv?: Record<string, string>;
      apiEnv?: Record<string, string>;
    },
  ) {
    const restarted = TestRunner.getCurrentTest() ? <T>(start: () => T) => start() : forTheFile;
    const temporal = await useTemporalClient(uniqueTaskQueue(name));
    const apiPort = await freePort();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const startApi = apiProcesses(temporal, apiPort, options.apiEnv);
    const startWorker = workerProcesses({
      databaseUrl: url,
      taskQueue: temporal.taskQueue,
      // Nothing here calls through the simulated carrier: every call is on the connection.
      carrierUrl: 'http://127.0.0.1:9',
      apiUrl,
      env: {
        SECRETS_KEYS: secretsKeys,
        PUBLIC_BASE_URL: apiUrl,
        ...options.workerEnv,
        ...(options.deadlineSeconds !== undefined && { CALL_END_DEADLINE_SECONDS: String(options.deadlineSeconds) }),
      },
    });
    const worker = startWorker();
    const [twin, api] = await Promise.all([options.startTwin(), startApi()]);
    const running = {
      temporal,
      twin,
      api,
      apiUrl,
      worker,
      async restartApi() {
        running.api = await restarted(startApi);
      },
      restartWorker() {
        running.worker = restarted(startWorker);
      },
      async restartTwin() {
        running.twin = await restarted(options.startTwin);
      },
      /** Kills its processes (a shared stack's, for a test that needs the twin's port). */
      async stop() {
        await Promise.all([running.twin.kill(), running.api.kill(), killWorker(running.worker)]);
      },
    };
    return running;
  }

  let numberBlock = 0;
  /**
   * Ten leads by the twin's numbering plan (the last digit): four people who answer (…0-…3: one call, the script
   * walk), two busy (…5) and one unanswered (…6) number (three calls each, a rung a second apart), two answering
   * machines (…7: three calls, the voicemail message left on each) and one more person. Numbers of their own for each
   * test.
   */
  function leadsOfTest() {
    const block = 10 + numberBlock++;
    return ['0', '1', '5', '7', '2', '6', '3', '5', '7', '0'].map((digit, index) => ({
      lead: { phone: `+1415557${block}${index}${digit}`, name: 'Ana' },
      idempotencyKey: randomUUID(),
    }));
  }
  type Leads = ReturnType<typeof leadsOfTest>;

  async function campaignWithLeads(apiUrl: string, name: string) {
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name,
        acceptsLeadPush: true,
        status: 'RUNNING',
        dialLadder: QUICK_LADDER,
        callingWindow: ALWAYS_OPEN,
        callerNumbers: [setup.caller],
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
   * Waits until one of the leads' calls rings (on the twin: Telnyx sends no ringing webhook) and a call answered by a
   * person has a script walk that stored one of the lead's answers and goes on (not ended): the moment to kill.
   */
  async function midCall(campaignId: string, leads: Leads) {
    return until(
      async () => {
        const onTwin = await Promise.all(leads.map((lead) => setup.twinCallsTo(lead.lead.phone)));
        const walking = await db.callTurn.count({
          where: { speaker: 'lead', call: { campaignId, status: 'dialing', carrierStatus: 'in-progress' } },
        });
        return { ringing: onTwin.flat().filter((call) => call.status === 'ringing').length, walking };
      },
      (now) => now.ringing > 0 && now.walking > 0,
      60_000,
    );
  }

  /**
   * What no crash may change: each lead finished (its workflow's result, its row: completed or failed, waiting for
   * nothing), its calls attempts 1..n each ended and one per attempt of its result; the twin's own table holds exactly
   * one call per attempt (its ids are the calls' providerCallIds, each ended on the twin), no other; every line given
   * back and the line queue empty.
   */
  async function expectEveryLeadFinished(temporal: TestTemporal, campaignId: string, leads: Leads) {
    const results = await Promise.all(
      leads.map((lead) => leadResult(temporal.client, campaignId, lead.idempotencyKey)),
    );
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
        row.calls.every((call) => call.status === 'ended' && call.carrierConnectionId === setup.connectionId),
        row.phone,
      ).toBe(true);
      // The ladder's rule: every call before the last moved it on, and the last ended it (answered) or was the third.
      // A person ends it at the first call heard; busy and unanswered numbers walk all three rungs, machines too. A
      // call nobody heard (a Twilio answer's TwiML request meeting the dead API ends it, 11200: completed with no
      // AnsweredBy and no step-0 turn) ended failed, and the ladder called again: never answered.
      const outcomes = row.calls.map((call) => call.outcome);
      expect(outcomes.slice(0, -1).includes('answered'), row.phone).toBe(false);
      expect(outcomes.at(-1) === 'answered' || outcomes.length === 3, row.phone).toBe(true);
      // Twilio's walk starts at the answer (Telnyx's at the detection: not told apart there).
      for (const call of row.calls.filter((each) => each.provider.startsWith('twilio'))) {
        const unheard =
          call.carrierStatus === 'completed' &&
          call.answeredBy === null &&
          (await db.callTurn.count({ where: { callId: call.id, step: 0 } })) === 0;
        expect(call.outcome === 'failed', `${row.phone} attempt ${call.attempt}`).toBe(unheard);
      }
      // A person: answered at the first call heard; an outage longer than the ladder's three quick rungs may leave
      // none heard (each Twilio call failed).
      const heard = row.calls
        .filter((call) => !(call.provider.startsWith('twilio') && call.outcome === 'failed'))
        .map((call) => call.outcome);
      if (person(row.phone)) expect(heard, row.phone).toEqual(heard.length === 0 ? [] : ['answered']);
      if (busy(row.phone) || unanswered(row.phone)) expect(outcomes, row.phone).toHaveLength(3);
      // The twin's own record: one call to this number per attempt, and they are the calls the product holds.
      const onTwin = await setup.twinCallsTo(row.phone);
      expect(onTwin.map((call) => call.id).sort(), row.phone).toEqual(
        row.calls.map((call) => call.providerCallId).sort(),
      );
      expect(
        onTwin.every((call) => call.ended),
        row.phone,
      ).toBe(true);
    }
    const campaign = await db.campaign.findUniqueOrThrow({ where: { id: campaignId } });
    expect(campaign.callsInFlight).toBe(0);
    expect(await db.lineQueue.count({ where: { campaignId } })).toBe(0);
    return { results, stored };
  }

  /** Each lead's outcomes as its number scripts them, and each person's walk whole: for a crash that loses nothing. */
  async function expectScriptedOutcomes(stored: Awaited<ReturnType<typeof expectEveryLeadFinished>>['stored']) {
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
    ).toEqual(CRASH_SCRIPT);
    expect(
      walk.filter((turn) => turn.startsWith('lead: ')),
      phone,
    ).toHaveLength(CRASH_QUESTIONS.length);
  }

  /**
   * Each person's walk stored once, in order: a walk cut short by an outage is a prefix of the script, never a step
   * twice. Answers each person's call and whether its walk is whole.
   */
  async function expectWalksPrefixes(stored: Awaited<ReturnType<typeof expectEveryLeadFinished>>['stored']) {
    const walks = [];
    for (const lead of stored.filter((each) => person(each.phone))) {
      // The call heard: any other was heard by nobody (expectEveryLeadFinished), with no turn.
      const call = lead.calls.find((each) => each.outcome === 'answered');
      if (!call) continue;
      const said = (await walkOf(call.id)).filter((turn) => turn.startsWith('agent: '));
      expect(said, lead.phone).toEqual(CRASH_SCRIPT.slice(0, said.length));
      walks.push({ phone: lead.phone, call, whole: said.length === CRASH_SCRIPT.length });
    }
    return walks;
  }

  /** The campaign's calls ended by reconciliation (the lookup's event, lookup:<id>:<status>) rather than the carrier's. */
  function reconciledEvents(campaignId: string) {
    return db.callEvent.findMany({
      where: { eventId: { startsWith: 'lookup:' }, applied: true, call: { campaignId } },
      include: { call: true },
    });
  }

  /**
   * The calls ended by reconciliation, some at least: each ended by its lookup's event, which names its carrier state;
   * answers them and how long after the twin had ended each the lookup ended it (ms).
   */
  async function expectReconciledEnds(campaignId: string) {
    const reconciled = await reconciledEvents(campaignId);
    expect(reconciled.length).toBeGreaterThan(0);
    const lags: number[] = [];
    for (const event of reconciled) {
      expect(event.call.status).toBe('ended');
      expect(event.eventId).toBe(`lookup:${event.call.providerCallId}:${event.call.carrierStatus}`);
      const onTwin = (await setup.twinCallsTo(event.call.toNumber!)).find(
        (call) => call.id === event.call.providerCallId,
      );
      expect(onTwin?.ended).toBe(true);
      lags.push(event.receivedAt.getTime() - onTwin!.endedAt!.getTime());
    }
    return { reconciled, lags: `${Math.min(...lags)}-${Math.max(...lags)} ms` };
  }

  /**
   * The worker killed mid-call and started again 1.5 s later, in the stack given: every lead finishes with its
   * scripted outcome, and no call needed the lookup. Answers when every lead had finished, from the kill.
   */
  async function expectWorkerCrashSurvived(
    testStack: Awaited<ReturnType<typeof stack>>,
    campaignName: string,
  ): Promise<{ campaignId: string; finishedAfterMs: number }> {
    const { campaignId, leads } = await campaignWithLeads(testStack.apiUrl, campaignName);
    await midCall(campaignId, leads);
    await killWorker(testStack.worker);
    const killedAt = Date.now();
    // Calls go on at the twin meanwhile: their callbacks (webhooks) and script steps reach the API.
    await sleep(1_500);
    testStack.restartWorker();
    const { stored } = await expectEveryLeadFinished(testStack.temporal, campaignId, leads);
    const finishedAfterMs = Date.now() - killedAt;
    await expectScriptedOutcomes(stored);
    expect(await reconciledEvents(campaignId)).toHaveLength(0);
    return { campaignId, finishedAfterMs };
  }

  return {
    agent,
    stack,
    expectWorkerCrashSurvived,
    campaignWithLeads,
    midCall,
    expectEveryLeadFinished,
    expectScriptedOutcomes,
    expectWholeWalk,
    expectWalksPrefixes,
    walkOf,
    reconciledEvents,
    expectReconciledEnds,
  };
}
