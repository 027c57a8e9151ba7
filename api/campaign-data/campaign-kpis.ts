import type { Campaign } from '../../generated/prisma/client';
import { PICKED_UP_OUTCOMES, REACHING_OUTCOMES, sqlOutcomeList } from '../../lib/calls/call-outcomes';
import type { CampaignStatusReason } from '../../lib/dial-ladder/carrier-breaker';
import type { Principal } from '../door/principal';
import { findOwnedCampaign } from '../campaigns/campaigns';
import type { AppServices } from '../app-services';
import { leadWorkflowKind } from '../../lib/campaigns/lead-workflow-kind';
import { SIMULATED_PROVIDER } from '../../lib/simulators';

/** Per lead: whether it was attempted, reached, picked up, and is being re-engaged; and the campaign's attempts. */
interface KpiSources {
  name: string;
  lead: string;
  attempts: string;
}

const SIMULATED = SIMULATED_PROVIDER;

/** Reached: picked up by a person or a machine; picked up: a person talked with the agent (lib/calls/call-outcomes.ts). */
const REACHED = sqlOutcomeList(REACHING_OUTCOMES);
const PICKED_UP = sqlOutcomeList(PICKED_UP_OUTCOMES);

/** A voice campaign's (and a JOURNEY campaign's) KPIs come from its calls. */
const CALL_SOURCES: KpiSources = {
  name: 'campaign_kpis',
  lead: `
        SELECT l.id, l.phone, l.status::text AS status, l."contactId",
               count(c.id) FILTER (WHERE c.id IS NOT NULL) > 0 AS attempted,
               bool_or(c.outcome IN ${REACHED}) AS reached,
               bool_or(c.outcome IN ${PICKED_UP}) AS picked_up,
               l.status IN ('queued', 'dialing') AND count(c.id) > 0 AS reengaging
          FROM "Lead" l LEFT JOIN "Call" c ON c."leadId" = l.id
         WHERE l."campaignId" = $1::uuid
         GROUP BY l.id`,
  attempts: `
        SELECT count(*)::int AS placed, avg("durationMs") FILTER (WHERE outcome IN ${PICKED_UP}) AS avg_duration,
               count(*) FILTER (WHERE provider = '${SIMULATED}')::int AS simulated
          FROM "Call" WHERE "campaignId" = $1::uuid`,
};

/** A message the provider took: it has the provider's id, or a status only the provider reports. */
const HANDED_OVER = `(m."providerMessageId" IS NOT NULL OR m.status IN ('sent', 'delivered', 'read'))`;

/**
 * A WHATSAPP campaign's KPIs come from its leads' template messages
 * (docs/features/whatsapp/campaigns.md#whatsapp-campaigns-results-result-webhooks-and-kpis): attempted is messaged (the provider
 * took the message), reached is delivered (or read), picked up is read; nothing is re-engaged (a lead gets one message,
 * never a second) and messages have no duration.
 */
const MESSAGE_SOURCES: KpiSources = {
  name: 'campaign_kpis_whatsapp',
  lead: `
        SELECT l.id, l.phone, l.status::text AS status, l."contactId",
               coalesce(bool_or(${HANDED_OVER}), false) AS attempted,
               bool_or(m.status IN ('delivered', 'read')) AS reached,
               bool_or(m.status = 'read') AS picked_up,
               false AS reengaging
          FROM "Lead" l LEFT JOIN "WhatsAppMessage" m ON m."leadId" = l.id AND m.direction = 'outbound'
         WHERE l."campaignId" = $1::uuid
         GROUP BY l.id`,
  attempts: `
        SELECT count(*)::int AS placed, NULL::float8 AS avg_duration,
               count(*) FILTER (WHERE s.provider = '${SIMULATED}')::int AS simulated
          FROM "WhatsAppMessage" m JOIN "WhatsAppSender" s ON s.id = m."senderId"
         WHERE m."campaignId" = $1::uuid AND m."leadId" IS NOT NULL AND m.direction = 'outbound' AND ${HANDED_OVER}`,
};

/**
 * The campaign's KPIs, each defined in the OpenAPI description (api/campaign-data/routes.ts) and
 * computed here in one statement. A "contact" is one phone of the campaign: a lead (pushed, or
 * enrolled from the calling list) or a calling-list entry not enrolled yet. The campaign's leads' workflow
 * decides what an attempt is: a call, or a WHATSAPP campaign's message.
 */
export async function campaignKpis(services: AppServices, principal: Principal, campaignId: string) {
  return kpisOfCampaign(services, await findOwnedCampaign(services, principal, campaignId));
}

/** The KPIs of a campaign already known to be the caller's: what campaignKpis answers, and what the chat analyst reports. */
export async function kpisOfCampaign(services: AppServices, campaign: Campaign) {
  const sources = leadWorkflowKind(campaign) === 'WHATSAPP' ? MESSAGE_SOURCES : CALL_SOURCES;
  const {
    rows: [row],
  } = await services.sql.query<Record<string, number | null>>({
    name: sources.name,
    text: `
      WITH lead AS (${sources.lead}
      ), waiting_contacts AS (
        SELECT count(*)::int AS n FROM "CampaignContact" WHERE "campaignId" = $1::uuid AND "enrolledAt" IS NULL
      ), calls AS (${sources.attempts}
      )
      SELECT
        (SELECT count(DISTINCT phone) FROM lead)::int + (SELECT n FROM waiting_contacts) AS contacts,
        (SELECT count(DISTINCT phone) FROM lead WHERE attempted)::int AS "dialedContacts",
        (SELECT count(DISTINCT phone) FROM lead WHERE reached)::int AS "reachedContacts",
        (SELECT count(DISTINCT phone) FROM lead WHERE picked_up)::int AS "pickedUpContacts",
        (SELECT placed FROM calls) AS placed,
        (SELECT avg_duration FROM calls)::float8 AS "avgDurationMs",
        (SELECT count(*) FROM lead WHERE status IN ('queued', 'dialing'))::int + (SELECT n FROM waiting_contacts) AS pending,
        (SELECT count(*) FROM lead WHERE status = 'completed')::int AS completed,
        (SELECT count(*) FROM lead WHERE status IN ('failed', 'cancelled'))::int AS failed,
        (SELECT count(*) FROM lead WHERE reengaging)::int AS reengaging,
        (SELECT count(*) FROM lead WHERE "contactId" IS NULL)::int AS triggered,
        (SELECT simulated FROM calls) AS "simulatedPlaced"`,
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
    | 'triggered'
    | 'simulatedPlaced',
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
    simulatedPlaced: kpis.simulatedPlaced,
    pausedReason:
      campaign.status === 'PAUSED' ? ((campaign.statusReason as CampaignStatusReason | null) ?? null) : null,
  };
}
