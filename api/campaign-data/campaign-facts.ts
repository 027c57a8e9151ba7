import type { Campaign } from '../../generated/prisma/client';
import { PICKED_UP_OUTCOMES, REACHING_OUTCOMES, sqlOutcomeList } from '../../lib/calls/call-outcomes';
import type {
  CallSlot,
  CampaignFactSource,
  IntelligenceFacts,
  OrderFacts,
  OutcomeFacts,
  TimingFacts,
} from '../../lib/chat/campaign-facts';
import type { Principal } from '../door/principal';
import { kpisOfCampaign } from './campaign-kpis';
import type { AppServices } from '../app-services';
import { leadWorkflowKind } from '../../lib/campaigns/lead-workflow-kind';

/** Reached and picked up as the KPIs define them (api/campaign-data/campaign-kpis.ts), per call. */
const SLOT_COUNTS = `count(*)::int AS placed,
       (count(*) FILTER (WHERE outcome IN ${sqlOutcomeList(REACHING_OUTCOMES)}))::int AS reached,
       (count(*) FILTER (WHERE outcome IN ${sqlOutcomeList(PICKED_UP_OUTCOMES)}))::int AS "pickedUp"`;

async function timingOf({ sql }: AppServices, campaignId: string): Promise<TimingFacts> {
  const slots = (unit: 'hour' | 'isodow', name: string) =>
    sql
      .query<CallSlot>({
        name,
        text: `SELECT extract(${unit} FROM "startedAt" AT TIME ZONE 'UTC')::int AS slot, ${SLOT_COUNTS}
                 FROM "Call" WHERE "campaignId" = $1::uuid GROUP BY 1 ORDER BY 1`,
        values: [campaignId],
      })
      .then(({ rows }) => rows);
  const [byHour, byDay] = await Promise.all([
    slots('hour', 'chat_calls_by_hour'),
    slots('isodow', 'chat_calls_by_day'),
  ]);
  return { byHour, byDay };
}

async function outcomesOf({ sql }: AppServices, campaignId: string): Promise<OutcomeFacts> {
  const { rows } = await sql.query<{ outcome: string | null; calls: number }>({
    name: 'chat_call_outcomes',
    text: `SELECT outcome, count(*)::int AS calls FROM "Call" WHERE "campaignId" = $1::uuid
            GROUP BY outcome ORDER BY count(*) DESC, outcome NULLS LAST`,
    values: [campaignId],
  });
  return { byOutcome: rows };
}

async function intelligenceOf({ sql }: AppServices, campaignId: string): Promise<IntelligenceFacts> {
  const [counted, values] = await Promise.all([
    sql.query<{ n: number }>({
      name: 'chat_calls_with_intelligence',
      text: `SELECT count(*)::int AS n FROM "Call" WHERE "campaignId" = $1::uuid AND intelligence ? 'extraction'`,
      values: [campaignId],
    }),
    sql.query<{ field: string; value: string | null; calls: number }>({
      name: 'chat_extraction_values',
      // One row per field and value (JSON text; null: not found), most frequent first.
      text: `SELECT field, value, count(*)::int AS calls
               FROM (SELECT f.key AS field, nullif(f.value -> 'value', 'null'::jsonb)::text AS value
                       FROM "Call" c, jsonb_each(c.intelligence -> 'extraction') f
                      WHERE c."campaignId" = $1::uuid AND jsonb_typeof(c.intelligence -> 'extraction') = 'object') extracted
              GROUP BY field, value ORDER BY field, value IS NULL, calls DESC, value`,
      values: [campaignId],
    }),
  ]);
  const fields = new Map<string, IntelligenceFacts['fields'][number]>();
  for (const { field, value, calls } of values.rows) {
    const entry = fields.get(field) ?? { field, values: [], notFound: 0 };
    if (value === null) entry.notFound += calls;
    else entry.values.push({ value, calls });
    fields.set(field, entry);
  }
  return { callsWithIntelligence: counted.rows[0]!.n, fields: [...fields.values()] };
}

/** A price the store sent as a plain decimal number ("49.90"): what revenue sums. */
const DECIMAL = '^[+-]?[0-9]+(\\.[0-9]+)?$';

/** Attributed orders are sales data: they need the scope of sales (sales.view) and the workspace's commerce analytics (d2c). */
async function ordersOf({ sql }: AppServices, principal: Principal, campaignId: string): Promise<OrderFacts> {
  if (!principal.features.includes('d2c'))
    return { available: false, reason: 'the workspace has no commerce analytics (the d2c feature).' };
  if (principal.scoped && !principal.permissions.has('sales.view'))
    return {
      available: false,
      reason: 'attributed orders and revenue need the sales.view scope, which this key lacks.',
    };
  const { rows } = await sql.query<{
    currency: string | null;
    orders: number;
    cancelled: number;
    priced: number;
    total: string | null;
  }>({
    name: 'chat_attributed_orders',
    // Per currency, plus a grand-total row (currency null). totalPrice is the store's text: only a decimal number is summed.
    text: `SELECT currency, count(*)::int AS orders, (count(*) FILTER (WHERE "cancelledAt" IS NOT NULL))::int AS cancelled,
                  (count(*) FILTER (WHERE "cancelledAt" IS NULL AND "totalPrice" ~ '${DECIMAL}'))::int AS priced,
                  (sum(CASE WHEN "totalPrice" ~ '${DECIMAL}' THEN "totalPrice"::numeric END)
                     FILTER (WHERE "cancelledAt" IS NULL))::text AS total
             FROM "CommerceOrder"
            WHERE "workspaceId" = $1::uuid AND "attributedCampaignId" = $2::uuid
            GROUP BY GROUPING SETS ((currency), ()) ORDER BY currency NULLS FIRST`,
    values: [principal.workspaceId, campaignId],
  });
  const [all, ...byCurrency] = rows;
  const revenue = byCurrency
    .filter((row) => row.priced > 0)
    .map((row) => ({ currency: row.currency!, orders: row.priced, total: row.total! }));
  const orders = all?.orders ?? 0;
  const cancelled = all?.cancelled ?? 0;
  return {
    available: true,
    orders,
    cancelled,
    unpriced: orders - cancelled - revenue.reduce((sum, row) => sum + row.orders, 0),
    revenue,
  };
}

/** Runs a fact's query once, when first asked for. */
function once<T>(compute: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | undefined;
  return () => (result ??= compute());
}

/**
 * The facts of one campaign of the caller's workspace, for the chat providers (lib/chat/campaign-facts.ts).
 * The KPIs are GET /campaigns/{id}/kpis's own computation; the breakdowns count reached and picked up as it does.
 */
export function campaignFactSource(
  services: AppServices,
  principal: Principal,
  campaign: Campaign,
): CampaignFactSource {
  return {
    campaign: {
      id: campaign.id,
      name: campaign.name,
      channel: leadWorkflowKind(campaign) === 'WHATSAPP' ? 'whatsapp' : 'calls',
    },
    kpis: once(() => kpisOfCampaign(services, campaign)),
    timing: once(() => timingOf(services, campaign.id)),
    outcomes: once(() => outcomesOf(services, campaign.id)),
    intelligence: once(() => intelligenceOf(services, campaign.id)),
    orders: once(() => ordersOf(services, principal, campaign.id)),
  };
}
