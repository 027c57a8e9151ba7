import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { LeadWorkflowKind } from '../campaigns/lead-workflow-kind';
import { startWorkflow } from './start-workflow';
import { LEAD_LADDER_WORKFLOW } from './workflow-contracts';

/** A stored lead whose workflow may not have been started yet. */
export interface StoredLead {
  id: string;
  workflowId: string;
  campaignId: string;
  workspaceId: string;
  /** Which workflow it runs (lib/campaigns/lead-workflow-kind.ts). */
  kind: LeadWorkflowKind;
}

/** A healthy start takes milliseconds; a start that hangs longer is abandoned to a later attempt. */
const WORKFLOW_START_DEADLINE_MS = 5_000;

/**
 * Starts a stored lead's workflow (a CLASSIC lead's: the lean ladder, LEAD_LADDER_WORKFLOW); true when it runs (started
 * now, or already). A CLASSIC lead queued by its push is not started here: its workflow starts when a line is handed
 * to it (lib/temporal/line-queue.ts). Starting twice is
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
      else await startWorkflow(temporal, LEAD_LADDER_WORKFLOW, { ...common, args: [{ leadId: lead.id }] });
    });
    return true;
  } catch (error) {
    return error instanceof WorkflowExecutionAlreadyStartedError;
  }
}
