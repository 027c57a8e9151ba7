import { callingWindowSchema, DEFAULT_CALLING_WINDOW, type CallingWindow } from '../dial-ladder/calling-window';
import { timeZonesOf } from '../dial-ladder/phone-time-zones';
import { nextCallableInstant, resolveCallbackTime } from './callback-time';

/**
 * schedule_callback's reading of the lead's words (docs/features/conversation/tools.md), shared by every set of tools
 * that runs it (a call's, api/conversation/conversation-tools.ts; a test session's,
 * api/test-sessions/session-tools.ts): the words read as a time in the lead phone's time zone
 * (lib/conversation/callback-time.ts, lib/dial-ladder/phone-time-zones.ts), moved to the calling window's next opening when
 * outside it, and the result text a model is told. What is then done with the time (a call marked
 * callback_requested, or a test session's record of it) is the caller's.
 */

/** The words could not be booked: what the model is told to do instead; the conversation goes on. */
export interface CallbackRefused {
  ok: false;
  result: string;
}

/** The time the callback is for. */
export interface CallbackResolved {
  ok: true;
  /** When the callback may be placed: the time asked for, or the window's next opening after it. */
  at: Date;
  /** The time zone it is read in (the number's first zone; UTC without a number). */
  timeZone: string;
  /** `at` as the lead would say it, in their zone and language: "Friday, November 27, 3:00 PM". */
  localTime: string;
  /** The time asked for was outside the window: `at` is the window's next opening after it. */
  moved: boolean;
}

/** A time as the lead would say it, in their zone and language: "Friday, November 27, 3:00 PM". */
export function localTimeOf(instant: Date, timeZone: string, language: string): string {
  return new Intl.DateTimeFormat(language, {
    timeZone,
    weekday: 'long',
    month: 'long',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
  }).format(instant);
}

/** A stored calling window, or the default one (a campaign without one, or no campaign: a test call or session). */
export function callingWindowOf(stored: unknown): CallingWindow {
  const parsed = callingWindowSchema.safeParse(stored);
  return parsed.success ? parsed.data : DEFAULT_CALLING_WINDOW;
}

/** What the lead's words give: the time to call back, or why none can be booked. */
export function resolveCallback(
  args: Record<string, unknown>,
  target: { phone: string | null; language: string; callingWindow: unknown; now: Date },
): CallbackResolved | CallbackRefused {
  const when = typeof args.when === 'string' ? args.when.trim() : '';
  if (!when) return { ok: false, result: 'Say when: ask the lead for a day and a time.' };
  const zones = target.phone ? timeZonesOf(target.phone) : ['UTC'];
  const timeZone = zones[0]!;
  const asked = resolveCallbackTime(when, { now: target.now, timeZone, language: target.language });
  if (!asked) return { ok: false, result: `No time could be read from "${when}": ask the lead for a day and a time.` };
  const at = nextCallableInstant(asked, callingWindowOf(target.callingWindow), zones);
  if (!at) return { ok: false, result: 'The campaign never calls this number: no callback can be booked.' };
  return {
    ok: true,
    at,
    timeZone,
    localTime: localTimeOf(at, timeZone, target.language),
    moved: at.getTime() !== asked.getTime(),
  };
}

/** The result text of a booked callback, as the transcript records it and a model is told. */
export function callbackBookedResult(booked: CallbackResolved): string {
  return (
    `Callback booked for ${booked.localTime} (${booked.timeZone})` +
    (booked.moved ? ', the first time the campaign may call after the time asked for.' : '.')
  );
}

/** What an engine reads of a booked callback for its own words (DialogueToolResult.data). */
export const callbackData = (booked: CallbackResolved) => ({
  callbackAt: booked.at.toISOString(),
  localTime: booked.localTime,
});
