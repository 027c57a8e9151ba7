import type { PoolClient } from 'pg';
import type { Campaign } from '../../generated/prisma/client';
import { ErrorCode } from '../../lib/error-codes';
import { missingStartFields, undeclaredVariables, type JourneyDefinition } from '../../lib/journeys';
import { Refusal } from '../../lib/refusal';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import {
  insertPushedLeadRuns,
  liveRunCount,
  lockJourneyCampaign,
  revisionDefinitionRow,
  storedLeadsOfKeys,
  upsertLeads,
} from './lead-store';
import type { Admission, LeadToAdmit, StoredLeads } from './admission';

/** Saved revisions never change, so a process may keep them. */
const revisionCache = new Map<string, JourneyDefinition>();
const REVISION_CACHE_SIZE = 500;

async function revisionDefinition(client: PoolClient, journeyId: string, revision: number): Promise<JourneyDefinition> {
  const cacheKey = `${journeyId}:${revision}`;
  const cached = revisionCache.get(cacheKey);
  if (cached) return cached;
  const definition = (await revisionDefinitionRow(client, journeyId, revision))!;
  if (revisionCache.size >= REVISION_CACHE_SIZE) revisionCache.delete(revisionCache.keys().next().value!);
  revisionCache.set(cacheKey, definition);
  return definition;
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
    const locked = await lockJourneyCampaign(client, campaign.id);
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

    const existing = await storedLeadsOfKeys(
      client,
      campaign.id,
      valid.map((lead) => lead.idempotencyKey),
    );
    const existingKeys = new Set(existing.map((row) => row.idempotencyKey));
    const fresh = valid.filter((lead) => !existingKeys.has(lead.idempotencyKey));
    const room = Math.max(locked.maxLiveRuns - (await liveRunCount(client, campaign.id)), 0);
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
      await insertPushedLeadRuns(
        client,
        inserted.map((row) => row.id),
        locked.journeyId,
        locked.publishedRevision,
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
