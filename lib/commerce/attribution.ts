import type { Database } from '../database';
import { REACHING_OUTCOMES } from '../calls/call-outcomes';

/**
 * How an order is attributed to the service
 * (docs/features/commerce.md#orders-from-the-stores-webhooks-to-get-commerceorders, "Attribution"), decided once, when
 * the order is first stored: later webhooks of the same order never change it.
 *
 * 1. UTM. The order's utm_* parameters are read from its note attributes (`note_attributes`, names
 *    compared ignoring case), then from the query of its landing site (`landing_site`, a URL or the path
 *    the store records): each parameter from the note attributes when they carry it, else from the landing
 *    site. `utm_campaign` names a campaign by UTM_CAMPAIGN_SCHEME: the campaign's id alone, or after a
 *    readable label and a double hyphen (`summer-sale--<campaignId>`). The order is attributed (method
 *    `utm`) when that campaign is one of the order's workspace and is not deleted. `utm_source` is
 *    recorded as found (the campaigns' links use `outbound-ai`) and does not decide anything.
 * 2. Phone. Otherwise, when the customer's phone (E.164) is the phone of a lead of the workspace that a
 *    campaign reached within PHONE_ATTRIBUTION_WINDOW_DAYS before the order was placed (a call of the lead
 *    ended answered or on voicemail, or a WhatsApp message to the lead delivered or read), the order is
 *    attributed (method `phone`) to the campaign of the most recent such contact (deleted campaigns do
 *    not count).
 * 3. Otherwise it is not attributed. utmSource and utmCampaign are kept as found in every case.
 */
export const PHONE_ATTRIBUTION_WINDOW_DAYS = 30;

/** `<campaignId>` or `<label>--<campaignId>`: the campaign id is the UUID that ends utm_campaign. */
export const UTM_CAMPAIGN_SCHEME = /^(?:.*--)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** The call outcomes and WhatsApp message statuses that mean a campaign reached the lead. */
const REACHING_CALL_OUTCOMES = [...REACHING_OUTCOMES];
const REACHING_MESSAGE_STATUSES = ['delivered', 'read'] as const;

const DAY_MS = 24 * 60 * 60 * 1000;

export interface OrderAttribution {
  attributedToService: boolean;
  attributedCampaignId: string | null;
  /** utm or phone; null when not attributed. */
  attributionMethod: 'utm' | 'phone' | null;
  utmSource: string | null;
  utmCampaign: string | null;
}

export interface AttributionInput {
  workspaceId: string;
  placedAt: Date;
  /** E.164, or null when the store gave no valid phone. */
  customerPhone: string | null;
  landingSite: string | null;
  noteAttributes: ReadonlyArray<{ name: string; value: string | null }>;
}

/** The utm_source and utm_campaign of an order: note attributes first, then the landing site's query. */
export function orderUtm(input: Pick<AttributionInput, 'landingSite' | 'noteAttributes'>) {
  const fromNotes = (name: string) =>
    input.noteAttributes.find((attribute) => attribute.name.trim().toLowerCase() === name && attribute.value?.trim())
      ?.value;
  const query = landingSiteQuery(input.landingSite);
  const read = (name: string) => (fromNotes(name) ?? query?.get(name) ?? '').trim() || null;
  return { utmSource: read('utm_source'), utmCampaign: read('utm_campaign') };
}

/** The query of a landing site, absolute ("https://shop.example/?utm_source=x") or a path ("/?utm_source=x"). */
function landingSiteQuery(landingSite: string | null): URLSearchParams | null {
  if (!landingSite) return null;
  try {
    return new URL(landingSite, 'https://store.invalid/').searchParams;
  } catch {
    return null;
  }
}

export async function attributeOrder(db: Database, input: AttributionInput): Promise<OrderAttribution> {
  const utm = orderUtm(input);
  const byUtm = await campaignNamedByUtm(db, input.workspaceId, utm.utmCampaign);
  if (byUtm) return { attributedToService: true, attributedCampaignId: byUtm, attributionMethod: 'utm', ...utm };
  const byPhone = await campaignThatReachedPhone(db, input);
  if (byPhone) return { attributedToService: true, attributedCampaignId: byPhone, attributionMethod: 'phone', ...utm };
  return { attributedToService: false, attributedCampaignId: null, attributionMethod: null, ...utm };
}

async function campaignNamedByUtm(db: Database, workspaceId: string, utmCampaign: string | null) {
  const id = utmCampaign?.match(UTM_CAMPAIGN_SCHEME)?.[1]?.toLowerCase();
  if (!id) return null;
  const campaign = await db.campaign.findFirst({ where: { id, workspaceId, deletedAt: null }, select: { id: true } });
  return campaign?.id ?? null;
}

/** The campaign that last reached the customer's phone within the window before the order, if any. */
async function campaignThatReachedPhone(db: Database, input: AttributionInput): Promise<string | null> {
  if (!input.customerPhone) return null;
  const window = {
    gte: new Date(input.placedAt.getTime() - PHONE_ATTRIBUTION_WINDOW_DAYS * DAY_MS),
    lte: input.placedAt,
  };
  const leads = await db.lead.findMany({
    where: { workspaceId: input.workspaceId, phone: input.customerPhone, campaign: { deletedAt: null } },
    select: { id: true },
  });
  if (leads.length === 0) return null;
  const leadIds = leads.map((lead) => lead.id);
  const reached = { workspaceId: input.workspaceId, leadId: { in: leadIds }, campaignId: { not: null } };
  const messages = { ...reached, direction: 'outbound' as const, status: { in: [...REACHING_MESSAGE_STATUSES] } };
  const contacts = await Promise.all([
    db.call
      .findFirst({
        where: { ...reached, outcome: { in: REACHING_CALL_OUTCOMES }, endedAt: window },
        orderBy: [{ endedAt: 'desc' }, { id: 'desc' }],
        select: { campaignId: true, endedAt: true },
      })
      .then((call) => call && { campaignId: call.campaignId, at: call.endedAt! }),
    db.whatsAppMessage
      .findFirst({
        where: { ...messages, deliveredAt: window },
        orderBy: [{ deliveredAt: 'desc' }, { id: 'desc' }],
        select: { campaignId: true, deliveredAt: true },
      })
      .then((message) => message && { campaignId: message.campaignId, at: message.deliveredAt! }),
    // Reached when delivered; a read receipt can come without a delivery one.
    db.whatsAppMessage
      .findFirst({
        where: { ...messages, deliveredAt: null, readAt: window },
        orderBy: [{ readAt: 'desc' }, { id: 'desc' }],
        select: { campaignId: true, readAt: true },
      })
      .then((message) => message && { campaignId: message.campaignId, at: message.readAt! }),
  ]);
  const latest = contacts.filter((contact) => contact !== null).sort((a, b) => b.at.getTime() - a.at.getTime())[0];
  return latest?.campaignId ?? null;
}
