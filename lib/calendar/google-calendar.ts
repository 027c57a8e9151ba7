import { auth, calendar, type calendar_v3 } from '@googleapis/calendar';
import { isWithinWindow, type CallingWindow } from '../dial-ladder/calling-window';
import type { Egress } from '../http/egress';
import { GOOGLE_TOKEN_URL, parseServiceAccountKey } from '../sheets/service-account-key';
import { CalendarError, type Attendee, type CalendarClient, type Slot } from './calendar-client';
import type { OpenedCalendar } from './calendar-connection';
import { CALENDAR_TIMEOUT_MS, egressFetch } from './egress-fetch';

/** Google Calendar API's root (the client adds calendar/v3/); a twin's is the deployment's GOOGLE_CALENDAR_TWIN_URL. */
export const GOOGLE_CALENDAR_ROOT_URL = 'https://www.googleapis.com/';
/** Free/busy and events: the calendar.events scope does not answer freeBusy.query; the calendar scope does both. */
export const CALENDAR_SCOPE = 'https://www.googleapis.com/auth/calendar';

/**
 * Google has no working hours in free/busy: the product offers Monday to Friday, 09:00 to 17:00 in the host's time zone
 * (the connection's hostTimeZone; docs/features/calendar.md#google-calendar).
 */
export const GOOGLE_WORKING_HOURS: CallingWindow = { start: '09:00', end: '17:00', days: [1, 2, 3, 4, 5] };

const MINUTE = 60_000;

/** Google's status and message of a failed call (a GaxiosError), never its request (which holds the token). */
function failureOf(error: unknown): CalendarError {
  const failure = error as { status?: number; response?: { status?: number; data?: { error?: { message?: string } } } };
  const status = failure.status ?? failure.response?.status ?? 0;
  const message = failure.response?.data?.error?.message ?? (status ? `HTTP ${status}` : 'no answer');
  return new CalendarError(status, `Google Calendar: ${message}`);
}

/**
 * Google Calendar through `@googleapis/calendar` with a service account (optionally acting for `subject`): free/busy
 * of the connection's calendar, and events inserted under a client-chosen id, the booking key (base32hex), looked up by
 * events.get first. Every request, the token's included, through the egress guard.
 */
export function googleCalendarClient(
  opened: OpenedCalendar,
  egress: Egress,
  twinUrl: string | undefined,
): CalendarClient {
  const key = parseServiceAccountKey(opened.secret);
  const fetchImplementation = egressFetch(egress);
  const jwt = new auth.JWT({
    email: key.client_email,
    key: key.private_key,
    keyId: key.private_key_id,
    scopes: [CALENDAR_SCOPE],
    ...(opened.subject && { subject: opened.subject }),
  });
  const twin = opened.provider === 'google-calendar-twin';
  // A twin key's token_uri is the twin's token endpoint; a real connection's is pinned to Google's (connectCalendar).
  if (twin && key.token_uri !== GOOGLE_TOKEN_URL) {
    const tokenUri = new URL(key.token_uri);
    jwt.transporter.interceptors.request.add({
      resolved: (request) => {
        if (String(request.url) === GOOGLE_TOKEN_URL) request.url = tokenUri;
        return Promise.resolve(request);
      },
    });
  }
  jwt.transporter.defaults = {
    ...jwt.transporter.defaults,
    timeout: CALENDAR_TIMEOUT_MS,
    retry: false,
    fetchImplementation,
  };
  const rootUrl = twin ? `${twinUrl!.replace(/\/$/, '')}/` : GOOGLE_CALENDAR_ROOT_URL;
  const api: calendar_v3.Calendar = calendar({ version: 'v3', auth: jwt, rootUrl });
  const options = { retry: false, timeout: CALENDAR_TIMEOUT_MS, fetchImplementation };
  const calendarId = opened.calendarId!;
  const duration = opened.durationMinutes * MINUTE;

  return {
    name: opened.provider,
    async freeSlots(from, to) {
      let busy: Slot[];
      try {
        const answer = await api.freebusy.query(
          { requestBody: { timeMin: from.toISOString(), timeMax: to.toISOString(), items: [{ id: calendarId }] } },
          options,
        );
        const entry = answer.data.calendars?.[calendarId];
        if (entry?.errors?.length)
          throw new CalendarError(404, `Google Calendar: ${entry.errors[0]!.reason ?? 'notFound'}`);
        busy = (entry?.busy ?? []).map((period) => ({ start: new Date(period.start!), end: new Date(period.end!) }));
      } catch (error) {
        throw error instanceof CalendarError ? error : failureOf(error);
      }
      const slots: Slot[] = [];
      // Starts on the duration's grid, inside the working hours from start to end, clear of every busy period.
      for (let at = Math.ceil(from.getTime() / duration) * duration; at + duration <= to.getTime(); at += duration) {
        const slot = { start: new Date(at), end: new Date(at + duration) };
        if (!isWithinWindow(slot.start, GOOGLE_WORKING_HOURS, opened.hostTimeZone)) continue;
        if (!isWithinWindow(new Date(at + duration - MINUTE), GOOGLE_WORKING_HOURS, opened.hostTimeZone)) continue;
        if (busy.some((period) => period.start < slot.end && slot.start < period.end)) continue;
        slots.push(slot);
      }
      return slots;
    },
    reserve: () => Promise.resolve(null),
    release: () => Promise.resolve(),
    async findBooking(eventId) {
      try {
        const { data } = await api.events.get({ calendarId, eventId }, options);
        return data.status === 'cancelled' ? null : (data.id ?? eventId);
      } catch (error) {
        const failure = failureOf(error);
        if (failure.status === 404 || failure.status === 410) return null;
        throw failure;
      }
    },
    async book(eventId, slot, attendee: Attendee, title) {
      try {
        const { data } = await api.events.insert(
          {
            calendarId,
            requestBody: {
              id: eventId,
              summary: title,
              description: `Booked during a call${attendee.phone ? ` with ${attendee.phone}` : ''} (${attendee.timeZone}).`,
              start: { dateTime: slot.start.toISOString(), timeZone: 'UTC' },
              end: { dateTime: slot.end.toISOString(), timeZone: 'UTC' },
            },
          },
          options,
        );
        return data.id ?? eventId;
      } catch (error) {
        const failure = failureOf(error);
        // The id is taken: this key's event exists (Google detects duplicates "not guaranteed": looked up first too).
        if (failure.status === 409) return eventId;
        throw failure;
      }
    },
  };
}
