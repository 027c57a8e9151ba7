import { nextAllowedInstant, type CallingWindow } from '../dial-ladder/calling-window';
import { findTimeExpression, type ClockSaid, type PartOfDay, type TimeExpression } from './time-expressions';
import { normaliseUtterance, ruleLanguageOf } from './utterance';
import { addDays, instantAtLocalTime, localDateTimeOf } from './zoned-time';

/** The hour a part of the day said without a clock means (docs/features/conversation/rules.md#time-defaults). */
export const PART_OF_DAY_HOUR: Record<PartOfDay, number> = { morning: 10, afternoon: 15, evening: 18 };
/** A day said without a time of day ("tomorrow", "el lunes") is its morning. */
const DAY_ONLY_HOUR = PART_OF_DAY_HOUR.morning;

/**
 * The hour on a 24-hour clock. With am/pm or a part of the day, that decides; a bare 1 to 7 is in the afternoon
 * (nobody asks to be called at 3 in the night), 8 to 11 in the morning, 12 is noon; 13 to 23 are read as said.
 */
function hourOfDay({ hour, meridian }: ClockSaid, partOfDay: PartOfDay | undefined): number | null {
  if (hour > 23) return null;
  if (hour > 12) return hour;
  if (meridian) return (hour % 12) + (meridian === 'pm' ? 12 : 0);
  if (partOfDay === 'morning') return hour === 12 ? 12 : hour;
  if (partOfDay) return hour === 12 ? 12 : hour + 12;
  return hour >= 1 && hour <= 7 ? hour + 12 : hour;
}

function minuteOfDay(expression: TimeExpression): number | null {
  const { clock, partOfDay } = expression;
  if (!clock) return (partOfDay ? PART_OF_DAY_HOUR[partOfDay] : DAY_ONLY_HOUR) * 60;
  const hour = hourOfDay(clock, partOfDay);
  if (hour === null || clock.minute > 59) return null;
  return hour * 60 + clock.minute;
}

/**
 * The instant a lead's words name for a callback, in the lead's IANA time zone, or null when they name none (or only
 * one already past on a day they said: "today at nine" said at noon). A time already past today with no day said is
 * the next day's. The rules: docs/features/conversation/rules.md#callback-times.
 */
export function resolveCallbackTime(
  phrase: string,
  { now, timeZone, language }: { now: Date; timeZone: string; language: string },
): Date | null {
  const expression = findTimeExpression(normaliseUtterance(phrase), ruleLanguageOf(language));
  if (!expression) return null;
  if (expression.minutesFromNow !== undefined) return new Date(now.getTime() + expression.minutesFromNow * 60_000);
  const minute = minuteOfDay(expression);
  if (minute === null) return null;
  const today = localDateTimeOf(now, timeZone);
  const { day } = expression;
  const daysFromToday =
    day === undefined
      ? 0
      : 'daysFromToday' in day
        ? day.daysFromToday
        : // The next such weekday, never today: "on Friday" said on a Friday is next week's.
          ((day.weekday - today.weekday + 6) % 7) + 1;
  const at = instantAtLocalTime(addDays(today.date, daysFromToday), minute, timeZone);
  if (at > now) return at;
  return day === undefined ? instantAtLocalTime(addDays(today.date, 1), minute, timeZone) : null;
}

/**
 * When a callback asked for at `instant` may be placed: the instant itself inside the campaign's calling window, else
 * the window's next opening, read on the lead's local clocks as the dial ladder reads them (every zone the number may
 * be in must be open). null when the window never opens for those zones.
 */
export function nextCallableInstant(
  instant: Date,
  callingWindow: CallingWindow,
  timeZone: string | readonly string[],
): Date | null {
  return nextAllowedInstant(instant, callingWindow, typeof timeZone === 'string' ? [timeZone] : timeZone);
}
