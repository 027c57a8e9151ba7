import { createHash } from 'node:crypto';

/** base32hex's alphabet (RFC 4648 section 7), lower case: the characters Google Calendar takes in an event id. */
const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

function base32hex(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32HEX[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32HEX[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * The booking key of a slot booked on a call (docs/features/calendar.md#exactly-one-appointment): sha-256 of the
 * workspace, the call and the slot's start, in base32hex (52 characters). The same call booking the same slot again (a
 * retried tool call, a resumed workflow, a crashed worker's activity) has the same key, which is Google's event id and
 * Cal.com's `metadata.bookingKey`: looked up at the provider before anything is booked.
 */
export function bookingKeyOf(workspaceId: string, callId: string, slotStart: Date): string {
  return base32hex(createHash('sha256').update(`${workspaceId}\n${callId}\n${slotStart.toISOString()}`).digest());
}
