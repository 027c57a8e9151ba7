import { z } from 'zod';
import { jsonSetting, twinSettingsOrExit } from '../twin-common/config';

/**
 * The twin's development API key: fake and public, accepted by the twin, never by Cal.com. Cal.com's keys start
 * `cal_` (`cal_live_` for live ones); the development stack gives the product the same key.
 */
export const DEVELOPMENT_CALCOM_API_KEY = 'cal_test_calcomtwin_not_a_real_key';

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;
const clock = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM');

/**
 * An event type as the twin keeps it: its host's weekly schedule is in the host's time zone, as Cal.com's schedules
 * are (`availability: [{ days, startTime, endTime }]`, the shape of Cal.com's schedules API).
 */
export const eventTypeSchema = z.strictObject({
  id: z.number().int().positive(),
  slug: z.string().min(1),
  title: z.string().min(1),
  lengthInMinutes: z.number().int().min(5).max(720),
  /** Slots closer to now than this are not offered, and not booked (Cal.com's minimum booking notice). */
  minimumBookingNoticeMinutes: z.number().int().min(0).default(0),
  host: z.strictObject({
    id: z.number().int().positive(),
    name: z.string().min(1),
    email: z.string().email(),
    username: z.string().min(1),
    timeZone: z.string().min(1),
  }),
  availability: z
    .array(z.strictObject({ days: z.array(z.enum(WEEKDAYS)).min(1), startTime: clock, endTime: clock }))
    .min(1),
});
export type TwinEventType = z.infer<typeof eventTypeSchema>;

/** The default event type: 30-minute slots, Monday to Friday 09:00-17:00 in New York. */
export const DEFAULT_EVENT_TYPE: TwinEventType = {
  id: 1001,
  slug: 'intro-call',
  title: 'Intro call',
  lengthInMinutes: 30,
  minimumBookingNoticeMinutes: 0,
  host: {
    id: 501,
    name: 'Twin Host',
    email: 'host@calcom-twin.invalid',
    username: 'twin-host',
    timeZone: 'America/New_York',
  },
  availability: [
    { days: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'], startTime: '09:00', endTime: '17:00' },
  ],
};

/** The Cal.com twin's settings (docs/features/calendar-twins.md#the-calcom-twin), beside SHUTDOWN_GRACE_MS and LOG_LEVEL. */
export const calcomTwinConfigSchema = z.object({
  CALCOM_TWIN_PORT: z.coerce.number().int().min(0).max(65535).default(3900),
  CALCOM_TWIN_HOST: z.string().default('127.0.0.1'),
  /** JSON: the API keys it accepts (each `cal_…`); default: [DEVELOPMENT_CALCOM_API_KEY]. */
  CALCOM_TWIN_API_KEYS: jsonSetting(z.array(z.string().regex(/^cal_[A-Za-z0-9_]{8,200}$/)).min(1), () => [
    DEVELOPMENT_CALCOM_API_KEY,
  ]),
  /** JSON: its event types (eventTypeSchema); default: [DEFAULT_EVENT_TYPE]. */
  CALCOM_TWIN_EVENT_TYPES: jsonSetting(z.array(eventTypeSchema).min(1), () => [DEFAULT_EVENT_TYPE]),
});
export type CalcomTwinConfig = z.infer<typeof calcomTwinConfigSchema>;

/** The settings from the environment, or a line per fault (never a value: secrets) and exit 78. */
export function loadCalcomTwinConfigOrExit(env: NodeJS.ProcessEnv = process.env): CalcomTwinConfig {
  return twinSettingsOrExit(calcomTwinConfigSchema, env);
}
