/**
 * The statuses of an outbound WhatsApp message (docs/features/whatsapp/webhooks.md, "Statuses"):
 * recorded `accepted` before the provider has it, then as its webhooks report: sent -> delivered -> read, or failed
 * (with the provider's error code) from accepted, sent or delivered, never after read. A message only moves forward: a
 * status that ranks at or below its present one changes nothing (a late "sent" after "delivered", a duplicate,
 * "delivered" after "failed"). Inbound messages are `received` and never move.
 */
export const OUTBOUND_MESSAGE_STATUSES = ['accepted', 'sent', 'delivered', 'read', 'failed'] as const;
export type OutboundMessageStatus = (typeof OUTBOUND_MESSAGE_STATUSES)[number];

/** The statuses a provider's webhook reports. */
export const REPORTED_MESSAGE_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;
export type ReportedMessageStatus = (typeof REPORTED_MESSAGE_STATUSES)[number];

const RANK: Record<OutboundMessageStatus, number> = { accepted: 1, sent: 2, delivered: 3, read: 4, failed: 4 };

export const messageStatusRank = (status: OutboundMessageStatus): number => RANK[status];

export const isReportedMessageStatus = (status: string): status is ReportedMessageStatus =>
  (REPORTED_MESSAGE_STATUSES as readonly string[]).includes(status);

/** How a message's credit hold ends: posted once delivered (or read), voided when failed; otherwise still held. */
export function billingOutcome(status: string): 'post' | 'void' | null {
  if (status === 'delivered' || status === 'read') return 'post';
  if (status === 'failed') return 'void';
  return null;
}

/** The rank of `column` in SQL, from the one table of ranks (0: not an outbound status). */
export const messageStatusRankSql = (column: string): string =>
  `CASE ${column}::text ${OUTBOUND_MESSAGE_STATUSES.map((status) => `WHEN '${status}' THEN ${RANK[status]}`).join(' ')} ELSE 0 END`;
