import type { FunctionTools, OfferedFunction } from '../conversation/tools';
import { resolveCallbackTime } from '../conversation/callback-time';
import type { Database } from '../database';
import { timeZonesOf } from '../dial-ladder/phone-time-zones';
import type { Egress } from '../http/egress';
import { log } from '../log';
import type { RunSql } from '../run-sql';
import type { Keyring } from '../secrets/keyring';
import type { AppointmentBookingInput, AppointmentBookingResult } from './appointment-booking';
import type { CalendarClient, Slot } from './calendar-client';
import { calendarClientOf } from './calendar-clients';
import { openCalendar, type CalendarEndpoints, type OpenedCalendar } from './calendar-connection';
import {
  HOLD_TTL_MS,
  appointmentOfCall,
  calendarCallOf,
  holdOf,
  holdSlot,
  markReadBack,
  releaseHolds,
  setReservation,
  type CalendarCallRow,
} from './calendar-store';
import { spokenSlot } from './spoken-slot';

/** Times offered per check_availability: enough to choose from, few enough to say on the phone. */
export const OFFERED_SLOTS = 3;
/** The soonest a slot may start: the host needs some notice. */
export const MIN_NOTICE_MS = 30 * 60_000;
/** How far ahead a check looks. */
export const SEARCH_DAYS = 7;
/** Candidates tried for a hold before giving up (others may be holding the first ones). */
const MAX_CANDIDATES = 60;
/** The lead's words for a time are read up to this length (docs/hostile-input.md). */
export const AFTER_MAX_CHARS = 200;

export const CALENDAR_TOOL_NAMES = ['check_availability', 'book_appointment'] as const;

/** The two tools as the model is offered them (docs/features/calendar.md#the-tools). */
export const CALENDAR_TOOLS: readonly OfferedFunction[] = [
  {
    name: 'check_availability',
    description:
      "Find free appointment times in the business's calendar, in the lead's own time zone. Each time is held for " +
      'this call for 5 minutes while the lead decides. Read the times to the lead as given.',
    parameters: {
      type: 'object',
      properties: {
        after: {
          type: 'string',
          description:
            'The lead\'s words for when they would like it (e.g. "tomorrow afternoon", "Monday at 10"); leave out for the soonest times.',
        },
      },
      additionalProperties: false,
    },
    fillerLine: 'Let me check the calendar.',
    slowLine: 'Still checking, one moment.',
    afterQuestion: null,
  },
  {
    name: 'book_appointment',
    description:
      'Book the time the lead chose from check_availability. The first call answers the read-back to say; call it ' +
      'again with confirmed true only once the lead has heard the read-back and said yes.',
    parameters: {
      type: 'object',
      properties: {
        start: { type: 'string', description: 'The start of the chosen time, exactly as check_availability gave it.' },
        confirmed: {
          type: 'boolean',
          description: 'true only after the lead heard the read-back (weekday, date, time and time zone) and agreed.',
        },
      },
      required: ['start'],
      additionalProperties: false,
    },
    fillerLine: null,
    slowLine: 'One moment while I book that.',
    afterQuestion: null,
  },
];

export interface CalendarToolsDependencies {
  db: Database;
  sql: RunSql;
  keyring?: Keyring;
  egress: Egress;
  endpoints: CalendarEndpoints;
  /** The durable booking (lib/temporal/calendar.ts): answers once the appointment is recorded. */
  book(input: AppointmentBookingInput): Promise<AppointmentBookingResult>;
  now?: () => Date;
}

type Answer = { ok: boolean; result: string };
const answer = (ok: boolean, result: string): Answer => ({ ok, result });

/** The lead's time zone: the one the product reads the lead's number in for calling windows and callbacks. */
export const leadTimeZoneOf = (phone: string | null) => (phone ? timeZonesOf(phone)[0]! : 'UTC');

/**
 * check_availability and book_appointment of one call (docs/features/calendar.md#the-tools), offered when the call's
 * workspace has a calendar connection. Times are offered and read back in the lead's time zone; each offered time is
 * held for the call (lib/calendar/calendar-store.ts holdSlot; Cal.com's reservation too); a booking is the durable
 * step `book`, keyed by workspace, call and slot.
 */
export function createCalendarTools(deps: CalendarToolsDependencies, callId: string): FunctionTools {
  const now = deps.now ?? (() => new Date());
  let context: Promise<{ call: CalendarCallRow; opened: OpenedCalendar; client: CalendarClient } | null> | undefined;
  const contextOf = () =>
    (context ??= (async () => {
      if (!deps.keyring) return null;
      const call = await calendarCallOf(deps.sql, callId);
      if (!call) return null;
      const opened = await openCalendar(deps.db, deps.keyring, call.workspaceId);
      if (!opened) return null;
      return { call, opened, client: calendarClientOf(opened, deps.egress, deps.endpoints) };
    })());

  async function checkAvailability(args: Record<string, unknown>): Promise<Answer> {
    const { call, opened, client } = (await contextOf())!;
    const timeZone = leadTimeZoneOf(call.phone);
    const at = now();
    let from = new Date(at.getTime() + MIN_NOTICE_MS);
    const words = typeof args.after === 'string' ? args.after.trim().slice(0, AFTER_MAX_CHARS) : '';
    if (words) {
      const asked = resolveCallbackTime(words, { now: at, timeZone, language: call.language });
      if (!asked) return answer(false, `No time could be read from "${words}": ask the lead for a day or a time.`);
      if (asked > from) from = asked;
    }
    const to = new Date(from.getTime() + SEARCH_DAYS * 86_400_000);
    // A new check replaces what the call held before.
    for (const uid of await releaseHolds(deps.sql, call.workspaceId, callId)) await client.release(uid);
    const held: Slot[] = [];
    const candidates = (await client.freeSlots(from, to)).slice(0, MAX_CANDIDATES);
    for (const slot of candidates) {
      if (held.length === OFFERED_SLOTS) break;
      const expiresAt = new Date(now().getTime() + HOLD_TTL_MS);
      if (!(await holdSlot(deps.sql, { workspaceId: call.workspaceId, callId, slot, expiresAt }))) continue;
      try {
        const uid = await client.reserve(slot);
        if (uid) await setReservation(deps.sql, call.workspaceId, slot.start, uid);
      } catch (error) {
        // Cal.com refused the reservation (another booker holds it): the slot is not offered.
        log.info({ err: error, callId, provider: opened.provider }, 'calendar: a slot could not be reserved');
        await releaseHolds(deps.sql, call.workspaceId, callId, slot.start);
        continue;
      }
      held.push(slot);
    }
    if (!held.length)
      return answer(true, `No free time in the ${SEARCH_DAYS} days from then: ask the lead for another day.`);
    const lines = held.map(
      (slot, index) =>
        `${index + 1}. ${spokenSlot(slot.start, timeZone, call.language)} (start ${slot.start.toISOString()})`,
    );
    return answer(
      true,
      `Free times, held for this call for ${HOLD_TTL_MS / 60_000} minutes, in the lead's time zone (${timeZone}):\n` +
        `${lines.join('\n')}\nOffer them in these words. When the lead picks one, call book_appointment with its start.`,
    );
  }

  async function bookAppointment(args: Record<string, unknown>): Promise<Answer> {
    const { call, opened } = (await contextOf())!;
    const timeZone = leadTimeZoneOf(call.phone);
    const text = typeof args.start === 'string' ? args.start.trim() : '';
    const start = new Date(text);
    if (!text || Number.isNaN(start.getTime()))
      return answer(false, 'Give start exactly as check_availability gave it (e.g. 2026-12-14T22:00:00.000Z).');
    const spoken = `${spokenSlot(start, timeZone, call.language)}`;
    const booked = await appointmentOfCall(deps.sql, callId);
    if (booked)
      return booked.startsAt.getTime() === start.getTime()
        ? answer(true, `Already booked for ${spoken} (${timeZone}).`)
        : answer(false, 'This call has already booked an appointment: one appointment per call.');
    const hold = await holdOf(deps.sql, call.workspaceId, callId, start);
    if (!hold)
      return answer(
        false,
        'That time is not held for this call (never offered, or its hold expired): call check_availability again.',
      );
    if (args.confirmed !== true || !hold.readBackAt) {
      await markReadBack(deps.sql, call.workspaceId, start);
      return answer(
        true,
        `Before booking, read this back to the lead and ask them to confirm: "${spoken}". If they say yes, call ` +
          `book_appointment again with start ${start.toISOString()} and confirmed true.`,
      );
    }
    await deps.book({
      workspaceId: call.workspaceId,
      callId,
      start: hold.startsAt.toISOString(),
      end: hold.endsAt.toISOString(),
      timeZone,
      reservationUid: hold.reservationUid,
    });
    // The other times offered to this call are free again.
    const { client } = (await contextOf())!;
    for (const uid of await releaseHolds(deps.sql, call.workspaceId, callId)) await client.release(uid);
    log.info({ callId, provider: opened.provider }, 'calendar: appointment booked');
    return answer(true, `Booked for ${spoken} (${timeZone}). Tell the lead it is booked, in those words.`);
  }

  const tools: Record<string, (args: Record<string, unknown>) => Promise<Answer>> = {
    check_availability: checkAvailability,
    book_appointment: bookAppointment,
  };

  return {
    async offered() {
      return (await contextOf()) ? CALENDAR_TOOLS : [];
    },
    async run({ name, arguments: args }) {
      const tool = tools[name];
      if (!tool || !(await contextOf())) return answer(false, `Error: there is no function named "${name}".`);
      const parsed = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      try {
        return await tool(parsed);
      } catch (error) {
        log.warn({ err: error, callId, tool: name }, 'calendar tool failed');
        return answer(
          false,
          name === 'book_appointment'
            ? 'Outcome unknown: the booking could not be confirmed now. It is completed in the background and never ' +
                'made twice; tell the lead they will get a confirmation.'
            : 'The calendar could not be reached: offer to have someone call back to book.',
        );
      }
    },
  };
}

/** The call's custom functions and calendar tools as one set for its engine (the calendar's names come first). */
export function withCalendarTools(calendar: FunctionTools, functions: FunctionTools): FunctionTools {
  const isCalendar = (name: string) => (CALENDAR_TOOL_NAMES as readonly string[]).includes(name);
  return {
    async offered() {
      const [own, custom] = await Promise.all([calendar.offered(), functions.offered()]);
      const names = new Set(own.map((tool) => tool.name));
      return [...own, ...custom.filter((tool) => !names.has(tool.name))];
    },
    async run(call) {
      const own = isCalendar(call.name) && (await calendar.offered()).length > 0;
      return own ? calendar.run(call) : functions.run(call);
    },
  };
}
