import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSimulatedTelephony } from '../activities/providers/simulated-telephony';
import type { Telephony } from '../activities/providers/telephony';
import { startTestApi } from './support/api';
import { useTestDatabase } from './support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from './support/ladders';
import { startTestWorker, useTemporalClient } from './support/temporal';
import { createTestWorkspace } from './support/workspace';
import { leadResult } from './support/lead-workflows';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();

/** The simulated provider, with calls that take 400 ms, counting how many are in flight at once. */
const simulated = createSimulatedTelephony(db);
let inFlight = 0;
let mostInFlight = 0;
const slowCalls: Telephony = {
  name: simulated.name,
  lookup: (attemptId) => simulated.lookup(attemptId),
  async dial(request) {
    mostInFlight = Math.max(mostInFlight, ++inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return await simulated.dial(request);
    } finally {
      inFlight--;
    }
  },
};
await startTestWorker(temporal.taskQueue, { db, calls: slowCalls });
const api = await startTestApi({ db, url, temporal });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });

describe('the concurrency cap of a campaign', () => {
  it('never has more calls in flight than the campaign allows, and every lead is still dialed', async () => {
    const campaign = await db.campaign.create({
      data: { workspaceId: owner.workspaceId, name: 'Capped', acceptsLeadPush: true, status: 'RUNNING', dialLadder: SINGLE_ATTEMPT, callingWindow: ALWAYS_OPEN, maxConcurrentCalls: 2 },
    });
    const keys = Array.from({ length: 8 }, () => randomUUID());
    const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
      key: owner.key, body: { leads: keys.map((idempotencyKey, index) => ({ lead: { phone: `+1415555012${index % 5}` }, idempotencyKey })) },
    });
    expect(((await response.json()) as { summary: unknown }).summary).toEqual({ queued: 8, duplicate: 0, rejected: 0 });
    const results = await Promise.all(keys.map((key) => leadResult(temporal.client, campaign.id, key)));
    expect(results.every((result) => result.status === 'completed' && result.attempts === 1)).toBe(true);
    expect(await db.call.count({ where: { campaignId: campaign.id, status: 'ended' } })).toBe(8);
    expect(mostInFlight).toBe(2);
  });
});
