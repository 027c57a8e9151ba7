import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { simulatedConversation } from '../../simulators/simulated-carrier/conversation';
import { grantCredits } from '../../lib/door/workspace-admin';
import { MAX_MESSAGE_LENGTH } from '../../lib/test-sessions/frames';
import { insertAgent } from '../support/agents';
import { startTestApi } from '../support/api';
import { insertAnsweredCall } from '../support/calls';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { leadResult } from '../support/lead-workflows';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { startTestProcess } from '../support/processes';
import { until } from '../support/until';
import { TEST_SESSION_PROTOCOL } from '../../api/test-sessions/session-socket';
import type { AttackDone, AttackPlan } from './attack-client';
import { createTestWorkspace } from '../support/workspace';

// Issue 40's noisy-neighbour proof (docs/cpu-budget.md): workspace A attacks, workspace B runs a CLASSIC campaign of
// 100 leads on the simulated carrier, on the same API, worker and Temporal task queue. The API and the worker run in
// this process, so the event loop measured here is the worker's main thread, the one that heartbeats and polls; A's
// clients run in a process of their own (test/hostile/attack-client.ts).
const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db, { timeScale: 0.004 });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });
const attacker = await createTestWorkspace(db, { scopes: ['calls.view', 'calls.edit', 'calls.test'] });
// Test sessions hold credits (at most 15 minutes each): enough for every session of the flood.
await grantCredits(db, attacker.workspaceId, 100_000);
const neighbour = await createTestWorkspace(db, { scopes: ['campaigns.view', 'campaigns.edit'] });

/**
 * B's campaign: ten waves of its 20 concurrent calls, so that it is still calling through the quiet and the attacked
 * blocks of the p99 measurement.
 */
const LEADS = 200;
/**
 * B's p99 is read from ROUNDS blocks of BLOCK sequential GETs quiet and ROUNDS blocks under attack, taking turns: on
 * a shared machine what else runs meanwhile (other test files, a busy CPU) then falls on both sides alike, where a
 * quiet phase followed by an attacked one compared two different moments of the machine.
 */
const ROUNDS = 3;
const BLOCK = 100;
/** B's p99 under attack may be twice its quiet value, and never needs to be below this (a 3 ms quiet p99 is noise). */
const P99_FLOOR_MS = 50;
/**
 * The worker's main thread may pause this long at most under attack: the old code paused for minutes per hostile call
 * (its 64-word line), a machine of 2 CPUs shared by many test runs pauses a loop for a second or two without any attack.
 */
const MAX_PAUSE_MS = 5_000;

/**
 * The hostile agent of issue 40: a question of six placeholders and a 64-word opening line. Matching the question in
 * the opening turn with the old matcher took longer than a minute (40 words: 8.5 s; it grows as the sixth power).
 */
const HOSTILE_SCRIPT = {
  openingLine: `${Array.from({ length: 64 }, (_, index) => `word${index}`).join(' ')}.`,
  questions: ['{{a}} {{b}} {{c}} {{d}} {{e}} {{f}} zebra?'],
  closing: 'Bye.',
};

/**
 * A's test-session message at the cap: digit groups `1 1 1 …` (2,000 groups), the worst case of the card-number rule
 * (every run of 13 to 19 groups is a candidate; all ones never pass the Luhn check, so none is cut short by a match).
 * Redacting it took 9.9 s with the old cubic code, on the API's event loop (docs/hostile-input.md).
 */
const DIGIT_GROUPS = Array.from({ length: (MAX_MESSAGE_LENGTH + 1) / 2 }, () => '1').join(' ');
/** A card number that passes the Luhn check: the first message of each session, to show the rule is on. */
const CARD = '4111 1111 1111 1111';
/** The flooding sessions' agent: plain questions, so that each session takes many messages before it ends. */
const SESSION_SCRIPT = {
  openingLine: 'Hello, this is the shoe shop.',
  questions: Array.from({ length: 8 }, (_, index) => `Question ${index + 1}?`),
  closing: 'Goodbye.',
};

/** A's clients: test/hostile/attack-client.ts. */
const ATTACK_CLIENT = fileURLToPath(new URL('./attack-client.ts', import.meta.url));

const p99 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.ceil(samples.length * 0.99) - 1]!;

/** The times of BLOCK sequential GET /campaigns/{id} of B, in ms. */
async function neighbourLatencies(campaignId: string): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < BLOCK; index += 1) {
    const started = performance.now();
    const response = await api.request('GET', `/campaigns/${campaignId}`, { key: neighbour.key });
    await response.arrayBuffer();
    samples.push(performance.now() - started);
    expect(response.status).toBe(200);
  }
  return samples;
}

/** B's campaign of LEADS answered leads, pushed through the API: its id and a wait for every lead's end (ms). */
async function neighbourCampaign(name: string) {
  const campaign = await db.campaign.create({
    data: {
      workspaceId: neighbour.workspaceId,
      name,
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
      maxConcurrentCalls: 20,
    },
  });
  const keys = Array.from({ length: LEADS }, () => randomUUID());
  const started = performance.now();
  for (let from = 0; from < LEADS; from += 100) {
    const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
      key: neighbour.key,
      body: {
        leads: keys.slice(from, from + 100).map((idempotencyKey, offset) => ({
          // Ending 0-4: answered by a person (simulators/simulated-carrier/timeline.ts).
          lead: { phone: `+1415555${String(from + offset).padStart(3, '0')}${(from + offset) % 5}` },
          idempotencyKey,
        })),
      },
    });
    expect(((await response.json()) as { summary: unknown }).summary).toEqual({
      queued: 100,
      duplicate: 0,
      rejected: 0,
    });
  }
  const finished = async () => {
    await until(
      () => db.call.count({ where: { campaignId: campaign.id, status: 'ended' } }),
      (ended) => ended === LEADS,
      300_000,
    ).catch((error: Error) => {
      throw new Error(`not every lead of B's campaign "${name}" was called to its end: ${error.message}`);
    });
    const results = await Promise.all(keys.map((key) => leadResult(temporal.client, campaign.id, key)));
    expect(results.filter((result) => result.status !== 'completed')).toEqual([]);
    return performance.now() - started;
  };
  return { id: campaign.id, finished };
}

/**
 * A's attack, set up once and flooded in phases: each `flood()` runs until its `stop()`, with a re-run of the hostile
 * call's intelligence every 500 ms (each a full budget of CPU in a thread), test sessions one after another whose every
 * message is DIGIT_GROUPS at the cap (the card-number rule on), and unsigned requests to the public webhooks back to
 * back. What every phase did is summed in `done`.
 */
async function prepareAttack() {
  const put = await api.request('PUT', '/v1/compliance', {
    key: attacker.key,
    body: {
      disclosure: null,
      redaction: { cardNumbers: true, emailAddresses: false, usSocialSecurityNumbers: false, ibans: false },
    },
  });
  expect(put.status, "A's card-number rule switched on").toBe(200);
  const sessionAgent = await insertAgent(db, attacker.workspaceId, { name: 'Sessions', script: SESSION_SCRIPT });
  const agent = await insertAgent(db, attacker.workspaceId, { name: 'Hostile', script: HOSTILE_SCRIPT });
  const call = await insertAnsweredCall(db, attacker, {
    agentId: agent.id,
    answeredBy: 'human',
    carrierStatus: 'completed',
    transcript: simulatedConversation({
      agent: { script: HOSTILE_SCRIPT, extractionFields: [], language: 'en-US' },
      lead: { name: null, fields: {} },
      answeredBy: 'human',
      durationMs: 30_000,
      seed: 'hostile',
    }),
  });
  const done = { jobIds: [] as string[], webhookStatuses: new Map<number, number>(), sessionMessages: [] as number[] };
  const plan: AttackPlan = {
    baseUrl: api.baseUrl,
    key: attacker.key,
    callId: call.id,
    sessionAgentId: sessionAgent.id,
    protocol: TEST_SESSION_PROTOCOL,
    floodingLine: 'flooding',
    card: CARD,
    flood: DIGIT_GROUPS,
    targets: ['/telephony/simulated/events', '/whatsapp/webhook', `/crm/connections/${randomUUID()}/webhooks`],
    junk: JSON.stringify({ padding: 'x'.repeat(1_000) }),
  };
  const jobsEnded = () =>
    until(
      () =>
        Promise.all(
          done.jobIds.map(async (jobId) => (await temporal.client.workflow.getHandle(jobId).describe()).status.name),
        ),
      (names) => names.every((name) => name === 'COMPLETED' || name === 'FAILED'),
      // The jobs still queued when a phase stops drain one budget (1 s) at a time on the one thread.
      180_000,
    ).catch((error: Error) => {
      throw new Error(`a hostile intelligence job did not end: ${error.message}`);
    });
  const flood = async () => {
    // A's clients in a process of their own (test/hostile/attack-client.ts): see there.
    const clients = startTestProcess('attack-client', process.execPath, [
      '--import',
      'tsx',
      ATTACK_CLIENT,
      JSON.stringify(plan),
    ]);
    await until(
      async () => clients.output(),
      (output) => output.includes(plan.floodingLine) || !clients.running,
      60_000,
    ).catch((error: Error) => {
      throw new Error(`A's clients did not begin their floods: ${error.message}`);
    });
    expect(clients.running, `A's clients are flooding (their output: ${clients.output().slice(-2_000)})`).toBe(true);
    return {
      /** Ends the phase: its floods stopped, and the intelligence jobs it queued drained, so that none runs on. */
      async stop() {
        clients.send('SIGTERM');
        const end = await clients.exited;
        const output = clients.output();
        expect(end.code, `A's clients ended (their output: ${output.slice(-2_000)})`).toBe(0);
        const phase = JSON.parse(output.trim().split('\n').pop()!) as AttackDone;
        expect(phase.problems, "what A's clients did not expect").toEqual([]);
        done.jobIds.push(...phase.jobIds);
        for (const [status, count] of Object.entries(phase.webhookStatuses))
          done.webhookStatuses.set(Number(status), (done.webhookStatuses.get(Number(status)) ?? 0) + count);
        done.sessionMessages.push(...phase.sessionMessages);
        await jobsEnded();
      },
    };
  };
  return { flood, done, jobsEnded };
}

describe('a noisy neighbour', () => {
  it("leaves another workspace's 200-lead campaign finishing, its API p99 within twice its quiet value and the worker turning", async () => {
    const attack = await prepareAttack();
    const campaign = await neighbourCampaign('Neighbour');
    // B's latencies in blocks taking turns, quiet and under attack, while B's campaign calls.
    const quietSamples: number[] = [];
    const attackSamples: number[] = [];
    // The worker's main thread's longest pause in each attacked phase: a histogram of its own per phase, since one
    // enabled again after a quiet block counts the whole block as its first delay.
    const pausesMs: number[] = [];
    const underAttack = async <T>(work: () => Promise<T>): Promise<T> => {
      const phase = await attack.flood();
      const pauses = monitorEventLoopDelay({ resolution: 20 });
      pauses.enable();
      const result = await work();
      pauses.disable();
      pausesMs.push(pauses.max / 1e6);
      await phase.stop();
      return result;
    };
    for (let round = 0; round < ROUNDS; round += 1) {
      quietSamples.push(...(await neighbourLatencies(campaign.id)));
      attackSamples.push(...(await underAttack(() => neighbourLatencies(campaign.id))));
    }
    // Under attack until B's campaign has ended: every lead called.
    const campaignMs = await underAttack(() => campaign.finished());
    const quietP99 = p99(quietSamples);
    const attackP99 = p99(attackSamples);
    const maxPauseMs = Math.max(...pausesMs);
    const { jobIds, webhookStatuses, sessionMessages } = attack.done;

    console.log(
      `noisy neighbour: B's p99 quiet ${quietP99.toFixed(1)} ms, under attack ${attackP99.toFixed(1)} ms ` +
        `(${ROUNDS} blocks of ${BLOCK} each, taking turns); B's ${LEADS} leads in ${(campaignMs / 1000).toFixed(1)} s; ` +
        `the worker's longest pause under attack ${maxPauseMs.toFixed(0)} ms; A's intelligence jobs ${jobIds.length}; ` +
        `A's test sessions ${sessionMessages.length}, messages ${sessionMessages.reduce((sum, sent) => sum + sent, 0)}; ` +
        `webhook answers ${JSON.stringify(Object.fromEntries(webhookStatuses))}`,
    );
    expect(attackP99, `B's p99 under attack (quiet ${quietP99.toFixed(1)} ms)`).toBeLessThanOrEqual(
      Math.max(2 * quietP99, P99_FLOOR_MS),
    );
    expect(maxPauseMs, "the worker's main thread's longest pause under attack").toBeLessThan(MAX_PAUSE_MS);
    // The floods were refused, none with a server error.
    expect([...webhookStatuses.keys()].filter((status) => status >= 500)).toEqual([]);
    expect(jobIds.length).toBeGreaterThan(3);
    // A's sessions flooded digit groups at the cap, redacted by the card-number rule as they were stored.
    expect(sessionMessages.reduce((sum, sent) => sum + sent, 0)).toBeGreaterThan(10);
    const sessions = await db.testSession.findMany({
      where: { workspaceId: attacker.workspaceId },
      include: { turns: { where: { speaker: 'lead' } } },
    });
    expect(sessions.length).toBe(sessionMessages.length);
    const leadTurns = sessions.flatMap((session) => session.turns.map((turn) => turn.text));
    expect(leadTurns.filter((text) => text === DIGIT_GROUPS).length, 'the flood stored').toBeGreaterThan(10);
    expect(
      leadTurns.filter((text) => text.includes(CARD)),
      'a card number stored unredacted',
    ).toEqual([]);
    expect(leadTurns.filter((text) => text.includes('[card number]')).length, 'cards redacted').toBeGreaterThan(0);
    // Every job of A's ended (computed, or failed over its budget), none still retried from worker to worker.
    expect((await attack.jobsEnded()).length).toBe(jobIds.length);
  }, 900_000);
});
