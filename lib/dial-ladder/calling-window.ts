import { z } from 'zod';
import { formatterFor } from '../zoned-formatters';

const clock = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM, 24-hour');

/**
 * When a lead may be called, in the lead's local time, from start (inclusive) to end (exclusive;
 * "24:00" is the end of the day). days: ISO weekdays, 1 = Monday … 7 = Sunday.
 */
export const callingWindowSchema = z
  .object({
    start: clock,
    end: z.union([clock, z.literal('24:00')]),
    days: z.array(z.number().int().min(1).max(7)).min(1),
  })
  .refine((window) => window.start < window.end, { message: 'start must be before end', path: ['end'] });

export type CallingWindow = z.infer<typeof callingWindowSchema>;

/** Monday to Saturday, 09:00 to 20:00 local time. */
export const DEFAULT_CALLING_WINDOW: CallingWindow = { start: '09:00', end: '20:00', days: [1, 2, 3, 4, 5, 6] };

const WEEKDAY: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };
/** The weekday and the 24-hour clock to the minute. */
const WEEKDAY_AND_CLOCK: Intl.DateTimeFormatOptions = {
  weekday: 'short',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
};

function localTime(instant: Date, timeZone: string): { weekday: number; clock: string } {
  const formatter = formatterFor(timeZone, WEEKDAY_AND_CLOCK);
  const parts = Object.fromEntries(formatter.formatToParts(instant).map((part) => [part.type, part.value]));
  return { weekday: WEEKDAY[parts.weekday!]!, clock: `${parts.hour}:${parts.minute}` };
}

export function isWithinWindow(instant: Date, window: CallingWindow, timeZone: string): boolean {
  const { weekday, clock: now } = localTime(instant, timeZone);
  return window.days.includes(weekday) && now >= window.start && now < window.end;
}

const MINUTE = 60_000;
const SEARCH_LIMIT_MINUTES = 8 * 24 * 60;

/**
 * The first instant at or after `from` that is inside the window in every one of the lead's possible
 * time zones (a number can map to several). Minute by minute on real local clocks, so daylight-saving
 * changes fall where they really do. null when the window never opens (zones too far apart).
 */
export function nextAllowedInstant(from: Date, window: CallingWindow, timeZones: readonly string[]): Date | null {
  const allowed = (instant: Date) => timeZones.every((zone) => isWithinWindow(instant, window, zone));
  if (allowed(from)) return from;
  const firstMinute = Math.ceil(from.getTime() / MINUTE) * MINUTE;
  for (let minute = 0; minute <= SEARCH_LIMIT_MINUTES; minute++) {
    const candidate = new Date(firstMinute + minute * MINUTE);
    if (allowed(candidate)) return candidate;
  }
  return null;
}
