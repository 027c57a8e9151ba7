import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { AppointmentBookingInput, AppointmentBookingResult } from '../../lib/calendar/appointment-booking';
import { appointmentBooked } from '../../lib/temporal/retry-policies';

/** One try books (or finds) and records in a few requests of 10 s at most each. */
const { bookAppointment } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: appointmentBooked,
});

/**
 * The durable booking of one slot for one call (docs/features/calendar.md#exactly-one-appointment): its id is the
 * booking key's, so a retried or resumed booking finds this run; its activity is retried until the appointment is
 * recorded, each try looking the booking up at the provider by its key before booking.
 */
export async function appointmentBookingWorkflow(input: AppointmentBookingInput): Promise<AppointmentBookingResult> {
  return bookAppointment(input);
}
