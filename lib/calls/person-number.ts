/**
 * The person's number on a call: the number dialed (toNumber; a lead's call recorded before toNumber existed: its
 * lead's), or for an inbound call the caller's (fromNumber: its toNumber is the workspace's own number). What an
 * opt-out lists (docs/features/leads.md#the-do-not-call-list) and a callback's time zone is read from.
 */
export function personNumberOf(call: {
  direction: string;
  fromNumber: string | null;
  toNumber: string | null;
  lead?: { phone: string } | null;
}): string | null {
  return (call.direction === 'inbound' ? call.fromNumber : null) ?? call.toNumber ?? call.lead?.phone ?? null;
}

/** personNumberOf in SQL, over a "Call" row aliased `call`, with `leadPhone` the SQL of its lead's phone. */
export const personNumberSql = (call: string, leadPhone: string) =>
  `coalesce(CASE WHEN ${call}.direction = 'inbound' THEN ${call}."fromNumber" END, ${call}."toNumber", ${leadPhone})`;
