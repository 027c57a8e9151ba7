import type { PoolClient } from 'pg';
import type { Campaign } from '../../generated/prisma/client';
import { leadWorkflowId } from '../../lib/temporal/workflow-ids';
import { leadWorkflowKind } from '../../lib/campaigns/lead-workflow-kind';
import { NOW_UTC } from '../../lib/sql-clock';
import type { Principal } from '../door/principal';
import type { LeadRow, LeadToAdmit } from './admission';

/**
 * Inserts the leads whose keys are new and returns the row of every key, new or not, in one
 * statement: the unique (campaignId, idempotencyKey) constraint settles races between requests. A CLASSIC
 * voice campaign's new leads join its line queue in the same statement, in the batch's order
 * (docs/features/dial-ladder.md#lines-handed-out): each one's workflow starts when a line is handed to it, and a
 * lead is never stored without its place.
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
      WITH campaign AS (
        -- Read under a share lock: a pause or resume committing now is waited for and seen, and one that comes after
        -- waits for these rows and moves them with the rest of the queue (activities/campaigns/campaigns.ts).
        SELECT CASE WHEN status = 'RUNNING' THEN 'line' ELSE 'campaign' END AS waiting
          FROM "Campaign" WHERE id = $2::uuid AND $9::text IS NOT NULL FOR SHARE
      ), stored AS (
        INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, name, fields, "workflowId", "requestId", "updatedAt", "waitingFor")
        SELECT gen_random_uuid(), $1::uuid, $2::uuid, t.key, t.phone, t.name, t.fields, t.workflow_id, $3::uuid, now(),
               (SELECT waiting FROM campaign)
          FROM unnest($4::text[], $5::text[], $6::text[], $7::jsonb[], $8::text[]) AS t(key, phone, name, fields, workflow_id)
        ON CONFLICT ("campaignId", "idempotencyKey") DO UPDATE SET "idempotencyKey" = EXCLUDED."idempotencyKey"
        RETURNING id, "idempotencyKey", "workflowId", "workflowStartedAt", (xmax = 0) AS inserted
      ), queued AS (
        INSERT INTO "LineQueue" ("campaignId", "leadId", "attemptId", "workflowId", "byPush", "queuedAt")
        SELECT $2::uuid, stored.id, stored.id::text || ':1', stored."workflowId", true, ${NOW_UTC}
          FROM stored JOIN unnest($4::text[]) WITH ORDINALITY AS k(key, position) ON k.key = stored."idempotencyKey"
         WHERE stored.inserted AND $9::text IS NOT NULL
         ORDER BY k.position
        ON CONFLICT ("attemptId") DO NOTHING
      )
      SELECT * FROM stored`,
    values: [
      principal.workspaceId,
      campaign.id,
      requestId,
      unique.map((lead) => lead.idempotencyKey),
      unique.map((lead) => lead.lead.phone),
      unique.map((lead) => lead.lead.name ?? null),
      unique.map((lead) => JSON.stringify(lead.lead.fields)),
      unique.map((lead) => leadWorkflowId(campaign.id, lead.idempotencyKey)),
      // Whether the lead joins its campaign's line queue (a CLASSIC voice lead); null: it does not.
      leadWorkflowKind(campaign) === 'CLASSIC' ? 'queued' : null,
    ],
  });
  return rows;
}
