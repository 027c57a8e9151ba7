import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { calendarEndpointsOf } from '../lib/config';
import { CALENDAR_PROVIDERS, connectCalendar, disconnectCalendar } from '../lib/calendar/calendar-connection';
import type { Database } from '../lib/database';
import { parseFlags, UsageError } from './commands';
import { resolveKeyring } from './secrets-keys';

type Flags = Record<string, string | boolean | undefined>;
type Command = (db: Database, flags: Flags) => Promise<Record<string, unknown>>;

const uuid = z.string().uuid();
/** The deployment's twin URLs, as lib/config.ts reads them (the CLI reads no other setting of the services'). */
const twinUrls = z.object({
  GOOGLE_CALENDAR_TWIN_URL: z.string().url().optional(),
  CALCOM_TWIN_URL: z.string().url().optional(),
});

/** A credential read from its file: never from a flag (a flag lands in the shell's history and the process list). */
function readSecretFile(flag: string, file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--${flag}: ${(error as Error).message}`);
  }
}

/** Calendar connections (docs/features/calendar.md#the-connection): signing in to a calendar is refused to keys. */
export const calendarCommands: Record<string, Command> = {
  'calendar connect': async (db, raw) => {
    const flags = parseFlags(
      {
        workspace: uuid,
        provider: z.enum(CALENDAR_PROVIDERS),
        'key-file': z.string().min(1).optional(),
        'calendar-id': z.string().min(1).max(1024).optional(),
        subject: z.string().email().optional(),
        'host-time-zone': z.string().min(1).max(64).optional(),
        'api-key-file': z.string().min(1).optional(),
        'event-type-id': z.coerce.number().int().min(1).optional(),
        'duration-minutes': z.coerce.number().int().optional(),
      },
      raw,
    );
    return {
      ...(await connectCalendar(db, resolveKeyring(), calendarEndpointsOf(twinUrls.parse(process.env)), {
        workspaceId: flags.workspace,
        provider: flags.provider,
        keyJson: readSecretFile('key-file', flags['key-file']),
        calendarId: flags['calendar-id'],
        subject: flags.subject,
        hostTimeZone: flags['host-time-zone'],
        apiKey: readSecretFile('api-key-file', flags['api-key-file']),
        eventTypeId: flags['event-type-id'],
        durationMinutes: flags['duration-minutes'],
      })),
    };
  },
  'calendar disconnect': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid }, raw);
    return { disconnected: await disconnectCalendar(db, flags.workspace) };
  },
};
