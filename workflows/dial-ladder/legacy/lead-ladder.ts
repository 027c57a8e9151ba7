/*
 * LEGACY: leadLadderWorkflow, the lean ladder. No new run starts it: a new CLASSIC lead runs leadLadderWorkflowV2
 * (issue 28), and so does a journey's call node since the call-node-ladder-v2 patch (669c2bd, 2026-12-07).
 * What still needs it: its runs started before those that are still open (a lead held by a paused campaign may stay
 * open for months), journey runs that started it as their call node's child between the call-node-lean-ladder and
 * call-node-ladder-v2 patches (they replay that child), and its committed lead-ladder-* histories (test/histories/;
 * the lead-ladder-v2-* ones are its successor's).
 * When it may go (docs/patch-register.md#replaced-workflow-types): once
 *   temporal workflow count --query "WorkflowType='leadLadderWorkflow' AND ExecutionStatus='Running'"
 * answers 0 and no journey run started before call-node-ladder-v2 is still open (that patch's retireWhen in
 * lib/temporal/patches.ts), it leaves workflows/index.ts with its histories; journeyRunWorkflow names it until then.
 * Its code is runLeadLadder (workflows/dial-ladder/lead-ladder.ts), shared with its successor: a change there that
 * changes a command it gives without settleAtEnd breaks its committed histories, which must keep replaying.
 */
import type { LeadDialInput, LeadDialResult } from '../../../lib/dial-ladder/lead-state';
import { runLeadLadder } from '../lead-ladder';

/**
 * One lead on the CLASSIC dial ladder, lean (docs/features/dial-ladder.md#the-lean-ladder): the same ladder as
 * leadDialWorkflow, which it replaced for new leads, without patches and with two local activities per attempt.
 * Each rung waits its delay, then for the calling window in the lead's local time (durable timers), then for a line
 * of its campaign in the line queue, woken when one is handed to it, then places one call and waits for its end;
 * the outcome's rule ends the ladder or moves on. A stopped campaign ends it cancelled, even in the middle of a wait.
 * Replaced for new leads and for a journey's call node by leadLadderWorkflowV2; runs in flight continue on it.
 */
export async function leadLadderWorkflow(input: LeadDialInput): Promise<LeadDialResult> {
  return runLeadLadder(input, false);
}
