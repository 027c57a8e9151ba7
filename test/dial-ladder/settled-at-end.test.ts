import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { applyCallEvent } from '../../lib/calls/call-end';
import { DEFAULT_DIAL_LADDER, outcomesSettledAtEnd } from '../../lib/dial-ladder/dial-ladder';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER, SINGLE_ATTEMPT } from '../support/ladders';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { pushLeadWithWorkflow } from '../support/lead-workflows';
import { takeFirstLine } from '../support/calls';

/*
 * leadLadderWorkflowV2 (docs/features/dial-ladder.md#the-lean-ladder): a call whose end leaves its ladder nothing to do
 * settles its lead in the statement that ends it (Call.settlesLeadOn), and the ladder then runs no settleLead. First
 * the statement on PostgreSQL, then the whole path on the real servers.
 */

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db, { timeScale: 0.01 });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });

async function campaignOf(owner: { workspaceId: string }, dialLadder = SINGLE_ATTEMPT) {
  return db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Settled at end',
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder,
      callingWindow: ALWAYS_OPEN,
      maxConcurrentCalls: 10,
    },
  });
}

/** A lead of a new campaign of the workspace, its first attempt dialing with settlesLeadOn. */
const dialingLead = async (owner: { workspaceId: string }, settlesLeadOn?: string[]) =>
  takeFirstLine(db, owner, (await campaignOf(owner)).id, settlesLeadOn);

const ended = (attemptId: string, status: 'busy' | 'no-answer', eventId = randomUUID()) =>
  applyCallEvent(db.sql, 'simulated', {
    eventId,
    providerCallId: `sim-${attemptId}`,
    attemptId,
    status,
    occurredAt: new Date().toISOString(),
  });

const leadRow = (id: string) =>
  db.lead.findUniqueOrThrow({ where: { id }, select: { status: true, waitingFor: true, nextAttemptAt: true } });

describe('the ladder outcomes a call end settles', () => {
  it('are those that end the ladder and have no aftermath; on the last rung every one without an aftermath', () => {
    expect(outcomesSettledAtEnd(DEFAULT_DIAL_LADDER, 1)).toEqual(['invalid_number']);
    expect(outcomesSettledAtEnd(DEFAULT_DIAL_LADDER, 3)).toEqual(['busy', 'no_answer', 'invalid_number']);
    expect(
      outcomesSettledAtEnd({ ...DEFAULT_DIAL_LADDER, outcomes: { ...DEFAULT_DIAL_LADDER.outcomes, busy: 'end' } }, 1),
    ).toEqual(['busy', 'invalid_number']);
  });
});

describe('the call end statement settling a lead', () => {
  it('settles the lead on an outcome its call names, once, and says so again for a repeated event', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const { lead, attemptId } = await dialingLead(owner, ['busy', 'no_answer']);
    const eventId = randomUUID();
    const first = await ended(attemptId, 'busy', eventId);
    expect(first).toMatchObject({ found: true, applied: true, ended: { outcome: 'busy', leadSettled: true } });
    expect(await leadRow(lead.id)).toEqual({ status: 'failed', waitingFor: null, nextAttemptAt: null });
    // The carrier delivers it again when the signal failed: the workflow is told the same.
    const again = await ended(attemptId, 'busy', eventId);
    expect(again).toMatchObject({ found: true, applied: false, ended: { outcome: 'busy', leadSettled: true } });
  });

  it('leaves the lead to its workflow on an outcome its call does not name, or with none named', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const named = await dialingLead(owner, ['busy']);
    const other = await ended(named.attemptId, 'no-answer');
    expect(other).toMatchObject({ found: true, applied: true, ended: { outcome: 'no_answer' } });
    expect(other.found && other.ended).not.toHaveProperty('leadSettled');
    expect((await leadRow(named.lead.id)).status).toBe('dialing');
    const none = await dialingLead(owner);
    const busy = await ended(none.attemptId, 'busy');
    expect(busy.found && busy.ended).not.toHaveProperty('leadSettled');
    expect((await leadRow(none.lead.id)).status).toBe('dialing');
  });

  it('leaves the lead to its workflow when its workspace has a result webhook endpoint (the workflow enqueues lead.finished)', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    await db.resultWebhookEndpoint.create({
      data: { workspaceId: owner.workspaceId, url: 'https://example.invalid/hook', secret: 'whsec_test_secret_1234' },
    });
    const { lead, attemptId } = await dialingLead(owner, ['busy']);
    const busy = await ended(attemptId, 'busy');
    expect(busy.found && busy.ended).not.toHaveProperty('leadSettled');
    expect((await leadRow(lead.id)).status).toBe('dialing');
  });
});

/** The lead's workflow history's local activities, by type, in order. */
async function localActivities(handle: { fetchHistory(): Promise<{ events?: unknown[] | null }> }) {
  const { events } = await handle.fetchHistory();
  return (events ?? []).filter(
    (event) => (event as { markerRecordedEventAttributes?: unknown }).markerRecordedEventAttributes,
  ).length;
}

describe('leadLadderWorkflowV2 on the real servers', () => {
  it('a busy lead on its last rung ends on the call end alone: one local activity, the lead failed', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const campaign = await campaignOf(owner);
    const { leadId, handle } = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaign.id, '+14155550125');
    expect((await handle.describe()).type).toBe('leadLadderWorkflowV2');
    expect(await handle.result()).toMatchObject({ status: 'failed', outcome: 'busy', attempts: 1 });
    expect((await leadRow(leadId)).status).toBe('failed');
    expect(await localActivities(handle)).toBe(1);
    const call = await db.call.findFirstOrThrow({ where: { leadId } });
    expect(call.leadSettledAt).not.toBeNull();
  }, 60_000);

  it('a busy rung that is not the last, and an answered call (its aftermath), are settled by the ladder', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const busy = await pushLeadWithWorkflow(
      api,
      owner.key,
      temporal.client,
      (await campaignOf(owner, QUICK_LADDER)).id,
      '+14155550125',
    );
    expect(await busy.handle.result()).toMatchObject({ status: 'failed', outcome: 'busy', attempts: 3 });
    // Three dials, two settleLeads between rungs; the third call's end settled the lead.
    expect(await localActivities(busy.handle)).toBe(5);
    const calls = await db.call.findMany({ where: { leadId: busy.leadId }, orderBy: { attempt: 'asc' } });
    expect(calls.map((call) => call.leadSettledAt !== null)).toEqual([false, false, true]);
    expect((await leadRow(busy.leadId)).status).toBe('failed');

    const answered = await pushLeadWithWorkflow(
      api,
      owner.key,
      temporal.client,
      (await campaignOf(owner)).id,
      '+14155550100',
    );
    expect(await answered.handle.result()).toMatchObject({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(await localActivities(answered.handle)).toBe(2);
    expect((await leadRow(answered.leadId)).status).toBe('completed');
  }, 90_000);

  it('with a result webhook endpoint, the ladder settles the lead and enqueues its lead.finished', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    await db.resultWebhookEndpoint.create({
      data: { workspaceId: owner.workspaceId, url: 'https://example.invalid/hook', secret: 'whsec_test_secret_1234' },
    });
    const campaign = await campaignOf(owner);
    const { leadId, handle } = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaign.id, '+14155550125');
    expect(await handle.result()).toMatchObject({ status: 'failed', outcome: 'busy' });
    expect(await localActivities(handle)).toBe(2);
    expect((await leadRow(leadId)).status).toBe('failed');
    expect(
      await db.resultWebhookDelivery.count({
        where: { workspaceId: owner.workspaceId, eventKey: `lead.finished:${leadId}` },
      }),
    ).toBe(1);
  }, 60_000);
});
