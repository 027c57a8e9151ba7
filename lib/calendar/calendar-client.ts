import type { CalendarProvider } from './calendar-connection';

/** A slot of the calendar, in UTC instants. */
export interface Slot {
  start: Date;
  end: Date;
}

/** Who the appointment is with, as the provider records the attendee. */
export interface Attendee {
  name: string;
  phone: string | null;
  timeZone: string;
  language: string;
}

/**
 * A calendar provider as the tools and the booking activity use it (docs/features/calendar.md#the-connection): the free
 * slots of a range, a provider hold where it has one, the booking looked up by its key, and the booking.
 */
export interface CalendarClient {
  readonly name: CalendarProvider;
  freeSlots(from: Date, to: Date): Promise<Slot[]>;
  /** The provider's own hold of a slot (Cal.com's reservation uid); null where the provider has none (Google). */
  reserve(slot: Slot): Promise<string | null>;
  release(reservationUid: string): Promise<void>;
  /** The provider's id of the booking made under this key, or null when there is none. */
  findBooking(key: string, slot: Slot): Promise<string | null>;
  /** Books the slot under the key; answers the provider's id. */
  book(key: string, slot: Slot, attendee: Attendee, title: string): Promise<string>;
}

/** A provider's refusal or failure, with the status it answered (0: no answer); its message never holds a credential. */
export class CalendarError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'CalendarError';
  }
}
