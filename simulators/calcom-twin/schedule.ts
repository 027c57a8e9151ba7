import { instantOf, wallTime } from '../twin-common/time-zones';
import type { TwinEventType } from './config';

// A host's weekly schedule read as Cal.com reads it: slots in the host's time zone (docs/features/calendar-twins.md#the-calcom-twin).

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
