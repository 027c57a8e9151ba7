import type { SignalDefinition } from '@temporalio/common';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type Client,
} from '@temporalio/client';
import { leaveLineQueue, type GrantedLine } from '../calls/call-lines';
import type { RunSql } from '../run-sql';
import { campaignChangedSignal, lineGrantedSignal } from './messages';
import { signalWithStartWorkflow } from './start-workflow';
import { LEAD_LADDER_WORKFLOW } from './workflow-contracts';

/** A wake-up that takes longer is abandoned: the dispatcher's sweep sends it again (lib/temporal/lead-dispatch.ts). */
const WAKE_DEADLINE_MS = 5_000;

/**
 * Signals a lead's lean ladder with start (a run in flight of an older ladder type is signalled as it is; a new one
 * starts on LEAD_LADDER_WORKFLOW): a lead queued by its push has no workflow until then (and one started
 * with a delay by an older release takes its first task at once: a plain signal would not end the delay); a run that
 * has ended refuses it (WorkflowExecutionAlreadyStartedError).
 */
function signalWithStartLadder(
  temporal: Client,
  lead: { leadId: string; workflowId: string; campaignId: string; workspaceId: string },
  signal: SignalDefinition<[]>,
  taskQueue: string,
) {
  return signalWithStartWorkflow(temporal, LEAD_LADDER_WORKFLOW, {
    workflowId: lead.workflowId,
    taskQueue,
    args: [{ leadId: lead.leadId }],
    signal,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    searchAttributes: { CampaignId: [lead.campaignId], WorkspaceId: [lead.workspaceId] },
  });
}

/**
 * Wakes the workflows of the queued attempts a line was just handed to (lib/calls/call-lines.ts). An attempt
 * queued by its running workflow is signalled; a lead queued by its push, whose workflow is not started yet, is
 * signalled with start on the lead workflows' task queue (its first workflow task then runs at once). Nothing is thrown: a wake-up lost here is sent again by the sweep while the line stays unused. Answers
 * the entries whose workflow is gone (finished, terminated): their lines are to be given back.
 */
export async function wakeLineHolders(
  temporal: Client,
  granted: readonly GrantedLine[],
  taskQueue: string,
): Promise<GrantedLine[]> {
  const gone: GrantedLine[] = [];
  await Promise.all(
    granted.map(async (line) => {
      try {
        await temporal.connection.withDeadline(Date.now() + WAKE_DEADLINE_MS, async () => {
          if (line.byPush) await signalWithStartLadder(temporal, line, lineGrantedSignal, taskQueue);
          else await temporal.workflow.getHandle(line.workflowId).signal(lineGrantedSignal);
        });
      } catch (error) {
        // Not found: the workflow has ended. Already started, on a signal-with-start: it has ended and its id may
        // not be used again. Either way nobody will use this line.
        if (error instanceof WorkflowNotFoundError || error instanceof WorkflowExecutionAlreadyStartedError)
          gone.push(line);
      }
    }),
  );
  return gone;
}

/**
 * Wakes the lean ladder of each of a stopped campaign's leads given with campaignChanged, so that each ends,
 * cancelled. A lead whose workflow the outbox had not started yet is started by signal-with-start, and ends at once
 * (a workflow that has ended refuses it, harmlessly). Not for the leads the stop settled without a workflow (queued by
 * their push, never handed a line): they are to get none (activities/campaigns/campaigns.ts notifyCampaignLeads).
 */
export async function wakeStoppedLeads(
  temporal: Client,
  leads: readonly { leadId: string; workflowId: string; campaignId: string; workspaceId: string }[],
  taskQueue: string,
): Promise<number> {
  let woken = 0;
  for (let offset = 0; offset < leads.length; offset += 50)
    await Promise.all(
      leads.slice(offset, offset + 50).map(async (lead) => {
        try {
          await signalWithStartLadder(temporal, lead, campaignChangedSignal, taskQueue);
          woken++;
        } catch (error) {
          if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        }
      }),
    );
  return woken;
}

/**
 * Wakes the workflows lines were handed to; a line whose workflow is gone is given back and handed on, until every
 * line handed out has a living workflow or the queue is empty. Never throws for a wake-up (see wakeLineHolders).
 */
export async function handOverLines(
  sql: RunSql,
  temporal: Client,
  granted: readonly GrantedLine[],
  taskQueue: string,
): Promise<void> {
  let pending = granted;
  while (pending.length) {
    const gone = await wakeLineHolders(temporal, pending, taskQueue);
    pending = (await Promise.all(gone.map((line) => leaveLineQueue(sql, line.attemptId)))).flat();
  }
}
