import { formatterFor } from '../zoned-formatters';

/** A calendar day on a local clock. */
export interface LocalDate {
  year: number;
  /** 1 = January. */
  month: number;
  day: number;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** Every field of the wall clock, to the second. */
const WALL_CLOCK: Intl.DateTimeFormatOptions = {
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
  hourCycle: 'h23',
};

/** The local wall clock at an instant, written as if it were UTC (whole seconds): offsets are differences of these. */
function wallClockOf(instantMs: number, timeZone: string): number {
  const parts = Object.fromEntries(
    formatterFor(timeZone, WALL_CLOCK)
      .formatToParts(new Date(instantMs))
      .map((part) => [part.type, Number(part.value)]),
  );
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}

/** The local date, ISO weekday (1 = Monday) and minute of the day at an instant in a time zone. */
export function localDateTimeOf(
  instant: Date,
  timeZone: string,
): { date: LocalDate; weekday: number; minuteOfDay: number } {
  const wall = new Date(wallClockOf(instant.getTime(), timeZone));
  return {
    date: { year: wall.getUTCFullYear(), month: wall.getUTCMonth() + 1, day: wall.getUTCDate() },
    weekday: wall.getUTCDay() === 0 ? 7 : wall.getUTCDay(),
    minuteOfDay: wall.getUTCHours() * 60 + wall.getUTCMinutes(),
  };
}

export function addDays(date: LocalDate, days: number): LocalDate {
  const moved = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() };
}

/**
 * The instant a local date and minute of the day happen in a time zone, daylight-saving changes included
 * (docs/features/conversation/rules.md#time-defaults). A time the clocks repeat (the fall-back hour) is its first
 * occurrence; a time they skip (the spring-forward hour) is read on the clock before the change, so it lands as far
 * past the change as it was meant to be past the hour (02:30 on a skipped 02:00–03:00 is 03:30): what Temporal's and
 * java.time's "compatible" resolution does.
 */
export function instantAtLocalTime(date: LocalDate, minuteOfDay: number, timeZone: string): Date {
  const wall = Date.UTC(date.year, date.month - 1, date.day, 0, minuteOfDay);
  // The offsets a day either side: the ones before and after a change on this date (the same one on most dates).
  const offsetBefore = wallClockOf(wall - DAY, timeZone) - (wall - DAY);
  const offsetAfter = wallClockOf(wall + DAY, timeZone) - (wall + DAY);
  const occurrences = [wall - offsetBefore, wall - offsetAfter]
    .filter((candidate) => wallClockOf(candidate, timeZone) === wall)
    .sort((a, b) => a - b);
  return new Date(occurrences[0] ?? wall - offsetBefore);
}
