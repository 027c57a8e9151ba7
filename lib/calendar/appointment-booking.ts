/**
 * The durable booking of one slot for one call (docs/features/calendar.md#exactly-one-appointment): the workflow
 * appointmentBookingWorkflow (workflows/calendar/appointment-booking.ts), id'd by the booking key, runs the activity
 * bookAppointment (activities/calendar/appointments.ts) until it has recorded the appointment.
 */
export interface AppointmentBookingInput {
  workspaceId: string;
  callId: string;
  /** The slot, ISO 8601 UTC. */
  start: string;
  end: string;
  /** The lead's time zone, as the slot was offered and read back. */
  timeZone: string;
  /** calcom: the reservation of the slot, released as it is booked. */
  reservationUid: string | null;
}

export interface AppointmentBookingResult {
  appointmentId: string;
  bookingKey: string;
  providerBookingId: string;
}
