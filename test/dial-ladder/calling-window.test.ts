import { describe, expect, it } from 'vitest';
import { callingWindowSchema, isWithinWindow, nextAllowedInstant } from '../../lib/dial-ladder/calling-window';

const EVERY_DAY = [1, 2, 3, 4, 5, 6, 7];
const nineToEight = { start: '09:00', end: '20:00', days: EVERY_DAY };

describe("calling window in the lead's local time", () => {
  it('reads the window on the local clock of the lead', () => {
    // 17:30 UTC is 09:30 in Los Angeles (PST, winter) and 12:30 in New York.
    const instant = new Date('2026-01-15T17:30:00Z');
    expect(isWithinWindow(instant, { start: '09:00', end: '10:00', days: EVERY_DAY }, 'America/Los_Angeles')).toBe(
      true,
    );
    expect(isWithinWindow(instant, { start: '09:00', end: '10:00', days: EVERY_DAY }, 'America/New_York')).toBe(false);
  });

  it('defers to the next opening, across the spring daylight-saving change', () => {
    // New York moves from EST (UTC-5) to EDT (UTC-4) on 2026-03-08: 09:00 that day is 13:00 UTC, not 14:00.
    const saturdayNight = new Date('2026-03-08T02:00:00Z'); // 21:00 EST on Saturday 7 March
    expect(nextAllowedInstant(saturdayNight, nineToEight, ['America/New_York'])?.toISOString()).toBe(
      '2026-03-08T13:00:00.000Z',
    );
    // The week before, still EST: 09:00 is 14:00 UTC.
    expect(nextAllowedInstant(new Date('2026-03-01T02:00:00Z'), nineToEight, ['America/New_York'])?.toISOString()).toBe(
      '2026-03-01T14:00:00.000Z',
    );
  });

  it('skips days outside the window', () => {
    // Saturday 2026-03-07 evening in Paris; weekdays only: Monday 9 March 09:00 CET = 08:00 UTC.
    const from = new Date('2026-03-07T19:30:00Z');
    expect(nextAllowedInstant(from, { ...nineToEight, days: [1, 2, 3, 4, 5] }, ['Europe/Paris'])?.toISOString()).toBe(
      '2026-03-09T08:00:00.000Z',
    );
  });

  it('returns the same instant inside the window, and needs every possible zone of a number to agree', () => {
    const instant = new Date('2026-06-10T02:30:00Z'); // 12:30 in Sydney, 10:30 in Perth, 12:00 in Adelaide
    expect(nextAllowedInstant(instant, nineToEight, ['Australia/Sydney'])).toEqual(instant);
    const both = nextAllowedInstant(new Date('2026-06-09T22:30:00Z'), nineToEight, [
      'Australia/Adelaide',
      'Australia/Perth',
    ]);
    // 09:00 in Perth (UTC+8) = 01:00 UTC, when Adelaide (UTC+9:30) is at 10:30.
    expect(both?.toISOString()).toBe('2026-06-10T01:00:00.000Z');
  });

  it('answers null when the zones never share an open minute', () => {
    const narrow = { start: '09:00', end: '10:00', days: EVERY_DAY };
    expect(
      nextAllowedInstant(new Date('2026-06-10T00:00:00Z'), narrow, ['Pacific/Auckland', 'Europe/London']),
    ).toBeNull();
  });

  it('validates windows', () => {
    expect(callingWindowSchema.safeParse({ start: '20:00', end: '09:00', days: [1] }).success).toBe(false);
    expect(callingWindowSchema.safeParse({ start: '09:00', end: '24:00', days: [8] }).success).toBe(false);
    expect(callingWindowSchema.safeParse({ start: '00:00', end: '24:00', days: EVERY_DAY }).success).toBe(true);
  });
});
