import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { closeHttp, listenHttp } from '../../lib/http/listen';
import { DEFAULT_EVENT_TYPE, DEVELOPMENT_CALCOM_API_KEY, type TwinEventType } from './config';
import { CalcomError } from './errors';
import { dateInZone, isoInZone, isTimeZone } from '../twin-common/time-zones';
import { MAX_SLOT_RANGE_DAYS, scheduledSlots } from './schedule';
import { createCalcomStore, DEFAULT_RESERVATION_MINUTES, type Reservation, type TwinBooking } from './store';

/**
 * The Cal.com twin (docs/features/calendar-twins.md#the-calcom-twin): Cal.com's API v2 slots (cal-api-version
 * 2024-09-04) and bookings (2024-08-13) as the vendored description (vendor/openapi/calcom/) gives them, over event
 * types whose hosts keep a weekly schedule in their own time zone. Bearer API keys (`cal_…`), Cal.com's error
 * envelope, reservations that hold a slot (5 minutes by default) and bookings that fail on a slot booked or held by
 * someone else. State is in memory. TEST CONTROL routes (not Cal.com's) under /control.
 */
export interface CalcomTwinOptions {
  apiKeys?: readonly string[];
  eventTypes?: readonly TwinEventType[];
  /** The twin's clock (tests move it); default Date.now. */
  now?: () => number;
}

const SLOTS_VERSION = '2024-09-04';
const BOOKINGS_VERSION = '2024-08-13';
const METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 };

/** An ISO 8601 time as Cal.com reads `start`: UTC unless it names an offset; a bare date is that day's start in UTC. */
function instant(text: unknown, name: string, endOfDay = false): number {
  if (typeof text !== 'string') throw CalcomError.badRequest(`${name} must be a string`);
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const zoned = dateOnly || /(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`;
  const at = Date.parse(dateOnly ? `${text}T${endOfDay ? '23:59:59.999' : '00:00:00.000'}Z` : zoned);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(at))
    throw CalcomError.badRequest(`${name} must be a valid ISO 8601 date string`);
  return at;
}

const utc = (at: number) => new Date(at).toISOString();

export function createCalcomTwin(options: CalcomTwinOptions = {}) {
  const apiKeys = new Set(options.apiKeys ?? [DEVELOPMENT_CALCOM_API_KEY]);
  const eventTypes = options.eventTypes ?? [DEFAULT_EVENT_TYPE];
  const now = options.now ?? Date.now;
  const store = createCalcomStore(eventTypes, now);
  let server: Server | undefined;

  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));

  /** The API key's owner: every key is the hosts' (one account); absent when no Authorization came and none is needed. */
  function authenticated(req: Request, required: boolean): boolean {
    const header = req.get('authorization');
    if (header === undefined) {
      if (required)
        throw CalcomError.unauthorized('No authentication method provided. Use an API key or access token.');
      return false;
    }
    const match = /^Bearer (\S+)$/.exec(header);
    if (!match || !apiKeys.has(match[1]!)) throw CalcomError.unauthorized('Invalid API Key');
    return true;
  }

  /** The documented cal-api-version of the endpoint; another answers an older version at Cal.com, which the twin does not serve. */
  function checkVersion(req: Request, version: string) {
    const sent = req.get('cal-api-version');
    if (sent !== version)
      throw CalcomError.badRequest(
        `The twin serves cal-api-version ${version} of this endpoint only (got ${sent ?? 'none'}); Cal.com would answer an older version.`,
      );
  }

  function eventTypeOf(id: unknown): TwinEventType {
    const number = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id;
    if (typeof number !== 'number' || !Number.isInteger(number))
      throw CalcomError.badRequest('eventTypeId must be a number (the twin finds event types by id only)');
    const type = store.eventType(number);
    if (!type) throw CalcomError.notFound(`Event Type with ID=${number} not found`);
    return type;
  }

  const reservationOutput = (reservation: Reservation) => ({
    eventTypeId: reservation.eventTypeId,
    slotStart: utc(reservation.start),
    slotEnd: utc(reservation.end),
    slotDuration: Math.round((reservation.end - reservation.start) / 60_000),
    reservationUid: reservation.uid,
    reservationDuration: reservation.reservationDuration,
    reservationUntil: utc(reservation.releaseAt),
  });

  function bookingOutput(booking: TwinBooking) {
    const type = store.eventType(booking.eventTypeId)!;
    const { host } = type;
    const { attendee } = booking;
    return {
      id: booking.id,
      uid: booking.uid,
      title: `${type.title} between ${host.name} and ${attendee.name}`,
      description: '',
      hosts: [
        {
          id: host.id,
          name: host.name,
          email: host.email,
          displayEmail: host.email,
          username: host.username,
          timeZone: host.timeZone,
        },
      ],
      status: booking.status,
      start: utc(booking.start),
      end: utc(booking.end),
      duration: Math.round((booking.end - booking.start) / 60_000),
      eventTypeId: type.id,
      eventType: { id: type.id, slug: type.slug },
      location: '',
      absentHost: false,
      createdAt: utc(booking.createdAt),
      updatedAt: utc(booking.updatedAt),
      metadata: booking.metadata,
      attendees: [
        {
          name: attendee.name,
          email: attendee.email,
          displayEmail: attendee.email,
          timeZone: attendee.timeZone,
          language: attendee.language ?? 'en',
          absent: false,
          ...(attendee.phoneNumber ? { phoneNumber: attendee.phoneNumber } : {}),
        },
      ],
      guests: booking.guests,
      bookingFieldsResponses: {
        name: attendee.name,
        email: attendee.email,
        ...(attendee.phoneNumber ? { attendeePhoneNumber: attendee.phoneNumber } : {}),
        guests: booking.guests,
      },
    };
  }

  const route =
    (handler: (req: Request, res: Response) => void) => (req: Request, res: Response, next: NextFunction) => {
      try {
        handler(req, res);
      } catch (error) {
        next(error);
      }
    };

  app.get(
    '/v2/slots',
    route((req, res) => {
      checkVersion(req, SLOTS_VERSION);
      if (req.get('authorization') !== undefined) authenticated(req, false);
      const query = req.query as Record<string, string | undefined>;
      const type = eventTypeOf(query.eventTypeId);
      const from = instant(query.start, 'start');
      const to = instant(query.end, 'end', true);
      if (to < from || to - from > MAX_SLOT_RANGE_DAYS * 86_400_000)
        throw CalcomError.badRequest("Invalid time range given - check the 'start' and 'end' query parameters.");
      const zone = query.timeZone ?? 'UTC';
      if (!isTimeZone(zone)) throw CalcomError.badRequest(`Invalid time zone: ${zone}`);
      if (query.duration !== undefined && Number(query.duration) !== type.lengthInMinutes)
        throw CalcomError.badRequest(`duration must be ${type.lengthInMinutes}: the event type has one length`);
      if (query.format !== undefined && query.format !== 'range' && query.format !== 'time')
        throw CalcomError.badRequest("format must be 'range' or 'time'");
      const data: Record<string, { start: string; end?: string }[]> = {};
      for (const slot of scheduledSlots(type, from, to)) {
        if (!store.isFree(type, slot)) continue;
        const item = {
          start: isoInZone(zone, slot.start),
          ...(query.format === 'range' ? { end: isoInZone(zone, slot.end) } : {}),
        };
        (data[dateInZone(zone, slot.start)] ??= []).push(item);
      }
      res.json({ status: 'success', data });
    }),
  );

  app.post(
    '/v2/slots/reservations',
    route((req, res) => {
      checkVersion(req, SLOTS_VERSION);
      const signedIn = authenticated(req, false);
      const body = (req.body ?? {}) as Record<string, unknown>;
      const type = eventTypeOf(body.eventTypeId);
      if (body.reservationDuration !== undefined && !signedIn)
        throw new CalcomError(
          401,
          'UnauthorizedException',
          'reservationDuration can only be used for authenticated requests - use access token, api key or OAuth credentials',
        );
      if (body.slotDuration !== undefined && body.slotDuration !== type.lengthInMinutes)
        throw CalcomError.badRequest(
          "You passed 'slotDuration' but this event type is not a variable length event type.",
        );
      const duration = body.reservationDuration ?? DEFAULT_RESERVATION_MINUTES;
      if (typeof duration !== 'number' || !(duration > 0) || duration > 24 * 60)
        throw CalcomError.badRequest('reservationDuration must be a positive number of minutes');
      const start = instant(body.slotStart, 'slotStart');
      const reservation = store.reserve(type, { start, end: start + type.lengthInMinutes * 60_000 }, duration);
      res.status(201).json({ status: 'success', data: reservationOutput(reservation) });
    }),
  );

  app.get(
    '/v2/slots/reservations/:uid',
    route((req, res) => {
      checkVersion(req, SLOTS_VERSION);
      const reservation = store.reservation(String(req.params.uid));
      res.json({ status: 'success', data: reservation ? reservationOutput(reservation) : null });
    }),
  );

  app.delete(
    '/v2/slots/reservations/:uid',
    route((req, res) => {
      checkVersion(req, SLOTS_VERSION);
      if (!store.release(String(req.params.uid)))
        throw CalcomError.notFound(`Slot with uid=${String(req.params.uid)} not found`);
      res.json({ status: 'success' });
    }),
  );

  app.post(
    '/v2/bookings',
    route((req, res) => {
      checkVersion(req, BOOKINGS_VERSION);
      authenticated(req, false);
      const body = (req.body ?? {}) as Record<string, unknown>;
      const type = eventTypeOf(body.eventTypeId);
      const start = instant(body.start, 'start');
      const attendee = (body.attendee ?? {}) as Record<string, unknown>;
      if (typeof attendee.name !== 'string' || !attendee.name)
        throw CalcomError.badRequest('attendee.name must be a string');
      if (typeof attendee.timeZone !== 'string' || !isTimeZone(attendee.timeZone))
        throw CalcomError.badRequest('attendee.timeZone must be a valid IANA time zone');
      const email = typeof attendee.email === 'string' ? attendee.email : undefined;
      const phone = typeof attendee.phoneNumber === 'string' ? attendee.phoneNumber : undefined;
      if (email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(email))
        throw CalcomError.badRequest('attendee.email must be an email');
      if (phone !== undefined && !/^\+[1-9]\d{6,14}$/.test(phone))
        throw CalcomError.badRequest('attendee.phoneNumber must be a valid phone number in international format');
      if (email === undefined && phone === undefined)
        throw CalcomError.badRequest('attendee.email or attendee.phoneNumber is required');
      if (body.lengthInMinutes !== undefined && body.lengthInMinutes !== type.lengthInMinutes)
        throw CalcomError.badRequest(`lengthInMinutes must be ${type.lengthInMinutes}: the event type has one length`);
      const metadata = (body.metadata ?? {}) as Record<string, unknown>;
      if (typeof metadata !== 'object' || Array.isArray(metadata))
        throw CalcomError.badRequest('metadata must be an object');
      const entries = Object.entries(metadata);
      if (
        entries.length > METADATA_LIMITS.keys ||
        entries.some(
          ([key, value]) =>
            key.length > METADATA_LIMITS.keyLength ||
            typeof value !== 'string' ||
            value.length > METADATA_LIMITS.valueLength,
        )
      )
        throw CalcomError.badRequest(
          'Metadata must have at most 50 keys, each key up to 40 characters, and string values up to 500 characters.',
        );
      const guests = Array.isArray(body.guests)
        ? body.guests.filter((guest): guest is string => typeof guest === 'string')
        : [];
      const reservedSlotUid = typeof body.reservedSlotUid === 'string' ? body.reservedSlotUid : undefined;
      const booking = store.book(
        type,
        { start, end: start + type.lengthInMinutes * 60_000 },
        {
          // Cal.com gives a booking by phone alone an address of its own, as the twin does.
          attendee: {
            name: attendee.name,
            email: email ?? `${phone!.slice(1)}@sms.cal.com`,
            timeZone: attendee.timeZone,
            ...(phone ? { phoneNumber: phone } : {}),
            ...(typeof attendee.language === 'string' ? { language: attendee.language } : {}),
          },
          metadata: metadata as Record<string, string>,
          guests,
        },
        reservedSlotUid,
      );
      res.status(201).json({ status: 'success', data: bookingOutput(booking) });
    }),
  );

  app.get(
    '/v2/bookings',
    route((req, res) => {
      checkVersion(req, BOOKINGS_VERSION);
      authenticated(req, true);
      const query = req.query as Record<string, string | undefined>;
      const list = (name: string) =>
        query[name]
          ?.split(',')
          .map((item) => item.trim())
          .filter(Boolean);
      const time = (name: string) => (query[name] === undefined ? undefined : instant(query[name], name));
      const at = now();
      const statuses = list('status');
      const typeIds = [...(list('eventTypeIds') ?? []), ...(list('eventTypeId') ?? [])].map(Number);
      const [afterStart, beforeEnd, afterCreatedAt, beforeCreatedAt, afterUpdatedAt, beforeUpdatedAt] = [
        'afterStart',
        'beforeEnd',
        'afterCreatedAt',
        'beforeCreatedAt',
        'afterUpdatedAt',
        'beforeUpdatedAt',
      ].map(time);
      let found = store.bookings().filter((booking) => {
        const status = booking.status === 'cancelled' ? 'cancelled' : booking.end >= at ? 'upcoming' : 'past';
        return (
          (!statuses || statuses.includes(status)) &&
          (!typeIds.length || typeIds.includes(booking.eventTypeId)) &&
          (query.attendeeEmail === undefined || booking.attendee.email === query.attendeeEmail) &&
          (query.attendeeName === undefined || booking.attendee.name === query.attendeeName) &&
          (query.bookingUid === undefined || booking.uid === query.bookingUid) &&
          (afterStart === undefined || booking.start >= afterStart) &&
          (beforeEnd === undefined || booking.end <= beforeEnd) &&
          (afterCreatedAt === undefined || booking.createdAt >= afterCreatedAt) &&
          (beforeCreatedAt === undefined || booking.createdAt <= beforeCreatedAt) &&
          (afterUpdatedAt === undefined || booking.updatedAt >= afterUpdatedAt) &&
          (beforeUpdatedAt === undefined || booking.updatedAt <= beforeUpdatedAt)
        );
      });
      const sorts: [string, keyof TwinBooking][] = [
        ['sortStart', 'start'],
        ['sortEnd', 'end'],
        ['sortCreated', 'createdAt'],
        ['sortUpdatedAt', 'updatedAt'],
      ];
      const sort = sorts.find(([name]) => query[name] === 'asc' || query[name] === 'desc');
      found = found.sort((a, b) => {
        const [name, key] = sort ?? ['sortStart', 'start'];
        const sign = sort && query[name] === 'desc' ? -1 : 1;
        return sign * ((a[key] as number) - (b[key] as number));
      });
      const take = Math.min(Math.max(Number(query.take ?? 100) || 100, 1), 250);
      const skip = Math.max(Number(query.skip ?? 0) || 0, 0);
      const page = found.slice(skip, skip + take);
      res.json({
        status: 'success',
        data: page.map(bookingOutput),
        pagination: {
          totalItems: found.length,
          remainingItems: Math.max(0, found.length - skip - page.length),
          returnedItems: page.length,
          itemsPerPage: take,
          currentPage: Math.floor(skip / take) + 1,
          totalPages: Math.ceil(found.length / take),
          hasNextPage: skip + page.length < found.length,
          hasPreviousPage: skip > 0,
        },
      });
    }),
  );

  app.get(
    '/v2/bookings/:bookingUid',
    route((req, res) => {
      checkVersion(req, BOOKINGS_VERSION);
      authenticated(req, false);
      const booking = store.booking(String(req.params.bookingUid));
      if (!booking) throw CalcomError.notFound(`Booking with uid=${String(req.params.bookingUid)} not found`);
      res.json({ status: 'success', data: bookingOutput(booking) });
    }),
  );

  // TEST CONTROL routes, not Cal.com's.
  app.get('/control/state', (_req, res) => {
    res.json({
      reservations: store.reservations().map(reservationOutput),
      bookings: store.bookings().map(bookingOutput),
    });
  });
  app.post('/control/reset', (_req, res) => {
    store.reset();
    res.status(204).end();
  });

  app.use((req, _res, next) => next(CalcomError.notFound(`Cannot ${req.method} ${req.path}`)));
  app.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    void next;
    const known =
      error instanceof CalcomError
        ? error
        : (error as { type?: string }).type === 'entity.parse.failed'
          ? CalcomError.badRequest('Invalid JSON body')
          : undefined;
    if (!known) console.error('calcom twin: unexpected error', error);
    const answer = known ?? new CalcomError(500, 'InternalServerErrorException', 'Internal server error');
    res.status(answer.statusCode).json(answer.body(req.originalUrl));
  });

  return {
    app,
    store,
    reset: () => store.reset(),
    async listen(port: number, host = '127.0.0.1'): Promise<string> {
      const listening = await listenHttp(app, port, host);
      server = listening.server;
      return listening.url;
    },
    close: () => closeHttp(server),
  };
}

export type CalcomTwin = ReturnType<typeof createCalcomTwin>;
