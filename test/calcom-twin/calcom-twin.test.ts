// The Cal.com twin (simulators/calcom-twin/, docs/features/calendar-twins.md#the-calcom-twin): its answers and the
// requests it takes held to Cal.com's published OpenAPI description (vendor/openapi/calcom/), slots from a host's
// weekly schedule in a caller's far zone, reservations that hold a slot against a second caller, bookings that fail
// on a taken slot, its errors, auth and cal-api-version.
import { beforeEach, describe, expect, it } from 'vitest';
import { carrierDescription, expectValidDescription } from '../support/carrier-openapi';
import { calcomClient, DEFAULT_EVENT_TYPE, startCalcomTwin } from '../support/calcom-twin';

const calcom = carrierDescription('calcom');
let shiftMs = 0;
const { twin, baseUrl } = await startCalcomTwin({ now: () => Date.now() + shiftMs });
const call = calcomClient(baseUrl);
const anonymous = calcomClient(baseUrl, null);

const SLOTS = { method: 'get', path: '/v2/slots' };
const RESERVE = { method: 'post', path: '/v2/slots/reservations' };
const RELEASE = { method: 'delete', path: '/v2/slots/reservations/{uid}' };
const BOOK = { method: 'post', path: '/v2/bookings' };
const LIST = { method: 'get', path: '/v2/bookings' };
const GET = { method: 'get', path: '/v2/bookings/{bookingUid}' };
const EVENT_TYPE_ID = DEFAULT_EVENT_TYPE.id;
// Monday 3 January 2050: New York is on EST (UTC-5), so its 09:00 is 14:00Z and 23:00 in Tokyo.
const MONDAY = '2050-01-03';

/**
 * The request and the answer, the request held to the description's operation. A booking's body is held to
 * CreateBookingInput_2024_08_13 itself: the operation offers it in a oneOf with the recurring input, which a regular
 * booking's body matches too (the description has no discriminator), so the oneOf refuses every regular booking.
 */
async function described(operation: { method: string; path: string }, path: string, body?: unknown, client = call) {
  const version = path.startsWith('/v2/slots') ? '2024-09-04' : '2024-08-13';
  const headers = { 'cal-api-version': version, authorization: 'Bearer key' };
  if (operation === BOOK) {
    expect(calcom.requestProblems(operation, { url: path, headers })).toEqual(['a body is required']);
    expect(calcom.schemaProblems('/components/schemas/CreateBookingInput_2024_08_13', body)).toEqual([]);
    const declared = Object.keys((calcom.document as any).components.schemas.CreateBookingInput_2024_08_13.properties);
    expect(Object.keys(body as object).filter((name) => !declared.includes(name))).toEqual([]);
  } else expect(calcom.requestProblems(operation, { url: path, headers, body })).toEqual([]);
  return client(operation.method.toUpperCase(), path, body);
}

/** Where the answer departs from the description's response for its status (an error's status is not declared). */
const answerProblems = (operation: { method: string; path: string }, answer: { status: number; body: unknown }) =>
  calcom.responseProblems(operation, { status: answer.status, contentType: 'application/json', body: answer.body });

const RANGE_SLOTS = '/paths/~1v2~1slots/get/responses/200/content/application~1json/schema/oneOf/1';

const booking = (start: string, overrides: Record<string, unknown> = {}) => ({
  start,
  eventTypeId: EVENT_TYPE_ID,
  attendee: { name: 'Aiko Tanaka', timeZone: 'Asia/Tokyo', phoneNumber: '+819012345678' },
  metadata: { bookingKey: `key-${start}` },
  ...overrides,
});

const expectCalcomError = (
  answer: { status: number; body: any },
  status: number,
  code: string,
  message: string | RegExp,
) => {
  expect(answer.status).toBe(status);
  expect(answer.body).toMatchObject({ status: 'error', error: { code, message } });
  expect(Date.parse(answer.body.timestamp)).not.toBeNaN();
  expect(typeof answer.body.path).toBe('string');
};

beforeEach(() => {
  twin.reset();
  shiftMs = 0;
});

describe("Cal.com's vendored description", () => {
  it('is the published OpenAPI 3.0 description of API v2, valid, with its provenance and the operations the twin serves', async () => {
    await expectValidDescription(
      calcom,
      { openapi: '3.0.0', repository: 'calcom/companion', path: 'docs/api-reference/v2/openapi.json' },
      (document) => {
        document.paths['/v2/bookings'].post.responses = 'none';
      },
    );
    expect(Object.keys(calcom.document.paths as object)).toEqual([
      '/v2/bookings',
      '/v2/bookings/{bookingUid}',
      '/v2/slots',
      '/v2/slots/reservations',
      '/v2/slots/reservations/{uid}',
    ]);
    expect(calcom.danglingRefs()).toEqual([]);
    expect(calcom.unknownFormats()).toEqual([]);
  });
});

describe('GET /v2/slots', () => {
  it("answers the host's New York working day as slots in the caller's zone, keyed by the caller's dates", async () => {
    const answer = await described(
      SLOTS,
      `/v2/slots?eventTypeId=${EVENT_TYPE_ID}&start=${MONDAY}&end=${MONDAY}&timeZone=Asia/Tokyo&format=range`,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('success');
    expect(calcom.schemaProblems(RANGE_SLOTS, answer.body.data)).toEqual([]);
    // 09:00-17:00 New York in 30-minute slots is 16 slots, 14:00Z-22:00Z (within the query's UTC day), 23:00 Monday
    // to 06:30 Tuesday in Tokyo, keyed by Tokyo's dates.
    expect(Object.keys(answer.body.data)).toEqual(['2050-01-03', '2050-01-04']);
    expect(answer.body.data['2050-01-03']).toHaveLength(2);
    const all = Object.values(answer.body.data).flat() as { start: string; end: string }[];
    expect(all).toHaveLength(16);
    expect(all[0]).toEqual({ start: '2050-01-03T23:00:00.000+09:00', end: '2050-01-03T23:30:00.000+09:00' });
    expect(all.at(-1)!.start).toBe('2050-01-04T06:30:00.000+09:00');

    const utc = await call(
      'GET',
      `/v2/slots?eventTypeId=${EVENT_TYPE_ID}&start=2050-01-03T14:00:00Z&end=2050-01-03T22:00:00Z`,
    );
    expect(utc.body.data['2050-01-03']).toHaveLength(16);
    expect(utc.body.data['2050-01-03'][0]).toEqual({ start: '2050-01-03T14:00:00.000Z' });
    // The description's own example of the default format: slot objects with a start, keyed by date.
    const example = (calcom.document as any).paths['/v2/slots'].get.responses['200'].content['application/json'].schema
      .oneOf[0].example;
    expect(Object.keys(utc.body)).toEqual(Object.keys(example));
    expect(Object.keys(utc.body.data['2050-01-03'][0])).toEqual(Object.keys(Object.values<any>(example.data)[0][0]));

    const weekend = await call('GET', `/v2/slots?eventTypeId=${EVENT_TYPE_ID}&start=2050-01-08&end=2050-01-09`);
    expect(weekend.body).toEqual({ status: 'success', data: {} });
  });

  it("refuses an unknown event type, a bad range or zone, and a missing cal-api-version, in Cal.com's envelope", async () => {
    expectCalcomError(
      await call('GET', `/v2/slots?eventTypeId=999&start=${MONDAY}&end=${MONDAY}`),
      404,
      'NotFoundException',
      'Event Type with ID=999 not found',
    );
    expectCalcomError(
      await call('GET', `/v2/slots?eventTypeId=${EVENT_TYPE_ID}&start=2050-01-05&end=2050-01-03`),
      400,
      'BadRequestException',
      "Invalid time range given - check the 'start' and 'end' query parameters.",
    );
    expectCalcomError(
      await call('GET', `/v2/slots?eventTypeId=${EVENT_TYPE_ID}&start=${MONDAY}&end=${MONDAY}&timeZone=Mars/Olympus`),
      400,
      'BadRequestException',
      /time zone/,
    );
    expectCalcomError(
      await call('GET', `/v2/slots?eventTypeId=${EVENT_TYPE_ID}&start=${MONDAY}&end=${MONDAY}`, undefined, {
        'cal-api-version': null,
      }),
      400,
      'BadRequestException',
      /cal-api-version 2024-09-04/,
    );
    expectCalcomError(
      await calcomClient(baseUrl, 'cal_wrong_key_123456')(
        'GET',
        `/v2/slots?eventTypeId=${EVENT_TYPE_ID}&start=${MONDAY}&end=${MONDAY}`,
      ),
      401,
      'UnauthorizedException',
      'Invalid API Key',
    );
  });
});

describe('reservations', () => {
  const slotStart = '2050-01-03T15:00:00.000Z';

  it('of one slot by two concurrent callers: one holds it for 5 minutes, the other is refused, and the slot is offered to nobody', async () => {
    const body = { eventTypeId: EVENT_TYPE_ID, slotStart };
    const [first, second] = await Promise.all([
      described(RESERVE, '/v2/slots/reservations', body),
      described(RESERVE, '/v2/slots/reservations', body),
    ]);
    const [won, lost] = first!.status === 201 ? [first!, second!] : [second!, first!];
    expect(won.status).toBe(201);
    expect(answerProblems(RESERVE, won)).toEqual([]);
    expect(won.body.data).toMatchObject({
      eventTypeId: EVENT_TYPE_ID,
      slotStart,
      slotEnd: '2050-01-03T15:30:00.000Z',
      slotDuration: 30,
      reservationDuration: 5,
    });
    expect(Date.parse(won.body.data.reservationUntil) - Date.now()).toBeGreaterThan(4 * 60_000);
    expectCalcomError(
      lost,
      422,
      'UnprocessableEntityException',
      'This time slot is already reserved by another user. Please choose a different time.',
    );

    const slots = await call('GET', `/v2/slots?eventTypeId=${EVENT_TYPE_ID}&start=${MONDAY}&end=${MONDAY}`);
    const starts = (slots.body.data['2050-01-03'] as { start: string }[]).map((slot) => slot.start);
    expect(starts).not.toContain(slotStart);
    expect(starts).toContain('2050-01-03T15:30:00.000Z');

    // Another caller's booking of the held slot fails as Cal.com's "first in line" check fails it.
    expectCalcomError(
      await described(BOOK, '/v2/bookings', booking(slotStart)),
      400,
      'BadRequestException',
      /^Someone else reserved this booking time slot before you\. This time slot will be freed up in \d+ seconds\.$/,
    );
    // The holder books it with its reservation uid (a body member Cal.com reads, not in the description).
    const booked = await call('POST', '/v2/bookings', {
      ...booking(slotStart),
      reservedSlotUid: won.body.data.reservationUid,
    });
    expect(booked.status).toBe(201);
    expect(answerProblems(BOOK, booked)).toEqual([]);
    expect((await call('GET', `/v2/slots/reservations/${won.body.data.reservationUid}`)).body).toEqual({
      status: 'success',
      data: null,
    });
  });

  it('lapses after its duration or when deleted, and cannot hold a booked slot', async () => {
    const held = await call('POST', '/v2/slots/reservations', { eventTypeId: EVENT_TYPE_ID, slotStart });
    expect((await call('GET', `/v2/slots/reservations/${held.body.data.reservationUid}`)).body.data).toEqual(
      held.body.data,
    );
    shiftMs = 5 * 60_000 + 1_000;
    expect((await call('GET', `/v2/slots/reservations/${held.body.data.reservationUid}`)).body.data).toBeNull();
    expect((await call('POST', '/v2/bookings', booking(slotStart))).status).toBe(201);
    expectCalcomError(
      await call('POST', '/v2/slots/reservations', { eventTypeId: EVENT_TYPE_ID, slotStart }),
      422,
      'UnprocessableEntityException',
      "Can't reserve a slot if the event is already booked.",
    );

    const other = await call('POST', '/v2/slots/reservations', {
      eventTypeId: EVENT_TYPE_ID,
      slotStart: '2050-01-03T16:00:00Z',
      reservationDuration: 10,
    });
    expect(other.body.data.reservationDuration).toBe(10);
    const released = await described(RELEASE, `/v2/slots/reservations/${other.body.data.reservationUid}`);
    expect(released.status).toBe(200);
    expect(answerProblems(RELEASE, released)).toEqual([]);
    expect((await call('POST', '/v2/bookings', booking('2050-01-03T16:00:00Z'))).status).toBe(201);
    expectCalcomError(
      await call('DELETE', `/v2/slots/reservations/${other.body.data.reservationUid}`),
      404,
      'NotFoundException',
      /not found/,
    );
    expectCalcomError(
      await anonymous('POST', '/v2/slots/reservations', {
        eventTypeId: EVENT_TYPE_ID,
        slotStart: '2050-01-03T17:00:00Z',
        reservationDuration: 10,
      }),
      401,
      'UnauthorizedException',
      /reservationDuration can only be used for authenticated requests/,
    );
  });
});

describe('bookings', () => {
  it('books a slot given in UTC for a lead in Tokyo, answers it as the description has it, and refuses the slot to a second booking', async () => {
    const answer = await described(
      BOOK,
      '/v2/bookings',
      booking('2050-01-03T14:00:00Z', { metadata: { bookingKey: 'call-1:tool-1', callId: 'call-1' } }),
    );
    expect(answer.status).toBe(201);
    expect(answerProblems(BOOK, answer)).toEqual([]);
    expect(answer.body.data).toMatchObject({
      status: 'accepted',
      start: '2050-01-03T14:00:00.000Z',
      end: '2050-01-03T14:30:00.000Z',
      duration: 30,
      eventType: { id: EVENT_TYPE_ID, slug: DEFAULT_EVENT_TYPE.slug },
      metadata: { bookingKey: 'call-1:tool-1', callId: 'call-1' },
      attendees: [
        {
          name: 'Aiko Tanaka',
          timeZone: 'Asia/Tokyo',
          phoneNumber: '+819012345678',
          email: '819012345678@sms.cal.com',
        },
      ],
      hosts: [{ timeZone: 'America/New_York' }],
    });
    expect(answer.body.data.uid).toMatch(/^[A-Za-z0-9]{22}$/);

    expectCalcomError(
      await call(
        'POST',
        '/v2/bookings',
        booking('2050-01-03T14:00:00Z', { attendee: { name: 'B', timeZone: 'UTC', email: 'b@example.com' } }),
      ),
      400,
      'BadRequestException',
      'User either already has booking at this time or is not available',
    );
    // A start without a zone is read as UTC (Cal.com's rule), so a local time sent bare lands hours off: here 03:00 New York, outside the schedule.
    expectCalcomError(
      await call('POST', '/v2/bookings', booking('2050-01-03T08:00:00')),
      400,
      'BadRequestException',
      'User either already has booking at this time or is not available',
    );
    expectCalcomError(
      await call('POST', '/v2/bookings', booking('2050-01-08T15:00:00Z')),
      400,
      'BadRequestException',
      'User either already has booking at this time or is not available',
    );
    expectCalcomError(
      await call('POST', '/v2/bookings', booking('2020-01-06T15:00:00Z')),
      400,
      'BadRequestException',
      'Attempting to book a meeting in the past.',
    );
    expectCalcomError(
      await call(
        'POST',
        '/v2/bookings',
        booking('2050-01-03T15:00:00Z', { attendee: { name: 'No contact', timeZone: 'UTC' } }),
      ),
      400,
      'BadRequestException',
      /email or attendee.phoneNumber/,
    );
    expectCalcomError(
      await call('POST', '/v2/bookings', booking('2050-01-03T15:00:00Z'), { 'cal-api-version': '2024-04-15' }),
      400,
      'BadRequestException',
      /cal-api-version 2024-08-13/,
    );
  });

  it("lists them with the description's filters and pagination, reads one by uid, and asks an API key to list", async () => {
    const made = [];
    for (const [start, email] of [
      ['2050-01-03T14:00:00Z', 'a@example.com'],
      ['2050-01-03T15:00:00Z', 'b@example.com'],
      ['2050-01-04T14:00:00Z', 'a@example.com'],
    ] as const)
      made.push(
        (
          await call(
            'POST',
            '/v2/bookings',
            booking(start, { attendee: { name: email, timeZone: 'Europe/Paris', email } }),
          )
        ).body.data,
      );

    const all = await described(LIST, '/v2/bookings?status=upcoming&take=2&sortStart=desc');
    expect(all.status).toBe(200);
    expect(answerProblems(LIST, all)).toEqual([]);
    expect(all.body.data.map((item: { uid: string }) => item.uid)).toEqual([made[2].uid, made[1].uid]);
    expect(all.body.pagination).toEqual({
      totalItems: 3,
      remainingItems: 1,
      returnedItems: 2,
      itemsPerPage: 2,
      currentPage: 1,
      totalPages: 2,
      hasNextPage: true,
      hasPreviousPage: false,
    });

    const filtered = await described(
      LIST,
      `/v2/bookings?attendeeEmail=a%40example.com&afterStart=2050-01-04T00:00:00Z&eventTypeId=${EVENT_TYPE_ID}`,
    );
    expect(filtered.body.data.map((item: { uid: string }) => item.uid)).toEqual([made[2].uid]);
    expect((await call('GET', `/v2/bookings?bookingUid=${made[0].uid}`)).body.data).toHaveLength(1);
    expect((await call('GET', '/v2/bookings?status=past,cancelled')).body.data).toEqual([]);

    const one = await described(GET, `/v2/bookings/${made[1].uid}`);
    expect(answerProblems(GET, one)).toEqual([]);
    expect(one.body.data).toEqual(made[1]);
    expectCalcomError(
      await call('GET', '/v2/bookings/nope'),
      404,
      'NotFoundException',
      'Booking with uid=nope not found',
    );
    expectCalcomError(await anonymous('GET', '/v2/bookings'), 401, 'UnauthorizedException', /authentication/);
  });
});
