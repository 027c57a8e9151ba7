import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { AppointmentBookingInput, AppointmentBookingResult } from '../../lib/calendar/appointment-booking';
import { bookingKeyOf } from '../../lib/calendar/booking-key';
import { CalendarError } from '../../lib/calendar/calendar-client';
import { calendarClientOf } from '../../lib/calendar/calendar-clients';
import { openCalendar, type CalendarEndpoints } from '../../lib/calendar/calendar-connection';
import { appointmentByKey, calendarCallOf, recordAppointment } from '../../lib/calendar/calendar-store';
import type { Database } from '../../lib/database';
import type { Egress } from '../../lib/http/egress';
import { ErrorCode } from '../../lib/error-codes';
import { prismaSql } from '../../lib/run-sql';
import type { Keyring } from '../../lib/secrets/keyring';

export interface AppointmentDependencies {
  db: Database;
  egress: Egress;
  secretsKeyring?: Keyring;
  calendarEndpoints?: CalendarEndpoints;
}

/** A provider's answer no retry changes (the slot is taken, the event type refuses it): not retried. */
const isRefusal = (error: unknown) =>
  error instanceof CalendarError && error.status >= 400 && error.status < 500 && ![408, 429].includes(error.status);

/**
 * Books one slot for one call and records it (docs/features/calendar.md#exactly-one-appointment): the appointment
 * recorded under this booking key is the answer; else the provider's booking made under the key (Google: the event
 * whose id it is; Cal.com: the booking whose metadata holds it) is recorded; else the slot is booked under the key and
 * recorded. A worker that dies between the provider's booking and the record leaves the next try to find the booking:
 * one appointment, at the provider and here.
 */
export async function bookAppointment(
  dependencies: AppointmentDependencies,
  input: AppointmentBookingInput,
): Promise<AppointmentBookingResult> {
  const sql = prismaSql(dependencies.db);
  const start = new Date(input.start);
  const bookingKey = bookingKeyOf(input.workspaceId, input.callId, start);
  const recorded = await appointmentByKey(sql, bookingKey);
  if (recorded) return { appointmentId: recorded.id, bookingKey, providerBookingId: recorded.providerBookingId };
  if (!dependencies.secretsKeyring) throw new Error('SECRETS_KEYS is not set: no calendar connection can be opened');
  const opened = await openCalendar(dependencies.db, dependencies.secretsKeyring, input.workspaceId);
  if (!opened) throw ApplicationFailure.nonRetryable('the workspace has no calendar connection', ErrorCode.not_found);
  const call = await calendarCallOf(sql, input.callId);
  if (!call) throw ApplicationFailure.nonRetryable(`call ${input.callId} not found`, ErrorCode.not_found);
  const client = calendarClientOf(opened, dependencies.egress, dependencies.calendarEndpoints ?? {});
  const slot = { start, end: new Date(input.end) };
  let providerBookingId: string;
  try {
    const found = await client.findBooking(bookingKey, slot);
    if (found) providerBookingId = found;
    else {
      // Cal.com's reservation of the slot was this call's: released so that the booking is not refused by it.
      if (input.reservationUid) await client.release(input.reservationUid);
      providerBookingId = await client.book(
        bookingKey,
        slot,
        { name: call.leadName ?? 'Lead', phone: call.phone, timeZone: input.timeZone, language: call.language },
        `Appointment with ${call.leadName ?? call.phone ?? 'a lead'}`,
      );
    }
  } catch (error) {
    if (isRefusal(error)) throw ApplicationFailure.nonRetryable((error as Error).message, 'calendar_refused');
    throw error;
  }
  const row = await recordAppointment(sql, {
    id: randomUUID(),
    workspaceId: input.workspaceId,
    callId: input.callId,
    leadId: call.leadId,
    provider: opened.provider,
    bookingKey,
    providerBookingId,
    startsAt: slot.start,
    endsAt: slot.end,
    timeZone: input.timeZone,
  });
  return { appointmentId: row.id, bookingKey, providerBookingId: row.providerBookingId };
}
