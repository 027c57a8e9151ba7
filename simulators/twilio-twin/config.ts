import { z } from 'zod';
import { jsonSetting, twinSettingsOrExit } from '../twin-common/config';

/**
 * The twin's development account: fake and public, accepted by the twin, never by Twilio (no account has this SID).
 * The twin's own record of it, as Twilio keeps its accounts; the product's development connection holds the same
 * credentials on its side (lib/carriers/twin.ts), and test/import-rules.test.ts holds the two equal.
 */
export const DEVELOPMENT_TWILIO_ACCOUNT = {
  sid: 'ACdeadbeefdeadbeefdeadbeefdeadbeef',
  authToken: 'twin-auth-token-not-a-real-secret',
} as const;

/**
 * The twin's own settings (docs/features/carriers/twins.md#running-it), beside the process settings every twin reads
 * (simulators/twin-common/config.ts: DATABASE_URL, LOG_LEVEL, SHUTDOWN_GRACE_MS).
 */
const accountsSchema = z
  .array(
    z.object({
      sid: z.string().regex(/^AC[0-9a-fA-F]{32}$/),
      authToken: z.string().min(1),
      apiKeys: z
        .array(z.object({ sid: z.string().regex(/^SK[0-9a-fA-F]{32}$/), secret: z.string().min(1) }))
        .default([]),
      /** The numbers the account may call from; absent: any (a create from another is refused, 21210). */
      callerIds: z.array(z.string().regex(/^\+[1-9]\d{1,14}$/)).optional(),
      /** The To prefixes the account's Geo Permissions allow (+1, +44); absent: any (a create to another: 21215). */
      geoPermissions: z.array(z.string().regex(/^\+[1-9]\d{0,14}$/)).optional(),
      /** The account's phone numbers (IncomingPhoneNumbers): inbound calls to them ask their VoiceUrl. */
      incomingNumbers: z.array(z.string().regex(/^\+[1-9]\d{1,14}$/)).optional(),
    }),
  )
  .min(1);

export const twinConfigSchema = z.object({
  TWILIO_TWIN_PORT: z.coerce.number().int().min(0).max(65535).default(3300),
  TWILIO_TWIN_HOST: z.string().default('127.0.0.1'),
  /** 1: real time; 0.01: a 40 s call lasts 0.4 s. */
  TWILIO_TWIN_TIME_SCALE: z.coerce.number().positive().max(100).default(1),
  /** JSON: [{ sid, authToken, apiKeys: [{ sid, secret }] }]; default: DEVELOPMENT_TWILIO_ACCOUNT. */
  TWILIO_TWIN_ACCOUNTS: jsonSetting(accountsSchema, () => [{ ...DEVELOPMENT_TWILIO_ACCOUNT, apiKeys: [] }]),
  /** until-answered: callbacks retried until answered 2xx (at least once); once: one attempt each, Twilio's default. */
  TWILIO_TWIN_CALLBACK_DELIVERY: z.enum(['until-answered', 'once']).default('until-answered'),
});
export type TwinConfig = z.infer<typeof twinConfigSchema>;

/** The settings from the environment, or a line per fault (never a value: tokens are secrets) and exit 78. */
export function loadTwinConfigOrExit(env: NodeJS.ProcessEnv = process.env): TwinConfig {
  return twinSettingsOrExit(twinConfigSchema, env);
}
