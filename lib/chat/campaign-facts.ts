/**
 * What the service knows about one campaign, as the chat providers read it (docs/features/chat.md). Every
 * figure comes from the campaign's data by SQL (api/campaign-data/campaign-facts.ts); the KPIs are the very
 * object GET /campaigns/{id}/kpis answers.
 */
export interface CampaignKpiFacts {
  contacts: number;
  dialedContacts: number;
  reachedContacts: number;
  pickedUpContacts: number;
  placed: number;
  connectRate: number;
  pickupRate: number;
  avgDurationMs: number;
  pending: number;
  completed: number;
  failed: number;
  reengaging: number;
  triggered: number;
}

/** Calls placed in one hour of the day or one day of the week (UTC), and how many were reached and picked up. */
export interface CallSlot {
  /** Hour 0 to 23, or ISO day of the week 1 (Monday) to 7 (Sunday). */
  slot: number;
  placed: number;
  /** Answered or taken by voicemail, as the KPI's reachedContacts counts a contact. */
  reached: number;
  /** Answered. */
  pickedUp: number;
}

export interface TimingFacts {
  byHour: CallSlot[];
  byDay: CallSlot[];
}

export interface OutcomeFacts {
  /** Calls by outcome; `null` is a call still in progress (no outcome yet). */
  byOutcome: Array<{ outcome: string | null; calls: number }>;
}

export interface IntelligenceFacts {
  /** Calls of the campaign whose intelligence (extraction) is computed. */
  callsWithIntelligence: number;
  /** Per extraction field: how many calls gave each value (JSON text of the value), and how many found none. */
  fields: Array<{ field: string; values: Array<{ value: string; calls: number }>; notFound: number }>;
}

export type OrderFacts =
  | { available: false; reason: string }
  | {
      available: true;
      orders: number;
      cancelled: number;
      /** Orders not cancelled whose price is not a decimal number: left out of the revenue. */
      unpriced: number;
      /** Revenue of the orders not cancelled, per currency: the sum of totalPrice, as decimal text. */
      revenue: Array<{ currency: string; orders: number; total: string }>;
    };

export interface CampaignFacts {
  campaign: { id: string; name: string; channel: 'calls' | 'whatsapp' };
  kpis: CampaignKpiFacts;
  timing: TimingFacts;
  outcomes: OutcomeFacts;
  intelligence: IntelligenceFacts;
  orders: OrderFacts;
}

/** The facts of one campaign, each computed when first asked for (the analyst asks only for its topics'). */
export interface CampaignFactSource {
  readonly campaign: CampaignFacts['campaign'];
  kpis(): Promise<CampaignKpiFacts>;
  timing(): Promise<TimingFacts>;
  outcomes(): Promise<OutcomeFacts>;
  intelligence(): Promise<IntelligenceFacts>;
  orders(): Promise<OrderFacts>;
}

/** Every fact at once (what a chat model is given). */
export async function allFacts(source: CampaignFactSource): Promise<CampaignFacts> {
  const [kpis, timing, outcomes, intelligence, orders] = await Promise.all([
    source.kpis(),
    source.timing(),
    source.outcomes(),
    source.intelligence(),
    source.orders(),
  ]);
  return { campaign: source.campaign, kpis, timing, outcomes, intelligence, orders };
}
