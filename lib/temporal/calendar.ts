import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { AppointmentBookingInput, AppointmentBookingResult } from '../calendar/appointment-booking';
import { bookingKeyOf } from '../calendar/booking-key';
import { startWorkflow } from './start-workflow';
import { appointmentBookingWorkflowId } from './workflow-ids';

/** How long book_appointment waits for the booking before telling the model its outcome is unknown. */
export const BOOKING_WAIT_MS = 20_000;

/**
 * The durable booking of a slot (workflows/calendar/appointment-booking.ts), started under the booking key's id and
 * waited for: a booking already started for the key (a retried tool call, a resumed conversation) is waited for
 * instead of started again (REJECT_DUPLICATE: a finished run answers its result). Past `waitMs` the booking goes on
 * without the caller, and this throws.
 */
export async function bookAppointmentDurably(
  temporal: Client,
  taskQueue: string,
  input: AppointmentBookingInput,
  waitMs = BOOKING_WAIT_MS,
): Promise<AppointmentBookingResult> {
  const workflowId = appointmentBookingWorkflowId(bookingKeyOf(input.workspaceId, input.callId, new Date(input.start)));
  try {
    await startWorkflow(temporal, 'appointmentBookingWorkflow', {
      workflowId,
      taskQueue,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      searchAttributes: { WorkspaceId: [input.workspaceId] },
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      temporal.workflow
        .getHandle<(input: AppointmentBookingInput) => Promise<AppointmentBookingResult>>(workflowId)
        .result(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the booking did not finish within ${waitMs} ms`)), waitMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
