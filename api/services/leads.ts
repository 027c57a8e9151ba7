import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import { ErrorCode } from '../../lib/error-codes';
import type { leadDialWorkflow } from '../../workflows/lead-dial';
import { ApiError } from '../http/api-error';
import type { Principal } from '../auth/principal';
import { findOwnedCampaign } from './campaigns';
import type { AppServices } from './index';

export interface LeadInput {
  phone: string;
  name?: string;
  fields: Record<string, unknown>;
}

export interface PushedLead {
  leadId: string;
  deduplicated: boolean;
}

/** The workflow id is a function of campaign and key: Temporal itself refuses a second run. */
export function leadWorkflowId(campaignId: string, idempotencyKey: string): string {
  return `lead-${campaignId}-${createHash('sha256').update(idempotencyKey).digest('base64url')}`;
}

/**
 * Accepts a lead exactly once per (campaign, idempotency key). The unique constraint decides which
 * request created it; whichever request comes first to Temporal starts the one workflow. The lead is
 * reported queued only after both the row and the workflow exist.
 */
export async function pushLead(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  input: { lead: LeadInput; idempotencyKey: string },
  requestId: string,
): Promise<PushedLead> {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  if (!campaign.acceptsLeadPush || campaign.status === 'STOPPED') {
    throw new ApiError(409, ErrorCode.campaign_not_accepting_leads);
  }
  const workflowId = leadWorkflowId(campaignId, input.idempotencyKey);
  const { count } = await services.db.lead.createMany({
    data: {
      workspaceId: principal.workspaceId,
      campaignId,
      idempotencyKey: input.idempotencyKey,
      phone: input.lead.phone,
      name: input.lead.name ?? null,
      fields: input.lead.fields as object,
      workflowId,
      requestId,
    },
    skipDuplicates: true,
  });
  const lead = await services.db.lead.findUniqueOrThrow({
    where: { campaignId_idempotencyKey: { campaignId, idempotencyKey: input.idempotencyKey } },
    select: { id: true, workflowStartedAt: true },
  });
  if (!lead.workflowStartedAt) await startLeadWorkflow(services, principal, campaignId, lead.id, workflowId);
  return { leadId: lead.id, deduplicated: count === 0 };
}

async function startLeadWorkflow(
  { temporal, taskQueue, db }: AppServices,
  principal: Principal,
  campaignId: string,
  leadId: string,
  workflowId: string,
) {
  try {
    await temporal.workflow.start<typeof leadDialWorkflow>('leadDialWorkflow', {
      workflowId,
      taskQueue,
      args: [{ leadId }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      searchAttributes: { CampaignId: [campaignId], WorkspaceId: [principal.workspaceId] },
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
      throw new ApiError(503, ErrorCode.temporal_unavailable, { retryable: true }, { 'Retry-After': '5' });
    }
  }
  await db.lead.update({ where: { id: leadId }, data: { workflowStartedAt: new Date() } });
}
