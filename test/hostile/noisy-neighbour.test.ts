import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { simulatedConversation } from '../../lib/calls/simulated-conversation';
import { insertAgent } from '../support/agents';
import { startTestApi } from '../support/api';
import { insertAnsweredCall } from '../support/calls';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { leadResult } from '../support/lead-workflows';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';

// Issue 40's noisy-neighbour proof (docs/cpu-budget.md): workspace A attacks, workspace B runs a CLASSIC campaign of
// 200 leads on the simulated carrier, on the same API, worker and Temporal task queue. The API and the worker run in
// this process, so the event loop measured here is the worker's main thread, the one that heartbeats and polls.
const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db, { timeScale: 0.004 });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });
const attacker = await createTestWorkspace(db, { scopes: ['calls.view', 'calls.edit'] });
const neighbour = await createTestWorkspace(db, { scopes: ['campaigns.view', 'campaigns.edit'] });

const LEADS = 200;
/** The GET requests each p99 is read from. */
const SAMPLES = 300;
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

const p99 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.ceil(samples.length * 0.99) - 1]!;

/** B's p99 over SAMPLES sequential GET /campaigns/{id}, in ms. */
async function neighbourP99(campaignId: string): Promise<number> {
  const samples: number[] = [];
  for (let index = 0; index < SAMPLES; index += 1) {
    const started = performance.now();
    const response = await api.request('GET', `/campaigns/${campaignId}`, { key: neighbour.key });
    await response.arrayBuffer();
    samples.push(performance.now() - started);
    expect(response.status).toBe(200);
  }
  return p99(samples);
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
          // Ending 0-4: answered by a person (simulators/carrier/timeline.ts).
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
 * A's floods until `stop()`: a re-run of the hostile call's intelligence every 500 ms (each a full budget of CPU in a
 * thread), and unsigned requests to the public webhooks back to back.
 */
async function attack() {
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
  let stopped = false;
  const jobIds: string[] = [];
  const webhookStatuses = new Map<number, number>();
  const rerun = async () => {
    while (!stopped) {
      const response = await api.request('POST', `/calls/${call.id}/intelligence`, { key: attacker.key });
      expect(response.status).toBe(202);
      jobIds.push(((await response.json()) as { jobId: string }).jobId);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  };
  const junk = JSON.stringify({ padding: 'x'.repeat(1_000) });
  const targets = ['/telephony/simulated/events', '/whatsapp/webhook', `/crm/connections/${randomUUID()}/webhooks`];
  const flood = async (offset: number) => {
    for (let index = offset; !stopped; index += 1) {
      const response = await api.request('POST', targets[index % targets.length]!, {
        body: junk,
        headers: { 'content-type': 'application/json' },
      });
      await response.arrayBuffer();
      webhookStatuses.set(response.status, (webhookStatuses.get(response.status) ?? 0) + 1);
    }
  };
  const running = Promise.all([rerun(), flood(0)]);
  return {
    async stop() {
      stopped = true;
      await running;
      return { jobIds, webhookStatuses };
    },
  };
}

describe('a noisy neighbour', () => {
  it("leaves another workspace's 200-lead campaign finishing, its API p99 within twice its quiet value and the worker turning", async () => {
    // Quiet: B's campaign alone.
    const quiet = await neighbourCampaign('Quiet');
    const quietP99 = await neighbourP99(quiet.id);
    const quietMs = await quiet.finished();

    // Under attack: the same campaign again while A's floods run.
    const pauses = monitorEventLoopDelay({ resolution: 20 });
    const attacking = await attack();
    pauses.enable();
    const loud = await neighbourCampaign('Under attack');
    const attackP99 = await neighbourP99(loud.id);
    const attackMs = await loud.finished();
    const { jobIds, webhookStatuses } = await attacking.stop();
    pauses.disable();
    const maxPauseMs = pauses.max / 1e6;

    console.log(
      `noisy neighbour: B's p99 quiet ${quietP99.toFixed(1)} ms, under attack ${attackP99.toFixed(1)} ms; ` +
        `B's ${LEADS} leads in ${(quietMs / 1000).toFixed(1)} s quiet, ${(attackMs / 1000).toFixed(1)} s under attack; ` +
        `the worker's longest pause ${maxPauseMs.toFixed(0)} ms; A's intelligence jobs ${jobIds.length}; ` +
        `webhook answers ${JSON.stringify(Object.fromEntries(webhookStatuses))}`,
    );
    expect(attackP99, `B's p99 under attack (quiet ${quietP99.toFixed(1)} ms)`).toBeLessThanOrEqual(
      Math.max(2 * quietP99, P99_FLOOR_MS),
    );
    expect(maxPauseMs, "the worker's main thread's longest pause under attack").toBeLessThan(MAX_PAUSE_MS);
    // The floods were refused, none with a server error.
    expect([...webhookStatuses.keys()].filter((status) => status >= 500)).toEqual([]);
    expect(jobIds.length).toBeGreaterThan(3);
    // Every job of A's ended (computed, or failed over its budget), none still retried from worker to worker.
    const statuses = await until(
      () =>
        Promise.all(
          jobIds.map(async (jobId) => (await temporal.client.workflow.getHandle(jobId).describe()).status.name),
        ),
      (names) => names.every((name) => name === 'COMPLETED' || name === 'FAILED'),
      // The jobs still queued when the attack stops drain one budget (1 s) at a time on the one thread.
      180_000,
    ).catch((error: Error) => {
      throw new Error(`a hostile intelligence job did not end: ${error.message}`);
    });
    expect(statuses.length).toBe(jobIds.length);
  }, 900_000);
});
