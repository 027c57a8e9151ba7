/**
 * Time zones with the platform's IANA database (Intl) and nothing of the product's: where the Cal.com twin reads a
 * host's working hours and writes slot times in a caller's zone, and the Google twin reads an event's wall-clock time.
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

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: 'Monday' | 'Tuesday' | 'Wednesday' | 'Thursday' | 'Friday' | 'Saturday' | 'Sunday';
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
    weekday: parts.weekday as WallTime['weekday'],
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
