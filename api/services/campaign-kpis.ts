import type { CampaignStatusReason } from '../../lib/campaigns/carrier-breaker';
import type { Principal } from '../auth/principal';
import { findOwnedCampaign } from './campaigns';
import type { AppServices } from './index';

/**
 * The campaign's KPIs, each defined in the OpenAPI description (api/routes/campaign-data.ts) and
 * computed here in one statement. A "contact" is one phone of the campaign: a lead (pushed, or
 * enrolled from the calling list) or a calling-list entry not enrolled yet.
 */
export async function campaignKpis(services: AppServices, principal: Principal, campaignId: string) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const {
    rows: [row],
  } = await services.sql.query<Record<string, number | null>>({
    name: 'campaign_kpis',
    text: `
      WITH lead AS (
        SELECT l.id, l.phone, l.status::text AS status, l."contactId",
               count(c.id) FILTER (WHERE c.id IS NOT NULL) AS calls,
               bool_or(c.outcome IN ('answered', 'voicemail')) AS reached,
               bool_or(c.outcome = 'answered') AS picked_up
          FROM "Lead" l LEFT JOIN "Call" c ON c."leadId" = l.id
         WHERE l."campaignId" = $1::uuid
         GROUP BY l.id
      ), waiting_contacts AS (
        SELECT count(*)::int AS n FROM "CampaignContact" WHERE "campaignId" = $1::uuid AND "enrolledAt" IS NULL
      ), calls AS (
        SELECT count(*)::int AS placed, avg("durationMs") FILTER (WHERE outcome = 'answered') AS avg_duration
          FROM "Call" WHERE "campaignId" = $1::uuid
      )
      SELECT
        (SELECT count(DISTINCT phone) FROM lead)::int + (SELECT n FROM waiting_contacts) AS contacts,
        (SELECT count(DISTINCT phone) FROM lead WHERE calls > 0)::int AS "dialedContacts",
        (SELECT count(DISTINCT phone) FROM lead WHERE reached)::int AS "reachedContacts",
        (SELECT count(DISTINCT phone) FROM lead WHERE picked_up)::int AS "pickedUpContacts",
        (SELECT placed FROM calls) AS placed,
        (SELECT avg_duration FROM calls)::float8 AS "avgDurationMs",
        (SELECT count(*) FROM lead WHERE status IN ('queued', 'dialing'))::int + (SELECT n FROM waiting_contacts) AS pending,
        (SELECT count(*) FROM lead WHERE status = 'completed')::int AS completed,
        (SELECT count(*) FROM lead WHERE status IN ('failed', 'cancelled'))::int AS failed,
        (SELECT count(*) FROM lead WHERE status IN ('queued', 'dialing') AND calls > 0)::int AS reengaging,
        (SELECT count(*) FROM lead WHERE "contactId" IS NULL)::int AS triggered`,
    values: [campaign.id],
  });
  const kpis = row as Record<
    | 'contacts'
    | 'dialedContacts'
    | 'reachedContacts'
    | 'pickedUpContacts'
    | 'placed'
    | 'avgDurationMs'
    | 'pending'
    | 'completed'
    | 'failed'
    | 'reengaging'
    | 'triggered',
    number
  >;
  const rate = (part: number) => (kpis.dialedContacts ? Number((part / kpis.dialedContacts).toFixed(4)) : 0);
  return {
    contacts: kpis.contacts,
    dialedContacts: kpis.dialedContacts,
    reachedContacts: kpis.reachedContacts,
    pickedUpContacts: kpis.pickedUpContacts,
    placed: kpis.placed,
    connectRate: rate(kpis.reachedContacts),
    pickupRate: rate(kpis.pickedUpContacts),
    avgDurationMs: Math.round(kpis.avgDurationMs ?? 0),
    pending: kpis.pending,
    completed: kpis.completed,
    failed: kpis.failed,
    reengaging: kpis.reengaging,
    triggered: kpis.triggered,
    pausedReason:
      campaign.status === 'PAUSED' ? ((campaign.statusReason as CampaignStatusReason | null) ?? null) : null,
  };
}
