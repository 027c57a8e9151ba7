// The Google twin's Calendar API v3 (simulators/google-twin/calendar.ts, docs/features/calendar-twins.md#the-google-calendar-twin):
// its answers and the requests it takes held to Google's discovery document (vendor/discovery/google-calendar/), the
// scopes of each method checked on the bearer token, client-chosen event ids and their 409, freeBusy from the events.
import { createSign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { calendarDiscovery, discoveryMethod, schemaProblems } from '../../simulators/google-twin/discovery';
import { startGoogleSheetsTwin, type TwinKey } from '../support/google-sheets-twin';

const document = calendarDiscovery();
const twin = await startGoogleSheetsTwin();
const key = await twin.serviceAccount('booker@twin-project.iam.gserviceaccount.com');
const SCOPE = {
  events: 'https://www.googleapis.com/auth/calendar.events',
  readonly: 'https://www.googleapis.com/auth/calendar.readonly',
  sheets: 'https://www.googleapis.com/auth/spreadsheets',
  freeBusy: 'https://www.googleapis.com/auth/calendar.freebusy',
};
const HOST = 'host@example.com';

/** An access token from the twin's token endpoint: a JWT bearer assertion signed with the key, as Google's clients make it. */
async function token(scopes: string[], subject?: string, account: TwinKey = key): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'RS256', typ: 'JWT' })}.${part({ iss: account.client_email, aud: account.token_uri, scope: scopes.join(' '), iat: now, exp: now + 3600, ...(subject ? { sub: subject } : {}) })}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(account.private_key, 'base64url');
  const response = await fetch(account.token_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: `${unsigned}.${signature}`,
    }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

const eventsToken = await token([SCOPE.events, SCOPE.freeBusy]);
await fetch(`${twin.url}/control/calendars`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    calendarId: HOST,
    timeZone: 'America/New_York',
    sharedWith: [{ email: key.client_email, role: 'writer' }],
  }),
});

async function api(method: string, path: string, body?: unknown, bearer: string | null = eventsToken) {
  const response = await fetch(`${twin.url}/calendar/v3${path}`, {
    method,
    headers: {
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** The body held to the method's request schema, sent, and a 2xx answer held to its response schema. */
async function described(methodId: string, method: string, path: string, body?: unknown, bearer?: string | null) {
  const declared = discoveryMethod(methodId);
  expect(declared.httpMethod).toBe(method);
  if (declared.request) expect(schemaProblems(body, declared.request.$ref, document)).toEqual([]);
  const answer = await api(method, path, body, bearer);
  if (answer.status < 300 && declared.response)
    expect(schemaProblems(answer.body, declared.response.$ref, document)).toEqual([]);
  return answer;
}

const expectCalendarError = (answer: { status: number; body: any }, code: number, reason: string, message: string) => {
  expect(answer.status).toBe(code);
  expect(answer.body).toEqual({ error: { errors: [expect.objectContaining({ reason, message })], code, message } });
};

const event = (id: string, start: string, end: string, extra: Record<string, unknown> = {}) => ({
  id,
  summary: 'Intro call with Aiko',
  start: { dateTime: start },
  end: { dateTime: end },
  extendedProperties: { private: { bookingKey: `key-${id}` } },
  ...extra,
});
const HOST_EVENTS = `/calendars/${encodeURIComponent(HOST)}/events`;

describe("Google's vendored discovery document of the Calendar API v3", () => {
  it('is the published document, with its provenance, the five methods the twin serves and their scopes', () => {
    expect(document['x-vendored']).toMatchObject({
      repository: 'max-ostapenko/discovery-artifact-manager',
      path: 'discoveries/calendar.v3.json',
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(document.rootUrl).toBe('https://www.googleapis.com/');
    expect((document as unknown as { servicePath: string }).servicePath).toBe('calendar/v3/');
    expect(discoveryMethod('calendar.freebusy.query')).toMatchObject({ httpMethod: 'POST', path: 'freeBusy' });
    expect(discoveryMethod('calendar.events.insert')).toMatchObject({
      httpMethod: 'POST',
      path: 'calendars/{calendarId}/events',
    });
    expect(discoveryMethod('calendar.events.insert').scopes).toContain(SCOPE.events);
    expect(discoveryMethod('calendar.events.insert').scopes).not.toContain(SCOPE.readonly);
    expect(() => discoveryMethod('calendar.events.patch')).toThrow(/no method/);
  });
});

describe('events', () => {
  it('inserts with a client-chosen base32hex id, answers 409 for the id again (deleted or not), and refuses ids outside base32hex', async () => {
    const first = await described(
      'calendar.events.insert',
      'POST',
      HOST_EVENTS,
      event('booking0call1tool1', '2050-01-03T09:00:00-05:00', '2050-01-03T09:30:00-05:00'),
    );
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      kind: 'calendar#event',
      id: 'booking0call1tool1',
      status: 'confirmed',
      start: { dateTime: '2050-01-03T09:00:00-05:00', timeZone: 'America/New_York' },
      organizer: { email: HOST },
      extendedProperties: { private: { bookingKey: 'key-booking0call1tool1' } },
    });
    expectCalendarError(
      await api('POST', HOST_EVENTS, event('booking0call1tool1', '2050-01-03T10:00:00Z', '2050-01-03T10:30:00Z')),
      409,
      'duplicate',
      'The requested identifier already exists.',
    );
    for (const id of ['Booking1', 'abcw1', 'abc', 'a-b-c-d-e'])
      expectCalendarError(
        await api('POST', HOST_EVENTS, event(id, '2050-01-03T10:00:00Z', '2050-01-03T10:30:00Z')),
        400,
        'invalid',
        'Invalid resource id value.',
      );

    const got = await described('calendar.events.get', 'GET', `${HOST_EVENTS}/booking0call1tool1`);
    expect(got.body).toEqual(first.body);
    expect((await api('DELETE', `${HOST_EVENTS}/booking0call1tool1`)).status).toBe(204);
    expectCalendarError(
      await api('DELETE', `${HOST_EVENTS}/booking0call1tool1`),
      410,
      'deleted',
      'Resource has been deleted',
    );
    expect((await api('GET', `${HOST_EVENTS}/booking0call1tool1`)).body.status).toBe('cancelled');
    expectCalendarError(
      await api('POST', HOST_EVENTS, event('booking0call1tool1', '2050-01-03T10:00:00Z', '2050-01-03T10:30:00Z')),
      409,
      'duplicate',
      'The requested identifier already exists.',
    );
    expectCalendarError(await api('GET', `${HOST_EVENTS}/nosuchevent`), 404, 'notFound', 'Not Found');
  });

  it("reads wall time in the event's zone, refuses a bare time and an empty range, and lists by timeMin/timeMax and private property", async () => {
    const wall = await api(
      'POST',
      HOST_EVENTS,
      event('local0time', '2050-01-04T09:00:00', '2050-01-04T09:30:00', {
        start: { dateTime: '2050-01-04T09:00:00', timeZone: 'Asia/Tokyo' },
        end: { dateTime: '2050-01-04T09:30:00', timeZone: 'Asia/Tokyo' },
      }),
    );
    expect(wall.body.start).toEqual({ dateTime: '2050-01-04T09:00:00+09:00', timeZone: 'Asia/Tokyo' });
    expectCalendarError(
      await api('POST', HOST_EVENTS, event('bare0time', '2050-01-04T09:00:00', '2050-01-04T09:30:00')),
      400,
      'required',
      'Missing time zone definition for start time.',
    );
    expectCalendarError(
      await api('POST', HOST_EVENTS, event('reversed0range', '2050-01-04T10:00:00Z', '2050-01-04T09:00:00Z')),
      400,
      'timeRangeEmpty',
      'The specified time range is empty.',
    );

    const listed = await described(
      'calendar.events.list',
      'GET',
      `${HOST_EVENTS}?timeMin=2050-01-04T00:00:00Z&timeMax=2050-01-05T00:00:00Z&singleEvents=true&orderBy=startTime`,
    );
    expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual(['local0time']);
    const byKey = await api(
      'GET',
      `${HOST_EVENTS}?privateExtendedProperty=${encodeURIComponent('bookingKey=key-local0time')}`,
    );
    expect(byKey.body.items.map((item: { id: string }) => item.id)).toEqual(['local0time']);
    expectCalendarError(
      await api('GET', `${HOST_EVENTS}?orderBy=startTime`),
      400,
      'badRequest',
      'The requested ordering is not available for the particular query.',
    );
    expectCalendarError(
      await api('GET', `${HOST_EVENTS}?timeMin=2050-01-04T00:00:00`),
      400,
      'invalid',
      'Invalid value for: timeMin',
    );
  });

  it("checks the method's scopes on the token, the caller's access to the calendar, and attendees of a service account", async () => {
    const readonly = await token([SCOPE.readonly]);
    expect((await api('GET', HOST_EVENTS, undefined, readonly)).status).toBe(200);
    expectCalendarError(
      await api('POST', HOST_EVENTS, event('scope0check', '2050-01-05T14:00:00Z', '2050-01-05T14:30:00Z'), readonly),
      403,
      'insufficientPermissions',
      'Request had insufficient authentication scopes.',
    );
    // calendar.events does not reach freeBusy.query (its scopes are calendar, calendar.readonly and the free/busy ones).
    expectCalendarError(
      await api(
        'POST',
        '/freeBusy',
        { timeMin: '2050-01-05T00:00:00Z', timeMax: '2050-01-06T00:00:00Z' },
        await token([SCOPE.events]),
      ),
      403,
      'insufficientPermissions',
      'Request had insufficient authentication scopes.',
    );
    const sheetsOnly = await token([SCOPE.sheets]);
    expectCalendarError(
      await api('GET', HOST_EVENTS, undefined, sheetsOnly),
      403,
      'insufficientPermissions',
      'Request had insufficient authentication scopes.',
    );
    expect(
      (await fetch(`${twin.url}/v4/spreadsheets/anything`, { headers: { authorization: `Bearer ${eventsToken}` } }))
        .status,
    ).toBe(403);
    expectCalendarError(await api('GET', HOST_EVENTS, undefined, null), 401, 'authError', 'Invalid Credentials');
    expectCalendarError(await api('GET', '/calendars/stranger%40example.com/events'), 404, 'notFound', 'Not Found');

    const withAttendee = event('attendee0check', '2050-01-05T14:00:00Z', '2050-01-05T14:30:00Z', {
      attendees: [{ email: 'lead@example.com' }],
    });
    expectCalendarError(
      await api('POST', HOST_EVENTS, withAttendee),
      403,
      'forbiddenForServiceAccounts',
      'Service accounts cannot invite attendees without Domain-Wide Delegation of Authority.',
    );
    const delegated = await token([SCOPE.events], HOST);
    const invited = await api('POST', '/calendars/primary/events', withAttendee, delegated);
    expect(invited.status).toBe(200);
    expect(invited.body.organizer).toEqual({ email: HOST, self: true });
  });
});

describe('freeBusy.query', () => {
  it('answers the busy times of the events inserted, merged and clipped, opaque ones only, and notFound for a calendar not shared', async () => {
    expect(
      (await api('POST', HOST_EVENTS, event('taken0one', '2050-01-06T14:00:00Z', '2050-01-06T14:30:00Z'))).status,
    ).toBe(200);
    await api('POST', HOST_EVENTS, event('taken0second', '2050-01-06T14:30:00Z', '2050-01-06T15:00:00Z'));
    await api(
      'POST',
      HOST_EVENTS,
      event('free0one', '2050-01-06T16:00:00Z', '2050-01-06T17:00:00Z', { transparency: 'transparent' }),
    );
    expect(
      (await api('POST', HOST_EVENTS, event('taken0three', '2050-01-06T21:45:00Z', '2050-01-06T22:30:00Z'))).status,
    ).toBe(200);
    const request = {
      timeMin: '2050-01-06T13:00:00Z',
      timeMax: '2050-01-06T22:00:00Z',
      timeZone: 'America/New_York',
      items: [{ id: HOST }, { id: 'stranger@example.com' }],
    };
    const answer = await described('calendar.freebusy.query', 'POST', '/freeBusy', request);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      kind: 'calendar#freeBusy',
      timeMin: '2050-01-06T13:00:00.000Z',
      timeMax: '2050-01-06T22:00:00.000Z',
      calendars: {
        [HOST]: {
          busy: [
            { start: '2050-01-06T09:00:00-05:00', end: '2050-01-06T10:00:00-05:00' },
            { start: '2050-01-06T16:45:00-05:00', end: '2050-01-06T17:00:00-05:00' },
          ],
        },
        'stranger@example.com': { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] },
      },
    });
    await api('DELETE', `${HOST_EVENTS}/taken0one`);
    const after = await api('POST', '/freeBusy', { ...request, timeZone: undefined, items: [{ id: HOST }] });
    expect(after.body.calendars[HOST].busy[0]).toEqual({ start: '2050-01-06T14:30:00Z', end: '2050-01-06T15:00:00Z' });
    expectCalendarError(
      await api('POST', '/freeBusy', { ...request, timeMax: request.timeMin }),
      400,
      'timeRangeEmpty',
      'The specified time range is empty.',
    );
  });
});
