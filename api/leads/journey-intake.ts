import type { PoolClient } from 'pg';
import type { Campaign } from '../../generated/prisma/client';
import { ErrorCode } from '../../lib/error-codes';
import { missingStartFields, undeclaredVariables, type JourneyDefinition } from '../../lib/journeys';
import { LIVE_RUN_STATUSES } from '../../lib/journeys/run-statuses';
import { Refusal } from '../../lib/refusal';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { upsertLeads } from './lead-rows';
import type { Admission, LeadRow, LeadToAdmit, StoredLeads } from './admission';

/** Saved revisions never change, so a process may keep them. */
const revisionCache = new Map<string, JourneyDefinition>();
const REVISION_CACHE_SIZE = 500;

async function revisionDefinition(client: PoolClient, journeyId: string, revision: number): Promise<JourneyDefinition> {
  const cacheKey = `${journeyId}:${revision}`;
  const cached = revisionCache.get(cacheKey);
  if (cached) return cached;
  const {
    rows: [row],
  } = await client.query<{ definition: JourneyDefinition }>(
    'SELECT definition FROM "WorkflowRevision" WHERE "workflowId" = $1::uuid AND revision = $2',
    [journeyId, revision],
  );
  if (revisionCache.size >= REVISION_CACHE_SIZE) revisionCache.delete(revisionCache.keys().next().value!);
  revisionCache.set(cacheKey, row!.definition);
  return row!.definition;
}

/**
 * Stores the leads of a JOURNEY campaign, each with its run (whose id is the lead's), enrolled into
 * the journey's published revision. The campaign row is locked for the transaction, so the live cap
 * (runs running or needing recovery) is exact under concurrent pushes: leads beyond it are refused as
 * retryable and accepted later with the same key. A lead missing a field the start node requires is
 * refused as invalid.
 */
export async function storeJourneyLeads(
  { sql }: AppServices,
  principal: Principal,
  campaign: Campaign,
  unique: readonly LeadToAdmit[],
  requestId: string,
): Promise<StoredLeads> {
  const client = await sql.connect();
  try {
    await client.query('BEGIN');
    const {
      rows: [locked],
    } = await client.query<{ maxLiveRuns: number; journeyId: string; publishedRevision: number | null }>(
      `SELECT c."maxLiveRuns", j.id AS "journeyId", j."publishedRevision" FROM "Campaign" c JOIN "Workflow" j ON j.id = c."workflowId"
        WHERE c.id = $1::uuid FOR UPDATE OF c`,
      [campaign.id],
    );
    if (!locked?.publishedRevision)
      throw new Refusal(ErrorCode.workflow_not_published, {
        detail: "publish a revision of the campaign's workflow first",
      });
    const definition = await revisionDefinition(client, locked.journeyId, locked.publishedRevision);

    const refused = new Map<string, Admission>();
    const valid = unique.filter(({ idempotencyKey, lead }) => {
      const missing = missingStartFields(definition, lead.fields);
      if (missing.length) {
        refused.set(idempotencyKey, {
          outcome: 'invalid',
          leadId: null,
          issues: missing.map((name) => ({
            path: ['lead', 'fields', name],
            message: "required by the journey's start node",
            code: 'custom',
          })),
        });
      }
      return missing.length === 0;
    });

    const { rows: existing } = await client.query<LeadRow>(
      `SELECT id, "idempotencyKey", "workflowId", "workflowStartedAt", false AS inserted FROM "Lead"
        WHERE "campaignId" = $1::uuid AND "idempotencyKey" = ANY($2::text[])`,
      [campaign.id, valid.map((lead) => lead.idempotencyKey)],
    );
    const existingKeys = new Set(existing.map((row) => row.idempotencyKey));
    const fresh = valid.filter((lead) => !existingKeys.has(lead.idempotencyKey));
    const {
      rows: [counted],
    } = await client.query<{ live: number }>(
      `SELECT count(*)::int AS live FROM "JourneyRun" WHERE "campaignId" = $1::uuid AND status = ANY($2::"JourneyRunStatus"[])`,
      [campaign.id, LIVE_RUN_STATUSES],
    );
    const room = Math.max(locked.maxLiveRuns - counted!.live, 0);
    for (const { idempotencyKey } of fresh.slice(room)) {
      refused.set(idempotencyKey, {
        outcome: 'rejected',
        leadId: null,
        retryable: true,
        error: ErrorCode.journey_live_cap_reached,
        reason: 'live_cap',
      });
    }
    const inserted =
      room > 0 && fresh.length ? await upsertLeads(client, principal, campaign, fresh.slice(0, room), requestId) : [];
    if (inserted.length) {
      await client.query(
        `INSERT INTO "JourneyRun" (id, "workspaceId", "workflowId", revision, "campaignId", "leadId", "temporalWorkflowId", trigger, "startedBy", "updatedAt")
         SELECT l.id, l."workspaceId", $2::uuid, $3, l."campaignId", l.id, l."workflowId",
                jsonb_build_object('phone', l.phone, 'name', l.name, 'fields', l.fields), 'lead_push', now()
           FROM "Lead" l WHERE l.id = ANY($1::uuid[])`,
        [inserted.map((row) => row.id), locked.journeyId, locked.publishedRevision],
      );
    }
    await client.query('COMMIT');
    return {
      rows: [...existing, ...inserted],
      refused,
      undeclaredVariables: (lead) => undeclaredVariables(definition, lead.fields),
    };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
