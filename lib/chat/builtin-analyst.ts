import { ANALYST_TOPICS, outOfScopeReasons, questionTopics, type AnalystTopic } from './analyst-topics';
import { isPickedUp } from '../calls/call-outcomes';
import type {
  CallSlot,
  CampaignFactSource,
  CampaignKpiFacts,
  IntelligenceFacts,
  OrderFacts,
  OutcomeFacts,
  TimingFacts,
} from './campaign-facts';
import type { ChatProvider, ChatQuestion } from './provider';

export const BUILTIN_ANALYST = 'builtin-analyst';

/** A fraction 0..1 as a percentage with two decimals: the KPI's 4-decimal rates exactly (0.6667 is 66.67%). */
export const percent = (fraction: number) => `${(fraction * 100).toFixed(2)}%`;
const share = (part: number, whole: number) => (whole ? percent(part / whole) : percent(0));

const DAYS = ['', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const hourLabel = (hour: number) =>
  `${String(hour).padStart(2, '0')}:00-${String((hour + 1) % 24).padStart(2, '0')}:00`;

function performanceLines(kpis: CampaignKpiFacts): string[] {
  const lines = [`Contacts: ${kpis.contacts}; dialed: ${kpis.dialedContacts}; calls placed: ${kpis.placed}.`];
  if (!kpis.dialedContacts) lines.push('No contact has been dialed yet, so there is no connect or pickup rate.');
  else
    lines.push(
      `Connect rate: ${percent(kpis.connectRate)} (${kpis.reachedContacts} of ${kpis.dialedContacts} dialed contacts reached: answered or voicemail).`,
      `Pickup rate: ${percent(kpis.pickupRate)} (${kpis.pickedUpContacts} of ${kpis.dialedContacts} dialed contacts answered).`,
      `Average duration of answered calls: ${kpis.avgDurationMs} ms.`,
    );
  lines.push(
    `Leads: ${kpis.completed} completed, ${kpis.failed} failed or cancelled, ${kpis.pending} pending, ${kpis.reengaging} being re-engaged; ${kpis.triggered} came through the API push.`,
  );
  return lines;
}

const slotLine = (label: string, slot: CallSlot) =>
  `- ${label}: ${slot.placed} calls, ${slot.reached} reached (${share(slot.reached, slot.placed)}), ${slot.pickedUp} picked up (${share(slot.pickedUp, slot.placed)}).`;

/** The hours with the highest pickup rate (then the most pickups, then the earliest), up to three. */
export function bestHours(byHour: readonly CallSlot[]): CallSlot[] {
  return [...byHour]
    .filter((slot) => slot.pickedUp > 0)
    .sort((a, b) => b.pickedUp / b.placed - a.pickedUp / a.placed || b.pickedUp - a.pickedUp || a.slot - b.slot)
    .slice(0, 3);
}

function timingLines(timing: TimingFacts): string[] {
  if (!timing.byHour.length)
    return ['No calls have been placed yet, so there is nothing to break down by hour or day.'];
  const best = bestHours(timing.byHour);
  return [
    'By hour of the day (UTC), per call placed at that hour:',
    ...timing.byHour.map((slot) => slotLine(hourLabel(slot.slot), slot)),
    'By day of the week (UTC):',
    ...timing.byDay.map((slot) => slotLine(DAYS[slot.slot]!, slot)),
    best.length
      ? `Best hours to call (highest pickup rate per call): ${best.map((slot) => `${hourLabel(slot.slot)} (${share(slot.pickedUp, slot.placed)} of ${slot.placed} calls)`).join(', ')}.`
      : 'No call has been picked up yet, so no hour stands out as the best to call.',
  ];
}

function outcomeLines(outcomes: OutcomeFacts, kpis: CampaignKpiFacts): string[] {
  const total = outcomes.byOutcome.reduce((sum, row) => sum + row.calls, 0);
  if (!total) return ['No calls have been placed yet, so there are no outcomes.'];
  const failures = outcomes.byOutcome.filter((row) => row.outcome !== null && !isPickedUp(row.outcome));
  const failed = failures.reduce((sum, row) => sum + row.calls, 0);
  return [
    `Outcomes of the ${total} calls placed:`,
    ...outcomes.byOutcome.map(
      (row) => `- ${row.outcome ?? 'still in progress'}: ${row.calls} (${share(row.calls, total)}).`,
    ),
    failed
      ? `Calls not answered by a person, by reason: ${failures.map((row) => `${row.outcome} ${row.calls}`).join(', ')}.`
      : 'Every call with an outcome was answered.',
    `Leads finished: ${kpis.completed} completed, ${kpis.failed} failed or cancelled.`,
  ];
}

function intelligenceLines(intelligence: IntelligenceFacts): string[] {
  if (!intelligence.callsWithIntelligence)
    return ['No call of this campaign has extracted intelligence yet (it is computed after an answered call ends).'];
  if (!intelligence.fields.length)
    return [`${intelligence.callsWithIntelligence} calls have intelligence, but the agent has no extraction fields.`];
  return [
    `Extracted intelligence of ${intelligence.callsWithIntelligence} calls, per field:`,
    ...intelligence.fields.map(
      ({ field, values, notFound }) =>
        `- ${field}: ${[...values.map(({ value, calls }) => `${value} ${calls}`), ...(notFound ? [`not found ${notFound}`] : [])].join(', ')}.`,
    ),
  ];
}

function orderLines(orders: OrderFacts): string[] {
  if (!orders.available) return [`I can't tell you about orders: ${orders.reason}`];
  if (!orders.orders) return ['No commerce order is attributed to this campaign.'];
  return [
    `Orders attributed to this campaign: ${orders.orders} (${orders.cancelled} of them cancelled).`,
    ...(orders.revenue.length
      ? orders.revenue.map(
          ({ currency, orders: count, total }) => `Revenue: ${total} ${currency} from ${count} orders not cancelled.`,
        )
      : ['No attributed order that is not cancelled has a price, so there is no revenue.']),
    ...(orders.unpriced
      ? [`${orders.unpriced} orders are left out of the revenue: the store sent no decimal price for them.`]
      : []),
  ];
}

const TOPIC_TITLES: Record<AnalystTopic, string> = {
  performance: 'connect and pickup rates',
  timing: 'how calls do by hour and day, and the best hours to call',
  outcomes: 'call outcomes and why calls failed',
  intelligence: 'what the extracted intelligence says',
  orders: 'attributed orders and revenue',
};

/** Call-only topics: a WHATSAPP campaign sends messages, which have no hours of pickup or call outcomes. */
const CALL_TOPICS: readonly AnalystTopic[] = ['timing', 'outcomes', 'intelligence'];

async function topicLines(topic: AnalystTopic, facts: CampaignFactSource): Promise<string[]> {
  if (facts.campaign.channel === 'whatsapp' && CALL_TOPICS.includes(topic))
    return [`This is a WhatsApp campaign: it places no calls, so I have no ${TOPIC_TITLES[topic]}.`];
  switch (topic) {
    case 'performance':
      return performanceLines(await facts.kpis());
    case 'timing':
      return timingLines(await facts.timing());
    case 'outcomes':
      return outcomeLines(await facts.outcomes(), await facts.kpis());
    case 'intelligence':
      return intelligenceLines(await facts.intelligence());
    case 'orders':
      return orderLines(await facts.orders());
  }
}

const CANNOT_ANSWER =
  "I can't answer that from this campaign's data. I can tell you about: " +
  (Object.keys(ANALYST_TOPICS) as AnalystTopic[]).map((topic) => TOPIC_TITLES[topic]).join('; ') +
  '.';

/**
 * The embedded analyst: no language model. It answers from the campaign's own figures (CampaignFactSource,
 * the service's SQL; the KPIs are GET /campaigns/{id}/kpis's own), one line at a time as each topic's figures
 * arrive, says plainly what it cannot answer, and never states a figure it did not read.
 */
export function createBuiltinAnalyst(): ChatProvider {
  return {
    name: BUILTIN_ANALYST,
    async *answer({ question, history, facts, signal }: ChatQuestion) {
      const reasons = outOfScopeReasons(question);
      const topics = questionTopics(question, history);
      for (const reason of reasons) yield `${reason}\n`;
      if (!topics.length) {
        if (!reasons.length) yield `${CANNOT_ANSWER}\n`;
        return;
      }
      yield `Campaign "${facts.campaign.name}":\n`;
      for (const topic of topics) {
        if (signal.aborted) return;
        for (const line of await topicLines(topic, facts)) yield `${line}\n`;
      }
    },
  };
}
