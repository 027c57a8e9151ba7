import { createCalendarTools } from '../../lib/calendar/calendar-tools';
import type { FunctionTools } from '../../lib/conversation/tools';
import type { Egress } from '../../lib/http/egress';
import { poolSql } from '../../lib/run-sql';
import { bookAppointmentDurably } from '../../lib/temporal/calendar';
import type { AppServices } from '../app-services';

/**
 * A call's calendar tools (docs/features/calendar.md#the-tools) for its engine: offered when its workspace has a
 * calendar connection, every request through the API's egress guard, each booking the durable workflow.
 */
export function createCallCalendar(services: AppServices, egress: Egress, callId: string): FunctionTools {
  return createCalendarTools(
    {
      db: services.db,
      sql: poolSql(services.sql),
      keyring: services.carrierKeyring,
      egress,
      endpoints: services.calendarEndpoints ?? {},
      book: (input) => bookAppointmentDurably(services.temporal, services.taskQueue, input),
    },
    callId,
  );
}
