import { z } from 'zod';
import { CALENDAR_PROVIDERS } from '../../lib/calendar/calendar-connection';
import { defineRoute } from '../http/route';
import { offsetQuery } from '../http/pagination';
import { deleteCalendarConnection, findCalendarConnection, listAppointments } from './calendar';

// Spec section 5: calendar.view reads the connection settings and the appointments, calendar.edit changes the
// connection (here: disconnects it). Connecting (signing in to the calendar) is refused to keys: POST /calendar/connect
// (api/refused-to-keys/routes.ts); operators connect with the admin CLI (`calendar connect`).
const view = { permission: 'calendar.view' } as const;

const connectionSchema = z.object({
  id: z.string().uuid(),
  provider: z
    .enum(CALENDAR_PROVIDERS)
    .describe('google-calendar, calcom, or their twins (google-calendar-twin, calcom-twin: tests and development).'),
  calendarId: z.string().nullable().describe('Google: the calendar booked; Cal.com: null.'),
  subject: z.string().nullable().describe('Google: the user the service account acts for (delegation); null: itself.'),
  serviceAccountEmail: z.string().nullable().describe('Google: the service account (share the calendar with it).'),
  eventTypeId: z.number().int().nullable().describe('Cal.com: the event type booked; Google: null.'),
  durationMinutes: z.number().int().describe('How long an appointment lasts (Google; Cal.com: the event type).'),
  hostTimeZone: z
    .string()
    .describe(
      "Google: the zone of the host's working hours, Monday to Friday 09:00-17:00, in which slots are offered.",
    ),
  createdAt: z.string().describe('ISO 8601 date-time.'),
});

const appointmentSchema = z.object({
  id: z.string().uuid(),
  callId: z.string().uuid().describe('The call it was booked during.'),
  lead: z
    .object({ id: z.string().uuid(), name: z.string().nullable(), phone: z.string().nullable() })
    .nullable()
    .describe('The lead called; null for a call without one (a test call).'),
  start: z.string().describe('ISO 8601 UTC.'),
  end: z.string().describe('ISO 8601 UTC.'),
  timeZone: z.string().describe("The lead's time zone (IANA), the one the slot was offered and read back in."),
  localStart: z.string().describe("The start on the lead's clock, YYYY-MM-DDTHH:mm (no offset)."),
  provider: z.enum(CALENDAR_PROVIDERS),
  providerBookingId: z.string().describe("Google's event id (the booking key) or Cal.com's booking uid."),
  status: z.enum(['booked']).describe('booked (the only status so far: cancellations are made in the calendar).'),
  createdAt: z.string().describe('ISO 8601 date-time: when it was recorded.'),
});

export const calendarRoutes = [
  defineRoute({
    method: 'get',
    path: '/calendar/connection',
    access: view,
    summary:
      "The workspace's calendar connection (one at most), never its credential: { connection: null } when it has none.",
    tags: ['Calendar'],
    responses: {
      200: { description: 'The connection, or null.', schema: z.object({ connection: connectionSchema.nullable() }) },
    },
    handler: async ({ services, principal }) => ({
      status: 200,
      body: await findCalendarConnection(services, principal),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/calendar/connection',
    access: { permission: 'calendar.edit' },
    summary:
      'Disconnect the calendar: its credential is deleted and its held slots released; its appointments stay listed. ' +
      'The agent offers no calendar tools from the next call on. 204 whether or not there was one.',
    tags: ['Calendar'],
    responses: { 204: { description: 'Disconnected.' } },
    handler: async ({ services, principal }) => {
      await deleteCalendarConnection(services, principal);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/calendar/appointments',
    access: view,
    summary:
      "The workspace's appointments booked during calls, soonest start first: offset pagination (limit default 50, " +
      'max 200, offset) with total.',
    tags: ['Calendar'],
    query: z.object(offsetQuery),
    responses: {
      200: {
        description: 'A page.',
        schema: z.object({ items: z.array(appointmentSchema), total: z.number().int() }),
      },
    },
    handler: async ({ services, principal, query }) => ({
      status: 200,
      body: await listAppointments(services, principal, query),
    }),
  }),
];
