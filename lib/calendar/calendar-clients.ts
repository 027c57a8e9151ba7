import type { Egress } from '../http/egress';
import { calcomClient } from './calcom';
import type { CalendarClient } from './calendar-client';
import { isGoogleProvider, type CalendarEndpoints, type OpenedCalendar } from './calendar-connection';
import { googleCalendarClient } from './google-calendar';

/** The client of an opened connection: Google Calendar's or Cal.com's, against the real service or its twin. */
export function calendarClientOf(opened: OpenedCalendar, egress: Egress, endpoints: CalendarEndpoints): CalendarClient {
  return isGoogleProvider(opened.provider)
    ? googleCalendarClient(opened, egress, endpoints.googleCalendarTwinUrl)
    : calcomClient(opened, egress, endpoints.calcomTwinUrl);
}
