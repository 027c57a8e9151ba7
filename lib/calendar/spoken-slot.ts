/**
 * A slot as the person hears it, in their own time zone (docs/features/calendar.md#what-the-person-hears): weekday,
 * date, time and the zone's name, e.g. "Tuesday, December 15, 2026 at 9:00 AM Australian Eastern Daylight Time".
 */
export function spokenSlot(start: Date, timeZone: string, language: string): string {
  const date = new Intl.DateTimeFormat(language, {
    timeZone,
    weekday: 'long',
    year: 'numeric',
    month: 'long',
    day: 'numeric',
  }).format(start);
  const time = new Intl.DateTimeFormat(language, {
    timeZone,
    hour: 'numeric',
    minute: '2-digit',
    timeZoneName: 'long',
  }).format(start);
  return `${date}, ${time}`;
}

/** The slot's local date and time in the zone, ISO-like without offset ("2026-12-15T09:00"), for the model to pass back. */
export function localIsoOf(start: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(start)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}
