import type { PoolClient } from 'pg';
import type { Campaign } from '../../generated/prisma/client';
import { leadWorkflowId } from '../../lib/temporal/workflow-ids';
import type { Principal } from '../door/principal';
import type { LeadRow, LeadToAdmit } from './admission';

/**
 * Inserts the leads whose keys are new and returns the row of every key, new or not, in one
 * statement: the unique (campaignId, idempotencyKey) constraint settles races between requests.
 */
export async function upsertLeads(
  sql: Pick<PoolClient, 'query'>,
  principal: Principal,
  campaign: Campaign,
  unique: readonly LeadToAdmit[],
  requestId: string,
): Promise<LeadRow[]> {
  const { rows } = await sql.query<LeadRow>({
    name: 'upsert_leads',
    text: `
      INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, name, fields, "workflowId", "requestId", "updatedAt")
      SELECT gen_random_uuid(), $1::uuid, $2::uuid, t.key, t.phone, t.name, t.fields, t.workflow_id, $3::uuid, now()
        FROM unnest($4::text[], $5::text[], $6::text[], $7::jsonb[], $8::text[]) AS t(key, phone, name, fields, workflow_id)
      ON CONFLICT ("campaignId", "idempotencyKey") DO UPDATE SET "idempotencyKey" = EXCLUDED."idempotencyKey"
      RETURNING id, "idempotencyKey", "workflowId", "workflowStartedAt", (xmax = 0) AS inserted`,
    values: [
      principal.workspaceId,
      campaign.id,
      requestId,
      unique.map((lead) => lead.idempotencyKey),
      unique.map((lead) => lead.lead.phone),
      unique.map((lead) => lead.lead.name ?? null),
      unique.map((lead) => JSON.stringify(lead.lead.fields)),
      unique.map((lead) => leadWorkflowId(campaign.id, lead.idempotencyKey)),
    ],
  });
  return rows;
}
