import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { LeadWorkflowKind } from '../campaigns/lead-workflow-kind';
import { startWorkflow } from './start-workflow';

/** A stored lead whose workflow may not have been started yet. */
export interface StoredLead {
  id: string;
  workflowId: string;
  campaignId: string;
  workspaceId: string;
  /** Which workflow it runs (lib/campaigns/lead-workflow-kind.ts). */
  kind: LeadWorkflowKind;
  /**
   * A CLASSIC lead in its campaign's line queue, no line handed to it yet: its workflow starts with a delay
   * (QUEUED_START_DELAY) and is woken by signal when a line is handed to it (lib/temporal/line-queue.ts).
   */
  waitsForLine?: boolean;
}

/**
 * How long a lead queued by its push waits before its workflow's first task, unless a line is handed to it first
 * (lineGranted, sent with start, ends the delay: Temporal dispatches the first task on a signal). Until then the
 * lead costs no workflow task, no timer and no worker memory; past it, the lead looks at its line once and sleeps
 * again in the queue (leadLadderWorkflow QUEUED_RECHECK_MS). An hour: a lost wake-up is sent again by the sweep
 * within seconds, so this is only the last resort.
 */
export const QUEUED_START_DELAY_MS = 60 * 60_000;

/** A healthy start takes milliseconds; a start that hangs longer is abandoned to a later attempt. */
const WORKFLOW_START_DEADLINE_MS = 5_000;

/**
 * Starts a stored lead's workflow (a CLASSIC lead's: the lean ladder, leadLadderWorkflow); true when it runs (started
 * now, or already). Starting twice is
 * harmless: the stored workflow id derives from campaign and idempotency key (leadWorkflowId in
 * lib/temporal/workflow-ids.ts), and Temporal refuses a second run. Used by the API's lead dispatcher and by the
 * enrollment of a calling list (activities/dial-ladder/enrollment.ts).
 */
export async function startLeadWorkflow(temporal: Client, taskQueue: string, lead: StoredLead): Promise<boolean> {
  const common = {
    workflowId: lead.workflowId,
    taskQueue,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    searchAttributes: { CampaignId: [lead.campaignId], WorkspaceId: [lead.workspaceId] },
  };
  try {
    await temporal.connection.withDeadline(Date.now() + WORKFLOW_START_DEADLINE_MS, async () => {
      if (lead.kind === 'JOURNEY')
        await startWorkflow(temporal, 'journeyRunWorkflow', { ...common, args: [{ runId: lead.id }] });
      else if (lead.kind === 'WHATSAPP')
        await startWorkflow(temporal, 'leadMessageWorkflow', { ...common, args: [{ leadId: lead.id }] });
      else
        await startWorkflow(temporal, 'leadLadderWorkflow', {
          ...common,
          args: [{ leadId: lead.id }],
          ...(lead.waitsForLine && { startDelay: QUEUED_START_DELAY_MS }),
        });
    });
    return true;
  } catch (error) {
    return error instanceof WorkflowExecutionAlreadyStartedError;
  }
}
