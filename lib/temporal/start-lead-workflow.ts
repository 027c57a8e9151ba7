import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { journeyRunWorkflow } from '../../workflows/journeys/journey-run';
import type { leadDialWorkflow } from '../../workflows/dial-ladder/lead-dial';
import type { leadMessageWorkflow } from '../../workflows/whatsapp/lead-message';

/** A stored lead whose workflow may not have been started yet. */
export interface StoredLead {
  id: string;
  workflowId: string;
  campaignId: string;
  workspaceId: string;
  /**
   * CLASSIC: the dial ladder. JOURNEY: a run of the campaign's journey, whose run id is the lead's id.
   * WHATSAPP: a CLASSIC campaign of the WHATSAPP channel: its one template message (leadMessageWorkflow).
   */
  kind: LeadWorkflowKind;
}

export type LeadWorkflowKind = 'CLASSIC' | 'JOURNEY' | 'WHATSAPP';

/** Which workflow a campaign's leads run: a journey's run, a WHATSAPP campaign's message, or the dial ladder. */
export function leadWorkflowKind(campaign: { kind: 'CLASSIC' | 'JOURNEY'; channel: string }): LeadWorkflowKind {
  if (campaign.kind === 'JOURNEY') return 'JOURNEY';
  return campaign.channel === 'WHATSAPP' ? 'WHATSAPP' : 'CLASSIC';
}

/** leadWorkflowKind in SQL, over a "Campaign" row aliased `c`, for the queries that read many leads at once. */
export const LEAD_WORKFLOW_KIND_SQL = `CASE WHEN c.kind = 'JOURNEY' THEN 'JOURNEY' WHEN c.channel = 'WHATSAPP' THEN 'WHATSAPP' ELSE 'CLASSIC' END`;

/** A healthy start takes milliseconds; a start that hangs longer is abandoned to a later attempt. */
const WORKFLOW_START_DEADLINE_MS = 5_000;

/**
 * Starts a stored lead's workflow; true when it runs (started now, or already). Starting twice is
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
        await temporal.workflow.start<typeof journeyRunWorkflow>('journeyRunWorkflow', {
          ...common,
          args: [{ runId: lead.id }],
        });
      else if (lead.kind === 'WHATSAPP')
        await temporal.workflow.start<typeof leadMessageWorkflow>('leadMessageWorkflow', {
          ...common,
          args: [{ leadId: lead.id }],
        });
      else
        await temporal.workflow.start<typeof leadDialWorkflow>('leadDialWorkflow', {
          ...common,
          args: [{ leadId: lead.id }],
        });
    });
    return true;
  } catch (error) {
    return error instanceof WorkflowExecutionAlreadyStartedError;
  }
}
