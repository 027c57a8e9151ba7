import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { upsertLeads } from '../../api/leads/lead-store';
import type { Principal } from '../../api/door/principal';
import { createSqlPool } from '../../lib/sql-pool';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { afterAll } from 'vitest';

/*
 * A push commits its leads and their places in the line queue in one statement (api/leads/lead-store.ts
 * upsertLeads), then hands the campaign's free lines to the queue in another (api/leads/leads.ts handOutLinesOnPush).
 * Should the API die between the two, or the second fail (it is caught and logged), the leads are queued, lines are
 * free, and no workflow runs yet: a lead queued by its push gets its workflow with its line. On an idle campaign no
 * call's end hands those lines out: the sweep does (lib/temporal/lead-dispatch.ts handOutForgottenLines).
 */

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
// The API that comes up after the crash: its dispatcher sweeps, as every production API process does.
const api = await startTestApi({ db, url, temporal, sweepLeads: { staleAfterMs: 1_000 } });
const carrier = await startTestCarrier(db, { timeScale: 0.01 });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
const sql = createSqlPool(url);
afterAll(() => sql.end());

describe('a push whose free lines were never handed out (the API died right after storing it)', () => {
  it('still has its leads dialed on the free lines, each workflow started with its line and not before', async () => {
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Push, API gone',
        acceptsLeadPush: true,
        status: 'RUNNING',
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
        maxConcurrentCalls: 2,
      },
    });
    // What the push commits before it hands out lines: the leads, each with its place in the queue.
    const rows = await upsertLeads(
      sql,
      { workspaceId: owner.workspaceId } as Principal,
      campaign,
      ['+14155550120', '+14155550121', '+14155550122'].map((phone) => ({
        lead: { phone, fields: {} },
        idempotencyKey: randomUUID(),
      })),
      randomUUID(),
    );
    expect(rows).toHaveLength(3);
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id, grantedAt: null } })).toBe(3);

    // The campaign's two free lines must reach the first two leads, then the third when one is given back. The bound
    // is far beyond every sweep (lines re-woken after 30 s, forgotten lines looked for every 10 s).
    await until(
      async () => ({
        ended: await db.call.count({ where: { campaignId: campaign.id, status: 'ended' } }),
        calls: await db.call.count({ where: { campaignId: campaign.id } }),
        grantedInQueue: await db.lineQueue.count({ where: { campaignId: campaign.id, grantedAt: { not: null } } }),
        waitingInQueue: await db.lineQueue.count({ where: { campaignId: campaign.id, grantedAt: null } }),
        callsInFlight: (await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight,
      }),
      (now) => now.ended === 3,
      90_000,
    );
    expect(await db.call.count({ where: { campaignId: campaign.id } })).toBe(3);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id } })).toBe(0);

    // The outbox's sweep (1 s stale) left the queued leads alone: the third lead's workflow started only once a call
    // of the first two had ended and given its line back, and no workflow was started with a delay.
    const calls = await db.call.findMany({ where: { campaignId: campaign.id }, orderBy: { startedAt: 'asc' } });
    const firstLineBack = Math.min(...calls.slice(0, 2).map((call) => call.endedAt!.getTime()));
    const starts = await Promise.all(
      rows.map(async (row) => {
        const handle = temporal.client.workflow.getHandle(row.workflowId);
        const { events } = await handle.fetchHistory();
        const delay = events![0]!.workflowExecutionStartedEventAttributes?.firstWorkflowTaskBackoff?.seconds;
        return { startedAt: (await handle.describe()).startTime.getTime(), firstTaskDelayS: String(delay ?? 0) };
      }),
    );
    expect(starts.map((start) => start.firstTaskDelayS)).toEqual(['0', '0', '0']);
    const third = calls[2]!;
    const thirdLead = rows.find((row) => row.id === third.leadId)!;
    expect(starts[rows.indexOf(thirdLead)]!.startedAt).toBeGreaterThanOrEqual(firstLineBack);
    expect(await db.lead.count({ where: { campaignId: campaign.id, workflowStartedAt: null } })).toBe(0);
  }, 150_000);
});
