import { describe, expect, it } from 'vitest';
import { nextCallableInstant, resolveCallbackTime } from '../../lib/conversation/callback-time';
import { DEFAULT_CALLING_WINDOW } from '../../lib/dial-ladder/calling-window';

const NEW_YORK = 'America/New_York';
const MADRID = 'Europe/Madrid';

/** The callback instant as an ISO string, or null. */
function resolved(phrase: string, now: string, timeZone = NEW_YORK, language = 'en-US'): string | null {
  return resolveCallbackTime(phrase, { now: new Date(now), timeZone, language })?.toISOString() ?? null;
}

// Wednesday 2027-06-09 12:00 EDT (UTC-4): an ordinary day, far from any daylight-saving change.
const WEDNESDAY_NOON = '2027-06-09T16:00:00Z';

describe('resolveCallbackTime: English', () => {
  it.each([
    ['tomorrow at three', '2027-06-10T19:00:00.000Z'],
    ['at 3:30 pm', '2027-06-09T19:30:00.000Z'],
    ['at three thirty', '2027-06-09T19:30:00.000Z'],
    ['in two hours', '2027-06-09T18:00:00.000Z'],
    ['in an hour', '2027-06-09T17:00:00.000Z'],
    ['in half an hour', '2027-06-09T16:30:00.000Z'],
    ['in 45 minutes', '2027-06-09T16:45:00.000Z'],
    ['in a couple of hours', '2027-06-09T18:00:00.000Z'],
    ['next Monday morning', '2027-06-14T14:00:00.000Z'],
    ['tonight', '2027-06-09T22:00:00.000Z'],
    ['tonight at 8', '2027-06-10T00:00:00.000Z'],
    ['this afternoon', '2027-06-09T19:00:00.000Z'],
    ['this evening', '2027-06-09T22:00:00.000Z'],
    ['tomorrow', '2027-06-10T14:00:00.000Z'],
    ['tomorrow afternoon at 4', '2027-06-10T20:00:00.000Z'],
    ['the day after tomorrow at 11', '2027-06-11T15:00:00.000Z'],
    ['on Friday', '2027-06-11T14:00:00.000Z'],
    ['Friday at 2', '2027-06-11T18:00:00.000Z'],
    ['half past four', '2027-06-09T20:30:00.000Z'],
    ['quarter past two', '2027-06-09T18:15:00.000Z'],
    ['at noon tomorrow', '2027-06-10T16:00:00.000Z'],
    ['Thursday 5 pm', '2027-06-10T21:00:00.000Z'],
  ])('%s', (phrase, expected) => expect(resolved(phrase, WEDNESDAY_NOON)).toBe(expected));

  it('reads a bare hour 1 to 7 as pm, 8 to 11 as am, 12 as noon; am/pm, a part of the day and 24-hour clocks decide', () => {
    const tomorrowAt = (phrase: string) => resolved(`tomorrow ${phrase}`, WEDNESDAY_NOON);
    expect(tomorrowAt('at 1')).toBe('2027-06-10T17:00:00.000Z');
    expect(tomorrowAt('at 7')).toBe('2027-06-10T23:00:00.000Z');
    expect(tomorrowAt('at 8')).toBe('2027-06-10T12:00:00.000Z');
    expect(tomorrowAt('at 11')).toBe('2027-06-10T15:00:00.000Z');
    expect(tomorrowAt('at 12')).toBe('2027-06-10T16:00:00.000Z');
    expect(tomorrowAt('at 3 am')).toBe('2027-06-10T07:00:00.000Z');
    expect(tomorrowAt('at 3 in the morning')).toBe('2027-06-10T07:00:00.000Z');
    expect(tomorrowAt('at 9 pm')).toBe('2027-06-11T01:00:00.000Z');
    expect(tomorrowAt('evening at 9')).toBe('2027-06-11T01:00:00.000Z');
    expect(tomorrowAt('at 15:00')).toBe('2027-06-10T19:00:00.000Z');
    expect(tomorrowAt('at 9 oclock')).toBe('2027-06-10T13:00:00.000Z');
    // "quarter to eight": the hour's rule reads eight (am), then the quarter is taken off.
    expect(tomorrowAt('at quarter to eight')).toBe('2027-06-10T11:45:00.000Z');
  });

  it('takes the part of the day as morning 10:00, afternoon 15:00, evening 18:00, and a day alone as its morning', () => {
    expect(resolved('tomorrow morning', WEDNESDAY_NOON)).toBe('2027-06-10T14:00:00.000Z');
    expect(resolved('tomorrow afternoon', WEDNESDAY_NOON)).toBe('2027-06-10T19:00:00.000Z');
    expect(resolved('tomorrow evening', WEDNESDAY_NOON)).toBe('2027-06-10T22:00:00.000Z');
    expect(resolved('tomorrow night', WEDNESDAY_NOON)).toBe('2027-06-10T22:00:00.000Z');
    expect(resolved('Saturday', WEDNESDAY_NOON)).toBe('2027-06-12T14:00:00.000Z');
  });

  it('takes a weekday as the next one, never today', () => {
    expect(resolved('on Wednesday', WEDNESDAY_NOON)).toBe('2027-06-16T14:00:00.000Z');
    expect(resolved('next Wednesday at 9', WEDNESDAY_NOON)).toBe('2027-06-16T13:00:00.000Z');
    expect(resolved('on Thursday', WEDNESDAY_NOON)).toBe('2027-06-10T14:00:00.000Z');
  });

  it('rolls a time already past to the next day only when no day was said', () => {
    expect(resolved('at nine', WEDNESDAY_NOON)).toBe('2027-06-10T13:00:00.000Z');
    expect(resolved('in the morning', WEDNESDAY_NOON)).toBe('2027-06-10T14:00:00.000Z');
    expect(resolved('at 12:30', WEDNESDAY_NOON)).toBe('2027-06-09T16:30:00.000Z');
    expect(resolved('today at nine', WEDNESDAY_NOON)).toBeNull();
    expect(resolved('this morning', WEDNESDAY_NOON)).toBeNull();
  });

  it('keeps the later of two things said for the same slot (a correction)', () => {
    expect(resolved('tomorrow at 3, no, at 4', WEDNESDAY_NOON)).toBe('2027-06-10T20:00:00.000Z');
    expect(resolved('Friday, sorry, Monday', WEDNESDAY_NOON)).toBe('2027-06-14T14:00:00.000Z');
  });

  it.each([
    'banana',
    '',
    'whenever',
    'next week',
    'at some point',
    'in a while',
    'later',
    'I have three kids',
    'at 25',
    'tomorrow at 3:75',
    'in zero minutes',
  ])('answers null to %j', (phrase) => expect(resolved(phrase, WEDNESDAY_NOON)).toBeNull());
});

describe('resolveCallbackTime: Spanish', () => {
  const es = (phrase: string) => resolved(phrase, WEDNESDAY_NOON, NEW_YORK, 'es-MX');

  it.each([
    ['mañana a las tres', '2027-06-10T19:00:00.000Z'],
    ['el lunes por la mañana', '2027-06-14T14:00:00.000Z'],
    ['el próximo lunes por la tarde', '2027-06-14T19:00:00.000Z'],
    ['el viernes que viene a las 10 de la mañana', '2027-06-11T14:00:00.000Z'],
    ['en dos horas', '2027-06-09T18:00:00.000Z'],
    ['dentro de una hora', '2027-06-09T17:00:00.000Z'],
    ['en media hora', '2027-06-09T16:30:00.000Z'],
    ['en 20 minutos', '2027-06-09T16:20:00.000Z'],
    ['pasado mañana', '2027-06-11T14:00:00.000Z'],
    ['mañana por la mañana', '2027-06-10T14:00:00.000Z'],
    ['mañana por la tarde', '2027-06-10T19:00:00.000Z'],
    ['esta tarde', '2027-06-09T19:00:00.000Z'],
    ['esta noche', '2027-06-09T22:00:00.000Z'],
    ['a las tres y media', '2027-06-09T19:30:00.000Z'],
    ['a las cuatro y cuarto', '2027-06-09T20:15:00.000Z'],
    ['mañana a las ocho menos cuarto', '2027-06-10T11:45:00.000Z'],
    ['mañana a la una', '2027-06-10T17:00:00.000Z'],
    ['mañana a las nueve de la noche', '2027-06-11T01:00:00.000Z'],
    ['el sábado al mediodía', '2027-06-12T16:00:00.000Z'],
    ['Mañana, a las 16:30.', '2027-06-10T20:30:00.000Z'],
  ])('%s', (phrase, expected) => expect(es(phrase)).toBe(expected));

  it('reads "más tarde" as no time, and Spanish words not at all under English rules', () => {
    expect(es('más tarde')).toBeNull();
    expect(es('la semana que viene')).toBeNull();
    expect(resolved('mañana a las tres', WEDNESDAY_NOON, NEW_YORK, 'en-US')).toBeNull();
    // Languages without rules of their own read English.
    expect(resolved('tomorrow at three', WEDNESDAY_NOON, NEW_YORK, 'de-DE')).toBe('2027-06-10T19:00:00.000Z');
  });
});

describe('resolveCallbackTime across daylight-saving changes', () => {
  it('America/New_York springs forward on 2027-03-14: "tomorrow at three" is 15:00 EDT, not 24 hours of EST on', () => {
    const saturdayNoon = '2027-03-13T17:00:00Z'; // 12:00 EST (UTC-5)
    expect(resolved('tomorrow at three', saturdayNoon)).toBe('2027-03-14T19:00:00.000Z'); // 15:00 EDT (UTC-4)
    // The week before, no change: 15:00 EST.
    expect(resolved('tomorrow at three', '2027-03-06T17:00:00Z')).toBe('2027-03-07T20:00:00.000Z');
    expect(resolved('next Monday morning', saturdayNoon)).toBe('2027-03-15T14:00:00.000Z'); // 10:00 EDT
  });

  it('reads a skipped time past the change, and "in two hours" as two hours elapsed', () => {
    // 02:30 does not happen on 2027-03-14 in New York: the clocks go from 01:59 EST to 03:00 EDT.
    expect(resolved('tomorrow at 2:30 am', '2027-03-13T17:00:00Z')).toBe('2027-03-14T07:30:00.000Z'); // 03:30 EDT
    // 01:30 EST, two hours before 04:30 EDT.
    expect(resolved('in two hours', '2027-03-14T06:30:00Z')).toBe('2027-03-14T08:30:00.000Z');
  });

  it('America/New_York falls back on 2027-11-07: 15:00 EST, and a repeated time is its first occurrence', () => {
    const saturdayNoon = '2027-11-06T16:00:00Z'; // 12:00 EDT
    expect(resolved('tomorrow at three', saturdayNoon)).toBe('2027-11-07T20:00:00.000Z'); // 15:00 EST (UTC-5)
    expect(resolved('tomorrow at 1:30 am', saturdayNoon)).toBe('2027-11-07T05:30:00.000Z'); // 01:30 EDT, the first
    expect(resolved('on Monday at 9', saturdayNoon)).toBe('2027-11-08T14:00:00.000Z'); // 09:00 EST
  });

  it('Europe/Madrid springs forward on 2027-03-28 and falls back on 2027-10-31', () => {
    expect(resolved('mañana a las tres', '2027-03-27T11:00:00Z', MADRID, 'es-ES')).toBe('2027-03-28T13:00:00.000Z');
    expect(resolved('el lunes por la mañana', '2027-03-27T11:00:00Z', MADRID, 'es-ES')).toBe(
      '2027-03-29T08:00:00.000Z',
    );
    expect(resolved('mañana a las tres', '2027-10-30T10:00:00Z', MADRID, 'es-ES')).toBe('2027-10-31T14:00:00.000Z');
    expect(resolved('tomorrow at three', '2027-10-30T10:00:00Z', MADRID, 'en-GB')).toBe('2027-10-31T14:00:00.000Z');
  });
});

describe('nextCallableInstant', () => {
  const callable = (instant: string | null, timeZone: string | readonly string[], window = DEFAULT_CALLING_WINDOW) =>
    nextCallableInstant(new Date(instant!), window, timeZone)?.toISOString() ?? null;

  it('keeps a callback inside the window', () => {
    const inside = resolved('tomorrow at three', WEDNESDAY_NOON);
    expect(callable(inside, NEW_YORK)).toBe(inside);
  });

  it('moves a callback resolved across the spring change onto a Sunday to Monday’s opening (Mon–Sat 09:00–20:00)', () => {
    const sunday = resolved('tomorrow at three', '2027-03-13T17:00:00Z');
    expect(sunday).toBe('2027-03-14T19:00:00.000Z');
    expect(callable(sunday, NEW_YORK)).toBe('2027-03-15T13:00:00.000Z'); // Monday 09:00 EDT
  });

  it('moves a callback resolved across the fall-back change, before the opening, to 09:00 on the new clock', () => {
    // Said on Sunday 2027-11-07 (EST since 02:00): Monday at 7 am is before 09:00 EST.
    const early = resolved('tomorrow at 7 in the morning', '2027-11-07T16:00:00Z');
    expect(early).toBe('2027-11-08T12:00:00.000Z');
    expect(callable(early, NEW_YORK)).toBe('2027-11-08T14:00:00.000Z');
  });

  it('moves a callback after the closing to the next day’s opening, in Madrid across its fall-back', () => {
    // Friday 2027-10-29: "esta noche a las nueve" is 21:00 CEST, after 20:00; Saturday opens 09:00 CEST.
    const late = resolved('esta noche a las nueve', '2027-10-29T10:00:00Z', MADRID, 'es-ES');
    expect(late).toBe('2027-10-29T19:00:00.000Z');
    expect(callable(late, MADRID)).toBe('2027-10-30T07:00:00.000Z');
    // "el domingo a las cinco" is Sunday 31st (closed, and CET since 03:00): Monday 09:00 CET.
    const sunday = resolved('el domingo a las cinco', '2027-10-29T10:00:00Z', MADRID, 'es-ES');
    expect(callable(sunday, MADRID)).toBe('2027-11-01T08:00:00.000Z');
  });

  it('needs every zone the number may be in to be open, and answers null when the window never opens in all', () => {
    // 09:30 in New York is 08:30 in Chicago: the callback waits for 09:00 in Chicago.
    expect(callable('2027-06-10T13:30:00Z', [NEW_YORK, 'America/Chicago'])).toBe('2027-06-10T14:00:00.000Z');
    const oneHour = { start: '09:00', end: '10:00', days: [1, 2, 3, 4, 5, 6, 7] };
    expect(callable('2027-06-10T00:00:00Z', ['Pacific/Auckland', 'Europe/London'], oneHour)).toBeNull();
  });
});
