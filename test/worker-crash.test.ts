import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DialLadder } from '../lib/dial-ladder/dial-ladder';
import { crashTestStack, killWorker } from './support/worker-process';
import { ALWAYS_OPEN, QUICK_LADDER } from './support/ladders';
import { leadResult } from './support/lead-workflows';
import { simulatedCarrierRecord } from './support/carrier';
import { startReceiver } from './support/http-receiver';
import { journey, publishedJourney } from './support/journeys';

// The worker dies while calls ring and talk; their events reach the API whichever worker runs.
const { db, temporal, api, owner, startWorkerProcess } = await crashTestStack('crash', ['campaigns.edit']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a worker killed with SIGKILL in the middle of ladders', () => {
  it('leaves every lead finished by the next worker, with exactly one call per attempt', async () => {
    const ladder: DialLadder = {
      ...QUICK_LADDER,
      rungs: [{ delaySeconds: 0 }, { delaySeconds: 1 }, { delaySeconds: 1 }],
    };
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Crash',
        acceptsLeadPush: true,
        status: 'RUNNING',
        dialLadder: ladder,
        callingWindow: ALWAYS_OPEN,
      },
    });
    const first = startWorkerProcess();
    // Busy numbers walk all three rungs; answered ones stop at one call.
    const phones = Array.from(
      { length: 30 },
      (_, index) => `+1415555${String(1000 + index * 10 + (index % 2 ? 5 : 0)).padStart(4, '0')}`,
    );
    const keys = phones.map(() => randomUUID());
    const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
      key: owner.key,
      body: { leads: phones.map((phone, index) => ({ lead: { phone }, idempotencyKey: keys[index] })) },
    });
    expect(((await response.json()) as { summary: unknown }).summary).toEqual({
      queued: 30,
      duplicate: 0,
      rejected: 0,
    });

    // Kill it once calls are being placed and ladders are mid-way.
    while ((await db.call.count({ where: { campaignId: campaign.id } })) < 20) await sleep(50);
    await killWorker(first);
    const callsAtCrash = await db.call.count({ where: { campaignId: campaign.id } });
    startWorkerProcess();

    const results = await Promise.all(keys.map((key) => leadResult(temporal.client, campaign.id, key)));
    const leads = await db.lead.findMany({ where: { campaignId: campaign.id }, include: { calls: true } });
    expect(leads).toHaveLength(30);
    for (const lead of leads) {
      expect(['completed', 'failed']).toContain(lead.status);
      const attempts = lead.calls.map((call) => call.attempt).sort();
      expect(attempts).toEqual(Array.from({ length: attempts.length }, (_, index) => index + 1));
      expect(lead.calls.every((call) => call.status === 'ended')).toBe(true);
      expect(attempts.length).toBe(lead.phone.endsWith('5') ? 3 : 1);
    }
    const totalCalls = leads.reduce((total, lead) => total + lead.calls.length, 0);
    expect(totalCalls).toBe(results.reduce((total, result) => total + result.attempts, 0));
    expect(totalCalls).toBeGreaterThan(callsAtCrash);
    // Every line was given back, and the carrier was asked exactly once per attempt.
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
    expect(
      await simulatedCarrierRecord(db).count(
        '"attemptId" = ANY($1)',
        leads.flatMap((lead) => lead.calls.map((call) => call.attemptId)),
      ),
    ).toBe(totalCalls);
  }, 90_000);

  it('leaves every journey run completed by the next worker: one call and one webhook per run', async () => {
    const receiver = await startReceiver(() => 200);
    const published = await publishedJourney(
      db,
      owner.workspaceId,
      journey(
        [
          { id: 'start', type: 'start' },
          { id: 'dial', type: 'call' },
          { id: 'nap', type: 'wait', data: { seconds: 3 } },
          { id: 'notify', type: 'webhook', data: { url: receiver.url, body: '{"outcome":"{{dial.outcome}}"}' } },
          { id: 'done', type: 'end' },
        ],
        [
          ['start', 'dial'],
          ['dial', 'nap'],
          ['nap', 'notify'],
          ['notify', 'done'],
        ],
      ),
    );
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Journey crash',
        kind: 'JOURNEY',
        journeyId: published.id,
        acceptsLeadPush: true,
        status: 'RUNNING',
        dialLadder: QUICK_LADDER,
        callingWindow: ALWAYS_OPEN,
      },
    });
    const first = startWorkerProcess();
    const keys = Array.from({ length: 10 }, () => randomUUID());
    const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
      key: owner.key,
      body: {
        leads: keys.map((idempotencyKey, index) => ({
          lead: { phone: `+14155551${String(index).padStart(2, '0')}0` },
          idempotencyKey,
        })),
      },
    });
    expect(((await response.json()) as { summary: unknown }).summary).toEqual({
      queued: 10,
      duplicate: 0,
      rejected: 0,
    });

    // Killed while the runs wait on their durable timers, after their calls.
    while ((await db.call.count({ where: { campaignId: campaign.id, status: 'ended' } })) < 10) await sleep(50);
    await killWorker(first);
    expect(receiver.received).toHaveLength(0);
    startWorkerProcess();

    const results = await Promise.all(
      keys.map((key) => leadResult(temporal.client, campaign.id, key) as Promise<unknown>),
    );
    expect(results.every((result) => (result as { status: string }).status === 'completed')).toBe(true);
    expect(await db.journeyRun.count({ where: { campaignId: campaign.id, status: 'completed' } })).toBe(10);
    expect(await db.call.count({ where: { campaignId: campaign.id } })).toBe(10);
    expect(receiver.received).toHaveLength(10);
    expect(receiver.received.every((request) => JSON.parse(request.body).outcome === 'answered')).toBe(true);
  }, 90_000);
});
