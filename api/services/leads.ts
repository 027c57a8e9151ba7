import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import type { Campaign } from '../../generated/prisma/client';
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

export interface LeadToAdmit {
  lead: LeadInput;
  idempotencyKey: string;
}

export type Admission =
  | { outcome: 'queued' | 'duplicate'; leadId: string }
  | { outcome: 'rejected'; leadId: string; retryable: true; error: ErrorCode; reason: string };

/** The workflow id is a function of campaign and key: Temporal itself refuses a second run. */
export function leadWorkflowId(campaignId: string, idempotencyKey: string): string {
  return `lead-${campaignId}-${createHash('sha256').update(idempotencyKey).digest('base64url')}`;
}

/** The campaign a push goes to, or the refusal of the whole push. */
export async function campaignAcceptingLeads(services: AppServices, principal: Principal, campaignId: string): Promise<Campaign> {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  if (campaign.channel === 'EMAIL') throw new ApiError(403, ErrorCode.api_key_not_allowed);
  if (!campaign.acceptsLeadPush || campaign.status === 'STOPPED') throw new ApiError(409, ErrorCode.campaign_not_accepting_leads);
  return campaign;
}

/**
 * Accepts each lead exactly once per (campaign, idempotency key), by construction: the unique
 * constraint on (campaignId, idempotencyKey) makes one row, and the workflow id derived from the same
 * pair makes one workflow. A lead is accepted ("queued") by the request whose workflow start Temporal
 * took; every other request for that key reports it as a duplicate. Only then is it reported, so a
 * queued lead is already durable in both PostgreSQL and Temporal. A lead whose workflow could not be
 * started is rejected as retryable: its row waits for the same key to come again.
 */
export async function admitLeads(
  services: AppServices,
  principal: Principal,
  campaign: Campaign,
  leads: readonly LeadToAdmit[],
  requestId: string,
): Promise<Admission[]> {
  const { db } = services;
  await db.lead.createMany({
    data: leads.map(({ lead, idempotencyKey }) => ({
      workspaceId: principal.workspaceId,
      campaignId: campaign.id,
      idempotencyKey,
      phone: lead.phone,
      name: lead.name ?? null,
      fields: lead.fields as object,
      workflowId: leadWorkflowId(campaign.id, idempotencyKey),
      requestId,
    })),
    skipDuplicates: true,
  });
  const rows = await db.lead.findMany({
    where: { campaignId: campaign.id, idempotencyKey: { in: leads.map((lead) => lead.idempotencyKey) } },
    select: { id: true, idempotencyKey: true, workflowId: true, workflowStartedAt: true },
  });
  const rowByKey = new Map(rows.map((row) => [row.idempotencyKey, row]));
  const firstAdmissionByKey = new Map<string, Promise<Admission>>();
  const admissions = leads.map(({ idempotencyKey }) => {
    const row = rowByKey.get(idempotencyKey)!;
    const first = firstAdmissionByKey.get(idempotencyKey);
    // The same key twice in one batch: the second is a duplicate of the first.
    if (first) return first.then((admission): Admission => ({ outcome: 'duplicate', leadId: admission.leadId }));
    const admission: Promise<Admission> = row.workflowStartedAt
      ? Promise.resolve({ outcome: 'duplicate', leadId: row.id })
      : startLeadWorkflow(services, principal, campaign.id, row);
    firstAdmissionByKey.set(idempotencyKey, admission);
    return admission;
  });
  const settled = await Promise.all(admissions);
  // Remember which leads have their workflow, so that later pushes of their keys skip Temporal.
  const rejected = new Set(settled.filter((admission) => admission.outcome === 'rejected').map((admission) => admission.leadId));
  const nowRunning = rows.filter((row) => !row.workflowStartedAt && !rejected.has(row.id)).map((row) => row.id);
  if (nowRunning.length) await db.lead.updateMany({ where: { id: { in: nowRunning } }, data: { workflowStartedAt: new Date() } });
  return settled;
}

/** A healthy start takes milliseconds; past this, the caller is better told to retry than kept waiting. */
const WORKFLOW_START_DEADLINE_MS = 5_000;

async function startLeadWorkflow(
  { temporal, temporalConnection, taskQueue }: AppServices,
  principal: Principal,
  campaignId: string,
  row: { id: string; workflowId: string },
): Promise<Admission> {
  try {
    await temporalConnection.withDeadline(Date.now() + WORKFLOW_START_DEADLINE_MS, () =>
      temporal.workflow.start<typeof leadDialWorkflow>('leadDialWorkflow', {
        workflowId: row.workflowId,
        taskQueue,
        args: [{ leadId: row.id }],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        searchAttributes: { CampaignId: [campaignId], WorkspaceId: [principal.workspaceId] },
      }),
    );
    return { outcome: 'queued', leadId: row.id };
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return { outcome: 'duplicate', leadId: row.id };
    return { outcome: 'rejected', leadId: row.id, retryable: true, error: ErrorCode.temporal_unavailable, reason: 'workflow_start_failed' };
  }
}
