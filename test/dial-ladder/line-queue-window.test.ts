import { randomUUID } from 'node:crypto';
import { tsToMs } from '@temporalio/common/lib/time';
import { describe, expect, it } from 'vitest';
import { nextAllowedInstant, type CallingWindow } from '../../lib/dial-ladder/calling-window';
import { timeZonesOf } from '../../lib/dial-ladder/phone-time-zones';
import { leadWorkflowId } from '../../lib/temporal/workflow-ids';
import { startTestApi } from '../support/api';
import { carrierDependencies, simulatedCarrierRecord, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { SINGLE_ATTEMPT } from '../support/ladders';
import { leadResult } from '../support/lead-workflows';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';

/*
 * Leads pushed before their campaign's calling window opens (docs/features/dial-ladder.md#what-a-lead-waits-for):
 * they wait for it on durable timers, not dialed and not polling, say so in their rows, and once it opens are dialed
 * through the line queue, never more at once than the campaign's lines.
 */

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
/** Answered calls of 36-41 s simulated time in 3.6-4.1 s, each talk 100 ms longer than the one before. */
const carrier = await startTestCarrier(db, { timeScale: 0.1 });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const LINES = 2;
/** Six answered numbers of San Francisco (America/Los_Angeles), talks of 30, 31, … 35 s (simulated). */
const PHONES = Array.from({ length: 6 }, (_, index) => `+141555501${index}0`);
const ZONES = timeZonesOf(PHONES[0]!);

/** HH:MM in the lead's zone. */
const clockAt = (instant: Date) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: ZONES[0], hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(
    instant,
  );

/**
 * A window that opens at the next minute of the lead's local time, for half an hour, every day: the leads are
 * pushed while it is still closed. Pushed in the last 15 s of a minute, the push could meet the opening: the window
 * then opens a minute later.
 */
async function windowOpeningSoon(): Promise<{ window: CallingWindow; opensAt: Date }> {
  if (Date.now() % 60_000 > 45_000) await sleep(60_000 - (Date.now() % 60_000) + 100);
  const opensAt = new Date(Math.ceil(Date.now() / 60_000) * 60_000);
  const start = clockAt(opensAt);
  const end = clockAt(new Date(opensAt.getTime() + 30 * 60_000));
  return { window: { start, end: end > start ? end : '24:00', days: [1, 2, 3, 4, 5, 6, 7] }, opensAt };
}

describe('leads pushed before the calling window opens', () => {
  it('wait for it on one durable timer each, undialed, saying so; once open they are dialed in the queue, never more at once than the lines', async () => {
    expect(ZONES).toEqual(['America/Los_Angeles']);
    const { window, opensAt } = await windowOpeningSoon();
    expect(nextAllowedInstant(new Date(), window, ZONES)).toEqual(opensAt);
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Window',
        acceptsLeadPush: true,
        status: 'RUNNING',
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: window,
        maxConcurrentCalls: LINES,
      },
    });
    const keys = PHONES.map(() => randomUUID());
    const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
      key: owner.key,
      body: { leads: PHONES.map((phone, index) => ({ lead: { phone }, idempotencyKey: keys[index] })) },
    });
    expect(((await response.json()) as { summary: unknown }).summary).toEqual({
      queued: PHONES.length,
      duplicate: 0,
      rejected: 0,
    });

    // The two leads handed the lines at the push find the window closed and hand them on, and so on down the queue:
    // every lead ends up waiting for the window, the queue empty and the lines free.
    const waiting = await until(
      () => db.lead.findMany({ where: { campaignId: campaign.id } }),
      (leads) => leads.every((lead) => lead.waitingFor === 'calling_window'),
      30_000,
    );
    expect(Date.now()).toBeLessThan(opensAt.getTime());
    for (const lead of waiting)
      expect(lead, lead.phone).toMatchObject({
        status: 'queued',
        waitingFor: 'calling_window',
        nextAttemptAt: opensAt,
      });
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id } })).toBe(0);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
    const leadIds = waiting.map((lead) => lead.id);
    const placedOnCarrier = async () =>
      (await simulatedCarrierRecord(db).calls()).filter((call) => leadIds.includes(call.attemptId.split(':')[0]!))
        .length;
    expect(await db.call.count({ where: { campaignId: campaign.id } })).toBe(0);
    expect(await placedOnCarrier()).toBe(0);
    // Still nothing dialed shortly before the opening.
    await sleep(Math.max(opensAt.getTime() - Date.now() - 2_000, 0));
    expect(await db.call.count({ where: { campaignId: campaign.id } })).toBe(0);
    expect(await placedOnCarrier()).toBe(0);

    // From the opening on, every line handed to a queued lead is logged by a trigger, in the order of the handing
    // statements (each holds the campaign's row lock, so they follow one another): first queued, first handed.
    await db.$executeRawUnsafe(
      `CREATE TABLE test_line_grant (id bigserial PRIMARY KEY, tx bigint, seq bigint, lead_id uuid)`,
    );
    await db.$executeRawUnsafe(`CREATE FUNCTION test_log_line_grant() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO test_line_grant (tx, seq, lead_id) VALUES (txid_current(), NEW.seq, NEW."leadId"); RETURN NEW; END $$`);
    await db.$executeRawUnsafe(`CREATE TRIGGER test_log_line_grant AFTER UPDATE OF "grantedAt" ON "LineQueue"
      FOR EACH ROW WHEN (OLD."grantedAt" IS NULL AND NEW."grantedAt" IS NOT NULL) EXECUTE FUNCTION test_log_line_grant()`);
    const results = await Promise.all(keys.map((key) => leadResult(temporal.client, campaign.id, key)));
    expect(results.every((result) => result.status === 'completed' && result.attempts === 1)).toBe(true);

    const calls = await db.call.findMany({ where: { campaignId: campaign.id }, orderBy: { startedAt: 'asc' } });
    expect(calls).toHaveLength(PHONES.length);
    expect(await placedOnCarrier()).toBe(PHONES.length);
    // None before the window opened.
    for (const call of calls) expect(call.startedAt.getTime()).toBeGreaterThanOrEqual(opensAt.getTime());
    // Never more calls at once than the lines: as the carrier counted them, and as the calls' own times say.
    expect(carrier.server.maxLiveCalls).toBe(LINES);
    for (const call of calls) {
      const overlapping = calls.filter(
        (other) => other.startedAt <= call.startedAt && other.endedAt!.getTime() > call.startedAt.getTime(),
      );
      expect(overlapping.length).toBeLessThanOrEqual(LINES);
    }
    // The window opens for all at once: those that found no line took their places in the queue as they came, and
    // were handed lines in that order. Two lines handed in one statement go to two consecutive entries whose calls
    // may then start in either order, so the order checked is the handing's: statement by statement, seq by seq.
    const grants = await db.$queryRawUnsafe<{ tx: bigint; seq: bigint; lead_id: string }[]>(
      `SELECT tx, seq, lead_id::text FROM test_line_grant ORDER BY id`,
    );
    expect(grants.length).toBeGreaterThanOrEqual(PHONES.length - LINES);
    const statements = [...new Set(grants.map((grant) => grant.tx))];
    const handedSeqs = statements.flatMap((tx) =>
      grants
        .filter((grant) => grant.tx === tx)
        .map((grant) => grant.seq)
        .sort((a, b) => (a < b ? -1 : 1)),
    );
    expect(handedSeqs).toEqual([...handedSeqs].sort((a, b) => (a < b ? -1 : 1)));
    expect(new Set(handedSeqs).size).toBe(handedSeqs.length);
    // Each line went to a different lead of the campaign, which made its one call.
    expect(new Set(grants.map((grant) => grant.lead_id)).size).toBe(grants.length);
    for (const grant of grants) expect(leadIds).toContain(grant.lead_id);
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id } })).toBe(0);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
    expect(
      await db.lead.count({
        where: { campaignId: campaign.id, OR: [{ waitingFor: { not: null } }, { status: { not: 'completed' } }] },
      }),
    ).toBe(0);

    // Nothing polled: before the opening each lead's history holds one attempt (its marker) and one timer, which
    // fires no earlier than the opening; and a lead that waited, queued perhaps, and made one call took at most
    // four workflow tasks.
    for (const key of keys) {
      const { events } = await temporal.client.workflow.getHandle(leadWorkflowId(campaign.id, key)).fetchHistory();
      const before = events!.filter((event) => tsToMs(event.eventTime) < opensAt.getTime());
      const timers = events!.filter((event) => event.timerStartedEventAttributes);
      for (const timer of timers) {
        const startedAt = tsToMs(timer.eventTime);
        if (startedAt < opensAt.getTime())
          expect(startedAt + tsToMs(timer.timerStartedEventAttributes!.startToFireTimeout)).toBeGreaterThanOrEqual(
            opensAt.getTime(),
          );
      }
      expect(before.filter((event) => event.timerStartedEventAttributes)).toHaveLength(1);
      expect(before.filter((event) => event.markerRecordedEventAttributes)).toHaveLength(1);
      expect(before.filter((event) => event.activityTaskScheduledEventAttributes)).toHaveLength(0);
      expect(events!.filter((event) => event.workflowTaskCompletedEventAttributes).length).toBeLessThanOrEqual(4);
    }
  }, 180_000);
});
