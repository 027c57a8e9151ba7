import { randomBytes } from 'node:crypto';
import type { TwinEventType } from './config';
import { CalcomError } from './errors';
import { overlaps, withinSchedule, type Slot } from './schedule';

/**
 * What the Cal.com twin holds in memory: reservations (Cal.com's "selected slots") and bookings, with Cal.com's rules
 * for them as its API v2 code applies them (apps/api/v2 of calcom/cal.com, slots 2024-09-04 and bookings 2024-08-13).
 * Every check and its write happen in one turn of the event loop, so of two concurrent requests for one slot exactly
 * one wins, as Cal.com's transaction makes it.
 */
export interface Reservation extends Slot {
  uid: string;
  eventTypeId: number;
  reservationDuration: number;
  releaseAt: number;
}

export interface TwinBooking extends Slot {
  id: number;
  uid: string;
  eventTypeId: number;
  status: 'accepted' | 'cancelled';
  attendee: { name: string; email: string; timeZone: string; phoneNumber?: string; language?: string };
  metadata: Record<string, string>;
  guests: string[];
  createdAt: number;
  updatedAt: number;
}

/** Cal.com's default hold (SlotsService_2024_09_04's DEFAULT_RESERVATION_DURATION), minutes. */
export const DEFAULT_RESERVATION_MINUTES = 5;

/** A uid as Cal.com makes booking and reservation uids: 22 characters of [A-Za-z0-9]. */
export function newUid(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(22)].map((byte) => alphabet[byte % alphabet.length]).join('');
}

export function createCalcomStore(eventTypes: readonly TwinEventType[], now: () => number = Date.now) {
  const reservations = new Map<string, Reservation>();
  const bookings = new Map<string, TwinBooking>();
  let nextBookingId = 1;

  const active = () => {
    const at = now();
    for (const [uid, reservation] of reservations) if (reservation.releaseAt <= at) reservations.delete(uid);
    return [...reservations.values()];
  };
  const accepted = (eventTypeId: number) =>
    [...bookings.values()].filter((booking) => booking.status === 'accepted' && booking.eventTypeId === eventTypeId);

  function eventType(id: number): TwinEventType | undefined {
    return eventTypes.find((candidate) => candidate.id === id);
  }

  /** A slot is offered when nothing accepted and no live reservation overlaps it, and it is past the notice. */
  function isFree(type: TwinEventType, slot: Slot): boolean {
    if (slot.start < now() + type.minimumBookingNoticeMinutes * 60_000) return false;
    if (accepted(type.id).some((booking) => overlaps(booking, slot))) return false;
    return !active().some((reservation) => reservation.eventTypeId === type.id && overlaps(reservation, slot));
  }

  function reserve(type: TwinEventType, slot: Slot, reservationDuration: number): Reservation {
    if (accepted(type.id).some((booking) => overlaps(booking, slot)))
      throw CalcomError.unprocessable("Can't reserve a slot if the event is already booked.");
    if (active().some((reservation) => reservation.eventTypeId === type.id && overlaps(reservation, slot)))
      throw CalcomError.unprocessable(
        'This time slot is already reserved by another user. Please choose a different time.',
      );
    const reservation: Reservation = {
      ...slot,
      uid: newUid(),
      eventTypeId: type.id,
      reservationDuration,
      releaseAt: now() + reservationDuration * 60_000,
    };
    reservations.set(reservation.uid, reservation);
    return reservation;
  }

  function book(
    type: TwinEventType,
    slot: Slot,
    details: Pick<TwinBooking, 'attendee' | 'metadata' | 'guests'>,
    reservedSlotUid?: string,
  ): TwinBooking {
    const at = now();
    if (slot.start < at) throw CalcomError.badRequest('Attempting to book a meeting in the past.');
    const holds = active().filter((reservation) => reservation.eventTypeId === type.id && overlaps(reservation, slot));
    if (reservedSlotUid !== undefined) {
      const own = reservations.get(reservedSlotUid);
      if (!own || own.eventTypeId !== type.id || own.start !== slot.start || own.end !== slot.end)
        throw CalcomError.gone('reservation_not_found_or_expired');
    }
    // Cal.com books a held slot only for the first live reservation of it ("first in line").
    const first = holds.sort((a, b) => a.releaseAt - b.releaseAt)[0];
    if (first && first.uid !== reservedSlotUid)
      throw CalcomError.badRequest(
        `Someone else reserved this booking time slot before you. This time slot will be freed up in ${Math.max(0, Math.ceil((first.releaseAt - at) / 1000))} seconds.`,
      );
    if (
      slot.start < at + type.minimumBookingNoticeMinutes * 60_000 ||
      !withinSchedule(type, slot.start, slot.end) ||
      accepted(type.id).some((booking) => overlaps(booking, slot))
    )
      throw CalcomError.badRequest('User either already has booking at this time or is not available');
    if (reservedSlotUid !== undefined) reservations.delete(reservedSlotUid);
    const booking: TwinBooking = {
      ...slot,
      ...details,
      id: nextBookingId++,
      uid: newUid(),
      eventTypeId: type.id,
      status: 'accepted',
      createdAt: at,
      updatedAt: at,
    };
    bookings.set(booking.uid, booking);
    return booking;
  }

  return {
    eventType,
    isFree,
    reserve,
    book,
    reservation: (uid: string) => (active(), reservations.get(uid)),
    release: (uid: string) => reservations.delete(uid),
    booking: (uid: string) => bookings.get(uid),
    bookings: () => [...bookings.values()],
    reservations: active,
    reset() {
      reservations.clear();
      bookings.clear();
      nextBookingId = 1;
    },
  };
}

export type CalcomStore = ReturnType<typeof createCalcomStore>;
