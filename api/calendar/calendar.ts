import { calendarConnectionOf, disconnectCalendar } from '../../lib/calendar/calendar-connection';
import { appointmentsOf, type ListedAppointmentRow } from '../../lib/calendar/calendar-store';
import { localIsoOf } from '../../lib/calendar/spoken-slot';
import { prismaSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';
import type { Principal } from '../door/principal';

/** The workspace's calendar connection, never its credential; null: none. */
export async function findCalendarConnection(services: AppServices, principal: Principal) {
  return { connection: await calendarConnectionOf(services.db, principal.workspaceId) };
}

/** Disconnects the workspace's calendar (its credential deleted, its holds released); its appointments stay. */
export async function deleteCalendarConnection(services: AppServices, principal: Principal): Promise<void> {
  await disconnectCalendar(services.db, principal.workspaceId);
}

const appointmentView = (row: ListedAppointmentRow) => ({
  id: row.id,
  callId: row.callId,
  lead: row.leadId ? { id: row.leadId, name: row.leadName, phone: row.leadPhone } : null,
  start: row.startsAt.toISOString(),
  end: row.endsAt.toISOString(),
  timeZone: row.timeZone,
  localStart: localIsoOf(row.startsAt, row.timeZone),
  provider: row.provider,
  providerBookingId: row.providerBookingId,
  status: row.status,
  createdAt: row.createdAt.toISOString(),
});

export async function listAppointments(
  services: AppServices,
  principal: Principal,
  page: { limit: number; offset: number },
) {
  const { rows, total } = await appointmentsOf(prismaSql(services.db), principal.workspaceId, page);
  return { items: rows.map(appointmentView), total };
}
