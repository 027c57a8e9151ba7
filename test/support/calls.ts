import { randomUUID } from 'node:crypto';
import type { CallEvent } from '../../lib/calls/call-event';
import type { Database } from '../../lib/database';
import { testCallWorkflowId } from '../../lib/temporal/workflow-ids';
import type { TestTemporal } from './temporal';
import type { TestWorkspace } from './workspace';
import { takeLine } from '../../lib/calls/call-lines';

/** A lead of the campaign, written as a push records it; `details` sets or overrides any column (phone, status...). */
export async function insertLead(
  db: Database,
  owner: Pick<TestWorkspace, 'workspaceId'>,
  campaignId: string,
  details: { phone?: string; status?: 'queued' | 'dialing' | 'completed' | 'failed' | 'cancelled' } = {},
) {
  const leadId = randomUUID();
  await db.lead.create({
    data: {
      id: leadId,
      workspaceId: owner.workspaceId,
      campaignId,
      idempotencyKey: leadId,
      phone: '+14155550120',
      workflowId: `lead-${leadId}`,
      requestId: randomUUID(),
      ...details,
    },
  });
  return leadId;
}

/**
 * A campaign, a lead and one answered call of the workspace, written as the dial ladder records them;
 * `details` sets or overrides any column (transcript, agentId, carrier state...).
 */
export async function insertAnsweredCall(db: Database, owner: TestWorkspace, details: Record<string, unknown> = {}) {
  const campaign = await db.campaign.create({ data: { workspaceId: owner.workspaceId, name: 'Calls' } });
  const leadId = await insertLead(db, owner, campaign.id);
  return db.call.create({
    data: {
      workspaceId: owner.workspaceId,
      campaignId: campaign.id,
      leadId,
      attempt: 1,
      attemptId: `${leadId}:1`,
      provider: 'simulated',
      status: 'ended',
      outcome: 'answered',
      durationMs: 41_000,
      startedAt: new Date('2026-11-23T00:59:00.000Z'),
      endedAt: new Date('2026-11-23T00:59:41.000Z'),
      ...details,
    },
  });
}

/**
 * A lead of the campaign and its call recorded as dialing, with the carrier's id, as dialCall leaves it (its line
 * taken: the campaign's callsInFlight is the caller's), for carrier events sent by hand. The call's workflowId is
 * its lead's, which no workflow runs.
 */
export async function insertDialingCall(db: Database, owner: Pick<TestWorkspace, 'workspaceId'>, campaignId: string) {
  const leadId = await insertLead(db, owner, campaignId);
  return db.call.create({
    data: {
      workspaceId: owner.workspaceId,
      campaignId,
      leadId,
      attempt: 1,
      attemptId: `${leadId}:1`,
      provider: 'simulated',
      providerCallId: `sim_${randomUUID()}`,
      status: 'dialing',
      startedAt: new Date(),
      workflowId: `lead-${leadId}`,
    },
  });
}

/**
 * A lead of the (running) campaign whose first attempt took its line through takeLine, as the ladder's dial does before
 * the carrier is asked: its call dialing without the carrier's id, with settlesLeadOn if given.
 */
export async function takeFirstLine(
  db: Database,
  owner: Pick<TestWorkspace, 'workspaceId'>,
  campaignId: string,
  settlesLeadOn?: string[],
) {
  const leadId = await insertLead(db, owner, campaignId, { phone: '+14155550125' });
  const attemptId = `${leadId}:1`;
  const decision = await takeLine(db.sql, {
    leadId,
    attempt: 1,
    attemptId,
    provider: 'simulated',
    workflowId: `lead-${leadId}`,
    settlesLeadOn,
  });
  if (decision?.verdict !== 'started') throw new Error(`the first attempt was not started: ${decision?.verdict}`);
  return { lead: { id: leadId }, attemptId };
}

/** A carrier's status event of the call, as the simulated carrier sends it (its id: `<providerCallId>:<status>`). */
export function callEventFor(
  call: { providerCallId: string | null },
  status: CallEvent['status'],
  extra: Partial<CallEvent> = {},
): CallEvent {
  return {
    eventId: `${call.providerCallId}:${status}`,
    providerCallId: call.providerCallId!,
    status,
    answeredBy: null,
    durationMs: null,
    reason: null,
    occurredAt: new Date().toISOString(),
    ...extra,
  };
}

/**
 * A test call of the agent recorded as POST /calls/test records it (dialing, on the simulated carrier unless told), its
 * workflow not started yet and no hold taken; `details` sets or overrides any column (provider, connection, caller,
 * test lead...). `db` may be a transaction.
 */
export async function insertTestCall(
  db: Pick<Database, 'call'>,
  call: { workspaceId: string; agentId: string; to: string },
  details: Record<string, unknown> = {},
) {
  const callId = randomUUID();
  await db.call.create({
    data: {
      id: callId,
      workspaceId: call.workspaceId,
      kind: 'test',
      toNumber: call.to,
      attempt: 1,
      attemptId: `test:${callId}`,
      provider: 'simulated',
      status: 'dialing',
      startedAt: new Date(),
      workflowId: testCallWorkflowId(callId),
      agentId: call.agentId,
      ...details,
    },
  });
  return callId;
}

/** Starts a recorded test call's workflow, as the API does once it has recorded the call. */
export const startTestCallWorkflow = (temporal: TestTemporal, callId: string) =>
  temporal.client.workflow.start('testCallWorkflow', {
    workflowId: testCallWorkflowId(callId),
    taskQueue: temporal.taskQueue,
    args: [{ callId }],
  });

/** A test call's ledger entries (its hold, release and charge): [kind, status, amount], the hold first. */
export async function testCallEntries(db: Database, callId: string) {
  const entries = await db.creditLedgerEntry.findMany({ where: { referenceId: callId } });
  const order = ['hold', 'hold_release', 'test_call'];
  return entries
    .sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind))
    .map((entry) => [entry.kind, entry.status, entry.amount.toFixed(4)]);
}
