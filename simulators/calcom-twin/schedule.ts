import type { TwinEventType, Weekday } from './config';

/**
 * Time zones and weekly schedules, with the platform's IANA database (Intl) and nothing of the product's: where the
 * Cal.com twin reads a host's working hours and writes slot times in a caller's zone.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's formatter; throws RangeError for a name that is no IANA zone. */
function formatter(zone: string): Intl.DateTimeFormat {
  let made = formatters.get(zone);
  if (!made) {
    made = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'long',
    });
    formatters.set(zone, made);
  }
  return made;
}

export function isTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: Weekday;
}

export function wallTime(zone: string, at: number): WallTime {
  const parts = Object.fromEntries(
    formatter(zone)
      .formatToParts(new Date(at))
      .map((part) => [part.type, part.value]),
  );
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: parts.weekday as Weekday,
  };
}

/** The zone's offset from UTC at an instant, in minutes (New York in winter: -300). */
export function offsetMinutes(zone: string, at: number): number {
  const wall = wallTime(zone, at);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return Math.round((asUtc - Math.floor(at / 1000) * 1000) / 60_000);
}

/** The instant of a wall-clock time in a zone (a time skipped by a DST change lands after the change). */
export function instantOf(
  zone: string,
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
): number {
  const guess = Date.UTC(year, month - 1, day, hour, minute);
  const first = guess - offsetMinutes(zone, guess) * 60_000;
  const second = guess - offsetMinutes(zone, first) * 60_000;
  return second;
}

const pad = (value: number, width = 2) => String(Math.abs(value)).padStart(width, '0');

/**
 * An instant as Cal.com writes a slot (luxon's toISO in the asked zone): `2050-09-05T09:00:00.000+02:00`, `Z` for UTC.
 */
export function isoInZone(zone: string, at: number): string {
  const offset = offsetMinutes(zone, at);
  const local = new Date(at + offset * 60_000).toISOString().slice(0, -1);
  if (offset === 0 && (zone === 'UTC' || zone === 'Etc/UTC')) return `${local}Z`;
  return `${local}${offset < 0 ? '-' : '+'}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}

/** The calendar date of an instant in a zone: `2050-09-05`. */
export function dateInZone(zone: string, at: number): string {
  const wall = wallTime(zone, at);
  return `${wall.year}-${pad(wall.month)}-${pad(wall.day)}`;
}

/** The most days a slots query walks: the twin's bound (Cal.com documents none). */
export const MAX_SLOT_RANGE_DAYS = 92;

export interface Slot {
  start: number;
  end: number;
}

/**
 * The slots of the event type's weekly schedule that start within [from, to): one every lengthInMinutes from each
 * window's start, each wholly inside its window, in the host's zone (so a DST change moves them in UTC, not in the
 * host's day).
 */
export function scheduledSlots(eventType: TwinEventType, from: number, to: number): Slot[] {
  const zone = eventType.host.timeZone;
  const length = eventType.lengthInMinutes * 60_000;
  const slots: Slot[] = [];
  // From the host's day before `from` (its zone may be behind UTC) to the day after `to`.
  const first = wallTime(zone, from - 86_400_000);
  for (let index = 0; index <= MAX_SLOT_RANGE_DAYS + 2; index++) {
    const noon = Date.UTC(first.year, first.month - 1, first.day + index, 12);
    const day = new Date(noon);
    const [year, month, date] = [day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate()];
    const weekday = wallTime('UTC', noon).weekday;
    const dayStart = instantOf(zone, year, month, date, 0, 0);
    if (dayStart > to) break;
    for (const window of eventType.availability) {
      if (!window.days.includes(weekday)) continue;
      const [startHour, startMinute] = window.startTime.split(':').map(Number) as [number, number];
      const [endHour, endMinute] = window.endTime.split(':').map(Number) as [number, number];
      const windowStart = instantOf(zone, year, month, date, startHour, startMinute);
      const windowEnd = instantOf(zone, year, month, date, endHour, endMinute);
      for (let start = windowStart; start + length <= windowEnd; start += length)
        if (start >= from && start < to) slots.push({ start, end: start + length });
    }
  }
  return slots.sort((a, b) => a.start - b.start);
}

/** Whether [start, end) lies wholly inside one window of the schedule. */
export function withinSchedule(eventType: TwinEventType, start: number, end: number): boolean {
  const zone = eventType.host.timeZone;
  const day = wallTime(zone, start);
  return eventType.availability.some((window) => {
    if (!window.days.includes(day.weekday)) return false;
    const [startHour, startMinute] = window.startTime.split(':').map(Number) as [number, number];
    const [endHour, endMinute] = window.endTime.split(':').map(Number) as [number, number];
    return (
      start >= instantOf(zone, day.year, day.month, day.day, startHour, startMinute) &&
      end <= instantOf(zone, day.year, day.month, day.day, endHour, endMinute)
    );
  });
}

export const overlaps = (a: Slot, b: Slot) => a.start < b.end && b.start < a.end;
