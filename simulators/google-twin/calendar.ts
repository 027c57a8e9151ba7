import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { instantOf, isoInZone, isTimeZone } from '../twin-common/time-zones';
import { calendarDiscovery, discoveryMethod, schemaProblems } from './discovery';
import { CALENDAR_ERRORS, CalendarApiError } from './errors';

/**
 * The Calendar API v3 of the Google twin (docs/features/calendar-twins.md#the-google-calendar-twin): freeBusy.query,
 * events.insert (a client-chosen id: base32hex, 5-1024 characters, a duplicate answered 409), events.get, events.list
 * (timeMin/timeMax, extended-property filters, pages) and events.delete, each method's scopes (from the vendored
 * discovery document) checked on the bearer token, and calendars reached only as shared with the caller. A service
 * account's own calendar is `primary` (its e-mail); with domain-wide delegation (`sub`), the user's. In memory.
 */
export interface CalendarCaller {
  /** Who acts: the service account's e-mail, or the delegated user's. */
  email: string;
  scopes: string[];
  delegated: boolean;
}

type Role = 'freeBusyReader' | 'reader' | 'writer' | 'owner';
const RANK: Record<Role, number> = { freeBusyReader: 1, reader: 2, writer: 3, owner: 4 };

interface StoredEvent {
  resource: Record<string, unknown> & { id: string; status: string };
  start: number;
  end: number;
  transparent: boolean;
  privateProperties: Record<string, string>;
  sharedProperties: Record<string, string>;
}

interface EventTime {
  date?: string;
  dateTime?: string;
  timeZone?: string;
}

/** An Event as inserted: held to the discovery document's schema before it is read. */
interface InsertedEvent {
  id?: unknown;
  start?: EventTime;
  end?: EventTime;
  attendees?: unknown;
  status?: string;
  transparency?: string;
  reminders?: unknown;
  eventType?: string;
  extendedProperties?: { private?: Record<string, string>; shared?: Record<string, string> };
  [member: string]: unknown;
}

interface TwinCalendar {
  id: string;
  timeZone: string;
  access: Map<string, Role>;
  events: Map<string, StoredEvent>;
}

/** Base32hex, as Google's event ids: a-v and 0-9. */
const EVENT_ID = /^[a-v0-9]{5,1024}$/;
const newEventId = () => [...randomBytes(26)].map((byte) => '0123456789abcdefghijklmnopqrstuv'[byte % 32]).join('');
/** RFC 3339 with a mandatory offset, as timeMin/timeMax and freeBusy take them. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const noMillis = (iso: string) => iso.replace(/\.000(?=Z|[+-])/, '');

export const calendarControlSchema = z.strictObject({
  calendarId: z.string().min(1),
  timeZone: z.string().default('UTC'),
  sharedWith: z
    .array(z.strictObject({ email: z.string().email(), role: z.enum(['freeBusyReader', 'reader', 'writer', 'owner']) }))
    .default([]),
});

export function createCalendarApi(caller: (req: Request) => CalendarCaller) {
  const calendars = new Map<string, TwinCalendar>();

  function calendarFor(who: CalendarCaller, calendarId: string, needed: Role): TwinCalendar {
    const id = calendarId === 'primary' ? who.email : calendarId;
    // A caller's own calendar exists from its first use, as a service account's or a user's primary calendar does.
    if (id === who.email && !calendars.has(id))
      calendars.set(id, { id, timeZone: 'UTC', access: new Map([[id, 'owner']]), events: new Map() });
    const calendar = calendars.get(id);
    const role = calendar?.access.get(who.email);
    if (!calendar || !role) throw CALENDAR_ERRORS.notFound();
    if (RANK[role] < RANK[needed]) throw CALENDAR_ERRORS.accessLevel(needed === 'owner' ? 'owner' : needed);
    return calendar;
  }

  function authorize(req: Request, methodId: string): CalendarCaller {
    const who = caller(req);
    const scopes = discoveryMethod(methodId).scopes ?? [];
    if (!who.scopes.some((scope) => scopes.includes(scope))) throw CALENDAR_ERRORS.insufficientScopes();
    return who;
  }

  function checkBody(methodId: string, body: unknown) {
    const method = discoveryMethod(methodId);
    const problems = method.request ? schemaProblems(body ?? {}, method.request.$ref, calendarDiscovery()) : [];
    if (problems.length)
      throw CALENDAR_ERRORS.invalid(`Invalid JSON payload received. ${problems.join('; ')}`, 'parseError');
  }

  function rfc3339(value: unknown, name: string): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !RFC3339.test(value) || Number.isNaN(Date.parse(value)))
      throw CALENDAR_ERRORS.invalid(`Invalid value for: ${name}`);
    return Date.parse(value);
  }

  /** An EventDateTime's instant: a dateTime with an offset, or wall time in its timeZone; a date is its day's start. */
  function when(value: unknown, name: 'start' | 'end', calendar: TwinCalendar): number {
    const given = (value ?? {}) as { date?: string; dateTime?: string; timeZone?: string };
    if (!given.date && !given.dateTime) throw CALENDAR_ERRORS.invalid(`Missing ${name} time.`, 'required');
    const zone = given.timeZone ?? calendar.timeZone;
    if (given.timeZone !== undefined && !isTimeZone(given.timeZone))
      throw CALENDAR_ERRORS.invalid(`Invalid time zone definition for ${name} time.`);
    const text = given.dateTime ?? `${given.date}T00:00:00`;
    if (RFC3339.test(text)) return Date.parse(text);
    const wall = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text);
    if (!wall) throw CALENDAR_ERRORS.invalid(`Invalid ${name} time.`);
    if (given.dateTime && given.timeZone === undefined)
      throw CALENDAR_ERRORS.invalid(`Missing time zone definition for ${name} time.`, 'required');
    const [, y, mo, d, h, mi] = wall.map(Number) as number[];
    return instantOf(zone, y!, mo!, d!, h!, mi!);
  }

  const eventOut = (event: StoredEvent) => event.resource;

  const api = express.Router();
  const route =
    (handler: (req: Request, res: Response) => void) => (req: Request, res: Response, next: NextFunction) => {
      try {
        handler(req, res);
      } catch (error) {
        next(error);
      }
    };

  api.post(
    '/freeBusy',
    route((req, res) => {
      const who = authorize(req, 'calendar.freebusy.query');
      checkBody('calendar.freebusy.query', req.body);
      const body = req.body as { timeMin?: string; timeMax?: string; timeZone?: string; items?: { id?: string }[] };
      if (body.timeMin === undefined) throw CALENDAR_ERRORS.invalid('Missing timeMin parameter.', 'required');
      if (body.timeMax === undefined) throw CALENDAR_ERRORS.invalid('Missing timeMax parameter.', 'required');
      const from = rfc3339(body.timeMin, 'timeMin')!;
      const to = rfc3339(body.timeMax, 'timeMax')!;
      if (to <= from) throw CALENDAR_ERRORS.timeRangeEmpty();
      const zone = body.timeZone ?? 'UTC';
      if (!isTimeZone(zone)) throw CALENDAR_ERRORS.invalid('Invalid value for: timeZone');
      const items = body.items ?? [];
      if (items.length > 50)
        throw new CalendarApiError(
          400,
          'tooManyCalendarsRequested',
          'The number of calendars requested is too large for a single query.',
          'calendar',
        );
      const out = (at: number) => noMillis(isoInZone(zone, at));
      const answer: Record<string, unknown> = {};
      for (const item of items) {
        const id = item.id ?? '';
        let calendar: TwinCalendar;
        try {
          calendar = calendarFor(who, id, 'freeBusyReader');
        } catch {
          answer[id] = { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] };
          continue;
        }
        // Busy: the confirmed, opaque events overlapping the window, clipped to it and merged.
        const spans = [...calendar.events.values()]
          .filter(
            (event) =>
              event.resource.status !== 'cancelled' && !event.transparent && event.start < to && event.end > from,
          )
          .map((event) => ({ start: Math.max(event.start, from), end: Math.min(event.end, to) }))
          .sort((a, b) => a.start - b.start);
        const merged: { start: number; end: number }[] = [];
        for (const span of spans) {
          const last = merged.at(-1);
          if (last && span.start <= last.end) last.end = Math.max(last.end, span.end);
          else merged.push({ ...span });
        }
        answer[id] = { busy: merged.map((span) => ({ start: out(span.start), end: out(span.end) })) };
      }
      res.json({
        kind: 'calendar#freeBusy',
        timeMin: new Date(from).toISOString(),
        timeMax: new Date(to).toISOString(),
        calendars: answer,
      });
    }),
  );

  api.post(
    '/calendars/:calendarId/events',
    route((req, res) => {
      const who = authorize(req, 'calendar.events.insert');
      checkBody('calendar.events.insert', req.body);
      const calendar = calendarFor(who, String(req.params.calendarId), 'writer');
      const body = req.body as InsertedEvent;
      if (body.id !== undefined && (typeof body.id !== 'string' || !EVENT_ID.test(body.id)))
        throw CALENDAR_ERRORS.invalid('Invalid resource id value.');
      const start = when(body.start, 'start', calendar);
      const end = when(body.end, 'end', calendar);
      if (Boolean(body.start?.date) !== Boolean(body.end?.date))
        throw CALENDAR_ERRORS.invalid('Start and end times must either both be date or both be dateTime.');
      if (end < start) throw CALENDAR_ERRORS.timeRangeEmpty();
      if (Array.isArray(body.attendees) && body.attendees.length && !who.delegated)
        throw CALENDAR_ERRORS.serviceAccountAttendees();
      const id = typeof body.id === 'string' ? body.id : newEventId();
      // Google keeps a deleted event's id: inserting it again is a duplicate too.
      if (calendar.events.has(id)) throw CALENDAR_ERRORS.duplicate();
      const now = new Date().toISOString();
      const zoneOf = (part: EventTime) => part.timeZone ?? calendar.timeZone;
      const written = (part: EventTime = {}, at: number) =>
        part.date ? { date: part.date } : { dateTime: noMillis(isoInZone(zoneOf(part), at)), timeZone: zoneOf(part) };
      const resource = {
        ...body,
        kind: 'calendar#event',
        etag: `"${Date.now()}000"`,
        id,
        status: body.status === 'tentative' ? 'tentative' : 'confirmed',
        htmlLink: `https://www.google.com/calendar/event?eid=${Buffer.from(`${id} ${calendar.id}`).toString('base64url')}`,
        created: now,
        updated: now,
        creator: { email: who.email },
        organizer: { email: calendar.id, self: calendar.id === who.email },
        start: written(body.start, start),
        end: written(body.end, end),
        iCalUID: `${id}@google.com`,
        sequence: 0,
        reminders: body.reminders ?? { useDefault: true },
        eventType: body.eventType ?? 'default',
      };
      calendar.events.set(id, {
        resource,
        start,
        end,
        transparent: body.transparency === 'transparent',
        privateProperties: body.extendedProperties?.private ?? {},
        sharedProperties: body.extendedProperties?.shared ?? {},
      });
      res.json(resource);
    }),
  );

  api.get(
    '/calendars/:calendarId/events/:eventId',
    route((req, res) => {
      const who = authorize(req, 'calendar.events.get');
      const event = calendarFor(who, String(req.params.calendarId), 'reader').events.get(String(req.params.eventId));
      if (!event) throw CALENDAR_ERRORS.notFound();
      res.json(eventOut(event));
    }),
  );

  api.delete(
    '/calendars/:calendarId/events/:eventId',
    route((req, res) => {
      const who = authorize(req, 'calendar.events.delete');
      const event = calendarFor(who, String(req.params.calendarId), 'writer').events.get(String(req.params.eventId));
      if (!event) throw CALENDAR_ERRORS.notFound();
      if (event.resource.status === 'cancelled') throw CALENDAR_ERRORS.deleted();
      event.resource = { ...event.resource, status: 'cancelled', updated: new Date().toISOString() };
      res.status(204).end();
    }),
  );

  api.get(
    '/calendars/:calendarId/events',
    route((req, res) => {
      const who = authorize(req, 'calendar.events.list');
      const calendar = calendarFor(who, String(req.params.calendarId), 'reader');
      const query = req.query as Record<string, string | string[] | undefined>;
      const one = (name: string) =>
        Array.isArray(query[name]) ? (query[name] as string[])[0] : (query[name] as string | undefined);
      const all = (name: string) => [query[name] ?? []].flat();
      const from = rfc3339(one('timeMin'), 'timeMin');
      const to = rfc3339(one('timeMax'), 'timeMax');
      if (from !== undefined && to !== undefined && to <= from) throw CALENDAR_ERRORS.timeRangeEmpty();
      if (one('orderBy') === 'startTime' && one('singleEvents') !== 'true')
        throw CALENDAR_ERRORS.invalid(
          'The requested ordering is not available for the particular query.',
          'badRequest',
        );
      const maxResults = Math.min(Number(one('maxResults') ?? 250) || 250, 2500);
      const constraints = (name: string) =>
        all(name).map((text) => {
          const at = text.indexOf('=');
          return [text.slice(0, at), text.slice(at + 1)] as const;
        });
      const privateWanted = constraints('privateExtendedProperty');
      const sharedWanted = constraints('sharedExtendedProperty');
      const found = [...calendar.events.values()]
        .filter(
          (event) =>
            (one('showDeleted') === 'true' || event.resource.status !== 'cancelled') &&
            (from === undefined || event.end > from) &&
            (to === undefined || event.start < to) &&
            privateWanted.every(([key, value]) => event.privateProperties[key] === value) &&
            sharedWanted.every(([key, value]) => event.sharedProperties[key] === value),
        )
        .sort((a, b) =>
          one('orderBy') === 'updated'
            ? String(a.resource.updated).localeCompare(String(b.resource.updated))
            : a.start - b.start,
        );
      const offset = Number(one('pageToken') ?? 0) || 0;
      const page = found.slice(offset, offset + maxResults);
      res.json({
        kind: 'calendar#events',
        etag: `"${Date.now()}000"`,
        summary: calendar.id,
        updated: new Date().toISOString(),
        timeZone: calendar.timeZone,
        accessRole: calendar.access.get(who.email),
        defaultReminders: [],
        items: page.map(eventOut),
        ...(offset + page.length < found.length ? { nextPageToken: String(offset + page.length) } : {}),
      });
    }),
  );

  api.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (!(error instanceof CalendarApiError)) return next(error);
    res.status(error.code).json(error.body);
  });

  // TEST CONTROL routes, not Google's: a calendar shared with accounts (POST), and what it holds (GET).
  const control: Router = express.Router();
  control.post('/', (req, res) => {
    const body = calendarControlSchema.safeParse(req.body ?? {});
    if (!body.success || !isTimeZone(body.data.timeZone))
      return void res
        .status(400)
        .json({ error: 'invalid_body', issues: body.success ? [{ path: ['timeZone'] }] : body.error.issues });
    const { calendarId, timeZone, sharedWith } = body.data;
    const existing = calendars.get(calendarId);
    calendars.set(calendarId, {
      id: calendarId,
      timeZone,
      access: new Map([
        [calendarId, 'owner'],
        ...sharedWith.map((entry) => [entry.email, entry.role] as [string, Role]),
      ]),
      events: existing?.events ?? new Map<string, StoredEvent>(),
    });
    res.status(201).json({ calendarId, timeZone });
  });
  control.get('/:calendarId/events', (req, res) => {
    const calendar = calendars.get(String(req.params.calendarId));
    if (!calendar) return void res.status(404).json({ error: 'not_found' });
    res.json({ events: [...calendar.events.values()].map(eventOut) });
  });

  return { api, control, reset: () => calendars.clear() };
}
