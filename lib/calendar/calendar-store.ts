import type { RunSql } from '../run-sql';
import { NOW_UTC } from '../sql-clock';
import type { Slot } from './calendar-client';

// The calendar's SQL (docs/features/calendar.md): holds, appointments and the call's outcome. Timestamps are stored
// in UTC without a zone (Prisma's), read as timestamptz.

/** How long a slot offered to a call stays held for it while the person decides (Cal.com's reservation too). */
export const HOLD_TTL_MS = 5 * 60_000;

const utc = (param: string) => `${param}::timestamptz AT TIME ZONE 'UTC'`;

/** What the tools need of the call: its workspace, its lead and the lead's phone, name and language. */
export interface CalendarCallRow {
  workspaceId: string;
  leadId: string | null;
  phone: string | null;
  leadName: string | null;
  language: string;
  status: string;
}

export async function calendarCallOf(sql: RunSql, callId: string): Promise<CalendarCallRow | null> {
  const [row] = await sql<CalendarCallRow>(
    `SELECT c."workspaceId"::text AS "workspaceId", c."leadId"::text AS "leadId", l.phone, l.name AS "leadName",
            coalesce(a.language, 'en-US') AS language, c.status
       FROM "Call" c LEFT JOIN "Lead" l ON l.id = c."leadId" LEFT JOIN "Agent" a ON a.id = c."agentId"
      WHERE c.id = $1::uuid`,
    callId,
  );
  return row ?? null;
}

/**
 * Holds the slot for the call unless another call holds it unexpired or an appointment starts there: one statement, so
 * that of two callers offered the same slot at once exactly one gets it (the other's ON CONFLICT finds the first's
 * row). The call's own hold is renewed. Answers whether the call holds it now.
 */
export async function holdSlot(
  sql: RunSql,
  hold: { workspaceId: string; callId: string; slot: Slot; expiresAt: Date },
): Promise<boolean> {
  const rows = await sql(
    `INSERT INTO "CalendarHold" ("workspaceId", "startsAt", "callId", "endsAt", "expiresAt")
     SELECT $1::uuid, ${utc('$2')}, $3::uuid, ${utc('$4')}, ${utc('$5')}
      WHERE NOT EXISTS (SELECT 1 FROM "Appointment" p
                         WHERE p."workspaceId" = $1::uuid AND p."startsAt" = ${utc('$2')} AND p.status = 'booked')
     ON CONFLICT ("workspaceId", "startsAt") DO UPDATE
        SET "callId" = excluded."callId", "endsAt" = excluded."endsAt", "expiresAt" = excluded."expiresAt",
            "reservationUid" = CASE WHEN "CalendarHold"."callId" = excluded."callId" THEN "CalendarHold"."reservationUid" END,
            "readBackAt" = CASE WHEN "CalendarHold"."callId" = excluded."callId" THEN "CalendarHold"."readBackAt" END
      WHERE "CalendarHold"."callId" = excluded."callId" OR "CalendarHold"."expiresAt" <= ${NOW_UTC}
     RETURNING 1`,
    hold.workspaceId,
    hold.slot.start.toISOString(),
    hold.callId,
    hold.slot.end.toISOString(),
    hold.expiresAt.toISOString(),
  );
  return rows.length > 0;
}

export async function setReservation(sql: RunSql, workspaceId: string, start: Date, reservationUid: string) {
  await sql(
    `UPDATE "CalendarHold" SET "reservationUid" = $3 WHERE "workspaceId" = $1::uuid AND "startsAt" = ${utc('$2')}`,
    workspaceId,
    start.toISOString(),
    reservationUid,
  );
}

export interface HoldRow {
  startsAt: Date;
  endsAt: Date;
  expiresAt: Date;
  reservationUid: string | null;
  readBackAt: Date | null;
}

const HOLD_COLUMNS = `"startsAt" AT TIME ZONE 'UTC' AS "startsAt", "endsAt" AT TIME ZONE 'UTC' AS "endsAt",
  "expiresAt" AT TIME ZONE 'UTC' AS "expiresAt", "reservationUid", "readBackAt" AT TIME ZONE 'UTC' AS "readBackAt"`;

/** The call's unexpired hold of the slot starting at `start`, or null. */
export async function holdOf(sql: RunSql, workspaceId: string, callId: string, start: Date): Promise<HoldRow | null> {
  const [row] = await sql<HoldRow>(
    `SELECT ${HOLD_COLUMNS} FROM "CalendarHold"
      WHERE "workspaceId" = $1::uuid AND "startsAt" = ${utc('$3')} AND "callId" = $2::uuid AND "expiresAt" > ${NOW_UTC}`,
    workspaceId,
    callId,
    start.toISOString(),
  );
  return row ?? null;
}

/** The read-back was asked for: book_appointment books this slot from now on. */
export async function markReadBack(sql: RunSql, workspaceId: string, start: Date) {
  await sql(
    `UPDATE "CalendarHold" SET "readBackAt" = ${NOW_UTC} WHERE "workspaceId" = $1::uuid AND "startsAt" = ${utc('$2')}`,
    workspaceId,
    start.toISOString(),
  );
}

/** Removes the call's holds (all, or the one at `start`); answers the Cal.com reservations to release. */
export async function releaseHolds(sql: RunSql, workspaceId: string, callId: string, start?: Date): Promise<string[]> {
  const rows = await sql<{ reservationUid: string | null }>(
    `DELETE FROM "CalendarHold" WHERE "workspaceId" = $1::uuid AND "callId" = $2::uuid
        AND ($3::text IS NULL OR "startsAt" = ${utc('$3')})
     RETURNING "reservationUid"`,
    workspaceId,
    callId,
    start?.toISOString() ?? null,
  );
  return rows.flatMap((row) => (row.reservationUid ? [row.reservationUid] : []));
}

export interface AppointmentRow {
  id: string;
  callId: string;
  leadId: string | null;
  provider: string;
  bookingKey: string;
  providerBookingId: string;
  startsAt: Date;
  endsAt: Date;
  timeZone: string;
  status: string;
  createdAt: Date;
}

/** An appointment's columns, of the table or of its alias `p`. */
const appointmentColumns = (p = '') => `${p}id::text, ${p}"callId"::text AS "callId", ${p}"leadId"::text AS "leadId",
  ${p}provider, ${p}"bookingKey", ${p}"providerBookingId", ${p}"startsAt" AT TIME ZONE 'UTC' AS "startsAt",
  ${p}"endsAt" AT TIME ZONE 'UTC' AS "endsAt", ${p}"timeZone", ${p}status, ${p}"createdAt" AT TIME ZONE 'UTC' AS "createdAt"`;

export async function appointmentByKey(sql: RunSql, bookingKey: string): Promise<AppointmentRow | null> {
  const [row] = await sql<AppointmentRow>(
    `SELECT ${appointmentColumns()} FROM "Appointment" WHERE "bookingKey" = $1`,
    bookingKey,
  );
  return row ?? null;
}

/** The call's booked appointment, if it has one (a call books one appointment). */
export async function appointmentOfCall(sql: RunSql, callId: string): Promise<AppointmentRow | null> {
  const [row] = await sql<AppointmentRow>(
    `SELECT ${appointmentColumns()} FROM "Appointment" WHERE "callId" = $1::uuid AND status = 'booked' LIMIT 1`,
    callId,
  );
  return row ?? null;
}

/**
 * Records the appointment the provider booked under its key: once, whatever retries (the key is unique); the call's
 * outcome becomes appointment_booked while it is on, in the same statement. Answers the appointment's row.
 */
export async function recordAppointment(
  sql: RunSql,
  appointment: Omit<AppointmentRow, 'status' | 'createdAt'> & { workspaceId: string },
): Promise<AppointmentRow> {
  await sql(
    `WITH booked AS (
       INSERT INTO "Appointment" (id, "workspaceId", "callId", "leadId", provider, "bookingKey", "providerBookingId",
                                  "startsAt", "endsAt", "timeZone")
       VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5, $6, $7, ${utc('$8')}, ${utc('$9')}, $10)
       ON CONFLICT ("bookingKey") DO NOTHING RETURNING "callId"
     )
     UPDATE "Call" SET "conversationOutcome" = 'appointment_booked', "callbackAt" = NULL
      WHERE id = (SELECT "callId" FROM booked) AND status = 'dialing'`,
    appointment.id,
    appointment.workspaceId,
    appointment.callId,
    appointment.leadId,
    appointment.provider,
    appointment.bookingKey,
    appointment.providerBookingId,
    appointment.startsAt.toISOString(),
    appointment.endsAt.toISOString(),
    appointment.timeZone,
  );
  return (await appointmentByKey(sql, appointment.bookingKey))!;
}

export interface ListedAppointmentRow extends AppointmentRow {
  leadName: string | null;
  leadPhone: string | null;
}

/** A page of the workspace's appointments, soonest first (then by id), with their leads, and how many it has. */
export async function appointmentsOf(
  sql: RunSql,
  workspaceId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: ListedAppointmentRow[]; total: number }> {
  const rows = await sql<ListedAppointmentRow>(
    `SELECT ${appointmentColumns('p.')}, l.name AS "leadName", l.phone AS "leadPhone"
       FROM "Appointment" p LEFT JOIN "Lead" l ON l.id = p."leadId"
      WHERE p."workspaceId" = $1::uuid
      ORDER BY p."startsAt", p.id LIMIT $2 OFFSET $3`,
    workspaceId,
    page.limit,
    page.offset,
  );
  const [count] = await sql<{ total: number }>(
    `SELECT count(*)::int AS total FROM "Appointment" WHERE "workspaceId" = $1::uuid`,
    workspaceId,
  );
  return { rows, total: count?.total ?? 0 };
}
