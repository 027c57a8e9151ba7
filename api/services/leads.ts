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
  const rows = await upsertLeads(services, principal, campaign, leads, requestId);
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
  // Remember which leads have their workflow, so that later pushes of their keys skip Temporal. Off
  // the response's path: if it is lost, a later push of the key only asks Temporal once more.
  const rejected = new Set(settled.filter((admission) => admission.outcome === 'rejected').map((admission) => admission.leadId));
  const nowRunning = rows.filter((row) => !row.workflowStartedAt && !rejected.has(row.id)).map((row) => row.id);
  if (nowRunning.length) {
    services.sql.query('UPDATE "Lead" SET "workflowStartedAt" = now() WHERE id = ANY($1::uuid[])', [nowRunning]).catch(() => undefined);
  }
  return settled;
}

/** A healthy start takes milliseconds; past this, the caller is better told to retry than kept waiting. */
const WORKFLOW_START_DEADLINE_MS = 5_000;

interface LeadRow {
  id: string;
  idempotencyKey: string;
  workflowId: string;
  workflowStartedAt: Date | null;
}

/**
 * Inserts the leads whose keys are new and returns the row of every key, new or not, in one
 * statement: the unique (campaignId, idempotencyKey) constraint settles races between requests.
 */
async function upsertLeads(
  { sql }: AppServices,
  principal: Principal,
  campaign: Campaign,
  leads: readonly LeadToAdmit[],
  requestId: string,
): Promise<LeadRow[]> {
  // One row per key: a key repeated within a batch is answered as a duplicate of its first lead.
  const firstByKey = new Map<string, LeadToAdmit>();
  for (const lead of leads) if (!firstByKey.has(lead.idempotencyKey)) firstByKey.set(lead.idempotencyKey, lead);
  const unique = [...firstByKey.values()];
  const { rows } = await sql.query<LeadRow>({
    name: 'upsert_leads',
    text: `
      INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, name, fields, "workflowId", "requestId", "updatedAt")
      SELECT gen_random_uuid(), $1::uuid, $2::uuid, t.key, t.phone, t.name, t.fields, t.workflow_id, $3::uuid, now()
        FROM unnest($4::text[], $5::text[], $6::text[], $7::jsonb[], $8::text[]) AS t(key, phone, name, fields, workflow_id)
      ON CONFLICT ("campaignId", "idempotencyKey") DO UPDATE SET "idempotencyKey" = EXCLUDED."idempotencyKey"
      RETURNING id, "idempotencyKey", "workflowId", "workflowStartedAt"`,
    values: [
      principal.workspaceId, campaign.id, requestId,
      unique.map((lead) => lead.idempotencyKey),
      unique.map((lead) => lead.lead.phone),
      unique.map((lead) => lead.lead.name ?? null),
      unique.map((lead) => JSON.stringify(lead.lead.fields)),
      unique.map((lead) => leadWorkflowId(campaign.id, lead.idempotencyKey)),
    ],
  });
  return rows;
}

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
