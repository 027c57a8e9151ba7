import { z } from 'zod';
import { jsonSetting, twinSettingsOrExit } from '../twin-common/config';

/**
 * The Telnyx twin's own settings (docs/features/carriers/twins.md#running-the-telnyx-twin), beside the process settings
 * every twin reads (simulators/twin-common/config.ts: DATABASE_URL, LOG_LEVEL, SHUTDOWN_GRACE_MS).
 */
export const telnyxTwinAccountSchema = z.object({
  /** The account's name in the twin (its calls are its own). */
  id: z.string().min(1),
  /** API keys: `Authorization: Bearer <key>`. */
  apiKeys: z.array(z.string().min(1)).min(1),
  /** The account's Call Control connections (applications); a webhook URL is the default of its calls. */
  connections: z.array(z.object({ id: z.string().min(1), webhookUrl: z.string().url().optional() })).min(1),
  /** The Ed25519 private key its webhooks are signed with: base64 of the 32-byte seed. */
  signingKey: z.string().refine((value) => Buffer.from(value, 'base64').length === 32, 'is not 32 bytes of base64'),
});
export type TelnyxTwinAccount = z.infer<typeof telnyxTwinAccountSchema>;

/**
 * The twin's development account: fake and public, accepted by the twin, never by Telnyx; a webhook signed with its key
 * proves nothing outside development. The twin's own record of it; the product's development connection holds the
 * API key, the connection id and the public key of this seed on its side (lib/carriers/twin.ts), and
 * test/import-rules.test.ts holds the two equal.
 */
export const DEVELOPMENT_TELNYX_ACCOUNT: TelnyxTwinAccount = {
  id: 'development',
  apiKeys: ['KEYtelnyxtwin_not_a_real_secret_0123456789'],
  connections: [{ id: '1700000000000000001' }],
  signingKey: 'LdK0H5qsjxD0RKKOHGz0kqLqqMJh2iECdTTb5PZ58uU=',
};

export const telnyxTwinConfigSchema = z.object({
  TELNYX_TWIN_PORT: z.coerce.number().int().min(0).max(65535).default(3400),
  TELNYX_TWIN_HOST: z.string().default('127.0.0.1'),
  /** 1: real time; 0.01: a 40 s call lasts 0.4 s. */
  TELNYX_TWIN_TIME_SCALE: z.coerce.number().positive().max(100).default(1),
  /** JSON: [{ id, apiKeys, connections: [{ id, webhookUrl }], signingKey }]; default: DEVELOPMENT_TELNYX_ACCOUNT. */
  TELNYX_TWIN_ACCOUNTS: jsonSetting(z.array(telnyxTwinAccountSchema).min(1), () => [DEVELOPMENT_TELNYX_ACCOUNT]),
  /** until-answered: webhooks retried until answered 2xx (at least once); once: one attempt each. */
  TELNYX_TWIN_WEBHOOK_DELIVERY: z.enum(['until-answered', 'once']).default('until-answered'),
});
export type TelnyxTwinConfig = z.infer<typeof telnyxTwinConfigSchema>;

/** The settings from the environment, or a line per fault (never a value: keys are secrets) and exit 78. */
export function loadTelnyxTwinConfigOrExit(env: NodeJS.ProcessEnv = process.env): TelnyxTwinConfig {
  return twinSettingsOrExit(telnyxTwinConfigSchema, env);
}
