import type { TwilioTwinCall } from './call-store';

/** Twilio's Direction of a call, from what the twin keeps of its request (calls.ts CallRequest.direction). */
export const directionOf = (request: unknown): 'inbound' | 'outbound-api' =>
  (request as { direction?: string } | null)?.direction === 'inbound' ? 'inbound' : 'outbound-api';

/** Twilio's dates: RFC 2822 in UTC, `Tue, 31 Aug 2010 20:36:28 +0000`. */
export const rfc2822 = (date: Date) => date.toUTCString().replace('GMT', '+0000');

export const callUri = (accountSid: string, sid: string) => `/2010-04-01/Accounts/${accountSid}/Calls/${sid}.json`;

/** A North American number as Twilio formats it, `(415) 867-5309`; any other as given. */
export function formatted(number: string): string {
  const match = /^\+1(\d{3})(\d{3})(\d{4})$/.exec(number);
  return match ? `(${match[1]}) ${match[2]}-${match[3]}` : number;
}

const SUBRESOURCES = [
  ['notifications', 'Notifications'],
  ['recordings', 'Recordings'],
  ['payments', 'Payments'],
  ['events', 'Events'],
  ['siprec', 'Siprec'],
  ['streams', 'Streams'],
  ['transcriptions', 'Transcriptions'],
  ['user_defined_message_subscriptions', 'UserDefinedMessageSubscriptions'],
  ['user_defined_messages', 'UserDefinedMessages'],
] as const;

/** The Call resource (`api.v2010.account.call`) as Twilio answers it, for the call's row. */
export function callResource(row: TwilioTwinCall) {
  const base = `/2010-04-01/Accounts/${row.accountSid}/Calls/${row.sid}`;
  return {
    account_sid: row.accountSid,
    answered_by: row.answeredBy,
    api_version: '2010-04-01',
    caller_name: null,
    date_created: rfc2822(row.createdAt),
    date_updated: rfc2822(row.updatedAt),
    direction: directionOf(row.request),
    // Empty for calls still on, busy, failed or unanswered, as Twilio's; the seconds from the answer once it ended.
    duration: row.durationSec === null ? null : String(row.durationSec),
    end_time: row.endTime ? rfc2822(row.endTime) : null,
    forwarded_from: null,
    from: row.from,
    from_formatted: formatted(row.from),
    group_sid: null,
    parent_call_sid: null,
    phone_number_sid: null,
    // The twin charges nothing: no price, in Twilio's default unit.
    price: null,
    price_unit: 'USD',
    queue_time: '0',
    sid: row.sid,
    start_time: row.startTime ? rfc2822(row.startTime) : null,
    status: row.status,
    subresource_uris: Object.fromEntries(SUBRESOURCES.map(([key, path]) => [key, `${base}/${path}.json`])),
    to: row.to,
    to_formatted: formatted(row.to),
    trunk_sid: null,
    uri: `${base}.json`,
  };
}
