import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { upsertLeads } from '../../api/leads/lead-rows';
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
 * A push commits its leads and their places in the line queue in one statement (api/leads/lead-rows.ts
 * upsertLeads), then hands the campaign's free lines to the queue in another (api/leads/leads.ts handOutLinesOnPush).
 * Should the API die between the two, or the second fail (it is caught and logged), the leads are queued, lines are
 * free, and their workflows are started by the next API's sweep with the queued start delay (an hour). On an idle
 * campaign no call's end hands those lines out: the sweep does (lib/temporal/lead-dispatch.ts handOutForgottenLines).
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
  it('still has its leads dialed on the free lines, without waiting for the queued start delay', async () => {
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

    // The sweep starts their workflows (it marks them started)...
    await until(
      () => db.lead.count({ where: { campaignId: campaign.id, workflowStartedAt: { not: null } } }),
      (started) => started === 3,
      30_000,
    );
    // ...and the campaign's two free lines must reach the first two of them, then the third when one is given back.
    // The bound is far beyond every sweep (lines re-woken after 30 s) and far below the queued start delay (1 h).
    await until(
      async () => ({
        ended: await db.call.count({ where: { campaignId: campaign.id, status: 'ended' } }),
        calls: await db.call.count({ where: { campaignId: campaign.id } }),
        grantedInQueue: await db.lineQueue.count({ where: { campaignId: campaign.id, grantedAt: { not: null } } }),
        waitingInQueue: await db.lineQueue.count({ where: { campaignId: campaign.id, grantedAt: null } }),
        callsInFlight: (await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight,
        // Each workflow's history so far: its start (and the delay of its first task, in seconds), nothing else.
        workflows: await Promise.all(
          rows.map(async (row) => {
            const { events } = await temporal.client.workflow.getHandle(row.workflowId).fetchHistory();
            const delay = events![0]!.workflowExecutionStartedEventAttributes?.firstWorkflowTaskBackoff?.seconds;
            return { events: events!.length, firstTaskDelayS: String(delay ?? 0) };
          }),
        ),
      }),
      (now) => now.ended === 3,
      90_000,
    );
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id } })).toBe(0);
  }, 150_000);
});
