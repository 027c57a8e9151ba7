import type { Egress } from '../http/egress';
import { CalendarError, type Attendee, type CalendarClient, type Slot } from './calendar-client';
import type { OpenedCalendar } from './calendar-connection';
import { CALENDAR_MAX_RESPONSE_BYTES, CALENDAR_TIMEOUT_MS } from './egress-fetch';

/** Cal.com's API v2 (there is no official Node SDK: its documented HTTP API); a twin's is CALCOM_TWIN_URL. */
export const CALCOM_BASE_URL = 'https://api.cal.com';
/** The versions the endpoints used are documented at (the `cal-api-version` header). */
const SLOTS_VERSION = '2024-09-04';
const BOOKINGS_VERSION = '2024-08-13';
/** A reservation's minutes (Cal.com's default is 5): the person decides within it, or the slot is offered again. */
export const CALCOM_RESERVATION_MINUTES = 5;

type Json = Record<string, unknown>;

/**
 * Cal.com v2 (docs/features/calendar.md#calcom): GET /v2/slots of the connection's event type, POST
 * /v2/slots/reservations while the person decides, and POST /v2/bookings with `metadata.bookingKey`, looked up first
 * by GET /v2/bookings around the slot. Every request through the egress guard, the API key as a bearer token.
 */
export function calcomClient(opened: OpenedCalendar, egress: Egress, twinUrl: string | undefined): CalendarClient {
  const base = opened.provider === 'calcom-twin' ? twinUrl!.replace(/\/$/, '') : CALCOM_BASE_URL;
  const eventTypeId = opened.eventTypeId!;

  async function call(method: string, path: string, version: string, body?: Json): Promise<Json> {
    const answer = await egress.request(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${opened.secret}`,
        'cal-api-version': version,
        ...(body && { 'content-type': 'application/json' }),
      },
      ...(body && { body: JSON.stringify(body) }),
      maxResponseBytes: CALENDAR_MAX_RESPONSE_BYTES,
      timeoutMs: CALENDAR_TIMEOUT_MS,
    });
    let json: Json = {};
    try {
      json = answer.text ? (JSON.parse(answer.text) as Json) : {};
    } catch {
      // Not JSON: the status says what happened.
    }
    if (answer.status >= 300) {
      const error = json.error as { message?: unknown } | undefined;
      const message = typeof error?.message === 'string' ? error.message.slice(0, 200) : `HTTP ${answer.status}`;
      throw new CalendarError(answer.status, `Cal.com: ${message}`);
    }
    return json;
  }

  return {
    name: opened.provider,
    async freeSlots(from, to) {
      const query = new URLSearchParams({
        eventTypeId: String(eventTypeId),
        start: from.toISOString(),
        end: to.toISOString(),
        timeZone: 'UTC',
        format: 'range',
      });
      const { data } = await call('GET', `/v2/slots?${query.toString()}`, SLOTS_VERSION);
      const days = (data ?? {}) as Record<string, Array<{ start: string; end?: string }>>;
      return Object.values(days)
        .flat()
        .map((slot) => {
          const start = new Date(slot.start);
          const end = slot.end ? new Date(slot.end) : new Date(start.getTime() + opened.durationMinutes * 60_000);
          return { start, end };
        })
        .filter((slot) => slot.start >= from && slot.end <= to)
        .sort((a, b) => a.start.getTime() - b.start.getTime());
    },
    async reserve(slot) {
      const { data } = await call('POST', '/v2/slots/reservations', SLOTS_VERSION, {
        eventTypeId,
        slotStart: slot.start.toISOString(),
        reservationDuration: CALCOM_RESERVATION_MINUTES,
      });
      const uid = (data as Json | undefined)?.reservationUid;
      return typeof uid === 'string' ? uid : null;
    },
    async release(reservationUid) {
      await call('DELETE', `/v2/slots/reservations/${encodeURIComponent(reservationUid)}`, SLOTS_VERSION).catch(
        () => undefined,
      );
    },
    async findBooking(key, slot: Slot) {
      const query = new URLSearchParams({
        eventTypeId: String(eventTypeId),
        afterStart: new Date(slot.start.getTime() - 60_000).toISOString(),
        beforeEnd: new Date(slot.end.getTime() + 60_000).toISOString(),
        take: '100',
      });
      const { data } = await call('GET', `/v2/bookings?${query.toString()}`, BOOKINGS_VERSION);
      const found = ((data ?? []) as Json[]).find(
        (booking) =>
          (booking.metadata as Json | undefined)?.bookingKey === key &&
          booking.status !== 'cancelled' &&
          booking.status !== 'rejected',
      );
      return typeof found?.uid === 'string' ? found.uid : null;
    },
    async book(key, slot, attendee: Attendee, title) {
      const { data } = await call('POST', '/v2/bookings', BOOKINGS_VERSION, {
        start: slot.start.toISOString(),
        eventTypeId,
        attendee: {
          name: attendee.name,
          timeZone: attendee.timeZone,
          ...(attendee.phone && { phoneNumber: attendee.phone }),
          language: attendee.language.split('-')[0],
        },
        metadata: { bookingKey: key, title: title.slice(0, 500) },
      });
      const uid = (data as Json | undefined)?.uid;
      if (typeof uid !== 'string') throw new CalendarError(0, 'Cal.com: the booking answered no uid');
      return uid;
    },
  };
}
