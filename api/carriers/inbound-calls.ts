import { CONVERSATION_OUTCOMES } from '../../lib/calls/call-aftermath';
import type { CallOutcome } from '../../lib/calls/call-outcomes';
import {
  DEFAULT_DIAL_LADDER,
  dialLadderSchema,
  outcomesEndingLadder,
  type DialLadder,
} from '../../lib/dial-ladder/dial-ladder';
import { withEveryOutcomeRule } from '../../lib/dial-ladder/ladder-rules';
import { poolSql } from '../../lib/run-sql';
import { startCallIntelligence } from '../../lib/temporal/start-call-intelligence';
import { startInboundCallWorkflow } from '../../lib/temporal/calls';
import { inboundCallWorkflowId } from '../../lib/temporal/workflow-ids';
import { log } from '../../lib/log';
import type { AppServices } from '../app-services';
import { endedInboundCall, inboundTarget, insertInboundCall, type CallerLead } from './inbound-call-store';

/**
 * Inbound calls on any carrier (docs/features/carriers/inbound.md): a person calls a number of the workspace that routes
 * to an agent; the call is recorded, on the caller's lead when the workspace has one, and then runs the conversation
 * an answered outbound call runs, through the same routes (the call's attempt id names it there). Twilio's routes
 * (twilio-inbound.ts) call these.
 */

/** The call a carrier announced, as its webhook names it. */
export interface AnnouncedCall {
  connectionId: string;
  /** The connection's provider (twilio, twilio-twin, ...): the call records it. */
  provider: string;
  providerCallId: string;
  /** The caller's number and the number called (E.164). */
  from: string;
  to: string;
}

/** A call no lead's ladder takes: its own attempt id, by the carrier's id of the call. */
const ownAttemptId = (providerCallId: string) => `inbound:${providerCallId}`;

const ladderOf = (stored: unknown): DialLadder => {
  const parsed = dialLadderSchema.safeParse(stored);
  return stored !== null && parsed.success ? withEveryOutcomeRule(parsed.data) : DEFAULT_DIAL_LADDER;
};

/**
 * The call recorded (or found, when the carrier asks again) and its attempt id; null when the number is not the
 * connection's or routes to no live agent (the carrier is then told to hang up).
 *
 * Who is calling (docs/features/carriers/inbound.md#who-is-calling): the workspace's lead with the caller's number, one
 * still waiting for its next attempt first, else the newest. A lead of a CLASSIC voice campaign waiting for its next
 * attempt has the call recorded as that attempt (`<leadId>:<n>`, the id its ladder would dial with): when the ladder
 * comes to it, it finds the attempt made and ended (activities/dial-ladder/calls.ts dialAttempt), and goes on from its
 * outcome, so a person reached by their return call is not dialed again. Its end settles the lead at once on the
 * outcomes on which the ladder would end. Any other lead (finished, a journey's, on a call now) has the call recorded on
 * it under its own id, and an unknown caller has it with no lead (kind inbound).
 */
export async function recordInboundCall(
  services: AppServices,
  call: AnnouncedCall,
): Promise<{ attemptId: string } | null> {
  const recorded = await recordCall(services, call);
  if (recorded) await watchUntilItEnds(services, recorded);
  return recorded && { attemptId: recorded.attemptId };
}

/**
 * The call's watching workflow started (docs/features/carriers/inbound.md#a-lost-end), again when the carrier asks again
 * (already started is fine). Temporal unreachable: the person is answered all the same, the call unwatched (its end
 * event still ends it), and the failure logged.
 */
async function watchUntilItEnds(services: AppServices, call: { attemptId: string; workspaceId: string }) {
  try {
    await startInboundCallWorkflow(services.temporal, services.taskQueue, call);
  } catch (error) {
    log.error({ err: error, attemptId: call.attemptId }, 'inbound call answered unwatched: its workflow did not start');
  }
}

async function recordCall(
  services: AppServices,
  call: AnnouncedCall,
): Promise<{ attemptId: string; workspaceId: string } | null> {
  const sql = poolSql(services.sql);
  const target = await inboundTarget(sql, call);
  if (!target) return null;
  const { workspaceId } = target;
  if (target.recordedAttemptId) return { attemptId: target.recordedAttemptId, workspaceId };
  const { lead } = target;
  const common = {
    workspaceId: target.workspaceId,
    provider: call.provider,
    agentId: target.agentId,
    from: call.from,
    to: call.to,
    connectionId: call.connectionId,
    providerCallId: call.providerCallId,
  };
  const asLadderAttempt = lead?.laddered && lead.open ? ladderAttempt(lead) : null;
  if (asLadderAttempt) {
    const { attemptId } = asLadderAttempt;
    const workflowId = inboundCallWorkflowId(attemptId);
    const id = await insertInboundCall(sql, { ...common, kind: 'campaign', ...asLadderAttempt, workflowId });
    if (id) return { attemptId, workspaceId };
    // The ladder recorded that attempt meanwhile (it is dialing the caller): the call is the lead's all the same.
  }
  const attemptId = ownAttemptId(call.providerCallId);
  await insertInboundCall(sql, {
    ...common,
    kind: lead ? 'campaign' : 'inbound',
    campaignId: lead?.campaignId ?? null,
    leadId: lead?.id ?? null,
    attempt: lead ? lead.attempts + 1 : 1,
    attemptId,
    settlesLeadOn: [],
    workflowId: inboundCallWorkflowId(attemptId),
  });
  return { attemptId, workspaceId };
}

function ladderAttempt(lead: CallerLead) {
  const attempt = lead.attempts + 1;
  return {
    campaignId: lead.campaignId,
    leadId: lead.id,
    attempt,
    attemptId: `${lead.id}:${attempt}`,
    settlesLeadOn: outcomesEndingLadder(ladderOf(lead.dialLadder), attempt),
  };
}

/**
 * After the carrier's event for an inbound call: once it has ended with a conversation, its call intelligence is
 * started (no workflow waits for an inbound call to run its aftermath; a second start is refused by the workflow id,
 * harmlessly, so a lead's ladder that later takes the call as its attempt starts nothing twice).
 */
export async function afterInboundEvent(
  services: AppServices,
  call: Omit<AnnouncedCall, 'from' | 'to'>,
): Promise<void> {
  const ended = await endedInboundCall(poolSql(services.sql), call);
  if (ended && CONVERSATION_OUTCOMES.includes(ended.outcome as CallOutcome))
    await startCallIntelligence(services.temporal, services.taskQueue, ended.id);
}
