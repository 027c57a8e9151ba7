import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { applyCallEvents, type ProviderCallEvent } from '../../lib/calls/call-end';
import { createCallEventBatcher } from '../../lib/calls/call-event-batcher';
import type { CallEvent } from '../../lib/calls/call-event';
import { poolSql, type RunSql } from '../../lib/run-sql';
import { createSqlPool } from '../../lib/sql-pool';
import { callEventFor, insertDialingCall } from '../support/calls';
import { useTestDatabase } from '../support/database';
import { createTestWorkspace } from '../support/workspace';

// The event endpoint applies the events it receives together in one statement (applyCallEvents) through a group
// commit (createCallEventBatcher): each event must have the effect it would have had alone, in arrival order.
const { db, url } = await useTestDatabase();
const pool = createSqlPool(url, 4);
afterAll(() => pool.end());
const sql = poolSql(pool);
const owner = await createTestWorkspace(db, { scopes: ['campaigns.view'] });

async function campaignWithCalls(count: number, callsInFlight = count) {
  const campaign = await db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Batches',
      status: 'RUNNING',
      callsInFlight,
      maxConcurrentCalls: count,
    },
  });
  const calls = [];
  for (let index = 0; index < count; index++) calls.push(await insertDialingCall(db, owner, campaign.id));
  return { campaign, calls };
}

let serial = 0;
function eventOf(
  call: { providerCallId: string | null; attemptId: string },
  status: CallEvent['status'],
  extra: Partial<CallEvent> = {},
): ProviderCallEvent {
  return {
    provider: 'simulated',
    event: callEventFor(call, status, {
      eventId: `${call.providerCallId}:${status}:${serial++}`,
      attemptId: call.attemptId,
      ...extra,
    }),
  };
}

const applied = (results: Awaited<ReturnType<typeof applyCallEvents>>) =>
  results.map((result) => (result.found ? result.applied : 'not found'));

describe('a batch of carrier events in one statement', () => {
  it('applies the events of one call in their order: a later one moves it on, an earlier state after it changes nothing', async () => {
    const { calls } = await campaignWithCalls(2);
    const [forward, backward] = calls as [(typeof calls)[0], (typeof calls)[0]];
    const results = await applyCallEvents(sql, [
      eventOf(forward, 'ringing'),
      eventOf(backward, 'in-progress', { answeredBy: 'human' }),
      eventOf(forward, 'in-progress', { answeredBy: 'machine' }),
      eventOf(backward, 'ringing'),
    ]);
    expect(applied(results)).toEqual([true, true, true, false]);
    expect(await db.call.findUniqueOrThrow({ where: { id: forward.id } })).toMatchObject({
      carrierStatus: 'in-progress',
      answeredBy: 'machine',
      status: 'dialing',
    });
    expect(await db.call.findUniqueOrThrow({ where: { id: backward.id } })).toMatchObject({
      carrierStatus: 'in-progress',
      answeredBy: 'human',
    });
    const events = await db.callEvent.findMany({ where: { callId: backward.id } });
    expect(events.map((event) => [event.status, event.applied]).sort()).toEqual([
      ['in-progress', true],
      ['ringing', false],
    ]);
  });

  it('records a repeated event once, in the same batch and in a later one, and applies it once', async () => {
    const { calls } = await campaignWithCalls(1);
    const call = calls[0]!;
    const ringing = eventOf(call, 'ringing');
    expect(applied(await applyCallEvents(sql, [ringing, ringing]))).toEqual([true, false]);
    const answered = eventOf(call, 'in-progress');
    expect(applied(await applyCallEvents(sql, [answered, ringing, answered]))).toEqual([true, false, false]);
    expect(await db.callEvent.count({ where: { callId: call.id } })).toBe(2);
    expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).carrierStatus).toBe('in-progress');
  });

  it('ends a call once, with the answeredBy an earlier event of the batch said; each event sees the call as it left it', async () => {
    const { campaign, calls } = await campaignWithCalls(1);
    const call = calls[0]!;
    const results = await applyCallEvents(sql, [
      eventOf(call, 'in-progress', { answeredBy: 'machine' }),
      eventOf(call, 'completed', { durationMs: 12_000 }),
      eventOf(call, 'busy'),
      eventOf(call, 'in-progress'),
    ]);
    expect(applied(results)).toEqual([true, true, false, false]);
    // The call was still talking after the first event; the end is told by the terminal event and those after it.
    expect(results.map((result) => result.found && result.ended?.outcome)).toEqual([
      undefined,
      'voicemail',
      'voicemail',
      'voicemail',
    ]);
    expect(results[1]).toMatchObject({
      ended: { attemptId: call.attemptId, callId: call.id, outcome: 'voicemail', durationMs: 12_000 },
      workflowId: call.workflowId,
    });
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({
      status: 'ended',
      carrierStatus: 'completed',
      answeredBy: 'machine',
      outcome: 'voicemail',
      durationMs: 12_000,
    });
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
  });

  it('ends failed a Twilio call of an agent completed with nobody known to have answered and its answer never served (11200); the rest as before', async () => {
    const { calls } = await campaignWithCalls(9);
    const agentId = randomUUID();
    // Each call: its provider, whether it has an agent, whether its answer document was served (a step-0 turn).
    const setups: Array<[string, boolean, boolean]> = [
      ['twilio-twin', true, false], // never served: failed
      ['twilio', true, false], // the same on Twilio itself, its lead's ladder settling at the end on answered only
      ['twilio-twin', true, true], // served: answered
      ['twilio-twin', false, false], // no agent, no turn ever (its TwiML hangs up at once): answered
      ['telnyx-twin', true, false], // Telnyx walks from the detection: answered
      ['simulated', true, false], // the simulated carrier: answered
      ['twilio-twin', true, false], // a human detected earlier in the batch: answered
      ['twilio-twin', true, false], // a machine detected: voicemail
      ['twilio-twin', true, false], // canceled while ringing: no_answer
    ];
    for (const [index, [provider, withAgent, served]] of setups.entries()) {
      const call = calls[index]!;
      await db.call.update({
        where: { id: call.id },
        data: { provider, agentId: withAgent ? agentId : null, settlesLeadOn: index === 1 ? ['answered'] : [] },
      });
      if (served)
        await db.callTurn.create({
          data: { callId: call.id, step: 0, part: 1, speaker: 'agent', text: 'Hello.', offsetMs: 0 },
        });
    }
    const on = (index: number, status: CallEvent['status'], extra: Partial<CallEvent> = {}) => ({
      ...eventOf(calls[index]!, status, extra),
      provider: setups[index]![0],
    });
    const results = await applyCallEvents(sql, [
      on(0, 'completed', { durationMs: 1_000 }),
      on(2, 'completed'),
      on(3, 'completed'),
      on(4, 'completed'),
      on(5, 'completed'),
      on(6, 'in-progress', { answeredBy: 'human' }),
      on(6, 'completed'),
      on(7, 'completed', { answeredBy: 'machine' }),
      on(8, 'canceled'),
    ]);
    expect(results.map((result) => result.found && result.ended?.outcome)).toEqual([
      'failed',
      'answered',
      'answered',
      'answered',
      'answered',
      undefined,
      'answered',
      'voicemail',
      'no_answer',
    ]);
    // Reconciliation ends a call through the same statement, one event (the lookup's) at a time: the same rule.
    const [looked] = await applyCallEvents(sql, [
      { ...on(1, 'completed', { eventId: `lookup:${calls[1]!.providerCallId}:completed` }) },
    ]);
    expect(looked).toMatchObject({ found: true, applied: true, ended: { outcome: 'failed' } });
    // Its lead is not settled as answered: its workflow takes the failure to the next rung.
    expect(await db.call.findUniqueOrThrow({ where: { id: calls[1]!.id } })).toMatchObject({
      status: 'ended',
      outcome: 'failed',
      carrierStatus: 'completed',
      answeredBy: null,
      leadSettledAt: null,
    });
  });

  it('gives back the lines of calls of several campaigns ended together, and hands them to their queues', async () => {
    const first = await campaignWithCalls(3);
    const second = await campaignWithCalls(1);
    // One attempt waits for a line of the first campaign.
    const waiting = await db.lead.create({
      data: {
        workspaceId: owner.workspaceId,
        campaignId: first.campaign.id,
        idempotencyKey: randomUUID(),
        phone: '+14155550121',
        workflowId: `lead-${randomUUID()}`,
        requestId: randomUUID(),
      },
    });
    await db.lineQueue.create({
      data: {
        campaignId: first.campaign.id,
        leadId: waiting.id,
        attemptId: `${waiting.id}:1`,
        workflowId: waiting.workflowId,
      },
    });
    const results = await applyCallEvents(sql, [
      eventOf(first.calls[0]!, 'busy'),
      eventOf(second.calls[0]!, 'no-answer'),
      eventOf(first.calls[1]!, 'completed', { answeredBy: 'human', durationMs: 1_000 }),
      eventOf(first.calls[2]!, 'ringing'),
    ]);
    expect(applied(results)).toEqual([true, true, true, true]);
    // The line handed over goes with the first event that freed one in its campaign.
    expect(results.map((result) => result.found && result.handedOver.map((line) => line.attemptId))).toEqual([
      [`${waiting.id}:1`],
      [],
      [],
      [],
    ]);
    // 3 - 2 given back + 1 handed to the queue; the second campaign's line back.
    expect((await db.campaign.findUniqueOrThrow({ where: { id: first.campaign.id } })).callsInFlight).toBe(2);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: second.campaign.id } })).callsInFlight).toBe(0);
    expect(
      (await db.lineQueue.findUniqueOrThrow({ where: { attemptId: `${waiting.id}:1` } })).grantedAt,
    ).not.toBeNull();
  });

  it('answers not found for an event whose call it does not know, and applies its neighbours', async () => {
    const { calls } = await campaignWithCalls(1);
    const unknown = eventOf({ providerCallId: `sim_${randomUUID()}`, attemptId: `${randomUUID()}:1` }, 'ringing');
    expect(applied(await applyCallEvents(sql, [unknown, eventOf(calls[0]!, 'ringing')]))).toEqual(['not found', true]);
  });

  it('moves a call in progress without touching its indexes or its updatedAt; its end stamps updatedAt', async () => {
    const { calls } = await campaignWithCalls(1);
    const call = calls[0]!;
    const stamped = (await db.call.findUniqueOrThrow({ where: { id: call.id } })).updatedAt;
    // The backend's counts of the current transaction, taken before and after (they hold others' not yet reported).
    const client = await pool.connect();
    const counts = async () =>
      (
        await client.query<{ updates: string; hot: string }>(
          `SELECT pg_stat_get_xact_tuples_updated('"Call"'::regclass) AS updates,
                  pg_stat_get_xact_tuples_hot_updated('"Call"'::regclass) AS hot`,
        )
      ).rows[0]!;
    let before: { updates: string; hot: string };
    let after: { updates: string; hot: string };
    try {
      await client.query('BEGIN');
      before = await counts();
      await applyCallEvents(poolSql(client), [eventOf(call, 'ringing'), eventOf(call, 'in-progress')]);
      after = await counts();
      await client.query('COMMIT');
    } finally {
      await client.query('ROLLBACK').catch(() => {});
      client.release();
    }
    // One update of the call (to its last state), heap-only.
    expect(Number(after.updates) - Number(before.updates)).toBe(1);
    expect(Number(after.hot) - Number(before.hot)).toBe(1);
    const talking = await db.call.findUniqueOrThrow({ where: { id: call.id } });
    expect(talking.carrierStatus).toBe('in-progress');
    expect(talking.updatedAt).toEqual(stamped);
    await applyCallEvents(sql, [eventOf(call, 'completed', { durationMs: 1_000 })]);
    expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).updatedAt.getTime()).toBeGreaterThan(
      stamped.getTime(),
    );
  });
});

describe('the group commit of the event endpoint', () => {
  /** The statements run, as the events each held. */
  function countingSql(inner: RunSql) {
    const batches: string[][] = [];
    const run: RunSql = async <Row>(statement: Parameters<RunSql>[0], ...values: unknown[]) => {
      batches.push((JSON.parse(values[0] as string) as Array<{ eventId: string }>).map((event) => event.eventId));
      return inner<Row>(statement, ...values);
    };
    return { run, batches };
  }

  it('applies events received together in fewer statements, each answered with its own result, in arrival order', async () => {
    const { calls } = await campaignWithCalls(5);
    const counting = countingSql(sql);
    const batcher = createCallEventBatcher(counting.run, { maxInFlight: 1 });
    const events = calls.flatMap((call) => [eventOf(call, 'ringing'), eventOf(call, 'in-progress')]);
    const results = await Promise.all(events.map((event) => batcher.apply(event)));
    expect(applied(results)).toEqual(events.map(() => true));
    // The first went alone; the others waited for it and went together.
    expect(counting.batches.map((batch) => batch.length)).toEqual([1, 9]);
    for (const call of calls)
      expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).carrierStatus).toBe('in-progress');
  });

  it('keeps an event of a call whose batch is in flight for a later batch; other calls go meanwhile', async () => {
    const { calls } = await campaignWithCalls(2);
    const counting = countingSql(sql);
    const batcher = createCallEventBatcher(counting.run, { maxInFlight: 2 });
    const first = eventOf(calls[0]!, 'ringing');
    const again = eventOf(calls[0]!, 'in-progress');
    const other = eventOf(calls[1]!, 'ringing');
    const results = await Promise.all([first, again, other].map((event) => batcher.apply(event)));
    expect(applied(results)).toEqual([true, true, true]);
    expect(counting.batches).toEqual([[first.event.eventId], [other.event.eventId], [again.event.eventId]]);
  });

  it('fails a bad event alone: its batch is applied again event by event', async () => {
    const { calls } = await campaignWithCalls(2);
    const counting = countingSql(sql);
    const batcher = createCallEventBatcher(counting.run, { maxInFlight: 1 });
    const opener = batcher.apply(eventOf(calls[0]!, 'ringing'));
    // PostgreSQL refuses this time, which fails the statement it is in.
    const bad = batcher.apply(eventOf(calls[1]!, 'ringing', { occurredAt: 'not a time' }));
    const good = batcher.apply(eventOf(calls[1]!, 'in-progress'));
    const after = batcher.apply(eventOf(calls[0]!, 'in-progress'));
    expect(applied([await opener])).toEqual([true]);
    await expect(bad).rejects.toThrow(/time/);
    expect(applied([await good, await after])).toEqual([true, true]);
    expect(counting.batches.map((batch) => batch.length)).toEqual([1, 3, 1, 1, 1]);
    expect((await db.call.findUniqueOrThrow({ where: { id: calls[1]!.id } })).carrierStatus).toBe('in-progress');
  });
});
